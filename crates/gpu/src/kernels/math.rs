//! Elementwise primitives, `Cast`, reductions, softmax and normalisation.

use ops::kernel::{broadcast_shape, broadcast_strides};
use ops::{Family, KValue, KernelCall, OpDef, ReduceAxes, ReduceKind, RowNorm};
use tensor::DType;

use super::{as_dtype, cast_buf, infer, input, known, norm_axis, out_type, permute, Held};
use crate::device::{tensor, Arg, Bc, DevResult, Device};
use crate::source::{self, Reduce, Storage, MAX_RANK};
use crate::table::{Compute, Elementwise};

pub(super) fn elementwise(
    dev: &Device,
    e: &Elementwise,
    op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    if e.guard.is_some_and(|g| !g(call.attrs)) || call.inputs.len() != e.arity() + e.unread {
        return Ok(None);
    }
    let xs: Vec<_> = (0..e.arity()).map(|i| input(call, i)).collect();
    let Some(xs) = xs.into_iter().collect::<Option<Vec<_>>>() else {
        return Ok(None);
    };
    let Some((od, oshape)) = out_type(op, call) else {
        return Ok(None);
    };
    let unread_shapes_match = (e.arity()..call.inputs.len())
        .all(|i| input(call, i).is_some_and(|t| t.shape() == &oshape[..]));
    if !unread_shapes_match {
        return Ok(None);
    }
    let cd = match e.compute {
        Compute::Out => od,
        Compute::Promoted => call.promoted(),
        Compute::Input => xs[0].dtype(),
        Compute::Bool => DType::Bool,
    };
    let cs = Storage::of(cd);
    if !source::elementwise_storages(e).contains(&cs)
        || (e.compute != Compute::Out && od != DType::Bool)
    {
        return Ok(None);
    }
    let mut bc = Bc::default();
    if e.arity() == 2 {
        let (sa, sb) = (xs[0].shape(), xs[1].shape());
        if broadcast_shape(sa, sb).as_deref() != Some(&oshape[..]) || oshape.len() > MAX_RANK {
            return Ok(None);
        }
        bc.same = i32::from(sa == sb);
        bc.rank = oshape.len() as i32;
        let (ta, tb) = (
            broadcast_strides(sa, &oshape),
            broadcast_strides(sb, &oshape),
        );
        for d in 0..oshape.len() {
            bc.shape[d] = oshape[d] as i64;
            bc.sa[d] = ta[d] as i64;
            bc.sb[d] = tb[d] as i64;
        }
    } else if xs[0].shape() != &oshape[..] {
        return Ok(None);
    }
    let ins: Vec<Held> = xs
        .iter()
        .map(|t| as_dtype(dev, t, cd))
        .collect::<DevResult<_>>()?;
    let n: usize = oshape.iter().product();
    let out = dev.alloc(Storage::of(od), n)?;
    if n > 0 {
        // Float attributes are f32 in MindSpore; the CPU kernels round them
        // so, and so must these (in f64 programs the difference shows).
        let p = |i: usize| {
            e.params()
                .get(i)
                .map_or(0.0, |name| call.attrs.f64(name) as f32 as f64)
        };
        let f = dev.function(
            &source::elementwise_unit_name(e.op),
            &source::elementwise_kernel(e.op, cs),
        )?;
        let mut args: Vec<Arg> = ins.iter().map(|h| Arg::P(h.ptr())).collect();
        args.extend([
            Arg::P(out.ptr),
            Arg::I(n as i64),
            Arg::I32(source::dtype_code(od)),
            Arg::F(p(0)),
            Arg::F(p(1)),
        ]);
        if e.arity() == 2 {
            args.push(Arg::Bc(bc));
        }
        dev.launch(&f, Device::grid(n), &args)?;
    }
    Ok(Some(KValue::Tensor(tensor(od, oshape, out))))
}

pub(super) fn cast_op(
    dev: &Device,
    _op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    let Some(x) = input(call, 0) else {
        return Ok(None);
    };
    let to = call.attrs.dtype("dtype");
    if to == x.dtype() {
        return Ok(Some(KValue::Tensor(x.clone())));
    }
    let src = dev.on_device(x)?;
    let out = cast_buf(dev, src, x.dtype(), to, x.numel())?;
    Ok(Some(KValue::Tensor(tensor(to, x.shape().to_vec(), out))))
}

