//! More elementwise primitives (the `elementwise` family): here the
//! division family (`Div Mod FloorDiv FloorMod TruncateDiv TruncateMod
//! DivNoNan Xdivy Xlogy MulNoNan SquaredDifference Atan2 Hypot`) and bitwise
//! and logic (`BitwiseAnd BitwiseOr BitwiseXor BitwiseNot LogicalXor
//! LeftShift RightShift`). The kernel, shape-rule and gradient helpers the
//! family shares are in `elementwise::common`; interpolation, clamping and
//! the tensor-scalar primitives in `elementwise::clamp`, the unary
//! mathematical functions in `elementwise::math`, the activations in
//! `activations`.
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
use ir::{AbsVal, DType};
use tensor::Tensor;

use crate::defs::elementwise::{float_of, float_to_int, is_float_input};
use crate::infer::{InferCall, InferFn};
use crate::kernel::{KValue, KernelCall, KernelFn};
use crate::{Category, GradBuilder, GradCall, GradFn, OpDef, OpError, OutputDef};

use super::common::*;

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
