//! Reductions and scans along one axis that produce indices: ArgMaxWithValue,
//! ArgMinWithValue, Argmin, ArgMaxExt, ArgMinExt, MaxDim, MinDim, CumSum,
//! CumProd, Cummax, Cummin (TopK, TopkExt, Sort, SortExt, ArgSort and Median
//! are in `reduce::sort`); and the internal `_IndexScatterAdd`/`_IndexGather`
//! the gradients of all of them use.
//!
//! Semantics measured on MindSpore 2.10's CPU kernels:
//! - The arg-reductions scan from the first element and move only to a
//!   strictly better one: ties give the first index, and a NaN is skipped
//!   unless it comes first. Index dtypes are MindSpore's (`ArgMaxWithValue`
//!   and `MaxDim` give `i64`, `Argmin` its `output_type`, `TopK`/`Sort` `i32`,
//!   `Cummin` `i32` but `Cummax` `i64`).
//! - `Cummax`/`Cummin` move to later equal elements (`>=`) and stay on a NaN
//!   once one appears.
//! - Sorting is stable (ties keep their order, also descending); a NaN sorts
//!   as the largest value. `TopK(sorted=false)` returns the sorted order.
//! - `Median` takes the lower median; a NaN in a group makes the result NaN at
//!   the first NaN's index unless `ignore_nan`; with `global_median` the index
//!   is 0.
//!
//! Gradients: the values of an index-producing primitive send their
//! sensitivity back to the elements they were picked from (`_IndexScatterAdd`
//! along the axis, MindSpore's one-hot/scatter bprops); `CumSum` is the
//! reversed `CumSum`, `CumProd` MindSpore's `cumsum(out·dout, reversed) / x`.

use crate::batch::BatchRule;
use crate::schema::Schema;
use crate::Traits;
use ir::{AbsVal, AttrValue, DType, Dim, Shape};
use tensor::{Buffer, Tensor};

use crate::defs::elementwise::{is_float_input, make_tensor};
use crate::defs::reduce::aggregate::{input_tensor, scan_best};
use crate::defs::shape::op_axis;
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrType, Attrs, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef, ParamDef,
};

// ---------------------------------------------------------------------------
// Helpers.

/// `(outer, n, inner)` of `shape` split at `axis` (a rank-0 tensor is one line of one).
pub(crate) fn split(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    if shape.is_empty() {
        return (1, 1, 1);
    }
    (
        shape[..axis].iter().product(),
        shape[axis],
        shape[axis + 1..].iter().product(),
    )
}

#[allow(clippy::eq_op)]
pub(crate) fn is_nan<T: PartialOrd>(v: T) -> bool {
    v != v
}

/// Runs a generic body on `x`'s data, whose result `(values, extra)` keeps the
/// storage kind of the values.
macro_rules! per_kind {
    ($x:expr, |$v:ident| $body:expr) => {
        match $x.buffer() {
            Buffer::F32($v) => {
                let (a, e) = $body;
                (Buffer::F32(a), e)
            }
            Buffer::F64($v) => {
                let (a, e) = $body;
                (Buffer::F64(a), e)
            }
            Buffer::I64($v) => {
                let (a, e) = $body;
                (Buffer::I64(a), e)
            }
            Buffer::Bool($v) => {
                let (a, e) = $body;
                (Buffer::Bool(a), e)
            }
        }
    };
}
pub(crate) use per_kind;

/// The dims of a reduction of `dims` along `axis` (kept as 1 with `keep`).
pub(crate) fn dims_without(dims: &[Dim], axis: usize, keep: bool) -> Vec<Dim> {
    let mut out = dims.to_vec();
    if out.is_empty() {
        return out;
    }
    if keep {
        out[axis] = Dim::Known(1);
    } else {
        out.remove(axis);
    }
    out
}

/// `shape` reduced along `axis`.
pub(crate) fn shape_without(shape: &[usize], axis: usize, keep: bool) -> Vec<usize> {
    let mut out = shape.to_vec();
    if out.is_empty() {
        return out;
    }
    if keep {
        out[axis] = 1;
    } else {
        out.remove(axis);
    }
    out
}

pub(crate) fn tensor_or_unranked(dtype: DType, dims: Option<Vec<Dim>>) -> AbsVal {
    AbsVal::Tensor {
        dtype,
        shape: dims.map_or(Shape::Unranked, Shape::Ranked),
    }
}

pub(crate) fn index_tensor(
    dtype: DType,
    shape: Vec<usize>,
    idx: Vec<i64>,
) -> Result<KValue, OpError> {
    Ok(KValue::Tensor(make_tensor(dtype, shape, Buffer::I64(idx))?))
}

