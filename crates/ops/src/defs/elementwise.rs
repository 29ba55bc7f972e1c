//! Elementwise primitives: arithmetic, comparisons, logic, activations.
//!
//! Dtype rules, as in MindSpore 2.x:
//! - Binary arithmetic promotes its operands ([`promote`]: a literal scalar
//!   yields to the tensor's dtype); shapes broadcast with NumPy's rules.
//! - `RealDiv` keeps the promoted dtype, as MindSpore's: integers divide
//!   truncating toward zero (`x / 0` saturates to the dtype's maximum or
//!   minimum, 0 for `0 / 0`); two bool operands are an error. True division
//!   of integers is `Div` (`elementwise::binary`).
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

pub mod binary;
pub mod clamp;
pub mod common;
pub mod math;

use crate::schema::{why, Override, Schema};
use crate::Family;
use crate::Gradgen;
use crate::Traits;
use std::borrow::Cow;

use ir::{AbsVal, AttrValue, DType};
use tensor::{Buffer, Tensor};

use crate::infer::{broadcast_shapes, infer_broadcast_binary, promote, result, InferCall, InferFn};
use crate::kernel::{broadcast_shape, broadcast_strides, KValue, KernelCall, KernelFn};
use crate::{Category, GNode, GradBuilder, GradCall, GradFn, OpDef, OpError, OutputDef};
use common::with_dtype;

#[macro_use]
mod core_fns;
pub use core_fns::*;

// ---------------------------------------------------------------------------
// Shape rules.

const BOOL_XY: Schema = Schema::ms(
    &[],
    &[
        ("x", "The first operand, read as bools (non-zero is true)."),
        (
            "y",
            "The second operand, read as bools, broadcast against `x`.",
        ),
    ],
);

const SELECT_PARAMS: Schema = Schema::ms(
    &[Override::inputs(&["cond", "x", "y"], why::INPUT_NAMES)],
    &[
        (
            "cond",
            "A bool tensor: where it is true the result takes `x`, elsewhere `y`.",
        ),
        ("x", "The values taken where `cond` is true."),
        (
            "y",
            "The values taken where `cond` is false; the same dtype as `x`.",
        ),
    ],
);

const CAST_PARAMS: Schema = Schema::ms(
    &[Override::inputs(&["x"], why::INPUT_NAMES)],
    &[
        ("x", "The tensor or scalar to convert."),
        (
            "dtype",
            "The dtype of the result (`f32`, `i64`, `bool`, ...).",
        ),
    ],
);

