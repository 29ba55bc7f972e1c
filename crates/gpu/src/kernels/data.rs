//! Data movement: views, strided copies (transpose, broadcast, tile, slices),
//! concatenation, split, gather and select.

use ops::kernel::{broadcast_shape, broadcast_strides};
use ops::{Family, KArg, KValue, KernelCall, OpDef, Strided};
use tensor::{DType, Tensor};

use super::{as_dtype, input, norm_axis, out_type, strided_copy, strides};
use crate::device::{tensor, Arg, Bc, DevResult, Device};
use crate::source::{self, Storage, MAX_RANK};

/// Reshapes: the same data (on the device: the same block) with a new shape.
pub(super) fn view(op: &'static OpDef, call: &KernelCall) -> DevResult<Option<KValue>> {
    let (Some(x), Some((od, oshape))) = (input(call, 0), out_type(op, call)) else {
        return Ok(None);
    };
    if od != x.dtype() || oshape.iter().product::<usize>() != x.numel() {
        return Ok(None);
    }
    Ok(x.clone().reshaped(oshape).ok().map(KValue::Tensor))
}

/// One strided copy of the input: where it reads, for each output dimension.
struct Layout {
    strides: Vec<i64>,
    modulo: Option<Vec<i64>>,
    offset: i64,
}

fn layout(which: Strided, call: &KernelCall, x: &Tensor, oshape: &[usize]) -> Option<Layout> {
    let shape = x.shape();
    let st = strides(shape);
    let rank = shape.len();
    let plain = |offset: i64| Layout {
        strides: st.clone(),
        modulo: None,
        offset,
    };
    match which {
        Strided::Transpose => {
            let perm = call.attrs.ints("perm")?;
            if perm.len() != rank {
                return None;
            }
            let perm: Vec<usize> = perm
                .iter()
                .map(|&p| norm_axis(p, rank))
                .collect::<Option<_>>()?;
            Some(Layout {
                strides: perm.iter().map(|&p| st[p]).collect(),
                modulo: None,
                offset: 0,
            })
        }
        Strided::BroadcastTo => {
            broadcast_shape(shape, oshape).filter(|b| b == oshape)?;
            Some(Layout {
                strides: broadcast_strides(shape, oshape)
                    .into_iter()
                    .map(|s| s as i64)
                    .collect(),
                modulo: None,
                offset: 0,
            })
        }
        Strided::Tile => {
            let lead = oshape.len().checked_sub(rank)?;
            let mut padded = vec![1usize; lead];
            padded.extend_from_slice(shape);
            Some(Layout {
                strides: strides(&padded),
                modulo: Some(padded.iter().map(|&d| d as i64).collect()),
                offset: 0,
            })
        }
        Strided::Slice => {
            let begin = call.attrs.ints("begin")?;
            if begin.len() != rank || begin.iter().any(|&b| b < 0) {
                return None;
            }
            Some(plain(begin.iter().zip(&st).map(|(b, s)| b * s).sum()))
        }
        Strided::Narrow => {
            let dim = norm_axis(call.attrs.int("dim"), rank)?;
            let mut start = call.attrs.int("start");
            if start < 0 {
                start += shape[dim] as i64;
            }
            (start >= 0).then(|| plain(start * st[dim]))
        }
        Strided::SliceExt => {
            let dim = norm_axis(call.attrs.int("dim"), rank)?;
            let size = shape[dim] as i64;
            let step = call.attrs.int("step");
            let fix = |v: i64| (if v < 0 { v + size } else { v }).clamp(0, size);
            let (start, end) = (fix(call.attrs.int("start")), fix(call.attrs.int("end")));
            let len = if end > start && step > 0 {
                (end - start + step - 1) / step
            } else {
                0
            };
            if step < 1 || oshape.get(dim) != Some(&(len as usize)) {
                return None;
            }
            let mut l = plain(start * st[dim]);
            l.strides[dim] *= step;
            Some(l)
        }
        Strided::StridedSlice => {
            // Masks and negative strides resolved by the CPU kernel's own plan.
            let (shape_o, strides, offset) =
                ops::defs::shape::strided_slice_layout(call.attrs, shape).ok()?;
            (shape_o == oshape).then_some(Layout {
                strides,
                modulo: None,
                offset,
            })
        }
    }
}

pub(super) fn strided(
    dev: &Device,
    op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    let (Some(x), Some((od, oshape))) = (input(call, 0), out_type(op, call)) else {
        return Ok(None);
    };
    if od != x.dtype() || oshape.len() > MAX_RANK {
        return Ok(None);
    }
    let Family::Strided(which) = op.traits.family else {
        return Ok(None);
    };
    let Some(l) = layout(which, call, x, &oshape) else {
        return Ok(None);
    };
    if l.strides.len() != oshape.len() {
        return Ok(None);
    }
    let s = Storage::of(od);
    let src = dev.on_device(x)?;
    let out = dev.alloc(s, oshape.iter().product())?;
    strided_copy(
        dev,
        s,
        src.ptr,
        out.ptr,
        &oshape,
        &l.strides,
        l.modulo.as_deref(),
        l.offset,
        None,
    )?;
    Ok(Some(KValue::Tensor(tensor(od, oshape, out))))
}

