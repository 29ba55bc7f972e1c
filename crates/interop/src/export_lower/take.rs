//! Take's gradient, `_TakeGrad(x, index, grad)` (MindSpore has no backward
//! primitive of Take, and its CPU no Take kernel): `grad` added into zeros
//! shaped like `x` at the flat positions `index` names, negative ones
//! counted from the end: `FloorMod(index, numel)`, then one
//! `TensorScatterAdd` into the flattened zeros (repeated positions
//! accumulate).

use ir::NodeId;

use super::{ints, Call, Emit};

pub(super) fn lower(e: &mut Emit, c: &Call) -> Option<NodeId> {
    match c.name() {
        "_TakeGrad" => take_grad(e, c),
        _ => None,
    }
}

fn take_grad(e: &mut Emit, c: &Call) -> Option<NodeId> {
    let &[x, index, grad] = c.args else {
        return None;
    };
    // `x`'s size must be known: the wrap of negative positions.
    let numel: i64 = c
        .shape(0)?
        .iter()
        .map(|d| d.known())
        .product::<Option<i64>>()?;
    let dtype = c.dtype(1).filter(|d| !d.is_float())?;
    let n = e.number(dtype, numel as f64);
    let wrapped = e.prim("FloorMod", Vec::new(), &[index, n]);
    let at = e.prim("Reshape", vec![("shape", ints(&[-1, 1]))], &[wrapped]);
    let zeros = e.prim("ZerosLike", Vec::new(), &[x]);
    let flat = e.prim("Reshape", vec![("shape", ints(&[-1]))], &[zeros]);
    let updates = e.prim("Reshape", vec![("shape", ints(&[-1]))], &[grad]);
    let sum = e.prim("TensorScatterAdd", Vec::new(), &[flat, at, updates]);
    Some(e.prim("_ReshapeLike", Vec::new(), &[sum, x]))
}
