//! Gathers and scatters: GatherNd, ScatterNd, TensorScatterUpdate/Add/Sub/
//! Max/Min, GatherD, IndexSelect, Take. The segment reductions and
//! MaskedFill are in `shape::segment`.
//!
//! Indices must lie inside the indexed dimension, as on MindSpore's CPU (an
//! index outside is an error naming the input), except where MindSpore wraps
//! negative ones (`GatherD`, `Take`) or drops them (the segment primitives
//! drop negative segment ids). Duplicate indices add up in `ScatterNd` and the
//! additive scatters; `TensorScatterUpdate` applies them in order.
//!
//! Gradients are MindSpore's bprops: a gather's sensitivity is scattered back
//! (`_GatherNdGrad`, MindSpore's `GatherDGradV2`, `_TakeGrad`, `_GatherGrad`), a scatter's
//! is gathered (`GatherNd`), `UnsortedSegmentSum`'s is gathered by segment
//! (`_SegmentGather`, zero for dropped ids), and the max/min primitives share
//! the sensitivity among the elements that attained the extreme.

use crate::schema::{why, Override, Schema};
use ir::{AbsVal, AttrValue, DType, Dim, Shape};
use tensor::{Buffer, Tensor};

use crate::defs::elementwise::{is_float_input, make_tensor};
use crate::defs::shape::split_stack::{
    axis_take_offsets, int_values, op, out, require_dtype, Grads, INDEX_DTYPES,
};
use crate::defs::shape::{
    dims_may_equal, dims_of, fmt_dims, row_strides, scatter_add, take, tensor_abs, unranked,
};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{AttrType, Category, GNode, GradBuilder, GradCall, OpDef, OpError, ParamDef};

pub(crate) const INDEX_WHAT: &str = "i32 or i64";

fn index_error(
    op: &str,
    input: usize,
    name: &str,
    value: i64,
    bound: usize,
    dim: usize,
) -> OpError {
    OpError::input(
        input,
        format!("`{op}`: `{name}` holds {value}, out of range for dimension {dim} of size {bound}"),
    )
}

// ---------------------------------------------------------------------------
// N-dimensional indices (GatherNd, ScatterNd, TensorScatter*).

/// The offsets of the slices `indices` (shape `[..., k]`) picks from a tensor
/// of `shape`, one per index row, and the length of each slice.
fn nd_rows(
    op: &str,
    shape: &[usize],
    indices: &Tensor,
    input: usize,
) -> Result<(Vec<usize>, usize), OpError> {
    let is = indices.shape();
    let Some(&k) = is.last() else {
        return Err(OpError::input(
            input,
            format!("`{op}` needs `indices` of rank at least 1"),
        ));
    };
    if k > shape.len() {
        return Err(OpError::input(
            input,
            format!(
                "`{op}`: index rows of length {k} address more dimensions than the {} of the indexed tensor",
                shape.len()
            ),
        ));
    }
    let idx = int_values(indices, op, input, "indices")?;
    let strides = row_strides(shape);
    let slice: usize = shape[k..].iter().product();
    let rows: usize = is[..is.len() - 1].iter().product();
    let mut bases = Vec::with_capacity(rows);
    for r in 0..rows {
        let mut base = 0usize;
        for j in 0..k {
            let v = idx[r * k + j];
            if v < 0 || v as usize >= shape[j] {
                return Err(index_error(op, input, "indices", v, shape[j], j));
            }
            base += v as usize * strides[j];
        }
        bases.push(base);
    }
    Ok((bases, slice))
}

/// Every element offset of the slices starting at `bases`.
fn expand(bases: &[usize], slice: usize) -> Vec<usize> {
    bases.iter().flat_map(|&b| b..b + slice).collect()
}

/// `indices.shape[:-1] + shape[k:]`, where it can be known.
fn nd_result(idims: &[Dim], xdims: Option<&[Dim]>) -> Option<Vec<Dim>> {
    let k = idims.last()?.known()? as usize;
    let xdims = xdims?;
    let mut out = idims[..idims.len() - 1].to_vec();
    out.extend_from_slice(xdims.get(k..)?);
    Some(out)
}

/// Checks an nd index input against the indexed tensor's dimensions.
fn check_nd_indices(
    call: &InferCall,
    i: usize,
    idims: &[Dim],
    xdims: &[Dim],
    min_rank: usize,
) -> Result<(), OpError> {
    let op = call.op.name;
    if idims.len() < min_rank {
        return Err(OpError::input(
            i,
            format!(
                "`{op}` needs `indices` of rank at least {min_rank}, got {}",
                fmt_dims(idims)
            ),
        ));
    }
    if let Some(Dim::Known(k)) = idims.last() {
        if *k as usize > xdims.len() {
            return Err(OpError::input(
                i,
                format!(
                    "`{op}`: index rows of length {k} address more dimensions than the input {} has",
                    fmt_dims(xdims)
                ),
            ));
        }
    }
    Ok(())
}