/// The reduced axes of a reduction call (sorted, distinct); `None`: all.
fn reduced_axes(from: ReduceAxes, call: &KernelCall, rank: usize) -> Option<Vec<usize>> {
    let given = match from {
        ReduceAxes::All => None,
        ReduceAxes::Dim => call.attrs.ints("dim"),
        ReduceAxes::Axis => call.attrs.ints("axis"),
    };
    let mut axes = match given {
        None => (0..rank).collect(),
        Some(v) if v.is_empty() => (0..rank).collect(),
        Some(v) => v
            .iter()
            .map(|&a| norm_axis(a, rank))
            .collect::<Option<Vec<_>>>()?,
    };
    axes.sort_unstable();
    axes.dedup();
    Some(axes)
}

pub(super) fn reduce(
    dev: &Device,
    op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    let Some(x) = input(call, 0) else {
        return Ok(None);
    };
    let Some((od, oshape)) = out_type(op, call) else {
        return Ok(None);
    };
    let Family::Reduce { kind, axes } = op.traits.family else {
        return Ok(None);
    };
    let (kind, mean) = match kind {
        ReduceKind::Sum => (Reduce::Sum, false),
        ReduceKind::Mean => (Reduce::Sum, true),
        ReduceKind::Max => (Reduce::Max, false),
        ReduceKind::Min => (Reduce::Min, false),
        ReduceKind::Prod => (Reduce::Prod, false),
        ReduceKind::All => (Reduce::All, false),
        ReduceKind::Any => (Reduce::Any, false),
    };
    let cd = if matches!(kind, Reduce::All | Reduce::Any) {
        DType::Bool
    } else {
        od
    };
    let shape = x.shape();
    if !kind.storages().contains(&Storage::of(cd))
        || (mean && !cd.is_float())
        || od != cd
        || x.numel() == 0
        || shape.len() > source::MAX_RANK
    {
        return Ok(None);
    }
    let Some(axes) = reduced_axes(axes, call, shape.len()) else {
        return Ok(None);
    };
    let rows = x.numel() / axes.iter().map(|&d| shape[d]).product::<usize>().max(1);
    if oshape.iter().product::<usize>() != rows {
        return Ok(None);
    }
    let out = reduce_axes(dev, x, cd, kind, &axes, mean)?;
    Ok(Some(KValue::Tensor(tensor(od, oshape, out))))
}

/// `x` (cast to `cd`) reduced by `kind` over `axes` (sorted, distinct;
/// `mean`: divided by their size): one element per kept position, in order.
/// The caller checks the dtype has kernels, the rank fits and `x` is not empty.
fn reduce_axes(
    dev: &Device,
    x: &tensor::Tensor,
    cd: DType,
    kind: Reduce,
    axes: &[usize],
    mean: bool,
) -> DevResult<crate::device::DevBuf> {
    let shape = x.shape();
    let s = Storage::of(cd);
    let xin = as_dtype(dev, x, cd)?;
    let kept: Vec<usize> = (0..shape.len()).filter(|d| !axes.contains(d)).collect();
    let cols: usize = axes.iter().map(|&d| shape[d]).product();
    let rows = x.numel() / cols.max(1);
    // Reduced axes last: a copy unless they already are.
    let trailing = axes.iter().enumerate().all(|(i, &a)| a == kept.len() + i);
    let moved;
    let src = if trailing {
        xin.ptr()
    } else {
        let perm: Vec<usize> = kept.iter().chain(axes).copied().collect();
        moved = permute(dev, s, xin.ptr(), shape, &perm)?;
        moved.ptr
    };
    let out = dev.alloc(s, rows)?;
    let f = dev.function("reduce", &source::reduce_kernel(kind, s))?;
    dev.launch(
        &f,
        Device::rows(rows),
        &[
            Arg::P(src),
            Arg::P(out.ptr),
            Arg::I(rows as i64),
            Arg::I(cols as i64),
            Arg::I32(source::dtype_code(cd)),
            Arg::F(if mean { cols as f64 } else { 1.0 }),
        ],
    )?;
    Ok(out)
}

