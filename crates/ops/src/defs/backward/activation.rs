//! MindSpore's backward primitives of the activations: `GeLUGrad`,
//! `SigmoidGrad`, `TanhGrad`, `ReLU6Grad` and `SiLUGrad`, with MindSpore's
//! names and argument order, as the bprops of `GeLU`, `Sigmoid`, `Tanh`,
//! `ReLU6` and `SiLU` emit them (`ReluGrad` is in `backward/mod.rs`).
//!
//! They are elementwise: the shape rule and kernels are the elementwise
//! families' (`infer_binary`, `binary_kernel`, `ternary_float`), computed in
//! f64 and rounded to the operands' float dtype. Each has a gradient rule, so
//! second derivatives work through them. Checked against MindSpore 2.10 in
//! `tests/ms_oracle/backward_norm_act.py`.

use crate::defs::elementwise::{GELU_A, GELU_C};
use crate::schema::Schema;
use crate::Traits;
use ir::AbsVal;
use tensor::Tensor;

use crate::defs::elementwise::common::{
    binary_kernel, infer_binary, input_grad, p, ternary_float, Accept, Grads,
};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef};

// ---------------------------------------------------------------------------
// The derivatives, as MindSpore's CPU kernels compute them.

/// GeLU's derivative (its tanh form): with `u = c·(x + a·x³)`, `t = tanh(u)`,
/// `0.5·(1 + t) + 0.5·x·(1 − t²)·c·(1 + 3a·x²)` (the formulas' helper
/// `gelu_slope_`).
pub fn gelu_slope(x: f64) -> f64 {
    crate::formula::fns::gelu_slope_(x)
}

/// SiLU's derivative, `s·(1 + x·(1 − s))` with `s = sigmoid(x)` (the
/// formulas' helper `silu_slope_`).
pub fn silu_slope(x: f64) -> f64 {
    crate::formula::fns::silu_slope_(x)
}

// Formulas (`crate::formula`), in MindSpore's argument order, computed in f64
// and rounded (`wide`) as MindSpore's kernels.

crate::formula! {
    /// `GeLUGrad(dy, x, y)`: `y` (GeLU's output) only lines up the shapes.
    pub GELU_GRAD = [wide] |a, b| a * gelu_slope_(b)
}
crate::formula! {
    /// `SigmoidGrad(y, dy)`.
    pub SIGMOID_GRAD = [wide] |a, b| b * a * (1.0 - a)
}
crate::formula! {
    /// `TanhGrad(y, dy)`.
    pub TANH_GRAD = [wide] |a, b| b * (1.0 - a * a)
}
crate::formula! {
    /// `ReLU6Grad(dy, x)`: `dy` on `(0, 6]`, else (and for NaN) 0, as
    /// MindSpore's.
    pub RELU6_GRAD = [] |a, b| select(both(gt(b, 0.0), le(b, 6.0)), a, 0.0)
}
crate::formula! {
    /// `SiLUGrad(dout, x)`.
    pub SILU_GRAD = [wide] |a, b| a * silu_slope_(b)
}

// ---------------------------------------------------------------------------
// Shape rules and kernels.

fn infer_float_binary(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_binary(call, Accept::Float, |d| d)
}

/// A float function of inputs 0 and 1, broadcast, in their promoted dtype.
fn float_binary(op: &str, c: &KernelCall, f: impl Fn(f64, f64) -> f64) -> Result<KValue, OpError> {
    let dtype = c.promoted();
    if !dtype.is_float() {
        return Err(OpError::call(format!(
            "`{op}` needs float operands, got {dtype}"
        )));
    }
    let t = binary_kernel(c.tensor(0)?, c.tensor(1)?, dtype, f, |_, _| 0)?;
    Ok(KValue::Tensor(t))
}

fn k_gelu_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (dy, x, y) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let dtype = c.promoted();
    if !dtype.is_float() {
        return Err(OpError::call(format!(
            "`GeLUGrad` needs float operands, got {dtype}"
        )));
    }
    // `y` (GeLU's output) only lines up the shapes: the kernel reads `x`.
    let t: Tensor = ternary_float([dy, x, y], dtype, |d, x, _| GELU_GRAD.bin64(d, x, &[]))?;
    Ok(KValue::Tensor(t))
}

// ---------------------------------------------------------------------------
// Gradient rules (second derivatives).

fn sc(b: &mut dyn GradBuilder, v: f64) -> GNode {
    b.scalar(v)
}

/// `SigmoidGrad(y, dy) = dy·y·(1 − y)`: `d/dy = u·dy·(1 − 2y)`,
/// `d/d dy = SigmoidGrad(y, u)`.
fn grad_sigmoid_grad(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    let (y, dy, u) = (c.inputs[0], c.inputs[1], c.dout);
    vec![
        input_grad(b, c, 0, |b| {
            let two = sc(b, 2.0);
            let y2 = p(b, "Mul", &[y, two]);
            let one = sc(b, 1.0);
            let k = p(b, "Sub", &[one, y2]);
            let ud = p(b, "Mul", &[u, dy]);
            p(b, "Mul", &[ud, k])
        }),
        input_grad(b, c, 1, |b| p(b, "SigmoidGrad", &[y, u])),
    ]
}