fn infer_gather_nd(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, xdims) = dims_of(call, 0)?;
    require_dtype(call, 1, INDEX_DTYPES, INDEX_WHAT)?;
    let (_, idims) = dims_of(call, 1)?;
    let (Some(xdims), Some(idims)) = (xdims, idims) else {
        return Ok(unranked(dtype));
    };
    check_nd_indices(call, 1, &idims, &xdims, 1)?;
    Ok(match nd_result(&idims, Some(&xdims)) {
        Some(d) => tensor_abs(dtype, d),
        None => unranked(dtype),
    })
}

fn gather_nd(x: &Tensor, indices: &Tensor, op: &str) -> Result<Tensor, OpError> {
    let (bases, slice) = nd_rows(op, x.shape(), indices, 1)?;
    let is = indices.shape();
    let k = is[is.len() - 1];
    let mut shape = is[..is.len() - 1].to_vec();
    shape.extend_from_slice(&x.shape()[k..]);
    Ok(take(x, shape, &expand(&bases, slice)))
}

/// Checks that `updates` has shape `indices.shape[:-1] + shape[k:]`.
fn check_updates(call: &InferCall, u: usize, idims: &[Dim], xdims: &[Dim]) -> Result<(), OpError> {
    let (_, udims) = dims_of(call, u)?;
    if let (Some(udims), Some(want)) = (udims, nd_result(idims, Some(xdims))) {
        if udims.len() != want.len() || udims.iter().zip(&want).any(|(a, b)| !dims_may_equal(a, b))
        {
            return Err(OpError::input(
                u,
                format!(
                    "`{}` needs `updates` of shape indices.shape[:-1] + shape[k:] = {}, got {}",
                    call.op.name,
                    fmt_dims(&want),
                    fmt_dims(&udims)
                ),
            ));
        }
    }
    Ok(())
}

fn infer_scatter_nd(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    require_dtype(call, 0, INDEX_DTYPES, INDEX_WHAT)?;
    let (dtype, _) = call.tensor(1)?;
    let shape = call.attrs.ints("shape").unwrap_or_default();
    if shape.is_empty() || shape.iter().any(|&d| d < 0) {
        return Err(OpError::attr(
            "shape",
            format!("`ScatterNd`: `shape` must be a non-empty tuple of sizes >= 0, got {shape:?}"),
        ));
    }
    let xdims: Vec<Dim> = shape.iter().map(|&d| Dim::Known(d)).collect();
    if let (_, Some(idims)) = dims_of(call, 0)? {
        check_nd_indices(call, 0, &idims, &xdims, 2)?;
        check_updates(call, 1, &idims, &xdims)?;
    }
    Ok(tensor_abs(dtype, xdims))
}

fn check_update_shape(
    op: &str,
    u: &Tensor,
    indices: &Tensor,
    shape: &[usize],
) -> Result<(), OpError> {
    let is = indices.shape();
    let k = is[is.len() - 1];
    let mut want = is[..is.len() - 1].to_vec();
    want.extend_from_slice(&shape[k..]);
    if u.shape() != want.as_slice() {
        return Err(OpError::input(
            2,
            format!(
                "`{op}` needs `updates` of shape {want:?}, got {:?}",
                u.shape()
            ),
        ));
    }
    Ok(())
}