/// The tensors of a tuple input.
fn tuple_tensors<'a>(call: &KernelCall<'a>, i: usize) -> Option<Vec<&'a Tensor>> {
    match call.inputs.get(i) {
        Some(KArg::Tuple(items)) => items
            .iter()
            .map(|v| match v {
                KValue::Tensor(t) => Some(t),
                KValue::Tuple(_) => None,
            })
            .collect(),
        _ => None,
    }
}

/// Concat (along an existing axis) and Stack (along a new one).
pub(super) fn concat(
    dev: &Device,
    op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    let Some(xs) = tuple_tensors(call, 0) else {
        return Ok(None);
    };
    let Some(first) = xs.first() else {
        return Ok(None);
    };
    let dt = first.dtype();
    let stack = op.traits.family == (Family::Concat { stack: true });
    // Every input as it sits in the output (Stack: with a size-1 axis).
    let rank = first.rank() + usize::from(stack);
    let Some(axis) = norm_axis(call.attrs.int("axis"), rank) else {
        return Ok(None);
    };
    let shapes: Vec<Vec<usize>> = xs
        .iter()
        .map(|t| {
            let mut s = t.shape().to_vec();
            if stack {
                s.insert(axis, 1);
            }
            s
        })
        .collect();
    let mut oshape = shapes[0].clone();
    oshape[axis] = shapes.iter().map(|s| s[axis]).sum();
    let fits = xs.iter().zip(&shapes).all(|(t, s)| {
        t.dtype() == dt && s.len() == rank && (0..rank).all(|d| d == axis || s[d] == oshape[d])
    });
    if !fits || rank > MAX_RANK {
        return Ok(None);
    }
    let s = Storage::of(dt);
    let out = dev.alloc(s, oshape.iter().product())?;
    let ost = strides(&oshape);
    let mut at = 0i64;
    for (t, shp) in xs.iter().zip(&shapes) {
        let src = dev.on_device(t)?;
        strided_copy(
            dev,
            s,
            src.ptr,
            out.ptr,
            shp,
            &strides(shp),
            None,
            0,
            Some((&ost, at * ost[axis])),
        )?;
        at += shp[axis] as i64;
    }
    Ok(Some(KValue::Tensor(tensor(dt, oshape, out))))
}

/// `Split` into `output_num` equal parts along `axis`.
pub(super) fn split(
    dev: &Device,
    _op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    let Some(x) = input(call, 0) else {
        return Ok(None);
    };
    let shape = x.shape();
    let (Some(axis), parts) = (
        norm_axis(call.attrs.int("axis"), shape.len()),
        call.attrs.int("output_num"),
    ) else {
        return Ok(None);
    };
    if parts < 1 || shape[axis] % parts as usize != 0 || shape.len() > MAX_RANK {
        return Ok(None);
    }
    let s = Storage::of(x.dtype());
    let src = dev.on_device(x)?;
    let st = strides(shape);
    let mut pshape = shape.to_vec();
    pshape[axis] /= parts as usize;
    let mut outs = Vec::new();
    for i in 0..parts as usize {
        let out = dev.alloc(s, pshape.iter().product())?;
        let off = (i * pshape[axis]) as i64 * st[axis];
        strided_copy(dev, s, src.ptr, out.ptr, &pshape, &st, None, off, None)?;
        outs.push(KValue::Tensor(tensor(x.dtype(), pshape.clone(), out)));
    }
    Ok(Some(KValue::Tuple(outs)))
}

/// `Gather` with `batch_dims=0`. Indices are checked on the host first (an
/// index out of range is the CPU kernel's error).
pub(super) fn gather(
    dev: &Device,
    _op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    let (Some(p), Some(idx)) = (input(call, 0), input(call, 1)) else {
        return Ok(None);
    };
    let shape = p.shape();
    let Some(axis) = norm_axis(call.attrs.int("axis"), shape.len()) else {
        return Ok(None);
    };
    if call.attrs.int("batch_dims") != 0 || !idx.dtype().is_int() || shape.is_empty() {
        return Ok(None);
    }
    let len = shape[axis] as i64;
    let tensor::Buffer::I64(iv) = idx.buffer() else {
        return Ok(None);
    };
    if iv.iter().any(|&i| i < 0 || i >= len) {
        return Ok(None);
    }
    let inner: usize = shape[axis + 1..].iter().product();
    let mut oshape = shape[..axis].to_vec();
    oshape.extend_from_slice(idx.shape());
    oshape.extend_from_slice(&shape[axis + 1..]);
    let n: usize = oshape.iter().product();
    let s = Storage::of(p.dtype());
    let (src, ib) = (dev.on_device(p)?, dev.on_device(idx)?);
    let out = dev.alloc(s, n)?;
    if n > 0 {
        let f = dev.function("copy", &source::gather_kernel(s))?;
        dev.launch(
            &f,
            Device::grid(n),
            &[
                Arg::P(src.ptr),
                Arg::P(ib.ptr),
                Arg::P(out.ptr),
                Arg::I(len),
                Arg::I(inner as i64),
                Arg::I(idx.numel() as i64),
                Arg::I(n as i64),
            ],
        )?;
    }
    Ok(Some(KValue::Tensor(tensor(p.dtype(), oshape, out))))
}

