//! Interpolation, clamping and the tensor-scalar primitives of the
//! `elementwise` family: `Lerp ClampScalar ClampTensor NanToNum
//! Heaviside Muls Divs AddScalar SubScalar` (dtypes, numerics and gradients
//! as described in `elementwise::binary`).
//!
//! - `ClampScalar`/`ClampTensor` (and `Hardtanh`) compute `min(max(x, lo), hi)`
//!   with C++'s `std::max`/`std::min`, so a NaN element becomes `lo` (or `hi`
//!   when there is no `lo`), and `lo > hi` gives `hi` everywhere. A float
//!   bound makes an integer `ClampScalar` input `f32`.
//! - The number operand of `Muls Divs AddScalar SubScalar` is an input (a
//!   run-time scalar, usually a constant in a model) that yields to the
//!   tensor's dtype unless it is of a higher kind.
//! - `ClampTensor` needs both bounds here: MindSpore allows either to be
//!   `None`, which the registry's inputs cannot express (use `ClampScalar`,
//!   `Maximum` or `Minimum` for one bound).
//!
//! Gradients: `Lerp`, the clamps and `NanToNum` are MindSpore's bprops; the
//! number operand of the tensor-scalar primitives gets its derivative (summed
//! to a scalar) where MindSpore's bprop gives it zeros; `Heaviside`, for
//! which MindSpore defines none, gives `values` the sensitivity where `x` is
//! 0 and `x` none.

use crate::schema::Schema;
use ir::{AbsVal, AttrValue, DType, Shape};
use tensor::Tensor;

use crate::defs::elementwise::binary::ew;
use crate::defs::elementwise::binary::DIV;
use crate::defs::elementwise::common::{
    as_weak, binary, binary_kernel, dtype_error, infer_binary, infer_unary, input_grad, masked,
    opt_number, p, ternary_float, unary_grad, unary_kernel, Accept, Grads,
};
use crate::defs::elementwise::{float_of, MUL};
use crate::infer::{broadcast_shapes, promote, result, InferCall};
use crate::kernel::{KValue, KernelCall};
use crate::{GNode, GradBuilder, GradCall, OpDef, OpError};

// ---------------------------------------------------------------------------
// Shape rules.

fn infer_numeric(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_binary(call, Accept::Numeric, |d| d)
}

fn infer_heaviside(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dx, _) = call.tensor(0)?;
    let (dv, _) = call.tensor(1)?;
    let (x, v) = (&call.inputs[0], &call.inputs[1]);
    if dx != dv && !x.is_weak() && !v.is_weak() {
        return Err(OpError::input(
            1,
            format!("`Heaviside` needs `x` and `values` of one dtype, but `x` is {x} and `values` is {v}"),
        ));
    }
    infer_numeric(call)
}

fn infer_lerp(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (ds, ss) = call.tensor(0)?;
    let (de, se) = call.tensor(1)?;
    let (dw, sw) = call.tensor(2)?;
    for (i, d) in [(0, ds), (1, de), (2, dw)] {
        if !d.is_float() {
            return Err(dtype_error(call, i, Accept::Float));
        }
    }
    let (s, e) = (&call.inputs[0], &call.inputs[1]);
    if ds != de && !s.is_weak() && !e.is_weak() {
        return Err(OpError::input(
            1,
            format!(
                "`Lerp` needs `input` and `end` of one dtype, but `input` is {s} and `end` is {e}"
            ),
        ));
    }
    let dtype = promote(s, e).unwrap_or(ds);
    let shape = broadcast_shapes(&ss, &se)
        .and_then(|x| broadcast_shapes(&x, &sw))
        .map_err(|m| {
            OpError::call(format!("`Lerp`: {m}"))
                .with_note(format!("`input` is {s}"))
                .with_note(format!("`end` is {e}"))
                .with_note(format!("`weight` is {}", call.inputs[2]))
        })?;
    Ok(result(call.inputs, dtype, shape))
}

/// The dtype `ClampScalar` computes in: a float bound makes an integer input
/// `f32`, as a float literal would.
fn clamp_scalar_dtype(x: DType, attrs: &crate::Attrs) -> DType {
    let float_bound = ["min", "max"]
        .iter()
        .any(|n| matches!(attrs.get(n), Some(AttrValue::Float(_))));
    if float_bound && !x.is_float() {
        DType::F32
    } else {
        x
    }
}

