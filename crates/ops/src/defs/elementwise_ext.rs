//! More elementwise primitives: the division family (`Div Mod FloorDiv
//! FloorMod TruncateDiv TruncateMod DivNoNan Xdivy Xlogy MulNoNan
//! SquaredDifference Atan2 Hypot`), bitwise and logic (`BitwiseAnd BitwiseOr
//! BitwiseXor BitwiseNot LogicalXor LeftShift RightShift`), interpolation and
//! clamping (`Lerp ClampScalar ClampTensor NanToNum Heaviside`) and the
//! tensor-scalar primitives (`Muls Divs AddScalar SubScalar`). The unary
//! mathematical functions are in `elementwise_ext_math`, the activations in
//! `activations`; the helpers here serve all three.
//!
//! Dtypes and numerics are those of MindSpore 2.10's CPU kernels, checked
//! against them (`tests/ms_oracle/elementwise.py`):
//! - Operands are promoted as for `Add`; `Div` and `Divs` are true division
//!   (integer or bool operands give `f32`); `DivNoNan Xdivy Xlogy Atan2 Hypot`
//!   need a float result type.
//! - Integer division by zero saturates (`x / 0` is the dtype's maximum for
//!   `x > 0`, its minimum for `x < 0`, 0 for `0 / 0`).
//! - `Mod` is `x - t·y` with `t` the quotient rounded toward zero (a NaN
//!   quotient counting as 0, so `0 mod 0` is 0) and `FloorMod` is
//!   `x - floor(x / y)·y`, both evaluated in f64 for every dtype as
//!   MindSpore's kernels do (so `1 mod inf` is NaN); an integer result that
//!   is not finite converts as `Cast` does, to the minimum of `i32`/`i64` (0
//!   for narrower types). `TruncateMod` is C's `fmod`; `TruncateDiv` divides
//!   `f32` operands in single precision. `Xlogy` is `x * log(y)` with no special case for `x = 0`,
//!   as MindSpore's CPU kernel (`0 * log(0)` is NaN).
//! - Shifts take the count modulo the width C's shift instruction uses (32
//!   for types up to 32 bits, 64 for `i64`), as MindSpore's kernel does.
//! - `ClampScalar`/`ClampTensor`/`Hardtanh` compute `min(max(x, lo), hi)` with
//!   C++'s `std::max`/`std::min`, so a NaN element becomes `lo` (or `hi` when
//!   there is no `lo`).
//!
//! Gradients are MindSpore's bprops built from registry primitives, except
//! where MindSpore's is not the derivative (`Mod`'s `dy` uses `FloorDiv`
//! there; here `TruncateDiv`, which is). Integer, bool and predicate
//! primitives have none.

use ir::{AbsVal, AttrValue, DType, Shape};
use tensor::{Buffer, Tensor};

use crate::defs::elementwise::{
    as_dtype, float_of, float_to_int, is_float_input, make_tensor, map2,
};
use crate::defs::internal::broadcast_to;
use crate::infer::{broadcast_shapes, infer_broadcast_binary, promote, result, InferCall, InferFn};
use crate::kernel::{broadcast_shape, KValue, KernelCall, KernelFn};
use crate::{
    AttrDefault, AttrType, Category, GNode, GradBuilder, GradCall, GradFn, OpDef, OpError,
    OutputDef, ParamDef,
};

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

const XY: &[ParamDef] = &[
    ParamDef::input("x", "The first operand: a tensor or a scalar."),
    ParamDef::input(
        "y",
        "The second operand, broadcast against `x` (NumPy rules).",
    ),
];

const INPUT_OTHER: &[ParamDef] = &[
    ParamDef::input("input", "The first operand: a tensor or a scalar."),
    ParamDef::input(
        "other",
        "The second operand, broadcast against `input` (NumPy rules).",
    ),
];

