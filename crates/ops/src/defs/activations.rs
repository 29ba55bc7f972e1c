//! Activation functions: `ReLU6 HSwish HSigmoid SiLU Mish Softplus Softsign
//! Elu CeLU SeLU FastGeLU LogSigmoid HShrink SoftShrink Hardtanh PReLU
//! LeakyReLUExt Threshold GLU Logit`, and the internal `_PReLUGrad` and
//! `_GLUGrad` their gradients use. (`ReLU`, `Sigmoid`, `Tanh` and `GeLU` are
//! in `elementwise`.)
//!
//! They need float inputs, except `HSwish`, `HSigmoid`, `SeLU` and
//! `Threshold`, which MindSpore also computes for integers: `HSwish` and
//! `HSigmoid` with integer arithmetic (`x · relu6(x + 3) / 6` truncated),
//! `SeLU` as MindSpore's CPU kernel does, which truncates its scale factors to
//! integers and so gives `max(x, 0)`.
//!
//! Numerics follow MindSpore's CPU kernels (checked against them in
//! `tests/ms_oracle/elementwise.py`), including NaN: `ReLU6`, `HShrink` and
//! `SoftShrink` give 0 for NaN, `Hardtanh` gives `min_val`, `Threshold`
//! gives `value`. Two departures, where MindSpore's result is not the
//! function's value: `Mish` is evaluated stably (MindSpore's kernel gives NaN
//! above x ≈ 44 in f32, where `(1 + eˣ)²` overflows), and `SeLU`'s gradient
//! for negative inputs is the derivative `out + scale·alpha` (MindSpore's
//! bprop reuses `EluGrad` with `alpha = 1` and gets `scale·(out + 1)`).
//!
//! Gradients are otherwise MindSpore's bprops, with its conventions at the
//! kinks (`ReLU6`: 1 on `(0, 6]`; `HSwish`: the middle piece on `[-3, 3]`;
//! `HSigmoid`: 1/6 on `(-3, 3)`; the shrinks: 0 on `[-lambd, lambd]`).

use crate::batch::BatchRule;
use crate::schema::{why, Override, Schema};
use crate::Gradgen;
use crate::Traits;
use ir::{AbsVal, AttrValue, DType, Dim};
use tensor::Tensor;

use crate::defs::elementwise::common::{
    dtype_error, infer_unary, masked, opt_number, p, unary_grad, unary_kernel, Accept, Grads,
};
use crate::defs::shape::{dims_may_equal, dims_of, fmt_dims, op_axis, tensor_abs, unranked};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Category, GNode, GradBuilder, GradCall, GradFn, InferFn, KernelFn,
    OpDef, OpError, OutputDef, ParamDef,
};

/// SeLU's `scale` and `alpha` (Klambauer et al. 2017), to the 9 digits
/// MindSpore's kernel uses.
const SELU_SCALE: f64 = 1.050_700_98;
const SELU_ALPHA: f64 = 1.673_263_24;
/// FastGeLU's sigmoid slope: `x · sigmoid(1.702 x)`.
const FAST_GELU_K: f64 = 1.702;

/// A float attribute as MindSpore holds it: a C++ `float` (so `eps = 0.2`
/// clamps an f64 input at `0.2f`).
fn attr_f32(attrs: &crate::Attrs, name: &str) -> f64 {
    attrs.f64(name) as f32 as f64
}

// ---------------------------------------------------------------------------
// Scalar functions.

/// The logistic function (the formulas' `sigm` helper).
pub(crate) fn sigmoid(x: f64) -> f64 {
    crate::formula::fns::sigm(x)
}

// Formulas (`crate::formula`), computed in f64 and rounded (`wide`) as
// MindSpore's kernels; the registry's kernels, the compiled plans and the
// GPU's CUDA come from them.

crate::formula! {
    /// NaN gives 0, as MindSpore's kernel.
    pub RELU6 = [] |a| select(gt(a, 0.0), select(gt(a, 6.0), 6.0, a), 0.0)
}
crate::formula! {
    /// MindSpore's piecewise hard swish: 0 at or below -3, `a` at or above 3
    /// (so infinities give no NaN), `a (a + 3) / 6` between.
    pub HSWISH = [wide] |a| select(le(a, -3.0), 0.0, select(ge(a, 3.0), a, a * (a + 3.0) / 6.0))
}
crate::formula! {
    /// Piecewise as MindSpore's kernel (NaN stays NaN).
    pub HSIGMOID = [wide] |a| select(le(a, -3.0), 0.0, select(ge(a, 3.0), 1.0, (a + 3.0) / 6.0))
}
crate::formula! {pub SILU = [wide] |a| a * sigm(a)}
crate::formula! {pub MISH = [wide] |a| a * tanh(softplus_(a))}
crate::formula! {pub SOFTPLUS = [wide] |a| softplus_(a)}
crate::formula! {pub SOFTSIGN = [wide] |a| a / (1.0 + fabs(a))}
crate::formula! {
    /// MindSpore's FastGeLU, `a / (1 + e^{-1.702|a|}) · e^{0.851 (a - |a|)}`.
    pub FAST_GELU = [wide] |a| a / (1.0 + exp(-1.702 * fabs(a))) * exp(0.851 * (a - fabs(a)))
}
crate::formula! {
    /// `alpha` as MindSpore holds it (a C++ `float`).
    pub ELU = [wide params("alpha")] |a; p0| select(gt(a, 0.0), a, p0 * expm1(a))
}
crate::formula! {
    pub LEAKY_RELU_EXT = [wide params("negative_slope")] |a; p0| select(gt(a, 0.0), a, a * p0)
}

