//! MindSpore's scalar primitives: arithmetic, comparisons and conversions of
//! Python numbers (the values graphs compute from shapes and literals):
//! ScalarAdd, ScalarSub, ScalarMul, ScalarDiv, ScalarFloorDiv, ScalarMod,
//! ScalarPow, ScalarMax, ScalarMin, ScalarEq, ScalarLt, ScalarGt, ScalarLe,
//! ScalarGe, bit_and, bit_or, ScalarUadd, ScalarUsub, ScalarLog, ScalarBool,
//! bool_not, BoolNot, ScalarCast, ScalarToTensor, TensorToScalar.
//!
//! Their inputs are scalars (`AbsVal::Scalar`; kernels see rank-0 tensors),
//! and so are their results, whose value the shape rule computes when every
//! input's value is known, so that shapes computed from shapes stay known.
//! Semantics are those of MindSpore 2.10's graph-mode CPU kernels:
//! - the result dtype of arithmetic is the "higher" operand's: a float over an
//!   int (bool counts as `i32`), the wider within a kind; `ScalarDiv` and
//!   `ScalarLog` always give `f32`; comparisons give bool;
//! - `ScalarFloorDiv` and `ScalarMod` round toward negative infinity as Python
//!   does (`7 // -2 = -4`, `7 % -2 = -1`), and dividing by zero is an error;
//! - integer arithmetic that overflows its dtype is an error; an integer to a
//!   negative integer power is 0 (unless the base is ±1);
//! - `ScalarEq` calls numbers equal when they differ by less than `f64`'s
//!   epsilon (and infinities of one sign equal).
//!
//! Gradients are MindSpore's scalar bprops (`grad_scalar_ops.cc`,
//! `grad_implementations.py`); integer and bool operands get none.

use crate::schema::{why, Override, Schema};
use crate::Traits;
use ir::{AbsVal, AttrValue, DType, ScalarConst};
use tensor::Tensor;

use crate::defs::elementwise::is_float_input;
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef,
};

// ---------------------------------------------------------------------------
// Numbers.

/// A scalar's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Num {
    pub(crate) fn f(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(x) => x,
            Num::Bool(b) => f64::from(u8::from(b)),
        }
    }

    /// As an integer (floats truncate toward zero, as a C cast).
    pub(crate) fn i(self) -> i64 {
        match self {
            Num::Int(i) => i,
            Num::Float(x) => x as i64,
            Num::Bool(b) => i64::from(b),
        }
    }

    pub(crate) fn truthy(self) -> bool {
        match self {
            Num::Int(i) => i != 0,
            Num::Float(x) => x != 0.0,
            Num::Bool(b) => b,
        }
    }

    pub(crate) fn from_const(c: ScalarConst) -> Num {
        match c {
            ScalarConst::Int(i) => Num::Int(i),
            ScalarConst::Float(x) => Num::Float(x),
            ScalarConst::Bool(b) => Num::Bool(b),
        }
    }

    pub(crate) fn to_const(self) -> ScalarConst {
        match self {
            Num::Int(i) => ScalarConst::Int(i),
            Num::Float(x) => ScalarConst::Float(x),
            Num::Bool(b) => ScalarConst::Bool(b),
        }
    }

    /// The first element of `t`, as a number of `t`'s kind.
    pub(crate) fn of_tensor(t: &Tensor) -> Option<Num> {
        let v = *t.to_f64_vec().first()?;
        Some(Num::of(t.dtype(), v))
    }

    fn of(dtype: DType, v: f64) -> Num {
        if dtype.is_float() {
            Num::Float(v)
        } else if dtype.is_bool() {
            Num::Bool(v != 0.0)
        } else {
            Num::Int(v as i64)
        }
    }

    /// Converted to `dtype` with a cast's semantics (floats round to `f32`,
    /// truncate toward zero to ints; integers wrap).
    pub(crate) fn cast(self, dtype: DType) -> Num {
        if dtype.is_bool() {
            Num::Bool(self.truthy())
        } else if dtype.is_float() {
            Num::Float(round_to(dtype, self.f()))
        } else {
            Num::Int(dtype.wrap_int(self.i()))
        }
    }

    pub(crate) fn tensor(self, dtype: DType) -> Tensor {
        match self {
            Num::Int(i) => Tensor::from_i64(DType::I64, vec![], vec![i])
                .expect("one element")
                .cast(dtype),
            other => Tensor::scalar(dtype, other.f()),
        }
    }
}

