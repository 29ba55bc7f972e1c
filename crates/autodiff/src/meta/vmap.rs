//! `vmap(f, in_axes, out_axes)` as a transformation of the IR (spec §7).
//!
//! The entry `vmap_<f>` takes `f`'s arguments with their batch axes (and,
//! for a closure, the values it captures, unbatched) and returns `f`'s
//! outputs stacked along `out_axes`. It is made in one of two ways:
//! - *batched* ([`super::batch`]): every node of `f`'s body is rewritten by
//!   its primitive's batching rule (the op record's category and the
//!   override table of `ops::batch`), so the batch runs as one call per
//!   primitive; a primitive without a rule runs as a per-example loop of
//!   that primitive alone, and a call of another graph calls that graph's
//!   batched form;
//! - *per example*, where `f`'s body has what the rules do not cover
//!   (closures, an `if` on a condition every example shares): the
//!   arguments are split with
//!   `Unstack`, `f` is called once per example and the outputs are put
//!   together with `Stack`. This is always right; it is slower.
//!
//! Either way the entry is ordinary IR: `grad(vmap(f))` differentiates it,
//! `vmap(grad(f))` maps a derivative, `vmap(vmap(f))` maps a map.

use ir::batching::unbatch;
use ir::{BatchAxes, Dim};

use super::*;

/// What is known of a `vmap` call: one example's argument values and the
/// batch size.
pub(super) struct Examples {
    pub values: Vec<AV>,
    pub size: i64,
}

/// One example of each mapped argument, and the batch size (which every
/// mapped argument must agree on, and which must be known).
pub(super) fn examples(
    given: &[AV],
    k: usize,
    in_axes: &BatchAxes,
    item: &str,
) -> Result<Examples, AdError> {
    if let BatchAxes::Each(axes) = in_axes {
        if axes.len() != k {
            return Err(AdError(format!(
                "`in_axes` gives {} axes, but `{item}` takes {k} arguments",
                axes.len()
            )));
        }
    }
    let mut size: Option<i64> = None;
    let mut values = given.to_vec();
    for i in 0..k {
        let Some(axis) = in_axes.get(i) else { continue };
        let (x, d) = unbatch(&given[i].to_absval(), axis)
            .map_err(|e| AdError(format!("`vmap` cannot map argument {i} of `{item}`: {e}")))?;
        if let Dim::Known(d) = d {
            match size {
                None => size = Some(d),
                Some(s) if s != d => {
                    return Err(AdError(format!(
                        "`vmap` maps over batches of {s} examples, but argument {i} of `{item}` has {d} along axis {axis}"
                    )))
                }
                _ => {}
            }
        }
        values[i] = AV::from_absval(&x);
    }
    let size = size.ok_or_else(|| {
        AdError(format!(
            "`vmap` of `{item}` needs the batch size, which is not known here (no mapped argument has a known size along its axis)"
        ))
    })?;
    Ok(Examples { values, size })
}

/// The examples of `x` (like `v` once batched) along `axis`: `Unstack`, or
/// per item of a tuple.
fn split(b: &mut Body, g: GraphId, x: NodeId, v: &AV, axis: i64, n: i64) -> Vec<NodeId> {
    match v {
        AV::Tuple(items) => {
            let parts: Vec<Vec<NodeId>> = items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let xi = tuple_get(b, g, x, i);
                    split(b, g, xi, item, axis, n)
                })
                .collect();
            (0..n as usize)
                .map(|e| {
                    let items: Vec<NodeId> = parts.iter().map(|p| p[e]).collect();
                    make_tuple(b, g, &items)
                })
                .collect()
        }
        _ => {
            let p = crate::builder::prim_ref("Unstack", &[("axis", ir::AttrValue::Int(axis))]);
            let t = b.add_prim_call(g, p, &[x], None);
            (0..n as usize).map(|e| tuple_get(b, g, t, e)).collect()
        }
    }
}

