//! Kernel helpers the elementwise primitives share with the reduction and
//! linear-algebra files, and the scalar functions their kernels (and the
//! compiled plans' fused loops) compute with.

use super::*;

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

pub(super) fn broadcast_error(a: &Tensor, b: &Tensor) -> OpError {
    OpError::call(format!(
        "shapes {:?} and {:?} cannot be broadcast",
        a.shape(),
        b.shape()
    ))
}

/// A binary kernel over the four storage kinds. Bool results are computed in
/// `i64` and converted back (non-zero is `true`).
pub(super) fn numeric_binary(
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
    ($c:expr, $dtype:expr, $formula:ident, |$a:ident, $b:ident| $int:expr) => {
        numeric_binary(
            $c,
            $dtype,
            |$a: f32, $b: f32| $formula.bin32($a, $b, &[]),
            |$a: f64, $b: f64| $formula.bin64($a, $b, &[]),
            |$a: i64, $b: i64| $int,
        )
    };
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
pub(super) fn float_unary(
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
    ($c:expr, $formula:ident) => {
        float_unary(
            $c,
            |x: f32| $formula.un32(x, &[]),
            |x: f64| $formula.un64(x, &[]),
        )
    };
    ($c:expr, |$x:ident| $body:expr) => {
        float_unary($c, |$x: f32| $body, |$x: f64| $body)
    };
}

/// A function of one numeric input that keeps its dtype.
pub(super) fn numeric_unary(
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
    ($c:expr, $formula:ident, |$x:ident| $int:expr) => {
        numeric_unary(
            $c,
            |$x: f32| $formula.un32($x, &[]),
            |$x: f64| $formula.un64($x, &[]),
            |$x: i64| $int,
        )
    };
    ($c:expr, |$x:ident| $float:expr, $int:expr) => {
        numeric_unary($c, |$x: f32| $float, |$x: f64| $float, |$x: i64| $int)
    };
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

pub(super) fn compare<T: Copy + PartialOrd>(
    a: &[T],
    sa: &[usize],
    b: &[T],
    sb: &[usize],
    out: &[usize],
    cmp: Cmp,
) -> Vec<bool> {
    // The formulas' tests (`EQUAL` is `eq(a, b)`, ...), on every storage type.
    use crate::formula::fns::{eq, ge, gt, le, lt, ne};
    match cmp {
        Cmp::Eq => map2(a, sa, b, sb, out, eq),
        Cmp::Ne => map2(a, sa, b, sb, out, ne),
        Cmp::Lt => map2(a, sa, b, sb, out, lt),
        Cmp::Le => map2(a, sa, b, sb, out, le),
        Cmp::Gt => map2(a, sa, b, sb, out, gt),
        Cmp::Ge => map2(a, sa, b, sb, out, ge),
    }
}

pub(super) fn compare_kernel(c: &KernelCall, cmp: Cmp) -> Result<KValue, OpError> {
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

pub(super) fn logical_kernel(
    c: &KernelCall,
    f: impl Fn(bool, bool) -> bool,
) -> Result<KValue, OpError> {
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
pub(super) fn select_data<T: Copy>(
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

pub(super) fn select_kernel(c: &KernelCall) -> Result<KValue, OpError> {
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
pub(super) const ERF_STEPS: [f64; 48] = {
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
pub(super) fn erf_to(x: f64, tol: f64, levels: usize) -> f64 {
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
pub(super) fn exp_small_f32(t: f32) -> f32 {
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
pub(crate) const GELU_C: f64 = 0.797_884_560_8;
pub(crate) const GELU_A: f64 = 0.044715;

/// `a^b` for integers of dtype `d`, wrapping; a negative exponent gives
/// `1/a^|b|` truncated, and `0` to a negative power the conversion of
/// infinity (see [`float_to_int`]).
/// Integer `Pow` as MindSpore 2.10's CPU kernel computes it: in `f64`, then
/// converted back (so a result beyond the dtype is its smallest value, not a
/// wrapped one: `3 ** 100` in `i64` is -9223372036854775808, and results
/// beyond 2^53 are rounded as `f64` rounds them; `2 ** -1` is 0, `0 ** -1` the
/// smallest value).
pub(super) fn ipow(a: i64, b: i64, d: DType) -> i64 {
    float_to_int((a as f64).powf(b as f64), d)
}
