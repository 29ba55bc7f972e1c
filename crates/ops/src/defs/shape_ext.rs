//! More shape primitives: splitting and stacking (Split, SplitV,
//! SplitWithSize, SplitTensor, Chunk, Stack, Unstack), slicing (Slice,
//! Narrow, SliceExt), ReverseV2, Roll, Identity and the size queries (Size,
//! Rank, TensorShape, InvertPermutation). Padding and the layout primitives
//! are in `shape_ext_pad`, gathers and scatters in `shape_ext_index`, the
//! tensor makers in `shape_ext_make`.
//!
//! As in `shape`, arguments MindSpore takes as constant inputs (axes, sizes,
//! split sizes) are attributes here. Primitives that return a tuple whose
//! length depends on their attributes (`Split`) have `OutputDef::Single` and
//! a shape rule that answers an `AbsVal::Tuple`, like `Shape`.
//!
//! Gradients are MindSpore's bprops: the splits concatenate their sensitivities,
//! `Stack` and `Unstack` undo each other, the slices scatter theirs into zeros
//! (`_SliceGrad`, `_NarrowGrad`, `_SliceExtGrad`, whose own gradients slice
//! again), `ReverseV2` and `Roll` reverse and roll back.

use ir::{AbsVal, AttrValue, DType, Dim, ScalarConst, Shape};
use tensor::{Buffer, Tensor};

use crate::defs::elementwise::{infer_same, is_float_input};
use crate::defs::shape::{
    cartesian_offsets, dims_may_equal, dims_of, fmt_dims, fmt_ints, op_axis, reshape_to,
    row_strides, scatter_add, take, tensor_abs, tuple_tensors, unranked,
};
use crate::infer::InferCall;
use crate::kernel::{KArg, KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef,
    ParamDef,
};

// ---------------------------------------------------------------------------
// Helpers shared by this family's files.

pub(crate) type Grads = Vec<Option<GNode>>;

/// An attribute value for a tuple of ints.
pub(crate) fn int_tuple(v: &[i64]) -> AttrValue {
    AttrValue::Tuple(v.iter().map(|&i| AttrValue::Int(i)).collect())
}

/// The attributes of a gradient call, to pass on unchanged.
pub(crate) fn attrs_of(c: &GradCall) -> Vec<(&'static str, AttrValue)> {
    c.attrs.iter().map(|(k, v)| (*k, v.clone())).collect()
}

/// A tuple of tensors as a kernel result.
pub(crate) fn tuple_out(items: Vec<Tensor>) -> Result<KValue, OpError> {
    Ok(KValue::Tuple(
        items.into_iter().map(KValue::Tensor).collect(),
    ))
}

pub(crate) fn out(t: Tensor) -> Result<KValue, OpError> {
    Ok(KValue::Tensor(t))
}

/// The values of an integer tensor (input `i` of `op`).
pub(crate) fn int_values(t: &Tensor, op: &str, i: usize, name: &str) -> Result<Vec<i64>, OpError> {
    match t.buffer() {
        Buffer::I64(v) => Ok(v.clone()),
        _ => Err(OpError::input(
            i,
            format!("`{op}` needs an integer `{name}`, got {}", t.dtype()),
        )),
    }
}

/// Checks that input `i` has one of the dtypes `allowed` (shape rules).
pub(crate) fn require_dtype(
    call: &InferCall,
    i: usize,
    allowed: &[DType],
    what: &str,
) -> Result<DType, OpError> {
    let (dtype, _) = call.tensor(i)?;
    if !allowed.contains(&dtype) {
        return Err(OpError::input(
            i,
            format!(
                "`{}` needs `{}` of dtype {what}, but it is {}",
                call.op.name,
                call.input_name(i),
                call.inputs[i]
            ),
        ));
    }
    Ok(dtype)
}

pub(crate) const INDEX_DTYPES: &[DType] = &[DType::I32, DType::I64];

/// The source offsets of taking positions `idx` along `axis` of a tensor of
/// `shape` (every other dimension whole), and the result's shape.
pub(crate) fn axis_take_offsets(
    shape: &[usize],
    axis: usize,
    idx: &[usize],
) -> (Vec<usize>, Vec<usize>) {
    let strides = row_strides(shape);
    let per_dim: Vec<Vec<usize>> = (0..shape.len())
        .map(|d| {
            if d == axis {
                idx.iter().map(|&k| k * strides[d]).collect()
            } else {
                (0..shape[d]).map(|k| k * strides[d]).collect()
            }
        })
        .collect();
    let mut out_shape = shape.to_vec();
    out_shape[axis] = idx.len();
    (out_shape, cartesian_offsets(&per_dim))
}

/// `x`'s elements at positions `idx` along `axis`.
pub(crate) fn take_along(x: &Tensor, axis: usize, idx: &[usize]) -> Tensor {
    let (shape, offsets) = axis_take_offsets(x.shape(), axis, idx);
    take(x, shape, &offsets)
}

/// Zeros shaped like `like` (in `g`'s dtype) with `g` added at positions `idx`
/// along `axis`: the adjoint of [`take_along`].
pub(crate) fn scatter_along(
    g: &Tensor,
    like: &[usize],
    axis: usize,
    idx: &[usize],
    op: &str,
) -> Result<Tensor, OpError> {
    let (shape, offsets) = axis_take_offsets(like, axis, idx);
    if g.shape() != shape.as_slice() {
        return Err(OpError::input(
            0,
            format!(
                "`{op}`: the gradient has shape {:?}, the forward result had {shape:?}",
                g.shape()
            ),
        ));
    }
    Ok(scatter_add(g, like.to_vec(), &offsets))
}

