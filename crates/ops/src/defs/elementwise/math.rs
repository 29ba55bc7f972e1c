//! Unary elementwise mathematics: rounding and sign (`Floor Ceil Round Rint
//! Trunc Sign Reciprocal Inv`), the float predicates (`IsNan IsFinite IsInf`)
//! and the transcendental functions (`Log1p Expm1 Log2 Log10 Exp2 Erfc
//! Erfinv Asin ACos Atan Sinh Cosh Tan Asinh Acosh Atanh Sinc`).
//!
//! Dtypes, as MindSpore 2.10's:
//! - `Floor Ceil Rint` need a float input; `Round` takes floats and integers
//!   (an integer is returned unchanged, and then `decimals` must be 0); `Trunc`
//!   takes anything (integers and bools unchanged); `Sign` and `Inv` take
//!   floats and integers and keep the dtype (`Inv` of an integer is the
//!   integer division `1 / x`, and `1 / 0` gives the minimum of `i32`/`i64`, 0
//!   for narrower types, as MindSpore's CPU kernel).
//! - `IsNan IsFinite` take any dtype (integers are never NaN and always
//!   finite); `IsInf` needs a float. They give `bool`.
//! - The transcendental functions and `Reciprocal` compute an integer or bool
//!   input in `f32`, like `Exp` (MindSpore's `Sinc` and `Reciprocal` kernels
//!   do so; for the others its CPU backend has no integer kernel).
//!
//! Numerics: values are computed in f64 and rounded to the result's dtype;
//! `Round` and `Rint` round half to even; `Sign(NaN)` is 0, as MindSpore's.
//! `Erfc` keeps its relative accuracy for large `x` (a continued fraction,
//! not `1 - erf`); `Erfinv` refines Giles' approximation by Newton steps.
//!
//! Gradients are MindSpore's bprops; the rounding functions, `Sign` and the
//! predicates are flat or boolean and have none.

use crate::schema::{why, Override, Schema};
use std::f64::consts::{FRAC_2_SQRT_PI, LN_10, LN_2, PI};

use ir::{AbsVal, AttrValue, DType};
use tensor::Tensor;

use crate::defs::elementwise::binary::ew;
use crate::defs::elementwise::common::{
    float_kernel, infer_unary, int_nan, p, predicate_kernel, unary_grad, unary_kernel, Accept,
    Grads,
};
use crate::defs::elementwise::{erf, float_of};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::Gradgen;
use crate::{GNode, GradBuilder, GradCall, OpDef, OpError};

// ---------------------------------------------------------------------------
// Scalar functions.

/// The complementary error function `1 - erf(x)`, accurate in relative terms
/// for large `x`: `1 - erf(x)` below 0.5 (no cancellation there), then the
/// continued fraction `erfc(x) = e^{-x²}/√π · 1/(x + ½/(x + 1/(x + 3/2/(x + …))))`
/// (Abramowitz & Stegun 7.1.14) with 60 levels below 2.5 and 36 above (an
/// error under 1e-15 relative), and `2 - erfc(-x)` for negative `x`.
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 0.5 {
        return 1.0 - erf(x);
    }
    if x > 27.3 {
        return 0.0;
    }
    if x < 2.5 {
        // The fraction converges slowly this close to the origin; 1 - erf
        // loses at most 4 digits here (erfc(2.5) ≈ 4e-4).
        return 1.0 - erf(x);
    }
    let mut t = x;
    for k in (1..=60).rev() {
        t = x + (k as f64 * 0.5) / t;
    }
    (-x * x).exp() / (t * PI.sqrt())
}

