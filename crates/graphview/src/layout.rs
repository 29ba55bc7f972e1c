//! A layered (Sugiyama-style) layout with nested clusters.
//!
//! Each cluster is laid out on its own, inside out; a laid-out cluster is then one
//! (big) item of its parent's layout. Per block: cycles are broken by reversing DFS
//! back edges, items are layered by longest path (sources other than parameters are
//! pulled down next to their first use), long edges get dummy nodes, crossings are
//! reduced by barycentric sweeps (keeping the best order seen), and x coordinates are
//! the least-squares fit to the neighbours' positions under "keep the order, keep the
//! gaps" constraints (isotonic regression by pool-adjacent-violators), which can never
//! overlap two boxes of one layer.

use crate::model::{End, GraphModel, NodeKind};

pub const CHAR_W: f64 = 7.2;
pub const NODE_H: f64 = 28.0;
/// The width of a character of an edge label (10px monospace).
const LABEL_CHAR_W: f64 = 6.0;
const NODE_PAD_X: f64 = 12.0;
const MIN_NODE_W: f64 = 36.0;
const H_GAP: f64 = 22.0;
const DUMMY_W: f64 = 6.0;
const DUMMY_GAP: f64 = 8.0;
const V_GAP: f64 = 40.0;
const V_GAP_LABELS: f64 = 52.0;
pub const CLUSTER_PAD: f64 = 12.0;
pub const CLUSTER_HEADER: f64 = 22.0;
pub const MARGIN: f64 = 16.0;
/// Labels longer than this are cut (the tooltip keeps the whole text).
pub const MAX_LABEL: usize = 48;
const SWEEPS: usize = 24;
const COORD_ROUNDS: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn cx(&self) -> f64 {
        self.x + self.w / 2.0
    }
    pub fn bottom(&self) -> f64 {
        self.y + self.h
    }
    pub fn right(&self) -> f64 {
        self.x + self.w
    }
    /// Whether the two rectangles share interior area.
    pub fn overlaps(&self, o: &Rect) -> bool {
        self.x < o.right() && o.x < self.right() && self.y < o.bottom() && o.y < self.bottom()
    }
    /// Whether `o` lies inside `self` (borders may touch).
    pub fn contains(&self, o: &Rect) -> bool {
        o.x >= self.x && o.y >= self.y && o.right() <= self.right() && o.bottom() <= self.bottom()
    }
}

/// Absolute positions of everything, in SVG user units.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Layout {
    pub width: f64,
    pub height: f64,
    /// Per model node.
    pub nodes: Vec<Rect>,
    /// Per model cluster.
    pub clusters: Vec<Rect>,
    /// Per model edge: the polyline from source to target.
    pub edges: Vec<Vec<(f64, f64)>>,
    /// Per model edge: where its label goes (left end of the text's baseline).
    pub labels: Vec<Option<(f64, f64)>>,
    /// Per model edge: the innermost cluster holding both ends (`None`: top level).
    pub edge_owner: Vec<Option<usize>>,
}

/// The text shown in a node's box: the label, cut to [`MAX_LABEL`] characters.
pub fn display_label(label: &str) -> String {
    let n = label.chars().count();
    if n <= MAX_LABEL {
        label.to_string()
    } else {
        let mut s: String = label.chars().take(MAX_LABEL - 1).collect();
        s.push('…');
        s
    }
}

pub fn text_width(s: &str) -> f64 {
    s.chars().count() as f64 * CHAR_W
}

fn node_size(label: &str) -> (f64, f64) {
    let w = (text_width(&display_label(label)) + 2.0 * NODE_PAD_X).max(MIN_NODE_W);
    (w.round(), NODE_H)
}

type Point = (f64, f64);
/// A route inside one block: (model edge, from item, to item, interior points).
type Route = (usize, usize, usize, Vec<Point>);

/// An item of one block: a node of that cluster, or a child cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    Node(usize),
    Cluster(usize),
}