fn check_clamp_bounds(call_op: &str, attrs: &crate::Attrs) -> Result<(), OpError> {
    if opt_number(attrs, "min").is_none() && opt_number(attrs, "max").is_none() {
        return Err(OpError::attr(
            "min",
            format!("`{call_op}` needs at least one of `min` and `max`"),
        ));
    }
    Ok(())
}

fn infer_clamp_scalar(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    check_clamp_bounds(call.op.name, call.attrs)?;
    infer_unary(call, Accept::Numeric, |d| clamp_scalar_dtype(d, call.attrs))
}

fn infer_clamp_tensor(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let mut shapes = Vec::new();
    for i in 0..3 {
        let (d, s) = call.tensor(i)?;
        if d.is_bool() {
            return Err(dtype_error(call, i, Accept::Numeric));
        }
        shapes.push(s);
    }
    let i = &call.inputs;
    let dtype = promote(&i[0], &i[1])
        .and_then(|d| {
            let lo = AbsVal::Tensor {
                dtype: d,
                shape: Shape::scalar(),
            };
            promote(&lo, &i[2])
        })
        .unwrap_or(DType::F32);
    let shape = broadcast_shapes(&shapes[0], &shapes[1])
        .and_then(|s| broadcast_shapes(&s, &shapes[2]))
        .map_err(|m| {
            OpError::call(format!("`ClampTensor`: {m}"))
                .with_note(format!("`input` is {}", i[0]))
                .with_note(format!("`min` is {}", i[1]))
                .with_note(format!("`max` is {}", i[2]))
        })?;
    Ok(result(call.inputs, dtype, shape))
}

fn infer_nan_to_num(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_unary(call, Accept::Float, |d| d)
}

/// `input` and a number: the number yields to the tensor's dtype unless it is
/// of a higher kind (an int tensor times a float gives `f32`).
fn infer_tensor_scalar(call: &InferCall, true_div: bool) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dx, shape) = call.tensor(0)?;
    let (_, so) = call.tensor(1)?;
    if so.rank().is_some_and(|r| r > 0) {
        return Err(OpError::input(
            1,
            format!(
                "`{}` needs a number `other`, but it is {}",
                call.op.name, call.inputs[1]
            ),
        )
        .with_note(
            "use the tensor-tensor primitive (`Mul`, `Div`, `Add`, `Sub`) for two tensors",
        ));
    }
    let other = as_weak(&call.inputs[1]);
    let mut dtype = promote(&call.inputs[0], &other).unwrap_or(dx);
    if true_div {
        dtype = float_of(dtype);
    }
    if call.op.param("alpha").is_some() {
        if matches!(call.attrs.get("alpha"), Some(AttrValue::Float(_))) && !dtype.is_float() {
            return Err(OpError::attr(
                "alpha",
                format!(
                    "`{}`: a float `alpha` needs a float `input`, but the result would be {dtype}",
                    call.op.name
                ),
            ));
        }
        if dtype.is_bool() {
            return Err(dtype_error(call, 0, Accept::Numeric));
        }
    }
    Ok(match &call.inputs[0] {
        AbsVal::Scalar { weak, .. } => AbsVal::Scalar {
            dtype,
            value: None,
            weak: *weak,
        },
        _ => AbsVal::Tensor { dtype, shape },
    })
}

// ---------------------------------------------------------------------------
// Gradient rules.

fn grad_lerp(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // dstart = dout (1 - w); dend = dout w; dweight = dout (end - start).
    let (s, e, w) = (c.inputs[0], c.inputs[1], c.inputs[2]);
    vec![
        input_grad(b, c, 0, |b| {
            let one = b.scalar(1.0);
            let omw = p(b, "Sub", &[one, w]);
            p(b, "Mul", &[c.dout, omw])
        }),
        input_grad(b, c, 1, |b| p(b, "Mul", &[c.dout, w])),
        input_grad(b, c, 2, |b| {
            let d = p(b, "Sub", &[e, s]);
            p(b, "Mul", &[c.dout, d])
        }),
    ]
}