/// Calls another primitive's kernel (shape rule first), for kernels that are
/// compositions.
pub(crate) fn run_prim(
    name: &str,
    inputs: &[KValue],
    attrs: Vec<(&'static str, AttrValue)>,
) -> Result<KValue, OpError> {
    crate::eager::call(name, inputs, attrs)
}

/// A tuple of `n` tensors of one abstract value.
fn tuple_of(n: usize, item: AbsVal) -> AbsVal {
    AbsVal::Tuple(vec![item; n])
}

// ---------------------------------------------------------------------------
// Split, SplitV, SplitWithSize, SplitTensor, Chunk

/// How a split primitive divides its dimension of size `n`: the sizes of the
/// pieces, or an error naming the attribute at fault.
fn split_sizes(op: &str, attrs: &crate::Attrs, n: i64) -> Result<Vec<i64>, OpError> {
    match op {
        "Split" => {
            let k = attrs.int("output_num");
            if n % k != 0 {
                return Err(OpError::attr(
                    "output_num",
                    format!("`Split`: the dimension to split has size {n}, not divisible by `output_num` {k}"),
                ));
            }
            Ok(vec![n / k; k as usize])
        }
        "SplitV" => {
            let mut sizes = attrs.ints("size_splits").unwrap_or_default();
            if let Some(i) = sizes.iter().position(|&s| s == -1) {
                let rest: i64 = sizes.iter().filter(|&&s| s != -1).sum();
                if rest > n {
                    return Err(OpError::attr(
                        "size_splits",
                        format!(
                            "`SplitV`: `size_splits` {} adds up to {rest}, more than the size {n} of the dimension",
                            fmt_ints(&sizes)
                        ),
                    ));
                }
                sizes[i] = n - rest;
            }
            let sum: i64 = sizes.iter().sum();
            if sum != n {
                return Err(OpError::attr(
                    "size_splits",
                    format!(
                        "`SplitV`: `size_splits` {} adds up to {sum}, but the dimension has size {n}",
                        fmt_ints(&sizes)
                    ),
                ));
            }
            Ok(sizes)
        }
        "SplitWithSize" => {
            let sizes = attrs.ints("split_size").unwrap_or_default();
            let sum: i64 = sizes.iter().sum();
            if sum != n {
                return Err(OpError::attr(
                    "split_size",
                    format!(
                        "`SplitWithSize`: `split_size` {} adds up to {sum}, but the dimension has size {n}",
                        fmt_ints(&sizes)
                    ),
                ));
            }
            Ok(sizes)
        }
        "SplitTensor" => {
            let s = attrs.int("split_size");
            let count = (n + s - 1) / s;
            Ok((0..count).map(|i| s.min(n - i * s)).collect())
        }
        _ => {
            // Chunk: pieces of ceil(n / chunks); an empty dimension gives
            // `chunks` empty pieces, as in MindSpore.
            let chunks = attrs.int("chunks");
            if n == 0 {
                return Ok(vec![0; chunks as usize]);
            }
            let s = (n + chunks - 1) / chunks;
            let count = (n + s - 1) / s;
            Ok((0..count).map(|i| s.min(n - i * s)).collect())
        }
    }
}

/// The split axis attribute of each split primitive.
fn split_axis_name(op: &str) -> &'static str {
    match op {
        "Split" => "axis",
        "SplitV" => "split_dim",
        _ => "dim",
    }
}

/// Checks the attributes of a split primitive that do not depend on the input.
fn check_split_attrs(op: &str, attrs: &crate::Attrs) -> Result<(), OpError> {
    let positive = |name: &'static str| -> Result<i64, OpError> {
        let v = attrs.int(name);
        if v <= 0 {
            return Err(OpError::attr(
                name,
                format!("`{op}`: `{name}` must be positive, got {v}"),
            ));
        }
        Ok(v)
    };
    match op {
        "Split" => {
            positive("output_num")?;
        }
        "SplitV" => {
            let num = positive("num_split")?;
            let sizes = attrs.ints("size_splits").unwrap_or_default();
            if sizes.len() as i64 != num {
                return Err(OpError::attr(
                    "size_splits",
                    format!(
                        "`SplitV`: `size_splits` {} has {} entries but `num_split` is {num}",
                        fmt_ints(&sizes),
                        sizes.len()
                    ),
                ));
            }
            if sizes.iter().filter(|&&s| s == -1).count() > 1
                || sizes.iter().any(|&s| s != -1 && s < 1)
            {
                return Err(OpError::attr(
                    "size_splits",
                    format!(
                        "`SplitV`: the entries of `size_splits` {} must be positive, except at most one -1 (inferred)",
                        fmt_ints(&sizes)
                    ),
                ));
            }
        }
        "SplitWithSize" => {
            let sizes = attrs.ints("split_size").unwrap_or_default();
            if sizes.is_empty() || sizes.iter().any(|&s| s < 0) {
                return Err(OpError::attr(
                    "split_size",
                    format!(
                        "`SplitWithSize`: `split_size` {} must be a non-empty tuple of sizes >= 0",
                        fmt_ints(&sizes)
                    ),
                ));
            }
        }
        "SplitTensor" => {
            positive("split_size")?;
        }
        _ => {
            positive("chunks")?;
        }
    }
    Ok(())
}

fn infer_split(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    check_split_attrs(op, call.attrs)?;
    let (dtype, dims) = dims_of(call, 0)?;
    let axis_name = split_axis_name(op);
    // The number of pieces, when the attributes alone decide it.
    let fixed = match op {
        "Split" => Some(call.attrs.int("output_num") as usize),
        "SplitV" => Some(call.attrs.int("num_split") as usize),
        "SplitWithSize" => Some(call.attrs.ints("split_size").unwrap_or_default().len()),
        _ => None,
    };
    let Some(dims) = dims else {
        return Ok(match fixed {
            Some(n) => tuple_of(n, unranked(dtype)),
            None => AbsVal::Any,
        });
    };
    if dims.is_empty() {
        return Err(OpError::input(
            0,
            format!("`{op}` cannot split a scalar (rank 0 tensor)"),
        ));
    }
    let axis = op_axis(op, call.attrs.int(axis_name), dims.len(), axis_name)?;
    let piece = |size: Dim| {
        let mut d = dims.clone();
        d[axis] = size;
        tensor_abs(dtype, d)
    };
    match &dims[axis] {
        Dim::Known(n) => {
            let sizes = split_sizes(op, call.attrs, *n)?;
            Ok(AbsVal::Tuple(
                sizes.into_iter().map(|s| piece(Dim::Known(s))).collect(),
            ))
        }
        other => Ok(match (op, fixed) {
            ("Split", Some(1)) => tuple_of(1, piece(other.clone())),
            ("SplitWithSize", Some(_)) => AbsVal::Tuple(
                call.attrs
                    .ints("split_size")
                    .unwrap_or_default()
                    .into_iter()
                    .map(|s| piece(Dim::Known(s)))
                    .collect(),
            ),
            ("SplitV", Some(_)) => {
                let sizes = call.attrs.ints("size_splits").unwrap_or_default();
                AbsVal::Tuple(
                    sizes
                        .into_iter()
                        .map(|s| piece(if s == -1 { Dim::Unknown } else { Dim::Known(s) }))
                        .collect(),
                )
            }
            (_, Some(n)) => tuple_of(n, piece(Dim::Unknown)),
            (_, None) => AbsVal::Any,
        }),
    }
}

fn kernel_split(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    check_split_attrs(op, c.attrs)?;
    let x = c.tensor(0)?;
    if x.rank() == 0 {
        return Err(OpError::input(0, format!("`{op}` cannot split a scalar")));
    }
    let axis_name = split_axis_name(op);
    let axis = op_axis(op, c.attrs.int(axis_name), x.rank(), axis_name)?;
    let sizes = split_sizes(op, c.attrs, x.shape()[axis] as i64)?;
    let mut start = 0usize;
    let mut pieces = Vec::with_capacity(sizes.len());
    for s in sizes {
        let s = s as usize;
        let idx: Vec<usize> = (start..start + s).collect();
        pieces.push(take_along(x, axis, &idx));
        start += s;
    }
    tuple_out(pieces)
}

/// The gradient of every split: the sensitivities concatenated along the axis.
fn grad_split(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    if !is_float_input(c, 0) {
        return vec![None];
    }
    let axis_name = match c.attrs.get("axis") {
        Some(_) => "axis",
        None if c.attrs.get("split_dim").is_some() => "split_dim",
        None => "dim",
    };
    let axis = c.attrs.int(axis_name);
    vec![Some(b.prim(
        "Concat",
        &[c.dout],
        vec![("axis", AttrValue::Int(axis))],
    ))]
}

