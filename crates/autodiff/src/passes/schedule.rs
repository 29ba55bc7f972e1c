//! Scheduling: puts every graph's CNodes in an order that respects what each
//! needs, whatever the earlier passes did to it. A node comes after the nodes
//! of its graph it uses, and after those a closure it makes captures (a
//! closure takes its captured values when it is made). Merging equal nodes
//! (`cse`), moving copies in (`inline`) or rewriting (`zeros`) may otherwise
//! leave a node before a value it needs. The order is otherwise kept (a
//! stable topological sort).

use std::collections::{HashMap, HashSet};

use ir::{Body, GraphId, NodeId, NodeKind, Value};

use crate::world::closure_fvs;

/// Reorders every graph's nodes; returns whether anything moved.
pub fn run(body: &mut Body) -> bool {
    let mut changed = false;
    let mut captured: HashMap<GraphId, Vec<NodeId>> = HashMap::new();
    for g in body.graph_ids().collect::<Vec<_>>() {
        let nodes = body.graph(g).nodes.clone();
        if nodes.len() < 2 {
            continue;
        }
        let own: HashSet<NodeId> = nodes.iter().copied().collect();
        let position: HashMap<NodeId, usize> =
            nodes.iter().enumerate().map(|(i, &n)| (n, i)).collect();
        // What each node needs first, among this graph's nodes.
        let mut needs: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        for (i, &n) in nodes.iter().enumerate() {
            for &m in body.inputs(n) {
                if own.contains(&m) {
                    needs[i].push(position[&m]);
                } else if let NodeKind::Const(Value::Graph(h)) = &body.node(m).kind {
                    let caps = captured.entry(*h).or_insert_with(|| closure_fvs(body, *h));

                    for c in caps.iter() {
                        if let Some(&p) = position.get(c) {
                            needs[i].push(p);
                        }
                    }
                }
            }
        }
        // Stable topological order: repeatedly take the first node whose
        // needs are placed (a cycle keeps its nodes in their old order).
        let mut placed = vec![false; nodes.len()];
        let mut order = Vec::with_capacity(nodes.len());
        let mut visiting = vec![false; nodes.len()];
        fn place(
            i: usize,
            needs: &[Vec<usize>],
            placed: &mut [bool],
            visiting: &mut [bool],
            order: &mut Vec<usize>,
        ) {
            // Iterative depth-first placement.
            let mut stack = vec![(i, 0usize)];
            visiting[i] = true;
            while let Some((k, next)) = stack.pop() {
                if let Some(&d) = needs[k].get(next) {
                    stack.push((k, next + 1));
                    if !placed[d] && !visiting[d] {
                        visiting[d] = true;
                        stack.push((d, 0));
                    }
                    continue;
                }
                visiting[k] = false;
                if !placed[k] {
                    placed[k] = true;
                    order.push(k);
                }
            }
        }
        for i in 0..nodes.len() {
            if !placed[i] {
                place(i, &needs, &mut placed, &mut visiting, &mut order);
            }
        }
        if order.iter().enumerate().any(|(a, &b)| a != b) {
            body.graph_mut(g).nodes = order.into_iter().map(|i| nodes[i]).collect();
            changed = true;
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::testutil::*;
    use expect_test::expect;
    use ir::GraphOrigin;

    #[test]
    fn values_come_before_their_uses_and_closures_that_capture_them() {
        let (mut b, g, ps) = body(&["x"]);
        // %late is used by a closure made (and called) before it.
        let h = b.add_graph("inner", Some(g), GraphOrigin::Lambda);
        let c = b.add_const(Value::Graph(h), None);
        let call = b.add_apply(g, vec![c], None);
        let late = p(&mut b, g, "Exp", &[ps[0]]);
        let use_late = p(&mut b, h, "Neg", &[late]);
        b.graph_mut(h).output = Some(use_late);
        let out = p(&mut b, g, "Add", &[call, late]);
        b.graph_mut(g).output = Some(out);
        assert!(run(&mut b));
        expect![[r#"
            graph f(x) {
              %0 = Exp(x)
              %1 = f_lambda()
              %2 = Add(%1, %0)
              graph f_lambda() {
                %3 = Neg(%0)
                return %3
              }
              return %2
            }
        "#]]
        .assert_eq(&print(&b));
        assert!(!run(&mut b));
    }
}