fn shrink(x: f64, l: f64, soft: bool) -> f64 {
    if x > l {
        if soft {
            x - l
        } else {
            x
        }
    } else if x < -l {
        if soft {
            x + l
        } else {
            x
        }
    } else {
        0.0
    }
}

/// `log(x / (1 - x))`, with `x` clamped to `[eps, 1 - eps]` when `eps >= 0`.
fn logit(x: f64, eps: f64) -> f64 {
    let x = if eps < 0.0 {
        x
    } else if x < eps {
        eps
    } else if x > 1.0 - eps {
        1.0 - eps
    } else {
        x
    };
    (x / (1.0 - x)).ln()
}

// ---------------------------------------------------------------------------
// Shape rules.

fn infer_float(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_unary(call, Accept::Float, |d| d)
}

fn infer_numeric(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_unary(call, Accept::Numeric, |d| d)
}

fn check_celu_alpha(alpha: f64) -> Result<(), OpError> {
    if alpha == 0.0 {
        return Err(OpError::attr("alpha", "`CeLU` needs a non-zero `alpha`"));
    }
    Ok(())
}

fn check_lambd(op: &str, lambd: f64) -> Result<(), OpError> {
    if lambd < 0.0 {
        return Err(OpError::attr(
            "lambd",
            format!("`{op}` needs `lambd` >= 0, got {lambd}"),
        ));
    }
    Ok(())
}

fn infer_log_sigmoid(call: &InferCall) -> Result<AbsVal, OpError> {
    let v = infer_float(call)?;
    Ok(match v {
        AbsVal::Any => AbsVal::Any,
        v => AbsVal::Tuple(vec![v.clone(), v]),
    })
}

/// The number of weights `PReLU` needs for an input of these dimensions:
/// the channels (dimension 1), or 1 for rank 0 and 1.
fn prelu_channels(dims: &[Dim]) -> Dim {
    if dims.len() >= 2 {
        dims[1].clone()
    } else {
        Dim::Known(1)
    }
}

fn infer_prelu(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dx, xd) = dims_of(call, 0)?;
    let (dw, wd) = dims_of(call, 1)?;
    if !dx.is_float() {
        return Err(dtype_error(call, 0, Accept::Float));
    }
    if dw != dx {
        return Err(OpError::input(
            1,
            format!(
                "`PReLU` needs `weight` of the dtype of `input`, {dx}, but it is {}",
                call.inputs[1]
            ),
        ));
    }
    if let Some(wd) = &wd {
        if wd.len() != 1 {
            return Err(OpError::input(
                1,
                format!(
                    "`PReLU` needs a 1-D `weight` (one slope per channel, or one for all), got {}",
                    fmt_dims(wd)
                ),
            ));
        }
        if let Some(xd) = &xd {
            let c = prelu_channels(xd);
            if !dims_may_equal(&wd[0], &Dim::Known(1)) && !dims_may_equal(&wd[0], &c) {
                return Err(OpError::input(
                    1,
                    format!(
                        "`PReLU`: `weight` has {} slopes but `input` {} has {c} channels (dimension 1); give 1 or {c}",
                        wd[0],
                        fmt_dims(xd)
                    ),
                ));
            }
        }
    }
    Ok(match xd {
        Some(d) => tensor_abs(dx, d),
        None => unranked(dx),
    })
}

/// GLU's halved dimension: `(axis, halved dims)`, checking the size is even.
fn glu_dims(call: &InferCall, dims: &[Dim]) -> Result<Vec<Dim>, OpError> {
    let axis = op_axis("GLU", call.attrs.int("axis"), dims.len(), "axis")?;
    if dims.is_empty() {
        return Err(OpError::input(0, "`GLU` needs an input of rank 1 or more"));
    }
    let mut out = dims.to_vec();
    out[axis] = match &dims[axis] {
        Dim::Known(n) if n % 2 != 0 => {
            return Err(OpError::input(
                0,
                format!(
                    "`GLU` halves dimension {axis} of `x` {}, but its size {n} is odd",
                    fmt_dims(dims)
                ),
            ))
        }
        Dim::Known(n) => Dim::Known(n / 2),
        _ => Dim::Unknown,
    };
    Ok(out)
}

fn infer_glu(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (d, dims) = dims_of(call, 0)?;
    if !d.is_float() {
        return Err(dtype_error(call, 0, Accept::Float));
    }
    Ok(match dims {
        Some(dims) => tensor_abs(d, glu_dims(call, &dims)?),
        None => unranked(d),
    })
}

fn infer_glu_grad(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (d, dims) = dims_of(call, 1)?;
    Ok(match dims {
        Some(dims) => tensor_abs(d, dims),
        None => unranked(d),
    })
}

fn infer_prelu_grad(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let x = call.inputs[1].widen();
    let w = call.inputs[2].widen();
    Ok(AbsVal::Tuple(vec![x, w]))
}

// ---------------------------------------------------------------------------
// Kernels.

/// A float function of input 0, in its dtype.
fn float_same(c: &KernelCall, f: impl Fn(f64) -> f64) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    Ok(KValue::Tensor(unary_kernel(x, x.dtype(), f, |v| v)?))
}

fn numeric_same(
    c: &KernelCall,
    ff: impl Fn(f64) -> f64,
    fi: impl Fn(i64) -> i64,
) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    Ok(KValue::Tensor(unary_kernel(x, x.dtype(), ff, fi)?))
}