const X1X2: &[ParamDef] = &[
    ParamDef::input("x1", "The first operand: a tensor or a scalar."),
    ParamDef::input(
        "x2",
        "The second operand, broadcast against `x1` (NumPy rules).",
    ),
];

const INPUT: &[ParamDef] = &[ParamDef::input("input", "The input tensor.")];

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

fn k_div(c: &KernelCall) -> Result<KValue, OpError> {
    binary(c, float_of(c.promoted()), |x, y| x / y, |_, _| 0)
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
        |x, y| (x / y).floor(),
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
        |x, y| if y == 0.0 { 0.0 } else { x / y },
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
        |x, y| if y == 0.0 { 0.0 } else { x * y },
        |x, y| x.wrapping_mul(y),
    )
}

fn k_squared_difference(c: &KernelCall) -> Result<KValue, OpError> {
    binary(
        c,
        c.promoted(),
        |x, y| (x - y) * (x - y),
        |x, y| {
            let d = x.wrapping_sub(y);
            d.wrapping_mul(d)
        },
    )
}

fn k_atan2(c: &KernelCall) -> Result<KValue, OpError> {
    binary(c, c.promoted(), f64::atan2, |_, _| 0)
}

fn k_hypot(c: &KernelCall) -> Result<KValue, OpError> {
    binary(c, c.promoted(), f64::hypot, |_, _| 0)
}

fn k_bitwise(c: &KernelCall, f: fn(i64, i64) -> i64) -> Result<KValue, OpError> {
    binary(c, c.promoted(), |_, _| f64::NAN, f)
}

fn k_bitwise_not(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let t = if x.dtype().is_bool() {
        predicate_kernel(x, |v| v == 0.0, |v| v == 0)?
    } else {
        unary_kernel(x, x.dtype(), |v| v, |v| !v)?
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
        |x, y| x * y,
        |x, y| x.wrapping_mul(y),
    )
}

