//! Elementwise primitives: arithmetic, comparisons, logic, activations.
//!
//! Dtype rules, as in MindSpore 2.x:
//! - Binary arithmetic promotes its operands ([`promote`]: a literal scalar
//!   yields to the tensor's dtype); shapes broadcast with NumPy's rules.
//! - `RealDiv` keeps the promoted dtype, as MindSpore's: integers divide
//!   truncating toward zero (`x / 0` saturates to the dtype's maximum or
//!   minimum, 0 for `0 / 0`); two bool operands are an error. True division
//!   of integers is `Div` (`elementwise_ext`).
//! - `Exp Log Sqrt Rsqrt Sin Cos Tanh Sigmoid Erf` compute an integer or bool
//!   input in `f32` (MindSpore 2.3+ infers `float32` for integer inputs of
//!   these, e.g. `ExpFuncImpl`); `GeLU` needs a float input, as MindSpore's.
//! - Comparisons give `bool`; the logical primitives read operands of any
//!   dtype as bools (non-zero, and NaN, is true) and give `bool`.
//! - `Select` promotes `x` and `y` to one dtype.
//! - `Cast` from a float to an integer converts as x86 does in MindSpore's
//!   kernel: NaN, infinities and values out of range give the minimum of
//!   `i32` (of `i64` for `i64`), and narrower types take the low bits of the
//!   32-bit conversion ([`float_to_int`]).
//!
//! Numerics: `GeLU` is MindSpore's `ops.GeLU` kernel, the tanh form
//! `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))` with MindSpore's constant
//! 0.7978845608 for √(2/π) (its documented example gives
//! `GeLU([1, 2, 3]) = [0.841192, 1.9545976, 2.9963627]`); `Maximum`/`Minimum`
//! are `x > y ? x : y` / `x < y ? x : y` as MindSpore's CPU kernel, so a NaN
//! in `y` propagates and a NaN in `x` yields `y`; `Sigmoid` is evaluated
//! without overflow for large `|x|`. Integer `Pow` with `0` raised to a
//! negative power gives the minimum of `i32`/`i64` (0 for narrower types),
//! as MindSpore's kernel, which converts the infinite float result.
//!
//! Gradients are MindSpore's bprops built from registry primitives; integer and
//! bool inputs get none, and broadcast gradients are summed back with
//! `_SumToShapeOf`. `Maximum`/`Minimum` split the gradient of tied elements
//! evenly between `x` and `y` (MindSpore's `MaximumGrad`/`MinimumGrad`).

use std::borrow::Cow;

use ir::{AbsVal, AttrValue, DType};
use tensor::{Buffer, Tensor};

use crate::infer::{broadcast_shapes, infer_broadcast_binary, promote, result, InferCall, InferFn};
use crate::kernel::{broadcast_shape, broadcast_strides, KValue, KernelCall, KernelFn};
use crate::{
    AttrType, Category, GNode, GradBuilder, GradCall, GradFn, OpDef, OpError, OutputDef, ParamDef,
};

// ---------------------------------------------------------------------------
// Shared kernel helpers (also used by the reduction and linear-algebra files).

/// `t` in `dtype`, borrowed when it already is.
pub(crate) fn as_dtype(t: &Tensor, dtype: DType) -> Cow<'_, Tensor> {
    if t.dtype() == dtype {
        Cow::Borrowed(t)
    } else {
        Cow::Owned(t.cast(dtype))
    }
}

/// A tensor from a kernel's result buffer.
pub(crate) fn make_tensor(
    dtype: DType,
    shape: Vec<usize>,
    buffer: Buffer,
) -> Result<Tensor, OpError> {
    Tensor::new(dtype, shape, buffer).map_err(|e| OpError::call(e.0))
}

/// A float converted to the integer dtype `d` as MindSpore's CPU kernels do
/// it (C's conversion on x86): `i64` takes the 64-bit conversion, the other
/// integers the 32-bit one and then their low bits; NaN, infinities and
/// values out of range give the conversion's "integer indefinite", the
/// minimum of `i32`/`i64` (whose low bits are 0 for narrower types).
pub(crate) fn float_to_int(v: f64, d: DType) -> i64 {
    // 2^63 and 2^31: the conversions' ranges are [-2^k, 2^k).
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    const TWO_31: f64 = 2_147_483_648.0;
    if d == DType::I64 {
        if (-TWO_63..TWO_63).contains(&v) {
            v as i64
        } else {
            i64::MIN
        }
    } else {
        let w = if (-TWO_31..TWO_31).contains(&v) {
            v as i64
        } else {
            i32::MIN as i64
        };
        d.wrap_int(w)
    }
}

/// The dtype a float-valued function computes an input of dtype `d` in.
pub(crate) fn float_of(d: DType) -> DType {
    if d.is_float() {
        d
    } else {
        DType::F32
    }
}

/// Applies `f` elementwise to `a` (shape `sa`) and `b` (shape `sb`) broadcast
/// to `out`. Equal shapes and scalar operands take straight loops; otherwise
/// dimensions are coalesced and the innermost one runs as a contiguous loop.
pub(crate) fn map2<T: Copy, U>(
    a: &[T],
    sa: &[usize],
    b: &[T],
    sb: &[usize],
    out: &[usize],
    f: impl Fn(T, T) -> U,
) -> Vec<U> {
    let n: usize = out.iter().product();
    let mut r = Vec::with_capacity(n);
    if n == 0 {
        return r;
    }
    // An operand with as many elements as the result is laid out like it.
    if a.len() == n && b.len() == n {
        r.extend(a.iter().zip(b).map(|(&x, &y)| f(x, y)));
        return r;
    }
    if a.len() == n && b.len() == 1 {
        let y = b[0];
        r.extend(a.iter().map(|&x| f(x, y)));
        return r;
    }
    if a.len() == 1 && b.len() == n {
        let x = a[0];
        r.extend(b.iter().map(|&y| f(x, y)));
        return r;
    }
    let ta = broadcast_strides(sa, out);
    let tb = broadcast_strides(sb, out);
    // (size, stride in a, stride in b), size-1 dimensions dropped and
    // neighbours merged where both operands are contiguous across them.
    let mut dims: Vec<(usize, usize, usize)> = Vec::with_capacity(out.len());
    for i in 0..out.len() {
        if out[i] == 1 {
            continue;
        }
        if let Some(last) = dims.last_mut() {
            if last.1 == ta[i] * out[i] && last.2 == tb[i] * out[i] {
                *last = (last.0 * out[i], ta[i], tb[i]);
                continue;
            }
        }
        dims.push((out[i], ta[i], tb[i]));
    }
    let (inner, ia, ib) = dims.pop().expect("n > 1 has a dimension above 1");
    let mut index = vec![0usize; dims.len()];
    let (mut oa, mut ob) = (0usize, 0usize);
    for _ in 0..n / inner {
        match (ia, ib) {
            (1, 1) => r.extend(
                a[oa..oa + inner]
                    .iter()
                    .zip(&b[ob..ob + inner])
                    .map(|(&x, &y)| f(x, y)),
            ),
            (1, 0) => {
                let y = b[ob];
                r.extend(a[oa..oa + inner].iter().map(|&x| f(x, y)));
            }
            (0, 1) => {
                let x = a[oa];
                r.extend(b[ob..ob + inner].iter().map(|&y| f(x, y)));
            }
            _ => r.extend((0..inner).map(|k| f(a[oa + k * ia], b[ob + k * ib]))),
        }
        for d in (0..dims.len()).rev() {
            index[d] += 1;
            oa += dims[d].1;
            ob += dims[d].2;
            if index[d] < dims[d].0 {
                break;
            }
            oa -= dims[d].1 * dims[d].0;
            ob -= dims[d].2 * dims[d].0;
            index[d] = 0;
        }
    }
    r
}