fn k_elu(c: &KernelCall) -> Result<KValue, OpError> {
    let alpha = attr_f32(c.attrs, "alpha");
    float_same(c, |x| ELU.un64(x, &[alpha]))
}

fn k_celu(c: &KernelCall) -> Result<KValue, OpError> {
    let alpha = attr_f32(c.attrs, "alpha");
    check_celu_alpha(alpha)?;
    float_same(c, |x| {
        if x > 0.0 {
            x
        } else {
            alpha * (x / alpha).exp_m1()
        }
    })
}

fn k_log_sigmoid(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let d = x.dtype();
    let out = unary_kernel(x, d, |v| v.min(0.0) - (-v.abs()).exp().ln_1p(), |v| v)?;
    let buffer = unary_kernel(x, d, |v| (-v.abs()).exp(), |v| v)?;
    Ok(KValue::Tuple(vec![
        KValue::Tensor(out),
        KValue::Tensor(buffer),
    ]))
}

fn k_shrink(c: &KernelCall, soft: bool) -> Result<KValue, OpError> {
    let l = attr_f32(c.attrs, "lambd");
    if soft {
        check_lambd("SoftShrink", l)?;
    }
    float_same(c, |x| shrink(x, l, soft))
}

fn k_hardtanh(c: &KernelCall) -> Result<KValue, OpError> {
    let lo = opt_number(c.attrs, "min_val");
    let hi = opt_number(c.attrs, "max_val");
    float_same(c, |x| crate::defs::elementwise::clamp::clamp_f(x, lo, hi))
}

fn k_leaky_relu(c: &KernelCall) -> Result<KValue, OpError> {
    let s = opt_number(c.attrs, "negative_slope").unwrap_or(0.01) as f32 as f64;
    float_same(c, |x| LEAKY_RELU_EXT.un64(x, &[s]))
}

fn k_threshold(c: &KernelCall) -> Result<KValue, OpError> {
    let t = opt_number(c.attrs, "threshold").unwrap_or(0.0);
    let v = opt_number(c.attrs, "value").unwrap_or(0.0);
    let x = c.tensor(0)?;
    let d = x.dtype();
    // The value converted to the input's dtype first, as MindSpore's kernel.
    let vd = Tensor::scalar(DType::F64, v).cast(d).to_f64_vec()[0];
    numeric_same(
        c,
        |e| if e > t { e } else { vd },
        |e| if (e as f64) > t { e } else { vd as i64 },
    )
}

fn k_logit(c: &KernelCall) -> Result<KValue, OpError> {
    let eps = attr_f32(c.attrs, "eps");
    float_same(c, |x| logit(x, eps))
}

/// `(rows, n, inner)` for the channel weights of a PReLU input of `shape`.
fn prelu_layout(x: &Tensor, w: &Tensor) -> Result<(usize, usize), OpError> {
    let s = x.shape();
    let c = if s.len() >= 2 { s[1] } else { 1 };
    if w.rank() != 1 || (w.numel() != 1 && w.numel() != c) {
        return Err(OpError::input(
            1,
            format!(
                "`PReLU`: `weight` {:?} must be 1-D with 1 or {c} slopes",
                w.shape()
            ),
        ));
    }
    let inner: usize = if s.len() >= 2 {
        s[2..].iter().product()
    } else {
        1
    };
    Ok((w.numel(), inner))
}

/// The weight of element `e` of the input.
fn prelu_slope(wv: &[f64], nw: usize, inner: usize, e: usize) -> f64 {
    if nw == 1 {
        wv[0]
    } else {
        wv[(e / inner) % nw]
    }
}

fn k_prelu(c: &KernelCall) -> Result<KValue, OpError> {
    let (x, w) = (c.tensor(0)?, c.tensor(1)?);
    let (nw, inner) = prelu_layout(x, w)?;
    let wv = w.to_f64_vec();
    let y: Vec<f64> = x
        .to_f64_vec()
        .iter()
        .enumerate()
        .map(|(e, &v)| {
            if v > 0.0 {
                v
            } else {
                v * prelu_slope(&wv, nw, inner, e)
            }
        })
        .collect();
    Ok(KValue::Tensor(from_f64(x.dtype(), x.shape(), y)?))
}

fn from_f64(d: DType, shape: &[usize], v: Vec<f64>) -> Result<Tensor, OpError> {
    Ok(Tensor::from_f64(shape.to_vec(), v)
        .map_err(|e| OpError::call(e.0))?
        .cast(d))
}

/// `_PReLUGrad(dout, x, weight)`: `(dx, dweight)`.
fn k_prelu_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (dout, x, w) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    if dout.shape() != x.shape() {
        return Err(OpError::call(
            "`_PReLUGrad`: `dout` and `x` differ in shape",
        ));
    }
    let (nw, inner) = prelu_layout(x, w)?;
    let (dv, xv, wv) = (dout.to_f64_vec(), x.to_f64_vec(), w.to_f64_vec());
    let mut dx = vec![0.0; xv.len()];
    let mut dw = vec![0.0; nw];
    for e in 0..xv.len() {
        if xv[e] > 0.0 {
            dx[e] = dv[e];
        } else {
            let k = if nw == 1 { 0 } else { (e / inner) % nw };
            dx[e] = dv[e] * wv[k];
            dw[k] += dv[e] * xv[e];
        }
    }
    Ok(KValue::Tuple(vec![
        KValue::Tensor(from_f64(dout.dtype(), x.shape(), dx)?),
        KValue::Tensor(from_f64(w.dtype(), w.shape(), dw)?),
    ]))
}

