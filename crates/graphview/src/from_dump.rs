//! Building a [`GraphModel`] from one subgraph of a MindSpore compile dump
//! (`irdump`), grouped by MindSpore's scopes.
//!
//! - Each node (`%N = Prim(...)`, `Return`) is a box labelled with its id and
//!   callee; its tooltip holds the call, the dumped type and the scope.
//! - A parameter it uses (`%paraN_x`, a weight or an input) and a graph it
//!   names (`@g`) are nodes of their own, drawn once; a weight (a `Ref`) or
//!   a graph in the innermost scope cluster that holds all its users.
//! - Nodes are grouped in nested, collapsible scope clusters from their
//!   `Fullname with scope` (`Default/block-Block/fc-Dense/MatMul-op0` is in
//!   `Default` > `block-Block` > `fc-Dense`; the last part names the node
//!   itself). A level that groups nothing (one node, or every node of the
//!   level above it) makes no cluster.
//! - Edges carry the producer's dumped type, shortened (`f32 (2, 3)`).
//!
//! Node ids: `n<k>` for the graph's node `k`, `p:<name>` for a parameter,
//! `g:<name>` for a graph used as a value; their spans are the byte ranges
//! of their ids in the dump.

use std::collections::HashMap;

use ir::{TextRange, TextSize};
use irdump::Dump;

use crate::model::{ClusterKind, GraphModel, NodeKind};

fn span(r: &std::ops::Range<usize>) -> Option<TextRange> {
    Some(TextRange::new(
        TextSize::from(u32::try_from(r.start).ok()?),
        TextSize::from(u32::try_from(r.end).ok()?),
    ))
}

/// The scope a node is grouped in: its scope without the last part (the node
/// itself, `MatMul-op0`), split into levels.
fn scope_levels(scope: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = scope.split('/').filter(|p| !p.is_empty()).collect();
    parts.pop();
    parts
}

/// A dumped type made short for an edge: `(<Tensor[Float32], (2, 3)>)` is
/// `Float32 (2, 3)`; anything else as printed, cut at 40 characters.
pub fn short_type(ty: &str) -> String {
    let t = ty.trim();
    let t = t
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or(t);
    let t = t
        .strip_prefix('<')
        .and_then(|t| t.strip_suffix('>'))
        .unwrap_or(t);
    if let Some(rest) = t.strip_prefix("Tensor[") {
        if let Some((dtype, after)) = rest.split_once("], ") {
            let shape = after.split(", value=").next().unwrap_or(after);
            let shape = match shape.find(')') {
                Some(e) if shape.starts_with('(') => &shape[..=e],
                _ => shape,
            };
            return format!("{dtype} {shape}");
        }
    }
    if t.chars().count() > 40 {
        let cut: String = t.chars().take(39).collect();
        format!("{cut}…")
    } else {
        t.to_string()
    }
}