fn broadcast_error(a: &Tensor, b: &Tensor) -> OpError {
    OpError::call(format!(
        "shapes {:?} and {:?} cannot be broadcast",
        a.shape(),
        b.shape()
    ))
}

/// A binary kernel over the four storage kinds. Bool results are computed in
/// `i64` and converted back (non-zero is `true`).
fn numeric_binary(
    c: &KernelCall,
    dtype: DType,
    ff32: impl Fn(f32, f32) -> f32,
    ff64: impl Fn(f64, f64) -> f64,
    fi64: impl Fn(i64, i64) -> i64,
) -> Result<KValue, OpError> {
    let (a, b) = (c.tensor(0)?, c.tensor(1)?);
    let out = broadcast_shape(a.shape(), b.shape()).ok_or_else(|| broadcast_error(a, b))?;
    let work = if dtype.is_bool() { DType::I64 } else { dtype };
    let (x, y) = (as_dtype(a, work), as_dtype(b, work));
    let (sa, sb) = (a.shape(), b.shape());
    let buffer = match (x.buffer(), y.buffer()) {
        (Buffer::F32(p), Buffer::F32(q)) => Buffer::F32(map2(p, sa, q, sb, &out, ff32)),
        (Buffer::F64(p), Buffer::F64(q)) => Buffer::F64(map2(p, sa, q, sb, &out, ff64)),
        (Buffer::I64(p), Buffer::I64(q)) => Buffer::I64(map2(p, sa, q, sb, &out, fi64)),
        _ => unreachable!("both operands were cast to {work}"),
    };
    let t = make_tensor(work, out, buffer)?;
    Ok(KValue::Tensor(if work == dtype {
        t
    } else {
        t.cast(dtype)
    }))
}

/// `numeric!(call, dtype, |a, b| float expression, int expression)`: one
/// expression for f32 and f64 (the same source, typed twice), one for i64.
macro_rules! numeric {
    ($c:expr, $dtype:expr, |$a:ident, $b:ident| $float:expr, $int:expr) => {
        numeric_binary(
            $c,
            $dtype,
            |$a: f32, $b: f32| $float,
            |$a: f64, $b: f64| $float,
            |$a: i64, $b: i64| $int,
        )
    };
}

/// A float-valued function of one input; integer and bool inputs are computed in `f32`.
fn float_unary(
    c: &KernelCall,
    ff32: impl Fn(f32) -> f32,
    ff64: impl Fn(f64) -> f64,
) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let dtype = float_of(x.dtype());
    let v = as_dtype(x, dtype);
    let buffer = match v.buffer() {
        Buffer::F32(p) => Buffer::F32(p.iter().map(|&e| ff32(e)).collect()),
        Buffer::F64(p) => Buffer::F64(p.iter().map(|&e| ff64(e)).collect()),
        _ => unreachable!("cast to {dtype}"),
    };
    Ok(KValue::Tensor(make_tensor(
        dtype,
        x.shape().to_vec(),
        buffer,
    )?))
}

macro_rules! float_unary {
    ($c:expr, |$x:ident| $body:expr) => {
        float_unary($c, |$x: f32| $body, |$x: f64| $body)
    };
}

/// A function of one numeric input that keeps its dtype.
fn numeric_unary(
    c: &KernelCall,
    ff32: impl Fn(f32) -> f32,
    ff64: impl Fn(f64) -> f64,
    fi64: impl Fn(i64) -> i64,
) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let buffer = match x.buffer() {
        Buffer::F32(p) => Buffer::F32(p.iter().map(|&e| ff32(e)).collect()),
        Buffer::F64(p) => Buffer::F64(p.iter().map(|&e| ff64(e)).collect()),
        Buffer::I64(p) => Buffer::I64(p.iter().map(|&e| fi64(e)).collect()),
        Buffer::Bool(_) => {
            return Err(OpError::input(0, "a bool tensor has no numeric value here"))
        }
    };
    Ok(KValue::Tensor(make_tensor(
        x.dtype(),
        x.shape().to_vec(),
        buffer,
    )?))
}

macro_rules! numeric_unary {
    ($c:expr, |$x:ident| $float:expr, $int:expr) => {
        numeric_unary($c, |$x: f32| $float, |$x: f64| $float, |$x: i64| $int)
    };
}

#[derive(Debug, Clone, Copy)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

fn compare<T: Copy + PartialOrd>(
    a: &[T],
    sa: &[usize],
    b: &[T],
    sb: &[usize],
    out: &[usize],
    cmp: Cmp,
) -> Vec<bool> {
    match cmp {
        Cmp::Eq => map2(a, sa, b, sb, out, |x, y| x == y),
        Cmp::Ne => map2(a, sa, b, sb, out, |x, y| x != y),
        Cmp::Lt => map2(a, sa, b, sb, out, |x, y| x < y),
        Cmp::Le => map2(a, sa, b, sb, out, |x, y| x <= y),
        Cmp::Gt => map2(a, sa, b, sb, out, |x, y| x > y),
        Cmp::Ge => map2(a, sa, b, sb, out, |x, y| x >= y),
    }
}

fn compare_kernel(c: &KernelCall, cmp: Cmp) -> Result<KValue, OpError> {
    let (a, b) = (c.tensor(0)?, c.tensor(1)?);
    let out = broadcast_shape(a.shape(), b.shape()).ok_or_else(|| broadcast_error(a, b))?;
    let dtype = c.promoted();
    let (x, y) = (as_dtype(a, dtype), as_dtype(b, dtype));
    let (sa, sb) = (a.shape(), b.shape());
    let r = match (x.buffer(), y.buffer()) {
        (Buffer::F32(p), Buffer::F32(q)) => compare(p, sa, q, sb, &out, cmp),
        (Buffer::F64(p), Buffer::F64(q)) => compare(p, sa, q, sb, &out, cmp),
        (Buffer::I64(p), Buffer::I64(q)) => compare(p, sa, q, sb, &out, cmp),
        (Buffer::Bool(p), Buffer::Bool(q)) => compare(p, sa, q, sb, &out, cmp),
        _ => unreachable!("both operands were cast to {dtype}"),
    };
    Ok(KValue::Tensor(make_tensor(
        DType::Bool,
        out,
        Buffer::Bool(r),
    )?))
}

fn logical_kernel(c: &KernelCall, f: impl Fn(bool, bool) -> bool) -> Result<KValue, OpError> {
    let (a, b) = (c.tensor(0)?, c.tensor(1)?);
    let out = broadcast_shape(a.shape(), b.shape()).ok_or_else(|| broadcast_error(a, b))?;
    let (x, y) = (as_dtype(a, DType::Bool), as_dtype(b, DType::Bool));
    let (Buffer::Bool(p), Buffer::Bool(q)) = (x.buffer(), y.buffer()) else {
        unreachable!("cast to bool")
    };
    let r = map2(p, a.shape(), q, b.shape(), &out, f);
    Ok(KValue::Tensor(make_tensor(
        DType::Bool,
        out,
        Buffer::Bool(r),
    )?))
}