/// `(outer, half, inner)` of GLU's split of `shape` along `axis`.
fn glu_layout(shape: &[usize], axis: i64) -> Result<(usize, usize, usize), OpError> {
    if shape.is_empty() {
        return Err(OpError::input(0, "`GLU` needs an input of rank 1 or more"));
    }
    let a = op_axis("GLU", axis, shape.len(), "axis")?;
    if !shape[a].is_multiple_of(2) {
        return Err(OpError::input(
            0,
            format!(
                "`GLU` halves dimension {a} of {shape:?}, but its size {} is odd",
                shape[a]
            ),
        ));
    }
    Ok((
        shape[..a].iter().product(),
        shape[a] / 2,
        shape[a + 1..].iter().product(),
    ))
}

fn k_glu(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let (outer, half, inner) = glu_layout(x.shape(), c.attrs.int("axis"))?;
    let v = x.to_f64_vec();
    let mut y = Vec::with_capacity(v.len() / 2);
    for o in 0..outer {
        let base = o * 2 * half * inner;
        for k in 0..half * inner {
            y.push(v[base + k] * sigmoid(v[base + half * inner + k]));
        }
    }
    let mut shape = x.shape().to_vec();
    let a = op_axis("GLU", c.attrs.int("axis"), shape.len(), "axis")?;
    shape[a] = half;
    Ok(KValue::Tensor(from_f64(x.dtype(), &shape, y)?))
}

/// `_GLUGrad(dout, x)`: the gradient of `GLU` with respect to `x`.
fn k_glu_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (dout, x) = (c.tensor(0)?, c.tensor(1)?);
    let (outer, half, inner) = glu_layout(x.shape(), c.attrs.int("axis"))?;
    if dout.numel() * 2 != x.numel() {
        return Err(OpError::call(format!(
            "`_GLUGrad`: `dout` {:?} is not half of `x` {:?}",
            dout.shape(),
            x.shape()
        )));
    }
    let (dv, xv) = (dout.to_f64_vec(), x.to_f64_vec());
    let mut dx = vec![0.0; xv.len()];
    let hi = half * inner;
    for o in 0..outer {
        for k in 0..hi {
            let (ia, ib) = (o * 2 * hi + k, o * 2 * hi + hi + k);
            let g = dv[o * hi + k];
            let s = sigmoid(xv[ib]);
            dx[ia] = g * s;
            dx[ib] = g * xv[ia] * s * (1.0 - s);
        }
    }
    Ok(KValue::Tensor(from_f64(dout.dtype(), x.shape(), dx)?))
}

// ---------------------------------------------------------------------------
// Gradient rules.

fn sc(b: &mut dyn GradBuilder, v: f64) -> GNode {
    b.scalar(v)
}

fn cmp(b: &mut dyn GradBuilder, op: &str, x: GNode, v: f64) -> GNode {
    let s = sc(b, v);
    p(b, op, &[x, s])
}

fn grad_relu6(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // MindSpore's bprop: ReLU6Grad(dout, x).
    unary_grad(b, c, |b| p(b, "ReLU6Grad", &[c.dout, c.inputs[0]]))
}

fn grad_hswish(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // 0 below -3, 1 above 3, (2x + 3) / 6 between (inclusive).
    unary_grad(b, c, |b| {
        let x = c.inputs[0];
        let third = sc(b, 1.0 / 3.0);
        let xt = p(b, "Mul", &[x, third]);
        let half = sc(b, 0.5);
        let mid = p(b, "Add", &[xt, half]);
        let ones = p(b, "OnesLike", &[mid]);
        let zeros = p(b, "ZerosLike", &[mid]);
        let above = cmp(b, "Greater", x, 3.0);
        let t = p(b, "Select", &[above, ones, mid]);
        let below = cmp(b, "Less", x, -3.0);
        let d = p(b, "Select", &[below, zeros, t]);
        p(b, "Mul", &[c.dout, d])
    })
}

fn grad_hsigmoid(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    unary_grad(b, c, |b| {
        let x = c.inputs[0];
        let gt = cmp(b, "Greater", x, -3.0);
        let lt = cmp(b, "Less", x, 3.0);
        let m = p(b, "LogicalAnd", &[gt, lt]);
        let k = sc(b, 1.0 / 6.0);
        let g = p(b, "Mul", &[c.dout, k]);
        masked(b, m, g)
    })
}

fn grad_silu(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // MindSpore's bprop: SiLUGrad(dout, x), `dout · s · (1 + x (1 - s))`.
    unary_grad(b, c, |b| p(b, "SiLUGrad", &[c.dout, c.inputs[0]]))
}

fn grad_mish(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // MindSpore: t = tanh(softplus(x)); dx = t·dout + sigmoid(x)·(1 - t²)·x·dout.
    unary_grad(b, c, |b| {
        let x = c.inputs[0];
        let sp = p(b, "Softplus", &[x]);
        let t = p(b, "Tanh", &[sp]);
        let first = p(b, "Mul", &[t, c.dout]);
        let t2 = p(b, "Square", &[t]);
        let one = sc(b, 1.0);
        let sech2 = p(b, "Sub", &[one, t2]);
        let xd = p(b, "Mul", &[x, c.dout]);
        let u = p(b, "Mul", &[sech2, xd]);
        let s = p(b, "Sigmoid", &[x]);
        let second = p(b, "Mul", &[u, s]);
        p(b, "Add", &[first, second])
    })
}

fn grad_softplus(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    unary_grad(b, c, |b| {
        let s = p(b, "Sigmoid", &[c.inputs[0]]);
        p(b, "Mul", &[c.dout, s])
    })
}