/// `TanhGrad(y, dy) = dy·(1 − y²)`: `d/dy = −2·u·dy·y`, `d/d dy = TanhGrad(y, u)`.
fn grad_tanh_grad(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    let (y, dy, u) = (c.inputs[0], c.inputs[1], c.dout);
    vec![
        input_grad(b, c, 0, |b| {
            let ud = p(b, "Mul", &[u, dy]);
            let k = sc(b, -2.0);
            let y2 = p(b, "Mul", &[y, k]);
            p(b, "Mul", &[ud, y2])
        }),
        input_grad(b, c, 1, |b| p(b, "TanhGrad", &[y, u])),
    ]
}

/// `ReLU6Grad(y_backprop, x)` is linear in `y_backprop`; `x` only selects.
fn grad_relu6_grad(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    let x = c.inputs[1];
    vec![
        input_grad(b, c, 0, |b| p(b, "ReLU6Grad", &[c.dout, x])),
        None,
    ]
}

/// `SiLUGrad(dout, x) = dout·f'(x)`, `f'(x) = s·(1 + x·(1 − s))`: `d/d dout =
/// SiLUGrad(u, x)`, `d/dx = u·dout·f''(x)`, `f''(x) = s·(1 − s)·(2 + x·(1 − 2s))`.
fn grad_silu_grad(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    let (dout, x, u) = (c.inputs[0], c.inputs[1], c.dout);
    vec![
        input_grad(b, c, 0, |b| p(b, "SiLUGrad", &[u, x])),
        input_grad(b, c, 1, |b| {
            let s = p(b, "Sigmoid", &[x]);
            let one = sc(b, 1.0);
            let oms = p(b, "Sub", &[one, s]);
            let ss = p(b, "Mul", &[s, oms]);
            let two = sc(b, 2.0);
            let s2 = p(b, "Mul", &[s, two]);
            let one2 = sc(b, 1.0);
            let om2s = p(b, "Sub", &[one2, s2]);
            let xk = p(b, "Mul", &[x, om2s]);
            let two2 = sc(b, 2.0);
            let poly = p(b, "Add", &[xk, two2]);
            let f2 = p(b, "Mul", &[ss, poly]);
            let ud = p(b, "Mul", &[u, dout]);
            p(b, "Mul", &[ud, f2])
        }),
    ]
}

/// `GeLUGrad(dy, x, y) = dy·f'(x)` (`y` is not read): `d/d dy = GeLUGrad(u,
/// x, y)`, `d/dx = u·dy·f''(x)` with `f''(x) = (1 − t²)·(v + 0.5·x·(w − 2t·v²))`,
/// `t = tanh(c·(x + a·x³))`, `v = c·(1 + 3a·x²)`, `w = 6ac·x`.
fn grad_gelu_grad(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    let (dy, x, y, u) = (c.inputs[0], c.inputs[1], c.inputs[2], c.dout);
    vec![
        input_grad(b, c, 0, |b| p(b, "GeLUGrad", &[u, x, y])),
        input_grad(b, c, 1, |b| {
            let x2 = p(b, "Square", &[x]);
            let x3 = p(b, "Mul", &[x2, x]);
            let a = sc(b, GELU_A);
            let ax3 = p(b, "Mul", &[x3, a]);
            let inner = p(b, "Add", &[x, ax3]);
            let k = sc(b, GELU_C);
            let arg = p(b, "Mul", &[inner, k]);
            let t = p(b, "Tanh", &[arg]);
            // v = c + 3ac·x², w = 6ac·x.
            let k3 = sc(b, 3.0 * GELU_A * GELU_C);
            let v0 = p(b, "Mul", &[x2, k3]);
            let kc = sc(b, GELU_C);
            let v = p(b, "Add", &[v0, kc]);
            let k6 = sc(b, 6.0 * GELU_A * GELU_C);
            let w = p(b, "Mul", &[x, k6]);
            let v2 = p(b, "Square", &[v]);
            let tv2 = p(b, "Mul", &[t, v2]);
            let two = sc(b, 2.0);
            let tv2x2 = p(b, "Mul", &[tv2, two]);
            let w_minus = p(b, "Sub", &[w, tv2x2]);
            let half = sc(b, 0.5);
            let hx = p(b, "Mul", &[x, half]);
            let bracket0 = p(b, "Mul", &[hx, w_minus]);
            let bracket = p(b, "Add", &[v, bracket0]);
            let t2 = p(b, "Square", &[t]);
            let one = sc(b, 1.0);
            let sech2 = p(b, "Sub", &[one, t2]);
            let f2 = p(b, "Mul", &[sech2, bracket]);
            let ud = p(b, "Mul", &[u, dy]);
            p(b, "Mul", &[ud, f2])
        }),
        None,
    ]
}

