//! More shape primitives (the `shape` family): splitting and stacking
//! (Split, SplitV, SplitWithSize, SplitTensor, Chunk, Stack, Unstack),
//! Identity and the size queries (Size, Rank, TensorShape,
//! InvertPermutation), and helpers the family's other files share. The rest
//! of the family: `shape::slice` (Slice, Narrow, SliceExt, ReverseV2,
//! Roll), `shape::pad` (the paddings), `shape::layout` (SpaceToDepth,
//! PixelShuffle, SpaceToBatchND, ...), `shape::gather_scatter` (gathers and
//! scatters), `shape::segment` (segment reductions, MaskedFill) and
//! `shape::make` (OneHot, Range, Eye, Tril, Meshgrid, FillV2, ...).
//!
//! As in `shape`, arguments MindSpore takes as constant inputs (axes, sizes,
//! split sizes, paddings) are attributes here. Primitives that return a tuple
//! whose length depends on their attributes (`Split`) have
//! `OutputDef::Single` and a shape rule that answers an `AbsVal::Tuple`, like
//! `Shape`.
//!
//! Gradients are MindSpore's bprops: the splits concatenate their
//! sensitivities, `Stack` and `Unstack` undo each other.

use crate::schema::{why, Override, Schema};
use crate::Family;
use crate::Traits;
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
    AttrType, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef, ParamDef,
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
// The table.

pub(crate) const GRAD_LIKE: [ParamDef; 2] = [
    ParamDef::input("grad", "The gradient of the forward result."),
    ParamDef::input("like", "The forward input, for its shape."),
];

pub(crate) const fn op(
    name: &'static str,
    category: Category,
    doc: &'static str,
    params: Schema,
    infer: crate::InferFn,
    grad: Option<crate::GradFn>,
    kernel: crate::KernelFn,
) -> OpDef {
    OpDef {
        name,
        category,
        doc,
        schema: params,
        variadic: false,
        output: OutputDef::Single,
        infer,
        grad,
        kernel: Some(kernel),
        traits: Traits::NONE,
    }
}

