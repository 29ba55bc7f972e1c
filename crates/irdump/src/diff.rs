//! A structural diff of two dumps (`mirdsl diff`): graphs are paired by name
//! (MindSpore's numbering set aside), nodes by scope, then by debug name,
//! then by structure (the same primitive on inputs already paired), never
//! by text position. A paired node differs when its primitive, its call's
//! constants, its inputs (as paired) or its dumped type differ.

use std::collections::HashMap;

use crate::{Dump, Node};

/// One difference.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A graph only in the first dump (its name) or only in the second.
    GraphRemoved(String),
    GraphAdded(String),
    /// A node of paired graphs (`a`'s name, `b`'s name) only in one of them.
    NodeRemoved {
        graph: String,
        node: String,
    },
    NodeAdded {
        graph: String,
        node: String,
    },
    /// Paired nodes that differ: what differs, in words.
    NodeChanged {
        graph: String,
        a: String,
        b: String,
        what: Vec<String>,
    },
}

/// A graph's name without MindSpore's numbers (`518_232_1_f_1358` is `f`),
/// which change from compile to compile.
pub fn graph_key(name: &str) -> String {
    let name = name.trim_start_matches('@');
    let parts: Vec<&str> = name.split('_').collect();
    let start = parts
        .iter()
        .position(|p| !p.chars().all(|c| c.is_ascii_digit()))
        .unwrap_or(parts.len());
    let end = parts
        .iter()
        .rposition(|p| !p.chars().all(|c| c.is_ascii_digit()))
        .map_or(start, |e| e + 1);
    if start >= end {
        return name.to_string();
    }
    parts[start..end].join("_")
}

/// A parameter without its number (`%para3_fc.weight` is `fc.weight`).
fn param_key(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("%para")?;
    let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
    Some(rest[digits..].trim_start_matches('_'))
}

/// A node as printed for the report: `%3 = Conv2D(%1, %2)` with its scope.
pub fn describe(n: &Node) -> String {
    let mut s = format!("{} = {}", n.id, n.call);
    if let Some(scope) = &n.scope {
        s.push_str(&format!("  [{scope}]"));
    } else if !n.label.is_empty() {
        s.push_str(&format!("  ({})", n.label));
    }
    s
}

