//! Concat, Tile, BroadcastTo, Gather, Shape and StridedSlice: their shape
//! rules, kernels and gradient rules (the table is in `shape.rs`).

use super::*;

// ---------------------------------------------------------------------------
// Concat

pub(super) fn infer_concat(call: &InferCall) -> Result<AbsVal, OpError> {
    let items = match &call.inputs[0] {
        AbsVal::Any => return Ok(AbsVal::Any),
        AbsVal::Tuple(items) => items,
        other => {
            return Err(OpError::input(
                0,
                format!("`Concat` takes a tuple of tensors, not {other}"),
            ))
        }
    };
    if items.iter().any(|i| matches!(i, AbsVal::Any)) {
        return Ok(AbsVal::Any);
    }
    if items.is_empty() {
        return Err(OpError::input(
            0,
            "`Concat` needs at least one tensor, got an empty tuple",
        ));
    }
    let mut parts = Vec::new();
    for (k, item) in items.iter().enumerate() {
        match item {
            AbsVal::Tensor { dtype, shape } => parts.push((*dtype, shape.clone())),
            other => {
                return Err(OpError::input(
                    0,
                    format!("`Concat`: element {k} of the tuple must be a tensor, not {other}"),
                ))
            }
        }
    }
    let dtype = parts[0].0;
    for (k, (d, _)) in parts.iter().enumerate() {
        if *d != dtype {
            return Err(OpError::input(
                0,
                format!(
                    "`Concat` needs tensors of one dtype: element 0 is {dtype}, element {k} is {d}"
                ),
            ));
        }
    }
    let ranked: Vec<(usize, &[Dim])> = parts
        .iter()
        .enumerate()
        .filter_map(|(k, (_, s))| s.dims().map(|d| (k, d)))
        .collect();
    let Some(&(first, dims0)) = ranked.first() else {
        return Ok(unranked(dtype));
    };
    let rank = dims0.len();
    if rank == 0 {
        return Err(OpError::input(
            0,
            "`Concat` cannot join scalars (rank 0 tensors); use ExpandDims first",
        ));
    }
    let axis = op_axis("Concat", call.attrs.int("axis"), rank, "axis")?;
    for &(k, dims) in &ranked {
        if dims.len() != rank {
            return Err(OpError::input(
                0,
                format!(
                    "`Concat` needs tensors of one rank: element {first} is {}, element {k} is {}",
                    fmt_dims(dims0),
                    fmt_dims(dims)
                ),
            ));
        }
        for d in 0..rank {
            if d != axis && !dims_may_equal(&dims[d], &dims0[d]) {
                return Err(OpError::input(
                    0,
                    format!(
                        "`Concat` along axis {axis}: element {k} {} and element {first} {} differ in dimension {d}",
                        fmt_dims(dims),
                        fmt_dims(dims0)
                    ),
                ));
            }
        }
    }
    if ranked.len() < parts.len() {
        let mut dims = dims0.to_vec();
        dims[axis] = Dim::Unknown;
        return Ok(tensor_abs(dtype, dims));
    }
    let mut dims: Vec<Dim> = (0..rank)
        .map(|d| {
            // A known size wins over a symbolic one in the other dimensions.
            ranked
                .iter()
                .map(|(_, s)| &s[d])
                .find(|x| x.known().is_some())
                .unwrap_or(&dims0[d])
                .clone()
        })
        .collect();
    let sizes: Option<i64> = ranked.iter().map(|(_, s)| s[axis].known()).sum();
    dims[axis] = match sizes {
        Some(n) => Dim::Known(n),
        None if ranked.len() == 1 => dims0[axis].clone(),
        None => Dim::Unknown,
    };
    Ok(tensor_abs(dtype, dims))
}