/// The mask of `x` within `[lo, hi]` (either bound optional).
fn within(b: &mut dyn GradBuilder, x: GNode, lo: Option<GNode>, hi: Option<GNode>) -> GNode {
    let ge = lo.map(|lo| p(b, "GreaterEqual", &[x, lo]));
    let le = hi.map(|hi| p(b, "LessEqual", &[x, hi]));
    match (ge, le) {
        (Some(g), Some(l)) => p(b, "LogicalAnd", &[g, l]),
        (Some(m), None) | (None, Some(m)) => m,
        (None, None) => {
            let ones = p(b, "OnesLike", &[x]);
            b.prim(
                "Cast",
                &[ones],
                vec![("dtype", AttrValue::DType(DType::Bool))],
            )
        }
    }
}

fn grad_clamp_scalar(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // dx = dout where lo <= x <= hi (a tie goes to `x`).
    unary_grad(b, c, |b| {
        let lo = opt_number(c.attrs, "min").map(|v| b.scalar(v));
        let hi = opt_number(c.attrs, "max").map(|v| b.scalar(v));
        let m = within(b, c.inputs[0], lo, hi);
        masked(b, m, c.dout)
    })
}

fn grad_clamp_tensor(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // out = min(max(x, lo), hi): each element's sensitivity goes to whichever
    // of x, lo, hi the result came from (ties to x).
    let (x, lo, hi) = (c.inputs[0], c.inputs[1], c.inputs[2]);
    let from_x = within(b, x, Some(lo), Some(hi));
    let below = p(b, "Less", &[x, lo]);
    let lo_ok = p(b, "LessEqual", &[lo, hi]);
    let from_lo = p(b, "LogicalAnd", &[below, lo_ok]);
    let neither = p(b, "LogicalOr", &[from_x, from_lo]);
    let from_hi = p(b, "LogicalNot", &[neither]);
    vec![
        input_grad(b, c, 0, |b| masked(b, from_x, c.dout)),
        input_grad(b, c, 1, |b| masked(b, from_lo, c.dout)),
        input_grad(b, c, 2, |b| masked(b, from_hi, c.dout)),
    ]
}

fn grad_nan_to_num(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // dx = dout · IsFinite(x).
    unary_grad(b, c, |b| {
        let m = p(b, "IsFinite", &[c.inputs[0]]);
        masked(b, m, c.dout)
    })
}

fn grad_heaviside(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // MindSpore defines no bprop: `x` gets none (the step is flat almost
    // everywhere); `values` gets dout where x == 0.
    vec![
        None,
        input_grad(b, c, 1, |b| {
            let zero = b.scalar(0.0);
            let m = p(b, "Equal", &[c.inputs[0], zero]);
            masked(b, m, c.dout)
        }),
    ]
}

fn grad_muls(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    let (x, s) = (c.inputs[0], c.inputs[1]);
    vec![
        input_grad(b, c, 0, |b| p(b, "Muls", &[c.dout, s])),
        input_grad(b, c, 1, |b| p(b, "Mul", &[c.dout, x])),
    ]
}

fn grad_divs(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    let s = c.inputs[1];
    vec![
        input_grad(b, c, 0, |b| p(b, "Divs", &[c.dout, s])),
        input_grad(b, c, 1, |b| {
            let t = p(b, "Mul", &[c.dout, c.out]);
            let u = p(b, "Div", &[t, s]);
            p(b, "Neg", &[u])
        }),
    ]
}

fn grad_add_sub_scalar(b: &mut dyn GradBuilder, c: &GradCall, sign: f64) -> Grads {
    let alpha = opt_number(c.attrs, "alpha").unwrap_or(1.0);
    vec![
        input_grad(b, c, 0, |_| c.dout),
        input_grad(b, c, 1, |b| {
            let k = b.scalar(sign * alpha);
            p(b, "Mul", &[c.dout, k])
        }),
    ]
}

// ---------------------------------------------------------------------------
// Kernels.

fn k_lerp(c: &KernelCall) -> Result<KValue, OpError> {
    let dtype = crate::infer::promote(&c.abs(0), &c.abs(1)).unwrap_or(DType::F32);
    let t = ternary_float(
        [c.tensor(0)?, c.tensor(1)?, c.tensor(2)?],
        dtype,
        |s, e, w| s + w * (e - s),
    )?;
    Ok(KValue::Tensor(t))
}