/// The elements of one line: offsets `base + j·inner` for `j` in `0..n`.
pub(crate) fn line_offsets(
    o: usize,
    i: usize,
    n: usize,
    inner: usize,
) -> impl DoubleEndedIterator<Item = usize> + Clone {
    let base = o * n * inner + i;
    (0..n).map(move |j| base + j * inner)
}

/// The error for reducing an empty dimension.
pub(crate) fn empty_axis(op: &str, i: usize, x: &impl std::fmt::Display) -> OpError {
    OpError::input(
        0,
        format!(
            "`{op}` of an empty dimension has no value: dimension {i} of the input {x} has size 0"
        ),
    )
}

// ---------------------------------------------------------------------------
// Arg-reductions: ArgMaxWithValue, ArgMinWithValue, Argmin, ArgMaxExt,
// ArgMinExt, MaxDim, MinDim.

/// Per line: the best element and its index (MindSpore's strict scan).
fn arg_lines<T: Copy + PartialOrd>(
    v: &[T],
    (outer, n, inner): (usize, usize, usize),
    max: bool,
) -> (Vec<T>, Vec<i64>) {
    let mut vals = Vec::with_capacity(outer * inner);
    let mut idx = Vec::with_capacity(outer * inner);
    let mut line = Vec::with_capacity(n);
    for o in 0..outer {
        for i in 0..inner {
            line.clear();
            line.extend(line_offsets(o, i, n, inner).map(|p| v[p]));
            let (b, k) = if max {
                scan_best(&line, |a, b| a > b)
            } else {
                scan_best(&line, |a, b| a < b)
            };
            vals.push(b);
            idx.push(k as i64);
        }
    }
    (vals, idx)
}

/// How an arg-reduction names and reads its axis.
struct ArgSpec {
    axis: Option<i64>,
    keep: bool,
    axis_attr: &'static str,
}

fn arg_spec(op: &str, attrs: &Attrs) -> ArgSpec {
    match op {
        "ArgMaxWithValue" | "ArgMinWithValue" => ArgSpec {
            axis: Some(attrs.int("axis")),
            keep: attrs.bool("keep_dims"),
            axis_attr: "axis",
        },
        "Argmin" => ArgSpec {
            axis: Some(attrs.int("axis")),
            keep: false,
            axis_attr: "axis",
        },
        _ => ArgSpec {
            axis: attrs.get("dim").and_then(AttrValue::as_int),
            keep: attrs.bool("keepdim"),
            axis_attr: "dim",
        },
    }
}

fn is_max(op: &str) -> bool {
    matches!(op, "ArgMaxWithValue" | "ArgMaxExt" | "MaxDim")
}

/// The index dtype of an arg-reduction.
fn arg_index_dtype(op: &str, attrs: &Attrs) -> DType {
    if op == "Argmin" {
        attrs.dtype("output_type")
    } else {
        DType::I64
    }
}

fn infer_arg(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, dims) = input_tensor(call, 0, true, false)?;
    let spec = arg_spec(op, call.attrs);
    let index_dtype = arg_index_dtype(op, call.attrs);
    if !matches!(index_dtype, DType::I32 | DType::I64) {
        return Err(OpError::attr(
            "output_type",
            format!("`{op}`: `output_type` must be i32 or i64, not {index_dtype}"),
        ));
    }
    let out_dims = match (&dims, spec.axis) {
        (None, _) => None,
        (Some(_), None) => Some(Vec::new()),
        (Some(d), Some(a)) => {
            let i = op_axis(op, a, d.len(), spec.axis_attr)?;
            if d.get(i) == Some(&Dim::Known(0)) {
                return Err(empty_axis(op, i, &call.inputs[0]));
            }
            Some(dims_without(d, i, spec.keep))
        }
    };
    if let (Some(d), None) = (&dims, spec.axis) {
        if d.contains(&Dim::Known(0)) {
            return Err(OpError::input(
                0,
                format!(
                    "`{op}` of an empty tensor has no value: the input is {}",
                    call.inputs[0]
                ),
            ));
        }
    }
    let index = tensor_or_unranked(index_dtype, out_dims.clone());
    let values = tensor_or_unranked(dtype, out_dims);
    Ok(match op {
        "ArgMaxWithValue" | "ArgMinWithValue" => AbsVal::Tuple(vec![index, values]),
        "MaxDim" | "MinDim" => AbsVal::Tuple(vec![values, index]),
        _ => index,
    })
}