/// The inverse error function: Giles' single-precision approximation
/// ("Approximating the erfinv function", 2010), then two Newton steps on
/// `erf(x) = y` (on `erfc(x) = 1 - y` near ±1, where `erf` has no digits left).
pub fn erfinv(y: f64) -> f64 {
    if y.is_nan() || y.abs() > 1.0 {
        return f64::NAN;
    }
    if y.abs() == 1.0 {
        return f64::INFINITY.copysign(y);
    }
    let mut w = -((1.0 - y) * (1.0 + y)).ln();
    let mut x = if w < 5.0 {
        w -= 2.5;
        let mut q = 2.810_226_36e-08;
        for c in [
            3.432_739_39e-07,
            -3.523_387_7e-06,
            -4.391_506_54e-06,
            0.000_218_580_87,
            -0.001_253_725_03,
            -0.004_177_681_64,
            0.246_640_727,
            1.501_409_41,
        ] {
            q = c + q * w;
        }
        q * y
    } else {
        w = w.sqrt() - 3.0;
        let mut q = -0.000_200_214_257;
        for c in [
            0.000_100_950_558,
            0.001_349_343_22,
            -0.003_673_428_44,
            0.005_739_507_73,
            -0.007_622_461_3,
            0.009_438_870_47,
            1.001_674_06,
            2.832_976_82,
        ] {
            q = c + q * w;
        }
        q * y
    };
    for _ in 0..2 {
        let slope = FRAC_2_SQRT_PI * (-x * x).exp();
        if slope == 0.0 {
            break;
        }
        let residual = if y.abs() > 0.5 {
            // erf(x) - y = ±((1 - |y|) - erfc(|x|)), x having y's sign.
            let r = (1.0 - y.abs()) - erfc(x.abs());
            if y < 0.0 {
                -r
            } else {
                r
            }
        } else {
            erf(x) - y
        };
        x -= residual / slope;
    }
    x
}

/// `sin(πx) / (πx)`, 1 at 0.
fn sinc(x: f64) -> f64 {
    if x == 0.0 {
        1.0
    } else {
        let t = PI * x;
        t.sin() / t
    }
}

/// Round half to even at `decimals` decimal places (negative: to the left of
/// the point).
fn round_decimals(x: f64, decimals: i64) -> f64 {
    if decimals == 0 || !x.is_finite() {
        return x.round_ties_even();
    }
    let s = 10f64.powi(decimals.unsigned_abs().min(400) as i32);
    let r = if decimals > 0 {
        (x * s).round_ties_even() / s
    } else {
        (x / s).round_ties_even() * s
    };
    if r.is_finite() {
        r
    } else {
        x
    }
}

// ---------------------------------------------------------------------------
// Shape rules.

fn infer_float_only(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_unary(call, Accept::Float, |d| d)
}

/// Integer and bool inputs are computed in `f32`.
fn infer_to_float(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_unary(call, Accept::Any, float_of)
}

fn infer_numeric_same(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_unary(call, Accept::Numeric, |d| d)
}

fn infer_any_same(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_unary(call, Accept::Any, |d| d)
}

fn infer_round(call: &InferCall) -> Result<AbsVal, OpError> {
    let v = infer_unary(call, Accept::Numeric, |d| d)?;
    if let Some(d) = v.dtype() {
        let decimals = call.attrs.int("decimals");
        if d.is_int() && decimals != 0 {
            return Err(OpError::attr(
                "decimals",
                format!(
                    "`Round` of the integer tensor {} needs `decimals` 0, got {decimals}",
                    call.inputs[0]
                ),
            ));
        }
    }
    Ok(v)
}

fn infer_any_predicate(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_unary(call, Accept::Any, |_| DType::Bool)
}

fn infer_float_predicate(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_unary(call, Accept::Float, |_| DType::Bool)
}

// ---------------------------------------------------------------------------
// Kernels.

fn same(
    c: &KernelCall,
    ff: impl Fn(f64) -> f64,
    fi: impl Fn(i64) -> i64,
) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    Ok(KValue::Tensor(unary_kernel(x, x.dtype(), ff, fi)?))
}

fn k_round(c: &KernelCall) -> Result<KValue, OpError> {
    let d = c.attrs.int("decimals");
    same(c, |v| round_decimals(v, d), |v| v)
}

fn k_sign(c: &KernelCall) -> Result<KValue, OpError> {
    same(c, |v| SIGN.un64(v, &[]), i64::signum)
}

fn k_inv(c: &KernelCall) -> Result<KValue, OpError> {
    let d = c.tensor(0)?.dtype();
    same(
        c,
        |v| 1.0 / v,
        |v| {
            if v == 0 {
                int_nan(d)
            } else {
                1i64.wrapping_div(v)
            }
        },
    )
}

