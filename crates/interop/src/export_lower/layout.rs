//! PixelShuffle's gradient, `_PixelShuffleGrad` (MindSpore has no backward
//! primitive of PixelShuffle, nor a PixelUnshuffle): the inverse
//! rearrangement written as MindSpore's own `pixel_shuffle` is, a `Reshape`,
//! a `Transpose` and a `Reshape`.

use ir::{AttrValue, Dim, NodeId};

use super::{ints, Call, Emit};

pub(super) fn lower(e: &mut Emit, c: &Call) -> Option<NodeId> {
    match c.name() {
        "_PixelShuffleGrad" => {
            let r = c.attr("upscale_factor")?.as_int()?;
            pixel_unshuffle(e, c.args[0], &c.shape(0)?, r)
        }
        _ => None,
    }
}

/// `grad` of shape `(*, C, H·r, W·r)` back to `(*, C·r², H, W)`: element
/// `[.., c, h·r + i, w·r + j]` goes to `[.., c·r² + i·r + j, h, w]`. The
/// leading dimensions are flattened into one (`-1`); `C`, `H·r`, `W·r` must
/// be known, and at most one leading size unknown.
fn pixel_unshuffle(e: &mut Emit, grad: NodeId, dims: &[Dim], r: i64) -> Option<NodeId> {
    let k = dims.len();
    if k < 3 || r < 1 {
        return None;
    }
    let (c, hr, wr) = (
        dims[k - 3].known()?,
        dims[k - 2].known()?,
        dims[k - 1].known()?,
    );
    if hr % r != 0 || wr % r != 0 {
        return None;
    }
    let (h, w) = (hr / r, wr / r);
    let lead = &dims[..k - 3];
    if lead.iter().filter(|d| d.known().is_none()).count() > 1 {
        return None;
    }
    let blocks = e.prim(
        "Reshape",
        vec![("shape", ints(&[-1, c, h, r, w, r]))],
        &[grad],
    );
    let moved = e.prim(
        "Transpose",
        vec![("perm", ints(&[0, 1, 3, 5, 2, 4]))],
        &[blocks],
    );
    let mut out: Vec<i64> = lead.iter().map(|d| d.known().unwrap_or(-1)).collect();
    out.extend([c * r * r, h, w]);
    Some(e.prim(
        "Reshape",
        vec![(
            "shape",
            AttrValue::Tuple(out.into_iter().map(AttrValue::Int).collect()),
        )],
        &[moved],
    ))
}