fn round_to(dtype: DType, x: f64) -> f64 {
    if dtype == DType::F64 {
        x
    } else {
        Tensor::scalar(dtype, x).to_f64_vec()[0]
    }
}

/// The dtype two scalar operands of an arithmetic primitive compute in: a
/// float over an int, the wider within a kind (bool counts as `i32`).
pub(crate) fn scalar_promote(a: DType, b: DType) -> DType {
    let norm = |d: DType| if d.is_bool() { DType::I32 } else { d };
    let (a, b) = (norm(a), norm(b));
    match (a.is_float(), b.is_float()) {
        (true, false) => a,
        (false, true) => b,
        _ if a.size_of() >= b.size_of() => a,
        _ => b,
    }
}

// ---------------------------------------------------------------------------
// Operand access.

/// Scalar input `i`: its dtype, its value when known, and whether it is weak.
/// Rank-0 tensors (how kernels and eager calls see scalars) are accepted.
pub(crate) fn scalar_in(call: &InferCall, i: usize) -> Result<(DType, Option<Num>, bool), OpError> {
    match &call.inputs[i] {
        AbsVal::Scalar { dtype, value, weak } => Ok((*dtype, value.map(Num::from_const), *weak)),
        AbsVal::Tensor { dtype, shape } if shape.rank().is_none_or(|r| r == 0) => {
            Ok((*dtype, None, false))
        }
        other => Err(OpError::input(
            i,
            format!(
                "`{}` takes a number (a scalar) as `{}`, not {other}",
                call.op.name,
                call.input_name(i)
            ),
        )),
    }
}

/// The abstract scalar result of `dtype`, with `value` when known.
pub(crate) fn scalar_out(dtype: DType, value: Option<Num>, weak: bool) -> AbsVal {
    AbsVal::Scalar {
        dtype,
        value: value.map(|v| v.cast(dtype).to_const()),
        weak,
    }
}

/// Kernel input `i` as a number and its dtype.
pub(crate) fn num_arg(c: &KernelCall, i: usize) -> Result<(DType, Num), OpError> {
    let t = c.tensor(i)?;
    let v = Num::of_tensor(t).ok_or_else(|| {
        OpError::input(
            i,
            format!("input {i} must be a number, not an empty tensor"),
        )
    })?;
    Ok((t.dtype(), v))
}

pub(crate) fn num_out(dtype: DType, v: Num) -> KValue {
    KValue::Tensor(v.cast(dtype).tensor(dtype))
}

// ---------------------------------------------------------------------------
// Binary primitives.

#[derive(Debug, Clone, Copy, PartialEq)]
enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    Max,
    Min,
    Eq,
    Lt,
    Gt,
    Le,
    Ge,
    BitAnd,
    BitOr,
}

fn bin_of(op: &str) -> Bin {
    match op {
        "ScalarAdd" => Bin::Add,
        "ScalarSub" => Bin::Sub,
        "ScalarMul" => Bin::Mul,
        "ScalarDiv" => Bin::Div,
        "ScalarFloorDiv" => Bin::FloorDiv,
        "ScalarMod" => Bin::Mod,
        "ScalarPow" => Bin::Pow,
        "ScalarMax" => Bin::Max,
        "ScalarMin" => Bin::Min,
        "ScalarEq" => Bin::Eq,
        "ScalarLt" => Bin::Lt,
        "ScalarGt" => Bin::Gt,
        "ScalarLe" => Bin::Le,
        "ScalarGe" => Bin::Ge,
        "bit_and" => Bin::BitAnd,
        _ => Bin::BitOr,
    }
}