/// `cond ? x : y` elementwise, all three broadcast to `out`.
fn select_data<T: Copy>(
    cond: &[bool],
    sc: &[usize],
    x: &[T],
    sx: &[usize],
    y: &[T],
    sy: &[usize],
    out: &[usize],
) -> Vec<T> {
    let n: usize = out.iter().product();
    if cond.len() == n && x.len() == n && y.len() == n {
        return cond
            .iter()
            .zip(x.iter().zip(y))
            .map(|(&c, (&a, &b))| [b, a][usize::from(c)])
            .collect();
    }
    let (tc, tx, ty) = (
        broadcast_strides(sc, out),
        broadcast_strides(sx, out),
        broadcast_strides(sy, out),
    );
    let mut r = Vec::with_capacity(n);
    let mut index = vec![0usize; out.len()];
    let (mut oc, mut ox, mut oy) = (0usize, 0usize, 0usize);
    for _ in 0..n {
        r.push(if cond[oc] { x[ox] } else { y[oy] });
        for d in (0..out.len()).rev() {
            index[d] += 1;
            oc += tc[d];
            ox += tx[d];
            oy += ty[d];
            if index[d] < out[d] {
                break;
            }
            oc -= tc[d] * out[d];
            ox -= tx[d] * out[d];
            oy -= ty[d] * out[d];
            index[d] = 0;
        }
    }
    r
}

fn select_kernel(c: &KernelCall) -> Result<KValue, OpError> {
    let (cond, a, b) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let out = broadcast_shape(cond.shape(), a.shape())
        .and_then(|s| broadcast_shape(&s, b.shape()))
        .ok_or_else(|| {
            OpError::call(format!(
                "shapes {:?}, {:?} and {:?} cannot be broadcast",
                cond.shape(),
                a.shape(),
                b.shape()
            ))
        })?;
    let dtype = promote(&c.abs(1), &c.abs(2)).unwrap_or(a.dtype());
    let cond_b = as_dtype(cond, DType::Bool);
    let Buffer::Bool(m) = cond_b.buffer() else {
        unreachable!("cast to bool")
    };
    let (x, y) = (as_dtype(a, dtype), as_dtype(b, dtype));
    let (sc, sx, sy) = (cond.shape(), a.shape(), b.shape());
    let buffer = match (x.buffer(), y.buffer()) {
        (Buffer::F32(p), Buffer::F32(q)) => Buffer::F32(select_data(m, sc, p, sx, q, sy, &out)),
        (Buffer::F64(p), Buffer::F64(q)) => Buffer::F64(select_data(m, sc, p, sx, q, sy, &out)),
        (Buffer::I64(p), Buffer::I64(q)) => Buffer::I64(select_data(m, sc, p, sx, q, sy, &out)),
        (Buffer::Bool(p), Buffer::Bool(q)) => Buffer::Bool(select_data(m, sc, p, sx, q, sy, &out)),
        _ => unreachable!("both operands were cast to {dtype}"),
    };
    Ok(KValue::Tensor(make_tensor(dtype, out, buffer)?))
}

// ---------------------------------------------------------------------------
// Scalar functions.

/// The error function, to about 1e-15 absolute over the whole line (checked
/// against tabulated values in the tests).
///
/// For `|x| < 2.5` the series `erf(x) = 2/√π · e^{-x²} · Σ_{n≥0} 2ⁿ x^{2n+1} / (2n+1)!!`
/// (Abramowitz & Stegun 7.1.6), whose terms are all positive, so it loses no
/// accuracy to cancellation (at most 38 terms); for `|x| ≥ 2.5` the continued
/// fraction `erfc(x) = e^{-x²}/√π · 1/(x + ½/(x + 1/(x + 3/2/(x + …))))`
/// (A&S 7.1.14), evaluated bottom-up with 36 levels, which leaves an absolute
/// error below 1e-18 there; beyond `|x| = 6`, `erf(x) = ±1` in f64.
pub fn erf(x: f64) -> f64 {
    erf_to(x, 1e-17, 36)
}

/// `erf` to the accuracy an `f32` result needs (relative 1e-9).
pub fn erf_f32(x: f32) -> f32 {
    erf_to(x as f64, 1e-9, 12) as f32
}

/// `2 / (2n + 3)`: the ratio of successive terms of the series is `x²` times this.
const ERF_STEPS: [f64; 48] = {
    let mut t = [0.0; 48];
    let mut n = 0;
    while n < 48 {
        t[n] = 2.0 / (2.0 * n as f64 + 3.0);
        n += 1;
    }
    t
};

/// `erf(x)`, summing the series until a term is below `tol` of the sum, or
/// with `levels` levels of the continued fraction.
fn erf_to(x: f64, tol: f64, levels: usize) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    let r = if a < 2.5 {
        let x2 = a * a;
        let mut term = a;
        let mut sum = a;
        for &k in &ERF_STEPS {
            term *= x2 * k;
            sum += term;
            if term <= sum * tol {
                break;
            }
        }
        std::f64::consts::FRAC_2_SQRT_PI * (-x2).exp() * sum
    } else if a < 6.0 {
        let mut t = a;
        for k in (1..=levels).rev() {
            t = a + (k as f64 * 0.5) / t;
        }
        1.0 - (-a * a).exp() / (t * std::f64::consts::PI.sqrt())
    } else {
        1.0
    };
    r.copysign(x)
}

/// `tanh` for `f32`: an odd Taylor polynomial below |x| = 0.625 (truncation
/// error under 6e-8 relative), `1 - 2/(e^{2|x|} + 1)` above, where there is no
/// cancellation; within a few ulps of the correctly rounded value. Both forms
/// are computed and one selected, so the loop has no unpredictable branch.
#[inline]
pub fn tanh_f32(x: f32) -> f32 {
    let a = x.abs();
    let z = x * x;
    let p = -1.0 / 3.0
        + z * (2.0 / 15.0
            + z * (-17.0 / 315.0
                + z * (62.0 / 2835.0
                    + z * (-1382.0 / 155925.0
                        + z * (21844.0 / 6081075.0
                            + z * (-929569.0 / 638512875.0 + z * (6404582.0 / 10854718875.0)))))));
    let small = x + x * z * p;
    // Past |x| = 9.1 the result rounds to 1; `min` keeps `exp` finite.
    let large = (1.0 - 2.0 / (exp_small_f32(2.0 * a.min(10.0)) + 1.0)).copysign(x);
    if a < 0.625 || a.is_nan() {
        small
    } else {
        large
    }
}

/// `e^t` for `t` in `[0, 20]` (and, by the same reduction, any `t` whose
/// result is a normal `f32`), in plain arithmetic so loops over it
/// vectorise (libm's `expf` is a call per element): `t = k·ln 2 + r` with
/// `|r| ≤ ln 2 / 2` (`ln 2` in two parts, so `r` is exact to a few ulps),
/// a degree-7 Taylor polynomial for `e^r` (truncation under 6e-9 relative),
/// and `2^k` made from its bits. Within about an ulp of `expf` there.
#[inline(always)]
fn exp_small_f32(t: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    // Round to nearest by the 1.5·2^23 trick (no `round` call): the sum's low
    // mantissa bits are `k` itself, so no float-to-int conversion either
    // (Rust's saturating `as` keeps the loop from vectorising).
    const MAGIC: f32 = 12_582_912.0;
    let shifted = t * LOG2E + MAGIC;
    let k = shifted - MAGIC;
    let ki = shifted.to_bits().wrapping_sub(MAGIC.to_bits());
    let r = (t - k * LN2_HI) - k * LN2_LO;
    let q = 1.0 / 2.0
        + r * (1.0 / 6.0
            + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))));
    let er = 1.0 + (r + r * r * q);
    er * f32::from_bits(ki.wrapping_add(127) << 23)
}

/// `e^t` for any `f32`, vectorisable (see [`exp_small_f32`]): within about
/// an ulp of `expf` for normal results; results below the smallest normal
/// (`t < -87.33`) are 0 rather than subnormal, above `f32::MAX` infinity.
#[inline]
pub fn exp_f32(t: f32) -> f32 {
    let e = exp_small_f32(t.clamp(-87.33, 88.72));
    if t > 88.72 {
        f32::INFINITY
    } else if t < -87.33 {
        0.0
    } else if t.is_nan() {
        t
    } else {
        e
    }
}

