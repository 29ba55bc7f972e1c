//! Inlining: a direct call of a non-recursive graph — a nested graph of the
//! same body, or another generated top-level graph — is replaced by a copy of
//! the callee's nodes
//! (its nested graphs copied along, nested in the caller). Recursive graphs
//! (a `J` graph calling itself) stay calls.

use std::collections::{HashMap, HashSet, VecDeque};

use ir::{Body, GraphId, NodeId, NodeKind, Value};

use crate::builder::{copy_snapshot, replace_uses, Snapshot};

/// Stop growing a body past this many nodes.
const MAX_BODY_NODES: usize = 200_000;

/// Inlines what it can; returns whether anything changed. The first body (the
/// entry) is done first, top-down, so each callee is copied once into it; then
/// the bodies it still reaches (recursive ones). Calls of other bodies of
/// `bodies` (by `Global` name) are inlined when that body is not recursive;
/// calls of graphs outside `bodies` are left alone.
pub fn run(bodies: &mut [(String, Body)]) -> bool {
    run_with(bodies, false)
}

/// [`run`], and with `unroll` also a call of a recursive graph that every
/// run of its body makes (a call in a body's root graph, not in a branch),
/// one level each time: with [`super::unroll`] folding the conditions its
/// arguments decide, a recursion whose depth is known unrolls.
pub fn run_with(bodies: &mut [(String, Body)], unroll: bool) -> bool {
    let recursive_globals = recursive_globals(bodies);
    let mut changed = false;
    let mut done: HashSet<usize> = HashSet::new();
    let mut todo: Vec<usize> = vec![0];
    while let Some(bi) = todo.pop() {
        if bi >= bodies.len() || !done.insert(bi) {
            continue;
        }
        changed |= inline_body(bodies, bi, &recursive_globals, unroll);
        // The bodies this one still calls.
        let body = &bodies[bi].1;
        for g in &body.graphs {
            for &n in g.nodes.iter().chain(g.output.iter()) {
                for &i in body.inputs(n).iter().chain(std::iter::once(&n)) {
                    if let NodeKind::Const(Value::Global(name)) = &body.node(i).kind {
                        if let Some(j) = bodies.iter().position(|(m, _)| m == name) {
                            todo.push(j);
                        }
                    }
                }
            }
        }
    }
    changed
}

enum Callee {
    Nested(GraphId),
    /// Another body, by index.
    Global(usize),
}

/// Generated bodies that can reach themselves through `Global` references.
pub(crate) fn recursive_globals(bodies: &[(String, Body)]) -> HashSet<usize> {
    let index: HashMap<&str, usize> = bodies
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.as_str(), i))
        .collect();
    let refs: Vec<Vec<usize>> = bodies
        .iter()
        .map(|(_, b)| {
            let mut out = Vec::new();
            for node in &b.nodes {
                if let NodeKind::Const(Value::Global(name)) = &node.kind {
                    if let Some(&j) = index.get(name.as_str()) {
                        if !out.contains(&j) {
                            out.push(j);
                        }
                    }
                }
            }
            out
        })
        .collect();
    let mut rec = HashSet::new();
    for start in 0..bodies.len() {
        let mut seen = HashSet::new();
        let mut stack = refs[start].clone();
        while let Some(j) = stack.pop() {
            if j == start {
                rec.insert(start);
                break;
            }
            if seen.insert(j) {
                stack.extend(refs[j].iter().copied());
            }
        }
    }
    rec
}

/// Nested graphs that can reach themselves through graph constants.
pub(crate) fn recursive_nested(body: &Body) -> Vec<bool> {
    let n = body.graphs.len();
    // Graphs referred to from each graph's subtree.
    let mut refs: Vec<Vec<GraphId>> = vec![Vec::new(); n];
    for g in body.graph_ids() {
        let fg = body.graph(g);
        let uses = fg
            .nodes
            .iter()
            .flat_map(|&x| body.inputs(x).iter().copied())
            .chain(fg.output);
        for u in uses {
            if let NodeKind::Const(Value::Graph(k)) = &body.node(u).kind {
                // Charge the reference to g and every graph enclosing it.
                let mut cur = Some(g);
                while let Some(c) = cur {
                    if !refs[c.0 as usize].contains(k) {
                        refs[c.0 as usize].push(*k);
                    }
                    cur = body.graph(c).parent;
                }
            }
        }
    }
    (0..n)
        .map(|h| {
            let mut seen = HashSet::new();
            let mut stack = refs[h].clone();
            while let Some(k) = stack.pop() {
                if k.0 as usize == h {
                    return true;
                }
                if seen.insert(k) {
                    stack.extend(refs[k.0 as usize].iter().copied());
                }
            }
            false
        })
        .collect()
}