/// The examples' outputs `ys` (each like `v`) put together along `axis`
/// (`none`: the first example's, which must not depend on the batch).
fn stack(b: &mut Body, g: GraphId, ys: &[NodeId], v: &AV, axis: Option<i64>) -> NodeId {
    let Some(axis) = axis else { return ys[0] };
    match v {
        AV::Tuple(items) => {
            let parts: Vec<NodeId> = (0..items.len())
                .map(|i| {
                    let yi: Vec<NodeId> = ys.iter().map(|&y| tuple_get(b, g, y, i)).collect();
                    stack(b, g, &yi, &items[i], Some(axis))
                })
                .collect();
            make_tuple(b, g, &parts)
        }
        _ => {
            let t = make_tuple(b, g, ys);
            let p = crate::builder::prim_ref("Stack", &[("axis", ir::AttrValue::Int(axis))]);
            b.add_prim_call(g, p, &[t], None)
        }
    }
}

/// [`stack`] for the whole output, with `out_axes` per output element.
pub(super) fn stack_outputs(
    b: &mut Body,
    g: GraphId,
    ys: &[NodeId],
    out: &AV,
    out_axes: &BatchAxes,
) -> Result<NodeId, AdError> {
    match (out, out_axes) {
        (AV::Tuple(items), BatchAxes::Each(axes)) => {
            if axes.len() != items.len() {
                return Err(AdError(format!(
                    "`out_axes` gives {} axes for an output of {} elements",
                    axes.len(),
                    items.len()
                )));
            }
            let parts: Vec<NodeId> = (0..items.len())
                .map(|i| {
                    let yi: Vec<NodeId> = ys.iter().map(|&y| tuple_get(b, g, y, i)).collect();
                    stack(b, g, &yi, &items[i], axes[i])
                })
                .collect();
            Ok(make_tuple(b, g, &parts))
        }
        (_, BatchAxes::Each(_)) => Err(AdError(
            "`out_axes` is a tuple, but the mapped function's output is not".into(),
        )),
        _ => Ok(stack(b, g, ys, out, out_axes.get(0))),
    }
}

impl Cx {
    /// `vmap(f, in_axes, out_axes)` of top-level `item` (its first
    /// `visible` parameters its own, the rest captured values).
    pub(super) fn vmap(
        &mut self,
        item: &Item,
        visible: usize,
        in_axes: &BatchAxes,
        out_axes: &BatchAxes,
        args: Option<&[AbsVal]>,
    ) -> Result<Derived, AdError> {
        let body = self.world.bodies[item].clone();
        let root = body.graph(body.root()).clone();
        let k = visible.min(root.params.len());
        let given = self.param_values(item, args);
        let ex = examples(&given, k, in_axes, item)?;
        let an = absint::analyze(&self.world, item, GraphId(0), &ex.values);
        let out = an.ret(item, GraphId(0));
        if let Some(d) = super::batch::batched(self, item, k, in_axes, out_axes, &ex, &an, &out)? {
            return Ok(d);
        }
        let name = self.fresh(&format!("vmap_{item}"));
        let mut b = Body::default();
        let g = b.add_graph(name.clone(), None, GraphOrigin::Generated);
        let params: Vec<NodeId> = root
            .params
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let pname = body.node(p).name.clone().unwrap_or_else(|| format!("x{i}"));
                b.add_param(g, pname, None)
            })
            .collect();
        let parts: Vec<Option<Vec<NodeId>>> = (0..k)
            .map(|i| {
                in_axes
                    .get(i)
                    .map(|axis| split(&mut b, g, params[i], &ex.values[i], axis, ex.size))
            })
            .collect();
        let f = b.add_const(Value::Global(item.to_string()), None);
        let ys: Vec<NodeId> = (0..ex.size as usize)
            .map(|e| {
                let mut call_args: Vec<NodeId> = (0..k)
                    .map(|i| parts[i].as_ref().map_or(params[i], |p| p[e]))
                    .collect();
                call_args.extend(&params[k..]);
                call(&mut b, g, f, &call_args)
            })
            .collect();
        let r = stack_outputs(&mut b, g, &ys, &out, out_axes)?;
        b.graph_mut(g).output = Some(r);
        self.add_item(&name, b.clone());
        self.generated.retain(|(n, _)| *n != name);
        Ok(Derived {
            entry: name.clone(),
            graphs: vec![(name, b)],
        })
    }
}
