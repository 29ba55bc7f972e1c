//! The max poolings' second-order helpers: `_PoolArgmaxGather(x, argmax)`
//! (the adjoint of a max pooling's gradient in its sensitivity: `x` at each
//! window's maximum), `_PoolArgmaxGrad(x_like, argmax, dout)` (its adjoint:
//! `dout` added at those cells) and `_MaxPool3DArgmax(x)` (where MaxPool3D's
//! maxima are). MindSpore's bprops of its backward primitives
//! (`MaxPool3DGradGrad`...) have no CPU kernels for most; these are written
//! with `GatherD` along the flattened planes, one `TensorScatterAdd`, and
//! `MaxPool3DWithArgmax`.

use ir::{AttrValue, Dim, NodeId};

use super::scatter::scatter_at_positions;
use super::{ints, Call, Emit};

pub(super) fn lower(e: &mut Emit, c: &Call) -> Option<NodeId> {
    match c.name() {
        "_PoolArgmaxGather" => gather(e, c),
        "_PoolArgmaxGrad" => scatter(e, c),
        "_MaxPool3DArgmax" => argmax3d(e, c),
        _ => None,
    }
}

/// The number of cells of a plane of the last `spatial` dimensions of
/// operand `k`'s shape, where known.
fn plane(c: &Call, k: usize, spatial: usize) -> Option<i64> {
    let dims = c.shape(k)?;
    let lead = dims.len().checked_sub(spatial)?;
    dims[lead..].iter().map(Dim::known).product()
}

fn spatial(c: &Call) -> Option<usize> {
    let n = c.attr("spatial").and_then(AttrValue::as_int).unwrap_or(2);
    usize::try_from(n).ok()
}

/// `x` and `argmax` as one row per plane, and the argmax's cells gathered
/// from `x`'s row.
fn gather_rows(e: &mut Emit, x: NodeId, argmax: NodeId, x_plane: i64, a_plane: i64) -> NodeId {
    let rows = e.prim("Reshape", vec![("shape", ints(&[-1, x_plane]))], &[x]);
    let at = e.prim("Reshape", vec![("shape", ints(&[-1, a_plane]))], &[argmax]);
    e.prim("GatherD", vec![("dim", AttrValue::Int(1))], &[rows, at])
}

/// `_PoolArgmaxGather(x, argmax)`: `GatherD` of `x`'s planes (rows) at the
/// argmax, shaped like `argmax`.
fn gather(e: &mut Emit, c: &Call) -> Option<NodeId> {
    let [x, argmax] = *c.args else {
        return None;
    };
    let sp = spatial(c)?;
    let (xp, ap) = (plane(c, 0, sp)?, plane(c, 1, sp)?);
    let picked = gather_rows(e, x, argmax, xp, ap);
    Some(e.prim("_ReshapeLike", Vec::new(), &[picked, argmax]))
}

/// `_PoolArgmaxGrad(x_like, argmax, dout)`: `dout` added into zeros shaped
/// like `x_like` at the flat positions the argmax picks from each plane.
fn scatter(e: &mut Emit, c: &Call) -> Option<NodeId> {
    let [like, argmax, dout] = *c.args else {
        return None;
    };
    let sp = spatial(c)?;
    let (xp, ap) = (plane(c, 0, sp)?, plane(c, 1, sp)?);
    scatter_at_positions(e, like, dout, |e, positions| {
        Some(gather_rows(e, positions, argmax, xp, ap))
    })
}

/// `_MaxPool3DArgmax(x)` with MaxPool3D's attributes: the argmax of
/// `MaxPool3DWithArgmax`, whose padding is the same on both sides of each
/// dimension (none, or `pad_list` `(d, d, h, h, w, w)`; not "same").
fn argmax3d(e: &mut Emit, c: &Call) -> Option<NodeId> {
    let [x] = *c.args else {
        return None;
    };
    let three = |v: &AttrValue| -> Option<Vec<i64>> {
        let v = v.as_ints()?;
        Some(match v.as_slice() {
            [a] => vec![*a; 3],
            [a, b, d] => vec![*a, *b, *d],
            [_, _, a, b, d] => vec![*a, *b, *d],
            _ => return None,
        })
    };
    let kernel = three(c.attr("kernel_size")?)?;
    let strides = three(c.attr("strides")?)?;
    let mode = c
        .attr("pad_mode")
        .and_then(AttrValue::as_str)
        .unwrap_or("VALID");
    let pads = match mode.to_ascii_uppercase().as_str() {
        "VALID" => vec![0; 3],
        "PAD" | "CALCULATED" => {
            let p = c.attr("pad_list")?.as_ints()?;
            match p.as_slice() {
                [a] => vec![*a; 3],
                [a, b, d] => vec![*a, *b, *d],
                [a, a2, b, b2, d, d2] if a == a2 && b == b2 && d == d2 => vec![*a, *b, *d],
                _ => return None,
            }
        }
        _ => return None,
    };
    let ceil = matches!(c.attr("ceil_mode"), Some(AttrValue::Bool(true)));
    let pooled = e.prim(
        "MaxPool3DWithArgmax",
        vec![
            ("ksize", ints(&kernel)),
            ("strides", ints(&strides)),
            ("pads", ints(&pads)),
            ("ceil_mode", AttrValue::Bool(ceil)),
        ],
        &[x],
    );
    let index = e.body.add_const(ir::Value::int(1), None);
    Some(e.prim("TupleGetItem", Vec::new(), &[pooled, index]))
}