fn infer_arith(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_broadcast_binary(call, None)
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

mod grads;
pub(crate) use grads::*;

// ---------------------------------------------------------------------------
// Formulas (`crate::formula`): each op's math, written once; the kernels
// below, the compiled plans' fused loops and the GPU's CUDA come from them.

crate::formula! {pub ADD = [ints] |a, b| a + b}
crate::formula! {pub SUB = [ints] |a, b| a - b}
crate::formula! {pub MUL = [ints] |a, b| a * b}
crate::formula! {pub REAL_DIV = [] |a, b| a / b}
crate::formula! {pub MAXIMUM = [ints] |a, b| select(gt(a, b), a, b)}
crate::formula! {pub MINIMUM = [ints] |a, b| select(lt(a, b), a, b)}
crate::formula! {pub NEG = [ints] |a| -a}
crate::formula! {pub ABS = [ints int(select(lt(a, 0), -a, a))] |a| fabs(a)}
crate::formula! {pub SQUARE = [ints] |a| a * a}
crate::formula! {pub RELU = [ints bools] |a| select(gt(a, 0.0), a, 0.0)}
crate::formula! {pub EXP = [] |a| exp(a)}
crate::formula! {pub LOG = [] |a| log(a)}
crate::formula! {pub SQRT = [] |a| sqrt(a)}
crate::formula! {pub RSQRT = [] |a| 1.0 / sqrt(a)}
crate::formula! {pub SIN = [] |a| sin(a)}
crate::formula! {pub COS = [] |a| cos(a)}
crate::formula! {pub TANH = [] |a| tanh(a)}
crate::formula! {pub ERF = [] |a| erf(a)}
crate::formula! {pub SIGMOID = [] |a| sigm(a)}
crate::formula! {
    /// MindSpore's tanh form, with its constants `0.7978845608` (√(2/π)) and
    /// `0.044715`, in the input's dtype.
    pub GELU = [] |a| 0.5 * a * (1.0 + tanh(0.7978845608 * (a + 0.044715 * a * a * a)))
}
crate::formula! {pub POW = [] |a, b| pow(a, b)}
crate::formula! {pub ZEROS_LIKE = [ints bools] |a| 0.0}
crate::formula! {pub ONES_LIKE = [ints bools] |a| 1.0}
crate::formula! {pub EQUAL = [test ints bools] |a, b| eq(a, b)}
crate::formula! {pub NOT_EQUAL = [test ints bools] |a, b| ne(a, b)}
crate::formula! {pub LESS = [test ints bools] |a, b| lt(a, b)}
crate::formula! {pub LESS_EQUAL = [test ints bools] |a, b| le(a, b)}
crate::formula! {pub GREATER = [test ints bools] |a, b| gt(a, b)}
crate::formula! {pub GREATER_EQUAL = [test ints bools] |a, b| ge(a, b)}
crate::formula! {pub LOGICAL_AND = [test logic bools] |a, b| both(ne(a, 0.0), ne(b, 0.0))}
crate::formula! {pub LOGICAL_OR = [test logic bools] |a, b| either(ne(a, 0.0), ne(b, 0.0))}
crate::formula! {pub LOGICAL_NOT = [test logic bools] |a| eq(a, 0.0)}

// ---------------------------------------------------------------------------
// Kernels.

fn k_add(c: &KernelCall) -> Result<KValue, OpError> {
    numeric!(c, c.promoted(), ADD, |a, b| a.wrapping_add(b))
}

fn k_sub(c: &KernelCall) -> Result<KValue, OpError> {
    numeric!(c, c.promoted(), SUB, |a, b| a.wrapping_sub(b))
}

fn k_mul(c: &KernelCall) -> Result<KValue, OpError> {
    numeric!(c, c.promoted(), MUL, |a, b| a.wrapping_mul(b))
}

fn k_real_div(c: &KernelCall) -> Result<KValue, OpError> {
    let d = c.promoted();
    numeric!(c, d, REAL_DIV, |a, b| {
        if b == 0 {
            crate::defs::elementwise::common::int_div_by_zero(a, d)
        } else {
            a.wrapping_div(b)
        }
    })
}

fn k_pow(c: &KernelCall) -> Result<KValue, OpError> {
    let d = c.promoted();
    numeric!(c, d, POW, |a, b| ipow(a, b, d))
}

fn k_maximum(c: &KernelCall) -> Result<KValue, OpError> {
    numeric!(c, c.promoted(), MAXIMUM, |a, b| a.max(b))
}

fn k_minimum(c: &KernelCall) -> Result<KValue, OpError> {
    numeric!(c, c.promoted(), MINIMUM, |a, b| a.min(b))
}

fn k_neg(c: &KernelCall) -> Result<KValue, OpError> {
    numeric_unary!(c, NEG, |x| x.wrapping_neg())
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
    numeric_unary!(c, ABS, |x| x.wrapping_abs())
}

fn k_square(c: &KernelCall) -> Result<KValue, OpError> {
    numeric_unary!(c, SQUARE, |x| x.wrapping_mul(x))
}

fn k_relu(c: &KernelCall) -> Result<KValue, OpError> {
    if let Some(v) = bool_identity(c)? {
        return Ok(v);
    }
    numeric_unary!(c, RELU, |x| x.max(0))
}

fn k_exp(c: &KernelCall) -> Result<KValue, OpError> {
    float_unary!(c, EXP)
}

fn k_log(c: &KernelCall) -> Result<KValue, OpError> {
    float_unary!(c, LOG)
}

fn k_sqrt(c: &KernelCall) -> Result<KValue, OpError> {
    float_unary!(c, SQRT)
}

fn k_rsqrt(c: &KernelCall) -> Result<KValue, OpError> {
    float_unary!(c, RSQRT)
}

fn k_sin(c: &KernelCall) -> Result<KValue, OpError> {
    float_unary!(c, SIN)
}

fn k_cos(c: &KernelCall) -> Result<KValue, OpError> {
    float_unary!(c, COS)
}

fn k_tanh(c: &KernelCall) -> Result<KValue, OpError> {
    float_unary!(c, TANH)
}

fn k_sigmoid(c: &KernelCall) -> Result<KValue, OpError> {
    float_unary!(c, SIGMOID)
}

fn k_gelu(c: &KernelCall) -> Result<KValue, OpError> {
    float_unary!(c, GELU)
}

fn k_erf(c: &KernelCall) -> Result<KValue, OpError> {
    float_unary!(c, ERF)
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
    logical_kernel(c, crate::formula::fns::both)
}

fn k_logical_or(c: &KernelCall) -> Result<KValue, OpError> {
    logical_kernel(c, crate::formula::fns::either)
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
        "Add",
        "Adds two tensors elementwise, `x + y`, with broadcasting and MindSpore's type promotion.",
        Schema::ms(
            &[Override::inputs(&["x", "y"], why::INPUT_NAMES)],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_arith,
        Some(grad_add),
        k_add,
    )
    .with_formula(&ADD),
    ew(
        "Sub",
        "Subtracts `y` from `x` elementwise, `x - y`, with broadcasting and type promotion.",
        Schema::ms(
            &[Override::inputs(&["x", "y"], why::INPUT_NAMES)],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_arith,
        Some(grad_sub),
        k_sub,
    )
    .with_formula(&SUB),
    ew(
        "Mul",
        "Multiplies two tensors elementwise, `x * y`, with broadcasting and type promotion.",
        Schema::ms(
            &[Override::inputs(&["x", "y"], why::INPUT_NAMES)],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_arith,
        Some(grad_mul),
        k_mul,
    )
    .with_formula(&MUL),
    ew(
        "RealDiv",
        "Divides `x` by `y` elementwise, `x / y`, with broadcasting, in the promoted dtype: integers divide truncating toward zero (`x / 0` saturates to the dtype's maximum or minimum, 0 for `0 / 0`). True division of integers is `Div`.",
        Schema::ms(
            &[],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_real_div,
        Some(grad_real_div),
        k_real_div,
    )
    .with_formula(&REAL_DIV),
    ew(
        "Neg",
        "Negates every element, `-x`.",
        Schema::ms(&[Override::inputs(&["x"], why::INPUT_NAMES)], &[("x", "The input tensor.")]),
        infer_numeric_unary,
        Some(grad_neg),
        k_neg,
    )
    .with_formula(&NEG)
    .drawn(Gradgen::SmoothUnary),
    ew(
        "Exp",
        "The exponential `e^x` of every element (integer inputs are computed in `f32`).",
        Schema::ms(&[Override::inputs(&["x"], why::INPUT_NAMES)], &[("x", "The input tensor.")]),
        infer_float_unary,
        Some(grad_exp),
        k_exp,
    )
    .with_formula(&EXP)
    .drawn(Gradgen::SmoothUnary),
    ew(
        "Log",
        "The natural logarithm of every element (NaN below 0, `-inf` at 0; integer inputs give `f32`).",
        Schema::ms(&[Override::inputs(&["x"], why::INPUT_NAMES)], &[("x", "The input tensor.")]),
        infer_float_unary,
        Some(grad_log),
        k_log,
    )
    .with_formula(&LOG),
    ew(
        "Sqrt",
        "The square root of every element (NaN below 0; integer inputs give `f32`).",
        Schema::ms(&[], &[("x", "The input tensor.")]),
        infer_float_unary,
        Some(grad_sqrt),
        k_sqrt,
    )
    .with_formula(&SQRT),
    ew(
        "Rsqrt",
        "The reciprocal square root `1 / sqrt(x)` of every element (integer inputs give `f32`).",
        Schema::ms(&[Override::inputs(&["x"], why::INPUT_NAMES)], &[("x", "The input tensor.")]),
        infer_float_unary,
        Some(grad_rsqrt),
        k_rsqrt,
    )
    .with_formula(&RSQRT),
    ew(
        "Square",
        "The square `x * x` of every element.",
        Schema::ms(&[Override::inputs(&["x"], why::INPUT_NAMES)], &[("x", "The input tensor.")]),
        infer_numeric_unary,
        Some(grad_square),
        k_square,
    )
    .with_formula(&SQUARE)
    .drawn(Gradgen::SmoothUnary),
    ew(
        "Pow",
        "Raises `x` to the power `y` elementwise, with broadcasting and type promotion.",
        Schema::ms(
            &[Override::inputs(&["x", "y"], why::INPUT_NAMES)],
            &[
                ("x", "The base: a tensor or a scalar."),
                ("y", "The exponent, broadcast against `x`."),
            ],
        ),
        infer_arith,
        Some(grad_pow),
        k_pow,
    )
    .with_formula(&POW),
    ew(
        "Abs",
        "The absolute value of every element (a bool tensor is returned unchanged).",
        Schema::ms(&[Override::inputs(&["x"], why::INPUT_NAMES)], &[("x", "The input tensor.")]),
        infer_same,
        Some(grad_abs),
        k_abs,
    )
    .with_formula(&ABS),
    ew(
        "Maximum",
        "The larger of `x` and `y` elementwise, with broadcasting: `x > y ? x : y` (so a NaN `y` propagates and a NaN `x` gives `y`, as MindSpore's CPU kernel). A tie splits the gradient evenly.",
        Schema::ms(
            &[Override::inputs(&["x", "y"], why::INPUT_NAMES)],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_arith,
        Some(grad_maximum),
        k_maximum,
    )
    .with_formula(&MAXIMUM),
    ew(
        "Minimum",
        "The smaller of `x` and `y` elementwise, with broadcasting: `x < y ? x : y` (so a NaN `y` propagates and a NaN `x` gives `y`, as MindSpore's CPU kernel). A tie splits the gradient evenly.",
        Schema::ms(
            &[Override::inputs(&["x", "y"], why::INPUT_NAMES)],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_arith,
        Some(grad_minimum),
        k_minimum,
    )
    .with_formula(&MINIMUM),
    ew(
        "Sin",
        "The sine of every element, in radians (integer inputs give `f32`).",
        Schema::ms(&[Override::inputs(&["x"], why::INPUT_NAMES)], &[("x", "The input tensor.")]),
        infer_float_unary,
        Some(grad_sin),
        k_sin,
    )
    .with_formula(&SIN)
    .drawn(Gradgen::SmoothUnary),
    ew(
        "Cos",
        "The cosine of every element, in radians (integer inputs give `f32`).",
        Schema::ms(&[Override::inputs(&["x"], why::INPUT_NAMES)], &[("x", "The input tensor.")]),
        infer_float_unary,
        Some(grad_cos),
        k_cos,
    )
    .with_formula(&COS)
    .drawn(Gradgen::SmoothUnary),
    ew(
        "Tanh",
        "The hyperbolic tangent of every element (integer inputs give `f32`).",
        Schema::ms(&[Override::inputs(&["x"], why::INPUT_NAMES)], &[("x", "The input tensor.")]),
        infer_float_unary,
        Some(grad_tanh),
        k_tanh,
    )
    .with_formula(&TANH)
    .drawn(Gradgen::SmoothUnary),
    ew(
        "Sigmoid",
        "The logistic function `1 / (1 + e^-x)` of every element (integer inputs give `f32`).",
        Schema::ms(&[Override::inputs(&["x"], why::INPUT_NAMES)], &[("x", "The input tensor.")]),
        infer_float_unary,
        Some(grad_sigmoid),
        k_sigmoid,
    )
    .with_formula(&SIGMOID)
    .drawn(Gradgen::SmoothUnary),
    ew(
        "ReLU",
        "Rectified linear unit: `max(x, 0)` elementwise (NaN gives 0; a bool tensor is returned unchanged).",
        Schema::ms(&[Override::inputs(&["x"], why::INPUT_NAMES)], &[("x", "The input tensor.")]),
        infer_same,
        Some(grad_relu),
        k_relu,
    )
    .with_formula(&RELU),
    ew(
        "GeLU",
        "Gaussian error linear unit, as MindSpore's kernel computes it: `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))`. Needs a float input.",
        Schema::ms(&[Override::inputs(&["x"], why::INPUT_NAMES)], &[("x", "The input tensor.")]),
        infer_float_only,
        Some(grad_gelu),
        k_gelu,
    )
    .with_formula(&GELU)
    .drawn(Gradgen::SmoothUnary),
    ew(
        "Erf",
        "The Gauss error function `erf(x) = 2/sqrt(pi) * integral from 0 to x of e^(-t^2) dt`, elementwise (integer inputs give `f32`).",
        Schema::ms(&[Override::inputs(&["x"], why::INPUT_NAMES)], &[("x", "The input tensor.")]),
        infer_float_unary,
        Some(grad_erf),
        k_erf,
    )
    .with_formula(&ERF)
    .drawn(Gradgen::SmoothUnary),
    ew(
        "Select",
        "Chooses elementwise: `x` where `cond` is true, `y` elsewhere. The three broadcast together; `x` and `y` are promoted to one dtype.",
        SELECT_PARAMS,
        infer_select,
        Some(grad_select),
        k_select,
    )
    .in_family(Family::Select),
    ew(
        "Cast",
        "Converts `x` to `dtype` (float to integer truncates toward zero, and NaN, infinities and out-of-range values give the minimum of `i32`/`i64`, or 0 for narrower types, as MindSpore's CPU kernel; non-zero becomes `true`).",
        CAST_PARAMS,
        infer_cast,
        Some(grad_cast),
        k_cast,
    )
    .in_family(Family::Cast),
    ew(
        "Equal",
        "Whether `x == y`, elementwise with broadcasting: a `bool` tensor.",
        Schema::ms(
            &[Override::inputs(&["x", "y"], why::INPUT_NAMES)],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_compare,
        None,
        k_equal,
    )
    .with_formula(&EQUAL),
    ew(
        "NotEqual",
        "Whether `x != y`, elementwise with broadcasting: a `bool` tensor.",
        Schema::ms(
            &[Override::inputs(&["x", "y"], why::INPUT_NAMES)],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_compare,
        None,
        k_not_equal,
    )
    .with_formula(&NOT_EQUAL),
    ew(
        "Less",
        "Whether `x < y`, elementwise with broadcasting: a `bool` tensor.",
        Schema::ms(
            &[Override::inputs(&["x", "y"], why::INPUT_NAMES)],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_compare,
        None,
        k_less,
    )
    .with_formula(&LESS),
    ew(
        "LessEqual",
        "Whether `x <= y`, elementwise with broadcasting: a `bool` tensor.",
        Schema::ms(
            &[Override::inputs(&["x", "y"], why::INPUT_NAMES)],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_compare,
        None,
        k_less_equal,
    )
    .with_formula(&LESS_EQUAL),
    ew(
        "Greater",
        "Whether `x > y`, elementwise with broadcasting: a `bool` tensor.",
        Schema::ms(
            &[Override::inputs(&["x", "y"], why::INPUT_NAMES)],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_compare,
        None,
        k_greater,
    )
    .with_formula(&GREATER),
    ew(
        "GreaterEqual",
        "Whether `x >= y`, elementwise with broadcasting: a `bool` tensor.",
        Schema::ms(
            &[Override::inputs(&["x", "y"], why::INPUT_NAMES)],
            &[
                ("x", "The first operand: a tensor or a scalar."),
                ("y", "The second operand, broadcast against `x` (NumPy rules)."),
            ],
        ),
        infer_compare,
        None,
        k_greater_equal,
    )
    .with_formula(&GREATER_EQUAL),
    ew(
        "LogicalAnd",
        "Logical AND elementwise with broadcasting: a `bool` tensor (operands of any dtype are read as bools, non-zero being true).",
        BOOL_XY,
        infer_logical,
        None,
        k_logical_and,
    )
    .with_formula(&LOGICAL_AND),
    ew(
        "LogicalOr",
        "Logical OR elementwise with broadcasting: a `bool` tensor (operands of any dtype are read as bools, non-zero being true).",
        BOOL_XY,
        infer_logical,
        None,
        k_logical_or,
    )
    .with_formula(&LOGICAL_OR),
    ew(
        "LogicalNot",
        "Logical NOT elementwise: a `bool` tensor, true where `x` is zero (any dtype is read as bool).",
        Schema::ms(
            &[Override::inputs(&["x"], why::INPUT_NAMES)],
            &[("x", "A tensor or scalar, read as bools.")],
        ),
        infer_logical_not,
        None,
        k_logical_not,
    )
    .with_formula(&LOGICAL_NOT),
    ew(
        "ZerosLike",
        "A tensor of zeros with the dtype and shape of `x`.",
        Schema::ms(&[], &[("x", "The tensor whose dtype and shape to copy.")]),
        infer_same,
        None,
        k_zeros_like,
    )
    .with_formula(&ZEROS_LIKE),
    ew(
        "OnesLike",
        "A tensor of ones with the dtype and shape of `x`.",
        Schema::ms(&[], &[("x", "The tensor whose dtype and shape to copy.")]),
        infer_same,
        None,
        k_ones_like,
    )
    .with_formula(&ONES_LIKE),
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