/// `√(2/π)` as MindSpore's GeLU kernel spells it (to 10 digits; its f64
/// results differ from the exact constant's by about 4e-12).
const GELU_C: f64 = 0.797_884_560_8;
const GELU_A: f64 = 0.044715;

/// `a^b` for integers of dtype `d`, wrapping; a negative exponent gives
/// `1/a^|b|` truncated, and `0` to a negative power the conversion of
/// infinity (see [`float_to_int`]).
/// Integer `Pow` as MindSpore 2.10's CPU kernel computes it: in `f64`, then
/// converted back (so a result beyond the dtype is its smallest value, not a
/// wrapped one: `3 ** 100` in `i64` is -9223372036854775808, and results
/// beyond 2^53 are rounded as `f64` rounds them; `2 ** -1` is 0, `0 ** -1` the
/// smallest value).
fn ipow(a: i64, b: i64, d: DType) -> i64 {
    float_to_int((a as f64).powf(b as f64), d)
}

// ---------------------------------------------------------------------------
// Shape rules.

const XY: &[ParamDef] = &[
    ParamDef::input("x", "The first operand: a tensor or a scalar."),
    ParamDef::input(
        "y",
        "The second operand, broadcast against `x` (NumPy rules).",
    ),
];

const BOOL_XY: &[ParamDef] = &[
    ParamDef::input("x", "The first operand, read as bools (non-zero is true)."),
    ParamDef::input(
        "y",
        "The second operand, read as bools, broadcast against `x`.",
    ),
];

const X: &[ParamDef] = &[ParamDef::input("x", "The input tensor.")];

const SELECT_PARAMS: &[ParamDef] = &[
    ParamDef::input(
        "cond",
        "A bool tensor: where it is true the result takes `x`, elsewhere `y`.",
    ),
    ParamDef::input("x", "The values taken where `cond` is true."),
    ParamDef::input(
        "y",
        "The values taken where `cond` is false; the same dtype as `x`.",
    ),
];

const CAST_PARAMS: &[ParamDef] = &[
    ParamDef::input("x", "The tensor or scalar to convert."),
    ParamDef::attr(
        "dtype",
        AttrType::DType,
        None,
        "The dtype of the result (`f32`, `i64`, `bool`, ...).",
    ),
];

fn infer_arith(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_broadcast_binary(call, None)
}

fn with_dtype(v: AbsVal, f: impl Fn(DType) -> DType) -> AbsVal {
    match v {
        AbsVal::Tensor { dtype, shape } => AbsVal::Tensor {
            dtype: f(dtype),
            shape,
        },
        AbsVal::Scalar { dtype, value, weak } => AbsVal::Scalar {
            dtype: f(dtype),
            value,
            weak,
        },
        other => other,
    }
}

fn infer_real_div(call: &InferCall) -> Result<AbsVal, OpError> {
    let v = infer_broadcast_binary(call, None)?;
    if v.dtype().is_some_and(DType::is_bool) {
        return Err(OpError::input(
            0,
            format!(
                "`RealDiv` needs a numeric operand, but `x` is {} and `y` is {}",
                call.inputs[0], call.inputs[1]
            ),
        )
        .with_note("`Div` divides bools (giving `f32`)"));
    }
    Ok(v)
}

fn infer_compare(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_broadcast_binary(call, Some(DType::Bool))
}

fn infer_logical(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_broadcast_binary(call, Some(DType::Bool))
}

fn infer_logical_not(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    call.tensor(0)?;
    Ok(with_dtype(call.inputs[0].widen(), |_| DType::Bool))
}

/// The input unchanged in dtype and shape.
pub(crate) fn infer_same(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    call.tensor(0)?;
    Ok(call.inputs[0].widen())
}

/// A numeric (not bool) input, unchanged in dtype and shape.
fn infer_numeric_unary(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (d, _) = call.tensor(0)?;
    if d.is_bool() {
        return Err(OpError::input(
            0,
            format!(
                "`{}` needs a numeric operand, but `x` is {}",
                call.op.name, call.inputs[0]
            ),
        ));
    }
    Ok(call.inputs[0].widen())
}

/// A float-valued function: integer and bool inputs give `f32`.
fn infer_float_unary(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    call.tensor(0)?;
    Ok(with_dtype(call.inputs[0].widen(), float_of))
}

fn infer_float_only(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (d, _) = call.tensor(0)?;
    if !d.is_float() {
        return Err(OpError::input(
            0,
            format!(
                "`{}` needs a float operand (f16, bf16, f32 or f64), but `x` is {}",
                call.op.name, call.inputs[0]
            ),
        )
        .with_note("`Cast` it to a float dtype first"));
    }
    Ok(call.inputs[0].widen())
}

fn infer_select(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dc, sc) = call.tensor(0)?;
    let (dx, sx) = call.tensor(1)?;
    let (dy, sy) = call.tensor(2)?;
    if !dc.is_bool() {
        return Err(OpError::input(
            0,
            format!("`Select` needs a bool `cond`, but it is {}", call.inputs[0]),
        ));
    }
    let (x, y) = (&call.inputs[1], &call.inputs[2]);
    // MindSpore promotes the two (an i32 `x` with an f32 `y` gives f32).
    let dtype = promote(x, y).unwrap_or(if dx == dy { dx } else { dy });
    let shape = broadcast_shapes(&sc, &sx)
        .and_then(|s| broadcast_shapes(&s, &sy))
        .map_err(|m| {
            OpError::call(format!("`Select`: {m}"))
                .with_note(format!("`cond` is {}", call.inputs[0]))
                .with_note(format!("`x` is {x}"))
                .with_note(format!("`y` is {y}"))
        })?;
    Ok(result(call.inputs, dtype, shape))
}

fn infer_cast(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (_, shape) = call.tensor(0)?;
    let dtype = call.attrs.dtype("dtype");
    Ok(match call.inputs[0] {
        AbsVal::Scalar { .. } => AbsVal::scalar(dtype),
        _ => AbsVal::Tensor { dtype, shape },
    })
}

// ---------------------------------------------------------------------------
// Gradient rules.

type Grads = Vec<Option<GNode>>;

/// Whether input `i` can have a gradient (a float, or unknown).
pub(crate) fn is_float_input(c: &GradCall, i: usize) -> bool {
    c.input_values
        .get(i)
        .and_then(AbsVal::dtype)
        .is_none_or(DType::is_float)
}

fn prim(b: &mut dyn GradBuilder, name: &str, inputs: &[GNode]) -> GNode {
    b.prim(name, inputs, vec![])
}

/// The gradient of input `i` of a broadcasting primitive: `f` builds it in the
/// result's shape, and it is summed back to the input's.
fn binary_grad(
    b: &mut dyn GradBuilder,
    c: &GradCall,
    i: usize,
    f: impl FnOnce(&mut dyn GradBuilder) -> GNode,
) -> Option<GNode> {
    if !is_float_input(c, i) {
        return None;
    }
    let g = f(&mut *b);
    Some(prim(b, "_SumToShapeOf", &[g, c.inputs[i]]))
}

fn unary_grad(
    b: &mut dyn GradBuilder,
    c: &GradCall,
    f: impl FnOnce(&mut dyn GradBuilder) -> GNode,
) -> Grads {
    vec![is_float_input(c, 0).then(|| f(b))]
}

fn grad_add(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    vec![
        binary_grad(b, c, 0, |_| c.dout),
        binary_grad(b, c, 1, |_| c.dout),
    ]
}

fn grad_sub(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    vec![
        binary_grad(b, c, 0, |_| c.dout),
        binary_grad(b, c, 1, |b| prim(b, "Neg", &[c.dout])),
    ]
}

