//! Before `J`: a nested target is lifted into a top-level body of its own, and
//! `Partial` applications become closures (`Partial(f, a)` is the lambda
//! `fn(x) => f(a, x)` capturing `f` and `a`), so that every function value is a
//! graph, a primitive, or a closure.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use ir::{Body, GraphId, GraphOrigin, NodeId, NodeKind, Value};

use crate::absint::{Analysis, FnRef, AV};
use crate::builder::replace_all_uses;
use crate::world::{closure_fvs, Item, World};
use crate::{AdError, GradTarget};

/// The top-level item to differentiate, and how many of its parameters are
/// captured values: the target's own item, or a new one holding the nested
/// target graph (see [`lift`]).
pub fn target_item(
    world: &mut World,
    target: &GradTarget,
    taken: &mut HashSet<String>,
) -> Result<(Item, usize), AdError> {
    let body = world
        .body(&target.item)
        .cloned()
        .ok_or_else(|| AdError(format!("no graph `{}`", target.item)))?;
    let item = world.item(&target.item).expect("present");
    if target.graph == body.root() {
        return Ok((item, 0));
    }
    if target.graph.0 as usize >= body.graphs.len() {
        return Err(AdError(format!(
            "`{}` has no nested graph {}",
            target.item, target.graph.0
        )));
    }
    let (lifted, caps) = lift(world, &item, target.graph, taken)?;
    Ok((lifted, caps.len()))
}

/// The values a nested graph captures, in the order a lifted copy of it
/// takes them as extra parameters (see [`lift`]): [`closure_fvs`] order.
pub fn captured_values(body: &Body, graph: GraphId) -> Vec<NodeId> {
    closure_fvs(body, graph)
}

/// Lifts nested graph `graph` of `item` into a new top-level item that takes
/// its parameters, then one parameter per value it captures (in
/// [`captured_values`] order, returned too). The graphs it refers to that
/// are not nested in it (sibling closures) come along, nested in the new
/// root; what they capture is among those values. A graph that refers to a
/// graph enclosing it (recursion through its maker) cannot be lifted.
pub fn lift(
    world: &mut World,
    item: &Item,
    graph: GraphId,
    taken: &mut HashSet<String>,
) -> Result<(Item, Vec<NodeId>), AdError> {
    let body = world.bodies[item].clone();
    let caps = closure_fvs(&body, graph);
    let sub = body.graph(graph);
    // Graphs referred to from the lifted subtree (transitively) must not
    // enclose it.
    let mut stack = vec![graph];
    let mut seen = HashSet::new();
    while let Some(g) = stack.pop() {
        if !seen.insert(g) {
            continue;
        }
        for inner in body.graph_ids().filter(|&h| body.is_within(h, g)) {
            let fg = body.graph(inner);
            let uses = fg
                .nodes
                .iter()
                .flat_map(|&n| body.inputs(n).iter().copied())
                .chain(fg.output);
            for u in uses {
                if let NodeKind::Const(Value::Graph(h)) = &body.node(u).kind {
                    if *h != graph && body.is_within(graph, *h) {
                        return Err(AdError(format!(
                            "`{}` refers to `{}`, a graph enclosing it: differentiate the enclosing graph instead",
                            sub.name,
                            body.graph(*h).name
                        )));
                    }
                    stack.push(*h);
                }
            }
        }
    }
    let base: String = format!("{}_{}", item, sub.name)
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

    // The new body: graph 0 is the lifted root; the old graphs follow,
    // shifted by one, `graph` itself left empty. The old root and the
    // graphs enclosing `graph` are dead once their values are parameters.
    let shift = |g: GraphId| {
        if g == graph {
            GraphId(0)
        } else {
            GraphId(g.0 + 1)
        }
    };
    let mut dst = Body::default();
    let root = dst.add_graph(name.clone(), None, GraphOrigin::Named);
    dst.graph_mut(root).ret_annotation = sub.ret_annotation.clone();
    for g in body.graph_ids() {
        let old = body.graph(g);
        let parent = match old.parent {
            None => Some(root),
            Some(p) if p == graph => Some(root),
            // A sibling of the lifted graph or of one enclosing it: what it
            // captures from there is a parameter of the new root now.
            Some(p) if body.is_within(graph, p) => Some(root),
            Some(p) => Some(shift(p)),
        };
        let id = dst.add_graph(old.name.clone(), parent, old.origin);
        let new = dst.graph_mut(id);
        if g != graph {
            new.params = old.params.clone();
            new.nodes = old.nodes.clone();
            new.output = old.output;
            new.ret_annotation = old.ret_annotation.clone();
        }
    }
    dst.nodes = body.nodes.clone();
    for node in &mut dst.nodes {
        if let Some(g) = node.graph {
            node.graph = Some(shift(g));
        }
        if let NodeKind::Const(Value::Graph(h)) = &mut node.kind {
            *h = shift(*h);
        }
    }
    {
        let r = dst.graph_mut(root);
        r.params = sub.params.clone();
        r.nodes = sub.nodes.clone();
        r.output = sub.output;
    }
    let mut repl = HashMap::new();
    for (j, &c) in caps.iter().enumerate() {
        let label = body
            .node(c)
            .name
            .clone()
            .unwrap_or_else(|| format!("captured{j}"));
        let p = dst.add_param(root, label, None);
        dst.node_mut(p).annotation = body.node(c).annotation.clone();
        repl.insert(c, p);
    }
    crate::builder::replace_uses(&mut dst, &repl);
    crate::passes::dce::run(&mut dst);
    let lifted: Item = Arc::from(name.as_str());
    world.insert(lifted.clone(), Arc::new(dst));
    Ok((lifted, caps))
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