// ---------------------------------------------------------------------------
// Stack, Unstack

/// The dtype, dimensions (`None`: unranked) and count of a tuple input's tensors.
type TupleItems = (DType, Option<Vec<Dim>>, usize);

/// The dtype and dimensions shared by the elements of a tuple input.
fn tuple_items(call: &InferCall, i: usize) -> Result<Option<TupleItems>, OpError> {
    let op = call.op.name;
    let items = match &call.inputs[i] {
        AbsVal::Any => return Ok(None),
        AbsVal::Tuple(items) => items,
        other => {
            return Err(OpError::input(
                i,
                format!("`{op}` takes a tuple of tensors, not {other}"),
            ))
        }
    };
    if items.iter().any(|v| matches!(v, AbsVal::Any)) {
        return Ok(None);
    }
    if items.is_empty() {
        return Err(OpError::input(
            i,
            format!("`{op}` needs at least one tensor, got an empty tuple"),
        ));
    }
    let mut dtype = None;
    let mut dims: Option<Vec<Dim>> = None;
    for (k, item) in items.iter().enumerate() {
        let (d, s) = match item {
            AbsVal::Tensor { dtype, shape } => (*dtype, shape.clone()),
            AbsVal::Scalar { dtype, .. } => (*dtype, Shape::scalar()),
            other => {
                return Err(OpError::input(
                    i,
                    format!("`{op}`: element {k} of the tuple must be a tensor, not {other}"),
                ))
            }
        };
        match dtype {
            None => dtype = Some(d),
            Some(first) if first != d => {
                return Err(OpError::input(
                    i,
                    format!(
                    "`{op}` needs tensors of one dtype: element 0 is {first}, element {k} is {d}"
                ),
                ))
            }
            _ => {}
        }
        if let Some(s) = s.dims() {
            match &mut dims {
                None => dims = Some(s.to_vec()),
                Some(prev) => {
                    if prev.len() != s.len()
                        || prev.iter().zip(s).any(|(a, b)| !dims_may_equal(a, b))
                    {
                        return Err(OpError::input(
                            i,
                            format!(
                                "`{op}` needs tensors of one shape: {} and element {k} {}",
                                fmt_dims(prev),
                                fmt_dims(s)
                            ),
                        ));
                    }
                    for (a, b) in prev.iter_mut().zip(s) {
                        if a.known().is_none() && b.known().is_some() {
                            *a = b.clone();
                        }
                    }
                }
            }
        }
    }
    Ok(Some((dtype.expect("a non-empty tuple"), dims, items.len())))
}

fn infer_stack(call: &InferCall) -> Result<AbsVal, OpError> {
    let Some((dtype, dims, n)) = tuple_items(call, 0)? else {
        return Ok(AbsVal::Any);
    };
    let Some(mut dims) = dims else {
        return Ok(unranked(dtype));
    };
    let axis = op_axis("Stack", call.attrs.int("axis"), dims.len() + 1, "axis")?;
    dims.insert(axis, Dim::Known(n as i64));
    Ok(tensor_abs(dtype, dims))
}

fn kernel_stack(c: &KernelCall) -> Result<KValue, OpError> {
    let parts = tuple_tensors(&c.inputs[0], 0)?;
    let first = parts
        .first()
        .ok_or_else(|| OpError::input(0, "`Stack` needs at least one tensor"))?;
    let axis = op_axis("Stack", c.attrs.int("axis"), first.rank() + 1, "axis")?;
    let mut expanded = Vec::with_capacity(parts.len());
    for t in &parts {
        if t.shape() != first.shape() {
            return Err(OpError::input(
                0,
                format!(
                    "`Stack` needs tensors of one shape: {:?} and {:?}",
                    first.shape(),
                    t.shape()
                ),
            ));
        }
        let mut shape = t.shape().to_vec();
        shape.insert(axis, 1);
        expanded.push(KValue::Tensor(reshape_to(t, shape)?));
    }
    run_prim(
        "Concat",
        &[KValue::Tuple(expanded)],
        vec![("axis", AttrValue::Int(axis as i64))],
    )
}

fn infer_unstack(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = dims_of(call, 0)?;
    let num = call.attrs.get("num").and_then(AttrValue::as_int);
    if let Some(n) = num {
        if n < 1 {
            return Err(OpError::attr(
                "num",
                format!("`Unstack`: `num` must be positive, got {n}"),
            ));
        }
    }
    let Some(mut dims) = dims else {
        return Ok(match num {
            Some(n) => tuple_of(n as usize, unranked(dtype)),
            None => AbsVal::Any,
        });
    };
    if dims.is_empty() {
        return Err(OpError::input(
            0,
            "`Unstack` needs `input_x` of rank at least 1, got a scalar",
        ));
    }
    let axis = op_axis("Unstack", call.attrs.int("axis"), dims.len(), "axis")?;
    let size = dims.remove(axis);
    // MindSpore takes the count from the shape; `num` only stands in for an
    // unknown size.
    let count = match (size, num) {
        (Dim::Known(n), _) => n as usize,
        (_, Some(n)) => n as usize,
        _ => return Ok(AbsVal::Any),
    };
    Ok(tuple_of(count, tensor_abs(dtype, dims)))
}