/// Whether call `n` of body `bi` can be inlined, and of what.
fn site(
    bodies: &[(String, Body)],
    bi: usize,
    n: NodeId,
    recursive: &[bool],
    recursive_globals: &HashSet<usize>,
    repl: &HashMap<NodeId, NodeId>,
    unroll: bool,
) -> Option<Callee> {
    let body = &bodies[bi].1;
    let g = body.node(n).graph?;
    // A call every run of the body makes: unrolling may copy a recursive
    // callee here.
    let unrolled = unroll && g == body.root();
    let inputs = body.inputs(n);
    let mut callee = *inputs.first()?;
    // A callee that is an earlier inlined call's value (not yet substituted).
    while let Some(&r) = repl.get(&callee) {
        callee = r;
    }
    let nargs = inputs.len() - 1;
    match &body.node(callee).kind {
        NodeKind::Const(Value::Graph(h)) => {
            let h = *h;
            // What `h` captures belongs to graphs enclosing it, which enclose
            // any graph that can name `h` (the call's) as well.
            let ok = (unrolled || !recursive.get(h.0 as usize).copied().unwrap_or(true))
                && !body.is_within(g, h)
                && body.graph(h).params.len() == nargs
                && body.graph(h).output.is_some();
            ok.then_some(Callee::Nested(h))
        }
        NodeKind::Const(Value::Global(name)) => {
            let j = bodies.iter().position(|(m, _)| m == name)?;
            let root = bodies[j].1.graph(GraphId(0));
            let ok = j != bi
                && (unrolled || !recursive_globals.contains(&j))
                && root.params.len() == nargs
                && root.output.is_some();
            ok.then_some(Callee::Global(j))
        }
        _ => None,
    }
}