/// The tensors of a tuple argument.
pub(crate) fn tuple_tensors<'a>(arg: &KArg<'a>, i: usize) -> Result<Vec<&'a Tensor>, OpError> {
    match arg {
        KArg::Tuple(items) => items
            .iter()
            .map(|v| match v {
                KValue::Tensor(t) => Ok(t),
                KValue::Tuple(_) => Err(OpError::input(i, "expected a tuple of tensors")),
            })
            .collect(),
        KArg::Tensor(_) => Err(OpError::input(i, "expected a tuple of tensors")),
    }
}

pub(super) fn kernel_concat(c: &KernelCall) -> Result<KValue, OpError> {
    let parts = tuple_tensors(&c.inputs[0], 0)?;
    let first = parts
        .first()
        .ok_or_else(|| OpError::input(0, "`Concat` needs at least one tensor"))?;
    let rank = first.rank();
    let axis = op_axis("Concat", c.attrs.int("axis"), rank, "axis")?;
    let dtype = first.dtype();
    let outer: usize = first.shape()[..axis].iter().product();
    let inner: usize = first.shape()[axis + 1..].iter().product();
    let mut shape = first.shape().to_vec();
    shape[axis] = parts.iter().map(|t| t.shape()[axis]).sum();
    for t in &parts {
        let mut s = t.shape().to_vec();
        s[axis] = shape[axis];
        if s != shape {
            return Err(OpError::input(
                0,
                format!(
                    "`Concat`: shapes {:?} and {:?} differ outside axis {axis}",
                    first.shape(),
                    t.shape()
                ),
            ));
        }
    }
    let chunks: Vec<usize> = parts.iter().map(|t| t.shape()[axis] * inner).collect();
    let cast: Vec<Tensor> = parts.iter().map(|t| t.cast(dtype)).collect();
    fn join<T: Copy>(parts: Vec<&[T]>, chunks: &[usize], outer: usize) -> Vec<T> {
        let total: usize = chunks.iter().sum::<usize>() * outer;
        let mut out = Vec::with_capacity(total);
        for o in 0..outer {
            for (p, &n) in parts.iter().zip(chunks) {
                out.extend_from_slice(&p[o * n..(o + 1) * n]);
            }
        }
        out
    }
    macro_rules! gather_parts {
        ($variant:ident) => {
            Buffer::$variant(join(
                cast.iter()
                    .map(|t| match t.buffer() {
                        Buffer::$variant(v) => v.as_slice(),
                        _ => unreachable!("cast to one dtype"),
                    })
                    .collect(),
                &chunks,
                outer,
            ))
        };
    }
    let buffer = match first.buffer() {
        Buffer::F32(_) => gather_parts!(F32),
        Buffer::F64(_) => gather_parts!(F64),
        Buffer::I64(_) => gather_parts!(I64),
        Buffer::Bool(_) => gather_parts!(Bool),
    };
    out(Tensor::new(dtype, shape, buffer).map_err(|e| OpError::call(e.0))?)
}

/// Element `index` of the tuple `parts` as a slice of their concatenation `g`
/// along `axis`: the gradient `Concat` sends to that element.
pub(crate) fn concat_slice(
    g: &Tensor,
    parts: &[&Tensor],
    axis: usize,
    index: usize,
) -> Result<Tensor, OpError> {
    if index >= parts.len() || axis >= g.rank() {
        return Err(OpError::call("concat gradient: index out of range"));
    }
    let start: usize = parts[..index].iter().map(|t| t.shape()[axis]).sum();
    let size = parts[index].shape()[axis];
    let strides = row_strides(g.shape());
    let mut shape = g.shape().to_vec();
    shape[axis] = size;
    let per_dim: Vec<Vec<usize>> = (0..g.rank())
        .map(|d| {
            let range = if d == axis {
                start..start + size
            } else {
                0..g.shape()[d]
            };
            range.map(|k| k * strides[d]).collect()
        })
        .collect();
    Ok(take(g, shape, &cartesian_offsets(&per_dim)))
}

// ---------------------------------------------------------------------------
// Tile