/// The picture of graph `g` of a dump, grouped by scope; `None` when the dump
/// has no such graph.
pub fn from_dump(d: &Dump, g: usize) -> Option<GraphModel> {
    let graph = d.graphs.get(g)?;
    let mut m = GraphModel::new(graph.name.clone());
    // How many nodes each scope prefix holds (`a`, `a/b`, ...).
    let mut counts: HashMap<String, usize> = HashMap::new();
    for n in &graph.nodes {
        if let Some(s) = &n.scope {
            let levels = scope_levels(s);
            for k in 1..=levels.len() {
                *counts.entry(levels[..k].join("/")).or_default() += 1;
            }
        }
    }
    let total = graph.nodes.len();
    let mut clusters: HashMap<String, usize> = HashMap::new();
    let mut ids: HashMap<&str, usize> = HashMap::new();
    for (k, n) in graph.nodes.iter().enumerate() {
        let mut cluster = None;
        let mut above = total;
        if let Some(s) = &n.scope {
            let levels = scope_levels(s);
            for i in 1..=levels.len() {
                let key = levels[..i].join("/");
                let count = counts.get(&key).copied().unwrap_or(0);
                if count >= 2 && count < above {
                    cluster = Some(match clusters.get(&key) {
                        Some(&c) => c,
                        None => {
                            let c = m.add_cluster(
                                format!("scope:{key}"),
                                levels[i - 1].to_string(),
                                ClusterKind::Scope,
                                cluster,
                            );
                            clusters.insert(key.clone(), c);
                            c
                        }
                    });
                }
                above = count;
            }
        }
        let (label, kind) = if n.id == "Return" {
            ("return".to_string(), NodeKind::Output)
        } else {
            let callee = match n.prim_name() {
                Some(p) => p.to_string(),
                None => n
                    .call
                    .split(['(', ' '])
                    .find(|w| !w.is_empty() && *w != "call")
                    .unwrap_or("call")
                    .to_string(),
            };
            (format!("{} = {callee}", n.id), NodeKind::CNode)
        };
        let v = m.add_node(format!("n{k}"), label, kind, cluster);
        let mut title = n.call.clone();
        if let Some(t) = &n.ty {
            title.push_str(&format!(" : {t}"));
        }
        if let Some(s) = &n.scope {
            title.push_str(&format!("\n{s}"));
        }
        m.nodes[v].title = title;
        // Click-to-source selects the node's id (`%3`), not its comments.
        m.nodes[v].span = span(&n.id_range);
        if n.id != "Return" {
            ids.insert(n.id.as_str(), v);
        }
    }
    // Inputs: nodes of the graph, then parameters and graphs, drawn once.
    let mut others: HashMap<String, usize> = HashMap::new();
    // The graph's node `k` is the model's node `k` (added first, in order).
    for (to, n) in graph.nodes.iter().enumerate() {
        for x in &n.inputs {
            let from = if let Some(&u) = ids.get(x.as_str()) {
                u
            } else if let Some(&u) = others.get(x) {
                u
            } else {
                let (id, kind, sp, title) = if x.starts_with('@') {
                    (format!("g:{x}"), NodeKind::GraphRef, None, String::new())
                } else {
                    let target = d.resolve(x, Some(g));
                    let (sp, title) = match target {
                        Some(irdump::Target::Param(i)) => (
                            span(&d.params[i].range),
                            d.params[i].ty.clone().unwrap_or_default(),
                        ),
                        Some(irdump::Target::GraphParam(gi, pi)) => {
                            (span(&d.graphs[gi].params[pi].1), String::new())
                        }
                        _ => (None, String::new()),
                    };
                    (format!("p:{x}"), NodeKind::Param, sp, title)
                };
                let u = m.add_node(id, x.clone(), kind, None);
                m.nodes[u].span = sp;
                m.nodes[u].title = title;
                others.insert(x.clone(), u);
                u
            };
            let label = ids
                .get(x.as_str())
                .and_then(|&u| graph.nodes[u].ty.as_deref())
                .map(short_type);
            m.add_edge(from, to, label);
        }
    }
    // A parameter or graph drawn once sits in the innermost scope holding
    // all its users (a block's weights inside the block).
    let mut users: HashMap<usize, Option<Vec<usize>>> = HashMap::new();
    for e in &m.edges {
        let (crate::End::Node(u), crate::End::Node(v)) = (e.from, e.to) else {
            continue;
        };
        // The graph's own nodes, and its inputs: these stay where they are.
        let node = &m.nodes[u];
        if u < graph.nodes.len()
            || (node.kind == NodeKind::Param && !node.title.starts_with("<Ref["))
        {
            continue;
        }
        let chain: Vec<usize> = m
            .cluster_chain(m.nodes[v].cluster)
            .into_iter()
            .rev()
            .collect();
        let common = users.entry(u).or_insert_with(|| Some(chain.clone()));
        if let Some(c) = common {
            let same = c.iter().zip(&chain).take_while(|(a, b)| a == b).count();
            c.truncate(same);
        }
    }
    for (u, chain) in users {
        m.nodes[u].cluster = chain.and_then(|c| c.last().copied());
    }
    Some(m)
}