fn grad_mul(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    vec![
        binary_grad(b, c, 0, |b| prim(b, "Mul", &[c.dout, c.inputs[1]])),
        binary_grad(b, c, 1, |b| prim(b, "Mul", &[c.dout, c.inputs[0]])),
    ]
}

fn grad_real_div(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // bc_x = dout / y; dx = bc_x; dy = -bc_x * out.
    if !is_float_input(c, 0) && !is_float_input(c, 1) {
        return vec![None, None];
    }
    let bc_x = prim(b, "RealDiv", &[c.dout, c.inputs[1]]);
    vec![
        binary_grad(b, c, 0, |_| bc_x),
        binary_grad(b, c, 1, |b| {
            let t = prim(b, "Mul", &[bc_x, c.out]);
            prim(b, "Neg", &[t])
        }),
    ]
}

fn grad_pow(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // MindSpore: dx = power · x^(power-1) · dout;
    // dpower = out · log(x < 0 ? 1 : x) · dout.
    let (x, p) = (c.inputs[0], c.inputs[1]);
    vec![
        binary_grad(b, c, 0, |b| {
            let one = b.scalar(1.0);
            let pm1 = prim(b, "Sub", &[p, one]);
            let xp = prim(b, "Pow", &[x, pm1]);
            let t = prim(b, "Mul", &[p, xp]);
            prim(b, "Mul", &[t, c.dout])
        }),
        binary_grad(b, c, 1, |b| {
            let zero = b.scalar(0.0);
            let negative = prim(b, "Less", &[x, zero]);
            let ones = prim(b, "OnesLike", &[x]);
            let safe = prim(b, "Select", &[negative, ones, x]);
            let log = prim(b, "Log", &[safe]);
            let t = prim(b, "Mul", &[c.out, log]);
            prim(b, "Mul", &[t, c.dout])
        }),
    ]
}

/// MindSpore's `MinimumMaximumGrad`: the gradient goes to the operand the result
/// came from, split in half between tied operands.
fn min_max_grad(b: &mut dyn GradBuilder, c: &GradCall, is_max: bool) -> Grads {
    if !is_float_input(c, 0) && !is_float_input(c, 1) {
        return vec![None, None];
    }
    let (x, y) = (c.inputs[0], c.inputs[1]);
    let half = b.scalar(0.5);
    let half_dout = prim(b, "Mul", &[c.dout, half]);
    let tie = prim(b, "Equal", &[x, y]);
    let dout_sel = prim(b, "Select", &[tie, half_dout, c.dout]);
    let zeros = prim(b, "ZerosLike", &[c.dout]);
    let (x_loses, y_loses) = if is_max {
        ("Less", "Greater")
    } else {
        ("Greater", "Less")
    };
    vec![
        binary_grad(b, c, 0, |b| {
            let m = prim(b, x_loses, &[x, y]);
            prim(b, "Select", &[m, zeros, dout_sel])
        }),
        binary_grad(b, c, 1, |b| {
            let m = prim(b, y_loses, &[x, y]);
            prim(b, "Select", &[m, zeros, dout_sel])
        }),
    ]
}

fn grad_maximum(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    min_max_grad(b, c, true)
}

fn grad_minimum(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    min_max_grad(b, c, false)
}

fn grad_neg(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    unary_grad(b, c, |b| prim(b, "Neg", &[c.dout]))
}

fn grad_exp(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    unary_grad(b, c, |b| prim(b, "Mul", &[c.dout, c.out]))
}

fn grad_log(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    unary_grad(b, c, |b| prim(b, "RealDiv", &[c.dout, c.inputs[0]]))
}

fn grad_sqrt(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // SqrtGrad: dout / (2 · out).
    unary_grad(b, c, |b| {
        let two = b.scalar(2.0);
        let t = prim(b, "Mul", &[c.out, two]);
        prim(b, "RealDiv", &[c.dout, t])
    })
}

fn grad_rsqrt(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // RsqrtGrad: dout · (-0.5) · out³.
    unary_grad(b, c, |b| {
        let sq = prim(b, "Square", &[c.out]);
        let cube = prim(b, "Mul", &[sq, c.out]);
        let k = b.scalar(-0.5);
        let t = prim(b, "Mul", &[cube, k]);
        prim(b, "Mul", &[c.dout, t])
    })
}

fn grad_square(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    unary_grad(b, c, |b| {
        let two = b.scalar(2.0);
        let t = prim(b, "Mul", &[c.inputs[0], two]);
        prim(b, "Mul", &[c.dout, t])
    })
}

fn grad_abs(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // AbsGrad: dout · sign(x), with sign(0) = 0.
    unary_grad(b, c, |b| {
        let x = c.inputs[0];
        let zero = b.scalar(0.0);
        let zeros = prim(b, "ZerosLike", &[c.dout]);
        let positive = prim(b, "Greater", &[x, zero]);
        let pos = prim(b, "Select", &[positive, c.dout, zeros]);
        let negative = prim(b, "Less", &[x, zero]);
        let neg_dout = prim(b, "Neg", &[c.dout]);
        prim(b, "Select", &[negative, neg_dout, pos])
    })
}

fn grad_sin(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    unary_grad(b, c, |b| {
        let cos = prim(b, "Cos", &[c.inputs[0]]);
        prim(b, "Mul", &[c.dout, cos])
    })
}

fn grad_cos(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    unary_grad(b, c, |b| {
        let sin = prim(b, "Sin", &[c.inputs[0]]);
        let t = prim(b, "Mul", &[c.dout, sin]);
        prim(b, "Neg", &[t])
    })
}

fn grad_tanh(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // TanhGrad: dout · (1 - out²).
    unary_grad(b, c, |b| {
        let one = b.scalar(1.0);
        let sq = prim(b, "Square", &[c.out]);
        let t = prim(b, "Sub", &[one, sq]);
        prim(b, "Mul", &[c.dout, t])
    })
}

fn grad_sigmoid(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // SigmoidGrad: dout · out · (1 - out).
    unary_grad(b, c, |b| {
        let one = b.scalar(1.0);
        let rest = prim(b, "Sub", &[one, c.out]);
        let t = prim(b, "Mul", &[c.out, rest]);
        prim(b, "Mul", &[c.dout, t])
    })
}

fn grad_relu(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // ReluGrad: dout where the output is positive.
    unary_grad(b, c, |b| {
        let zero = b.scalar(0.0);
        let mask = prim(b, "Greater", &[c.out, zero]);
        let zeros = prim(b, "ZerosLike", &[c.dout]);
        prim(b, "Select", &[mask, c.dout, zeros])
    })
}

fn grad_gelu(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // GeLUGrad of the tanh form: with u = c·(x + a·x³) and t = tanh(u),
    // d/dx = 0.5·(1 + t) + 0.5·c·x·(1 - t²)·(1 + 3a·x²).
    unary_grad(b, c, |b| {
        let x = c.inputs[0];
        let x2 = prim(b, "Square", &[x]);
        let x3 = prim(b, "Mul", &[x2, x]);
        let a = b.scalar(GELU_A);
        let ax3 = prim(b, "Mul", &[x3, a]);
        let inner = prim(b, "Add", &[x, ax3]);
        let k = b.scalar(GELU_C);
        let u = prim(b, "Mul", &[inner, k]);
        let t = prim(b, "Tanh", &[u]);
        let one = b.scalar(1.0);
        let one_t = prim(b, "Add", &[t, one]);
        let half = b.scalar(0.5);
        let left = prim(b, "Mul", &[one_t, half]);
        let t2 = prim(b, "Square", &[t]);
        let one2 = b.scalar(1.0);
        let sech2 = prim(b, "Sub", &[one2, t2]);
        let xs = prim(b, "Mul", &[x, sech2]);
        let hk = b.scalar(0.5 * GELU_C);
        let xsk = prim(b, "Mul", &[xs, hk]);
        let a3 = b.scalar(3.0 * GELU_A);
        let a3x2 = prim(b, "Mul", &[x2, a3]);
        let one3 = b.scalar(1.0);
        let poly = prim(b, "Add", &[a3x2, one3]);
        let right = prim(b, "Mul", &[xsk, poly]);
        let d = prim(b, "Add", &[left, right]);
        prim(b, "Mul", &[c.dout, d])
    })
}