pub(super) fn infer_tile(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = dims_of(call, 0)?;
    let multiples = call.attrs.ints("multiples").unwrap_or_default();
    if let Some(&m) = multiples.iter().find(|&&m| m < 0) {
        return Err(OpError::attr(
            "multiples",
            format!(
                "`Tile`: `multiples` {} has the negative entry {m}",
                fmt_ints(&multiples)
            ),
        ));
    }
    let Some(dims) = dims else {
        return Ok(tensor_abs(dtype, vec![Dim::Unknown; multiples.len()]));
    };
    if multiples.len() < dims.len() {
        return Err(OpError::attr(
            "multiples",
            format!(
                "`Tile`: `multiples` {} has {} entries, fewer than the rank {} of `x` {}",
                fmt_ints(&multiples),
                multiples.len(),
                dims.len(),
                fmt_dims(&dims)
            ),
        ));
    }
    let pad = multiples.len() - dims.len();
    let out = multiples
        .iter()
        .enumerate()
        .map(|(i, &m)| {
            let d = if i < pad {
                Dim::Known(1)
            } else {
                dims[i - pad].clone()
            };
            dim_mul(&d, &Dim::Known(m))
        })
        .collect();
    Ok(tensor_abs(dtype, out))
}

/// The result shape of tiling `shape` and the source offset of each element.
pub(crate) fn tile_offsets(
    shape: &[usize],
    multiples: &[i64],
) -> Result<(Vec<usize>, Vec<usize>), OpError> {
    if multiples.len() < shape.len() || multiples.iter().any(|&m| m < 0) {
        return Err(OpError::attr(
            "multiples",
            format!(
                "`Tile`: invalid `multiples` {} for shape {shape:?}",
                fmt_ints(multiples)
            ),
        ));
    }
    let pad = multiples.len() - shape.len();
    let padded: Vec<usize> = (0..multiples.len())
        .map(|i| if i < pad { 1 } else { shape[i - pad] })
        .collect();
    let strides = row_strides(&padded);
    let out_shape: Vec<usize> = padded
        .iter()
        .zip(multiples)
        .map(|(&d, &m)| d * m as usize)
        .collect();
    let per_dim: Vec<Vec<usize>> = (0..padded.len())
        .map(|i| {
            (0..out_shape[i])
                .map(|j| (j % padded[i]) * strides[i])
                .collect()
        })
        .collect();
    Ok((out_shape, cartesian_offsets(&per_dim)))
}

pub(super) fn kernel_tile(c: &KernelCall) -> Result<KValue, OpError> {
    let x = tensor_arg(c, 0)?;
    let (shape, offsets) = tile_offsets(x.shape(), &c.attrs.ints("multiples").unwrap_or_default())?;
    out(take(x, shape, &offsets))
}

// ---------------------------------------------------------------------------
// BroadcastTo

pub(super) fn infer_broadcast_to(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = dims_of(call, 0)?;
    let target = call.attrs.ints("shape").unwrap_or_default();
    if let Some(&t) = target.iter().find(|&&t| t < -1) {
        return Err(OpError::attr(
            "shape",
            format!(
                "`BroadcastTo`: `shape` {} has the invalid size {t} (sizes are >= 0, or -1 to keep a dimension)",
                fmt_ints(&target)
            ),
        ));
    }
    let Some(dims) = dims else {
        return Ok(tensor_abs(
            dtype,
            target
                .iter()
                .map(|&t| if t == -1 { Dim::Unknown } else { Dim::Known(t) })
                .collect(),
        ));
    };
    if target.len() < dims.len() {
        return Err(OpError::attr(
            "shape",
            format!(
                "`BroadcastTo`: `shape` {} has fewer dimensions than `x` {}",
                fmt_ints(&target),
                fmt_dims(&dims)
            ),
        ));
    }
    let offset = target.len() - dims.len();
    let mut out = Vec::with_capacity(target.len());
    for (i, &t) in target.iter().enumerate() {
        let src = i.checked_sub(offset).map(|j| &dims[j]);
        out.push(match (t, src) {
            (-1, Some(d)) => d.clone(),
            (-1, None) => {
                return Err(OpError::attr(
                    "shape",
                    format!(
                        "`BroadcastTo`: -1 at position {i} of `shape` {} has no dimension of `x` {} to keep",
                        fmt_ints(&target),
                        fmt_dims(&dims)
                    ),
                ))
            }
            (t, Some(Dim::Known(n))) if *n != 1 && *n != t => {
                return Err(OpError::attr(
                    "shape",
                    format!(
                        "`BroadcastTo` cannot broadcast `x` {} to {}: dimension {n} against {t}",
                        fmt_dims(&dims),
                        fmt_ints(&target)
                    ),
                ))
            }
            (t, _) => Dim::Known(t),
        });
    }
    Ok(tensor_abs(dtype, out))
}