/// The result dtype of `op` on operands of dtypes `a` and `b`.
fn bin_dtype(op: &str, a: DType, b: DType) -> Result<DType, OpError> {
    Ok(match bin_of(op) {
        Bin::Div => DType::F32,
        Bin::Eq | Bin::Lt | Bin::Gt | Bin::Le | Bin::Ge => DType::Bool,
        Bin::BitAnd | Bin::BitOr => {
            for (i, d) in [a, b].into_iter().enumerate() {
                if !d.is_int() {
                    return Err(OpError::input(
                        i,
                        format!(
                            "`{op}` needs integer operands, but `{}` is {d}",
                            ["x", "y"][i]
                        ),
                    ));
                }
            }
            scalar_promote(a, b)
        }
        _ => scalar_promote(a, b),
    })
}

/// Python's floor division and modulo of integers.
fn floor_div_mod(x: i64, y: i64) -> (i64, i64) {
    let (q, r) = (x.wrapping_div(y), x.wrapping_rem(y));
    if r != 0 && ((r < 0) != (y < 0)) {
        (q - 1, r + y)
    } else {
        (q, r)
    }
}

/// An integer power; a negative exponent gives 0 unless the base is ±1.
fn int_pow(a: i64, b: i64) -> Option<i64> {
    if b >= 0 {
        a.checked_pow(u32::try_from(b).ok()?)
    } else {
        Some(match a {
            1 => 1,
            -1 if b % 2 == 0 => 1,
            -1 => -1,
            _ => 0,
        })
    }
}

/// `f` computed in `f32` or `f64` as `dtype` says.
fn float_op(
    dtype: DType,
    x: f64,
    y: f64,
    f32op: fn(f32, f32) -> f32,
    f64op: fn(f64, f64) -> f64,
) -> f64 {
    if dtype == DType::F64 {
        f64op(x, y)
    } else {
        f64::from(f32op(x as f32, y as f32))
    }
}

/// Evaluates a binary scalar primitive; the error says what went wrong.
fn eval_bin(op: &str, out: DType, x: Num, y: Num) -> Result<Num, String> {
    let bin = bin_of(op);
    let zero_div = || format!("`{op}`: division by zero");
    match bin {
        Bin::Eq => {
            let (a, b) = (x.f(), y.f());
            return Ok(Num::Bool(if a.is_infinite() && b.is_infinite() {
                (a > 0.0) == (b > 0.0)
            } else {
                (a - b).abs() < f64::EPSILON
            }));
        }
        Bin::Lt => return Ok(Num::Bool(x.f() < y.f())),
        Bin::Gt => return Ok(Num::Bool(x.f() > y.f())),
        Bin::Le => return Ok(Num::Bool(x.f() <= y.f())),
        Bin::Ge => return Ok(Num::Bool(x.f() >= y.f())),
        Bin::Div => {
            if y.f() == 0.0 {
                return Err(zero_div());
            }
            return Ok(Num::Float(float_op(
                DType::F32,
                x.f(),
                y.f(),
                |a, b| a / b,
                |a, b| a / b,
            )));
        }
        _ => {}
    }
    if out.is_float() {
        let (a, b) = (x.f(), y.f());
        if matches!(bin, Bin::FloorDiv | Bin::Mod) && b == 0.0 {
            return Err(zero_div());
        }
        let v = match bin {
            Bin::Add => float_op(out, a, b, |p, q| p + q, |p, q| p + q),
            Bin::Sub => float_op(out, a, b, |p, q| p - q, |p, q| p - q),
            Bin::Mul => float_op(out, a, b, |p, q| p * q, |p, q| p * q),
            Bin::FloorDiv => float_op(out, a, b, |p, q| (p / q).floor(), |p, q| (p / q).floor()),
            Bin::Mod => float_op(
                out,
                a,
                b,
                |p, q| p - (p / q).floor() * q,
                |p, q| p - (p / q).floor() * q,
            ),
            Bin::Pow => float_op(out, a, b, f32::powf, f64::powf),
            Bin::Max => {
                if b > a {
                    b
                } else {
                    a
                }
            }
            _ => {
                if b < a {
                    b
                } else {
                    a
                }
            }
        };
        return Ok(Num::Float(round_to(out, v)));
    }
    let (a, b) = (x.i(), y.i());
    let overflow = || format!("`{op}`: {a} and {b} overflow {out}");
    let v = match bin {
        Bin::Add => a.checked_add(b),
        Bin::Sub => a.checked_sub(b),
        Bin::Mul => a.checked_mul(b),
        Bin::FloorDiv | Bin::Mod => {
            if b == 0 {
                return Err(zero_div());
            }
            if a == i64::MIN && b == -1 {
                None
            } else {
                let (q, r) = floor_div_mod(a, b);
                Some(if bin == Bin::FloorDiv { q } else { r })
            }
        }
        Bin::Pow => int_pow(a, b),
        Bin::Max => Some(a.max(b)),
        Bin::Min => Some(a.min(b)),
        Bin::BitAnd => Some(a & b),
        _ => Some(a | b),
    }
    .ok_or_else(overflow)?;
    if out.wrap_int(v) != v {
        return Err(overflow());
    }
    Ok(Num::Int(v))
}