/// `std::min(hi, std::max(lo, x))`: NaN becomes `lo` (or `hi` without `lo`).
pub(crate) fn clamp_f(x: f64, lo: Option<f64>, hi: Option<f64>) -> f64 {
    let y = match lo {
        Some(l) if l < x => x,
        Some(l) => l,
        None => x,
    };
    match hi {
        Some(h) if y < h => y,
        Some(h) => h,
        None => y,
    }
}

fn clamp_i(x: i64, lo: Option<i64>, hi: Option<i64>) -> i64 {
    let y = lo.map_or(x, |l| x.max(l));
    hi.map_or(y, |h| y.min(h))
}

fn k_clamp_scalar(c: &KernelCall) -> Result<KValue, OpError> {
    check_clamp_bounds("ClampScalar", c.attrs)?;
    let x = c.tensor(0)?;
    let (lo, hi) = (opt_number(c.attrs, "min"), opt_number(c.attrs, "max"));
    let dtype = clamp_scalar_dtype(x.dtype(), c.attrs);
    let t = unary_kernel(
        x,
        dtype,
        |v| clamp_f(v, lo, hi),
        |v| clamp_i(v, lo.map(|l| l as i64), hi.map(|h| h as i64)),
    )?;
    Ok(KValue::Tensor(t))
}

fn k_clamp_tensor(c: &KernelCall) -> Result<KValue, OpError> {
    let (x, lo, hi) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let d = promote(&c.abs(0), &c.abs(1)).unwrap_or(x.dtype());
    let dtype = promote(
        &AbsVal::Tensor {
            dtype: d,
            shape: Shape::scalar(),
        },
        &c.abs(2),
    )
    .unwrap_or(d);
    if dtype.is_float() {
        let t = ternary_float([x, lo, hi], dtype, |v, l, h| clamp_f(v, Some(l), Some(h)))?;
        return Ok(KValue::Tensor(t));
    }
    // Integers: exactly, in i64.
    let lo_x = binary_kernel(x, lo, dtype, |_, _| 0.0, |v, l| v.max(l))?;
    let t = binary_kernel(&lo_x, hi, dtype, |_, _| 0.0, |v, h| v.min(h))?;
    Ok(KValue::Tensor(t))
}

/// The largest finite value of a float dtype.
pub(crate) fn float_max(d: DType) -> f64 {
    match d {
        DType::F16 => 65504.0,
        DType::BF16 => 3.389_531_389_251_535_5e38,
        DType::F32 => f32::MAX as f64,
        _ => f64::MAX,
    }
}

fn k_nan_to_num(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let d = x.dtype();
    let nan = opt_number(c.attrs, "nan").unwrap_or(0.0);
    let pos = opt_number(c.attrs, "posinf").unwrap_or(float_max(d));
    let neg = opt_number(c.attrs, "neginf").unwrap_or(-float_max(d));
    let t = unary_kernel(
        x,
        d,
        |v| {
            if v.is_nan() {
                nan
            } else if v == f64::INFINITY {
                pos
            } else if v == f64::NEG_INFINITY {
                neg
            } else {
                v
            }
        },
        |v| v,
    )?;
    Ok(KValue::Tensor(t))
}

fn k_heaviside(c: &KernelCall) -> Result<KValue, OpError> {
    binary(
        c,
        c.promoted(),
        |x, v| {
            if x > 0.0 {
                1.0
            } else if x == 0.0 {
                v
            } else {
                0.0
            }
        },
        |x, v| match x.cmp(&0) {
            std::cmp::Ordering::Greater => 1,
            std::cmp::Ordering::Equal => v,
            std::cmp::Ordering::Less => 0,
        },
    )
}

/// The dtype of a tensor-scalar primitive's result (as its shape rule).
fn tensor_scalar_dtype(c: &KernelCall) -> DType {
    promote(&c.abs(0), &as_weak(&c.abs(1))).unwrap_or(DType::F32)
}

fn k_muls(c: &KernelCall) -> Result<KValue, OpError> {
    binary(
        c,
        tensor_scalar_dtype(c),
        |x, y| MUL.bin64(x, y, &[]),
        |x, y| x.wrapping_mul(y),
    )
}

fn k_divs(c: &KernelCall) -> Result<KValue, OpError> {
    binary(
        c,
        float_of(tensor_scalar_dtype(c)),
        |x, y| DIV.bin64(x, y, &[]),
        |_, _| 0,
    )
}