fn k_predicate(
    c: &KernelCall,
    ff: fn(f64) -> bool,
    fi: fn(i64) -> bool,
) -> Result<KValue, OpError> {
    Ok(KValue::Tensor(predicate_kernel(c.tensor(0)?, ff, fi)?))
}

// ---------------------------------------------------------------------------
// Gradient rules.

fn sc(b: &mut dyn GradBuilder, v: f64) -> GNode {
    b.scalar(v)
}

/// `-dout · out²` (MindSpore's `ReciprocalGrad` and `InvGrad`).
fn grad_reciprocal(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    unary_grad(b, c, |b| {
        let sq = p(b, "Square", &[c.out]);
        let t = p(b, "Mul", &[c.dout, sq]);
        p(b, "Neg", &[t])
    })
}

/// `dout · f(x)`.
fn grad_times(
    b: &mut dyn GradBuilder,
    c: &GradCall,
    f: impl FnOnce(&mut dyn GradBuilder, GNode) -> GNode,
) -> Grads {
    unary_grad(b, c, |b| {
        let d = f(b, c.inputs[0]);
        p(b, "Mul", &[c.dout, d])
    })
}

/// `dout / f(x)`.
fn grad_over(
    b: &mut dyn GradBuilder,
    c: &GradCall,
    f: impl FnOnce(&mut dyn GradBuilder, GNode) -> GNode,
) -> Grads {
    unary_grad(b, c, |b| {
        let d = f(b, c.inputs[0]);
        p(b, "RealDiv", &[c.dout, d])
    })
}

/// `1 - x²`.
fn one_minus_sq(b: &mut dyn GradBuilder, x: GNode) -> GNode {
    let one = sc(b, 1.0);
    let sq = p(b, "Square", &[x]);
    p(b, "Sub", &[one, sq])
}

fn grad_sinc(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // (πx·cos(πx) - sin(πx)) / (πx·x) · dout, and 0 at x = 0.
    unary_grad(b, c, |b| {
        let x = c.inputs[0];
        let pi = sc(b, PI);
        let t = p(b, "Mul", &[x, pi]);
        let cos = p(b, "Cos", &[t]);
        let sin = p(b, "Sin", &[t]);
        let tc = p(b, "Mul", &[t, cos]);
        let num = p(b, "Sub", &[tc, sin]);
        let den = p(b, "Mul", &[t, x]);
        let zero = sc(b, 0.0);
        let at_zero = p(b, "Equal", &[x, zero]);
        let ones = p(b, "OnesLike", &[x]);
        let safe_den = p(b, "Select", &[at_zero, ones, den]);
        let d = p(b, "RealDiv", &[num, safe_den]);
        let g = p(b, "Mul", &[d, c.dout]);
        let zeros = p(b, "ZerosLike", &[g]);
        p(b, "Select", &[at_zero, zeros, g])
    })
}

// ---------------------------------------------------------------------------
// The table.

