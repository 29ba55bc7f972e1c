//! The max poolings' second-order helpers: `_PoolArgmaxGather(x, argmax)`
//! (the adjoint of a max pooling's gradient in its sensitivity: `x` at each
//! window's maximum), `_PoolArgmaxGrad(x_like, argmax, dout)` (its adjoint:
//! `dout` added at those cells) and `_MaxPool3DArgmax(x)` (where MaxPool3D's
//! maxima are). MindSpore's bprops of its backward primitives
//! (`MaxPool3DGradGrad`...) do not run on its CPU for most; these are
//! written with `GatherD` along the flattened planes, one
//! `TensorScatterAdd`, and `MaxPool3DWithArgmax` (of the input padded with
//! the lowest float where MaxPool3D's padding is uneven).

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
/// `MaxPool3DWithArgmax`. Its padding is the same on both sides of each
/// dimension; other padding ("same" with an odd total, an uneven
/// `pad_list`) is written into the input first (`PadV3` with the lowest
/// float, never the maximum), and the argmax, flat in the padded volume, is moved back to
/// the input's (which needs the input's spatial sizes known).
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
    let ceil = matches!(c.attr("ceil_mode"), Some(AttrValue::Bool(true)));
    let mode = c
        .attr("pad_mode")
        .and_then(AttrValue::as_str)
        .unwrap_or("VALID")
        .to_ascii_uppercase();
    let spatial: Option<Vec<i64>> = c
        .shape(0)
        .filter(|d| d.len() == 5)
        .and_then(|d| d[2..].iter().map(Dim::known).collect());
    // (before, after) per dimension.
    let pads: Vec<(i64, i64)> = match mode.as_str() {
        "VALID" => vec![(0, 0); 3],
        "PAD" | "CALCULATED" => {
            let p = c.attr("pad_list")?.as_ints()?;
            match p.as_slice() {
                [a] => vec![(*a, *a); 3],
                [a, b, d] => vec![(*a, *a), (*b, *b), (*d, *d)],
                [a, a2, b, b2, d, d2] => vec![(*a, *a2), (*b, *b2), (*d, *d2)],
                _ => return None,
            }
        }
        "SAME" => {
            let n = spatial.as_ref()?;
            (0..3)
                .map(|j| {
                    let out = (n[j] + strides[j] - 1) / strides[j];
                    let total = ((out.max(1) - 1) * strides[j] + kernel[j] - n[j]).max(0);
                    (total / 2, total - total / 2)
                })
                .collect()
        }
        _ => return None,
    };
    let even = pads.iter().all(|(b, a)| b == a);
    let index = e.body.add_const(ir::Value::int(1), None);
    if even {
        let pooled = e.prim(
            "MaxPool3DWithArgmax",
            vec![
                ("ksize", ints(&kernel)),
                ("strides", ints(&strides)),
                ("pads", ints(&pads.iter().map(|p| p.0).collect::<Vec<_>>())),
                ("ceil_mode", AttrValue::Bool(ceil)),
            ],
            &[x],
        );
        return Some(e.prim("TupleGetItem", Vec::new(), &[pooled, index]));
    }
    // Uneven: pad explicitly (ceil mode's last-window rule would read the
    // padding as input).
    let n = spatial.filter(|_| !ceil)?;
    let dtype = c.dtype(0)?;
    let flat: Vec<i64> = pads.iter().rev().flat_map(|&(b, a)| [b, a]).collect();
    // The lowest finite value (-inf would not import back as a literal).
    let lowest = match dtype {
        ir::DType::F16 => -65504.0,
        ir::DType::F64 => f64::MIN,
        _ => f32::MIN as f64,
    };
    let lowest = e.number(dtype, lowest);
    let padded = e.prim(
        "PadV3",
        vec![
            ("paddings", ints(&flat)),
            ("mode", AttrValue::Str("constant".into())),
        ],
        &[x, lowest],
    );
    let pooled = e.prim(
        "MaxPool3DWithArgmax",
        vec![
            ("ksize", ints(&kernel)),
            ("strides", ints(&strides)),
            ("pads", ints(&[0, 0, 0])),
        ],
        &[padded],
    );
    let at = e.prim("TupleGetItem", Vec::new(), &[pooled, index]);
    // (d, h, w) in the padded volume, moved back by the padding before.
    let sizes: Vec<i64> = (0..3).map(|j| n[j] + pads[j].0 + pads[j].1).collect();
    let int = |e: &mut Emit, v: i64| e.number(ir::DType::I64, v as f64);
    let plane = int(e, sizes[1] * sizes[2]);
    let row = int(e, sizes[2]);
    let d = e.prim("FloorDiv", Vec::new(), &[at, plane]);
    let rest = e.prim("FloorMod", Vec::new(), &[at, plane]);
    let h = e.prim("FloorDiv", Vec::new(), &[rest, row]);
    let w = e.prim("FloorMod", Vec::new(), &[rest, row]);
    let mut coords = Vec::new();
    for (j, v) in [d, h, w].into_iter().enumerate() {
        let before = int(e, pads[j].0);
        coords.push(e.prim("Sub", Vec::new(), &[v, before]));
    }
    let (height, width) = (int(e, n[1]), int(e, n[2]));
    let dh = e.prim("Mul", Vec::new(), &[coords[0], height]);
    let dh = e.prim("Add", Vec::new(), &[dh, coords[1]]);
    let dhw = e.prim("Mul", Vec::new(), &[dh, width]);
    Some(e.prim("Add", Vec::new(), &[dhw, coords[2]]))
}