fn grad_erf(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // dout · 2/√π · exp(-x²).
    unary_grad(b, c, |b| {
        let sq = prim(b, "Square", &[c.inputs[0]]);
        let neg = prim(b, "Neg", &[sq]);
        let e = prim(b, "Exp", &[neg]);
        let k = b.scalar(std::f64::consts::FRAC_2_SQRT_PI);
        let t = prim(b, "Mul", &[e, k]);
        prim(b, "Mul", &[c.dout, t])
    })
}

fn grad_select(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    if !is_float_input(c, 1) && !is_float_input(c, 2) {
        return vec![None, None, None];
    }
    let cond = c.inputs[0];
    let zeros = prim(b, "ZerosLike", &[c.dout]);
    vec![
        None,
        binary_grad(b, c, 1, |b| prim(b, "Select", &[cond, c.dout, zeros])),
        binary_grad(b, c, 2, |b| prim(b, "Select", &[cond, zeros, c.dout])),
    ]
}

fn grad_cast(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // The sensitivity cast back to the input's dtype; none between a float
    // and an integer or bool.
    if !c.attrs.dtype("dtype").is_float() {
        return vec![None];
    }
    match c.input_values.first().and_then(AbsVal::dtype) {
        Some(src) if src.is_float() => vec![Some(b.prim(
            "Cast",
            &[c.dout],
            vec![("dtype", AttrValue::DType(src))],
        ))],
        Some(_) => vec![None],
        // Not known here (a value the analysis could not follow): decided
        // when it runs, never silently none.
        None => vec![Some(b.prim("_CastLike", &[c.dout, c.inputs[0]], vec![]))],
    }
}

// ---------------------------------------------------------------------------
// Kernels.

fn k_add(c: &KernelCall) -> Result<KValue, OpError> {
    numeric!(c, c.promoted(), |a, b| a + b, a.wrapping_add(b))
}

fn k_sub(c: &KernelCall) -> Result<KValue, OpError> {
    numeric!(c, c.promoted(), |a, b| a - b, a.wrapping_sub(b))
}

fn k_mul(c: &KernelCall) -> Result<KValue, OpError> {
    numeric!(c, c.promoted(), |a, b| a * b, a.wrapping_mul(b))
}

fn k_real_div(c: &KernelCall) -> Result<KValue, OpError> {
    let d = c.promoted();
    numeric!(c, d, |a, b| a / b, {
        if b == 0 {
            crate::defs::elementwise_ext::int_div_by_zero(a, d)
        } else {
            a.wrapping_div(b)
        }
    })
}

fn k_pow(c: &KernelCall) -> Result<KValue, OpError> {
    let d = c.promoted();
    numeric!(c, d, |a, b| a.powf(b), ipow(a, b, d))
}

fn k_maximum(c: &KernelCall) -> Result<KValue, OpError> {
    numeric!(c, c.promoted(), |a, b| if a > b { a } else { b }, a.max(b))
}

fn k_minimum(c: &KernelCall) -> Result<KValue, OpError> {
    numeric!(c, c.promoted(), |a, b| if a < b { a } else { b }, a.min(b))
}

fn k_neg(c: &KernelCall) -> Result<KValue, OpError> {
    numeric_unary!(c, |x| -x, x.wrapping_neg())
}

/// A bool input, returned unchanged (`Abs` and `ReLU` of a bool are the
/// identity in MindSpore).
fn bool_identity(c: &KernelCall) -> Result<Option<KValue>, OpError> {
    let x = c.tensor(0)?;
    Ok(x.dtype().is_bool().then(|| KValue::Tensor(x.clone())))
}

fn k_abs(c: &KernelCall) -> Result<KValue, OpError> {
    if let Some(v) = bool_identity(c)? {
        return Ok(v);
    }
    numeric_unary!(c, |x| x.abs(), x.wrapping_abs())
}

fn k_square(c: &KernelCall) -> Result<KValue, OpError> {
    numeric_unary!(c, |x| x * x, x.wrapping_mul(x))
}

fn k_relu(c: &KernelCall) -> Result<KValue, OpError> {
    if let Some(v) = bool_identity(c)? {
        return Ok(v);
    }
    numeric_unary!(c, |x| if x > 0.0 { x } else { 0.0 }, x.max(0))
}

fn k_exp(c: &KernelCall) -> Result<KValue, OpError> {
    float_unary!(c, |x| x.exp())
}

fn k_log(c: &KernelCall) -> Result<KValue, OpError> {
    float_unary!(c, |x| x.ln())
}

fn k_sqrt(c: &KernelCall) -> Result<KValue, OpError> {
    float_unary!(c, |x| x.sqrt())
}

fn k_rsqrt(c: &KernelCall) -> Result<KValue, OpError> {
    float_unary!(c, |x| 1.0 / x.sqrt())
}

fn k_sin(c: &KernelCall) -> Result<KValue, OpError> {
    float_unary!(c, |x| x.sin())
}

fn k_cos(c: &KernelCall) -> Result<KValue, OpError> {
    float_unary!(c, |x| x.cos())
}

fn k_tanh(c: &KernelCall) -> Result<KValue, OpError> {
    float_unary(c, tanh_f32, f64::tanh)
}

fn k_sigmoid(c: &KernelCall) -> Result<KValue, OpError> {
    // With e = exp(-|x|): 1/(1+e) for x ≥ 0, e/(1+e) below. Neither overflows,
    // and the only branch is a select.
    float_unary!(c, |x| {
        let e = (-x.abs()).exp();
        let num = if x >= 0.0 { 1.0 } else { e };
        num / (1.0 + e)
    })
}

fn k_gelu(c: &KernelCall) -> Result<KValue, OpError> {
    float_unary(
        c,
        |x: f32| {
            let u = GELU_C as f32 * (x + GELU_A as f32 * x * x * x);
            0.5 * x * (1.0 + tanh_f32(u))
        },
        |x: f64| {
            let u = GELU_C * (x + GELU_A * x * x * x);
            0.5 * x * (1.0 + u.tanh())
        },
    )
}

fn k_erf(c: &KernelCall) -> Result<KValue, OpError> {
    float_unary(c, erf_f32, erf)
}

fn k_equal(c: &KernelCall) -> Result<KValue, OpError> {
    compare_kernel(c, Cmp::Eq)
}

fn k_not_equal(c: &KernelCall) -> Result<KValue, OpError> {
    compare_kernel(c, Cmp::Ne)
}

fn k_less(c: &KernelCall) -> Result<KValue, OpError> {
    compare_kernel(c, Cmp::Lt)
}

fn k_less_equal(c: &KernelCall) -> Result<KValue, OpError> {
    compare_kernel(c, Cmp::Le)
}

fn k_greater(c: &KernelCall) -> Result<KValue, OpError> {
    compare_kernel(c, Cmp::Gt)
}

fn k_greater_equal(c: &KernelCall) -> Result<KValue, OpError> {
    compare_kernel(c, Cmp::Ge)
}

fn k_logical_and(c: &KernelCall) -> Result<KValue, OpError> {
    logical_kernel(c, |a, b| a & b)
}