/// The local layout of one block (a cluster's contents, or the top level).
#[derive(Debug, Clone, Default)]
struct Block {
    items: Vec<Item>,
    /// Item rectangles relative to the block's content origin.
    rects: Vec<Rect>,
    w: f64,
    h: f64,
    /// Per model edge routed in this block: (edge, from item, to item, interior points, reversed).
    routes: Vec<Route>,
}

/// Lays out the whole model.
pub fn layout(model: &GraphModel) -> Layout {
    let nc = model.clusters.len();
    // Innermost common cluster of each edge, and the item of each end in it.
    let owners: Vec<Option<usize>> = model
        .edges
        .iter()
        .map(|e| common_cluster(model, e.from, e.to))
        .collect();
    let has_labels = model.edges.iter().any(|e| e.label.is_some());
    let v_gap = if has_labels { V_GAP_LABELS } else { V_GAP };

    // Children before parents: a cluster's depth order, deepest first.
    let mut order: Vec<usize> = (0..nc).collect();
    let depth = |c: usize| model.cluster_chain(Some(c)).len();
    order.sort_by_key(|&c| std::cmp::Reverse(depth(c)));

    let mut blocks: Vec<Option<Block>> = vec![None; nc];
    let mut sizes: Vec<(f64, f64)> = vec![(0.0, 0.0); nc];
    for &c in &order {
        let b = layout_block(model, Some(c), &owners, &sizes, v_gap);
        let label_w = text_width(&display_label(&model.clusters[c].label)) + 2.0 * CLUSTER_PAD;
        sizes[c] = (
            (b.w + 2.0 * CLUSTER_PAD).max(label_w).max(60.0),
            b.h + CLUSTER_HEADER + 2.0 * CLUSTER_PAD,
        );
        blocks[c] = Some(b);
    }
    let root = layout_block(model, None, &owners, &sizes, v_gap);

    let mut out = Layout {
        width: root.w + 2.0 * MARGIN,
        height: root.h + 2.0 * MARGIN,
        nodes: vec![Rect::default(); model.nodes.len()],
        clusters: vec![Rect::default(); nc],
        edges: vec![Vec::new(); model.edges.len()],
        labels: vec![None; model.edges.len()],
        edge_owner: owners.clone(),
    };
    // Place blocks, outside in.
    let mut origins: Vec<(f64, f64)> = vec![(0.0, 0.0); nc];
    let mut stack: Vec<(Option<usize>, (f64, f64))> = vec![(None, (MARGIN, MARGIN))];
    while let Some((c, origin)) = stack.pop() {
        let b = match c {
            None => &root,
            Some(c) => {
                origins[c] = origin;
                blocks[c].as_ref().unwrap()
            }
        };
        for (item, r) in b.items.iter().zip(&b.rects) {
            let abs = Rect {
                x: origin.0 + r.x,
                y: origin.1 + r.y,
                ..*r
            };
            match *item {
                Item::Node(n) => out.nodes[n] = abs,
                Item::Cluster(k) => {
                    out.clusters[k] = abs;
                    stack.push((
                        Some(k),
                        (abs.x + CLUSTER_PAD, abs.y + CLUSTER_HEADER + CLUSTER_PAD),
                    ));
                }
            }
        }
    }

    // Routes: the ends (through cluster borders) plus the block's interior points.
    let mut raw: Vec<(usize, Vec<Point>, usize)> = Vec::new();
    for (c, b) in std::iter::once((None, &root))
        .chain((0..nc).map(|c| (Some(c), blocks[c].as_ref().unwrap())))
    {
        let origin = c.map(|c| origins[c]).unwrap_or((MARGIN, MARGIN));
        for (e, fi, ti, interior) in &b.routes {
            let edge = &model.edges[*e];
            let from_item = abs_rect(&out, b.items[*fi]);
            let to_item = abs_rect(&out, b.items[*ti]);
            let mut pts = Vec::new();
            // Leave the source: its bottom, then the bottom of the item holding it.
            let src = end_rect(&out, edge.from);
            pts.push((src.cx(), src.bottom()));
            if from_item != src {
                pts.push((
                    src.cx().clamp(from_item.x + 4.0, from_item.right() - 4.0),
                    from_item.bottom(),
                ));
            }
            let exit = pts.len() - 1;
            pts.extend(interior.iter().map(|&(x, y)| (x + origin.0, y + origin.1)));
            let dst = end_rect(&out, edge.to);
            if to_item != dst {
                pts.push((
                    dst.cx().clamp(to_item.x + 4.0, to_item.right() - 4.0),
                    to_item.y,
                ));
            }
            pts.push((dst.cx(), dst.y));
            raw.push((*e, pts, exit));
        }
    }
    // Edges whose ends share one item (inside one child cluster both, or a cluster
    // and a node in it) were routed by the inner block or not at all: draw direct.
    let mut routed = vec![false; model.edges.len()];
    for (e, _, _) in &raw {
        routed[*e] = true;
    }
    for (e, edge) in model.edges.iter().enumerate() {
        if !routed[e] {
            let s = end_rect(&out, edge.from);
            let d = end_rect(&out, edge.to);
            raw.push((e, vec![(s.cx(), s.bottom()), (d.cx(), d.y)], 0));
        }
    }
    raw.sort_by_key(|r| r.0);

    // Spread the arrival points of a node's incoming edges over its top side.
    let mut incoming: Vec<Vec<(f64, usize)>> = vec![Vec::new(); model.nodes.len()];
    for (e, pts, _) in &raw {
        if let End::Node(n) = model.edges[*e].to {
            let before = pts[pts.len().saturating_sub(2)].0;
            incoming[n].push((before, *e));
        }
    }
    let mut port_x: Vec<Option<f64>> = vec![None; model.edges.len()];
    for (n, list) in incoming.iter_mut().enumerate() {
        if list.len() < 2 {
            continue;
        }
        list.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let r = out.nodes[n];
        let k = list.len() as f64;
        let step = (r.w / (k + 1.0)).min(14.0);
        for (i, &(_, e)) in list.iter().enumerate() {
            port_x[e] = Some(r.cx() + (i as f64 - (k - 1.0) / 2.0) * step);
        }
    }
    // One label per source and text: edges fanning out of one node with the same
    // type are labelled once, on the leftmost edge.
    let mut labelled: std::collections::HashSet<(End, &str)> = std::collections::HashSet::new();
    let mut by_x: Vec<(f64, usize)> = raw
        .iter()
        .map(|(e, pts, exit)| (pts[(exit + 1).min(pts.len() - 1)].0, *e))
        .collect();
    by_x.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut show_label = vec![false; model.edges.len()];
    for (_, e) in by_x {
        if let Some(l) = &model.edges[e].label {
            show_label[e] = labelled.insert((model.edges[e].from, l.as_str()));
        }
    }
    let mut placed: Vec<Rect> = Vec::new();
    for (e, mut pts, exit) in raw {
        if let Some(x) = port_x[e] {
            pts.last_mut().unwrap().0 = x;
        }
        if show_label[e] && pts.len() >= 2 {
            // On the first segment after leaving the source's item, at the first
            // of a few spots along it that no earlier label covers.
            let a = pts[exit];
            let b = pts[(exit + 1).min(pts.len() - 1)];
            let w = model.edges[e]
                .label
                .as_deref()
                .unwrap_or("")
                .chars()
                .count() as f64
                * LABEL_CHAR_W;
            let spot = |t: f64| {
                let (x, y) = bezier_at(a, b, t);
                Rect {
                    x: round1(x + 5.0),
                    y: round1(y - 4.0),
                    w,
                    h: 11.0,
                }
            };
            let r = [0.4, 0.7, 0.15, 0.85, 0.55]
                .into_iter()
                .map(spot)
                .find(|r| !placed.iter().any(|p: &Rect| p.overlaps(r)))
                .unwrap_or_else(|| spot(0.4));
            placed.push(r);
            out.labels[e] = Some((r.x, r.y + 8.0));
        }
        out.edges[e] = pts
            .into_iter()
            .map(|(x, y)| (round1(x), round1(y)))
            .collect();
    }
    out
}

