//! The constant paddings' gradients: `_PadGrad`, the unpadded box of the
//! sensitivity, and its own gradient `_Pad`, a zero padding. (The mirrored
//! and edge paddings' gradients are MindSpore's backward primitives; the
//! helpers in those modes, which only each other's gradients make, are
//! written as them: `MirrorPad(Grad)` and `PadV3(Grad)`.)

use ir::{AttrValue, NodeId, PrimRef};

use super::{ints, Call, Emit};

pub(super) fn lower(e: &mut Emit, c: &Call) -> Option<NodeId> {
    match c.name() {
        "_PadGrad" => pad_grad(e, c.args[0], c.shape(1)?.len(), c.p)
            .or_else(|| crop_grad(e, c.args[0], c.dtype(0)?, c.p))
            .or_else(|| mirrored(e, c, c.shape(1)?.len(), true)),
        "_Pad" => zero_pad(e, c.args[0], c.shape(0)?.len(), c.p)
            .or_else(|| mirrored(e, c, c.shape(0)?.len(), false)),
        _ => None,
    }
}

/// The paddings of a `_Pad`/`_PadGrad` in `mode` (constant when it says
/// none) on a rank-`rank` tensor: `(before, after)` pairs, the last dimension
/// first, none negative (no crop).
fn growing_pads(p: &PrimRef, mode: &str, rank: usize) -> Option<Vec<i64>> {
    let own = p
        .attr("mode")
        .and_then(AttrValue::as_str)
        .unwrap_or("constant");
    let pads = p.attr("paddings")?.as_ints()?;
    let fits = own == mode
        && pads.len() % 2 == 0
        && pads.len() / 2 <= rank
        && pads.iter().all(|&v| v >= 0);
    fits.then(|| pads.to_vec())
}

/// `_PadGrad(grad, like, paddings, mode)` of a constant padding: the
/// unpadded box of `grad`, a `StridedSlice` (ends counted from the end, so
/// sizes may be symbolic). Other modes (mirrored positions summed) are left.
fn pad_grad(e: &mut Emit, grad: NodeId, rank: usize, p: &PrimRef) -> Option<NodeId> {
    let pads = growing_pads(p, "constant", rank)?;
    let rank = rank as i64;
    let (mut begin, mut end) = (vec![0; rank as usize], vec![0; rank as usize]);
    let (mut begin_mask, mut end_mask) = ((1i64 << rank) - 1, (1i64 << rank) - 1);
    // `(before, after)` pairs, the last dimension first.
    for (i, pair) in pads.chunks(2).enumerate() {
        let d = rank - 1 - i as i64;
        let (before, after) = (pair[0], pair[1]);
        if before > 0 {
            begin[d as usize] = before;
            begin_mask &= !(1 << d);
        }
        if after > 0 {
            end[d as usize] = -after;
            end_mask &= !(1 << d);
        }
    }
    Some(e.prim(
        "StridedSlice",
        vec![
            ("begin", ints(&begin)),
            ("end", ints(&end)),
            ("strides", ints(&vec![1; rank as usize])),
            ("begin_mask", AttrValue::Int(begin_mask)),
            ("end_mask", AttrValue::Int(end_mask)),
        ],
        &[grad],
    ))
}

/// `_Pad(x, paddings, mode)` of a constant padding (the gradient of a
/// constant `_PadGrad`): MindSpore's `Pad` with zeros, its `(before, after)`
/// pairs listed from the first dimension. Negative paddings (crops) and
/// other modes are left.
fn zero_pad(e: &mut Emit, x: NodeId, rank: usize, p: &PrimRef) -> Option<NodeId> {
    let pads = growing_pads(p, "constant", rank)?;
    let mut pairs = vec![AttrValue::Tuple(vec![AttrValue::Int(0), AttrValue::Int(0)]); rank];
    for (i, pair) in pads.chunks(2).enumerate() {
        pairs[rank - 1 - i] = ints(pair);
    }
    Some(e.prim("Pad", vec![("paddings", AttrValue::Tuple(pairs))], &[x]))
}

/// `_PadGrad` of a constant padding that crops somewhere (a negative
/// padding, which `pad_grad` leaves): MindSpore's bprop of PadV3's constant
/// mode, a constant `PadV3` of the gradient by the negated paddings (what
/// was padded is cropped, what was cropped padded with zeros).
fn crop_grad(e: &mut Emit, grad: NodeId, dtype: ir::DType, p: &PrimRef) -> Option<NodeId> {
    let mode = p
        .attr("mode")
        .and_then(AttrValue::as_str)
        .unwrap_or("constant");
    let pads = p.attr("paddings")?.as_ints()?;
    if mode != "constant" || pads.len() % 2 != 0 || !dtype.is_float() {
        return None;
    }
    let negated: Vec<i64> = pads.iter().map(|v| -v).collect();
    let zero = e.number(dtype, 0.0);
    Some(e.prim(
        "PadV3",
        vec![
            ("paddings", ints(&negated)),
            ("mode", AttrValue::Str("constant".into())),
        ],
        &[grad, zero],
    ))
}

/// `_Pad` (`grad` false) or `_PadGrad` (`grad` true) in a mode other than
/// the constant: reflect and symmetric are `MirrorPad` and `MirrorPadGrad`
/// (one `(before, after)` pair per dimension, from the first), edge and
/// circular `PadV3` and `PadV3Grad` (MindSpore's flat order, the last
/// dimension first, as the helpers').
fn mirrored(e: &mut Emit, c: &Call, rank: usize, grad: bool) -> Option<NodeId> {
    let x = c.args[0];
    let mode = c.attr("mode")?.as_str()?;
    let pads = growing_pads(c.p, mode, rank)?;
    match mode {
        "reflect" | "symmetric" => {
            let mut pairs = vec![ints(&[0, 0]); rank];
            for (i, pair) in pads.chunks(2).enumerate() {
                pairs[rank - 1 - i] = ints(pair);
            }
            let attrs = vec![
                ("paddings", AttrValue::Tuple(pairs)),
                ("mode", AttrValue::Str(mode.to_uppercase())),
            ];
            let name = if grad { "MirrorPadGrad" } else { "MirrorPad" };
            Some(e.prim(name, attrs, &[x]))
        }
        "edge" | "circular" => {
            let attrs = vec![
                ("paddings", ints(&pads)),
                ("mode", AttrValue::Str(mode.into())),
            ];
            if grad {
                Some(e.prim("PadV3Grad", attrs, &[x]))
            } else {
                let zero = e.number(c.dtype(0)?, 0.0);
                Some(e.prim("PadV3", attrs, &[x, zero]))
            }
        }
        _ => None,
    }
}
