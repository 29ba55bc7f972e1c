//! More elementwise primitives (the `elementwise` family): here the
//! division family (`Div Mod FloorDiv FloorMod TruncateDiv TruncateMod
//! DivNoNan Xdivy Xlogy MulNoNan SquaredDifference Atan2 Hypot`) and bitwise
//! and logic (`BitwiseAnd BitwiseOr BitwiseXor BitwiseNot LogicalXor
//! LeftShift RightShift`), with the kernel, shape-rule and gradient helpers
//! the family shares. Interpolation, clamping and the tensor-scalar
//! primitives are in `elementwise::clamp`, the unary mathematical
//! functions in `elementwise::math`, the activations in `activations`.
//!
//! Dtypes and numerics are those of MindSpore 2.10's CPU kernels, checked
//! against them (`tests/ms_oracle/elementwise.py`):
//! - Operands are promoted as for `Add`; `Div` is true division (integer or
//!   bool operands give `f32`); `DivNoNan Xdivy Xlogy Atan2 Hypot` need a
//!   float result type; the bitwise primitives need integers or bools, the
//!   shifts integers; `LogicalXor` reads any dtype as bool.
//! - Integer division by zero saturates (`x / 0` is the dtype's maximum for
//!   `x > 0`, its minimum for `x < 0`, 0 for `0 / 0`).
//! - `Mod` is `x - t·y` with `t` the quotient rounded toward zero (a NaN
//!   quotient counting as 0, so `0 mod 0` is 0) and `FloorMod` is
//!   `x - floor(x / y)·y`, both evaluated in f64 for every dtype as
//!   MindSpore's kernels do (so `1 mod inf` is NaN); an integer result that
//!   is not finite converts as `Cast` does, to the minimum of `i32`/`i64` (0
//!   for narrower types). `TruncateMod` is C's `fmod`; `TruncateDiv` divides
//!   `f32` operands in single precision. `Xlogy` is `x * log(y)` with no
//!   special case for `x = 0`, as MindSpore's CPU kernel (`0 * log(0)` is
//!   NaN).
//! - Shifts take the count modulo the width C's shift instruction uses (32
//!   for types up to 32 bits, 64 for `i64`), as MindSpore's kernel does.
//!
//! Gradients are MindSpore's bprops built from registry primitives, except
//! where MindSpore's is not the derivative (`Mod`'s `dy` uses `FloorDiv`
//! there; here `TruncateDiv`, which is). Integer, bool and predicate
//! primitives have none.

use crate::schema::{why, Override, Schema};
use crate::Traits;
use ir::{AbsVal, AttrValue, DType};
use tensor::{Buffer, Tensor};

use crate::defs::elementwise::{
    as_dtype, float_of, float_to_int, is_float_input, make_tensor, map2,
};
use crate::defs::internal::broadcast_to;
use crate::infer::{infer_broadcast_binary, InferCall, InferFn};
use crate::kernel::{broadcast_shape, KValue, KernelCall, KernelFn};
use crate::{Category, GNode, GradBuilder, GradCall, GradFn, OpDef, OpError, OutputDef};

// ---------------------------------------------------------------------------
// Integer helpers.

/// The largest value of an integer dtype (as stored, in `i64`).
pub(crate) fn int_max(d: DType) -> i64 {
    match d {
        DType::I8 => i8::MAX as i64,
        DType::I16 => i16::MAX as i64,
        DType::I32 => i32::MAX as i64,
        DType::U8 => u8::MAX as i64,
        DType::Bool => 1,
        _ => i64::MAX,
    }
}

/// The smallest value of an integer dtype.
pub(crate) fn int_min(d: DType) -> i64 {
    match d {
        DType::I8 => i8::MIN as i64,
        DType::I16 => i16::MIN as i64,
        DType::I32 => i32::MIN as i64,
        DType::U8 | DType::Bool => 0,
        _ => i64::MIN,
    }
}

/// What MindSpore's CPU kernels give where a non-finite float intermediate is
/// converted to the integer `d`: x86's "integer indefinite" (the minimum) for
/// `i32` and `i64`, and its low bits, 0, for the narrower types.
pub(crate) fn int_nan(d: DType) -> i64 {
    match d {
        DType::I32 => i32::MIN as i64,
        DType::I64 => i64::MIN,
        _ => 0,
    }
}

/// `x / 0` for integers, saturating as MindSpore's kernels do.
pub(crate) fn int_div_by_zero(x: i64, d: DType) -> i64 {
    match x.cmp(&0) {
        std::cmp::Ordering::Greater => int_max(d),
        std::cmp::Ordering::Less => int_min(d),
        std::cmp::Ordering::Equal => 0,
    }
}

/// MindSpore's `Mod`, in double: `x - t·y` with `t` the quotient rounded
/// toward zero, where a NaN quotient rounds to 0 (so `0 mod 0` is 0).
fn mod_f(x: f64, y: f64) -> f64 {
    let q = x / y;
    let t = (if q > 0.0 { q.floor() } else { 0.0 }) + (if q < 0.0 { q.ceil() } else { 0.0 });
    x - t * y
}

/// MindSpore's `FloorMod`, in double: `x - floor(x / y)·y`.
fn floor_mod_f(x: f64, y: f64) -> f64 {
    x - (x / y).floor() * y
}

/// Floor division of integers (`y != 0`).
fn floor_div_i(x: i64, y: i64) -> i64 {
    let q = x.wrapping_div(y);
    if (x % y != 0) && ((x < 0) != (y < 0)) {
        q - 1
    } else {
        q
    }
}