pub(super) fn kernel_broadcast_to(c: &KernelCall) -> Result<KValue, OpError> {
    let x = tensor_arg(c, 0)?;
    let target = c.attrs.ints("shape").unwrap_or_default();
    let xs = x.shape();
    if target.len() < xs.len() {
        return Err(OpError::attr(
            "shape",
            "`BroadcastTo`: `shape` is too short",
        ));
    }
    let offset = target.len() - xs.len();
    let mut shape = Vec::with_capacity(target.len());
    for (i, &t) in target.iter().enumerate() {
        let src = i.checked_sub(offset).map(|j| xs[j]);
        let size = match (t, src) {
            (-1, Some(d)) => d,
            (t, Some(d)) if t >= 0 && (d == 1 || d == t as usize) => t as usize,
            (t, None) if t >= 0 => t as usize,
            _ => {
                return Err(OpError::attr(
                    "shape",
                    format!(
                        "`BroadcastTo` cannot broadcast {xs:?} to {}",
                        fmt_ints(&target)
                    ),
                ))
            }
        };
        shape.push(size);
    }
    let strides = crate::kernel::broadcast_strides(xs, &shape);
    let per_dim: Vec<Vec<usize>> = shape
        .iter()
        .zip(&strides)
        .map(|(&n, &s)| (0..n).map(|k| k * s).collect())
        .collect();
    out(take(x, shape, &cartesian_offsets(&per_dim)))
}

// ---------------------------------------------------------------------------
// Gather

/// `axis` and `batch_dims` of a Gather, normalised and checked against the ranks.
pub(super) fn gather_axes(
    params_rank: usize,
    indices_rank: usize,
    axis: i64,
    batch_dims: i64,
) -> Result<(usize, usize), OpError> {
    let axis = op_axis("Gather", axis, params_rank.max(1), "axis")?;
    let bd = if batch_dims < 0 {
        batch_dims + indices_rank as i64
    } else {
        batch_dims
    };
    if bd < 0 || bd as usize > indices_rank || bd as usize > axis {
        return Err(OpError::attr(
            "batch_dims",
            format!(
                "`Gather`: `batch_dims` is {batch_dims}; it must lie in 0..={indices_rank} (the rank of `input_indices`) and not exceed `axis` {axis}"
            ),
        ));
    }
    Ok((axis, bd as usize))
}

pub(super) fn infer_gather(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, pdims) = dims_of(call, 0)?;
    let (idtype, idims) = dims_of(call, 1)?;
    if !matches!(idtype, DType::I32 | DType::I64) {
        return Err(OpError::input(
            1,
            format!("`Gather` needs `input_indices` of dtype i32 or i64, got {idtype}"),
        ));
    }
    let (Some(pdims), Some(idims)) = (pdims, idims) else {
        return Ok(unranked(dtype));
    };
    if pdims.is_empty() {
        return Err(OpError::input(
            0,
            "`Gather` needs `input_params` of rank at least 1, got a scalar",
        ));
    }
    let (axis, bd) = gather_axes(
        pdims.len(),
        idims.len(),
        call.attrs.int("axis"),
        call.attrs.int("batch_dims"),
    )?;
    for d in 0..bd {
        if !dims_may_equal(&pdims[d], &idims[d]) {
            return Err(OpError::call(format!(
                "`Gather` with batch_dims={bd}: batch dimension {d} differs between `input_params` {} and `input_indices` {}",
                fmt_dims(&pdims),
                fmt_dims(&idims)
            )));
        }
    }
    let mut out: Vec<Dim> = pdims[..axis].to_vec();
    out.extend_from_slice(&idims[bd..]);
    out.extend_from_slice(&pdims[axis + 1..]);
    Ok(tensor_abs(dtype, out))
}

