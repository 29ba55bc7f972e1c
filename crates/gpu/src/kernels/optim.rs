//! The optimizers' updates (`ApplyMomentum`, `SGD`, `Adam`) on the device, so
//! a training step's weights and optimizer state stay there between steps.
//! Each computes in double, as the CPU kernels, and returns what they return:
//! the new values of the inputs it writes, after the first of them.

use ops::{Family, KValue, KernelCall, OpDef, Optimizer};
use tensor::Tensor;

use super::input;
use crate::device::{tensor, Arg, DevBuf, DevResult, Device};
use crate::source::{self, Storage};

pub(super) fn optimizer(
    dev: &Device,
    op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    let Some(var) = input(call, 0) else {
        return Ok(None);
    };
    let dt = var.dtype();
    let n = var.numel();
    if !dt.is_float() || n == 0 {
        return Ok(None);
    }
    // An input the update writes: the weight's dtype and size.
    let written = |i: usize| input(call, i).filter(|t| t.dtype() == dt && t.numel() == n);
    // One it only reads (the gradient): the weight's size, or one element.
    let read =
        |i: usize| input(call, i).filter(|t| t.dtype() == dt && (t.numel() == n || t.numel() == 1));
    let scalar = |i: usize| input(call, i).and_then(|t| t.to_f64_vec().first().copied());
    let flag = |name: &str| i32::from(call.attrs.bool(name));
    let s = Storage::of(dt);
    let stride = |t: &Tensor| i64::from(t.numel() != 1);
    let ptr = |t: &Tensor| dev.on_device(t).map(|b| b.ptr);
    let outs = |k: usize| -> DevResult<Vec<DevBuf>> { (0..k).map(|_| dev.alloc(s, n)).collect() };
    let code = source::dtype_code(dt);
    let Family::Optimizer(optimizer) = op.traits.family else {
        return Ok(None);
    };
    let (name, outputs, args): (&str, Vec<DevBuf>, Vec<Arg>) = match optimizer {
        Optimizer::Momentum => {
            let (Some(a), Some(g), Some(lr), Some(mom)) =
                (written(1), read(3), scalar(2), scalar(4))
            else {
                return Ok(None);
            };
            let o = outs(2)?;
            let args = vec![
                Arg::P(ptr(var)?),
                Arg::P(ptr(a)?),
                Arg::P(ptr(g)?),
                Arg::I(stride(g)),
                Arg::P(o[0].ptr),
                Arg::P(o[1].ptr),
                Arg::I(n as i64),
                Arg::F(lr),
                Arg::F(mom),
                Arg::F(call.attrs.f64("gradient_scale")),
                Arg::I32(flag("use_nesterov")),
                Arg::I32(code),
            ];
            ("momentum", o, args)
        }
        Optimizer::Sgd => {
            let (Some(g), Some(a), Some(st), Some(lr), Some(mom)) =
                (read(1), written(3), written(5), scalar(2), scalar(4))
            else {
                return Ok(None);
            };
            let o = outs(3)?;
            let args = vec![
                Arg::P(ptr(var)?),
                Arg::P(ptr(g)?),
                Arg::I(stride(g)),
                Arg::P(ptr(a)?),
                Arg::P(ptr(st)?),
                Arg::P(o[0].ptr),
                Arg::P(o[1].ptr),
                Arg::P(o[2].ptr),
                Arg::I(n as i64),
                Arg::F(lr),
                Arg::F(mom),
                Arg::F(call.attrs.f64("dampening")),
                Arg::F(call.attrs.f64("weight_decay")),
                Arg::I32(flag("nesterov")),
                Arg::I32(code),
            ];
            ("sgd", o, args)
        }
        Optimizer::Adam => {
            let (Some(m), Some(v), Some(g)) = (written(1), written(2), read(9)) else {
                return Ok(None);
            };
            let scalars: Option<Vec<f64>> = (3..9).map(scalar).collect();
            let Some(&[b1p, b2p, lr, b1, b2, eps]) = scalars.as_deref() else {
                return Ok(None);
            };
            let lr_t = lr * (1.0 - b2p).sqrt() / (1.0 - b1p);
            let o = outs(3)?;
            let args = vec![
                Arg::P(ptr(var)?),
                Arg::P(ptr(m)?),
                Arg::P(ptr(v)?),
                Arg::P(ptr(g)?),
                Arg::I(stride(g)),
                Arg::P(o[0].ptr),
                Arg::P(o[1].ptr),
                Arg::P(o[2].ptr),
                Arg::I(n as i64),
                Arg::F(lr_t),
                Arg::F(b1),
                Arg::F(b2),
                Arg::F(eps),
                Arg::I32(flag("use_nesterov")),
                Arg::I32(code),
            ];
            ("adam", o, args)
        }
    };
    let f = dev.function("optim", &source::optim_kernel(name, s))?;
    dev.launch(&f, Device::grid(n), &args)?;
    let shape = var.shape().to_vec();
    let written: Vec<KValue> = outputs
        .into_iter()
        .map(|b| KValue::Tensor(tensor(dt, shape.clone(), b)))
        .collect();
    // `(first written, written...)`; Adam's first item is the tuple of all three.
    let first = if optimizer == Optimizer::Adam {
        KValue::Tuple(written.clone())
    } else {
        written[0].clone()
    };
    let mut items = vec![first];
    items.extend(written);
    Ok(Some(KValue::Tuple(items)))
}