/// The point at `t` of the cubic drawn from `a` to `b` (vertical tangents; see svg.rs).
fn bezier_at(a: (f64, f64), b: (f64, f64), t: f64) -> (f64, f64) {
    let dy = (b.1 - a.1) / 2.0;
    let p = [a, (a.0, a.1 + dy), (b.0, b.1 - dy), b];
    let u = 1.0 - t;
    let w = [u * u * u, 3.0 * u * u * t, 3.0 * u * t * t, t * t * t];
    (
        (0..4).map(|i| w[i] * p[i].0).sum(),
        (0..4).map(|i| w[i] * p[i].1).sum(),
    )
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn abs_rect(out: &Layout, item: Item) -> Rect {
    match item {
        Item::Node(n) => out.nodes[n],
        Item::Cluster(c) => out.clusters[c],
    }
}

fn end_rect(out: &Layout, e: End) -> Rect {
    match e {
        End::Node(n) => out.nodes[n],
        End::Cluster(c) => out.clusters[c],
    }
}

/// The innermost cluster that holds both ends (`None`: the top level).
fn common_cluster(model: &GraphModel, a: End, b: End) -> Option<usize> {
    let ca = model.cluster_chain(model.end_cluster(a));
    let cb = model.cluster_chain(model.end_cluster(b));
    ca.into_iter().find(|c| cb.contains(c))
}

/// The item of `block` that holds end `e` (`None` if `e` is not inside `block`).
fn item_of(model: &GraphModel, block: Option<usize>, e: End) -> Option<Item> {
    let (mut item, mut parent) = match e {
        End::Node(n) => (Item::Node(n), model.nodes[n].cluster),
        End::Cluster(c) => (Item::Cluster(c), model.clusters[c].parent),
    };
    loop {
        if parent == block {
            return Some(item);
        }
        let p = parent?;
        item = Item::Cluster(p);
        parent = model.clusters[p].parent;
    }
}

fn layout_block(
    model: &GraphModel,
    block: Option<usize>,
    owners: &[Option<usize>],
    cluster_sizes: &[(f64, f64)],
    v_gap: f64,
) -> Block {
    let mut items: Vec<Item> = Vec::new();
    for (i, n) in model.nodes.iter().enumerate() {
        if n.cluster == block {
            items.push(Item::Node(i));
        }
    }
    for (i, c) in model.clusters.iter().enumerate() {
        if c.parent == block {
            items.push(Item::Cluster(i));
        }
    }
    let index_of = |it: Item| items.iter().position(|&x| x == it).unwrap();
    let sizes: Vec<(f64, f64)> = items
        .iter()
        .map(|it| match *it {
            Item::Node(n) => node_size(&model.nodes[n].label),
            Item::Cluster(c) => cluster_sizes[c],
        })
        .collect();
    let pinned_top: Vec<bool> = items
        .iter()
        .map(|it| matches!(*it, Item::Node(n) if model.nodes[n].kind == NodeKind::Param))
        .collect();

    // Edges of this block, between two different items.
    let mut edges: Vec<(usize, usize, usize)> = Vec::new(); // (model edge, from, to)
    for (e, edge) in model.edges.iter().enumerate() {
        if owners[e] != block {
            continue;
        }
        let (Some(a), Some(b)) = (
            item_of(model, block, edge.from),
            item_of(model, block, edge.to),
        ) else {
            continue;
        };
        let (a, b) = (index_of(a), index_of(b));
        if a != b {
            edges.push((e, a, b));
        }
    }

    let g = sugiyama(&sizes, &pinned_top, &edges, v_gap);
    Block {
        items,
        rects: g.rects,
        w: g.w,
        h: g.h,
        routes: g.routes,
    }
}

struct Placed {
    rects: Vec<Rect>,
    w: f64,
    h: f64,
    routes: Vec<Route>,
}

/// The layered layout of one block's items; `edges` are (id, from, to).
fn sugiyama(
    sizes: &[(f64, f64)],
    pinned_top: &[bool],
    edges: &[(usize, usize, usize)],
    v_gap: f64,
) -> Placed {
    let n = sizes.len();
    if n == 0 {
        return Placed {
            rects: Vec::new(),
            w: 60.0,
            h: 8.0,
            routes: Vec::new(),
        };
    }
    // 1. Break cycles: reverse the back edges of a DFS in item order.
    let mut out_adj: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n]; // (target, edge index)
    for (i, &(_, a, b)) in edges.iter().enumerate() {
        out_adj[a].push((b, i));
    }
    let mut reversed = vec![false; edges.len()];
    let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
    for s in 0..n {
        if state[s] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(s, 0)];
        state[s] = 1;
        while let Some(&mut (v, ref mut k)) = stack.last_mut() {
            if *k < out_adj[v].len() {
                let (w, ei) = out_adj[v][*k];
                *k += 1;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        stack.push((w, 0));
                    }
                    1 => reversed[ei] = true,
                    _ => {}
                }
            } else {
                state[v] = 2;
                stack.pop();
            }
        }
    }
    let dag: Vec<(usize, usize)> = edges
        .iter()
        .zip(&reversed)
        .map(|(&(_, a, b), &r)| if r { (b, a) } else { (a, b) })
        .collect();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in &dag {
        succs[a].push(b);
        preds[b].push(a);
    }

    // 2. Longest-path layering (Kahn's order, smallest index first).
    let mut indeg: Vec<usize> = preds.iter().map(|p| p.len()).collect();
    let mut ready: std::collections::BTreeSet<usize> = (0..n).filter(|&v| indeg[v] == 0).collect();
    let mut topo = Vec::with_capacity(n);
    while let Some(v) = ready.pop_first() {
        topo.push(v);
        for &w in &succs[v] {
            indeg[w] -= 1;
            if indeg[w] == 0 {
                ready.insert(w);
            }
        }
    }
    let mut layer = vec![0usize; n];
    for &v in &topo {
        for &w in &succs[v] {
            layer[w] = layer[w].max(layer[v] + 1);
        }
    }
    // Pull sources that are not parameters down to just above their first use.
    for &v in topo.iter().rev() {
        if preds[v].is_empty() && !pinned_top[v] && !succs[v].is_empty() {
            let m = succs[v].iter().map(|&w| layer[w]).min().unwrap();
            layer[v] = layer[v].max(m.saturating_sub(1));
        }
    }
    let nlayers = layer.iter().max().unwrap() + 1;

    // 3. Dummy nodes for long edges. Layered nodes 0..n are items, the rest dummies.
    let mut lnode_layer: Vec<usize> = layer.clone();
    let mut lpred: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut lsucc: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut chains: Vec<Vec<usize>> = Vec::with_capacity(dag.len()); // dummies per edge, top-down
    for &(a, b) in &dag {
        let mut prev = a;
        let mut chain = Vec::new();
        for l in layer[a] + 1..layer[b] {
            let d = lnode_layer.len();
            lnode_layer.push(l);
            lpred.push(vec![prev]);
            lsucc.push(Vec::new());
            lsucc[prev].push(d);
            chain.push(d);
            prev = d;
        }
        lsucc[prev].push(b);
        lpred[b].push(prev);
        chains.push(chain);
    }
    let total = lnode_layer.len();
    let is_dummy = |v: usize| v >= n;

    // 4. Crossing reduction.
    let mut layers: Vec<Vec<usize>> = vec![Vec::new(); nlayers];
    // Initial order: a DFS from the items in order, so connected things start close.
    {
        let mut seen = vec![false; total];
        for s in topo.iter().copied().chain(n..total) {
            let mut stack = vec![s];
            while let Some(v) = stack.pop() {
                if seen[v] {
                    continue;
                }
                seen[v] = true;
                layers[lnode_layer[v]].push(v);
                for &w in lsucc[v].iter().rev() {
                    if !seen[w] {
                        stack.push(w);
                    }
                }
            }
        }
    }
    let mut pos = vec![0usize; total];
    let set_pos = |layers: &Vec<Vec<usize>>, pos: &mut Vec<usize>| {
        for l in layers {
            for (i, &v) in l.iter().enumerate() {
                pos[v] = i;
            }
        }
    };
    set_pos(&layers, &mut pos);
    let mut best = layers.clone();
    let mut best_cross = count_crossings(&layers, &lsucc, &pos);
    for sweep in 0..SWEEPS {
        if best_cross == 0 {
            break;
        }
        let down = sweep % 2 == 0;
        let range: Vec<usize> = if down {
            (1..nlayers).collect()
        } else {
            (0..nlayers.saturating_sub(1)).rev().collect()
        };
        for l in range {
            let mut keyed: Vec<(f64, usize, usize)> = layers[l]
                .iter()
                .enumerate()
                .map(|(i, &v)| {
                    let nb = if down { &lpred[v] } else { &lsucc[v] };
                    let bc = if nb.is_empty() {
                        i as f64
                    } else {
                        nb.iter().map(|&u| pos[u] as f64).sum::<f64>() / nb.len() as f64
                    };
                    (bc, i, v)
                })
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            layers[l] = keyed.into_iter().map(|k| k.2).collect();
            for (i, &v) in layers[l].iter().enumerate() {
                pos[v] = i;
            }
        }
        let c = count_crossings(&layers, &lsucc, &pos);
        if c < best_cross {
            best_cross = c;
            best = layers.clone();
        }
    }
    let layers = best;
    set_pos(&layers, &mut pos);

    // 5. Coordinates: x by constrained least squares towards the neighbours.
    let width = |v: usize| if is_dummy(v) { DUMMY_W } else { sizes[v].0 };
    let mut x = vec![0.0f64; total];
    for l in &layers {
        let c = place_layer(l, &width, &is_dummy, &vec![0.0; l.len()]);
        for (i, &v) in l.iter().enumerate() {
            x[v] = c[i];
        }
    }
    let relax = |x: &mut Vec<f64>, use_pred: bool, use_succ: bool, order: Vec<usize>| {
        for li in order {
            let l = &layers[li];
            let desired: Vec<f64> = l
                .iter()
                .map(|&v| {
                    let mut s = 0.0;
                    let mut k = 0.0;
                    if use_pred {
                        for &u in &lpred[v] {
                            s += x[u];
                            k += 1.0;
                        }
                    }
                    if use_succ {
                        for &u in &lsucc[v] {
                            s += x[u];
                            k += 1.0;
                        }
                    }
                    if k > 0.0 {
                        s / k
                    } else {
                        x[v]
                    }
                })
                .collect();
            let c = place_layer(l, &width, &is_dummy, &desired);
            for (i, &v) in l.iter().enumerate() {
                x[v] = c[i];
            }
        }
    };
    for _ in 0..COORD_ROUNDS {
        relax(&mut x, true, false, (1..nlayers).collect());
        relax(
            &mut x,
            false,
            true,
            (0..nlayers.saturating_sub(1)).rev().collect(),
        );
    }
    relax(&mut x, true, true, (0..nlayers).collect());
    let min_left = (0..total)
        .map(|v| x[v] - width(v) / 2.0)
        .fold(f64::INFINITY, f64::min);
    let max_right = (0..total)
        .map(|v| x[v] + width(v) / 2.0)
        .fold(f64::NEG_INFINITY, f64::max);
    for v in x.iter_mut() {
        *v = (*v - min_left).round();
    }

    // y: layers stacked, each as tall as its tallest item; items top-aligned.
    let mut ly = vec![0.0f64; nlayers];
    let mut lh = vec![0.0f64; nlayers];
    let mut y = 0.0;
    for l in 0..nlayers {
        lh[l] = layers[l]
            .iter()
            .filter(|&&v| !is_dummy(v))
            .map(|&v| sizes[v].1)
            .fold(0.0, f64::max);
        if lh[l] == 0.0 {
            lh[l] = NODE_H / 2.0;
        }
        ly[l] = y;
        y += lh[l] + v_gap;
    }
    let h = y - v_gap;
    let rects: Vec<Rect> = (0..n)
        .map(|v| Rect {
            x: x[v] - sizes[v].0 / 2.0,
            y: ly[layer[v]],
            w: sizes[v].0,
            h: sizes[v].1,
        })
        .collect();
    let routes = edges
        .iter()
        .zip(&chains)
        .zip(&reversed)
        .map(|((&(e, a, b), chain), &rev)| {
            let mut pts: Vec<(f64, f64)> = Vec::new();
            for &d in chain {
                let l = lnode_layer[d];
                pts.push((x[d], ly[l]));
                pts.push((x[d], ly[l] + lh[l]));
            }
            if rev {
                pts.reverse();
            }
            (e, a, b, pts)
        })
        .collect();
    Placed {
        rects,
        w: (max_right - min_left).round().max(1.0),
        h,
        routes,
    }
}

