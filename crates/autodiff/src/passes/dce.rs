//! Dead-code elimination: CNodes nothing live uses, and nested graphs nothing
//! live refers to, are removed; the body is then rebuilt compactly. Every
//! primitive is pure, so a value nobody uses need not be computed.

use std::collections::{HashMap, HashSet};

use ir::{Body, GraphId, Node, NodeId, NodeKind, Value};

/// Removes dead code; returns whether anything was removed.
pub fn run(body: &mut Body) -> bool {
    if body.graphs.is_empty() {
        return false;
    }
    let (live, live_graphs) = liveness(body);
    let mut changed = false;
    for g in &mut body.graphs {
        let before = g.nodes.len();
        g.nodes.retain(|n| live.contains(n));
        changed |= g.nodes.len() != before;
    }
    let referenced = referenced_nodes(body, &live_graphs);
    if changed || live_graphs.iter().any(|l| !l) || referenced < body.nodes.len() {
        *body = compact(body, &live_graphs);
        return changed || live_graphs.iter().any(|l| !l);
    }
    changed
}

fn liveness(body: &Body) -> (HashSet<NodeId>, Vec<bool>) {
    let mut live = HashSet::new();
    let mut live_graphs = vec![false; body.graphs.len()];
    let mut stack: Vec<NodeId> = Vec::new();
    let mark_graph = |g: GraphId, live_graphs: &mut Vec<bool>, stack: &mut Vec<NodeId>| {
        let mut cur = Some(g);
        while let Some(c) = cur {
            if live_graphs[c.0 as usize] {
                break;
            }
            live_graphs[c.0 as usize] = true;
            stack.extend(body.graph(c).output);
            cur = body.graph(c).parent;
        }
    };
    mark_graph(body.root(), &mut live_graphs, &mut stack);
    while let Some(n) = stack.pop() {
        if !live.insert(n) {
            continue;
        }
        match &body.node(n).kind {
            NodeKind::Apply(inputs) => stack.extend(inputs.iter().copied()),
            NodeKind::Const(Value::Graph(h)) => mark_graph(*h, &mut live_graphs, &mut stack),
            _ => {}
        }
    }
    (live, live_graphs)
}

fn referenced_nodes(body: &Body, live_graphs: &[bool]) -> usize {
    let mut seen = HashSet::new();
    for (i, g) in body.graphs.iter().enumerate() {
        if !live_graphs[i] {
            continue;
        }
        seen.extend(g.params.iter().copied());
        for &n in &g.nodes {
            seen.insert(n);
            seen.extend(body.inputs(n).iter().copied());
        }
        seen.extend(g.output);
    }
    seen.len()
}

/// A copy of `body` with only the live graphs and the nodes they use.
pub fn compact(body: &Body, live_graphs: &[bool]) -> Body {
    let mut out = Body::default();
    let mut gmap: HashMap<GraphId, GraphId> = HashMap::new();
    for g in body.graph_ids() {
        if !live_graphs[g.0 as usize] {
            continue;
        }
        let old = body.graph(g);
        let parent = old.parent.and_then(|p| gmap.get(&p).copied());
        let id = out.add_graph(old.name.clone(), parent, old.origin);
        let new = out.graph_mut(id);
        new.ret_annotation = old.ret_annotation.clone();
        new.span = old.span;
        new.name_span = old.name_span;
        gmap.insert(g, id);
    }
    let mut nmap: HashMap<NodeId, NodeId> = HashMap::new();
    let push = |out: &mut Body, node: Node| -> NodeId {
        out.nodes.push(node);
        NodeId(out.nodes.len() as u32 - 1)
    };
    for g in body.graph_ids() {
        let Some(&ng) = gmap.get(&g) else { continue };
        for &p in &body.graph(g).params {
            let mut node = body.node(p).clone();
            node.graph = Some(ng);
            let id = push(&mut out, node);
            out.graph_mut(ng).params.push(id);
            nmap.insert(p, id);
        }
        for &n in &body.graph(g).nodes {
            let mut node = body.node(n).clone();
            node.graph = Some(ng);
            node.kind = NodeKind::Apply(Vec::new());
            let id = push(&mut out, node);
            out.graph_mut(ng).nodes.push(id);
            nmap.insert(n, id);
        }
    }
    let map_input = |m: NodeId, out: &mut Body, nmap: &mut HashMap<NodeId, NodeId>| -> NodeId {
        if let Some(&x) = nmap.get(&m) {
            return x;
        }
        let mut node = body.node(m).clone();
        if let NodeKind::Const(Value::Graph(h)) = &node.kind {
            node.kind = NodeKind::Const(Value::Graph(gmap.get(h).copied().unwrap_or(*h)));
        }
        let id = push(out, node);
        nmap.insert(m, id);
        id
    };
    for g in body.graph_ids() {
        let Some(&ng) = gmap.get(&g) else { continue };
        for &n in &body.graph(g).nodes {
            let inputs: Vec<NodeId> = body
                .inputs(n)
                .iter()
                .map(|&i| map_input(i, &mut out, &mut nmap))
                .collect();
            let new = nmap[&n];
            out.node_mut(new).kind = NodeKind::Apply(inputs);
        }
        if let Some(o) = body.graph(g).output {
            let o = map_input(o, &mut out, &mut nmap);
            out.graph_mut(ng).output = Some(o);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::testutil::*;
    use expect_test::expect;
    use ir::GraphOrigin;

    #[test]
    fn removes_unused_nodes_and_graphs() {
        let (mut b, g, ps) = body(&["x", "y"]);
        let _dead = p(&mut b, g, "Mul", &[ps[0], ps[1]]);
        let live = p(&mut b, g, "Add", &[ps[0], ps[1]]);
        let h = b.add_graph("unused", Some(g), GraphOrigin::Named);
        let hx = p(&mut b, h, "Neg", &[ps[0]]);
        b.graph_mut(h).output = Some(hx);
        b.graph_mut(g).output = Some(live);
        assert!(run(&mut b));
        expect![[r#"
            graph f(x, y) {
              %0 = Add(x, y)
              return %0
            }
        "#]]
        .assert_eq(&print(&b));
        assert!(!run(&mut b));
    }

    #[test]
    fn keeps_closures_and_what_they_capture() {
        let (mut b, g, ps) = body(&["x"]);
        let captured = p(&mut b, g, "Exp", &[ps[0]]);
        let h = b.add_graph("inner", Some(g), GraphOrigin::Named);
        let hx = p(&mut b, h, "Neg", &[captured]);
        b.graph_mut(h).output = Some(hx);
        let c = b.add_const(Value::Graph(h), None);
        b.graph_mut(g).output = Some(c);
        assert!(!run(&mut b));
        expect![[r#"
            graph f(x) {
              %0 = Exp(x)
              graph inner() {
                %1 = Neg(%0)
                return %1
              }
              return inner
            }
        "#]]
        .assert_eq(&print(&b));
    }
}