fn kernel_unstack(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    if x.rank() == 0 {
        return Err(OpError::input(
            0,
            "`Unstack` needs a tensor of rank at least 1",
        ));
    }
    let axis = op_axis("Unstack", c.attrs.int("axis"), x.rank(), "axis")?;
    let mut shape = x.shape().to_vec();
    let n = shape.remove(axis);
    let pieces = (0..n)
        .map(|i| reshape_to(&take_along(x, axis, &[i]), shape.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    tuple_out(pieces)
}

/// Whether a tuple input holds any float tensor (or is unknown).
fn tuple_has_float(c: &GradCall, i: usize) -> bool {
    match c.input_values.get(i) {
        Some(AbsVal::Tuple(items)) => items.iter().any(|v| v.dtype().is_none_or(DType::is_float)),
        _ => true,
    }
}

// ---------------------------------------------------------------------------
// Slice, Narrow, SliceExt

/// The start and size of each dimension of a `Slice` of `dims`; an error
/// names `begin` or `size`. Unknown dimensions give unknown sizes for -1.
fn slice_box(begin: &[i64], size: &[i64], dims: &[Dim]) -> Result<Vec<Dim>, OpError> {
    let rank = dims.len();
    if begin.len() != rank {
        return Err(OpError::attr(
            "begin",
            format!(
                "`Slice`: `begin` {} has {} entries but the input has rank {rank}",
                fmt_ints(begin),
                begin.len()
            ),
        ));
    }
    if size.len() != rank {
        return Err(OpError::attr(
            "size",
            format!(
                "`Slice`: `size` {} has {} entries but the input has rank {rank}",
                fmt_ints(size),
                size.len()
            ),
        ));
    }
    let mut out = Vec::with_capacity(rank);
    for d in 0..rank {
        let (b, s) = (begin[d], size[d]);
        if b < 0 {
            return Err(OpError::attr(
                "begin",
                format!(
                    "`Slice`: `begin` {} has the negative entry {b}",
                    fmt_ints(begin)
                ),
            ));
        }
        if s < -1 {
            return Err(OpError::attr(
                "size",
                format!(
                    "`Slice`: `size` {} has the invalid entry {s} (sizes are >= 0, or -1 for the rest)",
                    fmt_ints(size)
                ),
            ));
        }
        out.push(match &dims[d] {
            Dim::Known(n) => {
                let s = if s == -1 { n - b } else { s };
                if b + s > *n || s < 0 {
                    return Err(OpError::attr(
                        "size",
                        format!(
                            "`Slice`: `begin` {} plus `size` {} passes the end of dimension {d} (size {n}) of the input {}",
                            fmt_ints(begin),
                            fmt_ints(size),
                            fmt_dims(dims)
                        ),
                    ));
                }
                Dim::Known(s)
            }
            other if s == -1 && b == 0 => other.clone(),
            _ if s == -1 => Dim::Unknown,
            _ => Dim::Known(s),
        });
    }
    Ok(out)
}

/// The source offsets of a `Slice` of `shape` and the result shape.
fn slice_offsets(
    attrs: &crate::Attrs,
    shape: &[usize],
) -> Result<(Vec<usize>, Vec<usize>), OpError> {
    let begin = attrs.ints("begin").unwrap_or_default();
    let size = attrs.ints("size").unwrap_or_default();
    let dims: Vec<Dim> = shape.iter().map(|&n| Dim::Known(n as i64)).collect();
    let sizes = slice_box(&begin, &size, &dims)?;
    let strides = row_strides(shape);
    let mut out_shape = Vec::with_capacity(shape.len());
    let per_dim: Vec<Vec<usize>> = (0..shape.len())
        .map(|d| {
            let s = sizes[d].known().unwrap_or(0) as usize;
            out_shape.push(s);
            let b = begin[d] as usize;
            (b..b + s).map(|k| k * strides[d]).collect()
        })
        .collect();
    Ok((out_shape, cartesian_offsets(&per_dim)))
}

fn infer_slice(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = dims_of(call, 0)?;
    let begin = call.attrs.ints("begin").unwrap_or_default();
    let size = call.attrs.ints("size").unwrap_or_default();
    let Some(dims) = dims else {
        let dims = size
            .iter()
            .map(|&s| if s < 0 { Dim::Unknown } else { Dim::Known(s) })
            .collect();
        return Ok(tensor_abs(dtype, dims));
    };
    Ok(tensor_abs(dtype, slice_box(&begin, &size, &dims)?))
}

/// `Narrow`'s dimension, normalised start and length, checked against `shape`.
fn narrow_range(attrs: &crate::Attrs, shape: &[usize]) -> Result<(usize, usize, usize), OpError> {
    if shape.is_empty() {
        return Err(OpError::input(0, "`Narrow` cannot narrow a scalar"));
    }
    let axis = op_axis("Narrow", attrs.int("dim"), shape.len(), "dim")?;
    let n = shape[axis] as i64;
    let (start, length) = (attrs.int("start"), attrs.int("length"));
    let s = if start < 0 { start + n } else { start };
    if s < 0 || s > n {
        return Err(OpError::attr(
            "start",
            format!("`Narrow`: `start` {start} is out of range for dimension {axis} of size {n}"),
        ));
    }
    if length < 0 || s + length > n {
        return Err(OpError::attr(
            "length",
            format!("`Narrow`: `start` {start} plus `length` {length} exceeds the size {n} of dimension {axis}"),
        ));
    }
    Ok((axis, s as usize, length as usize))
}

fn infer_narrow(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = dims_of(call, 0)?;
    let Some(mut dims) = dims else {
        return Ok(unranked(dtype));
    };
    if dims.is_empty() {
        return Err(OpError::input(
            0,
            "`Narrow` cannot narrow a scalar (rank 0 tensor)",
        ));
    }
    let axis = op_axis("Narrow", call.attrs.int("dim"), dims.len(), "dim")?;
    if let Dim::Known(n) = dims[axis] {
        let shape: Vec<usize> = dims
            .iter()
            .map(|d| d.known().unwrap_or(0) as usize)
            .collect();
        let mut shape = shape;
        shape[axis] = n as usize;
        narrow_range(call.attrs, &shape)?;
    } else if call.attrs.int("length") < 0 {
        return Err(OpError::attr(
            "length",
            format!(
                "`Narrow`: `length` must be >= 0, got {}",
                call.attrs.int("length")
            ),
        ));
    }
    dims[axis] = Dim::Known(call.attrs.int("length"));
    Ok(tensor_abs(dtype, dims))
}

/// `SliceExt`'s dimension and the positions it takes, for `shape`.
fn slice_ext_range(attrs: &crate::Attrs, shape: &[usize]) -> Result<(usize, Vec<usize>), OpError> {
    if shape.is_empty() {
        return Err(OpError::input(0, "`SliceExt` cannot slice a scalar"));
    }
    let axis = op_axis("SliceExt", attrs.int("dim"), shape.len(), "dim")?;
    let step = attrs.int("step");
    if step <= 0 {
        return Err(OpError::attr(
            "step",
            format!("`SliceExt`: `step` must be positive, got {step}"),
        ));
    }
    let n = shape[axis] as i64;
    let clamp = |v: i64| (if v < 0 { v + n } else { v }).clamp(0, n);
    let (start, end) = (clamp(attrs.int("start")), clamp(attrs.int("end")));
    let idx = (start..end.max(start))
        .step_by(step as usize)
        .map(|i| i as usize)
        .collect();
    Ok((axis, idx))
}

fn infer_slice_ext(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = dims_of(call, 0)?;
    let Some(mut dims) = dims else {
        return Ok(unranked(dtype));
    };
    if dims.is_empty() {
        return Err(OpError::input(
            0,
            "`SliceExt` cannot slice a scalar (rank 0 tensor)",
        ));
    }
    let axis = op_axis("SliceExt", call.attrs.int("dim"), dims.len(), "dim")?;
    let step = call.attrs.int("step");
    if step <= 0 {
        return Err(OpError::attr(
            "step",
            format!("`SliceExt`: `step` must be positive, got {step}"),
        ));
    }
    dims[axis] = match dims[axis] {
        Dim::Known(n) => {
            let mut shape = vec![1usize; dims.len()];
            shape[axis] = n as usize;
            Dim::Known(slice_ext_range(call.attrs, &shape)?.1.len() as i64)
        }
        _ => Dim::Unknown,
    };
    Ok(tensor_abs(dtype, dims))
}

/// A tensor with the dtype of input `d` and the shape of input `s`.
pub(crate) fn like(call: &InferCall, d: usize, s: usize) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let dtype = call.inputs[d]
        .dtype()
        .ok_or_else(|| OpError::input(d, format!("`{}` needs a tensor", call.op.name)))?;
    let shape = call.inputs[s].shape().unwrap_or(Shape::Unranked);
    Ok(AbsVal::Tensor { dtype, shape })
}

fn like_0_1(call: &InferCall) -> Result<AbsVal, OpError> {
    like(call, 0, 1)
}

// ---------------------------------------------------------------------------
// ReverseV2, Roll

/// `ReverseV2`'s axes, normalised and checked for duplicates.
fn reverse_axes(axes: &[i64], rank: usize) -> Result<Vec<usize>, OpError> {
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let i = op_axis("ReverseV2", a, rank, "axis")?;
        if out.contains(&i) {
            return Err(OpError::attr(
                "axis",
                format!(
                    "`ReverseV2`: `axis` {} names dimension {i} twice",
                    fmt_ints(axes)
                ),
            ));
        }
        out.push(i);
    }
    Ok(out)
}

