//! Common-subexpression elimination: equal constants become one node, and a
//! CNode computing what a CNode of its graph or of an enclosing graph already
//! computes (same callee, same inputs) is replaced by it. Primitives are pure,
//! and so are graph calls.

use std::collections::HashMap;

use ir::{Body, GraphId, NodeId, NodeKind};

use crate::builder::replace_uses;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Node(NodeId),
    Const(String),
}

/// Merges common subexpressions; returns whether anything changed.
pub fn run(body: &mut Body) -> bool {
    // One node per distinct constant or weight.
    let mut canon: HashMap<String, NodeId> = HashMap::new();
    let mut const_repl: HashMap<NodeId, NodeId> = HashMap::new();
    let mut uses: Vec<NodeId> = Vec::new();
    for g in &body.graphs {
        for &n in &g.nodes {
            uses.extend(body.inputs(n).iter().copied());
        }
        uses.extend(g.output);
    }
    for m in uses {
        if let Some(k) = const_key(body, m) {
            let c = *canon.entry(k).or_insert(m);
            if c != m {
                const_repl.insert(m, c);
            }
        }
    }
    let mut changed = false;
    if !const_repl.is_empty() {
        // Not a semantic change: it only makes equal constants comparable.
        replace_uses(body, &const_repl);
    }
    let mut tables: HashMap<GraphId, HashMap<Vec<Key>, NodeId>> = HashMap::new();
    let mut repl: HashMap<NodeId, NodeId> = HashMap::new();
    for g in body.graph_ids().collect::<Vec<_>>() {
        for n in body.graph(g).nodes.clone() {
            let key: Vec<Key> = body
                .inputs(n)
                .iter()
                .map(|&i| {
                    let mut i = i;
                    while let Some(&j) = repl.get(&i) {
                        i = j;
                    }
                    const_key(body, i).map_or(Key::Node(i), Key::Const)
                })
                .collect();
            let mut found = None;
            let mut scope = Some(g);
            while let Some(s) = scope {
                if let Some(&m) = tables.get(&s).and_then(|t| t.get(&key)) {
                    found = Some(m);
                    break;
                }
                scope = body.graph(s).parent;
            }
            match found {
                Some(m) => {
                    repl.insert(n, m);
                }
                None => {
                    tables.entry(g).or_default().insert(key, n);
                }
            }
        }
    }
    if !repl.is_empty() {
        changed = true;
        replace_uses(body, &repl);
        for g in &mut body.graphs {
            g.nodes.retain(|n| !repl.contains_key(n));
        }
    }
    changed
}

fn const_key(body: &Body, n: NodeId) -> Option<String> {
    match &body.node(n).kind {
        NodeKind::Const(v) => Some(format!("c{v:?}")),
        NodeKind::Weight(w) => Some(format!("w{w}")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::testutil::*;
    use expect_test::expect;
    use ir::{GraphOrigin, Value};

    #[test]
    fn merges_equal_nodes_in_a_graph_and_its_closures() {
        let (mut b, g, ps) = body(&["x"]);
        let a = p(&mut b, g, "Exp", &[ps[0]]);
        let a2 = p(&mut b, g, "Exp", &[ps[0]]);
        let s = p(&mut b, g, "Add", &[a, a2]);
        let h = b.add_graph("inner", Some(g), GraphOrigin::Named);
        let a3 = p(&mut b, h, "Exp", &[ps[0]]);
        let hs = p(&mut b, h, "Mul", &[a3, s]);
        b.graph_mut(h).output = Some(hs);
        let c = b.add_const(Value::Graph(h), None);
        let t = p(&mut b, g, "MakeTuple", &[s, c]);
        b.graph_mut(g).output = Some(t);
        assert!(run(&mut b));
        expect![[r#"
            graph f(x) {
              %0 = Exp(x)
              %1 = Add(%0, %0)
              %2 = (%1, inner)
              graph inner() {
                %3 = Mul(%0, %1)
                return %3
              }
              return %2
            }
        "#]]
        .assert_eq(&print(&b));
        assert!(!run(&mut b));
    }
}