// ---------------------------------------------------------------------------
// The table.

const fn backward(
    name: &'static str,
    doc: &'static str,
    params: Schema,
    infer: crate::InferFn,
    grad: crate::GradFn,
    kernel: crate::KernelFn,
) -> OpDef {
    OpDef {
        name,
        category: Category::Backward,
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
    backward(
        "GeLUGrad",
        "The gradient of `GeLU` (its tanh form, as MindSpore's kernel): `dy · (0.5·(1 + t) + 0.5·x·(1 − t²)·c·(1 + 3a·x²))`, `t = tanh(c·(x + a·x³))`, `c = √(2/π)`, `a = 0.044715`. `y` is GeLU's output, passed as MindSpore's bprop passes it; the value depends on `x` alone.",
        Schema::ms(
            &[],
            &[
                ("dy", "The gradient of GeLU's output."),
                ("x", "GeLU's input."),
                ("y", "GeLU's output (not read)."),
            ],
        ),
        infer_float_binary,
        grad_gelu_grad,
        k_gelu_grad,
    )
    .with_formula(&GELU_GRAD),
    backward(
        "SigmoidGrad",
        "The gradient of `Sigmoid` from its output: `dy · y · (1 − y)`.",
        Schema::ms(&[], &[("y", "Sigmoid's output."), ("dy", "The gradient of Sigmoid's output.")]),
        infer_float_binary,
        grad_sigmoid_grad,
        |c| float_binary("SigmoidGrad", c, |y, d| SIGMOID_GRAD.bin64(y, d, &[])),
    )
    .with_formula(&SIGMOID_GRAD),
    backward(
        "TanhGrad",
        "The gradient of `Tanh` from its output: `dy · (1 − y²)`.",
        Schema::ms(&[], &[("y", "Tanh's output."), ("dy", "The gradient of Tanh's output.")]),
        infer_float_binary,
        grad_tanh_grad,
        |c| float_binary("TanhGrad", c, |y, d| TANH_GRAD.bin64(y, d, &[])),
    )
    .with_formula(&TANH_GRAD),
    backward(
        "ReLU6Grad",
        "The gradient of `ReLU6`: `y_backprop` where `0 < x <= 6`, 0 elsewhere (and where `x` is NaN), as MindSpore's kernel.",
        Schema::ms(
            &[],
            &[("y_backprop", "The gradient of ReLU6's output."), ("x", "ReLU6's input.")],
        ),
        infer_float_binary,
        grad_relu6_grad,
        |c| float_binary("ReLU6Grad", c, |d, x| RELU6_GRAD.bin64(d, x, &[])),
    )
    .with_formula(&RELU6_GRAD),
    backward(
        "SiLUGrad",
        "The gradient of `SiLU`: `dout · s · (1 + x · (1 − s))`, `s = sigmoid(x)`.",
        Schema::ms(&[], &[("dout", "The gradient of SiLU's output."), ("x", "SiLU's input.")]),
        infer_float_binary,
        grad_silu_grad,
        |c| float_binary("SiLUGrad", c, |d, x| SILU_GRAD.bin64(d, x, &[])),
    )
    .with_formula(&SILU_GRAD),
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let f64s = |shape: &[usize], v: &[f64]| {
        KValue::Tensor(Tensor::from_f64(shape.to_vec(), v.to_vec()).unwrap())
    };
    vec![
        Sample::new(
            "GeLUGrad",
            vec![
                random_f64(&[2, 3], 700, -1.0, 1.0),
                random_f64(&[2, 3], 701, -3.0, 3.0),
                random_f64(&[2, 3], 702, -1.0, 1.0),
            ],
        ),
        Sample::new(
            "SigmoidGrad",
            vec![
                random_f64(&[2, 3], 703, 0.05, 0.95),
                random_f64(&[2, 3], 704, -1.0, 1.0),
            ],
        ),
        Sample::new(
            "TanhGrad",
            vec![
                random_f64(&[2, 3], 705, -0.95, 0.95),
                random_f64(&[2, 3], 706, -1.0, 1.0),
            ],
        ),
        // `x` away from the kinks at 0 and 6 (finite differences cross none).
        Sample::new(
            "ReLU6Grad",
            vec![
                random_f64(&[2, 3], 707, -1.0, 1.0),
                f64s(&[2, 3], &[-2.0, 0.5, 3.0, 5.5, 7.0, -0.3]),
            ],
        ),
        Sample::new(
            "SiLUGrad",
            vec![
                random_f64(&[2, 3], 708, -1.0, 1.0),
                random_f64(&[2, 3], 709, -4.0, 4.0),
            ],
        ),
    ]
}