crate::formula! {
    /// In the input's dtype (computed in f64 and rounded; exact).
    pub FLOOR = [wide] |a| floor(a)
}
crate::formula! {pub CEIL = [wide] |a| ceil(a)}
crate::formula! {pub RINT = [wide] |a| rint(a)}
crate::formula! {pub TRUNC = [wide] |a| trunc(a)}
crate::formula! {
    /// -1, 0 or 1 (0 for ±0 and NaN).
    pub SIGN = [wide ints] |a| select(gt(a, 0.0), 1.0, select(lt(a, 0.0), -1.0, 0.0))
}
crate::formula! {pub IS_NAN = [test] |a| isnan(a)}
crate::formula! {pub IS_FINITE = [test] |a| isfinite(a)}
crate::formula! {pub IS_INF = [test] |a| isinf(a)}
crate::formula! {pub LOG1P = [wide] |a| log1p(a)}
crate::formula! {pub EXPM1 = [wide] |a| expm1(a)}
crate::formula! {pub LOG2 = [wide] |a| log2(a)}
crate::formula! {pub LOG10 = [wide] |a| log10(a)}
crate::formula! {pub EXP2 = [wide] |a| exp2(a)}
crate::formula! {pub ERFC = [wide] |a| erfc(a)}
crate::formula! {
    /// Not an expression: the registry's [`erfinv`] (a rational start and
    /// two Newton steps) and CUDA's `erfinv`.
    pub ERFINV = [wide named("erfinv")] |a| erfinv(a)
}
crate::formula! {pub ASIN = [wide] |a| asin(a)}
crate::formula! {pub ACOS = [wide] |a| acos(a)}
crate::formula! {pub ATAN = [wide] |a| atan(a)}
crate::formula! {pub SINH = [wide] |a| sinh(a)}
crate::formula! {pub COSH = [wide] |a| cosh(a)}
crate::formula! {pub TAN = [wide] |a| tan(a)}
crate::formula! {pub ASINH = [wide] |a| asinh(a)}
crate::formula! {pub ACOSH = [wide] |a| acosh(a)}
crate::formula! {pub ATANH = [wide] |a| atanh(a)}

crate::formula! {
    /// Computed in f64 and rounded (the same as in `f32`: one division).
    pub RECIPROCAL = [] |a| 1.0 / a
}

const fn flat(
    name: &'static str,
    doc: &'static str,
    params: Schema,
    infer: crate::InferFn,
    kernel: crate::KernelFn,
) -> OpDef {
    ew(name, doc, params, infer, None, kernel)
}

