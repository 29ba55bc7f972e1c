//! Gradients that add the sensitivity into zeros at the positions the
//! forward took its elements from: Gather's, GatherD's, GatherNd's and the
//! pickers' along an axis; StridedSlice's, Narrow's, SliceExt's and
//! Tile's; Embedding's table.

use ir::{AttrValue, NodeId, PrimRef};

use super::{ints, Call, Emit};

pub(super) fn lower(e: &mut Emit, c: &Call) -> Option<NodeId> {
    let args = c.args;
    match c.name() {
        "_GatherGrad" | "_GatherNdGrad" => {
            let dtype = c.dtype(2).filter(|&d| Some(d) != c.dtype(0));
            gather_grad(e, args, c.p, dtype)
        }
        "_IndexScatterAdd" => {
            let dtype = c.dtype(1).filter(|&d| Some(d) != c.dtype(2));
            gather_grad(e, args, c.p, dtype)
        }
        "_StridedSliceGrad" | "_TileGrad" | "_NarrowGrad" | "_SliceExtGrad" => {
            scatter_by_forward(e, c)
        }
        "_EmbeddingGrad" => embedding_grad(e, c),
        _ => None,
    }
}

/// `_GatherGrad(x, indices, grad, axis, batch_dims)`, `_GatherNdGrad` and
/// `_IndexScatterAdd` (along an axis, as GatherD's): `grad` added into zeros
/// shaped like `x` at the gathered positions. MindSpore's Gather bprop
/// scatters with UnsortedSegmentSum after moving `axis` to the front; here
/// `x`'s flat positions (an exclusive
/// cumulative sum of ones) are gathered as `x` was, which gives every element
/// of `grad` its flat position in `x`, whatever the axis, `batch_dims` or
/// rank, and one TensorScatterAdd into the flattened zeros adds them up
/// (repeated positions accumulate). The helpers keep gradient rules of their
/// own, so they have no DSL expansion (the autodiff would never use it).
/// The result has `grad`'s dtype: `dtype` where that is not `x`'s (the
/// indicator counts of TensorScatterMax's gradient are integers).
fn gather_grad(
    e: &mut Emit,
    args: &[NodeId],
    p: &PrimRef,
    dtype: Option<ir::DType>,
) -> Option<NodeId> {
    // `_IndexScatterAdd(indices, updates, like, axis)` (Sort's, TopK's and
    // the other pickers' gradients) is GatherD's along `axis`.
    let [x, indices, grad] = match (p.name.as_str(), args) {
        ("_IndexScatterAdd", &[indices, updates, like]) => [like, indices, updates],
        (_, &[x, indices, grad]) => [x, indices, grad],
        _ => return None,
    };
    let attr = |k: &str| p.attr(k).cloned();
    let axis = attr("axis");
    let batch = attr("batch_dims").unwrap_or(AttrValue::Int(0));
    let like = match dtype {
        Some(d) => e.prim("Cast", vec![("dtype", AttrValue::DType(d))], &[x]),
        None => x,
    };
    scatter_at_positions(e, like, grad, |e, positions| {
        Some(if p.name == "_IndexScatterAdd" {
            e.prim("GatherD", vec![("dim", axis?)], &[positions, indices])
        } else if p.name == "_GatherNdGrad" {
            e.prim("GatherNd", Vec::new(), &[positions, indices])
        } else {
            e.prim(
                "Gather",
                vec![("axis", axis?), ("batch_dims", batch)],
                &[positions, indices],
            )
        })
    })
}

