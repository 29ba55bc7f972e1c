//! Before differentiating: calls of composite primitives (`ops::composite`)
//! are replaced by their instance's body, inlined where the call was, so the
//! gradient comes from the decomposition and the gradient program holds only
//! true primitives. The caller supplies the instances (the analysis lowers
//! them; this crate does not parse).
//!
//! So are calls of primitives that have no gradient rule but an expansion
//! (`ops::composite::expansion`: the `_...Grad` helpers first-order rules
//! emit), wherever a body is about to be differentiated: a gradient program
//! differentiated again goes through the helpers' decompositions, while a
//! first-order gradient keeps calling the fast helpers.

use std::collections::HashMap;
use std::sync::Arc;

use ir::{Body, NodeId, NodeKind, PrimRef, Value};

use crate::builder::{copy_graph_into, replace_uses};
use crate::world::World;
use crate::AdError;

/// Where a composite call's instance body comes from.
pub type InstanceFn = fn(&PrimRef) -> Option<Arc<Body>>;

/// Whether differentiating a call of `prim` inlines a definition: a
/// composite, or a primitive without a gradient rule that has an expansion.
pub fn is_inlined(prim: &PrimRef) -> bool {
    ops::composite::inlined_definition(&prim.name).is_some()
}

/// The primitive node `n` calls, if `inline` says its definition is inlined.
fn callee_where<'b>(
    body: &'b Body,
    n: NodeId,
    inline: &dyn Fn(&PrimRef) -> bool,
) -> Option<&'b PrimRef> {
    body.called_prim(n).filter(|p| inline(p))
}

/// The primitive node `n` calls, if its definition is inlined.
fn composite_callee(body: &Body, n: NodeId) -> Option<&PrimRef> {
    callee_where(body, n, &is_inlined)
}

/// Whether `body` calls a primitive whose definition is inlined.
pub fn has_composite_calls(body: &Body) -> bool {
    body.graph_ids().any(|g| {
        body.graph(g)
            .nodes
            .iter()
            .any(|&n| composite_callee(body, n).is_some())
    })
}

/// Inlines every composite call of every body of `world`.
pub fn expand(world: &mut World, instance: Option<InstanceFn>) -> Result<(), AdError> {
    let names = world.order.clone();
    expand_items(world, &names, instance).map(|_| ())
}

/// Inlines the composite calls of the bodies `names` of `world`; whether any
/// body changed.
pub fn expand_items(
    world: &mut World,
    names: &[crate::world::Item],
    instance: Option<InstanceFn>,
) -> Result<bool, AdError> {
    let mut changed = false;
    for name in names.iter().cloned() {
        let body = world.bodies[&name].clone();
        if !has_composite_calls(&body) {
            continue;
        }
        let Some(instance) = instance else {
            let composite = body.nodes.iter().any(|node| {
                matches!(&node.kind, NodeKind::Const(Value::Prim(p)) if ops::composite::composite(&p.name).is_some())
            });
            if composite {
                return Err(AdError(format!(
                    "`{name}` calls composite primitives, whose definitions were not given"
                )));
            }
            // Only expansions: differentiating through those primitives is
            // refused where it happens ("has no gradient rule").
            continue;
        };
        let (expanded, inlined) = inline_calls(&body, instance, &is_inlined)?;
        if inlined {
            world.bodies.insert(name, Arc::new(expanded));
            changed = true;
        }
    }
    Ok(changed)
}

/// `body` with its composite calls inlined (repeatedly: an instance may call
/// other composites).
pub fn expand_body(body: &Body, instance: InstanceFn) -> Result<Body, AdError> {
    inline_calls(body, instance, &is_inlined).map(|(b, _)| b)
}

/// `body` with the calls of the primitives `inline` picks (among those with
/// a definition: composites and expansions) replaced by their definitions,
/// repeatedly; and whether any was. Export uses it for the helpers MindSpore
/// has no counterpart of.
pub fn expand_body_where(
    body: &Body,
    instance: InstanceFn,
    inline: &dyn Fn(&PrimRef) -> bool,
) -> Result<(Body, bool), AdError> {
    inline_calls(body, instance, &|p| is_inlined(p) && inline(p))
}

/// Whether `inst` calls primitive `name`: an expansion that, for the
/// attribute values it was specialised on, falls back to the helper itself
/// (it covers only some of them), so the call stays and differentiating it
/// is refused.
fn falls_back(inst: &Body, name: &str) -> bool {
    inst.graph_ids().any(|g| {
        inst.graph(g)
            .nodes
            .iter()
            .any(|&n| inst.called_prim(n).is_some_and(|q| q.name == name))
    })
}

/// The calls of the primitives `inline` picks inlined, and whether any was.
fn inline_calls(
    body: &Body,
    instance: InstanceFn,
    inline: &dyn Fn(&PrimRef) -> bool,
) -> Result<(Body, bool), AdError> {
    let mut b = body.clone();
    let mut any = false;
    for _round in 0..64 {
        let mut changed = false;
        let graphs: Vec<_> = b.graph_ids().collect();
        for g in graphs {
            let nodes = std::mem::take(&mut b.graph_mut(g).nodes);
            let mut replace: HashMap<NodeId, NodeId> = HashMap::new();
            for n in nodes {
                let Some(p) = callee_where(&b, n, inline).cloned() else {
                    b.graph_mut(g).nodes.push(n);
                    continue;
                };
                let inst = instance(&p).ok_or_else(|| {
                    AdError(format!(
                        "no definition of `{}` to differentiate it through",
                        p.name
                    ))
                })?;
                if falls_back(&inst, &p.name) {
                    b.graph_mut(g).nodes.push(n);
                    continue;
                }
                let root = inst.root();
                let params = inst.graph(root).params.clone();
                let args: Vec<NodeId> = b.inputs(n)[1..].to_vec();
                if args.len() != params.len() {
                    return Err(AdError(format!(
                        "`{}` takes {} inputs but is given {}",
                        p.name,
                        params.len(),
                        args.len()
                    )));
                }
                let mut map: HashMap<NodeId, NodeId> = params.into_iter().zip(args).collect();
                let before = b.nodes.len();
                let copied = copy_graph_into(&inst, root, &mut b, g, &mut map, false)?;
                // The definition's operations stand where the call was (their
                // own spans are of the definitions' text).
                let span = b.node(n).span;
                for node in &mut b.nodes[before..] {
                    node.span = span;
                }
                let out = copied
                    .output
                    .ok_or_else(|| AdError(format!("composite `{}` returns nothing", p.name)))?;
                replace.insert(n, out);
                changed = true;
            }
            replace_uses(&mut b, &replace);
        }
        if !changed {
            return Ok((b, any));
        }
        any = true;
    }
    Err(AdError(
        "composite primitives that expand into each other without end".into(),
    ))
}