fn kernel_scatter_nd(c: &KernelCall) -> Result<KValue, OpError> {
    let (indices, updates) = (c.tensor(0)?, c.tensor(1)?);
    let shape: Vec<usize> = c
        .attrs
        .ints("shape")
        .unwrap_or_default()
        .iter()
        .map(|&d| d.max(0) as usize)
        .collect();
    if indices.rank() < 2 {
        return Err(OpError::input(
            0,
            "`ScatterNd` needs `indices` of rank at least 2",
        ));
    }
    let (bases, slice) = nd_rows("ScatterNd", &shape, indices, 0)?;
    check_update_shape("ScatterNd", updates, indices, &shape)?;
    out(scatter_add(updates, shape, &expand(&bases, slice)))
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Combine {
    Update,
    Add,
    Sub,
    Max,
    Min,
}

pub(crate) trait Elem: Copy + PartialOrd {
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
}

impl Elem for f32 {
    fn add(self, o: f32) -> f32 {
        self + o
    }
    fn sub(self, o: f32) -> f32 {
        self - o
    }
}

impl Elem for f64 {
    fn add(self, o: f64) -> f64 {
        self + o
    }
    fn sub(self, o: f64) -> f64 {
        self - o
    }
}

impl Elem for i64 {
    fn add(self, o: i64) -> i64 {
        self.wrapping_add(o)
    }
    fn sub(self, o: i64) -> i64 {
        self.wrapping_sub(o)
    }
}

fn combine_into<T: Elem>(x: &[T], u: &[T], offsets: &[usize], how: Combine) -> Vec<T> {
    let mut r = x.to_vec();
    for (&v, &o) in u.iter().zip(offsets) {
        let a = r[o];
        r[o] = match how {
            Combine::Update => v,
            Combine::Add => a.add(v),
            Combine::Sub => a.sub(v),
            Combine::Max => {
                if v > a {
                    v
                } else {
                    a
                }
            }
            Combine::Min => {
                if v < a {
                    v
                } else {
                    a
                }
            }
        };
    }
    r
}

fn tensor_scatter_how(op: &str) -> Combine {
    match op {
        "TensorScatterUpdate" => Combine::Update,
        "TensorScatterAdd" => Combine::Add,
        "TensorScatterSub" => Combine::Sub,
        "TensorScatterMax" => Combine::Max,
        _ => Combine::Min,
    }
}

fn infer_tensor_scatter(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xdims) = dims_of(call, 0)?;
    require_dtype(call, 1, INDEX_DTYPES, INDEX_WHAT)?;
    let (udtype, _) = call.tensor(2)?;
    if udtype != dtype {
        return Err(OpError::input(
            2,
            format!("`{op}` needs `updates` of the dtype of `input_x`, {dtype}, got {udtype}"),
        ));
    }
    if dtype.is_bool() && tensor_scatter_how(op) != Combine::Update {
        return Err(OpError::input(
            0,
            format!("`{op}` needs a numeric `input_x`, got bool"),
        ));
    }
    if let (Some(xdims), (_, Some(idims))) = (&xdims, dims_of(call, 1)?) {
        check_nd_indices(call, 1, &idims, xdims, 2)?;
        check_updates(call, 2, &idims, xdims)?;
    }
    Ok(call.inputs[0].widen())
}

fn kernel_tensor_scatter(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    let (x, indices, updates) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    if indices.rank() < 2 {
        return Err(OpError::input(
            1,
            format!("`{op}` needs `indices` of rank at least 2"),
        ));
    }
    let (bases, slice) = nd_rows(op, x.shape(), indices, 1)?;
    check_update_shape(op, updates, indices, x.shape())?;
    let offsets = expand(&bases, slice);
    let how = tensor_scatter_how(op);
    let u = updates.cast(x.dtype());
    let buffer = match (x.buffer(), u.buffer()) {
        (Buffer::F32(a), Buffer::F32(b)) => Buffer::F32(combine_into(a, b, &offsets, how)),
        (Buffer::F64(a), Buffer::F64(b)) => Buffer::F64(combine_into(a, b, &offsets, how)),
        (Buffer::I64(a), Buffer::I64(b)) => Buffer::I64(combine_into(a, b, &offsets, how)),
        (Buffer::Bool(a), Buffer::Bool(b)) if how == Combine::Update => {
            let mut r = a.clone();
            for (&v, &o) in b.iter().zip(&offsets) {
                r[o] = v;
            }
            Buffer::Bool(r)
        }
        _ => {
            return Err(OpError::input(
                0,
                format!("`{op}` needs a numeric `input_x`"),
            ))
        }
    };
    out(make_tensor(x.dtype(), x.shape().to_vec(), buffer)?)
}