/// The result shape of a Gather and the source offset of each element; an
/// index outside `[0, size)` of the axis is an error (as on MindSpore's CPU).
pub(crate) fn gather_offsets(
    pshape: &[usize],
    indices: &Tensor,
    axis: i64,
    batch_dims: i64,
) -> Result<(Vec<usize>, Vec<usize>), OpError> {
    let ishape = indices.shape();
    if pshape.is_empty() {
        return Err(OpError::input(
            0,
            "`Gather` needs `input_params` of rank >= 1",
        ));
    }
    let (axis, bd) = gather_axes(pshape.len(), ishape.len(), axis, batch_dims)?;
    if pshape[..bd] != ishape[..bd] {
        return Err(OpError::call(format!(
            "`Gather`: batch dimensions of {pshape:?} and {ishape:?} differ"
        )));
    }
    let idx: Vec<i64> = match indices.buffer() {
        Buffer::I64(v) => v.clone(),
        _ => return Err(OpError::input(1, "`Gather` needs integer `input_indices`")),
    };
    let batch: usize = pshape[..bd].iter().product();
    let pre: usize = pshape[bd..axis].iter().product();
    let size = pshape[axis];
    let post: usize = pshape[axis + 1..].iter().product();
    let per_batch: usize = ishape[bd..].iter().product();
    let mut shape = pshape[..axis].to_vec();
    shape.extend_from_slice(&ishape[bd..]);
    shape.extend_from_slice(&pshape[axis + 1..]);
    let mut offsets = Vec::with_capacity(batch * pre * per_batch * post);
    for b in 0..batch {
        for p in 0..pre {
            for i in 0..per_batch {
                let k = idx[b * per_batch + i];
                if k < 0 || k as usize >= size {
                    return Err(OpError::input(
                        1,
                        format!(
                            "`Gather`: index {k} is out of range for axis {axis} of size {size}"
                        ),
                    ));
                }
                let base = ((b * pre + p) * size + k as usize) * post;
                offsets.extend(base..base + post);
            }
        }
    }
    Ok((shape, offsets))
}

pub(super) fn kernel_gather(c: &KernelCall) -> Result<KValue, OpError> {
    let x = tensor_arg(c, 0)?;
    let indices = tensor_arg(c, 1)?;
    let (shape, offsets) = gather_offsets(
        x.shape(),
        indices,
        c.attrs.int("axis"),
        c.attrs.int("batch_dims"),
    )?;
    out(take(x, shape, &offsets))
}

// ---------------------------------------------------------------------------
// Shape

pub(super) fn infer_shape(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (_, dims) = dims_of(call, 0)?;
    let Some(dims) = dims else {
        // A tuple of unknown length.
        return Ok(AbsVal::Any);
    };
    Ok(AbsVal::Tuple(
        dims.iter()
            .map(|d| AbsVal::Scalar {
                dtype: DType::I64,
                value: d.known().map(ScalarConst::Int),
                weak: false,
            })
            .collect(),
    ))
}

pub(super) fn kernel_shape(c: &KernelCall) -> Result<KValue, OpError> {
    let x = tensor_arg(c, 0)?;
    Ok(KValue::Tuple(
        x.shape()
            .iter()
            .map(|&d| KValue::Tensor(Tensor::scalar(DType::I64, d as f64)))
            .collect(),
    ))
}