/// `BiasAddGrad` (sum over all but the channel axis) and `_SumToShapeOf`
/// (sum over the dimensions `like` was broadcast along).
pub(super) fn sum_to(
    dev: &Device,
    op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    let (Some(g), Some((od, oshape))) = (input(call, 0), out_type(op, call)) else {
        return Ok(None);
    };
    let shape = g.shape();
    let rank = shape.len();
    let axes: Vec<usize> = if op.traits.family == (Family::SumTo { bias_grad: true }) {
        let nhwc = call
            .attrs
            .get("data_format")
            .and_then(|v| v.as_str())
            .is_some_and(|f| f.eq_ignore_ascii_case("NHWC"));
        if rank < 2 {
            return Ok(None);
        }
        let channel = if nhwc { rank - 1 } else { 1 };
        (0..rank).filter(|&d| d != channel).collect()
    } else {
        let Some(like) = input(call, 1) else {
            return Ok(None);
        };
        let Some(lead) = rank.checked_sub(like.rank()) else {
            return Ok(None);
        };
        let mut padded = vec![1usize; lead];
        padded.extend_from_slice(like.shape());
        if padded.iter().zip(shape).any(|(&l, &d)| l != d && l != 1) {
            return Ok(None);
        }
        (0..rank)
            .filter(|&d| padded[d] != shape[d] || d < lead)
            .collect()
    };
    if axes.is_empty() {
        if od == g.dtype() && oshape == shape {
            return Ok(Some(KValue::Tensor(g.clone())));
        }
        let src = dev.on_device(g)?;
        let out = super::cast_buf(dev, src, g.dtype(), od, g.numel())?;
        return Ok(Some(KValue::Tensor(tensor(od, oshape, out))));
    }
    let cols: usize = axes.iter().map(|&d| shape[d]).product();
    let fits = Reduce::Sum.storages().contains(&Storage::of(od))
        && g.numel() > 0
        && rank <= source::MAX_RANK
        && oshape.iter().product::<usize>() * cols == g.numel();
    if !fits {
        return Ok(None);
    }
    let out = reduce_axes(dev, g, od, Reduce::Sum, &axes, false)?;
    Ok(Some(KValue::Tensor(tensor(od, oshape, out))))
}

pub(super) fn softmax(
    dev: &Device,
    op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    // Softmax(x; axis), LogSoftmax(logits; axis), SoftmaxBackward(dout, out;
    // dim), LogSoftmaxGrad(logits, grad; axis): the forward output and its
    // gradient's inputs, and the axis attribute.
    let Family::Softmax { log, grad } = op.traits.family else {
        return Ok(None);
    };
    let (y_index, attr) = match (log, grad) {
        (false, true) => (1, "dim"),
        _ => (0, "axis"),
    };
    let Some(x) = input(call, y_index) else {
        return Ok(None);
    };
    let dy = if grad {
        match input(call, 1 - y_index) {
            Some(d) if d.dtype() == x.dtype() && d.shape() == x.shape() => Some(d),
            _ => return Ok(None),
        }
    } else {
        None
    };
    let shape = x.shape().to_vec();
    let axis = match call.attrs.ints(attr).as_deref() {
        Some([a]) => norm_axis(*a, shape.len()),
        _ => None,
    };
    let (Some(axis), true) = (axis, x.dtype().is_float()) else {
        return Ok(None);
    };
    if x.numel() == 0 || shape.is_empty() || shape.len() > source::MAX_RANK {
        return Ok(None);
    }
    let s = Storage::of(x.dtype());
    let last = shape.len() - 1;
    let mut perm: Vec<usize> = (0..shape.len()).collect();
    perm.swap(axis, last);
    // Inputs with the axis last (swapping two axes is its own inverse).
    let mut kept = Vec::new();
    let mut ptrs = Vec::new();
    for t in std::iter::once(x).chain(dy) {
        let b = dev.on_device(t)?;
        if axis == last {
            ptrs.push(b.ptr);
        } else {
            let moved = permute(dev, s, b.ptr, &shape, &perm)?;
            ptrs.push(moved.ptr);
            kept.push(moved);
        }
    }
    let cols = shape[axis];
    let rows = x.numel() / cols;
    let out = dev.alloc(s, x.numel())?;
    let logmode = Arg::I32(i32::from(log));
    let code = Arg::I32(source::dtype_code(x.dtype()));
    let (kernel, mut args) = if grad {
        (
            source::softmax_grad_kernel(s),
            vec![Arg::P(ptrs[0]), Arg::P(ptrs[1])],
        )
    } else {
        (source::softmax_kernel(s), vec![Arg::P(ptrs[0])])
    };
    args.extend([
        Arg::P(out.ptr),
        Arg::I(rows as i64),
        Arg::I(cols as i64),
        logmode,
        code,
    ]);
    let f = dev.function("softmax", &kernel)?;
    dev.launch(&f, Device::rows(rows), &args)?;
    drop(kept);
    let out = if axis == last {
        out
    } else {
        let moved_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
        permute(dev, s, out.ptr, &moved_shape, &perm)?
    };
    Ok(Some(KValue::Tensor(tensor(x.dtype(), shape, out))))
}