// ---------------------------------------------------------------------------
// Kernel helpers.

/// `f` over a buffer, by storage kind: floats through `ff` in f64, integers
/// through `fi`; a bool buffer goes through `fi` as 0/1 (non-zero is `true`).
pub(crate) fn map_buffer(v: &Buffer, ff: impl Fn(f64) -> f64, fi: impl Fn(i64) -> i64) -> Buffer {
    match v {
        Buffer::F32(p) => Buffer::F32(p.iter().map(|&e| ff(e as f64) as f32).collect()),
        Buffer::F64(p) => Buffer::F64(p.iter().map(|&e| ff(e)).collect()),
        Buffer::I64(p) => Buffer::I64(p.iter().map(|&e| fi(e)).collect()),
        Buffer::Bool(p) => Buffer::Bool(p.iter().map(|&e| fi(i64::from(e)) != 0).collect()),
    }
}

/// `x` converted to `out` and mapped elementwise (see [`map_buffer`]).
pub(crate) fn unary_kernel(
    x: &Tensor,
    out: DType,
    ff: impl Fn(f64) -> f64,
    fi: impl Fn(i64) -> i64,
) -> Result<Tensor, OpError> {
    let v = as_dtype(x, out);
    make_tensor(out, x.shape().to_vec(), map_buffer(v.buffer(), ff, fi))
}

/// A float-valued function of input 0: the input's float dtype, or `f32` for
/// integer and bool inputs; computed in f64 and rounded.
pub(crate) fn float_kernel(c: &KernelCall, f: impl Fn(f64) -> f64) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let t = unary_kernel(x, float_of(x.dtype()), f, |v| v)?;
    Ok(KValue::Tensor(t))
}

/// A `bool` predicate of every element.
pub(crate) fn predicate_kernel(
    x: &Tensor,
    ff: impl Fn(f64) -> bool,
    fi: impl Fn(i64) -> bool,
) -> Result<Tensor, OpError> {
    let r: Vec<bool> = match x.buffer() {
        Buffer::F32(p) => p.iter().map(|&e| ff(e as f64)).collect(),
        Buffer::F64(p) => p.iter().map(|&e| ff(e)).collect(),
        Buffer::I64(p) => p.iter().map(|&e| fi(e)).collect(),
        Buffer::Bool(p) => p.iter().map(|&e| fi(i64::from(e))).collect(),
    };
    make_tensor(DType::Bool, x.shape().to_vec(), Buffer::Bool(r))
}

fn broadcast_error(a: &Tensor, b: &Tensor) -> OpError {
    OpError::call(format!(
        "shapes {:?} and {:?} cannot be broadcast",
        a.shape(),
        b.shape()
    ))
}

/// A broadcasting binary kernel computing in `dtype`: floats through `ff` in
/// f64, integers through `fi` in i64 (a bool result is computed in i64 and
/// converted back: non-zero is `true`).
pub(crate) fn binary_kernel(
    a: &Tensor,
    b: &Tensor,
    dtype: DType,
    ff: impl Fn(f64, f64) -> f64,
    fi: impl Fn(i64, i64) -> i64,
) -> Result<Tensor, OpError> {
    binary_kernel_with(a, b, dtype, |u, v| ff(u as f64, v as f64) as f32, &ff, fi)
}

/// [`binary_kernel`] with its own function for `f32`-stored dtypes (for a
/// kernel MindSpore computes in single precision).
pub(crate) fn binary_kernel_with(
    a: &Tensor,
    b: &Tensor,
    dtype: DType,
    ff32: impl Fn(f32, f32) -> f32,
    ff: impl Fn(f64, f64) -> f64,
    fi: impl Fn(i64, i64) -> i64,
) -> Result<Tensor, OpError> {
    let out = broadcast_shape(a.shape(), b.shape()).ok_or_else(|| broadcast_error(a, b))?;
    let work = if dtype.is_bool() { DType::I64 } else { dtype };
    let (x, y) = (as_dtype(a, work), as_dtype(b, work));
    let (sa, sb) = (a.shape(), b.shape());
    let buffer = match (x.buffer(), y.buffer()) {
        (Buffer::F32(p), Buffer::F32(q)) => Buffer::F32(map2(p, sa, q, sb, &out, &ff32)),
        (Buffer::F64(p), Buffer::F64(q)) => Buffer::F64(map2(p, sa, q, sb, &out, &ff)),
        (Buffer::I64(p), Buffer::I64(q)) => Buffer::I64(map2(p, sa, q, sb, &out, &fi)),
        _ => unreachable!("both operands were cast to {work}"),
    };
    let t = make_tensor(work, out, buffer)?;
    Ok(if work == dtype { t } else { t.cast(dtype) })
}

/// A broadcasting binary predicate on the operands converted to `dtype`.
pub(crate) fn binary_predicate(
    a: &Tensor,
    b: &Tensor,
    dtype: DType,
    f: impl Fn(bool, bool) -> bool,
) -> Result<Tensor, OpError> {
    let out = broadcast_shape(a.shape(), b.shape()).ok_or_else(|| broadcast_error(a, b))?;
    let (x, y) = (as_dtype(a, dtype), as_dtype(b, dtype));
    let (Buffer::Bool(p), Buffer::Bool(q)) = (x.buffer(), y.buffer()) else {
        unreachable!("cast to bool")
    };
    let r = map2(p, a.shape(), q, b.shape(), &out, f);
    make_tensor(DType::Bool, out, Buffer::Bool(r))
}