fn infer_reverse(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (_, dims) = dims_of(call, 0)?;
    if let Some(dims) = dims {
        reverse_axes(&call.attrs.ints("axis").unwrap_or_default(), dims.len())?;
    }
    infer_same(call)
}

fn kernel_reverse(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let axes = reverse_axes(&c.attrs.ints("axis").unwrap_or_default(), x.rank())?;
    let shape = x.shape();
    let strides = row_strides(shape);
    let per_dim: Vec<Vec<usize>> = (0..shape.len())
        .map(|d| {
            let n = shape[d];
            if axes.contains(&d) {
                (0..n).map(|k| (n - 1 - k) * strides[d]).collect()
            } else {
                (0..n).map(|k| k * strides[d]).collect()
            }
        })
        .collect();
    out(take(x, shape.to_vec(), &cartesian_offsets(&per_dim)))
}

/// `Roll`'s shift per dimension (`None` for `dims=None`: the flattened tensor).
fn roll_plan(attrs: &crate::Attrs, rank: usize) -> Result<Option<Vec<(usize, i64)>>, OpError> {
    let shifts = attrs.ints("shifts").unwrap_or_default();
    match attrs.ints("dims") {
        None => {
            if shifts.len() != 1 {
                return Err(OpError::attr(
                    "shifts",
                    format!(
                        "`Roll` without `dims` rolls the flattened tensor and needs one shift, got `shifts` {}",
                        fmt_ints(&shifts)
                    ),
                ));
            }
            Ok(None)
        }
        Some(dims) => {
            if dims.len() != shifts.len() || dims.is_empty() {
                return Err(OpError::attr(
                    "dims",
                    format!(
                        "`Roll` needs one entry of `dims` {} per entry of `shifts` {}",
                        fmt_ints(&dims),
                        fmt_ints(&shifts)
                    ),
                ));
            }
            dims.iter()
                .zip(&shifts)
                .map(|(&d, &s)| Ok((op_axis("Roll", d, rank, "dims")?, s)))
                .collect::<Result<Vec<_>, _>>()
                .map(Some)
        }
    }
}

fn infer_roll(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (_, dims) = dims_of(call, 0)?;
    match dims {
        Some(dims) => {
            roll_plan(call.attrs, dims.len())?;
        }
        None => {
            roll_plan(call.attrs, usize::MAX >> 1)?;
        }
    }
    infer_same(call)
}

fn kernel_roll(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let shape = x.shape();
    let rolled = |n: usize, shift: i64| -> Vec<usize> {
        // Result position k reads position (k - shift) mod n.
        let n_i = n as i64;
        (0..n)
            .map(|k| {
                if n == 0 {
                    0
                } else {
                    (k as i64 - shift).rem_euclid(n_i) as usize
                }
            })
            .collect()
    };
    match roll_plan(c.attrs, x.rank())? {
        None => {
            let shift = c.attrs.ints("shifts").unwrap_or_default()[0];
            let offsets = rolled(x.numel(), shift);
            out(take(x, shape.to_vec(), &offsets))
        }
        Some(plan) => {
            let mut total = vec![0i64; shape.len()];
            for (d, s) in plan {
                total[d] += s;
            }
            let strides = row_strides(shape);
            let per_dim: Vec<Vec<usize>> = (0..shape.len())
                .map(|d| {
                    rolled(shape[d], total[d])
                        .into_iter()
                        .map(|k| k * strides[d])
                        .collect()
                })
                .collect();
            out(take(x, shape.to_vec(), &cartesian_offsets(&per_dim)))
        }
    }
}

// ---------------------------------------------------------------------------
// Size queries and InvertPermutation

fn infer_size(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (_, shape) = call.tensor(0)?;
    let value = match call.op.name {
        "Rank" => shape.rank().map(|r| r as i64),
        _ => shape.numel(),
    };
    Ok(AbsVal::Scalar {
        dtype: DType::I64,
        value: value.map(ScalarConst::Int),
        weak: false,
    })
}

fn infer_tensor_shape(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (_, shape) = call.tensor(0)?;
    let rank = shape.rank().map_or(Dim::Unknown, |r| Dim::Known(r as i64));
    Ok(tensor_abs(DType::I64, vec![rank]))
}

/// The constant ints of a tuple of scalars (`None` where one is not known).
fn const_ints(items: &[AbsVal]) -> Option<Vec<i64>> {
    items
        .iter()
        .map(|v| match v.const_value() {
            Some(ScalarConst::Int(i)) => Some(i),
            _ => None,
        })
        .collect()
}

fn invert_permutation(p: &[i64]) -> Result<Vec<i64>, OpError> {
    let n = p.len();
    let mut out = vec![-1i64; n];
    for (i, &v) in p.iter().enumerate() {
        if v < 0 || v as usize >= n || out[v as usize] != -1 {
            return Err(OpError::input(
                0,
                format!(
                    "`InvertPermutation` needs a permutation of 0..{n}, got {}",
                    fmt_ints(p)
                ),
            ));
        }
        out[v as usize] = i as i64;
    }
    Ok(out)
}

fn infer_invert_permutation(call: &InferCall) -> Result<AbsVal, OpError> {
    let items = match &call.inputs[0] {
        AbsVal::Any => return Ok(AbsVal::Any),
        AbsVal::Tuple(items) => items,
        // A 1-D integer tensor gives a tensor.
        AbsVal::Tensor { dtype, shape } if dtype.is_int() && shape.rank() == Some(1) => {
            return Ok(call.inputs[0].clone())
        }
        other => {
            return Err(OpError::input(
                0,
                format!("`InvertPermutation` takes a tuple of ints, not {other}"),
            ))
        }
    };
    for (k, item) in items.iter().enumerate() {
        match item {
            AbsVal::Scalar { dtype, .. } if dtype.is_int() => {}
            AbsVal::Tensor { dtype, shape } if dtype.is_int() && shape.rank() == Some(0) => {}
            AbsVal::Any => {}
            other => {
                return Err(OpError::input(
                    0,
                    format!("`InvertPermutation`: element {k} must be an int, not {other}"),
                ))
            }
        }
    }
    let scalar = |value: Option<i64>| AbsVal::Scalar {
        dtype: DType::I64,
        value: value.map(ScalarConst::Int),
        weak: false,
    };
    Ok(match const_ints(items) {
        Some(p) => AbsVal::Tuple(
            invert_permutation(&p)?
                .into_iter()
                .map(|v| scalar(Some(v)))
                .collect(),
        ),
        None => AbsVal::Tuple(vec![scalar(None); items.len()]),
    })
}