fn infer_bin(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (da, va, wa) = scalar_in(call, 0)?;
    let (db, vb, wb) = scalar_in(call, 1)?;
    let out = bin_dtype(op, da, db)?;
    let value = match (va, vb) {
        (Some(x), Some(y)) => Some(eval_bin(op, out, x, y).map_err(|m| OpError::input(1, m))?),
        _ => None,
    };
    Ok(scalar_out(out, value, wa && wb))
}

fn k_bin(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    let (da, x) = num_arg(c, 0)?;
    let (db, y) = num_arg(c, 1)?;
    let out = bin_dtype(op, da, db)?;
    let v = eval_bin(op, out, x, y).map_err(|m| OpError::input(1, m))?;
    Ok(num_out(out, v))
}

fn prim(b: &mut dyn GradBuilder, name: &str, inputs: &[GNode]) -> GNode {
    b.prim(name, inputs, vec![])
}

fn grad_bin(b: &mut dyn GradBuilder, c: &GradCall, op: &str) -> Vec<Option<GNode>> {
    let (x, y, out, dout) = (c.inputs[0], c.inputs[1], c.out, c.dout);
    let (fx, fy) = (is_float_input(c, 0), is_float_input(c, 1));
    let mut dx = None;
    let mut dy = None;
    match op {
        "ScalarAdd" => {
            dx = fx.then_some(dout);
            dy = fy.then_some(dout);
        }
        "ScalarSub" => {
            dx = fx.then_some(dout);
            dy = fy.then(|| prim(b, "ScalarUsub", &[dout]));
        }
        "ScalarMul" => {
            dx = fx.then(|| prim(b, "ScalarMul", &[y, dout]));
            dy = fy.then(|| prim(b, "ScalarMul", &[x, dout]));
        }
        "ScalarDiv" => {
            let q = prim(b, "ScalarDiv", &[dout, y]);
            dx = fx.then_some(q);
            dy = fy.then(|| {
                let t = prim(b, "ScalarMul", &[q, out]);
                prim(b, "ScalarUsub", &[t])
            });
        }
        "ScalarMod" => {
            // d(x mod y) = dx − floor(x / y)·dy. (MindSpore's bprop divides the
            // second term by y again, which is not the derivative.)
            dx = fx.then_some(dout);
            dy = fy.then(|| {
                let q = prim(b, "ScalarFloorDiv", &[x, y]);
                let t = prim(b, "ScalarMul", &[dout, q]);
                prim(b, "ScalarUsub", &[t])
            });
        }
        "ScalarPow" => {
            // bprop_scalar_pow: (dout·y·x^(y−1), dout·log(x)·out).
            dx = fx.then(|| {
                let one = b.int(1);
                let ym1 = prim(b, "ScalarSub", &[y, one]);
                let p = prim(b, "ScalarPow", &[x, ym1]);
                let t = prim(b, "ScalarMul", &[y, p]);
                prim(b, "ScalarMul", &[dout, t])
            });
            dy = fy.then(|| {
                let l = prim(b, "ScalarLog", &[x]);
                let t = prim(b, "ScalarMul", &[l, out]);
                prim(b, "ScalarMul", &[dout, t])
            });
        }
        _ => {}
    }
    vec![dx, dy]
}

// ---------------------------------------------------------------------------
// Unary primitives.