/// The call with every name blanked: what is left is the callee's kind and
/// the constants.
fn shape_of_call(call: &str) -> String {
    let mut out = String::with_capacity(call.len());
    let mut chars = call.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '%' || c == '@' {
            out.push('_');
            while let Some(&d) = chars.peek() {
                if d.is_whitespace() || matches!(d, '(' | ')' | ',' | '[' | ']' | ':' | '{' | '}') {
                    break;
                }
                chars.next();
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Pairs the nodes of two graphs: `pairs[i]` is the index in `b` of `a`'s node `i`.
fn pair_nodes(a: &[Node], b: &[Node], graphs: &HashMap<String, String>) -> Vec<Option<usize>> {
    let mut pairs: Vec<Option<usize>> = vec![None; a.len()];
    let mut taken = vec![false; b.len()];
    // By a key unique on both sides: the scope, then the debug name.
    type Key = fn(&Node) -> Option<&str>;
    let keys: [Key; 2] = [
        |n| n.scope.as_deref(),
        |n| (!n.label.is_empty()).then_some(n.label.as_str()),
    ];
    for key in keys {
        let mut count_b: HashMap<&str, (usize, usize)> = HashMap::new();
        for (j, n) in b.iter().enumerate() {
            if let (false, Some(k)) = (taken[j], key(n)) {
                let e = count_b.entry(k).or_insert((0, j));
                e.0 += 1;
            }
        }
        let mut count_a: HashMap<&str, usize> = HashMap::new();
        for (i, n) in a.iter().enumerate() {
            if let (None, Some(k)) = (pairs[i], key(n)) {
                *count_a.entry(k).or_default() += 1;
            }
        }
        for (i, n) in a.iter().enumerate() {
            if pairs[i].is_some() || n.id == "Return" {
                continue;
            }
            let Some(k) = key(n) else { continue };
            if count_a.get(k) == Some(&1) {
                if let Some(&(1, j)) = count_b.get(k) {
                    if !taken[j] && b[j].id != "Return" {
                        pairs[i] = Some(j);
                        taken[j] = true;
                    }
                }
            }
        }
    }
    // The outputs pair with each other.
    if let (Some(i), Some(j)) = (
        a.iter().position(|n| n.id == "Return"),
        b.iter().position(|n| n.id == "Return"),
    ) {
        pairs[i] = Some(j);
        taken[j] = true;
    }
    // By structure, until nothing more pairs: the same call shape on inputs
    // that pair.
    loop {
        let mut progress = false;
        for i in 0..a.len() {
            if pairs[i].is_some() {
                continue;
            }
            let want: Vec<Option<String>> = a[i]
                .inputs
                .iter()
                .map(|x| mapped(x, a, b, &pairs, graphs))
                .collect();
            if want.iter().any(Option::is_none) {
                continue;
            }
            let shape = shape_of_call(&a[i].call);
            let found = (0..b.len()).find(|&j| {
                !taken[j]
                    && shape_of_call(&b[j].call) == shape
                    && b[j].inputs.len() == want.len()
                    && b[j]
                        .inputs
                        .iter()
                        .zip(&want)
                        .all(|(x, w)| same_name(x, w.as_deref().unwrap_or("")))
            });
            if let Some(j) = found {
                pairs[i] = Some(j);
                taken[j] = true;
                progress = true;
            }
        }
        if !progress {
            break;
        }
    }
    pairs
}

/// What name `x` (used in `a`) is in `b`: a paired node's id, a parameter's
/// or graph's key.
fn mapped(
    x: &str,
    a: &[Node],
    b: &[Node],
    pairs: &[Option<usize>],
    graphs: &HashMap<String, String>,
) -> Option<String> {
    if let Some(k) = param_key(x) {
        return Some(format!("%para_{k}"));
    }
    if x.starts_with('@') {
        return Some(graphs.get(x).cloned().unwrap_or_else(|| graph_key(x)));
    }
    let i = a.iter().position(|n| n.id == x)?;
    pairs[i].map(|j| b[j].id.clone())
}

fn same_name(x: &str, want: &str) -> bool {
    if let Some(k) = param_key(x) {
        return want == format!("%para_{k}");
    }
    if x.starts_with('@') {
        return graph_key(x) == want || x == want;
    }
    x == want
}

/// How two dumps pair up: `graphs[i]` is the index in `b` of `a`'s graph
/// `i`; `nodes[i][k]` the index in `b`'s graph of the node `k` of `a`'s
/// graph `i` (empty for a graph without a pair).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Pairing {
    pub graphs: Vec<Option<usize>>,
    pub nodes: Vec<Vec<Option<usize>>>,
    /// How `a`'s graph names read in `b` (their keys).
    names: HashMap<String, String>,
}

/// Pairs the graphs of two dumps (by name, else by name without numbers,
/// else entry with entry) and the nodes of each pair (by scope, debug name
/// and structure), as [`diff`] does.
pub fn pairing(a: &Dump, b: &Dump) -> Pairing {
    let (pair_g, names) = pair_graphs(a, b);
    let nodes = pair_g
        .iter()
        .enumerate()
        .map(|(i, j)| match j {
            Some(j) => pair_nodes(&a.graphs[i].nodes, &b.graphs[*j].nodes, &names),
            None => Vec::new(),
        })
        .collect();
    Pairing {
        graphs: pair_g,
        nodes,
        names,
    }
}

/// The graphs' pairs, and how `a`'s graph names read in `b`.
fn pair_graphs(a: &Dump, b: &Dump) -> (Vec<Option<usize>>, HashMap<String, String>) {
    let mut pair_g: Vec<Option<usize>> = vec![None; a.graphs.len()];
    let mut taken = vec![false; b.graphs.len()];
    let by_name: HashMap<&str, usize> = b
        .graphs
        .iter()
        .enumerate()
        .map(|(j, h)| (h.name.as_str(), j))
        .collect();
    for (i, g) in a.graphs.iter().enumerate() {
        if let Some(&j) = by_name.get(g.name.as_str()) {
            if !taken[j] {
                pair_g[i] = Some(j);
                taken[j] = true;
            }
        }
    }
    let mut by_key: HashMap<String, Vec<usize>> = HashMap::new();
    for (j, h) in b.graphs.iter().enumerate().rev() {
        if !taken[j] {
            by_key.entry(graph_key(&h.name)).or_default().push(j);
        }
    }
    for (i, g) in a.graphs.iter().enumerate() {
        if pair_g[i].is_some() {
            continue;
        }
        if let Some(j) = by_key.get_mut(&graph_key(&g.name)).and_then(Vec::pop) {
            pair_g[i] = Some(j);
            taken[j] = true;
        }
    }
    let entry = |d: &Dump| {
        d.entry.as_ref().and_then(|e| {
            d.graphs
                .iter()
                .position(|g| g.name.trim_start_matches('@') == e)
        })
    };
    if let (Some(i), Some(j)) = (entry(a), entry(b)) {
        if pair_g[i].is_none() && !taken[j] {
            pair_g[i] = Some(j);
        }
    }
    let names: HashMap<String, String> = pair_g
        .iter()
        .enumerate()
        .filter_map(|(i, j)| j.map(|j| (a.graphs[i].name.clone(), graph_key(&b.graphs[j].name))))
        .collect();
    (pair_g, names)
}

/// A node followed into another stage: its graph there and, when the node
/// has a pair, the node and how it differs (empty: the same).
#[derive(Debug, Clone, PartialEq)]
pub struct Followed {
    pub graph: usize,
    pub node: Option<usize>,
    pub changes: Vec<String>,
}

/// Where a node of `a` (graph `g`, node `k`) is in `b`, the next stage.
pub fn follow(a: &Dump, b: &Dump, g: usize, k: usize) -> Option<Followed> {
    let (graphs, names) = pair_graphs(a, b);
    let h = (*graphs.get(g)?)?;
    let pairs = pair_nodes(&a.graphs[g].nodes, &b.graphs[h].nodes, &names);
    let node = pairs.get(k).copied().flatten();
    let changes = node.map_or_else(Vec::new, |l| {
        differences(&a.graphs[g].nodes, k, &b.graphs[h].nodes, l, &pairs, &names)
    });
    Some(Followed {
        graph: h,
        node,
        changes,
    })
}

/// Where a node of `b` (graph `h`, node `l`) came from in `a`, the stage
/// before: the inverse of [`follow`] over the same pairing (`node: None`:
/// the stage added it).
pub fn follow_back(a: &Dump, b: &Dump, h: usize, l: usize) -> Option<Followed> {
    let (graphs, names) = pair_graphs(a, b);
    let g = graphs.iter().position(|&j| j == Some(h))?;
    let pairs = pair_nodes(&a.graphs[g].nodes, &b.graphs[h].nodes, &names);
    let node = pairs.iter().position(|&m| m == Some(l));
    let changes = node.map_or_else(Vec::new, |k| {
        differences(&a.graphs[g].nodes, k, &b.graphs[h].nodes, l, &pairs, &names)
    });
    Some(Followed {
        graph: g,
        node,
        changes,
    })
}

/// How `a[k]` differs from its pair `b[l]` (`pairs` and `graphs` from the
/// pairing), in words; empty when they are the same.
fn differences(
    a: &[Node],
    k: usize,
    b: &[Node],
    l: usize,
    pairs: &[Option<usize>],
    graphs: &HashMap<String, String>,
) -> Vec<String> {
    let (n, m) = (&a[k], &b[l]);
    let mut what = Vec::new();
    if n.prim_name() != m.prim_name() {
        what.push(format!(
            "callee {} → {}",
            n.prim_name().unwrap_or("(a call)"),
            m.prim_name().unwrap_or("(a call)")
        ));
    } else if shape_of_call(&n.call) != shape_of_call(&m.call) {
        what.push(format!("call {} → {}", n.call, m.call));
    }
    let inputs: Vec<Option<String>> = n
        .inputs
        .iter()
        .map(|x| mapped(x, a, b, pairs, graphs))
        .collect();
    let same_inputs = inputs.len() == m.inputs.len()
        && m.inputs
            .iter()
            .zip(&inputs)
            .all(|(x, w)| w.as_deref().is_some_and(|w| same_name(x, w)));
    if !same_inputs {
        what.push(format!(
            "inputs ({}) → ({})",
            n.inputs.join(", "),
            m.inputs.join(", ")
        ));
    }
    if n.ty != m.ty {
        what.push(format!(
            "type {} → {}",
            n.ty.as_deref().unwrap_or("?"),
            m.ty.as_deref().unwrap_or("?")
        ));
    }
    what
}

/// The differences between two dumps (empty: structurally equal).
pub fn diff(a: &Dump, b: &Dump) -> Vec<Change> {
    let mut out = Vec::new();
    let p = pairing(a, b);
    let (pair_g, graphs) = (&p.graphs, &p.names);
    let mut taken = vec![false; b.graphs.len()];
    for j in pair_g.iter().flatten() {
        taken[*j] = true;
    }
    for (i, g) in a.graphs.iter().enumerate() {
        let Some(j) = pair_g[i] else {
            out.push(Change::GraphRemoved(g.name.clone()));
            continue;
        };
        let h = &b.graphs[j];
        let pairs = &p.nodes[i];
        let mut paired_b = vec![false; h.nodes.len()];
        for (k, n) in g.nodes.iter().enumerate() {
            let Some(l) = pairs[k] else {
                out.push(Change::NodeRemoved {
                    graph: g.name.clone(),
                    node: describe(n),
                });
                continue;
            };
            paired_b[l] = true;
            let m = &h.nodes[l];
            let what = differences(&g.nodes, k, &h.nodes, l, pairs, graphs);
            if !what.is_empty() {
                out.push(Change::NodeChanged {
                    graph: g.name.clone(),
                    a: describe(n),
                    b: describe(m),
                    what,
                });
            }
        }
        for (l, m) in h.nodes.iter().enumerate() {
            if !paired_b[l] {
                out.push(Change::NodeAdded {
                    graph: h.name.clone(),
                    node: describe(m),
                });
            }
        }
    }
    for (j, h) in b.graphs.iter().enumerate() {
        if !taken[j] {
            out.push(Change::GraphAdded(h.name.clone()));
        }
    }
    out
}

/// The differences as `mirdsl diff` prints them, under `--- A` / `+++ B`
/// headings, a heading per graph and a count at the end; empty when equal.
pub fn report(a: &str, b: &str, changes: &[Change]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    if changes.is_empty() {
        return out;
    }
    let _ = writeln!(out, "--- {a}\n+++ {b}");
    let mut graph = String::new();
    let mut heading = |out: &mut String, g: &str| {
        if graph != g {
            let _ = writeln!(out, "graph {g}");
            graph = g.to_string();
        }
    };
    for c in changes {
        match c {
            Change::GraphRemoved(g) => {
                let _ = writeln!(out, "- graph {g}");
            }
            Change::GraphAdded(g) => {
                let _ = writeln!(out, "+ graph {g}");
            }
            Change::NodeRemoved { graph, node } => {
                heading(&mut out, graph);
                let _ = writeln!(out, "  - {node}");
            }
            Change::NodeAdded { graph, node } => {
                heading(&mut out, graph);
                let _ = writeln!(out, "  + {node}");
            }
            Change::NodeChanged { graph, a, b, what } => {
                heading(&mut out, graph);
                let _ = writeln!(out, "  ~ {a}\n    → {b}");
                for w in what {
                    let _ = writeln!(out, "      {w}");
                }
            }
        }
    }
    let _ = writeln!(
        out,
        "{} difference{}",
        changes.len(),
        if changes.len() == 1 { "" } else { "s" }
    );
    out
}