fn k_arg(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let spec = arg_spec(op, c.attrs);
    let (flat, axis) = match spec.axis {
        Some(a) => (x.clone(), op_axis(op, a, x.rank(), spec.axis_attr)?),
        None => (
            x.clone()
                .reshaped(vec![x.numel()])
                .map_err(|e| OpError::call(e.0))?,
            0,
        ),
    };
    let parts = split(flat.shape(), axis);
    if parts.1 == 0 {
        return Err(OpError::input(
            0,
            format!(
                "`{op}` of an empty dimension has no value (the input has shape {:?})",
                x.shape()
            ),
        ));
    }
    if x.dtype().is_bool() {
        return Err(OpError::input(
            0,
            format!("`{op}` needs a numeric tensor, not bool"),
        ));
    }
    let out_shape = match spec.axis {
        Some(_) => shape_without(x.shape(), axis, spec.keep),
        None => Vec::new(),
    };
    let max = is_max(op);
    let (vals, idx) = per_kind!(flat, |v| arg_lines(v, parts, max));
    let index = index_tensor(arg_index_dtype(op, c.attrs), out_shape.clone(), idx)?;
    let values = KValue::Tensor(make_tensor(x.dtype(), out_shape, vals)?);
    Ok(match op {
        "ArgMaxWithValue" | "ArgMinWithValue" => KValue::Tuple(vec![index, values]),
        "MaxDim" | "MinDim" => KValue::Tuple(vec![values, index]),
        _ => index,
    })
}

/// The gradient of values picked from `x` along `axis` at the indices of
/// output `index_at`: the sensitivity of output `value_at` scattered back.
pub(crate) fn picked_grad(
    b: &mut dyn GradBuilder,
    c: &GradCall,
    value_at: usize,
    index_at: usize,
    axis: i64,
    keep: bool,
) -> Vec<Option<GNode>> {
    if !is_float_input(c, 0) {
        return vec![None];
    }
    let mut dv = b.tuple_get(c.dout, value_at);
    if c.input_values[0].shape().and_then(|s| s.rank()) == Some(0) {
        return vec![Some(dv)];
    }
    let mut idx = b.tuple_get(c.out, index_at);
    if !keep {
        dv = b.prim("ExpandDims", &[dv], vec![("axis", AttrValue::Int(axis))]);
        idx = b.prim("ExpandDims", &[idx], vec![("axis", AttrValue::Int(axis))]);
    }
    vec![Some(b.prim(
        "_IndexScatterAdd",
        &[idx, dv, c.inputs[0]],
        vec![("axis", AttrValue::Int(axis))],
    ))]
}

// ---------------------------------------------------------------------------
// CumSum, CumProd, Cummax, Cummin.

/// A scan along every line: `acc = step(acc, v)` from `init`; the exclusive
/// scan writes the accumulator before the step; `reverse` runs backwards.
#[allow(clippy::too_many_arguments)]
fn scan_lines<T: Copy, A: Copy>(
    v: &[T],
    (outer, n, inner): (usize, usize, usize),
    exclusive: bool,
    reverse: bool,
    init: A,
    step: impl Fn(A, T) -> A,
    fin: impl Fn(A) -> T,
) -> Vec<T> {
    let mut out = v.to_vec();
    for o in 0..outer {
        for i in 0..inner {
            let offs = line_offsets(o, i, n, inner);
            let order: Vec<usize> = if reverse {
                offs.rev().collect()
            } else {
                offs.collect()
            };
            let mut acc = init;
            for p in order {
                let next = step(acc, v[p]);
                out[p] = fin(if exclusive { acc } else { next });
                acc = next;
            }
        }
    }
    out
}

fn cum_params(attrs: &Attrs) -> (i64, bool, bool) {
    (
        attrs.int("axis"),
        attrs.bool("exclusive"),
        attrs.bool("reverse"),
    )
}

fn infer_same_along_axis(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, dims) = input_tensor(call, 0, true, false)?;
    if let Some(d) = &dims {
        op_axis(op, call.attrs.int("axis"), d.len(), "axis")?;
    }
    let values = tensor_or_unranked(dtype, dims.clone());
    Ok(match op {
        "Cummax" => AbsVal::Tuple(vec![values, tensor_or_unranked(DType::I64, dims)]),
        "Cummin" => AbsVal::Tuple(vec![values, tensor_or_unranked(DType::I32, dims)]),
        _ => values,
    })
}