/// Three operands broadcast together and combined in `dtype` (a float dtype)
/// by `f`, in f64.
pub(crate) fn ternary_float(
    ts: [&Tensor; 3],
    dtype: DType,
    f: impl Fn(f64, f64, f64) -> f64,
) -> Result<Tensor, OpError> {
    let out = broadcast_shape(ts[0].shape(), ts[1].shape())
        .and_then(|s| broadcast_shape(&s, ts[2].shape()))
        .ok_or_else(|| {
            OpError::call(format!(
                "shapes {:?}, {:?} and {:?} cannot be broadcast",
                ts[0].shape(),
                ts[1].shape(),
                ts[2].shape()
            ))
        })?;
    let spread = |t: &Tensor| broadcast_to(&t.cast(DType::F64).to_f64_vec(), t.shape(), &out);
    let (a, b, c) = (spread(ts[0]), spread(ts[1]), spread(ts[2]));
    let data: Vec<f64> = (0..a.len()).map(|i| f(a[i], b[i], c[i])).collect();
    Ok(Tensor::from_f64(out, data)
        .map_err(|e| OpError::call(e.0))?
        .cast(dtype))
}

/// `c`'s inputs 0 and 1 combined by [`binary_kernel`] in `dtype`.
fn binary(
    c: &KernelCall,
    dtype: DType,
    ff: impl Fn(f64, f64) -> f64,
    fi: impl Fn(i64, i64) -> i64,
) -> Result<KValue, OpError> {
    Ok(KValue::Tensor(binary_kernel(
        c.tensor(0)?,
        c.tensor(1)?,
        dtype,
        ff,
        fi,
    )?))
}

// ---------------------------------------------------------------------------
// Shape-rule helpers.

/// The dtypes an operand of a primitive may have.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Accept {
    /// f16, bf16, f32, f64.
    Float,
    /// Integers and floats, not bool.
    Numeric,
    /// Integers only.
    Int,
    /// Integers and bool.
    IntOrBool,
    /// Anything.
    Any,
}

impl Accept {
    pub(crate) fn ok(self, d: DType) -> bool {
        match self {
            Accept::Float => d.is_float(),
            Accept::Numeric => !d.is_bool(),
            Accept::Int => d.is_int(),
            Accept::IntOrBool => !d.is_float(),
            Accept::Any => true,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Accept::Float => "a float (f16, bf16, f32 or f64)",
            Accept::Numeric => "a numeric (integer or float)",
            Accept::Int => "an integer",
            Accept::IntOrBool => "an integer or bool",
            Accept::Any => "a",
        }
    }
}

/// `v` with its dtype mapped by `f`.
pub(crate) fn with_dtype(v: AbsVal, f: impl Fn(DType) -> DType) -> AbsVal {
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

/// An error for input `i`, whose dtype `accept` does not allow.
pub(crate) fn dtype_error(call: &InferCall, i: usize, accept: Accept) -> OpError {
    let e = OpError::input(
        i,
        format!(
            "`{}` needs {} `{}`, but it is {}",
            call.op.name,
            accept.describe(),
            call.input_name(i),
            call.inputs[i]
        ),
    );
    if accept == Accept::Float {
        e.with_note("`Cast` it to a float dtype first")
    } else {
        e
    }
}

/// A unary primitive: input 0 must be `accept`ed; the result has its shape
/// and the dtype `out` maps its dtype to.
pub(crate) fn infer_unary(
    call: &InferCall,
    accept: Accept,
    out: impl Fn(DType) -> DType,
) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (d, _) = call.tensor(0)?;
    if !accept.ok(d) {
        return Err(dtype_error(call, 0, accept));
    }
    Ok(with_dtype(call.inputs[0].widen(), out))
}

/// A broadcasting binary primitive: the promoted dtype must be `accept`ed;
/// the result's dtype is `out` of it.
pub(crate) fn infer_binary(
    call: &InferCall,
    accept: Accept,
    out: impl Fn(DType) -> DType,
) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let v = infer_broadcast_binary(call, None)?;
    let d = v.dtype().unwrap_or(DType::F32);
    if !accept.ok(d) {
        let blame = (0..2)
            .find(|&i| call.inputs[i].dtype().is_some_and(|d| !accept.ok(d)))
            .unwrap_or(0);
        return Err(dtype_error(call, blame, accept));
    }
    Ok(with_dtype(v, out))
}

/// `v` as a weak scalar (a tensor-scalar primitive's number operand yields to
/// the tensor's dtype unless it is of a higher kind).
pub(crate) fn as_weak(v: &AbsVal) -> AbsVal {
    match v {
        AbsVal::Scalar { dtype, value, .. } => AbsVal::Scalar {
            dtype: *dtype,
            value: *value,
            weak: true,
        },
        AbsVal::Tensor { dtype, .. } => AbsVal::Scalar {
            dtype: *dtype,
            value: None,
            weak: true,
        },
        other => other.clone(),
    }
}

// ---------------------------------------------------------------------------
// Gradient helpers.

pub(crate) type Grads = Vec<Option<GNode>>;

pub(crate) fn p(b: &mut dyn GradBuilder, name: &str, inputs: &[GNode]) -> GNode {
    b.prim(name, inputs, vec![])
}