fn k_logical_or(c: &KernelCall) -> Result<KValue, OpError> {
    logical_kernel(c, |a, b| a | b)
}

fn k_logical_not(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let v = as_dtype(x, DType::Bool);
    let Buffer::Bool(p) = v.buffer() else {
        unreachable!("cast to bool")
    };
    let r = p.iter().map(|&e| !e).collect();
    Ok(KValue::Tensor(make_tensor(
        DType::Bool,
        x.shape().to_vec(),
        Buffer::Bool(r),
    )?))
}

fn k_select(c: &KernelCall) -> Result<KValue, OpError> {
    select_kernel(c)
}

fn k_cast(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let to = c.attrs.dtype("dtype");
    if x.dtype().is_float() && to.is_int() {
        let v: Vec<i64> = x
            .to_f64_vec()
            .into_iter()
            .map(|v| float_to_int(v, to))
            .collect();
        return Ok(KValue::Tensor(make_tensor(
            to,
            x.shape().to_vec(),
            Buffer::I64(v),
        )?));
    }
    Ok(KValue::Tensor(x.cast(to)))
}

fn k_zeros_like(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    Ok(KValue::Tensor(Tensor::zeros(x.dtype(), x.shape().to_vec())))
}

fn k_ones_like(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    Ok(KValue::Tensor(Tensor::full(
        x.dtype(),
        x.shape().to_vec(),
        1.0,
    )))
}

// ---------------------------------------------------------------------------
// The table.

const fn ew(
    name: &'static str,
    doc: &'static str,
    params: &'static [ParamDef],
    infer: InferFn,
    grad: Option<GradFn>,
    kernel: KernelFn,
) -> OpDef {
    OpDef {
        name,
        category: Category::Elementwise,
        doc,
        params,
        variadic: false,
        output: OutputDef::Single,
        infer,
        grad,
        kernel: Some(kernel),
    }
}