fn kernel_invert_permutation(c: &KernelCall) -> Result<KValue, OpError> {
    let items = match &c.inputs[0] {
        KArg::Tuple(items) => tuple_tensors(&KArg::Tuple(items), 0)?,
        KArg::Tensor(t) if t.rank() == 1 => {
            let p = int_values(t, "InvertPermutation", 0, "input_x")?;
            let inv = invert_permutation(&p)?;
            return out(Tensor::from_i64(t.dtype(), vec![inv.len()], inv)
                .map_err(|e| OpError::call(e.0))?);
        }
        KArg::Tensor(_) => {
            return Err(OpError::input(
                0,
                "`InvertPermutation` takes a tuple of ints",
            ))
        }
    };
    let mut p = Vec::with_capacity(items.len());
    for t in items {
        if t.rank() != 0 || !t.dtype().is_int() {
            return Err(OpError::input(
                0,
                "`InvertPermutation` takes a tuple of ints",
            ));
        }
        p.push(t.to_f64_vec()[0] as i64);
    }
    Ok(KValue::Tuple(
        invert_permutation(&p)?
            .into_iter()
            .map(|v| KValue::Tensor(Tensor::scalar(DType::I64, v as f64)))
            .collect(),
    ))
}

// ---------------------------------------------------------------------------
// Internal gradient primitives of the slices.

fn kernel_slice_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (g, like) = (c.tensor(0)?, c.tensor(1)?);
    let (shape, offsets) = slice_offsets(c.attrs, like.shape())?;
    if g.shape() != shape.as_slice() {
        return Err(OpError::input(
            0,
            format!(
                "`_SliceGrad`: the gradient has shape {:?}, the slice had {shape:?}",
                g.shape()
            ),
        ));
    }
    out(scatter_add(g, like.shape().to_vec(), &offsets))
}

fn kernel_narrow_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (g, like) = (c.tensor(0)?, c.tensor(1)?);
    let (axis, start, len) = narrow_range(c.attrs, like.shape())?;
    let idx: Vec<usize> = (start..start + len).collect();
    out(scatter_along(g, like.shape(), axis, &idx, "_NarrowGrad")?)
}

fn kernel_slice_ext_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (g, like) = (c.tensor(0)?, c.tensor(1)?);
    let (axis, idx) = slice_ext_range(c.attrs, like.shape())?;
    out(scatter_along(g, like.shape(), axis, &idx, "_SliceExtGrad")?)
}

/// A gradient rule that scatters `dout` into zeros like `x` with internal
/// primitive `name` (the same attributes).
fn scatter_back(b: &mut dyn GradBuilder, c: &GradCall, name: &str) -> Grads {
    if !is_float_input(c, 0) {
        return vec![None];
    }
    vec![Some(b.prim(name, &[c.dout, c.inputs[0]], attrs_of(c)))]
}

/// The gradient of an internal scatter primitive: the forward slice `name`
/// of its sensitivity; `like` gets none.
fn slice_again(b: &mut dyn GradBuilder, c: &GradCall, name: &str) -> Grads {
    vec![Some(b.prim(name, &[c.dout], attrs_of(c))), None]
}

// ---------------------------------------------------------------------------
// The table.

const X: ParamDef = ParamDef::input("input_x", "The input tensor (any dtype).");
const INPUT: ParamDef = ParamDef::input("input", "The input tensor (any dtype).");

const GRAD_LIKE: [ParamDef; 2] = [
    ParamDef::input("grad", "The gradient of the forward result."),
    ParamDef::input("like", "The forward input, for its shape."),
];

const fn op(
    name: &'static str,
    category: Category,
    doc: &'static str,
    params: &'static [ParamDef],
    infer: crate::InferFn,
    grad: Option<crate::GradFn>,
    kernel: crate::KernelFn,
) -> OpDef {
    OpDef {
        name,
        category,
        doc,
        params,
        variadic: false,
        output: OutputDef::Single,
        infer,
        grad,
        kernel: Some(kernel),
    }
}