/// The gradient of a unary primitive's only input (none unless it is a float).
pub(crate) fn unary_grad(
    b: &mut dyn GradBuilder,
    c: &GradCall,
    f: impl FnOnce(&mut dyn GradBuilder) -> GNode,
) -> Grads {
    let mut g = vec![is_float_input(c, 0).then(|| f(b))];
    g.resize(c.inputs.len(), None);
    g
}

/// The gradient of broadcast input `i`: `f` builds it in the result's shape
/// and it is summed back to the input's shape.
pub(crate) fn input_grad(
    b: &mut dyn GradBuilder,
    c: &GradCall,
    i: usize,
    f: impl FnOnce(&mut dyn GradBuilder) -> GNode,
) -> Option<GNode> {
    if !is_float_input(c, i) {
        return None;
    }
    let g = f(&mut *b);
    Some(p(b, "_SumToShapeOf", &[g, c.inputs[i]]))
}

/// `dout` where `mask` holds, 0 elsewhere.
pub(crate) fn masked(b: &mut dyn GradBuilder, mask: GNode, dout: GNode) -> GNode {
    let zeros = p(b, "ZerosLike", &[dout]);
    p(b, "Select", &[mask, dout, zeros])
}

/// The scalar attribute `name`, or `None` when it is absent or `none`.
pub(crate) fn opt_number(attrs: &crate::Attrs, name: &str) -> Option<f64> {
    match attrs.get(name) {
        None | Some(AttrValue::None) => None,
        Some(AttrValue::Bool(b)) => Some(f64::from(u8::from(*b))),
        Some(v) => v.as_f64(),
    }
}

// ---------------------------------------------------------------------------
// Parameters.

const INPUT_OTHER: Schema = Schema::ms(
    &[],
    &[
        ("input", "The first operand: a tensor or a scalar."),
        (
            "other",
            "The second operand, broadcast against `input` (NumPy rules).",
        ),
    ],
);

const X1X2: Schema = Schema::ms(
    &[],
    &[
        ("x1", "The first operand: a tensor or a scalar."),
        (
            "x2",
            "The second operand, broadcast against `x1` (NumPy rules).",
        ),
    ],
);

// ---------------------------------------------------------------------------
// Shape rules.

fn infer_numeric(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_binary(call, Accept::Numeric, |d| d)
}

fn infer_any_numeric(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_binary(call, Accept::Any, |d| d)
}

fn infer_float_binary(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_binary(call, Accept::Float, |d| d)
}

fn infer_div(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_binary(call, Accept::Any, float_of)
}

fn infer_bitwise(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_binary(call, Accept::IntOrBool, |d| d)
}

fn infer_shift(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_binary(call, Accept::Int, |d| d)
}

fn infer_logical_xor(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_binary(call, Accept::Any, |_| DType::Bool)
}

fn infer_bitwise_not(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_unary(call, Accept::IntOrBool, |d| d)
}

// ---------------------------------------------------------------------------
// Gradient rules.

fn grad_div(b: &mut dyn GradBuilder, c: &GradCall, op: &str) -> Grads {
    // bc_x = dout / y (with `op`); dx = bc_x; dy = -bc_x * out.
    if !is_float_input(c, 0) && !is_float_input(c, 1) {
        return vec![None, None];
    }
    let bc_x = p(b, op, &[c.dout, c.inputs[1]]);
    vec![
        input_grad(b, c, 0, |_| bc_x),
        input_grad(b, c, 1, |b| {
            let t = p(b, "Mul", &[bc_x, c.out]);
            p(b, "Neg", &[t])
        }),
    ]
}

/// `Mod`, `FloorMod`, `TruncateMod`: dx = dout; dy = -dout * quotient(x, y).
fn grad_mod(b: &mut dyn GradBuilder, c: &GradCall, quotient: &str) -> Grads {
    let (x, y) = (c.inputs[0], c.inputs[1]);
    vec![
        input_grad(b, c, 0, |_| c.dout),
        input_grad(b, c, 1, |b| {
            let q = p(b, quotient, &[x, y]);
            let t = p(b, "Mul", &[c.dout, q]);
            p(b, "Neg", &[t])
        }),
    ]
}

fn grad_xdivy(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // bc_x = Xdivy(x != 0, y) * dout; bc_y = Xdivy(-x, y²) * dout.
    let (x, y) = (c.inputs[0], c.inputs[1]);
    vec![
        input_grad(b, c, 0, |b| {
            let zero = b.scalar(0.0);
            let nz = p(b, "NotEqual", &[x, zero]);
            let ones = p(b, "OnesLike", &[x]);
            let zeros = p(b, "ZerosLike", &[x]);
            let nzx = p(b, "Select", &[nz, ones, zeros]);
            let t = p(b, "Xdivy", &[nzx, y]);
            p(b, "Mul", &[t, c.dout])
        }),
        input_grad(b, c, 1, |b| {
            let nx = p(b, "Neg", &[x]);
            let y2 = p(b, "Square", &[y]);
            let t = p(b, "Xdivy", &[nx, y2]);
            p(b, "Mul", &[t, c.dout])
        }),
    ]
}

fn grad_xlogy(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // dx = log(y) * dout (as MindSpore 2.10 computes it); dy = Xdivy(x, y) * dout.
    let (x, y) = (c.inputs[0], c.inputs[1]);
    vec![
        input_grad(b, c, 0, |b| {
            let l = p(b, "Log", &[y]);
            p(b, "Mul", &[l, c.dout])
        }),
        input_grad(b, c, 1, |b| {
            let t = p(b, "Xdivy", &[x, y]);
            p(b, "Mul", &[t, c.dout])
        }),
    ]
}