pub const OPS: &[OpDef] = &[
    op(
        "Split",
        Category::Shape,
        "Splits `input_x` along `axis` into `output_num` equal pieces, returned as a tuple; the size of that dimension must be divisible by `output_num`.",
        Schema::ms(
            &[],
            &[
                ("input_x", "The input tensor (any dtype)."),
                ("axis", "The dimension to split; negative values count from the end. Default 0."),
                ("output_num", "The number of pieces, positive; it must divide the size of the dimension. Default 1."),
            ],
        ),
        infer_split,
        Some(grad_split),
        |c| kernel_split(c, "Split"),
    )
    .in_family(Family::Split),
    op(
        "SplitV",
        Category::Shape,
        "Splits `input_x` along `split_dim` into `num_split` pieces of the sizes in `size_splits` (one of them may be -1, inferred), returned as a tuple. MindSpore's CPU backend has no kernel for it.",
        Schema::ms(
            &[],
            &[
                ("input_x", "The input tensor (any dtype)."),
                ("size_splits", "The size of each piece, positive; at most one -1, inferred so the sizes add up to the dimension."),
                ("split_dim", "The dimension to split; negative values count from the end."),
                ("num_split", "The number of pieces: the length of `size_splits`."),
            ],
        ),
        infer_split,
        Some(grad_split),
        |c| kernel_split(c, "SplitV"),
    ),
    op(
        "SplitWithSize",
        Category::Shape,
        "Splits `input` along `dim` into pieces of the sizes in `split_size` (which must add up to the size of the dimension), returned as a tuple; `ops.split` with a list of sizes.",
        Schema::ms(
            &[Override::attr("split_size", AttrType::IntTuple, None, why::TYPE)],
            &[
                ("input", "The input tensor (any dtype)."),
                ("split_size", "The size of each piece (>= 0), adding up to the size of the dimension."),
                ("dim", "The dimension to split; negative values count from the end. Default 0."),
            ],
        ),
        infer_split,
        Some(grad_split),
        |c| kernel_split(c, "SplitWithSize"),
    ),
    op(
        "SplitTensor",
        Category::Shape,
        "Splits `input` along `dim` into pieces of `split_size` elements (the last one smaller when the size does not divide), returned as a tuple; `ops.split` with an int.",
        Schema::ms(
            &[],
            &[
                ("input", "The input tensor (any dtype)."),
                ("split_size", "The size of each piece, positive."),
                ("dim", "The dimension to split; negative values count from the end. Default 0."),
            ],
        ),
        infer_split,
        Some(grad_split),
        |c| kernel_split(c, "SplitTensor"),
    ),
    op(
        "Chunk",
        Category::Shape,
        "Splits `input` along `dim` into at most `chunks` pieces of `ceil(size / chunks)` elements (the last one smaller), returned as a tuple; fewer pieces when the size runs out.",
        Schema::ms(
            &[],
            &[
                ("input", "The input tensor (any dtype)."),
                ("chunks", "The number of pieces wanted, positive."),
                ("dim", "The dimension to split; negative values count from the end. Default 0."),
            ],
        ),
        infer_split,
        Some(grad_split),
        |c| kernel_split(c, "Chunk"),
    ),
    op(
        "Stack",
        Category::Shape,
        "Stacks a tuple of tensors of one dtype and shape along a new dimension `axis` (MindSpore's Stack, formerly Pack).",
        Schema::ms(
            &[Override::inputs(&["input_x"], why::INPUT_NAMES)],
            &[
                ("input_x", "A tuple of tensors, `(a, b, ...)`, of one dtype and shape."),
                ("axis", "Where the new dimension goes, in `[-(R+1), R]` for inputs of rank R. Default 0."),
            ],
        ),
        infer_stack,
        Some(|b, c| {
            if !tuple_has_float(c, 0) {
                return vec![None];
            }
            let axis = ("axis", AttrValue::Int(c.attrs.int("axis")));
            vec![Some(b.prim("Unstack", &[c.dout], vec![axis]))]
        }),
        kernel_stack,
    )
    .in_family(Family::Concat { stack: true }),
    op(
        "Unstack",
        Category::Shape,
        "Splits `input_x` along `axis` into its slices, removing that dimension: a tuple of `input_x.shape[axis]` tensors (the inverse of Stack).",
        Schema::ms(
            &[Override::inputs(&["input_x"], why::INPUT_NAMES)],
            &[
                ("input_x", "The input tensor (any dtype)."),
                ("axis", "The dimension to unstack, in `[-R, R)`. Default 0."),
                ("num", "The number of slices; MindSpore takes it from the shape, and so does this (it only stands in for an unknown size). Default none."),
            ],
        ),
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
        "Identity",
        Category::Shape,
        "Returns a copy of `input_x` (`ops.deepcopy`).",
        Schema::ms(&[], &[("input_x", "The input tensor (any dtype).")]),
        infer_same,
        Some(|_, c| vec![Some(c.dout)]),
        |c| out(c.tensor(0)?.clone()),
    )
    .in_family(Family::View),
    op(
        "Size",
        Category::Shape,
        "The number of elements of `input_x`, an i64 scalar (a constant when the shape is known).",
        Schema::ms(&[], &[("input_x", "The input tensor (any dtype).")]),
        infer_size,
        None,
        |c| out(Tensor::scalar(DType::I64, c.tensor(0)?.numel() as f64)),
    ),
    op(
        "Rank",
        Category::Shape,
        "The rank (number of dimensions) of `x`, an i64 scalar (a constant when the rank is known).",
        Schema::ms(&[], &[("x", "The input tensor.")]),
        infer_size,
        None,
        |c| out(Tensor::scalar(DType::I64, c.tensor(0)?.rank() as f64)),
    ),
    op(
        "TensorShape",
        Category::Shape,
        "The shape of `input_x` as a 1-D i64 tensor (where `Shape` gives a tuple of scalars).",
        Schema::ms(&[], &[("input_x", "The input tensor (any dtype).")]),
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
        Schema::ms(&[], &[("input_x", "A constant tuple of ints, a permutation of `0..n`.")]),
        infer_invert_permutation,
        None,
        kernel_invert_permutation,
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
    ]
}