fn grad_softsign(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // dout / (1 + |x|)².
    unary_grad(b, c, |b| {
        let a = p(b, "Abs", &[c.inputs[0]]);
        let one = sc(b, 1.0);
        let s = p(b, "Add", &[a, one]);
        let sq = p(b, "Square", &[s]);
        p(b, "RealDiv", &[c.dout, sq])
    })
}

fn grad_elu(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // EluGrad(dout, out): dout where out > 0, dout · (out + alpha) elsewhere.
    let alpha = attr_f32(c.attrs, "alpha");
    unary_grad(b, c, |b| {
        let a = sc(b, alpha);
        let oa = p(b, "Add", &[c.out, a]);
        let neg = p(b, "Mul", &[c.dout, oa]);
        let pos = cmp(b, "Greater", c.out, 0.0);
        p(b, "Select", &[pos, c.dout, neg])
    })
}

fn grad_celu(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // 1 where x >= 0, out / alpha + 1 elsewhere.
    let alpha = attr_f32(c.attrs, "alpha");
    unary_grad(b, c, |b| {
        let a = sc(b, alpha);
        let r = p(b, "RealDiv", &[c.out, a]);
        let one = sc(b, 1.0);
        let d = p(b, "Add", &[r, one]);
        let neg = p(b, "Mul", &[c.dout, d]);
        let nonneg = cmp(b, "GreaterEqual", c.inputs[0], 0.0);
        p(b, "Select", &[nonneg, c.dout, neg])
    })
}

fn grad_selu(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // scale where x >= 0, out + scale·alpha elsewhere (the derivative).
    unary_grad(b, c, |b| {
        let k = sc(b, SELU_SCALE);
        let pos = p(b, "Mul", &[c.dout, k]);
        let ka = sc(b, SELU_SCALE * SELU_ALPHA);
        let d = p(b, "Add", &[c.out, ka]);
        let neg = p(b, "Mul", &[c.dout, d]);
        let nonneg = cmp(b, "GreaterEqual", c.inputs[0], 0.0);
        p(b, "Select", &[nonneg, pos, neg])
    })
}

fn grad_fast_gelu(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // With s = sigmoid(kx): s + kx · s (1 - s).
    unary_grad(b, c, |b| {
        let k = sc(b, FAST_GELU_K);
        let kx = p(b, "Mul", &[c.inputs[0], k]);
        let s = p(b, "Sigmoid", &[kx]);
        let one = sc(b, 1.0);
        let oms = p(b, "Sub", &[one, s]);
        let t = p(b, "Mul", &[s, oms]);
        let u = p(b, "Mul", &[kx, t]);
        let d = p(b, "Add", &[s, u]);
        p(b, "Mul", &[c.dout, d])
    })
}

fn grad_log_sigmoid(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // dout[0] · sigmoid(-x), plus the buffer's part, dout[1] · -sign(x) · e^{-|x|}
    // (MindSpore's bprop reads dout[0] only; nothing else uses the buffer).
    unary_grad(b, c, |b| {
        let x = c.inputs[0];
        let d0 = b.tuple_get(c.dout, 0);
        let d1 = b.tuple_get(c.dout, 1);
        let buffer = b.tuple_get(c.out, 1);
        let nx = p(b, "Neg", &[x]);
        let s = p(b, "Sigmoid", &[nx]);
        let g0 = p(b, "Mul", &[d0, s]);
        let sign = p(b, "Sign", &[x]);
        let t = p(b, "Mul", &[sign, buffer]);
        let u = p(b, "Mul", &[d1, t]);
        p(b, "Sub", &[g0, u])
    })
}

/// `dout` where `x > lambd` or `x < -lambd` (the shrinks).
fn grad_shrink(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    let l = attr_f32(c.attrs, "lambd");
    unary_grad(b, c, |b| {
        let x = c.inputs[0];
        let gt = cmp(b, "Greater", x, l);
        let lt = cmp(b, "Less", x, -l);
        let m = p(b, "LogicalOr", &[gt, lt]);
        masked(b, m, c.dout)
    })
}

fn grad_hardtanh(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // HardtanhGrad: dout strictly inside (min_val, max_val).
    let lo = opt_number(c.attrs, "min_val").unwrap_or(-1.0);
    let hi = opt_number(c.attrs, "max_val").unwrap_or(1.0);
    unary_grad(b, c, |b| {
        let x = c.inputs[0];
        let gt = cmp(b, "Greater", x, lo);
        let lt = cmp(b, "Less", x, hi);
        let m = p(b, "LogicalAnd", &[gt, lt]);
        masked(b, m, c.dout)
    })
}

fn grad_prelu(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    let r = b.prim("_PReLUGrad", &[c.dout, c.inputs[0], c.inputs[1]], vec![]);
    vec![Some(b.tuple_get(r, 0)), Some(b.tuple_get(r, 1))]
}

fn grad_leaky_relu(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    let s = opt_number(c.attrs, "negative_slope").unwrap_or(0.01) as f32 as f64;
    unary_grad(b, c, |b| {
        let k = sc(b, s);
        let neg = p(b, "Mul", &[c.dout, k]);
        let pos = cmp(b, "Greater", c.inputs[0], 0.0);
        p(b, "Select", &[pos, c.dout, neg])
    })
}

fn grad_threshold(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    let t = opt_number(c.attrs, "threshold").unwrap_or(0.0);
    unary_grad(b, c, |b| {
        let m = cmp(b, "Greater", c.inputs[0], t);
        masked(b, m, c.dout)
    })
}