fn unary_dtype(op: &str, d: DType) -> Result<DType, OpError> {
    match op {
        "ScalarLog" => Ok(DType::F32),
        "ScalarBool" => Ok(DType::Bool),
        "bool_not" | "BoolNot" => {
            if d.is_bool() {
                Ok(DType::Bool)
            } else {
                Err(OpError::input(
                    0,
                    format!("`{op}` needs a bool, but `x` is {d}"),
                ))
            }
        }
        _ => {
            if d.is_bool() {
                Err(OpError::input(
                    0,
                    format!("`{op}` needs a number, but `x` is bool"),
                ))
            } else {
                Ok(d)
            }
        }
    }
}

fn eval_unary(op: &str, out: DType, x: Num) -> Result<Num, String> {
    Ok(match op {
        "ScalarLog" => Num::Float(f64::from((x.f() as f32).ln())),
        "ScalarBool" => Num::Bool(x.truthy()),
        "bool_not" | "BoolNot" => Num::Bool(!x.truthy()),
        "ScalarUsub" => match x {
            Num::Float(v) => Num::Float(-v),
            other => {
                let v = other.i();
                let r = v.checked_neg().filter(|&r| out.wrap_int(r) == r);
                Num::Int(r.ok_or_else(|| format!("`ScalarUsub`: -({v}) overflows {out}"))?)
            }
        },
        _ => x,
    })
}

fn infer_unary(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (d, v, w) = scalar_in(call, 0)?;
    let out = unary_dtype(op, d)?;
    let value = match v {
        Some(x) => Some(eval_unary(op, out, x).map_err(|m| OpError::input(0, m))?),
        None => None,
    };
    Ok(scalar_out(out, value, w))
}

fn k_unary(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    let (d, x) = num_arg(c, 0)?;
    let out = unary_dtype(op, d)?;
    let v = eval_unary(op, out, x).map_err(|m| OpError::input(0, m))?;
    Ok(num_out(out, v))
}

// ---------------------------------------------------------------------------
// Conversions: ScalarCast, ScalarToTensor, TensorToScalar.

fn check_cast_target(d: DType) -> Result<(), OpError> {
    if matches!(d, DType::I64 | DType::F32 | DType::F64 | DType::Bool) {
        Ok(())
    } else {
        Err(OpError::attr(
            "input_y",
            format!("`ScalarCast` converts to i64, f32, f64 or bool, not {d}"),
        ))
    }
}

fn infer_scalar_cast(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (_, v, w) = scalar_in(call, 0)?;
    let to = call.attrs.dtype("input_y");
    check_cast_target(to)?;
    Ok(scalar_out(to, v, w))
}

fn k_scalar_cast(c: &KernelCall) -> Result<KValue, OpError> {
    let (_, x) = num_arg(c, 0)?;
    let to = c.attrs.dtype("input_y");
    check_cast_target(to)?;
    Ok(num_out(to, x))
}

fn scalar_to_tensor_dtype(call_dtype: Option<DType>, input: DType) -> DType {
    call_dtype.unwrap_or(input)
}

fn infer_scalar_to_tensor(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (d, _, _) = scalar_in(call, 0)?;
    let dtype = scalar_to_tensor_dtype(
        crate::defs::reduce::aggregate::opt_dtype(call.attrs, "dtype"),
        d,
    );
    Ok(AbsVal::tensor(dtype, &[]))
}

fn k_scalar_to_tensor(c: &KernelCall) -> Result<KValue, OpError> {
    let (d, x) = num_arg(c, 0)?;
    let dtype = scalar_to_tensor_dtype(
        crate::defs::reduce::aggregate::opt_dtype(c.attrs, "dtype"),
        d,
    );
    Ok(num_out(dtype, x))
}

fn infer_tensor_to_scalar(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, shape) = call.tensor(0)?;
    if let Some(n) = shape.numel() {
        if n != 1 {
            return Err(OpError::input(
                0,
                format!(
                    "`TensorToScalar` needs a tensor of one element (shape [] or [1]), got {}",
                    call.inputs[0]
                ),
            ));
        }
    }
    Ok(AbsVal::scalar(dtype))
}