fn grad_tensor_scatter(b: &mut dyn GradBuilder, c: &GradCall, op: &str) -> Grads {
    let (x, indices, updates) = (c.inputs[0], c.inputs[1], c.inputs[2]);
    let float = is_float_input(c, 0);
    if !float {
        return vec![None, None, None];
    }
    let gather = |b: &mut dyn GradBuilder, t: GNode| b.prim("GatherNd", &[t, indices], vec![]);
    match tensor_scatter_how(op) {
        Combine::Update => {
            let zeros = b.prim("ZerosLike", &[updates], vec![]);
            let dx = b.prim("TensorScatterUpdate", &[c.dout, indices, zeros], vec![]);
            vec![Some(dx), None, Some(gather(b, c.dout))]
        }
        Combine::Add => vec![Some(c.dout), None, Some(gather(b, c.dout))],
        Combine::Sub => {
            let g = gather(b, c.dout);
            vec![Some(c.dout), None, Some(b.prim("Neg", &[g], vec![]))]
        }
        Combine::Max | Combine::Min => {
            // MindSpore's TensorScatterPossibleReplacement: the sensitivity of
            // each result element is shared among `x` and the updates equal to it.
            let dtype = c.input_values[0].dtype().unwrap_or(DType::F32);
            let cast = |b: &mut dyn GradBuilder, t: GNode, d: DType| {
                b.prim("Cast", &[t], vec![("dtype", AttrValue::DType(d))])
            };
            let eq_x = b.prim("Equal", &[x, c.out], vec![]);
            let x_ind = cast(b, eq_x, DType::I32);
            let possibly = gather(b, c.out);
            let eq_u = b.prim("Equal", &[updates, possibly], vec![]);
            let out_ind = cast(b, eq_u, DType::I32);
            let scattered = b.prim("_GatherNdGrad", &[x, indices, out_ind], vec![]);
            let indicators = b.prim("Add", &[x_ind, scattered], vec![]);
            let ind_f = cast(b, indicators, dtype);
            let x_ind_f = cast(b, x_ind, dtype);
            let num = b.prim("Mul", &[c.dout, x_ind_f], vec![]);
            let dx = b.prim("RealDiv", &[num, ind_f], vec![]);
            let shared = b.prim("RealDiv", &[c.dout, ind_f], vec![]);
            let g = gather(b, shared);
            let out_ind_f = cast(b, out_ind, dtype);
            let du = b.prim("Mul", &[g, out_ind_f], vec![]);
            vec![Some(dx), None, Some(du)]
        }
    }
}

// ---------------------------------------------------------------------------
// GatherD, IndexSelect, Take

/// The source offset in `x` (shape `shape`) of each element of GatherD's result.
fn gather_d_offsets(shape: &[usize], dim: usize, index: &Tensor) -> Result<Vec<usize>, OpError> {
    let is = index.shape();
    if is.len() != shape.len() {
        return Err(OpError::input(
            1,
            format!(
                "`GatherD` needs `index` of the rank of `x` ({}), got shape {is:?}",
                shape.len()
            ),
        ));
    }
    for d in 0..is.len() {
        if d != dim && is[d] > shape[d] {
            return Err(OpError::input(
                1,
                format!("`GatherD`: `index` {is:?} is larger than `x` {shape:?} in dimension {d}"),
            ));
        }
    }
    let idx = int_values(index, "GatherD", 1, "index")?;
    let xs = row_strides(shape);
    let n = shape[dim] as i64;
    let mut offsets = Vec::with_capacity(idx.len());
    let mut pos = vec![0usize; is.len()];
    for &v in &idx {
        let k = if v < 0 { v + n } else { v };
        if k < 0 || k >= n {
            return Err(index_error("GatherD", 1, "index", v, shape[dim], dim));
        }
        let mut o = 0usize;
        for d in 0..is.len() {
            o += if d == dim { k as usize } else { pos[d] } * xs[d];
        }
        offsets.push(o);
        for d in (0..is.len()).rev() {
            pos[d] += 1;
            if pos[d] < is[d] {
                break;
            }
            pos[d] = 0;
        }
    }
    Ok(offsets)
}

fn infer_gather_d(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, xdims) = dims_of(call, 0)?;
    require_dtype(call, 1, INDEX_DTYPES, INDEX_WHAT)?;
    let (_, idims) = dims_of(call, 1)?;
    if let Some(xdims) = &xdims {
        crate::defs::shape::op_axis("GatherD", call.attrs.int("dim"), xdims.len(), "dim")?;
        if let Some(idims) = &idims {
            if idims.len() != xdims.len() {
                return Err(OpError::input(
                    1,
                    format!(
                        "`GatherD` needs `index` of the rank of `x` {}, got {}",
                        fmt_dims(xdims),
                        fmt_dims(idims)
                    ),
                ));
            }
        }
    }
    Ok(AbsVal::Tensor {
        dtype,
        shape: call.inputs[1].shape().unwrap_or(Shape::Unranked),
    })
}

fn kernel_gather_d(c: &KernelCall) -> Result<KValue, OpError> {
    let (x, index) = (c.tensor(0)?, c.tensor(1)?);
    let dim = crate::defs::shape::op_axis("GatherD", c.attrs.int("dim"), x.rank(), "dim")?;
    let offsets = gather_d_offsets(x.shape(), dim, index)?;
    out(take(x, index.shape().to_vec(), &offsets))
}