fn k_cum(c: &KernelCall, prod: bool) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let op = if prod { "CumProd" } else { "CumSum" };
    let (axis, ex, rev) = cum_params(c.attrs);
    let axis = op_axis(op, axis, x.rank(), "axis")?;
    let parts = split(x.shape(), axis);
    let buffer = match x.buffer() {
        Buffer::F32(v) => Buffer::F32(if prod {
            scan_lines(v, parts, ex, rev, 1f64, |a, e| a * e as f64, |a| a as f32)
        } else {
            scan_lines(v, parts, ex, rev, 0f64, |a, e| a + e as f64, |a| a as f32)
        }),
        Buffer::F64(v) => Buffer::F64(if prod {
            scan_lines(v, parts, ex, rev, 1.0, |a, e| a * e, |a| a)
        } else {
            scan_lines(v, parts, ex, rev, 0.0, |a, e| a + e, |a| a)
        }),
        Buffer::I64(v) => Buffer::I64(if prod {
            scan_lines(v, parts, ex, rev, 1i64, i64::wrapping_mul, |a| a)
        } else {
            scan_lines(v, parts, ex, rev, 0i64, i64::wrapping_add, |a| a)
        }),
        Buffer::Bool(_) => {
            return Err(OpError::input(
                0,
                format!("`{op}` needs a numeric tensor, not bool"),
            ))
        }
    };
    Ok(KValue::Tensor(make_tensor(
        x.dtype(),
        x.shape().to_vec(),
        buffer,
    )?))
}

fn cum_attrs(axis: i64, exclusive: bool, reverse: bool) -> Vec<(&'static str, AttrValue)> {
    vec![
        ("axis", AttrValue::Int(axis)),
        ("exclusive", AttrValue::Bool(exclusive)),
        ("reverse", AttrValue::Bool(reverse)),
    ]
}

fn grad_cumsum(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    if !is_float_input(c, 0) {
        return vec![None];
    }
    let (axis, ex, rev) = cum_params(c.attrs);
    vec![Some(b.prim("CumSum", &[c.dout], cum_attrs(axis, ex, !rev)))]
}

fn grad_cumprod(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    if !is_float_input(c, 0) {
        return vec![None];
    }
    // MindSpore: cumsum(out · dout, exclusive, !reverse) / x.
    let (axis, ex, rev) = cum_params(c.attrs);
    let t = b.prim("Mul", &[c.out, c.dout], vec![]);
    let s = b.prim("CumSum", &[t], cum_attrs(axis, ex, !rev));
    vec![Some(b.prim("RealDiv", &[s, c.inputs[0]], vec![]))]
}

/// Running maximum (or minimum) and its index: later equal elements win, and a
/// NaN sticks once it appears.
fn cum_extreme<T: Copy + PartialOrd>(
    v: &[T],
    (outer, n, inner): (usize, usize, usize),
    max: bool,
) -> (Vec<T>, Vec<i64>) {
    let mut vals = v.to_vec();
    let mut idx = vec![0i64; v.len()];
    for o in 0..outer {
        for i in 0..inner {
            let mut best: Option<(T, i64)> = None;
            for (j, p) in line_offsets(o, i, n, inner).enumerate() {
                let e = v[p];
                let take = match best {
                    None => true,
                    Some((b, _)) if is_nan(b) => false,
                    Some((b, _)) => is_nan(e) || if max { e >= b } else { e <= b },
                };
                if take {
                    best = Some((e, j as i64));
                }
                let (b, k) = best.expect("set on the first element");
                vals[p] = b;
                idx[p] = k;
            }
        }
    }
    (vals, idx)
}

fn k_cum_extreme(c: &KernelCall, max: bool) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let op = if max { "Cummax" } else { "Cummin" };
    let axis = op_axis(op, c.attrs.int("axis"), x.rank(), "axis")?;
    if x.dtype().is_bool() {
        return Err(OpError::input(
            0,
            format!("`{op}` needs a numeric tensor, not bool"),
        ));
    }
    let parts = split(x.shape(), axis);
    let (vals, idx) = per_kind!(x, |v| cum_extreme(v, parts, max));
    let shape = x.shape().to_vec();
    let index_dtype = if max { DType::I64 } else { DType::I32 };
    Ok(KValue::Tuple(vec![
        KValue::Tensor(make_tensor(x.dtype(), shape.clone(), vals)?),
        index_tensor(index_dtype, shape, idx)?,
    ]))
}

// ---------------------------------------------------------------------------
// _IndexScatterAdd, _IndexGather.