// ---------------------------------------------------------------------------
// StridedSlice

/// One dimension of a slice after masks are applied (TensorFlow's "dense spec").
#[derive(Debug, Clone, Copy)]
pub(super) struct DimSlice {
    begin: i64,
    end: i64,
    stride: i64,
    begin_masked: bool,
    end_masked: bool,
    shrink: bool,
}

impl DimSlice {
    const FULL: DimSlice = DimSlice {
        begin: 0,
        end: 0,
        stride: 1,
        begin_masked: true,
        end_masked: true,
        shrink: false,
    };

    /// The indices this slice takes from a dimension of `size`.
    fn indices(&self, size: i64, axis: usize) -> Result<Vec<i64>, OpError> {
        let norm = |v: i64| if v < 0 { v + size } else { v };
        if self.shrink {
            let b = norm(self.begin);
            if b < 0 || b >= size {
                return Err(OpError::attr(
                    "begin",
                    format!(
                        "`StridedSlice`: index {} (shrink_axis_mask) is out of range for dimension {axis} of size {size}",
                        self.begin
                    ),
                ));
            }
            return Ok(vec![b]);
        }
        let s = self.stride;
        let mut out = Vec::new();
        if s > 0 {
            let b = if self.begin_masked {
                0
            } else {
                norm(self.begin).clamp(0, size)
            };
            let e = if self.end_masked {
                size
            } else {
                norm(self.end).clamp(0, size)
            };
            let mut i = b;
            while i < e {
                out.push(i);
                i += s;
            }
        } else {
            let b = if self.begin_masked {
                size - 1
            } else {
                norm(self.begin).clamp(-1, size - 1)
            };
            let e = if self.end_masked {
                -1
            } else {
                norm(self.end).clamp(-1, size - 1)
            };
            let mut i = b;
            while i > e {
                out.push(i);
                i += s;
            }
        }
        Ok(out)
    }

    /// The result size for an input dimension that is not known.
    fn abstract_size(&self, d: &Dim) -> Option<Dim> {
        if self.shrink {
            None
        } else if self.begin_masked && self.end_masked && self.stride == 1 {
            Some(d.clone())
        } else {
            Some(Dim::Unknown)
        }
    }
}

/// Where each result dimension comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum SliceAxis {
    NewAxis,
    Dense(usize),
}