fn grad_mul_no_nan(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    let (x, y) = (c.inputs[0], c.inputs[1]);
    vec![
        input_grad(b, c, 0, |b| p(b, "MulNoNan", &[c.dout, y])),
        input_grad(b, c, 1, |b| p(b, "MulNoNan", &[x, c.dout])),
    ]
}

fn grad_squared_difference(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // dx = 2 (x - y) dout; dy = -dx.
    let (x, y) = (c.inputs[0], c.inputs[1]);
    let d = p(b, "Sub", &[x, y]);
    let two = b.scalar(2.0);
    let t = p(b, "Mul", &[d, two]);
    let dx = p(b, "Mul", &[c.dout, t]);
    vec![
        input_grad(b, c, 0, |_| dx),
        input_grad(b, c, 1, |b| p(b, "Neg", &[dx])),
    ]
}

fn grad_atan2(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // tmp = dout / (x² + y²); dx = tmp · y; dy = -tmp · x.
    let (x, y) = (c.inputs[0], c.inputs[1]);
    let x2 = p(b, "Square", &[x]);
    let y2 = p(b, "Square", &[y]);
    let s = p(b, "Add", &[x2, y2]);
    let tmp = p(b, "RealDiv", &[c.dout, s]);
    vec![
        input_grad(b, c, 0, |b| p(b, "Mul", &[tmp, y])),
        input_grad(b, c, 1, |b| {
            let nx = p(b, "Neg", &[x]);
            p(b, "Mul", &[tmp, nx])
        }),
    ]
}

fn grad_hypot(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // dx1 = x1 / out · dout; dx2 = x2 / out · dout.
    let (x, y) = (c.inputs[0], c.inputs[1]);
    vec![
        input_grad(b, c, 0, |b| {
            let t = p(b, "RealDiv", &[x, c.out]);
            p(b, "Mul", &[t, c.dout])
        }),
        input_grad(b, c, 1, |b| {
            let t = p(b, "RealDiv", &[y, c.out]);
            p(b, "Mul", &[t, c.dout])
        }),
    ]
}

// ---------------------------------------------------------------------------
// Kernels.

crate::formula! {
    /// True division (integers are divided as `f32`; computed in the
    /// promoted float dtype: `f32` division is `f64` division rounded).
    pub DIV = [] |a, b| a / b
}

crate::formula! {
    /// `floor(a / b)`, in f64 and rounded.
    pub FLOOR_DIV = [wide] |a, b| floor(a / b)
}
crate::formula! {
    /// 0 where `b` is 0.
    pub DIV_NO_NAN = [wide] |a, b| select(eq(b, 0.0), 0.0, a / b)
}
crate::formula! {
    /// 0 where `b` is 0 (the integer kernels multiply).
    pub MUL_NO_NAN = [wide] |a, b| select(eq(b, 0.0), 0.0, a * b)
}
crate::formula! {pub SQUARED_DIFFERENCE = [wide ints] |a, b| (a - b) * (a - b)}
crate::formula! {pub ATAN2 = [wide] |a, b| atan2(a, b)}
crate::formula! {pub HYPOT = [wide] |a, b| hypot(a, b)}
crate::formula! {pub LOGICAL_XOR = [test logic bools] |a, b| ne(ne(a, 0.0), ne(b, 0.0))}
crate::formula! {pub BITWISE_AND = [int_only bools] |a, b| a & b}
crate::formula! {pub BITWISE_OR = [int_only bools] |a, b| a | b}
crate::formula! {pub BITWISE_XOR = [int_only bools] |a, b| a ^ b}
crate::formula! {
    /// `~a` (of a bool, `!a`).
    pub BITWISE_NOT = [int_only bools] |a| bnot(a)
}

fn k_div(c: &KernelCall) -> Result<KValue, OpError> {
    binary(
        c,
        float_of(c.promoted()),
        |x, y| DIV.bin64(x, y, &[]),
        |_, _| 0,
    )
}

fn k_mod(c: &KernelCall) -> Result<KValue, OpError> {
    // Integers too are computed in double and converted back, as MindSpore's
    // kernel (`5 mod 0` is NaN, converted to the minimum of i32/i64).
    let d = c.promoted();
    binary(c, d, mod_f, |x, y| {
        float_to_int(mod_f(x as f64, y as f64), d)
    })
}

fn k_floor_div(c: &KernelCall) -> Result<KValue, OpError> {
    let d = c.promoted();
    binary(
        c,
        d,
        |x, y| FLOOR_DIV.bin64(x, y, &[]),
        |x, y| {
            if y == 0 {
                int_div_by_zero(x, d)
            } else {
                floor_div_i(x, y)
            }
        },
    )
}

fn k_floor_mod(c: &KernelCall) -> Result<KValue, OpError> {
    let d = c.promoted();
    binary(c, d, floor_mod_f, |x, y| {
        float_to_int(floor_mod_f(x as f64, y as f64), d)
    })
}

fn k_truncate_div(c: &KernelCall) -> Result<KValue, OpError> {
    // MindSpore divides single-precision operands in single precision
    // (`0.7f / 0.1f` is 7, not 6).
    let d = c.promoted();
    let t = binary_kernel_with(
        c.tensor(0)?,
        c.tensor(1)?,
        d,
        |x, y| (x / y).trunc(),
        |x, y| (x / y).trunc(),
        |x, y| {
            if y == 0 {
                int_div_by_zero(x, d)
            } else {
                x.wrapping_div(y)
            }
        },
    )?;
    Ok(KValue::Tensor(t))
}