/// Centres for the nodes of one layer, in order, closest (least squares) to
/// `desired` while keeping the order and the gaps. Pool adjacent violators on the
/// centres less their minimal offsets.
fn place_layer(
    layer: &[usize],
    width: &dyn Fn(usize) -> f64,
    is_dummy: &dyn Fn(usize) -> bool,
    desired: &[f64],
) -> Vec<f64> {
    let k = layer.len();
    let mut off = vec![0.0; k];
    for i in 1..k {
        let (a, b) = (layer[i - 1], layer[i]);
        let gap = if is_dummy(a) || is_dummy(b) {
            DUMMY_GAP
        } else {
            H_GAP
        };
        off[i] = off[i - 1] + (width(a) + width(b)) / 2.0 + gap;
    }
    // Blocks of (weighted sum, weight, count).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::new();
    for i in 0..k {
        let wgt = if is_dummy(layer[i]) { 2.0 } else { 1.0 };
        blocks.push(((desired[i] - off[i]) * wgt, wgt, 1));
        while blocks.len() >= 2 {
            let (s2, w2, c2) = blocks[blocks.len() - 1];
            let (s1, w1, c1) = blocks[blocks.len() - 2];
            if s1 / w1 > s2 / w2 {
                blocks.pop();
                *blocks.last_mut().unwrap() = (s1 + s2, w1 + w2, c1 + c2);
            } else {
                break;
            }
        }
    }
    let mut out = Vec::with_capacity(k);
    for (s, w, c) in blocks {
        for _ in 0..c {
            let i = out.len();
            out.push(s / w + off[i]);
        }
    }
    out
}