pub const OPS: &[OpDef] = &[
    flat(
        "Floor",
        "Rounds every element down to an integer value, `floor(x)`. Needs a float input; not differentiable (MindSpore's bprop gives zeros).",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_float_only,
        |c| same(c, |v| FLOOR.un64(v, &[]), |v| v),
    )
    .with_formula(&FLOOR),
    flat(
        "Ceil",
        "Rounds every element up to an integer value, `ceil(x)`. Needs a float input; not differentiable.",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_float_only,
        |c| same(c, |v| CEIL.un64(v, &[]), |v| v),
    )
    .with_formula(&CEIL),
    flat(
        "Round",
        "Rounds every element half to even, at `decimals` decimal places (negative: to the left of the point). Integer inputs are returned unchanged (`decimals` must then be 0). Not differentiable. MindSpore's CPU kernel supports `decimals = 0` only.",
        Schema::ms(
            &[],
            &[
                ("input", "A float or integer tensor."),
                ("decimals", "The number of decimal places to keep. Default 0."),
            ],
        ),
        infer_round,
        k_round,
    ),
    flat(
        "Rint",
        "Rounds every element to the nearest integer value, half to even (`rint`). Needs a float input; not differentiable.",
        Schema::ms(
            &[Override::inputs(&["input_x"], why::INPUT_NAMES)],
            &[("input_x", "A float tensor.")],
        ),
        infer_float_only,
        |c| same(c, |v| RINT.un64(v, &[]), |v| v),
    )
    .with_formula(&RINT),
    flat(
        "Trunc",
        "Rounds every element toward zero, `trunc(x)`; integer and bool inputs are returned unchanged. Not differentiable.",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_any_same,
        |c| same(c, |v| TRUNC.un64(v, &[]), |v| v),
    )
    .with_formula(&TRUNC),
    flat(
        "Sign",
        "The sign of every element: -1, 0 or 1 in the input's dtype (0 for ±0 and NaN). Not differentiable.",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_numeric_same,
        k_sign,
    )
    .with_formula(&SIGN),
    ew(
        "Reciprocal",
        "The reciprocal `1 / x` of every element (integer and bool inputs give `f32`).",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_to_float,
        Some(grad_reciprocal),
        |c| float_kernel(c, |v| RECIPROCAL.un64(v, &[])),
    )
    .with_formula(&RECIPROCAL),
    ew(
        "Inv",
        "The reciprocal `1 / x` of every element, in the input's dtype: integers divide exactly (`1 / 0` gives the minimum of `i32`/`i64`, 0 for narrower types, as MindSpore's CPU kernel).",
        Schema::ms(&[], &[("x", "A float or integer tensor.")]),
        infer_numeric_same,
        Some(grad_reciprocal),
        k_inv,
    ),
    flat(
        "IsNan",
        "Whether every element is NaN: a `bool` tensor (always false for integers and bools).",
        Schema::ms(&[], &[("x", "The input tensor.")]),
        infer_any_predicate,
        |c| k_predicate(c, |v| IS_NAN.un64(v, &[]) != 0.0, |_| false),
    )
    .with_formula(&IS_NAN),
    flat(
        "IsFinite",
        "Whether every element is finite (neither infinite nor NaN): a `bool` tensor (always true for integers and bools).",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_any_predicate,
        |c| k_predicate(c, |v| IS_FINITE.un64(v, &[]) != 0.0, |_| true),
    )
    .with_formula(&IS_FINITE),
    flat(
        "IsInf",
        "Whether every element is +inf or -inf: a `bool` tensor. Needs a float input.",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_float_predicate,
        |c| k_predicate(c, |v| IS_INF.un64(v, &[]) != 0.0, |_| false),
    )
    .with_formula(&IS_INF),
    ew(
        "Log1p",
        "`log(1 + x)` of every element, accurate near 0 (integer inputs give `f32`).",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_to_float,
        Some(|b, c| {
            grad_times(b, c, |b, x| {
                let one = sc(b, 1.0);
                let xp = p(b, "Add", &[x, one]);
                p(b, "Reciprocal", &[xp])
            })
        }),
        |c| float_kernel(c, |v| LOG1P.un64(v, &[])),
    )
    .with_formula(&LOG1P),
    ew(
        "Expm1",
        "`exp(x) - 1` of every element, accurate near 0 (integer inputs give `f32`).",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_to_float,
        Some(|b, c| grad_times(b, c, |b, x| p(b, "Exp", &[x]))),
        |c| float_kernel(c, |v| EXPM1.un64(v, &[])),
    )
    .with_formula(&EXPM1)
    .drawn(Gradgen::SmoothUnary),
    ew(
        "Log2",
        "The base-2 logarithm of every element (NaN below 0, `-inf` at 0; integer inputs give `f32`).",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_to_float,
        Some(|b, c| {
            grad_over(b, c, |b, x| {
                let k = sc(b, LN_2);
                p(b, "Mul", &[x, k])
            })
        }),
        |c| float_kernel(c, |v| LOG2.un64(v, &[])),
    )
    .with_formula(&LOG2),
    ew(
        "Log10",
        "The base-10 logarithm of every element (NaN below 0, `-inf` at 0; integer inputs give `f32`).",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_to_float,
        Some(|b, c| {
            grad_over(b, c, |b, x| {
                let k = sc(b, LN_10);
                p(b, "Mul", &[x, k])
            })
        }),
        |c| float_kernel(c, |v| LOG10.un64(v, &[])),
    )
    .with_formula(&LOG10),
    ew(
        "Exp2",
        "`2^x` of every element (integer inputs give `f32`).",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_to_float,
        Some(|b, c| {
            unary_grad(b, c, |b| {
                let k = sc(b, LN_2);
                let t = p(b, "Mul", &[c.out, k]);
                p(b, "Mul", &[c.dout, t])
            })
        }),
        |c| float_kernel(c, |v| EXP2.un64(v, &[])),
    )
    .with_formula(&EXP2),
    ew(
        "Erfc",
        "The complementary error function `1 - erf(x)` of every element, accurate for large `x` (integer inputs give `f32`).",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_to_float,
        Some(|b, c| {
            grad_times(b, c, |b, x| {
                let sq = p(b, "Square", &[x]);
                let neg = p(b, "Neg", &[sq]);
                let e = p(b, "Exp", &[neg]);
                let k = sc(b, -FRAC_2_SQRT_PI);
                p(b, "Mul", &[e, k])
            })
        }),
        |c| float_kernel(c, |v| ERFC.un64(v, &[])),
    )
    .with_formula(&ERFC),
    ew(
        "Erfinv",
        "The inverse error function of every element, for `x` in [-1, 1] (±inf at ±1, NaN outside; integer inputs give `f32`).",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_to_float,
        Some(|b, c| {
            // dout · √π/2 · exp(out²).
            unary_grad(b, c, |b| {
                let sq = p(b, "Square", &[c.out]);
                let e = p(b, "Exp", &[sq]);
                let k = sc(b, PI.sqrt() / 2.0);
                let t = p(b, "Mul", &[e, k]);
                p(b, "Mul", &[c.dout, t])
            })
        }),
        |c| float_kernel(c, |v| ERFINV.un64(v, &[])),
    )
    .with_formula(&ERFINV),
    ew(
        "Asin",
        "The arcsine of every element, in radians (NaN outside [-1, 1]; integer inputs give `f32`).",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_to_float,
        Some(|b, c| {
            grad_times(b, c, |b, x| {
                let t = one_minus_sq(b, x);
                p(b, "Rsqrt", &[t])
            })
        }),
        |c| float_kernel(c, |v| ASIN.un64(v, &[])),
    )
    .with_formula(&ASIN),
    ew(
        "ACos",
        "The arccosine of every element, in radians (NaN outside [-1, 1]; integer inputs give `f32`).",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_to_float,
        Some(|b, c| {
            grad_times(b, c, |b, x| {
                let t = one_minus_sq(b, x);
                let r = p(b, "Rsqrt", &[t]);
                p(b, "Neg", &[r])
            })
        }),
        |c| float_kernel(c, |v| ACOS.un64(v, &[])),
    )
    .with_formula(&ACOS),
    ew(
        "Atan",
        "The arctangent of every element, in radians (integer inputs give `f32`).",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_to_float,
        Some(|b, c| {
            grad_over(b, c, |b, x| {
                let one = sc(b, 1.0);
                let sq = p(b, "Square", &[x]);
                p(b, "Add", &[one, sq])
            })
        }),
        |c| float_kernel(c, |v| ATAN.un64(v, &[])),
    )
    .with_formula(&ATAN)
    .drawn(Gradgen::SmoothUnary),
    ew(
        "Sinh",
        "The hyperbolic sine of every element (integer inputs give `f32`).",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_to_float,
        Some(|b, c| grad_times(b, c, |b, x| p(b, "Cosh", &[x]))),
        |c| float_kernel(c, |v| SINH.un64(v, &[])),
    )
    .with_formula(&SINH)
    .drawn(Gradgen::SmoothUnary),
    ew(
        "Cosh",
        "The hyperbolic cosine of every element (integer inputs give `f32`).",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_to_float,
        Some(|b, c| grad_times(b, c, |b, x| p(b, "Sinh", &[x]))),
        |c| float_kernel(c, |v| COSH.un64(v, &[])),
    )
    .with_formula(&COSH)
    .drawn(Gradgen::SmoothUnary),
    ew(
        "Tan",
        "The tangent of every element, in radians (integer inputs give `f32`).",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_to_float,
        Some(|b, c| {
            grad_times(b, c, |b, x| {
                let cos = p(b, "Cos", &[x]);
                let sec = p(b, "Reciprocal", &[cos]);
                p(b, "Square", &[sec])
            })
        }),
        |c| float_kernel(c, |v| TAN.un64(v, &[])),
    )
    .with_formula(&TAN),
    ew(
        "Asinh",
        "The inverse hyperbolic sine of every element (integer inputs give `f32`).",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_to_float,
        Some(|b, c| {
            // AsinhGrad: dout / cosh(out).
            unary_grad(b, c, |b| {
                let ch = p(b, "Cosh", &[c.out]);
                p(b, "RealDiv", &[c.dout, ch])
            })
        }),
        |c| float_kernel(c, |v| ASINH.un64(v, &[])),
    )
    .with_formula(&ASINH)
    .drawn(Gradgen::SmoothUnary),
    ew(
        "Acosh",
        "The inverse hyperbolic cosine of every element (NaN below 1; integer inputs give `f32`).",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_to_float,
        Some(|b, c| {
            // AcoshGrad: dout / sinh(out).
            unary_grad(b, c, |b| {
                let sh = p(b, "Sinh", &[c.out]);
                p(b, "RealDiv", &[c.dout, sh])
            })
        }),
        |c| float_kernel(c, |v| ACOSH.un64(v, &[])),
    )
    .with_formula(&ACOSH),
    ew(
        "Atanh",
        "The inverse hyperbolic tangent of every element (±inf at ±1, NaN outside [-1, 1]; integer inputs give `f32`).",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_to_float,
        Some(|b, c| grad_over(b, c, one_minus_sq)),
        |c| float_kernel(c, |v| ATANH.un64(v, &[])),
    )
    .with_formula(&ATANH),
    ew(
        "Sinc",
        "The normalised sinc function `sin(πx) / (πx)` of every element, 1 at 0 (integer inputs give `f32`).",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_to_float,
        Some(grad_sinc),
        |c| float_kernel(c, sinc),
    ),
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    let r = random_f64;
    let t = |shape: &[usize], v: &[f64]| {
        KValue::Tensor(Tensor::from_f64(shape.to_vec(), v.to_vec()).expect("sizes match"))
    };
    let mut out = vec![
        Sample::new("Floor", vec![t(&[2, 2], &[-1.5, 0.3, 2.7, -0.2])]),
        Sample::new("Ceil", vec![t(&[3], &[-1.5, 0.3, 2.7])]),
        Sample::new("Round", vec![t(&[4], &[-1.5, 0.5, 2.5, -0.7])]),
        Sample::new("Round", vec![t(&[3], &[1.2345, -2.5551, 0.05])])
            .attr("decimals", AttrValue::Int(2)),
        Sample::new("Round", vec![ints(DType::I32, &[2], &[3, -4])]),
        Sample::new("Rint", vec![t(&[4], &[-1.5, 0.5, 2.5, -0.7])]),
        Sample::new("Trunc", vec![t(&[3], &[-1.5, 0.3, 2.7])]),
        Sample::new("Trunc", vec![ints(DType::I8, &[2], &[-3, 4])]),
        Sample::new("Sign", vec![t(&[4], &[-1.5, 0.0, 2.7, -0.2])]),
        Sample::new("Sign", vec![ints(DType::I32, &[3], &[-3, 0, 9])]),
        Sample::new("Inv", vec![ints(DType::I32, &[4], &[-1, 1, 2, 0])]),
        Sample::new("IsNan", vec![t(&[3], &[f64::NAN, 1.0, f64::INFINITY])]),
        Sample::new("IsFinite", vec![t(&[3], &[f64::NAN, 1.0, f64::INFINITY])]),
        Sample::new("IsInf", vec![t(&[3], &[f64::NAN, 1.0, f64::NEG_INFINITY])]),
        Sample::new("IsNan", vec![ints(DType::I64, &[2], &[1, 2])]),
    ];
    let smooth: &[(&'static str, f64, f64)] = &[
        ("Reciprocal", 0.5, 2.0),
        ("Inv", -2.0, -0.5),
        ("Log1p", -0.5, 2.0),
        ("Expm1", -2.0, 2.0),
        ("Log2", 0.5, 3.0),
        ("Log10", 0.5, 3.0),
        ("Exp2", -2.0, 2.0),
        ("Erfc", -2.0, 3.0),
        ("Erfinv", -0.9, 0.9),
        ("Asin", -0.9, 0.9),
        ("ACos", -0.9, 0.9),
        ("Atan", -3.0, 3.0),
        ("Sinh", -2.0, 2.0),
        ("Cosh", -2.0, 2.0),
        ("Tan", -1.2, 1.2),
        ("Asinh", -3.0, 3.0),
        ("Acosh", 1.2, 3.0),
        ("Atanh", -0.9, 0.9),
        ("Sinc", -2.3, 2.3),
    ];
    for (k, &(op, lo, hi)) in smooth.iter().enumerate() {
        out.push(Sample::new(op, vec![r(&[2, 3], 300 + k as u64, lo, hi)]));
    }
    out.push(Sample::new("Sinc", vec![t(&[3], &[0.0, 0.5, -1.5])]));
    out
}