/// `Select(cond, x, y)`, broadcasting all three.
pub(super) fn select(
    dev: &Device,
    op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    let (Some(c), Some(x), Some(y)) = (input(call, 0), input(call, 1), input(call, 2)) else {
        return Ok(None);
    };
    let Some((od, oshape)) = out_type(op, call) else {
        return Ok(None);
    };
    let fits = broadcast_shape(x.shape(), y.shape())
        .and_then(|b| broadcast_shape(c.shape(), &b))
        .is_some_and(|b| b == oshape);
    if !fits || c.dtype() != DType::Bool || oshape.len() > MAX_RANK {
        return Ok(None);
    }
    let mut bc = Bc {
        rank: oshape.len() as i32,
        same: i32::from(
            c.shape() == &oshape[..] && x.shape() == c.shape() && y.shape() == c.shape(),
        ),
        ..Default::default()
    };
    let (tc, tx, ty) = (
        broadcast_strides(c.shape(), &oshape),
        broadcast_strides(x.shape(), &oshape),
        broadcast_strides(y.shape(), &oshape),
    );
    for d in 0..oshape.len() {
        bc.shape[d] = oshape[d] as i64;
        bc.sa[d] = tc[d] as i64;
        bc.sb[d] = tx[d] as i64;
        bc.sc[d] = ty[d] as i64;
    }
    let s = Storage::of(od);
    let (cb, xb, yb) = (
        dev.on_device(c)?,
        as_dtype(dev, x, od)?,
        as_dtype(dev, y, od)?,
    );
    let n: usize = oshape.iter().product();
    let out = dev.alloc(s, n)?;
    if n > 0 {
        let f = dev.function("copy", &source::select_kernel(s))?;
        dev.launch(
            &f,
            Device::grid(n),
            &[
                Arg::P(cb.ptr),
                Arg::P(xb.ptr()),
                Arg::P(yb.ptr()),
                Arg::P(out.ptr),
                Arg::I(n as i64),
                Arg::Bc(bc),
            ],
        )?;
    }
    Ok(Some(KValue::Tensor(tensor(od, oshape, out))))
}

/// `_BroadcastToShapeOf(grad, like)`: `grad` with the reduced axes put back
/// and broadcast to `like`'s shape; with `mean`, divided by their size.
pub(super) fn broadcast_like(
    dev: &Device,
    _op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    let (Some(g), Some(like)) = (input(call, 0), input(call, 1)) else {
        return Ok(None);
    };
    let to = like.shape();
    let rank = to.len();
    let axes = call.attrs.ints("axis").unwrap_or_default();
    let mut mask = vec![axes.is_empty(); rank];
    for &a in &axes {
        match norm_axis(a, rank) {
            Some(i) if rank > 0 && !mask[i] => mask[i] = true,
            _ => return Ok(None),
        }
    }
    let from: Vec<usize> = to
        .iter()
        .zip(&mask)
        .map(|(&d, &m)| if m { 1 } else { d })
        .collect();
    let dt = g.dtype();
    let mean = call.attrs.bool("mean") && dt != DType::Bool;
    if g.numel() != from.iter().product::<usize>() || rank > MAX_RANK || (mean && !dt.is_float()) {
        return Ok(None);
    }
    let count: usize = to
        .iter()
        .zip(&mask)
        .filter(|(_, &m)| m)
        .map(|(&d, _)| d)
        .product();
    let s = Storage::of(dt);
    let n: usize = to.iter().product();
    let src = dev.on_device(g)?;
    let out = dev.alloc(s, n)?;
    let st: Vec<i64> = broadcast_strides(&from, to)
        .into_iter()
        .map(|v| v as i64)
        .collect();
    strided_copy(dev, s, src.ptr, out.ptr, to, &st, None, 0, None)?;
    if mean && n > 0 {
        // out /= count, as the CPU kernel divides (in the storage type).
        let k = match s {
            Storage::F64 => tensor::Buffer::F64(vec![count as f64]),
            _ => tensor::Buffer::F32(vec![count as f32]),
        };
        let kb = dev.scalar(&k)?;
        let mut bc = Bc {
            rank: 1,
            ..Default::default()
        };
        bc.shape[0] = n as i64;
        bc.sa[0] = 1;
        let f = dev.function("ew_RealDiv", &source::elementwise_kernel("RealDiv", s))?;
        dev.launch(
            &f,
            Device::grid(n),
            &[
                Arg::P(out.ptr),
                Arg::P(kb.ptr),
                Arg::P(out.ptr),
                Arg::I(n as i64),
                Arg::I32(source::dtype_code(dt)),
                Arg::F(0.0),
                Arg::F(0.0),
                Arg::Bc(bc),
            ],
        )?;
    }
    Ok(Some(KValue::Tensor(tensor(dt, to.to_vec(), out))))
}