/// LayerNorm, LayerNormExt and RmsNorm over trailing dimensions.
pub(super) fn norm(
    dev: &Device,
    op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    let Some(x) = input(call, 0) else {
        return Ok(None);
    };
    let dt = x.dtype();
    let shape = x.shape();
    if !matches!(dt, DType::F32 | DType::F64) || x.numel() == 0 {
        return Ok(None);
    }
    let Some(ops::AbsVal::Tuple(outs)) = infer(op, call) else {
        return Ok(None);
    };
    let outs: Vec<_> = outs.iter().map(known).collect();
    let Some(outs) = outs.into_iter().collect::<Option<Vec<_>>>() else {
        return Ok(None);
    };
    if outs.iter().any(|(d, _)| *d != dt) {
        return Ok(None);
    }
    // The normalised trailing size, and the scale/shift inputs.
    let Family::RowNorm(norm) = op.traits.family else {
        return Ok(None);
    };
    let (cols, gamma, beta, rms) = match norm {
        RowNorm::Layer => {
            let (Some(bna), Some(bpa)) = (
                norm_axis(call.attrs.int("begin_norm_axis"), shape.len()),
                norm_axis(call.attrs.int("begin_params_axis"), shape.len()),
            ) else {
                return Ok(None);
            };
            if bna != bpa {
                return Ok(None);
            }
            (
                shape[bna..].iter().product::<usize>(),
                input(call, 1),
                input(call, 2),
                false,
            )
        }
        RowNorm::LayerExt => {
            let k = call.attrs.ints("normalized_shape").map_or(0, |v| v.len());
            if k > shape.len() {
                return Ok(None);
            }
            let cols = shape[shape.len() - k..].iter().product::<usize>();
            (cols, input(call, 1), input(call, 2), false)
        }
        RowNorm::Rms => {
            let Some(g) = input(call, 1) else {
                return Ok(None);
            };
            (g.numel(), Some(g), None, true)
        }
        RowNorm::LayerGrad => return Ok(None),
    };
    for p in [gamma, beta].into_iter().flatten() {
        if p.numel() != cols || p.dtype() != dt {
            return Ok(None);
        }
    }
    let rows = x.numel() / cols.max(1);
    // (y, mean, variance or rstd) or (y, rstd), as the shape rule says.
    let sizes: Vec<usize> = outs.iter().map(|(_, s)| s.iter().product()).collect();
    let expected = if rms {
        vec![x.numel(), rows]
    } else {
        vec![x.numel(), rows, rows]
    };
    if cols == 0 || sizes != expected {
        return Ok(None);
    }
    let s = Storage::of(dt);
    let xin = dev.on_device(x)?;
    let ptr = |t: Option<&tensor::Tensor>| -> DevResult<u64> {
        t.map_or(Ok(0), |t| dev.on_device(t).map(|b| b.ptr))
    };
    let (g, b) = (ptr(gamma)?, ptr(beta)?);
    let y = dev.alloc(s, x.numel())?;
    let code = source::dtype_code(dt);
    let eps = match norm {
        RowNorm::LayerExt => call.attrs.f64("eps"),
        _ => call.attrs.f64("epsilon"),
    };
    let mut results = vec![];
    if rms {
        let rstd = dev.alloc(s, rows)?;
        let f = dev.function("norm", &source::norm_kernel(true, s))?;
        dev.launch(
            &f,
            Device::rows(rows),
            &[
                Arg::P(xin.ptr),
                Arg::P(g),
                Arg::P(y.ptr),
                Arg::P(rstd.ptr),
                Arg::I(rows as i64),
                Arg::I(cols as i64),
                Arg::F(eps),
                Arg::I32(code),
            ],
        )?;
        results.extend([y, rstd]);
    } else {
        let (mean, stat) = (dev.alloc(s, rows)?, dev.alloc(s, rows)?);
        let f = dev.function("norm", &source::norm_kernel(false, s))?;
        dev.launch(
            &f,
            Device::rows(rows),
            &[
                Arg::P(xin.ptr),
                Arg::P(g),
                Arg::P(b),
                Arg::P(y.ptr),
                Arg::P(mean.ptr),
                Arg::P(stat.ptr),
                Arg::I(rows as i64),
                Arg::I(cols as i64),
                Arg::F(eps),
                Arg::I32(i32::from(norm == RowNorm::LayerExt)),
                Arg::I32(code),
            ],
        )?;
        results.extend([y, mean, stat]);
    }
    Ok(Some(KValue::Tuple(
        results
            .into_iter()
            .zip(outs)
            .map(|(buf, (d, shp))| KValue::Tensor(tensor(d, shp, buf)))
            .collect(),
    )))
}

