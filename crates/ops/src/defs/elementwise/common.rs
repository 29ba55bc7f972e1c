//! What the elementwise family's primitives share: integer semantics
//! (saturating bounds, division by zero), kernels mapped over buffers, the
//! shape rules' dtype checks and promotion, and gradient helpers.

use ir::{AbsVal, AttrValue, DType};
use tensor::{Buffer, Tensor};

use crate::defs::elementwise::{as_dtype, float_of, is_float_input, make_tensor, map2};
use crate::defs::internal::broadcast_to;
use crate::infer::{infer_broadcast_binary, InferCall};
use crate::kernel::{broadcast_shape, KValue, KernelCall};
use crate::{GNode, GradBuilder, GradCall, OpError};

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
pub(crate) fn mod_f(x: f64, y: f64) -> f64 {
    let q = x / y;
    let t = (if q > 0.0 { q.floor() } else { 0.0 }) + (if q < 0.0 { q.ceil() } else { 0.0 });
    x - t * y
}

/// MindSpore's `FloorMod`, in double: `x - floor(x / y)·y`.
pub(crate) fn floor_mod_f(x: f64, y: f64) -> f64 {
    x - (x / y).floor() * y
}

/// Floor division of integers (`y != 0`).
pub(crate) fn floor_div_i(x: i64, y: i64) -> i64 {
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

pub(crate) fn broadcast_error(a: &Tensor, b: &Tensor) -> OpError {
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
pub(crate) fn binary(
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