/// Crossings between consecutive layers (inversions counted with a Fenwick tree).
fn count_crossings(layers: &[Vec<usize>], lsucc: &[Vec<usize>], pos: &[usize]) -> usize {
    let mut total = 0;
    for l in 0..layers.len().saturating_sub(1) {
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        for &v in &layers[l] {
            for &w in &lsucc[v] {
                pairs.push((pos[v], pos[w]));
            }
        }
        pairs.sort_unstable();
        let m = layers[l + 1].len();
        let mut tree = vec![0usize; m + 1];
        for (seen, &(_, q)) in pairs.iter().enumerate() {
            // Count earlier pairs whose target is right of q.
            let mut i = q + 1;
            let mut le = 0;
            while i > 0 {
                le += tree[i];
                i &= i - 1;
            }
            total += seen - le;
            let mut i = q + 1;
            while i <= m {
                tree[i] += 1;
                i += i & i.wrapping_neg();
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pava_keeps_order_and_gaps() {
        let w = |_: usize| 10.0;
        let d = |_: usize| false;
        let c = place_layer(&[0, 1, 2], &w, &d, &[5.0, 5.0, 5.0]);
        assert!(c[1] - c[0] >= 10.0 + H_GAP - 1e-9);
        assert!(c[2] - c[1] >= 10.0 + H_GAP - 1e-9);
        assert!(
            (c[1] - 5.0).abs() < 1e-9,
            "centred on the common target: {c:?}"
        );
        let c = place_layer(&[0, 1], &w, &d, &[0.0, 100.0]);
        assert_eq!(c, vec![0.0, 100.0]);
    }

    #[test]
    fn crossings_are_counted() {
        // 0 -> 3, 1 -> 2 with layer 1 = [2, 3]: one crossing.
        let layers = vec![vec![0, 1], vec![2, 3]];
        let lsucc = vec![vec![3], vec![2], vec![], vec![]];
        let pos = vec![0, 1, 0, 1];
        assert_eq!(count_crossings(&layers, &lsucc, &pos), 1);
    }
}
