//! Before `J`: a nested target is lifted into a top-level body of its own, and
//! `Partial` applications become closures (`Partial(f, a)` is the lambda
//! `fn(x) => f(a, x)` capturing `f` and `a`), so that every function value is a
//! graph, a primitive, or a closure.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use ir::{Body, GraphId, GraphOrigin, NodeId, NodeKind, Value};

use crate::absint::{Analysis, FnRef, AV};
use crate::builder::{copy_graph_into, replace_all_uses};
use crate::world::{closure_fvs, Item, World};
use crate::{AdError, GradTarget};

/// The top-level item to differentiate: the target's own, or a new one holding
/// the nested target graph (which must capture nothing).
pub fn target_item(
    world: &mut World,
    target: &GradTarget,
    taken: &mut HashSet<String>,
) -> Result<Item, AdError> {
    let body = world
        .body(&target.item)
        .cloned()
        .ok_or_else(|| AdError(format!("no graph `{}`", target.item)))?;
    let item = world.item(&target.item).expect("present");
    if target.graph == body.root() {
        return Ok(item);
    }
    if target.graph.0 as usize >= body.graphs.len() {
        return Err(AdError(format!(
            "`{}` has no nested graph {}",
            target.item, target.graph.0
        )));
    }
    let sub = body.graph(target.graph);
    if !closure_fvs(&body, target.graph).is_empty() {
        return Err(AdError(format!(
            "`{}` captures values of the graph it is nested in; differentiate the enclosing graph, \
             or pass those values as parameters",
            sub.name
        )));
    }
    let base: String = format!("{}_{}", target.item, sub.name)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut name = base.clone();
    let mut k = 1;
    while taken.contains(&name) || world.body(&name).is_some() {
        name = format!("{base}_{k}");
        k += 1;
    }
    taken.insert(name.clone());
    let mut dst = Body::default();
    let root = dst.add_graph(name.clone(), None, GraphOrigin::Named);
    dst.graph_mut(root).ret_annotation = sub.ret_annotation.clone();
    let mut map = HashMap::new();
    for &p in &sub.params {
        let np = dst.add_param(root, body.node(p).name.clone().unwrap_or_default(), None);
        dst.node_mut(np).annotation = body.node(p).annotation.clone();
        map.insert(p, np);
    }
    let copied = copy_graph_into(&body, target.graph, &mut dst, root, &mut map, false)?;
    dst.graph_mut(root).output = copied.output;
    let item: Item = Arc::from(name.as_str());
    world.insert(item.clone(), Arc::new(dst));
    Ok(item)
}

/// How many arguments a function value takes, when every function it may be agrees.
fn arity(world: &World, an: &Analysis, f: &FnRef, depth: usize) -> Option<usize> {
    if depth > 16 {
        return None;
    }
    match f {
        FnRef::Graph(it, g) => Some(world.body(it)?.graph(*g).params.len()),
        FnRef::Prim(p) => {
            let op = ops::lookup(&p.name)?;
            (!op.variadic).then(|| op.input_count())
        }
        FnRef::Partial(it, n) => {
            let body = world.body(it)?;
            let inputs = body.inputs(*n);
            let inner = an.value(world, it, *inputs.get(1)?);
            let total = value_arity(world, an, &inner, depth + 1)?;
            total.checked_sub(inputs.len() - 2)
        }
    }
}

fn value_arity(world: &World, an: &Analysis, v: &AV, depth: usize) -> Option<usize> {
    let AV::Funcs(fs) = v else { return None };
    let mut result = None;
    for f in fs {
        let a = arity(world, an, f, depth)?;
        if result.is_some_and(|r| r != a) {
            return None;
        }
        result = Some(a);
    }
    result
}

/// Rewrites every `Partial` in the bodies the analysis reached into a closure.
/// Returns whether anything changed.
pub fn convert_partials(world: &mut World, an: &Analysis) -> Result<bool, AdError> {
    let mut items: Vec<Item> = Vec::new();
    for (it, _) in &an.reached {
        if !items.contains(it) {
            items.push(it.clone());
        }
    }
    let mut changed = false;
    for item in items {
        let body = world.bodies[&item].clone();
        let partials: Vec<(GraphId, NodeId)> = body
            .graph_ids()
            .flat_map(|g| body.graph(g).nodes.iter().map(move |&n| (g, n)))
            .filter(|&(_, n)| body.called_prim(n).is_some_and(|p| p.name == "Partial"))
            .collect();
        if partials.is_empty() {
            continue;
        }
        let mut new = (*body).clone();
        for (g, n) in partials {
            let inputs = body.inputs(n).to_vec();
            if inputs.len() < 2 {
                return Err(AdError("`Partial` needs a function".into()));
            }
            let f = inputs[1];
            let bound = &inputs[2..];
            let replacement = if bound.is_empty() {
                f
            } else {
                let total = value_arity(world, an, &an.value(world, &item, f), 0).ok_or_else(|| {
                    AdError(
                        "cannot differentiate `Partial` of a function whose number of parameters is unknown"
                            .into(),
                    )
                })?;
                let rest = total.checked_sub(bound.len()).ok_or_else(|| {
                    AdError("`Partial` binds more arguments than the function takes".into())
                })?;
                let name = format!("{}_partial", body.graph(g).name);
                let h = new.add_graph(name, Some(g), GraphOrigin::Lambda);
                let mut call = vec![f];
                call.extend_from_slice(bound);
                for i in 0..rest {
                    call.push(new.add_param(h, format!("x{i}"), None));
                }
                let out = new.add_apply(h, call, None);
                new.graph_mut(h).output = Some(out);
                new.add_const(Value::Graph(h), None)
            };
            replace_all_uses(&mut new, n, replacement);
            new.graph_mut(g).nodes.retain(|&x| x != n);
            changed = true;
        }
        // A Partial node replaced by another Partial's closure keeps working:
        // its uses were rewritten in place.
        debug_assert!(new
            .nodes
            .iter()
            .all(|node| !matches!(&node.kind, NodeKind::Apply(i) if i.is_empty())));
        world.insert(item.clone(), Arc::new(new));
    }
    Ok(changed)
}