/// Checks `indices` (and `other`, of the same shape) against `like` for an
/// indexed op along `axis`: same rank, equal sizes off the axis.
fn check_indexed(op: &str, like: &[usize], indices: &[usize], axis: usize) -> Result<(), OpError> {
    let ok =
        like.len() == indices.len() && (0..like.len()).all(|d| d == axis || like[d] == indices[d]);
    if ok {
        Ok(())
    } else {
        Err(OpError::call(format!(
            "`{op}`: indices of shape {indices:?} do not fit a tensor of shape {like:?} along axis {axis}"
        )))
    }
}

fn index_of(i: i64, n: usize, op: &str) -> Result<usize, OpError> {
    if i < 0 || i as usize >= n {
        return Err(OpError::input(
            0,
            format!("`{op}`: index {i} is out of range for size {n}"),
        ));
    }
    Ok(i as usize)
}

fn k_index_scatter_add(c: &KernelCall) -> Result<KValue, OpError> {
    let (indices, updates, like) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let op = "_IndexScatterAdd";
    if like.rank() == 0 && updates.numel() == 1 && indices.numel() == 1 {
        // A scalar picked from itself (a rule that could not tell the input
        // was a scalar expanded the index and update to one element).
        index_of(indices.cast(DType::I64).to_f64_vec()[0] as i64, 1, op)?;
        let t =
            Tensor::from_f64(Vec::new(), updates.to_f64_vec()).map_err(|e| OpError::call(e.0))?;
        return Ok(KValue::Tensor(t.cast(updates.dtype())));
    }
    let axis = op_axis(op, c.attrs.int("axis"), like.rank(), "axis")?;
    check_indexed(op, like.shape(), indices.shape(), axis)?;
    if updates.shape() != indices.shape() {
        return Err(OpError::call(format!(
            "`{op}`: updates and indices differ in shape"
        )));
    }
    let (outer, n, inner) = split(like.shape(), axis);
    let k = if indices.rank() == 0 {
        1
    } else {
        indices.shape()[axis]
    };
    let idx = indices.cast(DType::I64).to_f64_vec();
    let upd = updates.to_f64_vec();
    let mut out = vec![0.0; like.numel()];
    for o in 0..outer {
        for j in 0..k {
            for i in 0..inner {
                let q = (o * k + j) * inner + i;
                let p = index_of(idx[q] as i64, n, op)?;
                out[(o * n + p) * inner + i] += upd[q];
            }
        }
    }
    let t = Tensor::from_f64(like.shape().to_vec(), out).map_err(|e| OpError::call(e.0))?;
    Ok(KValue::Tensor(t.cast(updates.dtype())))
}

fn k_index_gather(c: &KernelCall) -> Result<KValue, OpError> {
    let (x, indices) = (c.tensor(0)?, c.tensor(1)?);
    let op = "_IndexGather";
    if x.rank() == 0 && indices.numel() == 1 {
        // The adjoint of `_IndexScatterAdd` into a scalar.
        index_of(indices.cast(DType::I64).to_f64_vec()[0] as i64, 1, op)?;
        return Ok(KValue::Tensor(crate::defs::shape::take(
            x,
            indices.shape().to_vec(),
            &[0],
        )));
    }
    let axis = op_axis(op, c.attrs.int("axis"), x.rank(), "axis")?;
    check_indexed(op, x.shape(), indices.shape(), axis)?;
    let (outer, n, inner) = split(x.shape(), axis);
    let k = if indices.rank() == 0 {
        1
    } else {
        indices.shape()[axis]
    };
    let idx = indices.cast(DType::I64).to_f64_vec();
    let mut offsets = Vec::with_capacity(indices.numel());
    for o in 0..outer {
        for j in 0..k {
            for i in 0..inner {
                let p = index_of(idx[(o * k + j) * inner + i] as i64, n, op)?;
                offsets.push((o * n + p) * inner + i);
            }
        }
    }
    Ok(KValue::Tensor(crate::defs::shape::take(
        x,
        indices.shape().to_vec(),
        &offsets,
    )))
}

fn infer_index_scatter_add(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, _) = call.tensor(1)?;
    let (_, dims) = input_tensor(call, 2, false, false)?;
    Ok(tensor_or_unranked(dtype, dims))
}

fn infer_index_gather(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, _) = call.tensor(0)?;
    let (_, dims) = input_tensor(call, 1, false, false)?;
    Ok(tensor_or_unranked(dtype, dims))
}

// ---------------------------------------------------------------------------
// The table.

const fn arg_op(
    name: &'static str,
    doc: &'static str,
    params: Schema,
    output: OutputDef,
    grad: Option<crate::GradFn>,
    kernel: crate::KernelFn,
) -> OpDef {
    OpDef {
        name,
        category: Category::Reduction,
        doc,
        schema: params,
        variadic: false,
        output,
        infer: infer_arg,
        grad,
        kernel: Some(kernel),
        traits: Traits::NONE,
    }
}