fn k_tensor_to_scalar(c: &KernelCall) -> Result<KValue, OpError> {
    let t = c.tensor(0)?;
    if t.numel() != 1 {
        return Err(OpError::input(
            0,
            format!(
                "`TensorToScalar` needs a tensor of one element, got shape {:?}",
                t.shape()
            ),
        ));
    }
    let (d, x) = num_arg(c, 0)?;
    Ok(num_out(d, x))
}

// ---------------------------------------------------------------------------
// The table.

const XY: Schema = Schema::ms(
    &[
        Override::input("x", why::TO_INPUT),
        Override::input("y", why::TO_INPUT),
    ],
    &[
        ("x", "The first operand: a number."),
        ("y", "The second operand: a number."),
    ],
);

const X: Schema = Schema::ms(
    &[Override::input("x", why::TO_INPUT)],
    &[("x", "A number.")],
);

macro_rules! bin_op {
    ($name:literal, $doc:literal, grad) => {
        OpDef {
            name: $name,
            category: Category::Elementwise,
            doc: $doc,
            schema: XY,
            variadic: false,
            output: OutputDef::Single,
            infer: infer_bin,
            grad: Some(|b, c| grad_bin(b, c, $name)),
            kernel: Some(|c| k_bin(c, $name)),
            traits: Traits::NONE,
        }
    };
    ($name:literal, $doc:literal) => {
        OpDef {
            name: $name,
            category: Category::Elementwise,
            doc: $doc,
            schema: XY,
            variadic: false,
            output: OutputDef::Single,
            infer: infer_bin,
            grad: None,
            kernel: Some(|c| k_bin(c, $name)),
            traits: Traits::NONE,
        }
    };
}

macro_rules! unary_op {
    ($name:literal, $doc:literal, $grad:expr) => {
        OpDef {
            name: $name,
            category: Category::Elementwise,
            doc: $doc,
            schema: X,
            variadic: false,
            output: OutputDef::Single,
            infer: infer_unary,
            grad: $grad,
            kernel: Some(|c| k_unary(c, $name)),
            traits: Traits::NONE,
        }
    };
}