/// IndexSelect's positions along `dim`, checked.
fn select_positions(index: &Tensor, n: usize, dim: usize) -> Result<Vec<usize>, OpError> {
    if index.rank() > 1 {
        return Err(OpError::input(
            1,
            format!(
                "`IndexSelect` needs a 1-D `index`, got shape {:?}",
                index.shape()
            ),
        ));
    }
    int_values(index, "IndexSelect", 1, "index")?
        .into_iter()
        .map(|v| {
            if v < 0 || v as usize >= n {
                Err(index_error("IndexSelect", 1, "index", v, n, dim))
            } else {
                Ok(v as usize)
            }
        })
        .collect()
}

fn infer_index_select(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, xdims) = dims_of(call, 0)?;
    require_dtype(call, 1, INDEX_DTYPES, INDEX_WHAT)?;
    let (_, idims) = dims_of(call, 1)?;
    let Some(mut xdims) = xdims else {
        return Ok(unranked(dtype));
    };
    if xdims.is_empty() {
        return Err(OpError::input(
            0,
            "`IndexSelect` needs `input` of rank at least 1, got a scalar",
        ));
    }
    let dim =
        crate::defs::shape::op_axis("IndexSelect", call.attrs.int("dim"), xdims.len(), "dim")?;
    xdims[dim] = match idims.as_deref() {
        Some([]) => Dim::Known(1),
        Some([n]) => n.clone(),
        Some(other) => {
            return Err(OpError::input(
                1,
                format!("`IndexSelect` needs a 1-D `index`, got {}", fmt_dims(other)),
            ))
        }
        None => Dim::Unknown,
    };
    Ok(tensor_abs(dtype, xdims))
}

fn kernel_index_select(c: &KernelCall) -> Result<KValue, OpError> {
    let (x, index) = (c.tensor(0)?, c.tensor(1)?);
    if x.rank() == 0 {
        return Err(OpError::input(
            0,
            "`IndexSelect` needs `input` of rank at least 1",
        ));
    }
    let dim = crate::defs::shape::op_axis("IndexSelect", c.attrs.int("dim"), x.rank(), "dim")?;
    let idx = select_positions(index, x.shape()[dim], dim)?;
    let (shape, offsets) = axis_take_offsets(x.shape(), dim, &idx);
    out(take(x, shape, &offsets))
}

/// Take's flat positions, negative ones wrapped.
fn take_positions(index: &Tensor, n: usize) -> Result<Vec<usize>, OpError> {
    int_values(index, "Take", 1, "index")?
        .into_iter()
        .map(|v| {
            let k = if v < 0 { v + n as i64 } else { v };
            if k < 0 || k as usize >= n {
                Err(OpError::input(
                    1,
                    format!("`Take`: `index` holds {v}, out of range for {n} elements"),
                ))
            } else {
                Ok(k as usize)
            }
        })
        .collect()
}

fn infer_take(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, _) = call.tensor(0)?;
    require_dtype(call, 1, INDEX_DTYPES, INDEX_WHAT)?;
    Ok(AbsVal::Tensor {
        dtype,
        shape: call.inputs[1].shape().unwrap_or(Shape::Unranked),
    })
}

// ---------------------------------------------------------------------------
// Internal gradient primitives.

/// A tensor with the dtype of input `d` and the shape of input `s`.
fn like_2_0(call: &InferCall) -> Result<AbsVal, OpError> {
    crate::defs::shape::split_stack::like(call, 2, 0)
}

// ---------------------------------------------------------------------------
// The table.

const TENSOR_SCATTER: Schema = Schema::ms(
    &[],
    &[
        ("input_x", "The tensor to update (a copy is returned)."),
        ("indices", "Index rows, `[..., k]`, i32 or i64, rank at least 2: each row addresses a slice `input_x[i0, ..., ik-1]`."),
        ("updates", "The values, of the dtype of `input_x` and shape `indices.shape[:-1] + input_x.shape[k:]`."),
    ],
);

