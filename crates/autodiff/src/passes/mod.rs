//! Clean-up passes over the generated graphs, so that gradients are small and
//! readable: [`inline`] (non-recursive graphs into their callers), [`constfold`]
//! (tuple indexing of known tuples, constant conditions and arithmetic),
//! [`zeros`] (zero and one propagation, and broadcasting reductions resolved
//! from known shapes), [`cse`] (common subexpressions) and [`dce`] (dead nodes
//! and unreferenced graphs); [`schedule`] then restores an order every node's
//! needs allow. [`optimize`] runs them to a fixpoint.

pub mod constfold;
pub mod cse;
pub mod dce;
pub mod inline;
pub mod schedule;
pub mod unroll;
pub mod zeros;

use std::collections::HashSet;
use std::sync::Arc;

use ir::{Body, NodeKind, Value};

use crate::absint::{self, AV};
use crate::world::{Item, World};

/// Runs the passes to a fixpoint over the generated bodies. `world` is the
/// original program (the generated code may call its graphs); `entry` is the
/// generated entry, called with `params` (a `vjp` entry's backpropagator is
/// analysed as called with a sensitivity like the output).
pub fn optimize(
    graphs: &mut [(String, Body)],
    world: &World,
    entry: &str,
    params: &[AV],
    vjp: bool,
) {
    for _ in 0..12 {
        let mut changed = inline::run(graphs);
        for (_, body) in graphs.iter_mut() {
            changed |= constfold::run(body);
            changed |= dce::run(body);
        }
        // Typed rewrites, with what the analysis finds of the current program.
        let typed = with_generated(world, graphs);
        let entry_item: Item = Arc::from(entry);
        let an = if vjp {
            absint::analyze_vjp(&typed, &entry_item, params)
        } else {
            absint::analyze(&typed, &entry_item, ir::GraphId(0), params)
        };
        for (name, body) in graphs.iter_mut() {
            let item: Item = Arc::from(name.as_str());
            let ty = |n| an.value(&typed, &item, n);
            changed |= zeros::run(body, &ty);
        }
        for (_, body) in graphs.iter_mut() {
            changed |= cse::run(body);
            changed |= dce::run(body);
            // Order only: not a change the other passes could use.
            schedule::run(body);
        }
        if !changed {
            break;
        }
    }
}

/// The program with the generated bodies added.
pub fn with_generated(world: &World, graphs: &[(String, Body)]) -> World {
    let mut w = world.clone();
    for (name, body) in graphs {
        w.insert(Arc::from(name.as_str()), Arc::new(body.clone()));
    }
    w
}

/// Drops the generated graphs the entry does not reach (through `Global`
/// references); the entry stays first.
pub fn prune(graphs: &mut Vec<(String, Body)>, entry: &str) {
    let mut keep: HashSet<String> = HashSet::new();
    let mut stack = vec![entry.to_string()];
    while let Some(name) = stack.pop() {
        if !keep.insert(name.clone()) {
            continue;
        }
        let Some((_, body)) = graphs.iter().find(|(n, _)| *n == name) else {
            continue;
        };
        for g in &body.graphs {
            for &n in g.nodes.iter().chain(g.output.iter()) {
                let mut refs: Vec<ir::NodeId> = body.inputs(n).to_vec();
                refs.push(n);
                for r in refs {
                    if let NodeKind::Const(Value::Global(target)) = &body.node(r).kind {
                        stack.push(target.clone());
                    }
                }
            }
        }
    }
    graphs.retain(|(n, _)| keep.contains(n));
    if let Some(i) = graphs.iter().position(|(n, _)| n == entry) {
        let e = graphs.remove(i);
        graphs.insert(0, e);
    }
}

/// Final tidying, optimised or not: dead code removed, generated graphs the
/// entry does not reach dropped, and local names that would shadow a
/// top-level name renamed.
pub fn finish(graphs: &mut Vec<(String, Body)>, world: &World, entry: &str) {
    for (_, body) in graphs.iter_mut() {
        dce::run(body);
        schedule::run(body);
    }
    prune(graphs, entry);
    // Names that would shadow top-level ones.
    let mut globals: HashSet<String> = world.bodies.keys().map(|k| k.to_string()).collect();
    globals.extend(world.weights.keys().cloned());
    globals.extend(graphs.iter().map(|(n, _)| n.clone()));
    for (_, body) in graphs.iter_mut() {
        for node in &mut body.nodes {
            if let Some(name) = &node.name {
                if globals.contains(name) {
                    node.name = Some(format!("{name}_"));
                }
            }
        }
        for g in 1..body.graphs.len() {
            if globals.contains(&body.graphs[g].name) {
                let name = format!("{}_", body.graphs[g].name);
                body.graphs[g].name = name;
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    //! Building small bodies by hand for the passes' tests.

    use ir::{Body, GraphId, GraphOrigin, NodeId, PrimRef, Value};

    pub fn body(params: &[&str]) -> (Body, GraphId, Vec<NodeId>) {
        let mut b = Body::default();
        let g = b.add_graph("f", None, GraphOrigin::Named);
        let ps = params.iter().map(|p| b.add_param(g, *p, None)).collect();
        (b, g, ps)
    }

    pub fn p(b: &mut Body, g: GraphId, name: &str, args: &[NodeId]) -> NodeId {
        b.add_prim_call(g, PrimRef::new(name), args, None)
    }

    pub fn int(b: &mut Body, i: i64) -> NodeId {
        b.add_const(Value::int(i), None)
    }

    pub fn print(b: &Body) -> String {
        ir::print::print_body(b)
    }
}