pub const OPS: &[OpDef] = &[
    bin_op!("ScalarAdd", "`x + y` of two numbers; the result has the higher dtype (a float over an int, the wider within a kind). Integer overflow is an error.", grad),
    bin_op!("ScalarSub", "`x - y` of two numbers; the result has the higher dtype. Integer overflow is an error.", grad),
    bin_op!("ScalarMul", "`x * y` of two numbers; the result has the higher dtype. Integer overflow is an error.", grad),
    bin_op!("ScalarDiv", "`x / y` of two numbers, true division: always an `f32`. Dividing by zero is an error.", grad),
    bin_op!("ScalarFloorDiv", "`x // y` of two numbers, rounding toward negative infinity as Python (`7 // -2 = -4`); the result has the higher dtype. Dividing by zero is an error."),
    bin_op!("ScalarMod", "`x % y` of two numbers with the sign of `y`, as Python (`7 % -2 = -1`); the result has the higher dtype. A zero `y` is an error.", grad),
    bin_op!("ScalarPow", "`x ** y` of two numbers with the higher dtype; an integer to a negative integer power is 0 (unless `x` is ±1).", grad),
    bin_op!("ScalarMax", "The larger of two numbers, in the higher dtype."),
    bin_op!("ScalarMin", "The smaller of two numbers, in the higher dtype."),
    bin_op!("ScalarEq", "Whether two numbers are equal (they differ by less than `f64` epsilon; infinities of one sign are equal): a bool."),
    bin_op!("ScalarLt", "Whether `x < y`, comparing as `f64`: a bool."),
    bin_op!("ScalarGt", "Whether `x > y`, comparing as `f64`: a bool."),
    bin_op!("ScalarLe", "Whether `x <= y`, comparing as `f64`: a bool."),
    bin_op!("ScalarGe", "Whether `x >= y`, comparing as `f64`: a bool."),
    bin_op!("bit_and", "The bitwise AND `x & y` of two integers."),
    bin_op!("bit_or", "The bitwise OR `x | y` of two integers."),
    unary_op!(
        "ScalarUadd",
        "`+x`: the number unchanged.",
        Some(|_, c| vec![is_float_input(c, 0).then_some(c.dout)])
    ),
    unary_op!(
        "ScalarUsub",
        "`-x`; negating the smallest integer of its dtype is an error.",
        Some(|b, c| vec![is_float_input(c, 0).then(|| prim(b, "ScalarUsub", &[c.dout]))])
    ),
    unary_op!(
        "ScalarLog",
        "The natural logarithm of a number, as an `f32`.",
        Some(|b, c| vec![is_float_input(c, 0).then(|| prim(b, "ScalarDiv", &[c.dout, c.inputs[0]]))])
    ),
    unary_op!("ScalarBool", "`bool(x)`: whether the number is non-zero.", None),
    unary_op!("bool_not", "`not x` of a bool.", None)
    .with_formula(&crate::defs::elementwise::LOGICAL_NOT),
    unary_op!("BoolNot", "`not x` of a bool (the primitive-function form of `bool_not`).", None)
    .with_formula(&crate::defs::elementwise::LOGICAL_NOT),
    OpDef {
        name: "ScalarCast",
        category: Category::Elementwise,
        doc: "Converts a number to `input_y` (`i64`, `f32`, `f64` or `bool`): floats truncate toward zero to ints, non-zero is `true`.",
        schema: Schema::ms(
            &[Override::input("input_x", why::TO_INPUT)],
            &[
                ("input_x", "The number to convert."),
                ("input_y", "The dtype of the result: `i64`, `f32`, `f64` or `bool`."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_scalar_cast,
        grad: Some(|b, c| {
            // bprop: the sensitivity cast back to the input's dtype.
            let to = c.attrs.dtype("input_y");
            let dx = match &c.input_values[0] {
                _ if !to.is_float() => None,
                AbsVal::Scalar { dtype: d, .. } if d.is_float() => {
                    Some(b.prim("ScalarCast", &[c.dout], vec![("input_y", AttrValue::DType(*d))]))
                }
                // A rank-0 tensor in (as `ScalarToTensor`'s): a tensor back.
                AbsVal::Tensor { dtype: d, .. } if d.is_float() => {
                    Some(b.prim("Cast", &[c.dout], vec![("dtype", AttrValue::DType(*d))]))
                }
                AbsVal::Scalar { .. } | AbsVal::Tensor { .. } => None,
                // Not known here (a value inside a closure the analysis could
                // not follow): decided when it runs, never silently none.
                _ => Some(b.prim("_CastLike", &[c.dout, c.inputs[0]], vec![])),
            };
            vec![dx]
        }),
        kernel: Some(k_scalar_cast),
        traits: Traits::NONE,
    },
    OpDef {
        name: "ScalarToTensor",
        category: Category::Elementwise,
        doc: "A rank-0 tensor holding the number `input_x`, of `dtype` (the number's own dtype when `None`, as in graph mode); converting as `Cast`.",
        schema: Schema::ms(
            &[
                Override::input("x", why::TO_INPUT),
                Override::inputs(&["input_x"], why::INPUT_NAMES),
                Override::attr("dtype", AttrType::DType, Some(AttrDefault::None), "exported graphs always pass the dtype; without one the registry keeps the number's dtype, as MindSpore's graph-mode kernel does (checked by the oracle)"),
            ],
            &[
                ("input_x", "The number."),
                ("dtype", "The tensor's dtype; `None` (the default) keeps the number's."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_scalar_to_tensor,
        grad: Some(|b, c| {
            let to = crate::defs::reduce::aggregate::opt_dtype(c.attrs, "dtype");
            let dx = match &c.input_values[0] {
                _ if to.is_some_and(|d| !d.is_float()) => None,
                AbsVal::Scalar { dtype: d, .. } if d.is_float() => {
                    let s = b.prim("TensorToScalar", &[c.dout], vec![]);
                    Some(b.prim("ScalarCast", &[s], vec![("input_y", AttrValue::DType(*d))]))
                }
                // A rank-0 tensor in: a tensor back (a scalar would not
                // type where the input's gradient is summed or returned).
                AbsVal::Tensor { dtype: d, .. } if d.is_float() => {
                    Some(b.prim("Cast", &[c.dout], vec![("dtype", AttrValue::DType(*d))]))
                }
                AbsVal::Scalar { .. } | AbsVal::Tensor { .. } => None,
                // Unknown here: `_CastLike` decides at run time (zeros for an
                // integer input), never silently none.
                _ => Some(b.prim("_CastLike", &[c.dout, c.inputs[0]], vec![])),
            };
            vec![dx]
        }),
        kernel: Some(k_scalar_to_tensor),
        traits: Traits::NONE,
    },
    OpDef {
        name: "TensorToScalar",
        category: Category::Elementwise,
        doc: "The number held by a one-element tensor (shape `[]` or `[1]`), of the tensor's dtype.",
        schema: Schema::ms(
            &[Override::inputs(&["input_x"], why::INPUT_NAMES)],
            &[("input_x", "A tensor of one element.")],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_tensor_to_scalar,
        grad: Some(|b, c| {
            let dx = is_float_input(c, 0).then(|| match c.input_values[0].dtype() {
                Some(d) => {
                    let t = b.prim("ScalarToTensor", &[c.dout], vec![("dtype", AttrValue::DType(d))]);
                    b.prim("_ReshapeLike", &[t, c.inputs[0]], vec![])
                }
                // Unknown here: the input's own dtype at run time, not a
                // guessed `f32` (which would round an `f64` gradient).
                None => {
                    let t = b.prim("ScalarToTensor", &[c.dout], vec![]);
                    let t = b.prim("_ReshapeLike", &[t, c.inputs[0]], vec![]);
                    b.prim("_CastLike", &[t, c.inputs[0]], vec![])
                }
            });
            vec![dx]
        }),
        kernel: Some(k_tensor_to_scalar),
        traits: Traits::NONE,
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, Sample};
    let f = |v: f64| KValue::Tensor(Tensor::scalar(DType::F64, v));
    let i = |v: i64| ints(DType::I64, &[], &[v]);
    let mut out = Vec::new();
    for op in [
        "ScalarAdd",
        "ScalarSub",
        "ScalarMul",
        "ScalarMod",
        "ScalarPow",
    ] {
        out.push(Sample::new(op, vec![f(2.7), f(1.3)]));
        out.push(Sample::new(op, vec![f(-2.7), i(2)]));
    }
    for op in [
        "ScalarFloorDiv",
        "ScalarMax",
        "ScalarMin",
        "ScalarEq",
        "ScalarLt",
        "ScalarGt",
        "ScalarLe",
        "ScalarGe",
        "bit_and",
        "bit_or",
    ] {
        out.push(Sample::new(op, vec![i(7), i(-2)]));
    }
    // ScalarDiv and ScalarLog give f32, too coarse for finite differences in
    // f64: their gradients are checked in tests/kernels/scalars.rs.
    out.push(Sample::new("ScalarDiv", vec![i(7), i(-2)]));
    out.push(Sample::new("ScalarLog", vec![i(3)]));
    out.push(Sample::new("ScalarUadd", vec![f(1.5)]));
    out.push(Sample::new("ScalarUsub", vec![f(1.5)]));
    out.push(Sample::new("ScalarBool", vec![f(0.0)]));
    out.push(Sample::new(
        "bool_not",
        vec![KValue::Tensor(Tensor::scalar(DType::Bool, 1.0))],
    ));
    out.push(Sample::new(
        "BoolNot",
        vec![KValue::Tensor(Tensor::scalar(DType::Bool, 0.0))],
    ));
    out.push(Sample::new("ScalarCast", vec![f(2.5)]).attr("input_y", AttrValue::DType(DType::F64)));
    out.push(
        Sample::new("ScalarCast", vec![f(-2.5)]).attr("input_y", AttrValue::DType(DType::I64)),
    );
    out.push(Sample::new("ScalarToTensor", vec![f(2.5)]));
    out.push(Sample::new("ScalarToTensor", vec![i(3)]).attr("dtype", AttrValue::DType(DType::F32)));
    out.push(Sample::new("TensorToScalar", vec![f(2.5)]));
    out.push(Sample::new(
        "TensorToScalar",
        vec![KValue::Tensor(
            Tensor::from_f64(vec![1], vec![0.5]).unwrap(),
        )],
    ));
    out
}