/// `BatchNorm` (`(y, mean, variance, mean, variance)`) and `BatchNormGrad`
/// (`(dx, dscale, dbias)`; its sixth input, `reserve`, is not read) over
/// `[N, C, ...]`, every tensor of one float dtype.
pub(super) fn batch_norm(
    dev: &Device,
    op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    let Family::BatchNorm { grad } = op.traits.family else {
        return Ok(None);
    };
    let ts: Vec<_> = (0..5).map(|i| input(call, i)).collect();
    let Some(ts) = ts.into_iter().collect::<Option<Vec<_>>>() else {
        return Ok(None);
    };
    // The activation: `x` (forward) or `dy` and `x` (gradient); then the
    // per-channel parameters.
    let x = if grad { ts[1] } else { ts[0] };
    let dt = x.dtype();
    let shape = x.shape();
    let nchw = call
        .attrs
        .get("data_format")
        .and_then(|v| v.as_str())
        .is_none_or(|f| f.eq_ignore_ascii_case("NCHW"));
    if !matches!(dt, DType::F32 | DType::F64) || shape.len() < 2 || !nchw || x.numel() == 0 {
        return Ok(None);
    }
    let (n, ch) = (shape[0], shape[1]);
    let hw: usize = shape[2..].iter().product();
    let params = if grad { &ts[2..] } else { &ts[1..] };
    if params.iter().any(|t| t.shape() != [ch] || t.dtype() != dt)
        || (grad && (ts[0].shape() != shape || ts[0].dtype() != dt))
    {
        return Ok(None);
    }
    let s = Storage::of(dt);
    let ptrs: Vec<u64> = ts
        .iter()
        .map(|t| dev.on_device(t).map(|b| b.ptr))
        .collect::<DevResult<_>>()?;
    let big = dev.alloc(s, x.numel())?;
    let (c1, c2) = (dev.alloc(s, ch)?, dev.alloc(s, ch)?);
    let mut args: Vec<Arg> = ptrs.iter().map(|&p| Arg::P(p)).collect();
    args.extend([
        Arg::P(big.ptr),
        Arg::P(c1.ptr),
        Arg::P(c2.ptr),
        Arg::I(n as i64),
        Arg::I(ch as i64),
        Arg::I(hw as i64),
        Arg::F(call.attrs.f64("epsilon")),
        Arg::I32(i32::from(call.attrs.bool("is_training"))),
        Arg::I32(source::dtype_code(dt)),
    ]);
    let f = dev.function("norm", &source::batch_norm_kernel(grad, s))?;
    dev.launch(&f, Device::rows(ch), &args)?;
    let big = KValue::Tensor(tensor(dt, shape.to_vec(), big));
    let (c1, c2) = (std::sync::Arc::new(c1), std::sync::Arc::new(c2));
    let per_channel = |b: &std::sync::Arc<crate::device::DevBuf>| {
        KValue::Tensor(tensor::Tensor::from_device(dt, vec![ch], b.clone()))
    };
    Ok(Some(KValue::Tuple(if grad {
        vec![big, per_channel(&c1), per_channel(&c2)]
    } else {
        // The reserve spaces are the batch statistics again (one block each).
        vec![
            big,
            per_channel(&c1),
            per_channel(&c2),
            per_channel(&c1),
            per_channel(&c2),
        ]
    })))
}