pub const OPS: &[OpDef] = &[
    op(
        "GatherNd",
        Category::Shape,
        "Gathers slices of `input_x` addressed by the rows of `indices` (`[..., k]`): the result has shape `indices.shape[:-1] + input_x.shape[k:]`; an index outside the tensor is an error.",
        Schema::ms(
            &[],
            &[
                ("input_x", "The tensor to gather from."),
                ("indices", "Index rows, `[..., k]` with `k <= rank(input_x)`, i32 or i64."),
            ],
        ),
        infer_gather_nd,
        Some(|b, c| {
            if !is_float_input(c, 0) {
                return vec![None, None];
            }
            vec![Some(b.prim("_GatherNdGrad", &[c.inputs[0], c.inputs[1], c.dout], vec![])), None]
        }),
        |c| out(gather_nd(c.tensor(0)?, c.tensor(1)?, "GatherNd")?),
    ),
    op(
        "ScatterNd",
        Category::Shape,
        "Zeros of `shape` with `updates` added at the slices addressed by the rows of `indices` (duplicate rows add up): the inverse of GatherNd.",
        Schema::ms(
            &[Override::attr("shape", AttrType::IntTuple, None, why::TYPE)],
            &[
                ("indices", "Index rows, `[..., k]`, i32 or i64, rank at least 2."),
                ("updates", "The values, of shape `indices.shape[:-1] + shape[k:]`."),
                ("shape", "The shape of the result (MindSpore takes it as a constant input)."),
            ],
        ),
        infer_scatter_nd,
        Some(|b, c| {
            if !is_float_input(c, 1) {
                return vec![None, None];
            }
            vec![None, Some(b.prim("GatherNd", &[c.dout, c.inputs[0]], vec![]))]
        }),
        kernel_scatter_nd,
    ),
    op(
        "TensorScatterUpdate",
        Category::Shape,
        "A copy of `input_x` with the slices addressed by the rows of `indices` replaced by `updates` (in order, for duplicate rows).",
        TENSOR_SCATTER,
        infer_tensor_scatter,
        Some(|b, c| grad_tensor_scatter(b, c, "TensorScatterUpdate")),
        |c| kernel_tensor_scatter(c, "TensorScatterUpdate"),
    ),
    op(
        "TensorScatterAdd",
        Category::Shape,
        "A copy of `input_x` with `updates` added to the slices addressed by the rows of `indices` (duplicate rows add up).",
        TENSOR_SCATTER,
        infer_tensor_scatter,
        Some(|b, c| grad_tensor_scatter(b, c, "TensorScatterAdd")),
        |c| kernel_tensor_scatter(c, "TensorScatterAdd"),
    ),
    op(
        "TensorScatterSub",
        Category::Shape,
        "A copy of `input_x` with `updates` subtracted from the slices addressed by the rows of `indices` (duplicate rows subtract each).",
        TENSOR_SCATTER,
        infer_tensor_scatter,
        Some(|b, c| grad_tensor_scatter(b, c, "TensorScatterSub")),
        |c| kernel_tensor_scatter(c, "TensorScatterSub"),
    ),
    op(
        "TensorScatterMax",
        Category::Shape,
        "A copy of `input_x` where each slice addressed by a row of `indices` becomes the elementwise maximum of itself and the row's `updates`. Its gradient is shared among `input_x` and the updates equal to the result.",
        TENSOR_SCATTER,
        infer_tensor_scatter,
        Some(|b, c| grad_tensor_scatter(b, c, "TensorScatterMax")),
        |c| kernel_tensor_scatter(c, "TensorScatterMax"),
    ),
    op(
        "TensorScatterMin",
        Category::Shape,
        "A copy of `input_x` where each slice addressed by a row of `indices` becomes the elementwise minimum of itself and the row's `updates`. Its gradient is shared among `input_x` and the updates equal to the result.",
        TENSOR_SCATTER,
        infer_tensor_scatter,
        Some(|b, c| grad_tensor_scatter(b, c, "TensorScatterMin")),
        |c| kernel_tensor_scatter(c, "TensorScatterMin"),
    ),
    op(
        "GatherD",
        Category::Shape,
        "Gathers along `dim`: `out[i][j][k] = x[index[i][j][k]][j][k]` for `dim=0` (and so on); the result has `index`'s shape. `index` has the rank of `x` and is no larger in the other dimensions; negative indices count from the end.",
        Schema::ms(
            &[Override::attr("dim", AttrType::Int, None, why::TO_ATTR)],
            &[
                ("x", "The tensor to gather from."),
                ("dim", "The dimension to gather along; negative values count from the end (MindSpore takes it as an input)."),
                ("index", "Positions along `dim`, i32 or i64, of the rank of `x`, in `[-size, size)`."),
            ],
        ),
        infer_gather_d,
        Some(|b, c| {
            if !is_float_input(c, 0) {
                return vec![None, None];
            }
            let dim = ("dim", AttrValue::Int(c.attrs.int("dim")));
            vec![Some(b.prim("GatherDGradV2", &[c.inputs[0], c.inputs[1], c.dout], vec![dim])), None]
        }),
        kernel_gather_d,
    ),
    op(
        "IndexSelect",
        Category::Shape,
        "Takes the slices of `input` at positions `index` along `dim` (`ops.index_select`): dimension `dim` of the result has `len(index)` entries. MindSpore's CPU backend has no kernel for it.",
        Schema::ms(
            &[],
            &[
                ("input", "The tensor to select from, of rank at least 1."),
                ("dim", "The dimension to select along; negative values count from the end."),
                ("index", "The positions, a 1-D i32 or i64 tensor with entries in `[0, size)`."),
            ],
        ),
        infer_index_select,
        Some(|b, c| {
            if !is_float_input(c, 0) {
                return vec![None, None];
            }
            let axis = ("axis", AttrValue::Int(c.attrs.int("dim")));
            vec![Some(b.prim("_GatherGrad", &[c.inputs[0], c.inputs[1], c.dout], vec![axis])), None]
        }),
        kernel_index_select,
    ),
    op(
        "Take",
        Category::Shape,
        "The elements of the flattened `input` at the positions `index` (negative positions count from the end); the result has `index`'s shape. MindSpore's CPU backend has no kernel for it.",
        Schema::ms(
            &[],
            &[
                ("input", "The tensor to take from."),
                ("index", "Flat positions, i32 or i64, in `[-numel, numel)`."),
            ],
        ),
        infer_take,
        Some(|b, c| {
            if !is_float_input(c, 0) {
                return vec![None, None];
            }
            vec![Some(b.prim("_TakeGrad", &[c.inputs[0], c.inputs[1], c.dout], vec![])), None]
        }),
        |c| {
            let (x, index) = (c.tensor(0)?, c.tensor(1)?);
            let idx = take_positions(index, x.numel())?;
            out(take(x, index.shape().to_vec(), &idx))
        },
    ),
    op(
        "_GatherNdGrad",
        Category::Internal,
        "The gradient of GatherNd: `grad` added into zeros shaped like `x` at the slices addressed by `indices` (ScatterNd into `x`'s shape).",
        Schema::own(&[
            ParamDef::input("x", "GatherNd's `input_x`, for its shape."),
            ParamDef::input("indices", "GatherNd's `indices`."),
            ParamDef::input("grad", "The gradient of the GatherNd result."),
        ]),
        like_2_0,
        Some(|b, c| vec![None, None, Some(b.prim("GatherNd", &[c.dout, c.inputs[1]], vec![]))]),
        |c| {
            let (x, indices, g) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
            let (bases, slice) = nd_rows("_GatherNdGrad", x.shape(), indices, 1)?;
            let offsets = expand(&bases, slice);
            if g.numel() != offsets.len() {
                return Err(OpError::input(2, "`_GatherNdGrad`: the gradient does not match the gathered slices"));
            }
            out(scatter_add(g, x.shape().to_vec(), &offsets))
        },
    ),
    op(
        "GatherDGradV2",
        Category::Backward,
        "The gradient of GatherD (MindSpore's own, which its bprop emits): `dout` added into zeros shaped like `x` at the gathered positions.",
        Schema::ms(
            &[Override::attr("dim", AttrType::Int, None, why::TO_ATTR)],
            &[
                ("x", "GatherD's `x`, for its shape."),
                ("dim", "GatherD's dim."),
                ("index", "GatherD's `index`."),
                ("dout", "The gradient of the GatherD result."),
            ],
        ),
        like_2_0,
        Some(|b, c| {
            let dim = ("dim", AttrValue::Int(c.attrs.int("dim")));
            vec![None, None, Some(b.prim("GatherD", &[c.dout, c.inputs[1]], vec![dim]))]
        }),
        |c| {
            let (x, index, g) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
            let dim = crate::defs::shape::op_axis("GatherD", c.attrs.int("dim"), x.rank(), "dim")?;
            let offsets = gather_d_offsets(x.shape(), dim, index)?;
            if g.numel() != offsets.len() {
                return Err(OpError::input(2, "`GatherDGradV2`: the gradient does not match `index`"));
            }
            out(scatter_add(g, x.shape().to_vec(), &offsets))
        },
    ),
    op(
        "_TakeGrad",
        Category::Internal,
        "The gradient of Take: `grad` added into zeros shaped like `x` at the taken flat positions.",
        Schema::own(&[
            ParamDef::input("x", "Take's `input`, for its shape."),
            ParamDef::input("index", "Take's `index`."),
            ParamDef::input("grad", "The gradient of the Take result."),
        ]),
        like_2_0,
        Some(|b, c| vec![None, None, Some(b.prim("Take", &[c.dout, c.inputs[1]], vec![]))]),
        |c| {
            let (x, index, g) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
            let idx = take_positions(index, x.numel())?;
            if g.numel() != idx.len() {
                return Err(OpError::input(2, "`_TakeGrad`: the gradient does not match `index`"));
            }
            out(scatter_add(g, x.shape().to_vec(), &idx))
        },
    ),
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    let i = AttrValue::Int;
    let r = random_f64;
    let t = crate::defs::shape::split_stack::int_tuple;
    let distinct = |shape: &[usize], seed: u64| {
        // Values with no ties (for the max/min gradients).
        let n: usize = shape.iter().product();
        let KValue::Tensor(noise) = r(&[n], seed, 0.0, 0.1) else {
            unreachable!()
        };
        let v: Vec<f64> = noise
            .to_f64_vec()
            .iter()
            .enumerate()
            .map(|(k, e)| ((k * 7) % n) as f64 * 0.3 + e)
            .collect();
        KValue::Tensor(Tensor::from_f64(shape.to_vec(), v).unwrap())
    };
    vec![
        Sample::new(
            "GatherNd",
            vec![
                r(&[3, 4], 400, -1.0, 1.0),
                ints(DType::I32, &[3, 2], &[0, 1, 2, 3, 0, 1]),
            ],
        ),
        Sample::new(
            "GatherNd",
            vec![
                r(&[3, 2, 2], 401, -1.0, 1.0),
                ints(DType::I64, &[2, 1], &[2, 0]),
            ],
        ),
        Sample::new(
            "ScatterNd",
            vec![
                ints(DType::I64, &[3, 1], &[0, 2, 0]),
                r(&[3, 2], 402, -1.0, 1.0),
            ],
        )
        .attr("shape", t(&[3, 2])),
        Sample::new(
            "TensorScatterUpdate",
            vec![
                r(&[3, 4], 403, -1.0, 1.0),
                ints(DType::I32, &[2, 2], &[0, 1, 2, 3]),
                r(&[2], 404, -1.0, 1.0),
            ],
        ),
        Sample::new(
            "TensorScatterAdd",
            vec![
                r(&[3, 2], 405, -1.0, 1.0),
                ints(DType::I32, &[2, 1], &[1, 1]),
                r(&[2, 2], 406, -1.0, 1.0),
            ],
        ),
        Sample::new(
            "TensorScatterSub",
            vec![
                r(&[3, 2], 407, -1.0, 1.0),
                ints(DType::I64, &[2, 1], &[2, 0]),
                r(&[2, 2], 408, -1.0, 1.0),
            ],
        ),
        Sample::new(
            "TensorScatterMax",
            vec![
                distinct(&[4], 409),
                ints(DType::I32, &[3, 1], &[0, 2, 3]),
                distinct(&[3], 410),
            ],
        ),
        Sample::new(
            "TensorScatterMin",
            vec![
                distinct(&[2, 2], 411),
                ints(DType::I32, &[2, 2], &[0, 1, 1, 0]),
                distinct(&[2], 412),
            ],
        ),
        Sample::new(
            "GatherD",
            vec![
                r(&[3, 4], 413, -1.0, 1.0),
                ints(DType::I64, &[2, 3], &[0, 2, 1, 1, 1, -1]),
            ],
        )
        .attr("dim", i(0)),
        Sample::new(
            "GatherD",
            vec![
                r(&[2, 3], 414, -1.0, 1.0),
                ints(DType::I32, &[2, 4], &[0, 2, 2, 1, 1, 0, 0, 0]),
            ],
        )
        .attr("dim", i(-1)),
        Sample::new(
            "IndexSelect",
            vec![
                r(&[3, 4], 415, -1.0, 1.0),
                ints(DType::I64, &[3], &[3, 0, 3]),
            ],
        )
        .attr("dim", i(1)),
        Sample::new(
            "Take",
            vec![
                r(&[3, 4], 416, -1.0, 1.0),
                ints(DType::I64, &[2, 2], &[0, 11, -1, 5]),
            ],
        ),
        Sample::new(
            "_GatherNdGrad",
            vec![
                r(&[3, 2], 424, -1.0, 1.0),
                ints(DType::I64, &[2, 1], &[2, 2]),
                r(&[2, 2], 425, -1.0, 1.0),
            ],
        ),
        Sample::new(
            "GatherDGradV2",
            vec![
                r(&[3, 2], 426, -1.0, 1.0),
                ints(DType::I64, &[2, 2], &[0, 2, 2, 2]),
                r(&[2, 2], 427, -1.0, 1.0),
            ],
        )
        .attr("dim", i(0)),
        Sample::new(
            "_TakeGrad",
            vec![
                r(&[2, 2], 428, -1.0, 1.0),
                ints(DType::I64, &[3], &[3, -1, 0]),
                r(&[3], 429, -1.0, 1.0),
            ],
        ),
    ]
}