pub const OPS: &[OpDef] = &[
    op(
        "Split",
        Category::Shape,
        "Splits `input_x` along `axis` into `output_num` equal pieces, returned as a tuple; the size of that dimension must be divisible by `output_num`.",
        &[
            X,
            ParamDef::attr("axis", AttrType::Int, Some(AttrDefault::Int(0)), "The dimension to split; negative values count from the end. Default 0."),
            ParamDef::attr("output_num", AttrType::Int, Some(AttrDefault::Int(1)), "The number of pieces, positive; it must divide the size of the dimension. Default 1."),
        ],
        infer_split,
        Some(grad_split),
        |c| kernel_split(c, "Split"),
    ),
    op(
        "SplitV",
        Category::Shape,
        "Splits `input_x` along `split_dim` into `num_split` pieces of the sizes in `size_splits` (one of them may be -1, inferred), returned as a tuple. MindSpore's CPU backend has no kernel for it.",
        &[
            X,
            ParamDef::attr("size_splits", AttrType::IntTuple, None, "The size of each piece, positive; at most one -1, inferred so the sizes add up to the dimension."),
            ParamDef::attr("split_dim", AttrType::Int, None, "The dimension to split; negative values count from the end."),
            ParamDef::attr("num_split", AttrType::Int, None, "The number of pieces: the length of `size_splits`."),
        ],
        infer_split,
        Some(grad_split),
        |c| kernel_split(c, "SplitV"),
    ),
    op(
        "SplitWithSize",
        Category::Shape,
        "Splits `input` along `dim` into pieces of the sizes in `split_size` (which must add up to the size of the dimension), returned as a tuple; `ops.split` with a list of sizes.",
        &[
            INPUT,
            ParamDef::attr("split_size", AttrType::IntTuple, None, "The size of each piece (>= 0), adding up to the size of the dimension."),
            ParamDef::attr("dim", AttrType::Int, Some(AttrDefault::Int(0)), "The dimension to split; negative values count from the end. Default 0."),
        ],
        infer_split,
        Some(grad_split),
        |c| kernel_split(c, "SplitWithSize"),
    ),
    op(
        "SplitTensor",
        Category::Shape,
        "Splits `input` along `dim` into pieces of `split_size` elements (the last one smaller when the size does not divide), returned as a tuple; `ops.split` with an int.",
        &[
            INPUT,
            ParamDef::attr("split_size", AttrType::Int, None, "The size of each piece, positive."),
            ParamDef::attr("dim", AttrType::Int, Some(AttrDefault::Int(0)), "The dimension to split; negative values count from the end. Default 0."),
        ],
        infer_split,
        Some(grad_split),
        |c| kernel_split(c, "SplitTensor"),
    ),
    op(
        "Chunk",
        Category::Shape,
        "Splits `input` along `dim` into at most `chunks` pieces of `ceil(size / chunks)` elements (the last one smaller), returned as a tuple; fewer pieces when the size runs out.",
        &[
            INPUT,
            ParamDef::attr("chunks", AttrType::Int, None, "The number of pieces wanted, positive."),
            ParamDef::attr("dim", AttrType::Int, Some(AttrDefault::Int(0)), "The dimension to split; negative values count from the end. Default 0."),
        ],
        infer_split,
        Some(grad_split),
        |c| kernel_split(c, "Chunk"),
    ),
    op(
        "Stack",
        Category::Shape,
        "Stacks a tuple of tensors of one dtype and shape along a new dimension `axis` (MindSpore's Stack, formerly Pack).",
        &[
            ParamDef::input("input_x", "A tuple of tensors, `(a, b, ...)`, of one dtype and shape."),
            ParamDef::attr("axis", AttrType::Int, Some(AttrDefault::Int(0)), "Where the new dimension goes, in `[-(R+1), R]` for inputs of rank R. Default 0."),
        ],
        infer_stack,
        Some(|b, c| {
            if !tuple_has_float(c, 0) {
                return vec![None];
            }
            let axis = ("axis", AttrValue::Int(c.attrs.int("axis")));
            vec![Some(b.prim("Unstack", &[c.dout], vec![axis]))]
        }),
        kernel_stack,
    ),
    op(
        "Unstack",
        Category::Shape,
        "Splits `input_x` along `axis` into its slices, removing that dimension: a tuple of `input_x.shape[axis]` tensors (the inverse of Stack).",
        &[
            X,
            ParamDef::attr("axis", AttrType::Int, Some(AttrDefault::Int(0)), "The dimension to unstack, in `[-R, R)`. Default 0."),
            ParamDef::attr("num", AttrType::Int, Some(AttrDefault::None), "The number of slices; MindSpore takes it from the shape, and so does this (it only stands in for an unknown size). Default none."),
        ],
        infer_unstack,
        Some(|b, c| {
            if !is_float_input(c, 0) {
                return vec![None];
            }
            let axis = ("axis", AttrValue::Int(c.attrs.int("axis")));
            vec![Some(b.prim("Stack", &[c.dout], vec![axis]))]
        }),
        kernel_unstack,
    ),
    op(
        "Slice",
        Category::Shape,
        "The box of `input` starting at `begin` with `size` elements per dimension (a size of -1 takes the rest of that dimension); the box must lie inside `input`.",
        &[
            INPUT,
            ParamDef::attr("begin", AttrType::IntTuple, None, "The start of the box, one non-negative index per dimension."),
            ParamDef::attr("size", AttrType::IntTuple, None, "The size of the box per dimension; -1 takes everything from `begin` on."),
        ],
        infer_slice,
        Some(|b, c| scatter_back(b, c, "_SliceGrad")),
        |c| {
            let x = c.tensor(0)?;
            let (shape, offsets) = slice_offsets(c.attrs, x.shape())?;
            out(take(x, shape, &offsets))
        },
    ),
    op(
        "Narrow",
        Category::Shape,
        "The `length` elements of `input` along `dim` from `start` on (a negative `start` counts from the end); `start + length` must not pass the end.",
        &[
            INPUT,
            ParamDef::attr("dim", AttrType::Int, None, "The dimension to narrow; negative values count from the end."),
            ParamDef::attr("start", AttrType::Int, None, "The first position taken; negative values count from the end."),
            ParamDef::attr("length", AttrType::Int, None, "How many positions to take, >= 0."),
        ],
        infer_narrow,
        Some(|b, c| scatter_back(b, c, "_NarrowGrad")),
        |c| {
            let x = c.tensor(0)?;
            let (axis, start, len) = narrow_range(c.attrs, x.shape())?;
            let idx: Vec<usize> = (start..start + len).collect();
            out(take_along(x, axis, &idx))
        },
    ),
    op(
        "SliceExt",
        Category::Shape,
        "`input[..., start:end:step, ...]` along `dim`, with Python's rules: negative `start`/`end` count from the end and both are clamped to the dimension; `step` must be positive.",
        &[
            INPUT,
            ParamDef::attr("dim", AttrType::Int, None, "The dimension to slice; negative values count from the end."),
            ParamDef::attr("start", AttrType::Int, None, "The first position (negative values count from the end)."),
            ParamDef::attr("end", AttrType::Int, None, "The end position, exclusive (negative values count from the end)."),
            ParamDef::attr("step", AttrType::Int, None, "The step, positive."),
        ],
        infer_slice_ext,
        Some(|b, c| scatter_back(b, c, "_SliceExtGrad")),
        |c| {
            let x = c.tensor(0)?;
            let (axis, idx) = slice_ext_range(c.attrs, x.shape())?;
            out(take_along(x, axis, &idx))
        },
    ),
    op(
        "ReverseV2",
        Category::Shape,
        "Reverses the order of the elements of `input` along each dimension in `axis` (`ops.flip`).",
        &[
            INPUT,
            ParamDef::attr("axis", AttrType::IntTuple, None, "The dimensions to reverse, distinct; negative values count from the end."),
        ],
        infer_reverse,
        Some(|b, c| {
            if !is_float_input(c, 0) {
                return vec![None];
            }
            vec![Some(b.prim("ReverseV2", &[c.dout], attrs_of(c)))]
        }),
        kernel_reverse,
    ),
    op(
        "Roll",
        Category::Shape,
        "Rolls `input` by `shifts[i]` positions along `dims[i]` (elements pushed off one end come back at the other); without `dims`, rolls the flattened tensor by the one shift and restores the shape. MindSpore's CPU backend has no kernel for it.",
        &[
            INPUT,
            ParamDef::attr("shifts", AttrType::Ints, None, "The shift per rolled dimension (positive rolls towards higher indices): an int or a tuple."),
            ParamDef::attr("dims", AttrType::Ints, Some(AttrDefault::None), "The dimensions to roll, one per shift; the default none rolls the flattened tensor."),
        ],
        infer_roll,
        Some(|b, c| {
            if !is_float_input(c, 0) {
                return vec![None];
            }
            let shifts: Vec<i64> = c.attrs.ints("shifts").unwrap_or_default().iter().map(|s| -s).collect();
            let mut attrs = vec![("shifts", int_tuple(&shifts))];
            if let Some(dims) = c.attrs.ints("dims") {
                attrs.push(("dims", int_tuple(&dims)));
            }
            vec![Some(b.prim("Roll", &[c.dout], attrs))]
        }),
        kernel_roll,
    ),
    op(
        "Identity",
        Category::Shape,
        "Returns a copy of `input_x` (`ops.deepcopy`).",
        &[X],
        infer_same,
        Some(|_, c| vec![Some(c.dout)]),
        |c| out(c.tensor(0)?.clone()),
    ),
    op(
        "Size",
        Category::Shape,
        "The number of elements of `input_x`, an i64 scalar (a constant when the shape is known).",
        &[X],
        infer_size,
        None,
        |c| out(Tensor::scalar(DType::I64, c.tensor(0)?.numel() as f64)),
    ),
    op(
        "Rank",
        Category::Shape,
        "The rank (number of dimensions) of `x`, an i64 scalar (a constant when the rank is known).",
        &[ParamDef::input("x", "The input tensor.")],
        infer_size,
        None,
        |c| out(Tensor::scalar(DType::I64, c.tensor(0)?.rank() as f64)),
    ),
    op(
        "TensorShape",
        Category::Shape,
        "The shape of `input_x` as a 1-D i64 tensor (where `Shape` gives a tuple of scalars).",
        &[X],
        infer_tensor_shape,
        None,
        |c| {
            let x = c.tensor(0)?;
            let dims: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
            out(Tensor::from_i64(DType::I64, vec![dims.len()], dims).map_err(|e| OpError::call(e.0))?)
        },
    ),
    op(
        "InvertPermutation",
        Category::Shape,
        "The inverse of the permutation `input_x` (a tuple of the ints `0..n` in some order): `y[x[i]] = i`, as a tuple of ints.",
        &[ParamDef::input("input_x", "A constant tuple of ints, a permutation of `0..n`.")],
        infer_invert_permutation,
        None,
        kernel_invert_permutation,
    ),
    op(
        "_SliceGrad",
        Category::Internal,
        "The gradient of `Slice`: `grad` placed in zeros shaped like `like` at the sliced box.",
        &[
            GRAD_LIKE[0],
            GRAD_LIKE[1],
            ParamDef::attr("begin", AttrType::IntTuple, None, "Slice's begin."),
            ParamDef::attr("size", AttrType::IntTuple, None, "Slice's size."),
        ],
        like_0_1,
        Some(|b, c| slice_again(b, c, "Slice")),
        kernel_slice_grad,
    ),
    op(
        "_NarrowGrad",
        Category::Internal,
        "The gradient of `Narrow`: `grad` placed in zeros shaped like `like` at the narrowed positions.",
        &[
            GRAD_LIKE[0],
            GRAD_LIKE[1],
            ParamDef::attr("dim", AttrType::Int, None, "Narrow's dim."),
            ParamDef::attr("start", AttrType::Int, None, "Narrow's start."),
            ParamDef::attr("length", AttrType::Int, None, "Narrow's length."),
        ],
        like_0_1,
        Some(|b, c| slice_again(b, c, "Narrow")),
        kernel_narrow_grad,
    ),
    op(
        "_SliceExtGrad",
        Category::Internal,
        "The gradient of `SliceExt`: `grad` placed in zeros shaped like `like` at the sliced positions.",
        &[
            GRAD_LIKE[0],
            GRAD_LIKE[1],
            ParamDef::attr("dim", AttrType::Int, None, "SliceExt's dim."),
            ParamDef::attr("start", AttrType::Int, None, "SliceExt's start."),
            ParamDef::attr("end", AttrType::Int, None, "SliceExt's end."),
            ParamDef::attr("step", AttrType::Int, None, "SliceExt's step."),
        ],
        like_0_1,
        Some(|b, c| slice_again(b, c, "SliceExt")),
        kernel_slice_ext_grad,
    ),
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    let t = int_tuple;
    let i = AttrValue::Int;
    let r = random_f64;
    vec![
        Sample::new("Split", vec![r(&[2, 6], 200, -1.0, 1.0)])
            .attr("axis", i(-1))
            .attr("output_num", i(3)),
        Sample::new("Split", vec![r(&[4, 3], 201, -1.0, 1.0)]).attr("output_num", i(2)),
        Sample::new("SplitV", vec![r(&[5, 2], 202, -1.0, 1.0)])
            .attr("size_splits", t(&[2, -1, 1]))
            .attr("split_dim", i(0))
            .attr("num_split", i(3)),
        Sample::new("SplitWithSize", vec![r(&[2, 5], 203, -1.0, 1.0)])
            .attr("split_size", t(&[1, 0, 4]))
            .attr("dim", i(1)),
        Sample::new("SplitTensor", vec![r(&[5, 2], 204, -1.0, 1.0)]).attr("split_size", i(2)),
        Sample::new("Chunk", vec![r(&[2, 7], 205, -1.0, 1.0)])
            .attr("chunks", i(3))
            .attr("dim", i(-1)),
        Sample::new(
            "Stack",
            vec![KValue::Tuple(vec![
                r(&[2, 3], 206, -1.0, 1.0),
                r(&[2, 3], 207, -1.0, 1.0),
                r(&[2, 3], 208, -1.0, 1.0),
            ])],
        )
        .attr("axis", i(1)),
        Sample::new(
            "Stack",
            vec![KValue::Tuple(vec![
                r(&[], 209, -1.0, 1.0),
                r(&[], 210, -1.0, 1.0),
            ])],
        ),
        Sample::new("Unstack", vec![r(&[2, 3, 2], 211, -1.0, 1.0)]).attr("axis", i(-2)),
        Sample::new("Slice", vec![r(&[3, 4, 2], 212, -1.0, 1.0)])
            .attr("begin", t(&[1, 0, 1]))
            .attr("size", t(&[2, -1, 1])),
        Sample::new("Narrow", vec![r(&[3, 5], 213, -1.0, 1.0)])
            .attr("dim", i(1))
            .attr("start", i(-4))
            .attr("length", i(2)),
        Sample::new("SliceExt", vec![r(&[7, 2], 214, -1.0, 1.0)])
            .attr("dim", i(0))
            .attr("start", i(1))
            .attr("end", i(-1))
            .attr("step", i(2)),
        Sample::new("ReverseV2", vec![r(&[2, 3, 4], 215, -1.0, 1.0)]).attr("axis", t(&[0, -1])),
        Sample::new("Roll", vec![r(&[3, 4], 216, -1.0, 1.0)])
            .attr("shifts", t(&[1, -3]))
            .attr("dims", t(&[0, 1])),
        Sample::new("Roll", vec![r(&[3, 4], 217, -1.0, 1.0)]).attr("shifts", i(5)),
        Sample::new("Identity", vec![r(&[2, 3], 218, -1.0, 1.0)]),
        Sample::new("Size", vec![r(&[2, 3], 219, -1.0, 1.0)]),
        Sample::new("Rank", vec![r(&[2, 3], 220, -1.0, 1.0)]),
        Sample::new("TensorShape", vec![r(&[2, 3], 221, -1.0, 1.0)]),
        Sample::new(
            "InvertPermutation",
            vec![KValue::Tuple(
                [2, 0, 1]
                    .iter()
                    .map(|&v| ints(DType::I64, &[], &[v]))
                    .collect(),
            )],
        ),
        Sample::new(
            "_SliceGrad",
            vec![r(&[2, 1], 222, -1.0, 1.0), r(&[3, 4], 223, -1.0, 1.0)],
        )
        .attr("begin", t(&[1, 2]))
        .attr("size", t(&[2, 1])),
        Sample::new(
            "_NarrowGrad",
            vec![r(&[2, 2], 224, -1.0, 1.0), r(&[2, 5], 225, -1.0, 1.0)],
        )
        .attr("dim", i(1))
        .attr("start", i(1))
        .attr("length", i(2)),
        Sample::new(
            "_SliceExtGrad",
            vec![r(&[2, 2], 226, -1.0, 1.0), r(&[5, 2], 227, -1.0, 1.0)],
        )
        .attr("dim", i(0))
        .attr("start", i(0))
        .attr("end", i(5))
        .attr("step", i(3)),
    ]
}
