//! Running primitives on the device. Each family's `run` returns
//! `Ok(Some(result))`, or `Ok(None)` when this call is one it does not handle
//! (a dtype, rank or attribute the kernels do not cover): the backend then
//! runs the CPU kernel.

mod data;
mod linalg;
mod math;
mod optim;

use ops::{AbsVal, Family, InferCall, KArg, KValue, KernelCall, OpDef, RowNorm};
use tensor::{DType, Tensor};

use crate::device::{Arg, DevBuf, DevResult, Device};
use crate::source::{self, Storage};

/// A device kernel: `Ok(None)` for a call it does not handle.
pub type Kernel = fn(&Device, &'static OpDef, &KernelCall) -> DevResult<Option<KValue>>;

/// Runs `op` on the device, or says it cannot.
pub fn run(dev: &Device, op: &'static OpDef, call: &KernelCall) -> DevResult<Option<KValue>> {
    match kernel_for(op) {
        Some(kernel) => kernel(dev, op, call),
        None => Ok(None),
    }
}

/// The device kernel of `op`, if it has one: elementwise ops by their
/// record's formula, the rest by the record's family, never by name. The one
/// list of what runs on the GPU.
pub fn kernel_for(op: &OpDef) -> Option<Kernel> {
    if crate::table::elementwise(op.name).is_some() {
        return Some(elementwise);
    }
    Some(match op.traits.family {
        Family::Softmax { .. } => math::softmax,
        Family::RowNorm(RowNorm::LayerGrad) => math::layer_norm_grad,
        Family::RowNorm(_) => math::norm,
        Family::BatchNorm { .. } => math::batch_norm,
        Family::Pool2D { grad: false, .. } => linalg::pool,
        Family::Pool2D { grad: true, .. } => linalg::pool_grad,
        Family::Conv2D(_) => linalg::conv2d,
        Family::Cast => math::cast_op,
        Family::Reduce { .. } => math::reduce,
        Family::SumTo { .. } => math::sum_to,
        Family::SparseCrossEntropy => math::sparse_ce,
        // Reads the shape only: no data moves (the sizes
        // `Conv2DBackpropInput` and the pooling gradients take).
        Family::ShapeOf => shape_only,
        // `Load` among them: a weight's value at this point of the effect
        // order.
        Family::View => view,
        Family::Strided(_) => data::strided,
        Family::Concat { .. } => data::concat,
        Family::Split => data::split,
        Family::Gather => data::gather,
        Family::BroadcastLike => data::broadcast_like,
        Family::Select => data::select,
        Family::MatMul { .. } => linalg::matmul,
        Family::BiasAdd => linalg::bias_add,
        Family::Optimizer(_) => optim::optimizer,
        Family::Other => return None,
    })
}

fn elementwise(dev: &Device, op: &'static OpDef, call: &KernelCall) -> DevResult<Option<KValue>> {
    match crate::table::elementwise(op.name) {
        Some(e) => math::elementwise(dev, e, op, call),
        None => Ok(None),
    }
}

fn shape_only(_: &Device, op: &'static OpDef, call: &KernelCall) -> DevResult<Option<KValue>> {
    Ok(op.kernel.and_then(|k| k(call).ok()))
}

fn view(_: &Device, op: &'static OpDef, call: &KernelCall) -> DevResult<Option<KValue>> {
    data::view(op, call)
}

/// The shape rule's result for this call.
fn infer(op: &'static OpDef, call: &KernelCall) -> Option<AbsVal> {
    let abs: Vec<AbsVal> = (0..call.inputs.len()).map(|i| call.abs(i)).collect();
    (op.infer)(&InferCall {
        op,
        inputs: &abs,
        attrs: call.attrs,
    })
    .ok()
}

/// A fully known tensor type: dtype and shape.
fn known(a: &AbsVal) -> Option<(DType, Vec<usize>)> {
    match a {
        AbsVal::Scalar { dtype, .. } => Some((*dtype, Vec::new())),
        AbsVal::Tensor { dtype, shape } => {
            let dims = shape.dims()?;
            let mut v = Vec::with_capacity(dims.len());
            for d in dims {
                match d {
                    ir::Dim::Known(n) if *n >= 0 => v.push(*n as usize),
                    _ => return None,
                }
            }
            Some((*dtype, v))
        }
        _ => None,
    }
}

/// The single result's dtype and shape.
fn out_type(op: &'static OpDef, call: &KernelCall) -> Option<(DType, Vec<usize>)> {
    known(&infer(op, call)?)
}

/// Input `i` if it is a tensor.
fn input<'a>(call: &KernelCall<'a>, i: usize) -> Option<&'a Tensor> {
    match call.inputs.get(i) {
        Some(KArg::Tensor(t)) => Some(t),
        _ => None,
    }
}

/// A device block, borrowed from a tensor or made for this call.
enum Held<'a> {
    Ref(&'a DevBuf),
    Own(DevBuf),
}

impl Held<'_> {
    fn ptr(&self) -> u64 {
        match self {
            Held::Ref(b) => b.ptr,
            Held::Own(b) => b.ptr,
        }
    }
}

/// `t` on the device in dtype `to` (cast there when it differs).
fn as_dtype<'a>(dev: &Device, t: &'a Tensor, to: DType) -> DevResult<Held<'a>> {
    let src = dev.on_device(t)?;
    if t.dtype() == to {
        return Ok(Held::Ref(src));
    }
    Ok(Held::Own(cast_buf(dev, src, t.dtype(), to, t.numel())?))
}