/// Inlines every call it can in body `bi`, copies included, with a worklist.
fn inline_body(
    bodies: &mut [(String, Body)],
    bi: usize,
    recursive_globals: &HashSet<usize>,
    unroll: bool,
) -> bool {
    let mut recursive = recursive_nested(&bodies[bi].1);
    let mut other_recursive: HashMap<usize, Vec<bool>> = HashMap::new();
    let mut queue: VecDeque<NodeId> = bodies[bi]
        .1
        .graphs
        .iter()
        .flat_map(|g| g.nodes.iter().copied())
        .collect();
    let mut repl: HashMap<NodeId, NodeId> = HashMap::new();
    let mut inserted: HashMap<NodeId, Vec<NodeId>> = HashMap::new();
    let mut touched: HashSet<GraphId> = HashSet::new();
    while let Some(n) = queue.pop_front() {
        if bodies[bi].1.nodes.len() > MAX_BODY_NODES {
            break;
        }
        let Some(callee) = site(bodies, bi, n, &recursive, recursive_globals, &repl, unroll) else {
            continue;
        };
        let (snap, same_body, source_recursive) = match callee {
            Callee::Nested(h) => (Snapshot::take(&bodies[bi].1, h), true, None),
            Callee::Global(j) => {
                let rec = other_recursive
                    .entry(j)
                    .or_insert_with(|| recursive_nested(&bodies[j].1))
                    .clone();
                (Snapshot::take(&bodies[j].1, GraphId(0)), false, Some(rec))
            }
        };
        let body = &mut bodies[bi].1;
        let Some(c) = body.node(n).graph else {
            continue;
        };
        let args: Vec<NodeId> = body.inputs(n)[1..].to_vec();
        let mut map: HashMap<NodeId, NodeId> = HashMap::new();
        for (p, a) in snap.root_params().iter().zip(&args) {
            map.insert(*p, *a);
        }
        let Ok(copied) = copy_snapshot(&snap, body, c, &mut map, same_body) else {
            continue;
        };
        let Some(out) = copied.output else { continue };
        // Copies of recursive graphs are recursive.
        recursive.resize(body.graphs.len(), false);
        for (old, new) in &copied.graphs {
            let was = match &source_recursive {
                Some(rec) => rec[old.0 as usize],
                None => recursive[old.0 as usize],
            };
            recursive[new.0 as usize] = was;
            queue.extend(body.graph(*new).nodes.iter().copied());
        }
        queue.extend(copied.root_nodes.iter().copied());
        // The call's name goes to the value that replaces it, when that is new.
        if let Some(name) = body.node(n).name.clone() {
            if copied.root_nodes.contains(&out) && body.node(out).name.is_none() {
                body.node_mut(out).name = Some(name);
            }
        }
        inserted.insert(n, copied.root_nodes);
        repl.insert(n, out);
        touched.insert(c);
    }
    if repl.is_empty() {
        return false;
    }
    let body = &mut bodies[bi].1;
    // Put the copies where the calls were (copies of calls inlined in turn).
    let fresh: HashSet<NodeId> = inserted.values().flatten().copied().collect();
    fn expand(n: NodeId, inserted: &HashMap<NodeId, Vec<NodeId>>, out: &mut Vec<NodeId>) {
        match inserted.get(&n) {
            Some(copies) => {
                for &m in copies {
                    expand(m, inserted, out);
                }
            }
            None => out.push(n),
        }
    }
    for c in touched {
        let old = std::mem::take(&mut body.graph_mut(c).nodes);
        let mut ordered = Vec::with_capacity(old.len());
        for n in old {
            if !fresh.contains(&n) {
                expand(n, &inserted, &mut ordered);
            }
        }
        body.graph_mut(c).nodes = ordered;
    }
    replace_uses(body, &repl);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::{dce, testutil::*};
    use expect_test::expect;
    use ir::{GraphOrigin, PrimRef};

    #[test]
    fn inlines_nested_and_global_calls() {
        // graph helper(a) { return Exp(a) }
        let (mut helper, hg, hp) = body(&["a"]);
        helper.graph_mut(hg).name = "helper".into();
        let e = p(&mut helper, hg, "Exp", &[hp[0]]);
        helper.graph_mut(hg).output = Some(e);
        // graph f(x) { graph sq(y) { return y * x }; return helper(sq(x)) }
        let (mut f, g, ps) = body(&["x"]);
        let sq = f.add_graph("sq", Some(g), GraphOrigin::Named);
        let y = f.add_param(sq, "y", None);
        let m = p(&mut f, sq, "Mul", &[y, ps[0]]);
        f.graph_mut(sq).output = Some(m);
        let sqc = f.add_const(Value::Graph(sq), None);
        let call1 = f.add_apply(g, vec![sqc, ps[0]], None);
        let hc = f.add_const(Value::Global("helper".into()), None);
        let call2 = f.add_apply(g, vec![hc, call1], None);
        f.graph_mut(g).output = Some(call2);
        let mut bodies = vec![("f".to_string(), f), ("helper".to_string(), helper)];
        assert!(run(&mut bodies));
        dce::run(&mut bodies[0].1);
        expect![[r#"
            graph f(x) {
              %0 = Mul(x, x)
              %1 = Exp(%0)
              return %1
            }
        "#]]
        .assert_eq(&print(&bodies[0].1));
    }

    #[test]
    fn leaves_recursion_alone() {
        // graph f(x) { return f(Neg(x)) }
        let (mut f, g, ps) = body(&["x"]);
        let n = f.add_prim_call(g, PrimRef::new("Neg"), &[ps[0]], None);
        let fc = f.add_const(Value::Global("f".into()), None);
        let call = f.add_apply(g, vec![fc, n], None);
        f.graph_mut(g).output = Some(call);
        let mut bodies = vec![("f".to_string(), f)];
        assert!(!run(&mut bodies));
    }

    #[test]
    fn copies_closures_of_the_inlined_graph() {
        // graph maker(a) { graph k(b) { return a * b }; return k }
        let (mut maker, mg, mp) = body(&["a"]);
        maker.graph_mut(mg).name = "maker".into();
        let k = maker.add_graph("k", Some(mg), GraphOrigin::Named);
        let b = maker.add_param(k, "b", None);
        let m = p(&mut maker, k, "Mul", &[mp[0], b]);
        maker.graph_mut(k).output = Some(m);
        let kc = maker.add_const(Value::Graph(k), None);
        maker.graph_mut(mg).output = Some(kc);
        // graph f(x) { c = maker(x); return c(x) }
        let (mut f, g, ps) = body(&["x"]);
        let mc = f.add_const(Value::Global("maker".into()), None);
        let c = f.add_apply(g, vec![mc, ps[0]], None);
        let r = f.add_apply(g, vec![c, ps[0]], None);
        f.graph_mut(g).output = Some(r);
        let mut bodies = vec![("f".to_string(), f), ("maker".to_string(), maker)];
        assert!(run(&mut bodies));
        dce::run(&mut bodies[0].1);
        expect![[r#"
            graph f(x) {
              %0 = Mul(x, x)
              return %0
            }
        "#]]
        .assert_eq(&print(&bodies[0].1));
    }
}