fn k_truncate_mod(c: &KernelCall) -> Result<KValue, OpError> {
    binary(
        c,
        c.promoted(),
        |x, y| x % y,
        |x, y| if y == 0 { 0 } else { x.wrapping_rem(y) },
    )
}

fn k_div_no_nan(c: &KernelCall) -> Result<KValue, OpError> {
    binary(
        c,
        c.promoted(),
        |x, y| DIV_NO_NAN.bin64(x, y, &[]),
        |_, _| 0,
    )
}

fn k_xdivy(c: &KernelCall) -> Result<KValue, OpError> {
    binary(
        c,
        c.promoted(),
        |x, y| if x == 0.0 { 0.0 } else { x / y },
        |_, _| 0,
    )
}

fn k_xlogy(c: &KernelCall) -> Result<KValue, OpError> {
    binary(c, c.promoted(), |x, y| x * y.ln(), |_, _| 0)
}

fn k_mul_no_nan(c: &KernelCall) -> Result<KValue, OpError> {
    binary(
        c,
        c.promoted(),
        |x, y| MUL_NO_NAN.bin64(x, y, &[]),
        |x, y| x.wrapping_mul(y),
    )
}

fn k_squared_difference(c: &KernelCall) -> Result<KValue, OpError> {
    binary(
        c,
        c.promoted(),
        |x, y| SQUARED_DIFFERENCE.bin64(x, y, &[]),
        |x, y| {
            let d = x.wrapping_sub(y);
            d.wrapping_mul(d)
        },
    )
}

fn k_atan2(c: &KernelCall) -> Result<KValue, OpError> {
    binary(c, c.promoted(), |x, y| ATAN2.bin64(x, y, &[]), |_, _| 0)
}

fn k_hypot(c: &KernelCall) -> Result<KValue, OpError> {
    binary(c, c.promoted(), |x, y| HYPOT.bin64(x, y, &[]), |_, _| 0)
}

fn k_bitwise(c: &KernelCall, f: fn(i64, i64) -> i64) -> Result<KValue, OpError> {
    binary(c, c.promoted(), |_, _| f64::NAN, f)
}

fn k_bitwise_not(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let t = if x.dtype().is_bool() {
        predicate_kernel(x, |v| v == 0.0, |v| v == 0)?
    } else {
        unary_kernel(x, x.dtype(), |v| v, |v| BITWISE_NOT.int(v, 0))?
    };
    Ok(KValue::Tensor(t))
}

fn k_logical_xor(c: &KernelCall) -> Result<KValue, OpError> {
    Ok(KValue::Tensor(binary_predicate(
        c.tensor(0)?,
        c.tensor(1)?,
        DType::Bool,
        |a, b| a ^ b,
    )?))
}

/// The shift count C's shift instruction uses for `d` (after the integer
/// promotion of the narrow types to 32 bits).
fn shift_count(y: i64, d: DType) -> u32 {
    let mask = if d == DType::I64 { 63 } else { 31 };
    (y & mask) as u32
}

fn k_left_shift(c: &KernelCall) -> Result<KValue, OpError> {
    let d = c.promoted();
    binary(
        c,
        d,
        |_, _| f64::NAN,
        |x, y| {
            let s = shift_count(y, d);
            if d == DType::I64 {
                x.wrapping_shl(s)
            } else {
                i64::from((x as i32).wrapping_shl(s))
            }
        },
    )
}

fn k_right_shift(c: &KernelCall) -> Result<KValue, OpError> {
    let d = c.promoted();
    binary(
        c,
        d,
        |_, _| f64::NAN,
        |x, y| {
            let s = shift_count(y, d);
            if d == DType::I64 {
                x.wrapping_shr(s)
            } else {
                i64::from((x as i32).wrapping_shr(s))
            }
        },
    )
}

// ---------------------------------------------------------------------------
// The table.

pub(crate) const fn ew(
    name: &'static str,
    doc: &'static str,
    params: Schema,
    infer: InferFn,
    grad: Option<GradFn>,
    kernel: KernelFn,
) -> OpDef {
    OpDef {
        name,
        category: Category::Elementwise,
        doc,
        schema: params,
        variadic: false,
        output: OutputDef::Single,
        infer,
        grad,
        kernel: Some(kernel),
        traits: Traits::NONE,
    }
}