pub const OPS: &[OpDef] = &[
    ew(
        "Add",
        "Adds two tensors elementwise, `x + y`, with broadcasting and MindSpore's type promotion.",
        XY,
        infer_arith,
        Some(grad_add),
        k_add,
    ),
    ew(
        "Sub",
        "Subtracts `y` from `x` elementwise, `x - y`, with broadcasting and type promotion.",
        XY,
        infer_arith,
        Some(grad_sub),
        k_sub,
    ),
    ew(
        "Mul",
        "Multiplies two tensors elementwise, `x * y`, with broadcasting and type promotion.",
        XY,
        infer_arith,
        Some(grad_mul),
        k_mul,
    ),
    ew(
        "RealDiv",
        "Divides `x` by `y` elementwise, `x / y`, with broadcasting, in the promoted dtype: integers divide truncating toward zero (`x / 0` saturates to the dtype's maximum or minimum, 0 for `0 / 0`). True division of integers is `Div`.",
        XY,
        infer_real_div,
        Some(grad_real_div),
        k_real_div,
    ),
    ew(
        "Neg",
        "Negates every element, `-x`.",
        X,
        infer_numeric_unary,
        Some(grad_neg),
        k_neg,
    ),
    ew(
        "Exp",
        "The exponential `e^x` of every element (integer inputs are computed in `f32`).",
        X,
        infer_float_unary,
        Some(grad_exp),
        k_exp,
    ),
    ew(
        "Log",
        "The natural logarithm of every element (NaN below 0, `-inf` at 0; integer inputs give `f32`).",
        X,
        infer_float_unary,
        Some(grad_log),
        k_log,
    ),
    ew(
        "Sqrt",
        "The square root of every element (NaN below 0; integer inputs give `f32`).",
        X,
        infer_float_unary,
        Some(grad_sqrt),
        k_sqrt,
    ),
    ew(
        "Rsqrt",
        "The reciprocal square root `1 / sqrt(x)` of every element (integer inputs give `f32`).",
        X,
        infer_float_unary,
        Some(grad_rsqrt),
        k_rsqrt,
    ),
    ew(
        "Square",
        "The square `x * x` of every element.",
        X,
        infer_numeric_unary,
        Some(grad_square),
        k_square,
    ),
    ew(
        "Pow",
        "Raises `x` to the power `y` elementwise, with broadcasting and type promotion.",
        &[
            ParamDef::input("x", "The base: a tensor or a scalar."),
            ParamDef::input("y", "The exponent, broadcast against `x`."),
        ],
        infer_arith,
        Some(grad_pow),
        k_pow,
    ),
    ew(
        "Abs",
        "The absolute value of every element (a bool tensor is returned unchanged).",
        X,
        infer_same,
        Some(grad_abs),
        k_abs,
    ),
    ew(
        "Maximum",
        "The larger of `x` and `y` elementwise, with broadcasting: `x > y ? x : y` (so a NaN `y` propagates and a NaN `x` gives `y`, as MindSpore's CPU kernel). A tie splits the gradient evenly.",
        XY,
        infer_arith,
        Some(grad_maximum),
        k_maximum,
    ),
    ew(
        "Minimum",
        "The smaller of `x` and `y` elementwise, with broadcasting: `x < y ? x : y` (so a NaN `y` propagates and a NaN `x` gives `y`, as MindSpore's CPU kernel). A tie splits the gradient evenly.",
        XY,
        infer_arith,
        Some(grad_minimum),
        k_minimum,
    ),
    ew(
        "Sin",
        "The sine of every element, in radians (integer inputs give `f32`).",
        X,
        infer_float_unary,
        Some(grad_sin),
        k_sin,
    ),
    ew(
        "Cos",
        "The cosine of every element, in radians (integer inputs give `f32`).",
        X,
        infer_float_unary,
        Some(grad_cos),
        k_cos,
    ),
    ew(
        "Tanh",
        "The hyperbolic tangent of every element (integer inputs give `f32`).",
        X,
        infer_float_unary,
        Some(grad_tanh),
        k_tanh,
    ),
    ew(
        "Sigmoid",
        "The logistic function `1 / (1 + e^-x)` of every element (integer inputs give `f32`).",
        X,
        infer_float_unary,
        Some(grad_sigmoid),
        k_sigmoid,
    ),
    ew(
        "ReLU",
        "Rectified linear unit: `max(x, 0)` elementwise (NaN gives 0; a bool tensor is returned unchanged).",
        X,
        infer_same,
        Some(grad_relu),
        k_relu,
    ),
    ew(
        "GeLU",
        "Gaussian error linear unit, as MindSpore's kernel computes it: `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))`. Needs a float input.",
        X,
        infer_float_only,
        Some(grad_gelu),
        k_gelu,
    ),
    ew(
        "Erf",
        "The Gauss error function `erf(x) = 2/sqrt(pi) * integral from 0 to x of e^(-t^2) dt`, elementwise (integer inputs give `f32`).",
        X,
        infer_float_unary,
        Some(grad_erf),
        k_erf,
    ),
    ew(
        "Select",
        "Chooses elementwise: `x` where `cond` is true, `y` elsewhere. The three broadcast together; `x` and `y` are promoted to one dtype.",
        SELECT_PARAMS,
        infer_select,
        Some(grad_select),
        k_select,
    ),
    ew(
        "Cast",
        "Converts `x` to `dtype` (float to integer truncates toward zero, and NaN, infinities and out-of-range values give the minimum of `i32`/`i64`, or 0 for narrower types, as MindSpore's CPU kernel; non-zero becomes `true`).",
        CAST_PARAMS,
        infer_cast,
        Some(grad_cast),
        k_cast,
    ),
    ew(
        "Equal",
        "Whether `x == y`, elementwise with broadcasting: a `bool` tensor.",
        XY,
        infer_compare,
        None,
        k_equal,
    ),
    ew(
        "NotEqual",
        "Whether `x != y`, elementwise with broadcasting: a `bool` tensor.",
        XY,
        infer_compare,
        None,
        k_not_equal,
    ),
    ew(
        "Less",
        "Whether `x < y`, elementwise with broadcasting: a `bool` tensor.",
        XY,
        infer_compare,
        None,
        k_less,
    ),
    ew(
        "LessEqual",
        "Whether `x <= y`, elementwise with broadcasting: a `bool` tensor.",
        XY,
        infer_compare,
        None,
        k_less_equal,
    ),
    ew(
        "Greater",
        "Whether `x > y`, elementwise with broadcasting: a `bool` tensor.",
        XY,
        infer_compare,
        None,
        k_greater,
    ),
    ew(
        "GreaterEqual",
        "Whether `x >= y`, elementwise with broadcasting: a `bool` tensor.",
        XY,
        infer_compare,
        None,
        k_greater_equal,
    ),
    ew(
        "LogicalAnd",
        "Logical AND elementwise with broadcasting: a `bool` tensor (operands of any dtype are read as bools, non-zero being true).",
        BOOL_XY,
        infer_logical,
        None,
        k_logical_and,
    ),
    ew(
        "LogicalOr",
        "Logical OR elementwise with broadcasting: a `bool` tensor (operands of any dtype are read as bools, non-zero being true).",
        BOOL_XY,
        infer_logical,
        None,
        k_logical_or,
    ),
    ew(
        "LogicalNot",
        "Logical NOT elementwise: a `bool` tensor, true where `x` is zero (any dtype is read as bool).",
        &[ParamDef::input("x", "A tensor or scalar, read as bools.")],
        infer_logical_not,
        None,
        k_logical_not,
    ),
    ew(
        "ZerosLike",
        "A tensor of zeros with the dtype and shape of `x`.",
        &[ParamDef::input("x", "The tensor whose dtype and shape to copy.")],
        infer_same,
        None,
        k_zeros_like,
    ),
    ew(
        "OnesLike",
        "A tensor of ones with the dtype and shape of `x`.",
        &[ParamDef::input("x", "The tensor whose dtype and shape to copy.")],
        infer_same,
        None,
        k_ones_like,
    ),
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    let r = random_f64;
    let bools = |shape: &[usize], data: &[bool]| {
        KValue::Tensor(Tensor::from_bool(shape.to_vec(), data.to_vec()).expect("sizes match"))
    };
    let mut out = vec![
        Sample::new("Add", vec![r(&[2, 3], 1, -2.0, 2.0), r(&[3], 2, -2.0, 2.0)]),
        Sample::new(
            "Add",
            vec![
                r(&[2, 3], 1, -2.0, 2.0),
                ints(DType::I64, &[3], &[1, -2, 3]),
            ],
        ),
        Sample::new(
            "Sub",
            vec![r(&[2, 1, 3], 3, -2.0, 2.0), r(&[4, 1], 4, -2.0, 2.0)],
        ),
        Sample::new(
            "Mul",
            vec![r(&[2, 1], 3, -2.0, 2.0), r(&[2, 4], 4, -2.0, 2.0)],
        ),
        Sample::new("Mul", vec![r(&[], 5, -2.0, 2.0), r(&[2, 3], 6, -2.0, 2.0)]),
        Sample::new(
            "RealDiv",
            vec![r(&[2, 3], 7, -2.0, 2.0), r(&[3], 8, 0.5, 2.0)],
        ),
        Sample::new(
            "RealDiv",
            vec![r(&[1, 3], 9, -2.0, 2.0), r(&[2, 1], 10, -2.0, -0.5)],
        ),
        Sample::new("Neg", vec![r(&[3, 2], 11, -2.0, 2.0)]),
        Sample::new("Exp", vec![r(&[2, 3], 12, -2.0, 2.0)]),
        Sample::new("Log", vec![r(&[2, 3], 13, 0.5, 2.0)]),
        Sample::new("Sqrt", vec![r(&[2, 3], 14, 0.5, 2.0)]),
        Sample::new("Rsqrt", vec![r(&[2, 3], 15, 0.5, 2.0)]),
        Sample::new("Square", vec![r(&[2, 3], 16, -2.0, 2.0)]),
        Sample::new(
            "Pow",
            vec![r(&[2, 3], 17, 0.5, 2.0), r(&[3], 18, -2.0, 2.0)],
        ),
        Sample::new("Pow", vec![r(&[4], 19, 0.5, 2.0), r(&[], 20, -2.0, 2.0)]),
        Sample::new("Abs", vec![r(&[2, 3], 21, -2.0, 2.0)]),
        Sample::new(
            "Maximum",
            vec![r(&[2, 3], 22, -2.0, 2.0), r(&[3], 23, -2.0, 2.0)],
        ),
        Sample::new(
            "Minimum",
            vec![r(&[2, 1], 24, -2.0, 2.0), r(&[2, 3], 25, -2.0, 2.0)],
        ),
        Sample::new("Sin", vec![r(&[2, 3], 26, -3.0, 3.0)]),
        Sample::new("Cos", vec![r(&[2, 3], 27, -3.0, 3.0)]),
        Sample::new("Tanh", vec![r(&[2, 3], 28, -2.0, 2.0)]),
        Sample::new("Sigmoid", vec![r(&[2, 3], 29, -4.0, 4.0)]),
        Sample::new("ReLU", vec![r(&[2, 3], 30, -2.0, 2.0)]),
        Sample::new("GeLU", vec![r(&[2, 3], 31, -3.0, 3.0)]),
        Sample::new("Erf", vec![r(&[2, 3], 32, -2.0, 2.0)]),
        Sample::new(
            "Select",
            vec![
                bools(&[2, 3], &[true, false, true, false, false, true]),
                r(&[2, 3], 33, -2.0, 2.0),
                r(&[3], 34, -2.0, 2.0),
            ],
        ),
        Sample::new(
            "Select",
            vec![
                bools(&[3], &[false, true, true]),
                r(&[2, 1], 35, -2.0, 2.0),
                r(&[2, 3], 36, -2.0, 2.0),
            ],
        ),
        Sample::new("Cast", vec![r(&[2, 3], 37, -2.0, 2.0)])
            .attr("dtype", AttrValue::DType(DType::F64)),
        Sample::new("Cast", vec![r(&[2, 3], 38, -2.0, 2.0)])
            .attr("dtype", AttrValue::DType(DType::I32)),
        Sample::new("Cast", vec![ints(DType::I32, &[3], &[1, 0, -4])])
            .attr("dtype", AttrValue::DType(DType::F64)),
        Sample::new("ZerosLike", vec![r(&[2, 3], 39, -2.0, 2.0)]),
        Sample::new("OnesLike", vec![ints(DType::I32, &[2], &[4, 5])]),
        Sample::new(
            "LogicalAnd",
            vec![
                bools(&[2, 2], &[true, true, false, false]),
                bools(&[2], &[true, false]),
            ],
        ),
        Sample::new(
            "LogicalOr",
            vec![
                bools(&[2, 2], &[true, true, false, false]),
                bools(&[2], &[true, false]),
            ],
        ),
        Sample::new("LogicalNot", vec![bools(&[3], &[true, false, true])]),
    ];
    for (i, op) in [
        "Equal",
        "NotEqual",
        "Less",
        "LessEqual",
        "Greater",
        "GreaterEqual",
    ]
    .into_iter()
    .enumerate()
    {
        let seed = 40 + 2 * i as u64;
        out.push(Sample::new(
            op,
            vec![r(&[2, 3], seed, -2.0, 2.0), r(&[3], seed + 1, -2.0, 2.0)],
        ));
    }
    out
}