/// `grad` added into zeros shaped like `like`, each element at the flat
/// position `take` picks for it from `like`'s flat positions (an exclusive
/// cumulative sum of ones, shaped like `like`): one TensorScatterAdd, so
/// repeated positions accumulate. `None` when `take` cannot say.
pub(super) fn scatter_at_positions(
    e: &mut Emit,
    like: NodeId,
    grad: NodeId,
    take: impl FnOnce(&mut Emit, NodeId) -> Option<NodeId>,
) -> Option<NodeId> {
    let zeros = e.prim("ZerosLike", Vec::new(), &[like]);
    let flat = e.prim("Reshape", vec![("shape", ints(&[-1]))], &[zeros]);
    let ones = e.prim("OnesLike", Vec::new(), &[flat]);
    let ones = e.prim(
        "Cast",
        vec![("dtype", AttrValue::DType(ir::DType::I32))],
        &[ones],
    );
    let positions = e.prim(
        "CumSum",
        vec![
            ("axis", AttrValue::Int(0)),
            ("exclusive", AttrValue::Bool(true)),
            ("reverse", AttrValue::Bool(false)),
        ],
        &[ones],
    );
    let positions = e.prim("_ReshapeLike", Vec::new(), &[positions, like]);
    let at = take(e, positions)?;
    let at = e.prim("Reshape", vec![("shape", ints(&[-1, 1]))], &[at]);
    let updates = e.prim("Reshape", vec![("shape", ints(&[-1]))], &[grad]);
    let sum = e.prim("TensorScatterAdd", Vec::new(), &[flat, at, updates]);
    Some(e.prim("_ReshapeLike", Vec::new(), &[sum, like]))
}

/// The gradients of the slicing and tiling primitives,
/// `_StridedSliceGrad`, `_NarrowGrad`, `_SliceExtGrad` and `_TileGrad`
/// (`grad`, `like` and the forward's attributes): `grad` added into zeros
/// shaped like `like` where the forward took each element from, found as
/// `gather_grad` finds them: the forward applied to `like`'s flat positions
/// gives every element of `grad` its position, and one TensorScatterAdd adds
/// them up (a tile's copies of one element accumulate). Narrow and SliceExt
/// are applied as the `StridedSlice` they are where the size along their
/// axis is known (MindSpore's CPU has no kernel for either).
fn scatter_by_forward(e: &mut Emit, c: &Call) -> Option<NodeId> {
    let [grad, like] = *c.args else {
        return None;
    };
    let p = c.p;
    let mut attrs: Vec<(&str, AttrValue)> = p
        .attrs
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    let mut forward = match p.name.as_str() {
        "_StridedSliceGrad" => "StridedSlice",
        "_TileGrad" => "Tile",
        "_NarrowGrad" => "Narrow",
        "_SliceExtGrad" => "SliceExt",
        _ => return None,
    };
    if let Some(strided) = c.shape(1).and_then(|dims| as_strided_slice(p, &dims)) {
        forward = "StridedSlice";
        attrs = strided;
    }
    scatter_at_positions(e, like, grad, |e, positions| {
        Some(e.prim(forward, attrs, &[positions]))
    })
}

/// `Narrow(dim, start, length)` or `SliceExt(dim, start, end, step)` of a
/// tensor of `dims` as the `StridedSlice` it is (every other axis whole, by
/// the masks); `None` where the size along `dim` is not known.
fn as_strided_slice(p: &PrimRef, dims: &[ir::Dim]) -> Option<Vec<(&'static str, AttrValue)>> {
    let int = |k: &str| p.attr(k).and_then(AttrValue::as_int);
    let rank = dims.len() as i64;
    let dim = int("dim")?;
    let dim = if dim < 0 { dim + rank } else { dim };
    let n = dims.get(usize::try_from(dim).ok()?)?.known()?;
    let (begin, end, step) = match p.name.as_str() {
        "_NarrowGrad" => {
            let start = int("start")?;
            let start = if start < 0 { start + n } else { start };
            (start, start + int("length")?, 1)
        }
        "_SliceExtGrad" => {
            let at = |v: i64| (if v < 0 { v + n } else { v }).clamp(0, n);
            (at(int("start")?), at(int("end")?), int("step").unwrap_or(1))
        }
        _ => return None,
    };
    if !(0..=n).contains(&begin) || end < begin || step < 1 {
        return None;
    }
    let at_dim = |v: i64| -> Vec<i64> { (0..rank).map(|i| if i == dim { v } else { 0 }).collect() };
    let whole = ((1i64 << rank) - 1) & !(1i64 << dim);
    Some(vec![
        ("begin", ints(&at_dim(begin))),
        ("end", ints(&at_dim(end))),
        (
            "strides",
            ints(
                &(0..rank)
                    .map(|i| if i == dim { step } else { 1 })
                    .collect::<Vec<_>>(),
            ),
        ),
        ("begin_mask", AttrValue::Int(whole)),
        ("end_mask", AttrValue::Int(whole)),
    ])
}