const WITH_VALUE_PARAMS: Schema = Schema::ms(
    &[],
    &[
        ("input", "A numeric tensor."),
        (
            "axis",
            "The dimension to search (default 0); negative counts from the end.",
        ),
        (
            "keep_dims",
            "Keep the searched dimension with size 1 (default `false`).",
        ),
    ],
);

const EXT_ARG_PARAMS: Schema = Schema::ms(
    &[],
    &[
        ("input", "A numeric tensor."),
        ("dim", "The dimension to search; `None` (the default) searches the flattened input."),
        ("keepdim", "Keep the searched dimension with size 1 (default `false`); ignored when `dim` is `None`."),
    ],
);

const DIM_PARAMS: Schema = Schema::ms(
    &[],
    &[
        ("input", "A numeric tensor."),
        (
            "dim",
            "The dimension to reduce; negative counts from the end.",
        ),
        (
            "keepdim",
            "Keep the reduced dimension with size 1 (default `false`).",
        ),
    ],
);

const CUM_PARAMS: Schema = Schema::ms(
    &[],
    &[
        ("input", "A numeric tensor."),
        ("axis", "The dimension to scan along; negative counts from the end."),
        ("exclusive", "Leave each element out of its own result (the first result is the identity). Default `false`."),
        ("reverse", "Scan from the end of the axis (default `false`)."),
    ],
);

const CUMEXT_PARAMS: Schema = Schema::ms(
    &[],
    &[
        ("input", "A numeric tensor."),
        (
            "axis",
            "The dimension to scan along; negative counts from the end.",
        ),
    ],
);

const INDEXED_AXIS: ParamDef = ParamDef::attr(
    "axis",
    AttrType::Int,
    None,
    "The dimension the indices address; negative counts from the end.",
);