/// A cast of `n` elements from `from` to `to` into a new block.
fn cast_buf(dev: &Device, src: &DevBuf, from: DType, to: DType, n: usize) -> DevResult<DevBuf> {
    let (fs, ts) = (Storage::of(from), Storage::of(to));
    let out = dev.alloc(ts, n)?;
    if n > 0 {
        let f = dev.function("cast", &source::cast_kernel(fs, ts))?;
        dev.launch(
            &f,
            Device::grid(n),
            &[
                Arg::P(src.ptr),
                Arg::P(out.ptr),
                Arg::I(n as i64),
                Arg::I32(source::dtype_code(to)),
            ],
        )?;
    }
    Ok(out)
}

/// Row-major strides.
fn strides(shape: &[usize]) -> Vec<i64> {
    let mut s = vec![0i64; shape.len()];
    let mut acc = 1i64;
    for i in (0..shape.len()).rev() {
        s[i] = acc;
        acc *= shape[i] as i64;
    }
    s
}

/// `axis` (negative from the end) as an index into `rank` dimensions.
fn norm_axis(axis: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    (0..r.max(1)).contains(&a).then_some(a as usize)
}

/// Copies `src` (shape `shape`, laid out with `src_strides` from `soff`)
/// into `dst` row-major, or with `dst_strides` from `doff` when given.
#[allow(clippy::too_many_arguments)]
fn strided_copy(
    dev: &Device,
    s: Storage,
    src: u64,
    dst: u64,
    shape: &[usize],
    src_strides: &[i64],
    modulo: Option<&[i64]>,
    soff: i64,
    dst_layout: Option<(&[i64], i64)>,
) -> DevResult<()> {
    let n: usize = shape.iter().product();
    if n == 0 {
        return Ok(());
    }
    let mut st = crate::device::St {
        rank: shape.len() as i32,
        soff,
        ..Default::default()
    };
    let row = strides(shape);
    for (d, &len) in shape.iter().enumerate() {
        st.shape[d] = len as i64;
        st.ss[d] = src_strides[d];
        st.modulo[d] = modulo.map_or(i64::MAX, |m| m[d]);
        st.ds[d] = dst_layout.map_or(row[d], |(ds, _)| ds[d]);
    }
    st.doff = dst_layout.map_or(0, |(_, o)| o);
    let f = dev.function("copy", &source::copy_kernel(s))?;
    dev.launch(
        &f,
        Device::grid(n),
        &[Arg::P(src), Arg::P(dst), Arg::I(n as i64), Arg::St(st)],
    )
}

/// `x` (shape `shape`) with its dimensions reordered by `perm`, into a new block.
fn permute(dev: &Device, s: Storage, x: u64, shape: &[usize], perm: &[usize]) -> DevResult<DevBuf> {
    let n: usize = shape.iter().product();
    let out = dev.alloc(s, n)?;
    let st = strides(shape);
    let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let src_strides: Vec<i64> = perm.iter().map(|&p| st[p]).collect();
    strided_copy(dev, s, x, out.ptr, &out_shape, &src_strides, None, 0, None)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each family reaches the kernel it had when the GPU matched names.
    #[test]
    fn families_reach_their_kernels() {
        let cases: &[(&[&str], Kernel)] = &[
            (&["Cast"], math::cast_op),
            (
                &[
                    "ReduceSum",
                    "ReduceMean",
                    "ReduceMax",
                    "ReduceMin",
                    "ReduceProd",
                    "ReduceAll",
                    "ReduceAny",
                    "SumExt",
                    "MeanExt",
                    "ProdExt",
                    "Max",
                    "Min",
                ],
                math::reduce,
            ),
            (&["BiasAddGrad", "_SumToShapeOf"], math::sum_to),
            (&["SparseSoftmaxCrossEntropyWithLogits"], math::sparse_ce),
            (&["Shape"], shape_only),
            (
                &[
                    "Reshape",
                    "ExpandDims",
                    "Squeeze",
                    "Flatten",
                    "Identity",
                    "_ReshapeLike",
                    "Load",
                ],
                view,
            ),
            (
                &[
                    "Transpose",
                    "BroadcastTo",
                    "Tile",
                    "Slice",
                    "SliceExt",
                    "Narrow",
                    "StridedSlice",
                ],
                data::strided,
            ),
            (&["Concat", "Stack"], data::concat),
            (&["Split"], data::split),
            (&["Gather"], data::gather),
            (&["_BroadcastToShapeOf"], data::broadcast_like),
            (&["Select"], data::select),
            (
                &[
                    "MatMul",
                    "BatchMatMul",
                    "Mm",
                    "BatchMatMulExt",
                    "MatMulExt",
                    "Dense",
                ],
                linalg::matmul,
            ),
            (&["BiasAdd"], linalg::bias_add),
            (&["ApplyMomentum", "SGD", "Adam"], optim::optimizer),
        ];
        for (names, kernel) in cases {
            for name in *names {
                let op = ops::lookup(name).unwrap_or_else(|| panic!("{name}"));
                assert_eq!(
                    kernel_for(op).map(|k| k as usize),
                    Some(*kernel as usize),
                    "{name}"
                );
            }
        }
    }
}