/// `LayerNormGrad(x, dy, variance, mean, gamma)`: `(dx, dgamma, dbeta)`,
/// where `gamma` covers the normalised dimensions exactly.
pub(super) fn layer_norm_grad(
    dev: &Device,
    _op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    let ts: Vec<_> = (0..5).map(|i| input(call, i)).collect();
    let Some(ts) = ts.into_iter().collect::<Option<Vec<_>>>() else {
        return Ok(None);
    };
    let (x, dy, var, mean, gamma) = (ts[0], ts[1], ts[2], ts[3], ts[4]);
    let dt = dy.dtype();
    let shape = x.shape();
    let Some(bna) = norm_axis(call.attrs.int("begin_norm_axis"), shape.len()) else {
        return Ok(None);
    };
    let rows: usize = shape[..bna].iter().product();
    let cols: usize = shape[bna..].iter().product();
    let fits = matches!(dt, DType::F32 | DType::F64)
        && ts.iter().all(|t| t.dtype() == dt)
        && dy.shape() == shape
        && var.numel() == rows
        && mean.numel() == rows
        && gamma.numel() == cols
        && rows * cols > 0;
    if !fits {
        return Ok(None);
    }
    let s = Storage::of(dt);
    let p: Vec<u64> = ts
        .iter()
        .map(|t| dev.on_device(t).map(|b| b.ptr))
        .collect::<DevResult<_>>()?;
    let (dx, dgamma, dbeta) = (
        dev.alloc(s, x.numel())?,
        dev.alloc(s, cols)?,
        dev.alloc(s, cols)?,
    );
    let eps = Arg::F(call.attrs.f64("epsilon"));
    let code = Arg::I32(source::dtype_code(dt));
    let f = dev.function("norm", &source::layer_norm_grad_kernel(false, s))?;
    dev.launch(
        &f,
        Device::rows(rows),
        &[
            Arg::P(p[0]),
            Arg::P(p[1]),
            Arg::P(p[2]),
            Arg::P(p[3]),
            Arg::P(p[4]),
            Arg::P(dx.ptr),
            Arg::I(rows as i64),
            Arg::I(cols as i64),
            eps,
            code,
        ],
    )?;
    let f = dev.function("norm", &source::layer_norm_grad_kernel(true, s))?;
    dev.launch(
        &f,
        Device::grid(cols),
        &[
            Arg::P(p[0]),
            Arg::P(p[1]),
            Arg::P(p[2]),
            Arg::P(p[3]),
            Arg::P(dgamma.ptr),
            Arg::P(dbeta.ptr),
            Arg::I(rows as i64),
            Arg::I(cols as i64),
            eps,
            code,
        ],
    )?;
    let gshape = gamma.shape().to_vec();
    Ok(Some(KValue::Tuple(vec![
        KValue::Tensor(tensor(dt, shape.to_vec(), dx)),
        KValue::Tensor(tensor(dt, gshape.clone(), dgamma)),
        KValue::Tensor(tensor(dt, gshape, dbeta)),
    ])))
}

/// `SparseSoftmaxCrossEntropyWithLogits(logits [N, C], labels [N])`: the mean
/// loss, or with `is_grad` its gradient. Labels are checked on the host (one
/// out of range is the CPU kernel's error).
pub(super) fn sparse_ce(
    dev: &Device,
    _op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    let (Some(x), Some(labels)) = (input(call, 0), input(call, 1)) else {
        return Ok(None);
    };
    let dt = x.dtype();
    let shape = x.shape();
    if !matches!(dt, DType::F32 | DType::F64)
        || shape.len() != 2
        || labels.shape() != [shape[0]]
        || shape[0] == 0
        || shape[1] == 0
    {
        return Ok(None);
    }
    let (rows, cols) = (shape[0], shape[1]);
    let tensor::Buffer::I64(idx) = labels.buffer() else {
        return Ok(None);
    };
    if idx.iter().any(|&l| l < 0 || l as usize >= cols) {
        return Ok(None);
    }
    let s = Storage::of(dt);
    let (xb, lb) = (dev.on_device(x)?, dev.on_device(labels)?);
    let grad = call.attrs.bool("is_grad");
    let out = dev.alloc(s, if grad { rows * cols } else { rows })?;
    let f = dev.function("softmax", &source::sparse_ce_kernel(s))?;
    dev.launch(
        &f,
        Device::rows(rows),
        &[
            Arg::P(xb.ptr),
            Arg::P(lb.ptr),
            Arg::P(out.ptr),
            Arg::I(rows as i64),
            Arg::I(cols as i64),
            Arg::I32(i32::from(grad)),
            Arg::I32(source::dtype_code(dt)),
        ],
    )?;
    if grad {
        return Ok(Some(KValue::Tensor(tensor(dt, shape.to_vec(), out))));
    }
    // The mean of the per-row losses.
    let loss = dev.alloc(s, 1)?;
    let f = dev.function("reduce", &source::reduce_kernel(Reduce::Sum, s))?;
    dev.launch(
        &f,
        Device::rows(1),
        &[
            Arg::P(out.ptr),
            Arg::P(loss.ptr),
            Arg::I(1),
            Arg::I(rows as i64),
            Arg::I32(source::dtype_code(dt)),
            Arg::F(rows as f64),
        ],
    )?;
    Ok(Some(KValue::Tensor(tensor(dt, Vec::new(), loss))))
}