/// `_EmbeddingGrad(dout, indices, like)`: the table's gradient. Plain, it is
/// `Gather`'s along axis 0. With `EmbeddingLookup`'s offset (rows outside the
/// slice get nothing), a padding row (which gets nothing) or frequency
/// scaling (a row's sum divided by how often it was looked up), the rows are
/// summed with UnsortedSegmentSum, as MindSpore's bprops do, an id that gets
/// nothing made -1 (which UnsortedSegmentSum drops).
fn embedding_grad(e: &mut Emit, c: &Call) -> Option<NodeId> {
    let [dout, indices, like] = *c.args else {
        return None;
    };
    let offset = c.attr("offset").and_then(AttrValue::as_int).unwrap_or(0);
    let padding = c.attr("padding_idx").and_then(AttrValue::as_int);
    let by_freq = matches!(c.attr("scale_grad_by_freq"), Some(AttrValue::Bool(true)));
    if offset == 0 && padding.is_none() && !by_freq {
        let mut gather = PrimRef::new("_GatherGrad");
        gather.attrs = vec![("axis".to_string(), AttrValue::Int(0))];
        return gather_grad(e, &[like, indices, dout], &gather, None);
    }
    let table = c.shape(2)?;
    let rows = table.first()?.known()?;
    let mut row_shape = vec![-1];
    for d in &table[1..] {
        row_shape.push(d.known()?);
    }
    let (id_dtype, dtype) = (c.dtype(1)?, c.dtype(0)?);
    let mut ids = e.prim("Reshape", vec![("shape", ints(&[-1]))], &[indices]);
    if offset != 0 {
        let offset = e.number(id_dtype, offset as f64);
        ids = e.prim("Sub", Vec::new(), &[ids, offset]);
    }
    let zero = e.number(id_dtype, 0.0);
    let count = e.number(id_dtype, rows as f64);
    let at_least = e.prim("GreaterEqual", Vec::new(), &[ids, zero]);
    let below = e.prim("Less", Vec::new(), &[ids, count]);
    let mut kept = e.prim("LogicalAnd", Vec::new(), &[at_least, below]);
    if let Some(p) = padding {
        let p = if p < 0 { p + rows } else { p };
        let p = e.number(id_dtype, p as f64);
        let other = e.prim("NotEqual", Vec::new(), &[ids, p]);
        kept = e.prim("LogicalAnd", Vec::new(), &[kept, other]);
    }
    let zeros = e.prim("ZerosLike", Vec::new(), &[ids]);
    let ones = e.prim("OnesLike", Vec::new(), &[ids]);
    let dropped = e.prim("Sub", Vec::new(), &[zeros, ones]);
    let ids = e.prim("Select", Vec::new(), &[kept, ids, dropped]);
    let segments = ("num_segments", AttrValue::Int(rows));
    let updates = e.prim("Reshape", vec![("shape", ints(&row_shape))], &[dout]);
    let mut sum = e.prim(
        "UnsortedSegmentSum",
        vec![segments.clone()],
        &[updates, ids],
    );
    if by_freq {
        let kept = e.prim("Cast", vec![("dtype", AttrValue::DType(dtype))], &[kept]);
        let counts = e.prim("UnsortedSegmentSum", vec![segments], &[kept, ids]);
        let one = e.number(dtype, 1.0);
        let counts = e.prim("Maximum", Vec::new(), &[counts, one]);
        let mut per_row = vec![rows];
        per_row.extend(std::iter::repeat_n(1, table.len() - 1));
        let counts = e.prim("Reshape", vec![("shape", ints(&per_row))], &[counts]);
        sum = e.prim("RealDiv", Vec::new(), &[sum, counts]);
    }
    Some(sum)
}