fn k_divs(c: &KernelCall) -> Result<KValue, OpError> {
    binary(c, float_of(tensor_scalar_dtype(c)), |x, y| x / y, |_, _| 0)
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

pub(crate) const fn ew(
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
        "Div",
        "Divides `input` by `other` elementwise, `input / other`: true division (integer and bool operands give `f32`), with broadcasting and type promotion. MindSpore's `/` on tensors.",
        INPUT_OTHER,
        infer_div,
        Some(|b, c| grad_div(b, c, "Div")),
        k_div,
    ),
    ew(
        "Mod",
        "The remainder of `x / y` with the sign of `x` (truncated division), `x - trunc(x / y) * y`, elementwise with broadcasting. Integer `x mod 0` gives the minimum of `i32`/`i64` (0 for narrower types), and `0 mod 0` gives 0, as MindSpore's CPU kernel.",
        XY,
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
    ),
    ew(
        "FloorMod",
        "The remainder of floor division, with the sign of `y`: `x - floor(x / y) * y`, elementwise with broadcasting. Integer `x mod 0` gives the minimum of `i32`/`i64` (0 for narrower types), as MindSpore's CPU kernel.",
        XY,
        infer_numeric,
        Some(|b, c| grad_mod(b, c, "FloorDiv")),
        k_floor_mod,
    ),
    ew(
        "TruncateDiv",
        "Division rounded toward zero, `trunc(x / y)`, elementwise with broadcasting; an integer `x / 0` saturates to the dtype's maximum (x > 0) or minimum (x < 0), 0 for `0 / 0`. Not differentiable.",
        XY,
        infer_numeric,
        None,
        k_truncate_div,
    ),
    ew(
        "TruncateMod",
        "The remainder of truncated division, with the sign of `x` (C's `fmod`), elementwise with broadcasting; an integer `x mod 0` gives 0.",
        XY,
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
    ),
    ew(
        "Xdivy",
        "`x / y` elementwise with broadcasting, but 0 wherever `x` is 0. Needs a float result type.",
        XY,
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
        XY,
        infer_numeric,
        Some(grad_mul_no_nan),
        k_mul_no_nan,
    ),
    ew(
        "SquaredDifference",
        "`(x - y)²` elementwise with broadcasting and type promotion.",
        XY,
        infer_numeric,
        Some(grad_squared_difference),
        k_squared_difference,
    ),
    ew(
        "Atan2",
        "The angle `atan2(input, other)` of the point `(other, input)` in radians, in [-π, π], elementwise with broadcasting. Needs a float result type.",
        INPUT_OTHER,
        infer_float_binary,
        Some(grad_atan2),
        k_atan2,
    ),
    ew(
        "Hypot",
        "`sqrt(x1² + x2²)` elementwise with broadcasting, without overflow for large operands. Needs a float result type.",
        X1X2,
        infer_float_binary,
        Some(grad_hypot),
        k_hypot,
    ),
    ew(
        "BitwiseAnd",
        "Bitwise AND of two integer (or bool) tensors, elementwise with broadcasting. Not differentiable.",
        XY,
        infer_bitwise,
        None,
        |c| k_bitwise(c, |a, b| a & b),
    ),
    ew(
        "BitwiseOr",
        "Bitwise OR of two integer (or bool) tensors, elementwise with broadcasting. Not differentiable.",
        XY,
        infer_bitwise,
        None,
        |c| k_bitwise(c, |a, b| a | b),
    ),
    ew(
        "BitwiseXor",
        "Bitwise XOR of two integer (or bool) tensors, elementwise with broadcasting. Not differentiable.",
        XY,
        infer_bitwise,
        None,
        |c| k_bitwise(c, |a, b| a ^ b),
    ),
    ew(
        "BitwiseNot",
        "Bitwise NOT of an integer tensor (`~x = -x - 1`), or logical NOT of a bool tensor. Not differentiable.",
        INPUT,
        infer_bitwise_not,
        None,
        k_bitwise_not,
    ),
    ew(
        "LogicalXor",
        "Logical XOR elementwise with broadcasting: a `bool` tensor, true where exactly one operand is non-zero (operands of any dtype are read as bools).",
        INPUT_OTHER,
        infer_logical_xor,
        None,
        k_logical_xor,
    ),
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
        &[
            ParamDef::input("input_x", "The integers to shift."),
            ParamDef::input(
                "input_y",
                "The shift counts, broadcast against `input_x`.",
            ),
        ],
        infer_shift,
        None,
        k_right_shift,
    ),
    ew(
        "Lerp",
        "Linear interpolation `input + weight * (end - input)`, elementwise with the three broadcast together. `input` and `end` are float tensors of one dtype; `weight` a float tensor or number.",
        &[
            ParamDef::input("input", "The start points: a float tensor."),
            ParamDef::input("end", "The end points, of the dtype of `input`."),
            ParamDef::input(
                "weight",
                "The interpolation weight: a float tensor broadcast against the others, or a float number.",
            ),
        ],
        infer_lerp,
        Some(grad_lerp),
        k_lerp,
    ),
    ew(
        "ClampScalar",
        "Clamps every element to `[min, max]`: `min(max(x, min), max)`, either bound optional (at least one is needed). A float bound makes an integer input `f32`. NaN becomes `min` (or `max` when there is no `min`), as MindSpore's CPU kernel; if `min > max` every element is `max`.",
        &[
            ParamDef::input("input", "The tensor to clamp."),
            ParamDef::attr(
                "min",
                AttrType::Number,
                Some(AttrDefault::None),
                "The lower bound, or `none` for none.",
            ),
            ParamDef::attr(
                "max",
                AttrType::Number,
                Some(AttrDefault::None),
                "The upper bound, or `none` for none.",
            ),
        ],
        infer_clamp_scalar,
        Some(grad_clamp_scalar),
        k_clamp_scalar,
    ),
    ew(
        "ClampTensor",
        "Clamps `input` elementwise to `[min, max]` given as tensors, the three broadcast together and promoted to one dtype: `min(max(input, min), max)`. NaN becomes `min`; where `min > max` the result is `max`. Both bounds are needed here (use `ClampScalar`, `Maximum` or `Minimum` for one).",
        &[
            ParamDef::input("input", "The tensor to clamp."),
            ParamDef::input("min", "The lower bounds, broadcast against `input`."),
            ParamDef::input("max", "The upper bounds, broadcast against `input`."),
        ],
        infer_clamp_tensor,
        Some(grad_clamp_tensor),
        k_clamp_tensor,
    ),
    ew(
        "NanToNum",
        "Replaces NaN by `nan` (default 0), +inf by `posinf` (default the dtype's largest finite value) and -inf by `neginf` (default its lowest), in a float tensor.",
        &[
            ParamDef::input("input", "A float tensor."),
            ParamDef::attr(
                "nan",
                AttrType::Float,
                Some(AttrDefault::None),
                "The value for NaN; `none` means 0.",
            ),
            ParamDef::attr(
                "posinf",
                AttrType::Float,
                Some(AttrDefault::None),
                "The value for +inf; `none` means the dtype's largest finite value.",
            ),
            ParamDef::attr(
                "neginf",
                AttrType::Float,
                Some(AttrDefault::None),
                "The value for -inf; `none` means the dtype's lowest finite value.",
            ),
        ],
        infer_nan_to_num,
        Some(grad_nan_to_num),
        k_nan_to_num,
    ),
    ew(
        "Heaviside",
        "The Heaviside step function: 0 where `x < 0` (and where `x` is NaN), `values` where `x == 0`, 1 where `x > 0`; `x` and `values` have one dtype and broadcast.",
        &[
            ParamDef::input("x", "The input: a numeric tensor."),
            ParamDef::input(
                "values",
                "The values where `x` is 0, of the dtype of `x`, broadcast against it.",
            ),
        ],
        infer_heaviside,
        Some(grad_heaviside),
        k_heaviside,
    ),
    ew(
        "Muls",
        "Multiplies a tensor by a number, `input * other`. The number yields to the tensor's dtype unless it is of a higher kind (an integer tensor times a float gives `f32`).",
        &[
            ParamDef::input("input", "The tensor."),
            ParamDef::input("other", "The number to multiply by."),
        ],
        |call| infer_tensor_scalar(call, false),
        Some(grad_muls),
        k_muls,
    ),
    ew(
        "Divs",
        "Divides a tensor by a number, `input / other` (true division: an integer tensor gives `f32`).",
        &[
            ParamDef::input("input", "The tensor."),
            ParamDef::input("other", "The number to divide by."),
        ],
        |call| infer_tensor_scalar(call, true),
        Some(grad_divs),
        k_divs,
    ),
    ew(
        "AddScalar",
        "Adds a scaled number to a tensor, `input + alpha * other`. The number yields to the tensor's dtype unless it is of a higher kind; a float `alpha` needs a float result.",
        &[
            ParamDef::input("input", "The tensor."),
            ParamDef::input("other", "The number to add."),
            ParamDef::attr(
                "alpha",
                AttrType::Number,
                Some(AttrDefault::Int(1)),
                "The scale of `other`. Default 1.",
            ),
        ],
        |call| infer_tensor_scalar(call, false),
        Some(|b, c| grad_add_sub_scalar(b, c, 1.0)),
        |c| k_add_scalar(c, 1.0),
    ),
    ew(
        "SubScalar",
        "Subtracts a scaled number from a tensor, `input - alpha * other`. The number yields to the tensor's dtype unless it is of a higher kind; a float `alpha` needs a float result.",
        &[
            ParamDef::input("input", "The tensor."),
            ParamDef::input("other", "The number to subtract."),
            ParamDef::attr(
                "alpha",
                AttrType::Number,
                Some(AttrDefault::Int(1)),
                "The scale of `other`. Default 1.",
            ),
        ],
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