fn k_add_scalar(c: &KernelCall, sign: f64) -> Result<KValue, OpError> {
    let alpha = opt_number(c.attrs, "alpha").unwrap_or(1.0);
    let ai = alpha as i64 * sign as i64;
    binary(
        c,
        tensor_scalar_dtype(c),
        |x, y| x + sign * alpha * y,
        |x, y| x.wrapping_add(ai.wrapping_mul(y)),
    )
}

// ---------------------------------------------------------------------------
// The table.

pub const OPS: &[OpDef] = &[
    ew(
        "Lerp",
        "Linear interpolation `input + weight * (end - input)`, elementwise with the three broadcast together. `input` and `end` are float tensors of one dtype; `weight` a float tensor or number.",
        Schema::ms(
            &[],
            &[
                ("input", "The start points: a float tensor."),
                ("end", "The end points, of the dtype of `input`."),
                ("weight", "The interpolation weight: a float tensor broadcast against the others, or a float number."),
            ],
        ),
        infer_lerp,
        Some(grad_lerp),
        k_lerp,
    ),
    ew(
        "ClampScalar",
        "Clamps every element to `[min, max]`: `min(max(x, min), max)`, either bound optional (at least one is needed). A float bound makes an integer input `f32`. NaN becomes `min` (or `max` when there is no `min`), as MindSpore's CPU kernel; if `min > max` every element is `max`.",
        Schema::ms(
            &[],
            &[
                ("input", "The tensor to clamp."),
                ("min", "The lower bound, or `none` for none."),
                ("max", "The upper bound, or `none` for none."),
            ],
        ),
        infer_clamp_scalar,
        Some(grad_clamp_scalar),
        k_clamp_scalar,
    ),
    ew(
        "ClampTensor",
        "Clamps `input` elementwise to `[min, max]` given as tensors, the three broadcast together and promoted to one dtype: `min(max(input, min), max)`. NaN becomes `min`; where `min > max` the result is `max`. Both bounds are needed here (use `ClampScalar`, `Maximum` or `Minimum` for one).",
        Schema::ms(
            &[],
            &[
                ("input", "The tensor to clamp."),
                ("min", "The lower bounds, broadcast against `input`."),
                ("max", "The upper bounds, broadcast against `input`."),
            ],
        ),
        infer_clamp_tensor,
        Some(grad_clamp_tensor),
        k_clamp_tensor,
    ),
    ew(
        "NanToNum",
        "Replaces NaN by `nan` (default 0), +inf by `posinf` (default the dtype's largest finite value) and -inf by `neginf` (default its lowest), in a float tensor.",
        Schema::ms(
            &[],
            &[
                ("input", "A float tensor."),
                ("nan", "The value for NaN; `none` means 0."),
                ("posinf", "The value for +inf; `none` means the dtype's largest finite value."),
                ("neginf", "The value for -inf; `none` means the dtype's lowest finite value."),
            ],
        ),
        infer_nan_to_num,
        Some(grad_nan_to_num),
        k_nan_to_num,
    ),
    ew(
        "Heaviside",
        "The Heaviside step function: 0 where `x < 0` (and where `x` is NaN), `values` where `x == 0`, 1 where `x > 0`; `x` and `values` have one dtype and broadcast.",
        Schema::ms(
            &[],
            &[
                ("x", "The input: a numeric tensor."),
                ("values", "The values where `x` is 0, of the dtype of `x`, broadcast against it."),
            ],
        ),
        infer_heaviside,
        Some(grad_heaviside),
        k_heaviside,
    ),
    ew(
        "Muls",
        "Multiplies a tensor by a number, `input * other`. The number yields to the tensor's dtype unless it is of a higher kind (an integer tensor times a float gives `f32`).",
        Schema::ms(&[], &[("input", "The tensor."), ("other", "The number to multiply by.")]),
        |call| infer_tensor_scalar(call, false),
        Some(grad_muls),
        k_muls,
    )
    .with_formula(&MUL),
    ew(
        "Divs",
        "Divides a tensor by a number, `input / other` (true division: an integer tensor gives `f32`).",
        Schema::ms(&[], &[("input", "The tensor."), ("other", "The number to divide by.")]),
        |call| infer_tensor_scalar(call, true),
        Some(grad_divs),
        k_divs,
    )
    .with_formula(&DIV),
    ew(
        "AddScalar",
        "Adds a scaled number to a tensor, `input + alpha * other`. The number yields to the tensor's dtype unless it is of a higher kind; a float `alpha` needs a float result.",
        Schema::ms(
            &[],
            &[
                ("input", "The tensor."),
                ("other", "The number to add."),
                ("alpha", "The scale of `other`. Default 1."),
            ],
        ),
        |call| infer_tensor_scalar(call, false),
        Some(|b, c| grad_add_sub_scalar(b, c, 1.0)),
        |c| k_add_scalar(c, 1.0),
    ),
    ew(
        "SubScalar",
        "Subtracts a scaled number from a tensor, `input - alpha * other`. The number yields to the tensor's dtype unless it is of a higher kind; a float `alpha` needs a float result.",
        Schema::ms(
            &[],
            &[
                ("input", "The tensor."),
                ("other", "The number to subtract."),
                ("alpha", "The scale of `other`. Default 1."),
            ],
        ),
        |call| infer_tensor_scalar(call, false),
        Some(|b, c| grad_add_sub_scalar(b, c, -1.0)),
        |c| k_add_scalar(c, -1.0),
    ),
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    let r = random_f64;
    let f = AttrValue::float;
    let mut out = vec![
        Sample::new(
            "Lerp",
            vec![
                r(&[2, 3], 222, -2.0, 2.0),
                r(&[3], 223, -2.0, 2.0),
                r(&[2, 1], 224, 0.0, 1.0),
            ],
        ),
        Sample::new(
            "Lerp",
            vec![
                r(&[3], 225, -2.0, 2.0),
                r(&[3], 226, -2.0, 2.0),
                r(&[], 227, 0.0, 1.0),
            ],
        ),
        Sample::new("ClampScalar", vec![r(&[2, 3], 228, -2.0, 2.0)])
            .attr("min", f(-0.93))
            .attr("max", f(1.07)),
        Sample::new("ClampScalar", vec![r(&[4], 229, -2.0, 2.0)]).attr("min", f(0.31)),
        Sample::new("ClampScalar", vec![ints(DType::I32, &[4], &[-3, 0, 2, 7])])
            .attr("max", AttrValue::Int(2)),
        Sample::new(
            "ClampTensor",
            vec![
                KValue::Tensor(
                    Tensor::from_f64(vec![2, 3], vec![-1.7, -0.2, 0.4, 1.3, 2.2, -3.1]).unwrap(),
                ),
                KValue::Tensor(Tensor::from_f64(vec![3], vec![-1.0, -0.5, 0.9]).unwrap()),
                KValue::Tensor(Tensor::from_f64(vec![2, 1], vec![1.1, 0.7]).unwrap()),
            ],
        ),
        Sample::new(
            "NanToNum",
            vec![KValue::Tensor(
                Tensor::from_f64(vec![4], vec![0.3, f64::NAN, f64::INFINITY, -1.2]).unwrap(),
            )],
        )
        .attr("posinf", f(9.0)),
        // Away from x = 0, where the step has no derivative (the kernel
        // tests check `values`' gradient there).
        Sample::new(
            "Heaviside",
            vec![r(&[2, 2], 229, -1.0, 1.0), r(&[2], 230, -1.0, 1.0)],
        ),
        Sample::new(
            "Muls",
            vec![r(&[2, 3], 231, -2.0, 2.0), r(&[], 232, -2.0, 2.0)],
        ),
        Sample::new(
            "Muls",
            vec![
                ints(DType::I32, &[3], &[1, -2, 3]),
                ints(DType::I64, &[], &[4]),
            ],
        ),
        Sample::new(
            "Divs",
            vec![r(&[2, 3], 233, -2.0, 2.0), r(&[], 234, 0.5, 2.0)],
        ),
        Sample::new(
            "AddScalar",
            vec![r(&[2, 3], 235, -2.0, 2.0), r(&[], 236, -2.0, 2.0)],
        )
        .attr("alpha", f(1.5)),
        Sample::new(
            "SubScalar",
            vec![r(&[2, 3], 237, -2.0, 2.0), r(&[], 238, -2.0, 2.0)],
        )
        .attr("alpha", AttrValue::Int(2)),
    ];
    out.push(Sample::new(
        "SubScalar",
        vec![
            ints(DType::I32, &[3], &[1, -2, 3]),
            ints(DType::I64, &[], &[4]),
        ],
    ));
    out
}
