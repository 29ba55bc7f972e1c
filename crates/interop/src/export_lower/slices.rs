//! Gradients that are a box of the sensitivity, one `StridedSlice`:
//! Concat's (each element's part).

use ir::{AbsVal, AttrValue, Dim, NodeId, PrimRef};

use super::{ints, ranked, Call, Emit};

pub(super) fn lower(e: &mut Emit, c: &Call) -> Option<NodeId> {
    match c.name() {
        "_ConcatGrad" => {
            let parts: Vec<Vec<Dim>> = match c.values(1) {
                [AbsVal::Tuple(items)] => items
                    .iter()
                    .map(|v| ranked(std::slice::from_ref(v)))
                    .collect::<Option<_>>()?,
                _ => return None,
            };
            concat_grad(e, c.args[0], &parts, c.p)
        }
        _ => None,
    }
}

/// `_ConcatGrad(grad, tensors, axis, index)`: element `index`'s part of
/// `grad`, a `StridedSlice` along `axis` (every other axis whole, by the
/// masks, so other sizes may be symbolic) at the offset the sizes of the
/// elements before it give; those sizes along `axis` must be known.
fn concat_grad(e: &mut Emit, grad: NodeId, parts: &[Vec<Dim>], p: &PrimRef) -> Option<NodeId> {
    let index = usize::try_from(p.attr("index")?.as_int()?).ok()?;
    let rank = parts.first()?.len() as i64;
    let axis = p.attr("axis").and_then(AttrValue::as_int).unwrap_or(0);
    let axis = if axis < 0 { axis + rank } else { axis };
    if !(0..rank).contains(&axis) || index >= parts.len() {
        return None;
    }
    let size = |k: usize| parts[k].get(axis as usize).and_then(Dim::known);
    let mut offset = 0;
    for k in 0..index {
        offset += size(k)?;
    }
    let end = offset + size(index)?;
    let at_axis =
        |v: i64| -> Vec<i64> { (0..rank).map(|i| if i == axis { v } else { 0 }).collect() };
    let whole = ((1i64 << rank) - 1) & !(1i64 << axis);
    Some(e.prim(
        "StridedSlice",
        vec![
            ("begin", ints(&at_axis(offset))),
            ("end", ints(&at_axis(end))),
            ("strides", ints(&vec![1; rank as usize])),
            ("begin_mask", AttrValue::Int(whole)),
            ("end_mask", AttrValue::Int(whole)),
        ],
        &[grad],
    ))
}
