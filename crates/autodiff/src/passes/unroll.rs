//! Unrolling a recursion whose depth the arguments decide: a loop written as
//! a recursive graph (`lib/nn`'s `lstm`, `gru`) over a sequence of known
//! length. Its gradient is a recursive `J` graph that returns a closure
//! built from the closure of the next level; MindSpore 2.10 cannot run such a
//! graph loaded from MindIR (its analysis of a loaded model does not
//! specialise the closures a recursion returns, and the backend then finds a
//! call of a closure parameter with no type: `GetFuncGraphsFromCallNode`;
//! its own export of a `while` loop's gradient does not run either). MindSpore
//! unrolls a Python loop over a constant range itself, so `nn.GRU`'s exported
//! gradient is straight-line code; this does the same for export.
//!
//! Each round inlines the recursive calls every run makes (those in a body's
//! root graph, see [`inline::run_with`]), folds the scalars the analysis now
//! knows (`t < t_end` with both known) and the `Switch`es they decide, so the
//! next level's call comes out of its branch into the root graph. A recursion
//! whose condition stays unknown stops unrolling after one level.

use std::collections::HashMap;
use std::sync::Arc;

use ir::{Body, NodeId, Value};

use super::{constfold, dce, inline, with_generated};
use crate::absint::{self, AV};
use crate::builder::replace_uses;
use crate::world::{Item, World};

/// Rounds of inlining at most (each unrolls at least one level).
const MAX_ROUNDS: usize = 4096;
/// Stop unrolling past this many nodes in all.
const MAX_NODES: usize = 400_000;

/// Unrolls what it can; returns whether anything changed. Arguments as
/// [`super::optimize`]'s.
pub fn run(
    graphs: &mut [(String, Body)],
    world: &World,
    entry: &str,
    params: &[AV],
    vjp: bool,
) -> bool {
    let mut changed = false;
    let mut rounds = 0;
    loop {
        // Untyped rounds while they make progress (a counter `t + 1` and
        // `t < 3` fold without the analysis)...
        loop {
            let mut round = inline::run_with(graphs, true);
            for (_, body) in graphs.iter_mut() {
                round |= constfold::run(body);
                round |= dce::run(body);
            }
            changed |= round;
            rounds += 1;
            if !round || rounds >= MAX_ROUNDS || too_big(graphs) {
                break;
            }
        }
        // ... then what the analysis knows (`Shape(xs)[0]`), if anything new.
        if rounds >= MAX_ROUNDS
            || too_big(graphs)
            || !fold_known_scalars(graphs, world, entry, params, vjp)
        {
            break;
        }
        changed = true;
    }
    changed
}

fn too_big(graphs: &[(String, Body)]) -> bool {
    graphs.iter().map(|(_, b)| b.nodes.len()).sum::<usize>() > MAX_NODES
}

/// Replaces each primitive application whose value the analysis knows to be
/// one scalar (`Less(0, 3)`, `Shape(xs)[0]`) with that constant.
fn fold_known_scalars(
    graphs: &mut [(String, Body)],
    world: &World,
    entry: &str,
    params: &[AV],
    vjp: bool,
) -> bool {
    let typed = with_generated(world, graphs);
    let entry_item: Item = Arc::from(entry);
    let an = if vjp {
        absint::analyze_vjp(&typed, &entry_item, params)
    } else {
        absint::analyze(&typed, &entry_item, ir::GraphId(0), params)
    };
    let mut changed = false;
    for (name, body) in graphs.iter_mut() {
        let item: Item = Arc::from(name.as_str());
        let mut repl: HashMap<NodeId, NodeId> = HashMap::new();
        for g in body.graph_ids().collect::<Vec<_>>() {
            for n in body.graph(g).nodes.clone() {
                if body.called_prim(n).is_none() {
                    continue;
                }
                let AV::Data(ir::AbsVal::Scalar {
                    dtype,
                    value: Some(value),
                    weak,
                }) = an.value(&typed, &item, n)
                else {
                    continue;
                };
                let c = body.add_const(Value::Scalar { value, dtype, weak }, None);
                repl.insert(n, c);
            }
        }
        if !repl.is_empty() {
            replace_uses(body, &repl);
            changed = true;
        }
    }
    changed
}

/// A call by which a graph of `graphs` still calls itself (what unrolling
/// left: a recursion whose depth the arguments do not decide), as the
/// calling body's name and the call node.
pub fn remaining_recursion(graphs: &[(String, Body)]) -> Option<(String, NodeId)> {
    let globals = inline::recursive_globals(graphs);
    for (bi, (name, body)) in graphs.iter().enumerate() {
        let nested = inline::recursive_nested(body);
        for g in body.graph_ids() {
            for &n in &body.graph(g).nodes {
                let Some(&f) = body.inputs(n).first() else {
                    continue;
                };
                let recursive = match &body.node(f).kind {
                    ir::NodeKind::Const(Value::Graph(h)) => {
                        nested.get(h.0 as usize).copied().unwrap_or(false) && body.is_within(g, *h)
                    }
                    ir::NodeKind::Const(Value::Global(callee)) => {
                        globals.contains(&bi)
                            && graphs
                                .iter()
                                .position(|(m, _)| m == callee)
                                .is_some_and(|j| globals.contains(&j))
                    }
                    _ => false,
                };
                if recursive {
                    return Some((name.clone(), n));
                }
            }
        }
    }
    None
}