pub const OPS: &[OpDef] = &[
    ew(
        "Div",
        "Divides `input` by `other` elementwise, `input / other`: true division (integer and bool operands give `f32`), with broadcasting and type promotion. MindSpore's `/` on tensors.",
        INPUT_OTHER,
        infer_div,
        Some(|b, c| grad_div(b, c, "Div")),
        k_div,
    )
    .with_formula(&DIV),
    ew(
        "Mod",
        "The remainder of `x / y` with the sign of `x` (truncated division), `x - trunc(x / y) * y`, elementwise with broadcasting. Integer `x mod 0` gives the minimum of `i32`/`i64` (0 for narrower types), and `0 mod 0` gives 0, as MindSpore's CPU kernel.",
        Schema::ms(
            &[],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_numeric,
        Some(|b, c| grad_mod(b, c, "TruncateDiv")),
        k_mod,
    ),
    ew(
        "FloorDiv",
        "Floor division `floor(input / other)`, elementwise with broadcasting; integers divide exactly (rounding toward negative infinity), and an integer `x / 0` saturates to the dtype's maximum (x > 0) or minimum (x < 0), 0 for `0 / 0`. Not differentiable.",
        INPUT_OTHER,
        infer_any_numeric,
        None,
        k_floor_div,
    )
    .with_formula(&FLOOR_DIV),
    ew(
        "FloorMod",
        "The remainder of floor division, with the sign of `y`: `x - floor(x / y) * y`, elementwise with broadcasting. Integer `x mod 0` gives the minimum of `i32`/`i64` (0 for narrower types), as MindSpore's CPU kernel.",
        Schema::ms(
            &[],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_numeric,
        Some(|b, c| grad_mod(b, c, "FloorDiv")),
        k_floor_mod,
    ),
    ew(
        "TruncateDiv",
        "Division rounded toward zero, `trunc(x / y)`, elementwise with broadcasting; an integer `x / 0` saturates to the dtype's maximum (x > 0) or minimum (x < 0), 0 for `0 / 0`. Not differentiable.",
        Schema::ms(
            &[],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_numeric,
        None,
        k_truncate_div,
    ),
    ew(
        "TruncateMod",
        "The remainder of truncated division, with the sign of `x` (C's `fmod`), elementwise with broadcasting; an integer `x mod 0` gives 0.",
        Schema::ms(
            &[],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_numeric,
        Some(|b, c| grad_mod(b, c, "TruncateDiv")),
        k_truncate_mod,
    ),
    ew(
        "DivNoNan",
        "`x1 / x2` elementwise with broadcasting, but 0 wherever `x2` is 0 (even for `0 / 0`). Needs a float result type.",
        X1X2,
        infer_float_binary,
        Some(|b, c| grad_div(b, c, "DivNoNan")),
        k_div_no_nan,
    )
    .with_formula(&DIV_NO_NAN),
    ew(
        "Xdivy",
        "`x / y` elementwise with broadcasting, but 0 wherever `x` is 0. Needs a float result type.",
        Schema::ms(
            &[],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_float_binary,
        Some(grad_xdivy),
        k_xdivy,
    ),
    ew(
        "Xlogy",
        "`input * log(other)` elementwise with broadcasting, as MindSpore's CPU kernel computes it (no special case for `input = 0`: `0 * log(0)` is NaN). Needs a float result type.",
        INPUT_OTHER,
        infer_float_binary,
        Some(grad_xlogy),
        k_xlogy,
    ),
    ew(
        "MulNoNan",
        "`x * y` elementwise with broadcasting, but 0 wherever `y` is 0 (even where `x` is infinite or NaN).",
        Schema::ms(
            &[],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_numeric,
        Some(grad_mul_no_nan),
        k_mul_no_nan,
    )
    .with_formula(&MUL_NO_NAN),
    ew(
        "SquaredDifference",
        "`(x - y)²` elementwise with broadcasting and type promotion.",
        Schema::ms(
            &[],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_numeric,
        Some(grad_squared_difference),
        k_squared_difference,
    )
    .with_formula(&SQUARED_DIFFERENCE),
    ew(
        "Atan2",
        "The angle `atan2(input, other)` of the point `(other, input)` in radians, in [-π, π], elementwise with broadcasting. Needs a float result type.",
        INPUT_OTHER,
        infer_float_binary,
        Some(grad_atan2),
        k_atan2,
    )
    .with_formula(&ATAN2),
    ew(
        "Hypot",
        "`sqrt(x1² + x2²)` elementwise with broadcasting, without overflow for large operands. Needs a float result type.",
        X1X2,
        infer_float_binary,
        Some(grad_hypot),
        k_hypot,
    )
    .with_formula(&HYPOT),
    ew(
        "BitwiseAnd",
        "Bitwise AND of two integer (or bool) tensors, elementwise with broadcasting. Not differentiable.",
        Schema::ms(
            &[Override::inputs(&["x", "y"], why::INPUT_NAMES)],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_bitwise,
        None,
        |c| k_bitwise(c, |a, b| BITWISE_AND.int(a, b)),
    )
    .with_formula(&BITWISE_AND),
    ew(
        "BitwiseOr",
        "Bitwise OR of two integer (or bool) tensors, elementwise with broadcasting. Not differentiable.",
        Schema::ms(
            &[Override::inputs(&["x", "y"], why::INPUT_NAMES)],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_bitwise,
        None,
        |c| k_bitwise(c, |a, b| BITWISE_OR.int(a, b)),
    )
    .with_formula(&BITWISE_OR),
    ew(
        "BitwiseXor",
        "Bitwise XOR of two integer (or bool) tensors, elementwise with broadcasting. Not differentiable.",
        Schema::ms(
            &[Override::inputs(&["x", "y"], why::INPUT_NAMES)],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_bitwise,
        None,
        |c| k_bitwise(c, |a, b| BITWISE_XOR.int(a, b)),
    )
    .with_formula(&BITWISE_XOR),
    ew(
        "BitwiseNot",
        "Bitwise NOT of an integer tensor (`~x = -x - 1`), or logical NOT of a bool tensor. Not differentiable.",
        Schema::ms(&[], &[("input", "The input tensor.")]),
        infer_bitwise_not,
        None,
        k_bitwise_not,
    )
    .with_formula(&BITWISE_NOT),
    ew(
        "LogicalXor",
        "Logical XOR elementwise with broadcasting: a `bool` tensor, true where exactly one operand is non-zero (operands of any dtype are read as bools).",
        INPUT_OTHER,
        infer_logical_xor,
        None,
        k_logical_xor,
    )
    .with_formula(&LOGICAL_XOR),
    ew(
        "LeftShift",
        "`x1 << x2` elementwise with broadcasting, for integers; the count is taken modulo 32 (modulo 64 for `i64`) and the result wraps to the dtype, as MindSpore's CPU kernel. Not differentiable.",
        X1X2,
        infer_shift,
        None,
        k_left_shift,
    ),
    ew(
        "RightShift",
        "`input_x >> input_y` (arithmetic shift) elementwise with broadcasting, for integers; the count is taken modulo 32 (modulo 64 for `i64`), as MindSpore's CPU kernel. Not differentiable.",
        Schema::ms(
            &[],
            &[
                ("input_x", "The integers to shift."),
                ("input_y", "The shift counts, broadcast against `input_x`."),
            ],
        ),
        infer_shift,
        None,
        k_right_shift,
    ),
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    let r = random_f64;
    let out = vec![
        Sample::new(
            "Div",
            vec![r(&[2, 3], 200, -2.0, 2.0), r(&[3], 201, 0.5, 2.0)],
        ),
        Sample::new(
            "Div",
            vec![
                r(&[2, 1], 202, -2.0, 2.0),
                ints(DType::I32, &[3], &[1, -2, 3]),
            ],
        ),
        // Quotients away from integers, both signs (the kinks of the modulos).
        Sample::new(
            "Mod",
            vec![
                KValue::Tensor(Tensor::from_f64(vec![4], vec![7.3, -7.3, 5.6, -2.9]).unwrap()),
                KValue::Tensor(Tensor::from_f64(vec![4], vec![2.0, 2.0, -1.5, 0.7]).unwrap()),
            ],
        ),
        Sample::new(
            "FloorMod",
            vec![
                KValue::Tensor(Tensor::from_f64(vec![2, 2], vec![7.3, -7.3, 5.6, -2.9]).unwrap()),
                KValue::Tensor(Tensor::from_f64(vec![2], vec![2.0, -1.5]).unwrap()),
            ],
        ),
        Sample::new(
            "TruncateMod",
            vec![
                KValue::Tensor(Tensor::from_f64(vec![4], vec![7.3, -7.3, 5.6, -2.9]).unwrap()),
                KValue::Tensor(Tensor::from_f64(vec![], vec![1.7]).unwrap()),
            ],
        ),
        Sample::new(
            "FloorDiv",
            vec![r(&[2, 3], 203, -4.0, 4.0), r(&[3], 204, 0.5, 2.0)],
        ),
        Sample::new(
            "TruncateDiv",
            vec![r(&[2, 3], 205, -4.0, 4.0), r(&[3], 206, 0.5, 2.0)],
        ),
        Sample::new(
            "DivNoNan",
            vec![r(&[2, 3], 207, -2.0, 2.0), r(&[3], 208, 0.5, 2.0)],
        ),
        Sample::new(
            "Xdivy",
            vec![r(&[2, 3], 209, 0.5, 2.0), r(&[2, 1], 210, -2.0, -0.5)],
        ),
        Sample::new(
            "Xlogy",
            vec![r(&[2, 3], 211, -2.0, 2.0), r(&[3], 212, 0.5, 2.0)],
        ),
        Sample::new(
            "MulNoNan",
            vec![r(&[2, 3], 213, -2.0, 2.0), r(&[2, 1], 214, 0.5, 2.0)],
        ),
        Sample::new(
            "SquaredDifference",
            vec![r(&[2, 3], 215, -2.0, 2.0), r(&[3], 216, -2.0, 2.0)],
        ),
        Sample::new(
            "Atan2",
            vec![r(&[2, 3], 217, -2.0, 2.0), r(&[3], 218, 0.5, 2.0)],
        ),
        Sample::new(
            "Hypot",
            vec![r(&[2, 3], 219, 0.5, 2.0), r(&[1, 3], 220, -2.0, -0.5)],
        ),
        Sample::new(
            "BitwiseAnd",
            vec![
                ints(DType::I32, &[2, 2], &[5, -3, 12, 0]),
                ints(DType::I32, &[2], &[3, 6]),
            ],
        ),
        Sample::new(
            "BitwiseOr",
            vec![
                ints(DType::I64, &[3], &[5, -3, 12]),
                ints(DType::I64, &[3], &[3, 6, 1]),
            ],
        ),
        Sample::new(
            "BitwiseXor",
            vec![
                ints(DType::U8, &[3], &[5, 200, 12]),
                ints(DType::U8, &[], &[7]),
            ],
        ),
        Sample::new("BitwiseNot", vec![ints(DType::I8, &[3], &[5, -3, 0])]),
        Sample::new(
            "LogicalXor",
            vec![
                r(&[2, 3], 221, -1.0, 1.0),
                ints(DType::I32, &[3], &[0, 1, 2]),
            ],
        ),
        Sample::new(
            "LeftShift",
            vec![
                ints(DType::I32, &[3], &[1, -8, 5]),
                ints(DType::I32, &[3], &[2, 1, 0]),
            ],
        ),
        Sample::new(
            "RightShift",
            vec![
                ints(DType::I64, &[3], &[100, -8, 5]),
                ints(DType::I64, &[1], &[2]),
            ],
        ),
    ];
    out
}