/// Expands the sparse `begin`/`end`/`strides` and masks into one [`DimSlice`]
/// per input dimension, and the result's layout (new axes and kept dimensions).
pub(super) fn slice_plan(
    attrs: &crate::Attrs,
    rank: usize,
) -> Result<(Vec<DimSlice>, Vec<SliceAxis>), OpError> {
    let begin = attrs.ints("begin").unwrap_or_default();
    let end = attrs.ints("end").unwrap_or_default();
    let strides = attrs.ints("strides").unwrap_or_default();
    let n = begin.len();
    if end.len() != n {
        return Err(OpError::attr(
            "end",
            format!(
                "`StridedSlice`: `begin` {} and `end` {} have different lengths",
                fmt_ints(&begin),
                fmt_ints(&end)
            ),
        ));
    }
    if strides.len() != n {
        return Err(OpError::attr(
            "strides",
            format!(
                "`StridedSlice`: `begin` {} and `strides` {} have different lengths",
                fmt_ints(&begin),
                fmt_ints(&strides)
            ),
        ));
    }
    if let Some(i) = strides.iter().position(|&s| s == 0) {
        return Err(OpError::attr(
            "strides",
            format!(
                "`StridedSlice`: `strides` {} has 0 at position {i}; strides must be non-zero",
                fmt_ints(&strides)
            ),
        ));
    }
    let mask = |name: &'static str| -> Result<i64, OpError> {
        let m = attrs.int(name);
        if m < 0 {
            return Err(OpError::attr(
                name,
                format!("`StridedSlice`: `{name}` is {m}; masks are non-negative bit sets"),
            ));
        }
        Ok(m)
    };
    let (bm, em, ellipsis, new_axis, shrink) = (
        mask("begin_mask")?,
        mask("end_mask")?,
        mask("ellipsis_mask")?,
        mask("new_axis_mask")?,
        mask("shrink_axis_mask")?,
    );
    let bit = |m: i64, i: usize| i < 63 && (m >> i) & 1 == 1;
    let ellipses = (0..n).filter(|&i| bit(ellipsis, i)).count();
    if ellipses > 1 {
        return Err(OpError::attr(
            "ellipsis_mask",
            format!("`StridedSlice`: `ellipsis_mask` {ellipsis} sets more than one bit"),
        ));
    }
    let consumed = (0..n)
        .filter(|&i| !bit(ellipsis, i) && !bit(new_axis, i))
        .count();
    if consumed > rank {
        return Err(OpError::attr(
            "begin",
            format!(
                "`StridedSlice`: `begin` {} slices {consumed} dimensions but `x` has rank {rank}",
                fmt_ints(&begin)
            ),
        ));
    }
    let mut dense = Vec::with_capacity(rank);
    let mut layout = Vec::new();
    for i in 0..n {
        if bit(ellipsis, i) {
            for _ in 0..rank - consumed {
                layout.push(SliceAxis::Dense(dense.len()));
                dense.push(DimSlice::FULL);
            }
        } else if bit(new_axis, i) {
            layout.push(SliceAxis::NewAxis);
        } else {
            let s = DimSlice {
                begin: begin[i],
                end: end[i],
                stride: strides[i],
                begin_masked: bit(bm, i),
                end_masked: bit(em, i),
                shrink: bit(shrink, i),
            };
            if !s.shrink {
                layout.push(SliceAxis::Dense(dense.len()));
            }
            dense.push(s);
        }
    }
    while dense.len() < rank {
        layout.push(SliceAxis::Dense(dense.len()));
        dense.push(DimSlice::FULL);
    }
    Ok((dense, layout))
}

pub(super) fn infer_strided_slice(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = dims_of(call, 0)?;
    let Some(dims) = dims else {
        return Ok(unranked(dtype));
    };
    Ok(tensor_abs(dtype, strided_slice_dims(call.attrs, &dims)?))
}

/// The result dimensions of a StridedSlice of `dims` (a symbolic size taken
/// whole stays that symbol).
pub(crate) fn strided_slice_dims(attrs: &crate::Attrs, dims: &[Dim]) -> Result<Vec<Dim>, OpError> {
    let (dense, layout) = slice_plan(attrs, dims.len())?;
    let mut sizes = Vec::with_capacity(dense.len());
    for (axis, (s, d)) in dense.iter().zip(dims).enumerate() {
        sizes.push(match d {
            Dim::Known(n) => Some(Dim::Known(s.indices(*n, axis)?.len() as i64)),
            other => s.abstract_size(other),
        });
    }
    Ok(layout
        .iter()
        .map(|a| match a {
            SliceAxis::NewAxis => Dim::Known(1),
            SliceAxis::Dense(j) => sizes[*j].clone().unwrap_or(Dim::Unknown),
        })
        .collect())
}

/// The result shape of a StridedSlice of `shape` and the source offset of
/// each element.
pub(crate) fn strided_slice_offsets(
    attrs: &crate::Attrs,
    shape: &[usize],
) -> Result<(Vec<usize>, Vec<usize>), OpError> {
    let (dense, layout) = slice_plan(attrs, shape.len())?;
    let strides = row_strides(shape);
    let mut per_dim = Vec::with_capacity(shape.len());
    for (axis, s) in dense.iter().enumerate() {
        let idx = s.indices(shape[axis] as i64, axis)?;
        per_dim.push(
            idx.iter()
                .map(|&i| i as usize * strides[axis])
                .collect::<Vec<_>>(),
        );
    }
    let out_shape = layout
        .iter()
        .map(|a| match a {
            SliceAxis::NewAxis => 1,
            SliceAxis::Dense(j) => per_dim[*j].len(),
        })
        .collect();
    Ok((out_shape, cartesian_offsets(&per_dim)))
}

