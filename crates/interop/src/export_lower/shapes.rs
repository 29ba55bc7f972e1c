//! The shape helpers, written with the shapes inference knows: a
//! broadcast's gradient summed back (`_SumToShapeOf`), a reduction's put back
//! (`_BroadcastToShapeOf`), `_ReshapeLike` and `_CastLike`.

use ir::{AttrValue, Dim, NodeId, PrimRef};

use super::{ints, Call, Emit};

pub(super) fn lower(e: &mut Emit, c: &Call) -> Option<NodeId> {
    let args = c.args;
    match c.name() {
        "_SumToShapeOf" => sum_to_shape(e, args[0], &c.shape(0)?, &c.shape(1)?),
        "_BroadcastToShapeOf" => Some(broadcast_like(e, args[0], args[1], c.shape(1)?.len(), c.p)),
        "_CastLike" => {
            // The gradient of a cast whose input's dtype the transformation
            // did not know: inference knows it.
            let d = c.dtype(1)?;
            let cast = e.prim("Cast", vec![("dtype", AttrValue::DType(d))], &[args[0]]);
            if d.is_float() {
                Some(cast)
            } else {
                // No gradient reaches an integer: zeros of its dtype.
                Some(e.prim("ZerosLike", Vec::new(), &[cast]))
            }
        }
        "_ReshapeLike" => reshape_like(e, args[0], &c.shape(0)?, &c.shape(1)?),
        _ => None,
    }
}

/// `_SumToShapeOf(g, like)`: `g` summed over the axes `like` was broadcast
/// along: the leading ones, then those where `like` has size 1.
fn sum_to_shape(e: &mut Emit, g: NodeId, gs: &[Dim], like: &[Dim]) -> Option<NodeId> {
    let lead = gs.len().checked_sub(like.len())?;
    let mut out = g;
    if lead > 0 {
        let axes: Vec<i64> = (0..lead as i64).collect();
        out = e.prim(
            "ReduceSum",
            vec![("axis", ints(&axes)), ("keep_dims", AttrValue::Bool(false))],
            &[out],
        );
    }
    let mut axes = Vec::new();
    for (i, d) in like.iter().enumerate() {
        match (d, &gs[lead + i]) {
            (Dim::Known(1), Dim::Known(1)) => {}
            (Dim::Known(1), _) => axes.push(i as i64),
            (a, b) if a == b => {}
            (Dim::Known(_), Dim::Known(_)) => return None,
            // A size that may or may not be 1: not decidable statically.
            _ => return None,
        }
    }
    if !axes.is_empty() {
        out = e.prim(
            "ReduceSum",
            vec![("axis", ints(&axes)), ("keep_dims", AttrValue::Bool(true))],
            &[out],
        );
    }
    Some(out)
}

/// `_BroadcastToShapeOf(grad, like, axis, keep_dims, mean)`: the reduction's
/// gradient put back on `like`'s shape (the reduced axes restored, then
/// broadcast by adding `like`'s zeros, which works for symbolic sizes too).
fn broadcast_like(e: &mut Emit, grad: NodeId, like: NodeId, rank: usize, p: &PrimRef) -> NodeId {
    let r = rank as i64;
    let mut axes: Vec<i64> = match p.attr("axis").and_then(AttrValue::as_ints) {
        Some(a) if !a.is_empty() => a.iter().map(|&x| if x < 0 { x + r } else { x }).collect(),
        _ => (0..r).collect(),
    };
    axes.sort();
    axes.dedup();
    let keep = p
        .attr("keep_dims")
        .and_then(AttrValue::as_bool)
        .unwrap_or(false);
    let mut out = grad;
    if !keep {
        for &a in &axes {
            out = e.prim("ExpandDims", vec![("axis", AttrValue::Int(a))], &[out]);
        }
    }
    let zeros = e.prim("ZerosLike", Vec::new(), &[like]);
    out = e.prim("Add", Vec::new(), &[zeros, out]);
    if p.attr("mean").and_then(AttrValue::as_bool).unwrap_or(false) {
        let ones = e.prim("OnesLike", Vec::new(), &[like]);
        let count = e.prim(
            "ReduceSum",
            vec![("axis", ints(&axes)), ("keep_dims", AttrValue::Bool(true))],
            &[ones],
        );
        out = e.prim("RealDiv", Vec::new(), &[out, count]);
    }
    out
}

/// `_ReshapeLike(x, like)`: `x` in `like`'s shape. One size not known
/// statically (a batch `B`) is MindSpore's -1: one program for every size.
/// With more (`[B, 1, H, W]` back to `[B, H, W]`, ExpandDims' gradient), the
/// shapes must differ by sizes of 1 only: a `Squeeze` of `x`'s and an
/// `ExpandDims` for each of `like`'s.
fn reshape_like(e: &mut Emit, x: NodeId, from: &[Dim], like: &[Dim]) -> Option<NodeId> {
    if like.iter().filter(|d| d.known().is_none()).count() <= 1 {
        let sizes: Vec<i64> = like.iter().map(|d| d.known().unwrap_or(-1)).collect();
        return Some(e.prim("Reshape", vec![("shape", ints(&sizes))], &[x]));
    }
    let one = |d: &&Dim| **d == Dim::Known(1);
    let rest = |dims: &[Dim]| -> Vec<Dim> { dims.iter().filter(|d| !one(d)).cloned().collect() };
    // Two unknown sizes (`?`) may differ: named ones (`B`) are equal.
    if from.iter().chain(like).any(|d| *d == Dim::Unknown) || rest(from) != rest(like) {
        return None;
    }
    let ones: Vec<i64> = (0..from.len() as i64)
        .filter(|&a| from[a as usize] == Dim::Known(1))
        .collect();
    let mut out = x;
    if !ones.is_empty() {
        out = e.prim("Squeeze", vec![("axis", ints(&ones))], &[out]);
    }
    for (a, d) in like.iter().enumerate() {
        if *d == Dim::Known(1) {
            out = e.prim(
                "ExpandDims",
                vec![("axis", AttrValue::Int(a as i64))],
                &[out],
            );
        }
    }
    Some(out)
}