fn grad_glu(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    let axis = ("axis", AttrValue::Int(c.attrs.int("axis")));
    vec![Some(b.prim("_GLUGrad", &[c.dout, c.inputs[0]], vec![axis]))]
}

fn grad_logit(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // dout / (x (1 - x)), and 0 outside [eps, 1 - eps] when eps >= 0.
    let eps = attr_f32(c.attrs, "eps");
    unary_grad(b, c, |b| {
        let x = c.inputs[0];
        let one = sc(b, 1.0);
        let omx = p(b, "Sub", &[one, x]);
        let den = p(b, "Mul", &[x, omx]);
        let g = p(b, "RealDiv", &[c.dout, den]);
        if eps < 0.0 {
            return g;
        }
        let ge = cmp(b, "GreaterEqual", x, eps);
        let le = cmp(b, "LessEqual", x, 1.0 - eps);
        let m = p(b, "LogicalAnd", &[ge, le]);
        masked(b, m, g)
    })
}

// ---------------------------------------------------------------------------
// The table.

const fn act(
    name: &'static str,
    doc: &'static str,
    params: Schema,
    infer: InferFn,
    grad: GradFn,
    kernel: KernelFn,
) -> OpDef {
    OpDef {
        name,
        category: Category::NeuralNetwork,
        doc,
        schema: params,
        variadic: false,
        output: OutputDef::Single,
        infer,
        grad: Some(grad),
        kernel: Some(kernel),
        traits: Traits::NONE,
    }
}