pub const OPS: &[OpDef] = &[
    arg_op(
        "ArgMaxWithValue",
        "The index and value of the maximum of `input` along `axis`: `(index, values)`, the index `i64`. Ties give the first index; a NaN counts only when it comes first (MindSpore's kernel).",
        WITH_VALUE_PARAMS,
        OutputDef::Tuple(&["index", "values"]),
        Some(|b, c| picked_grad(b, c, 1, 0, c.attrs.int("axis"), c.attrs.bool("keep_dims"))),
        |c| k_arg(c, "ArgMaxWithValue"),
    )
    .batched(BatchRule::Axes { attr: "axis", empty_is_all: false }),
    arg_op(
        "ArgMinWithValue",
        "The index and value of the minimum of `input` along `axis`: `(index, values)`, the index `i64`. Ties give the first index; a NaN counts only when it comes first (MindSpore's kernel).",
        WITH_VALUE_PARAMS,
        OutputDef::Tuple(&["index", "values"]),
        Some(|b, c| picked_grad(b, c, 1, 0, c.attrs.int("axis"), c.attrs.bool("keep_dims"))),
        |c| k_arg(c, "ArgMinWithValue"),
    )
    .batched(BatchRule::Axes { attr: "axis", empty_is_all: false }),
    arg_op(
        "Argmin",
        "The index of the minimum of `x` along `axis` (the first one if tied; a NaN counts only when it comes first), removing that dimension.",
        Schema::ms(
            &[],
            &[
                ("x", "A numeric tensor."),
                ("axis", "The dimension to search; the default -1 is the last one."),
                ("output_type", "The dtype of the indices: `i32` (the default) or `i64`."),
            ],
        ),
        OutputDef::Single,
        None,
        |c| k_arg(c, "Argmin"),
    )
    .batched(BatchRule::Axes { attr: "axis", empty_is_all: false }),
    arg_op(
        "ArgMaxExt",
        "The `i64` index of the maximum of `input` along `dim`, or of the flattened input when `dim` is `None` (`mint.argmax`; `keepdim` is then ignored). Ties give the first index.",
        EXT_ARG_PARAMS,
        OutputDef::Single,
        None,
        |c| k_arg(c, "ArgMaxExt"),
    ),
    arg_op(
        "ArgMinExt",
        "The `i64` index of the minimum of `input` along `dim`, or of the flattened input when `dim` is `None` (`mint.argmin`; `keepdim` is then ignored). Ties give the first index.",
        EXT_ARG_PARAMS,
        OutputDef::Single,
        None,
        |c| k_arg(c, "ArgMinExt"),
    ),
    arg_op(
        "MaxDim",
        "The maximum of `input` along `dim` and its `i64` index, `(values, indices)`: `ops.max(x, axis)`. Ties give the first index.",
        DIM_PARAMS,
        OutputDef::Tuple(&["values", "indices"]),
        Some(|b, c| picked_grad(b, c, 0, 1, c.attrs.int("dim"), c.attrs.bool("keepdim"))),
        |c| k_arg(c, "MaxDim"),
    ),
    arg_op(
        "MinDim",
        "The minimum of `input` along `dim` and its `i64` index, `(values, indices)`: `ops.min(x, axis)`. Ties give the first index.",
        DIM_PARAMS,
        OutputDef::Tuple(&["values", "indices"]),
        Some(|b, c| picked_grad(b, c, 0, 1, c.attrs.int("dim"), c.attrs.bool("keepdim"))),
        |c| k_arg(c, "MinDim"),
    ),
    OpDef {
        name: "CumSum",
        category: Category::Reduction,
        doc: "The cumulative sum of `input` along `axis`; `exclusive` leaves each element out of its own sum, `reverse` sums from the end. Integers wrap on overflow.",
        schema: CUM_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_same_along_axis,
        grad: Some(grad_cumsum),
        kernel: Some(|c| k_cum(c, false)),
        traits: Traits::NONE.batched(BatchRule::Axes { attr: "axis", empty_is_all: false }),
    },
    OpDef {
        name: "CumProd",
        category: Category::Reduction,
        doc: "The cumulative product of `x` along `axis`; `exclusive` leaves each element out of its own product, `reverse` multiplies from the end. Its gradient divides by `x` (MindSpore's bprop), so it is infinite or NaN where `x` is 0.",
        schema: Schema::ms(
            &[],
            &[
                ("x", "A numeric tensor."),
                ("axis", "The dimension to scan along; negative counts from the end."),
                ("exclusive", "Leave each element out of its own result (the first result is 1). Default `false`."),
                ("reverse", "Scan from the end of the axis (default `false`)."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_same_along_axis,
        grad: Some(grad_cumprod),
        kernel: Some(|c| k_cum(c, true)),
        traits: Traits::NONE.batched(BatchRule::Axes { attr: "axis", empty_is_all: false }),
    },
    OpDef {
        name: "Cummax",
        category: Category::Reduction,
        doc: "The running maximum of `input` along `axis` and where it was found, `(values, indices)` with `i64` indices; a later equal element takes over, and a NaN stays once it appears.",
        schema: CUMEXT_PARAMS,
        variadic: false,
        output: OutputDef::Tuple(&["values", "indices"]),
        infer: infer_same_along_axis,
        grad: Some(|b, c| picked_grad(b, c, 0, 1, c.attrs.int("axis"), true)),
        kernel: Some(|c| k_cum_extreme(c, true)),
        traits: Traits::NONE.batched(BatchRule::Axes { attr: "axis", empty_is_all: false }),
    },
    OpDef {
        name: "Cummin",
        category: Category::Reduction,
        doc: "The running minimum of `input` along `axis` and where it was found, `(values, indices)` with `i32` indices (as MindSpore); a later equal element takes over, and a NaN stays once it appears.",
        schema: CUMEXT_PARAMS,
        variadic: false,
        output: OutputDef::Tuple(&["values", "indices"]),
        infer: infer_same_along_axis,
        grad: Some(|b, c| picked_grad(b, c, 0, 1, c.attrs.int("axis"), true)),
        kernel: Some(|c| k_cum_extreme(c, false)),
        traits: Traits::NONE.batched(BatchRule::Axes { attr: "axis", empty_is_all: false }),
    },
    OpDef {
        name: "_IndexScatterAdd",
        category: Category::Internal,
        doc: "Zeros of `like`'s shape (and `updates`' dtype) with each element of `updates` added at the position its index in `indices` names along `axis` (the other coordinates kept): the gradient of values picked along an axis.",
        schema: Schema::own(&[
            ParamDef::input("indices", "Integer positions along `axis`, of `updates`' shape; `like`'s rank, with `like`'s sizes off the axis."),
            ParamDef::input("updates", "The values to add."),
            ParamDef::input("like", "The tensor whose shape the result has."),
            INDEXED_AXIS,
        ]),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_index_scatter_add,
        grad: Some(|b, c| {
            let axis = vec![("axis", AttrValue::Int(c.attrs.int("axis")))];
            let du = is_float_input(c, 1)
                .then(|| b.prim("_IndexGather", &[c.dout, c.inputs[0]], axis));
            vec![None, du, None]
        }),
        kernel: Some(k_index_scatter_add),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_IndexGather",
        category: Category::Internal,
        doc: "The elements of `x` at the positions `indices` names along `axis` (the other coordinates kept), in `indices`' shape: `GatherD`.",
        schema: Schema::own(&[
            ParamDef::input("x", "The tensor to read."),
            ParamDef::input("indices", "Integer positions along `axis`; `x`'s rank, with `x`'s sizes off the axis."),
            INDEXED_AXIS,
        ]),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_index_gather,
        grad: Some(|b, c| {
            let axis = vec![("axis", AttrValue::Int(c.attrs.int("axis")))];
            let dx = is_float_input(c, 0)
                .then(|| b.prim("_IndexScatterAdd", &[c.inputs[1], c.dout, c.inputs[0]], axis));
            vec![dx, None]
        }),
        kernel: Some(k_index_gather),
        traits: Traits::NONE,
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    let r = random_f64;
    let i = AttrValue::Int;
    let t = AttrValue::Bool(true);
    let mut out = vec![
        Sample::new("ArgMaxWithValue", vec![r(&[3, 4], 400, -2.0, 2.0)]),
        Sample::new("ArgMaxWithValue", vec![r(&[2, 3, 4], 401, -2.0, 2.0)])
            .attr("axis", i(-1))
            .attr("keep_dims", t.clone()),
        Sample::new("ArgMinWithValue", vec![r(&[3, 4], 402, -2.0, 2.0)]).attr("axis", i(1)),
        Sample::new("ArgMinWithValue", vec![r(&[], 403, -2.0, 2.0)]),
        Sample::new("Argmin", vec![r(&[3, 4], 404, -2.0, 2.0)]),
        Sample::new(
            "Argmin",
            vec![ints(DType::I32, &[2, 3], &[3, 1, 2, 0, 5, 0])],
        )
        .attr("axis", i(0))
        .attr("output_type", AttrValue::DType(DType::I64)),
        Sample::new("ArgMaxExt", vec![r(&[3, 4], 405, -2.0, 2.0)]),
        Sample::new("ArgMaxExt", vec![r(&[3, 4], 406, -2.0, 2.0)])
            .attr("dim", i(1))
            .attr("keepdim", t.clone()),
        Sample::new("ArgMinExt", vec![r(&[3, 4], 407, -2.0, 2.0)]).attr("keepdim", t.clone()),
        Sample::new("MaxDim", vec![r(&[3, 4], 408, -2.0, 2.0)]).attr("dim", i(0)),
        Sample::new("MaxDim", vec![r(&[2, 3, 2], 409, -2.0, 2.0)])
            .attr("dim", i(-2))
            .attr("keepdim", t.clone()),
        Sample::new("MinDim", vec![r(&[3, 4], 410, -2.0, 2.0)]).attr("dim", i(1)),
        Sample::new("CumSum", vec![r(&[3, 4], 411, -2.0, 2.0)]).attr("axis", i(1)),
        Sample::new("CumSum", vec![r(&[3, 4], 412, -2.0, 2.0)])
            .attr("axis", i(0))
            .attr("exclusive", t.clone())
            .attr("reverse", t.clone()),
        Sample::new("CumProd", vec![r(&[3, 4], 413, 0.5, 1.5)]).attr("axis", i(-1)),
        Sample::new("CumProd", vec![r(&[3, 4], 414, -1.5, -0.5)])
            .attr("axis", i(0))
            .attr("exclusive", t.clone()),
        Sample::new("CumProd", vec![r(&[2, 3], 415, 0.5, 1.5)])
            .attr("axis", i(1))
            .attr("reverse", t.clone()),
        Sample::new("Cummax", vec![r(&[3, 4], 416, -2.0, 2.0)]).attr("axis", i(1)),
        Sample::new("Cummin", vec![r(&[3, 4], 417, -2.0, 2.0)]).attr("axis", i(0)),
    ];
    out.push(
        Sample::new(
            "_IndexScatterAdd",
            vec![
                ints(DType::I64, &[2, 2], &[0, 2, 1, 1]),
                r(&[2, 2], 427, -1.0, 1.0),
                r(&[2, 3], 428, -1.0, 1.0),
            ],
        )
        .attr("axis", i(1)),
    );
    out.push(
        Sample::new(
            "_IndexGather",
            vec![
                r(&[3, 2], 429, -1.0, 1.0),
                ints(DType::I64, &[2, 2], &[0, 2, 2, 2]),
            ],
        )
        .attr("axis", i(0)),
    );
    out
}