/// A StridedSlice of a row-major `shape` as one strided read: the result
/// shape, the source stride of each result dimension (negative for a
/// negative `strides` entry, 0 for a new axis) and the offset of the first
/// element (for a device's strided-copy kernel).
pub fn strided_slice_layout(
    attrs: &crate::Attrs,
    shape: &[usize],
) -> Result<(Vec<usize>, Vec<i64>, i64), OpError> {
    let (dense, layout) = slice_plan(attrs, shape.len())?;
    let strides = row_strides(shape);
    let mut offset = 0i64;
    let mut per_dim = Vec::with_capacity(shape.len());
    for (axis, s) in dense.iter().enumerate() {
        let idx = s.indices(shape[axis] as i64, axis)?;
        let step = match idx.as_slice() {
            [a, b, ..] => b - a,
            _ => 0,
        };
        if let Some(first) = idx.first() {
            offset += first * strides[axis] as i64;
        }
        per_dim.push((idx.len(), step * strides[axis] as i64));
    }
    let (out_shape, out_strides) = layout
        .iter()
        .map(|a| match a {
            SliceAxis::NewAxis => (1, 0),
            SliceAxis::Dense(j) => per_dim[*j],
        })
        .unzip();
    Ok((out_shape, out_strides, offset))
}

pub(super) fn kernel_strided_slice(c: &KernelCall) -> Result<KValue, OpError> {
    let x = tensor_arg(c, 0)?;
    let (shape, offsets) = strided_slice_offsets(c.attrs, x.shape())?;
    out(take(x, shape, &offsets))
}

#[cfg(test)]
mod strided_layout_tests {
    use super::*;

    /// The layout reads exactly the elements the CPU kernel's offsets name.
    #[test]
    fn the_layout_matches_the_offsets() {
        let ints = |v: &[i64]| AttrValue::Tuple(v.iter().map(|&i| AttrValue::Int(i)).collect());
        let cases: Vec<Vec<(&str, AttrValue)>> = vec![
            vec![
                ("begin", ints(&[1, -1])),
                ("end", ints(&[4, 0])),
                ("strides", ints(&[2, -2])),
            ],
            vec![
                ("begin", ints(&[0, 2])),
                ("end", ints(&[3, 3])),
                ("strides", ints(&[1, 1])),
                ("shrink_axis_mask", AttrValue::Int(2)),
                ("new_axis_mask", AttrValue::Int(0)),
            ],
            vec![
                ("begin", ints(&[0, 1, 0])),
                ("end", ints(&[0, 3, 0])),
                ("strides", ints(&[1, 1, 1])),
                ("new_axis_mask", AttrValue::Int(1)),
                ("end_mask", AttrValue::Int(4)),
            ],
        ];
        let shape = [4usize, 5];
        for given in cases {
            let op = crate::lookup("StridedSlice").unwrap();
            let given: Vec<(String, AttrValue)> = given
                .into_iter()
                .map(|(k, v)| (k.to_string(), crate::check_attr(op, k, &v).unwrap()))
                .collect();
            let attrs = crate::resolve_attrs(op, &given);
            let (shape_a, offsets) = strided_slice_offsets(&attrs, &shape).unwrap();
            let (shape_b, strides, offset) = strided_slice_layout(&attrs, &shape).unwrap();
            assert_eq!(shape_a, shape_b);
            let mut read = Vec::new();
            for i in 0..shape_b.iter().product::<usize>() {
                let (mut r, mut o) = (i, offset);
                for k in (0..shape_b.len()).rev() {
                    o += (r % shape_b[k]) as i64 * strides[k];
                    r /= shape_b[k];
                }
                read.push(o as usize);
            }
            assert_eq!(read, offsets, "{given:?}");
        }
    }
}