pub const OPS: &[OpDef] = &[
    act(
        "ReLU6",
        "ReLU capped at 6: `min(max(x, 0), 6)` elementwise (NaN gives 0, as MindSpore's kernel). Needs a float input.",
        Schema::ms(&[], &[("x", "A float tensor.")]),
        infer_float,
        grad_relu6,
        |c| float_same(c, |x| RELU6.un64(x, &[])),
    )
    .with_formula(&RELU6),
    act(
        "HSwish",
        "Hard swish: `x · relu6(x + 3) / 6` elementwise. Integer inputs are computed with integer arithmetic (the division truncates).",
        Schema::ms(&[], &[("input", "A float or integer tensor.")]),
        infer_numeric,
        grad_hswish,
        |c| {
            numeric_same(
                c,
                |x| HSWISH.un64(x, &[]),
                |x| x.wrapping_mul((x + 3).clamp(0, 6)) / 6,
            )
        },
    )
    .with_formula(&HSWISH),
    act(
        "HSigmoid",
        "Hard sigmoid: `relu6(x + 3) / 6` elementwise. Integer inputs are computed with integer arithmetic (the division truncates).",
        Schema::ms(&[], &[("input", "A float or integer tensor.")]),
        infer_numeric,
        grad_hsigmoid,
        |c| {
            numeric_same(
                c,
                |x| HSIGMOID.un64(x, &[]),
                |x| (x + 3).clamp(0, 6) / 6,
            )
        },
    )
    .with_formula(&HSIGMOID),
    act(
        "SiLU",
        "Sigmoid linear unit (swish): `x · sigmoid(x)` elementwise. Needs a float input.",
        Schema::ms(&[], &[("input", "A float tensor.")]),
        infer_float,
        grad_silu,
        |c| float_same(c, |x| SILU.un64(x, &[])),
    )
    .with_formula(&SILU)
    .drawn(Gradgen::SmoothUnary),
    act(
        "Mish",
        "Mish: `x · tanh(softplus(x))` elementwise, evaluated stably (MindSpore's kernel overflows to NaN for large `x`). Needs a float input.",
        Schema::ms(&[], &[("x", "A float tensor.")]),
        infer_float,
        grad_mish,
        |c| float_same(c, |x| MISH.un64(x, &[])),
    )
    .with_formula(&MISH)
    .drawn(Gradgen::SmoothUnary),
    act(
        "Softplus",
        "Softplus: `log(1 + exp(x))` elementwise, without overflow. Needs a float input.",
        Schema::ms(
            &[Override::inputs(&["input_x"], why::INPUT_NAMES)],
            &[("input_x", "A float tensor.")],
        ),
        infer_float,
        grad_softplus,
        |c| float_same(c, |x| SOFTPLUS.un64(x, &[])),
    )
    .with_formula(&SOFTPLUS)
    .drawn(Gradgen::SmoothUnary),
    act(
        "Softsign",
        "Softsign: `x / (1 + |x|)` elementwise (infinite inputs give NaN, as MindSpore's). Needs a float input.",
        Schema::ms(
            &[Override::inputs(&["input_x"], why::INPUT_NAMES)],
            &[("input_x", "A float tensor.")],
        ),
        infer_float,
        grad_softsign,
        |c| float_same(c, |x| SOFTSIGN.un64(x, &[])),
    )
    .with_formula(&SOFTSIGN)
    .drawn(Gradgen::SmoothUnary),
    act(
        "Elu",
        "Exponential linear unit: `x` for `x > 0`, `alpha · (exp(x) - 1)` elsewhere. Needs a float input; MindSpore's CPU kernel supports `alpha = 1` only.",
        Schema::ms(
            &[],
            &[
                ("input_x", "A float tensor."),
                ("alpha", "The scale of the negative part. Default 1.0."),
            ],
        ),
        infer_float,
        grad_elu,
        k_elu,
    )
    .with_formula(&ELU),
    act(
        "CeLU",
        "Continuously differentiable ELU: `max(0, x) + min(0, alpha · (exp(x / alpha) - 1))`. Needs a float input and a non-zero `alpha`.",
        Schema::ms(
            &[],
            &[
                ("x", "A float tensor."),
                ("alpha", "The scale of the negative part; not 0. Default 1.0."),
            ],
        ),
        |call| {
            check_celu_alpha(call.attrs.f64("alpha"))?;
            infer_float(call)
        },
        grad_celu,
        k_celu,
    )
    .batched(BatchRule::Broadcast),
    act(
        "SeLU",
        "Scaled ELU: `scale · x` for `x > 0`, `scale · alpha · (exp(x) - 1)` elsewhere, with scale ≈ 1.0507 and alpha ≈ 1.6733. Integer inputs give `max(x, 0)`, as MindSpore's CPU kernel.",
        Schema::ms(&[], &[("input_x", "A float or integer tensor.")]),
        infer_numeric,
        grad_selu,
        |c| {
            numeric_same(
                c,
                |x| {
                    SELU_SCALE
                        * if x > 0.0 {
                            x
                        } else {
                            SELU_ALPHA * x.exp_m1()
                        }
                },
                |x| x.max(0),
            )
        },
    )
    .batched(BatchRule::Broadcast),
    act(
        "FastGeLU",
        "Fast GeLU, MindSpore's kernel: `x / (1 + exp(-1.702 |x|)) · exp(0.851 (x - |x|))`, i.e. `x · sigmoid(1.702 x)`. Needs a float input.",
        Schema::ms(&[], &[("x", "A float tensor.")]),
        infer_float,
        grad_fast_gelu,
        |c| float_same(c, |x| FAST_GELU.un64(x, &[])),
    )
    .with_formula(&FAST_GELU),
    OpDef {
        name: "LogSigmoid",
        category: Category::NeuralNetwork,
        doc: "Log-sigmoid `log(1 / (1 + exp(-x)))`, computed stably. Returns `(output, buffer)` as MindSpore's primitive; `buffer` is `exp(-|x|)` (the intermediate the gradient kernel reads). Needs a float input.",
        schema: Schema::ms(&[], &[("input", "A float tensor.")]),
        variadic: false,
        output: OutputDef::Tuple(&["output", "buffer"]),
        infer: infer_log_sigmoid,
        grad: Some(grad_log_sigmoid),
        kernel: Some(k_log_sigmoid),
        traits: Traits::NONE.batched(BatchRule::Broadcast),
    },
    act(
        "HShrink",
        "Hard shrink: `x` where `|x| > lambd`, 0 elsewhere (and for NaN). Needs a float input.",
        Schema::ms(
            &[],
            &[
                ("input", "A float tensor."),
                ("lambd", "The half-width of the zeroed band. Default 0.5."),
            ],
        ),
        infer_float,
        grad_shrink,
        |c| k_shrink(c, false),
    )
    .batched(BatchRule::Broadcast),
    act(
        "SoftShrink",
        "Soft shrink: `x - lambd` above `lambd`, `x + lambd` below `-lambd`, 0 between (and for NaN). Needs a float input and `lambd >= 0`.",
        Schema::ms(
            &[],
            &[
                ("input", "A float tensor."),
                ("lambd", "The half-width of the zeroed band, at least 0. Default 0.5."),
            ],
        ),
        |call| {
            check_lambd("SoftShrink", call.attrs.f64("lambd"))?;
            infer_float(call)
        },
        grad_shrink,
        |c| k_shrink(c, true),
    )
    .batched(BatchRule::Broadcast),
    act(
        "Hardtanh",
        "Clamps every element to `[min_val, max_val]` (NaN gives `min_val`, as MindSpore). Needs a float input; the gradient flows strictly inside the interval.",
        Schema::ms(
            &[],
            &[
                ("input", "A float tensor."),
                ("min_val", "The lower bound. Default -1."),
                ("max_val", "The upper bound. Default 1."),
            ],
        ),
        infer_float,
        grad_hardtanh,
        k_hardtanh,
    )
    .batched(BatchRule::Broadcast),
    act(
        "PReLU",
        "Parametric ReLU: `x` where `x > 0`, `weight[c] · x` elsewhere, `c` being the element's channel (dimension 1). `weight` is 1-D with one slope per channel, or a single slope.",
        Schema::ms(
            &[],
            &[
                ("input", "A float tensor; dimension 1 holds the channels."),
                ("weight", "The slopes: 1-D, of length 1 or the number of channels, of the dtype of `input`."),
            ],
        ),
        infer_prelu,
        grad_prelu,
        k_prelu,
    ),
    act(
        "LeakyReLUExt",
        "Leaky ReLU: `x` where `x > 0`, `negative_slope · x` elsewhere. Needs a float input.",
        Schema::ms(
            &[],
            &[("input", "A float tensor."), ("negative_slope", "The slope below 0. Default 0.01.")],
        ),
        infer_float,
        grad_leaky_relu,
        k_leaky_relu,
    )
    .with_formula(&LEAKY_RELU_EXT),
    act(
        "Threshold",
        "`x` where `x > threshold`, `value` elsewhere (and for NaN), in the input's dtype.",
        Schema::ms(
            &[],
            &[
                ("input", "A float or integer tensor."),
                ("threshold", "The threshold: elements at or below it are replaced."),
                ("value", "The replacement for elements at or below `threshold`."),
            ],
        ),
        infer_numeric,
        grad_threshold,
        k_threshold,
    ),
    act(
        "GLU",
        "Gated linear unit: splits `x` in two halves `a`, `b` along `axis` and returns `a · sigmoid(b)`; that dimension must be even and is halved.",
        Schema::ms(
            &[],
            &[
                ("x", "A float tensor."),
                ("axis", "The dimension to split; negative values count from the end. Default -1."),
            ],
        ),
        infer_glu,
        grad_glu,
        k_glu,
    ),
    act(
        "Logit",
        "The logit `log(x / (1 - x))` of every element; with `eps >= 0`, `x` is first clamped to `[eps, 1 - eps]`. Needs a float input.",
        Schema::ms(
            &[],
            &[
                ("input", "A float tensor, of probabilities."),
                ("eps", "The clamp margin; negative (the default, -1.0) means no clamping."),
            ],
        ),
        infer_float,
        grad_logit,
        k_logit,
    ),
    OpDef {
        name: "_PReLUGrad",
        category: Category::Internal,
        doc: "The gradient of `PReLU`: `(dx, dweight)` for sensitivity `dout`, input `x` and `weight`.",
        schema: Schema::own(&[
            ParamDef::input("dout", "The sensitivity of `PReLU`'s result."),
            ParamDef::input("x", "`PReLU`'s input."),
            ParamDef::input("weight", "`PReLU`'s weight."),
        ]),
        variadic: false,
        output: OutputDef::Tuple(&["dx", "dweight"]),
        infer: infer_prelu_grad,
        grad: None,
        kernel: Some(k_prelu_grad),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_GLUGrad",
        category: Category::Internal,
        doc: "The gradient of `GLU` with respect to its input, for sensitivity `dout`.",
        schema: Schema::own(&[
            ParamDef::input("dout", "The sensitivity of `GLU`'s result."),
            ParamDef::input("x", "`GLU`'s input."),
            ParamDef::attr(
                "axis",
                AttrType::Int,
                Some(AttrDefault::Int(-1)),
                "`GLU`'s axis.",
            ),
        ]),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_glu_grad,
        grad: None,
        kernel: Some(k_glu_grad),
        traits: Traits::NONE,
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    let r = random_f64;
    let f = AttrValue::float;
    let t = |shape: &[usize], v: &[f64]| {
        KValue::Tensor(Tensor::from_f64(shape.to_vec(), v.to_vec()).expect("sizes match"))
    };
    // Away from every kink: 0, ±3, 6, ±0.5, ±1.
    let spread = t(&[2, 4], &[-7.3, -2.2, -0.8, -0.3, 0.2, 0.7, 2.6, 6.6]);
    let mut out = Vec::new();
    for op in [
        "ReLU6",
        "HSwish",
        "HSigmoid",
        "SiLU",
        "Mish",
        "Softplus",
        "Softsign",
        "Elu",
        "CeLU",
        "SeLU",
        "FastGeLU",
        "LogSigmoid",
        "HShrink",
        "SoftShrink",
        "Hardtanh",
        "LeakyReLUExt",
    ] {
        out.push(Sample::new(op, vec![spread.clone()]));
    }
    out.extend([
        Sample::new("ReLU6", vec![r(&[3], 400, 0.5, 5.5)]),
        Sample::new("HSwish", vec![r(&[3], 401, -2.9, 2.9)]),
        Sample::new("HSwish", vec![ints(DType::I32, &[4], &[-5, -1, 2, 4])]),
        Sample::new("HSigmoid", vec![ints(DType::I64, &[3], &[-5, 2, 3])]),
        Sample::new("Elu", vec![spread.clone()]).attr("alpha", f(0.7)),
        Sample::new("CeLU", vec![spread.clone()]).attr("alpha", f(2.0)),
        Sample::new("SeLU", vec![ints(DType::I32, &[3], &[-2, 0, 5])]),
        Sample::new("HShrink", vec![spread.clone()]).attr("lambd", f(1.1)),
        Sample::new("SoftShrink", vec![spread.clone()]).attr("lambd", f(0.1)),
        Sample::new("Hardtanh", vec![spread.clone()])
            .attr("min_val", f(-2.5))
            .attr("max_val", AttrValue::Int(3)),
        Sample::new("LeakyReLUExt", vec![spread.clone()]).attr("negative_slope", f(0.2)),
        Sample::new("Threshold", vec![spread.clone()])
            .attr("threshold", f(0.45))
            .attr("value", f(-4.0)),
        Sample::new("Threshold", vec![ints(DType::I32, &[3], &[-2, 1, 5])])
            .attr("threshold", AttrValue::Int(1))
            .attr("value", AttrValue::Int(9)),
        Sample::new(
            "PReLU",
            vec![r(&[2, 3, 2], 402, -2.0, 2.0), r(&[3], 403, 0.1, 0.5)],
        ),
        Sample::new(
            "PReLU",
            vec![r(&[4], 404, -2.0, 2.0), r(&[1], 405, 0.1, 0.5)],
        ),
        Sample::new("GLU", vec![r(&[2, 4], 406, -2.0, 2.0)]),
        Sample::new("GLU", vec![r(&[2, 3, 2], 407, -2.0, 2.0)]).attr("axis", AttrValue::Int(0)),
        Sample::new("Logit", vec![r(&[2, 3], 408, 0.05, 0.95)]),
        Sample::new("Logit", vec![t(&[4], &[0.1, 0.35, 0.6, 0.95])]).attr("eps", f(0.2)),
        Sample::new(
            "_PReLUGrad",
            vec![
                r(&[2, 3], 409, -1.0, 1.0),
                r(&[2, 3], 410, -2.0, 2.0),
                r(&[3], 411, 0.1, 0.5),
            ],
        ),
        Sample::new(
            "_GLUGrad",
            vec![r(&[2, 2], 412, -1.0, 1.0), r(&[2, 4], 413, -2.0, 2.0)],
        ),
    ]);
    out
}
