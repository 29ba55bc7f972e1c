//! Which registry primitives run on the GPU, and how.
//!
//! Elementwise primitives are one CUDA expression each (over `a`, `b` of the
//! compute type `T`, and the attribute values `p0`, `p1`); [`crate::source`]
//! turns every entry into kernels, one per storage type it supports. The other
//! families (reductions, softmax, normalisation, shape ops, GEMMs) have
//! hand-written kernel templates, chosen in `kernels::kernel_for`. Every other
//! primitive with a CPU kernel runs there (copied to the host and back), and
//! `--verbose` says so.

use ops::Attrs;

/// The dtype an elementwise kernel computes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compute {
    /// The result's dtype (inputs are cast to it first).
    Out,
    /// The promoted input dtype; the result is `bool` (comparisons).
    Promoted,
    /// The input's own dtype; the result is `bool` (`IsNan`).
    Input,
    /// Inputs read as bools; the result is `bool` (logical ops).
    Bool,
}

/// An elementwise primitive as CUDA expressions.
#[derive(Debug, Clone, Copy)]
pub struct Elementwise {
    pub op: &'static str,
    /// 1 or 2 inputs read by the expression.
    pub arity: usize,
    /// Inputs after those that only line up shapes and are not read (GeLU's
    /// output in `GeLUGrad(dy, x, y)`); the kernel runs when they have the
    /// result's shape.
    pub unread: usize,
    pub compute: Compute,
    /// For `float`/`double`; `None`: floats run on the CPU.
    pub float: Option<&'static str>,
    /// For `long long` (every integer dtype); `None`: integers run on the CPU.
    pub int: Option<&'static str>,
    /// For `unsigned char` holding bools.
    pub boolean: Option<&'static str>,
    /// Float attributes passed as `p0`, `p1`.
    pub params: &'static [&'static str],
    /// Calls the kernel handles (others run on the CPU).
    pub guard: Option<fn(&Attrs) -> bool>,
}

const fn e(
    op: &'static str,
    arity: usize,
    compute: Compute,
    float: Option<&'static str>,
    int: Option<&'static str>,
    boolean: Option<&'static str>,
) -> Elementwise {
    Elementwise {
        op,
        arity,
        unread: 0,
        compute,
        float,
        int,
        boolean,
        params: &[],
        guard: None,
    }
}

const fn with_params(mut x: Elementwise, params: &'static [&'static str]) -> Elementwise {
    x.params = params;
    x
}

const fn unread(mut x: Elementwise, n: usize) -> Elementwise {
    x.unread = n;
    x
}

const fn float1(op: &'static str, f: &'static str) -> Elementwise {
    e(op, 1, Compute::Out, Some(f), None, None)
}

const fn float2(op: &'static str, f: &'static str) -> Elementwise {
    e(op, 2, Compute::Out, Some(f), None, None)
}

const fn num2(op: &'static str, f: &'static str) -> Elementwise {
    e(op, 2, Compute::Out, Some(f), Some(f), None)
}

const fn cmp(op: &'static str, f: &'static str) -> Elementwise {
    e(op, 2, Compute::Promoted, Some(f), Some(f), Some(f))
}

use Compute::*;

fn decimals_zero(a: &Attrs) -> bool {
    a.get("decimals").and_then(|v| v.as_int()).unwrap_or(0) == 0
}

/// The elementwise primitives with GPU kernels. `sigm`, `softplus_` and the
/// other helpers are defined in the generated prelude ([`crate::source`]).
pub const ELEMENTWISE: &[Elementwise] = &[
    // Unary, float-valued (integer inputs are cast to f32 by the shape rule).
    float1("Exp", "exp(a)"),
    float1("Exp2", "exp2(a)"),
    float1("Expm1", "expm1(a)"),
    float1("Log", "log(a)"),
    float1("Log2", "log2(a)"),
    float1("Log10", "log10(a)"),
    float1("Log1p", "log1p(a)"),
    float1("Sqrt", "sqrt(a)"),
    float1("Rsqrt", "(T)1 / sqrt(a)"),
    float1("Reciprocal", "(T)1 / a"),
    float1("Sin", "sin(a)"),
    float1("Cos", "cos(a)"),
    float1("Tan", "tan(a)"),
    float1("Sinh", "sinh(a)"),
    float1("Cosh", "cosh(a)"),
    float1("Tanh", "tanh(a)"),
    float1("Asin", "asin(a)"),
    float1("ACos", "acos(a)"),
    float1("Atan", "atan(a)"),
    float1("Asinh", "asinh(a)"),
    float1("Acosh", "acosh(a)"),
    float1("Atanh", "atanh(a)"),
    float1("Erf", "erf(a)"),
    float1("Erfc", "erfc(a)"),
    float1("Erfinv", "erfinv(a)"),
    float1("Sigmoid", "sigm(a)"),
    float1(
        "GeLU",
        "(T)0.5 * a * ((T)1 + tanh((T)0.7978845608 * (a + (T)0.044715 * a * a * a)))",
    ),
    float1(
        "FastGeLU",
        "a / ((T)1 + exp((T)-1.702 * fabs(a))) * exp((T)0.851 * (a - fabs(a)))",
    ),
    float1("SiLU", "a * sigm(a)"),
    float1("Softplus", "softplus_(a)"),
    float1("Mish", "a * tanh(softplus_(a))"),
    float1("Softsign", "a / ((T)1 + fabs(a))"),
    float1("ReLU6", "(a > (T)0 ? (a > (T)6 ? (T)6 : a) : (T)0)"),
    float1(
        "HSwish",
        "(a <= (T)-3 ? (T)0 : (a >= (T)3 ? a : a * (a + (T)3) / (T)6))",
    ),
    float1(
        "HSigmoid",
        "(a <= (T)-3 ? (T)0 : (a >= (T)3 ? (T)1 : (a + (T)3) / (T)6))",
    ),
    with_params(
        float1("Elu", "(a > (T)0 ? a : (T)p0 * expm1(a))"),
        &["alpha"],
    ),
    with_params(
        float1("LeakyReLUExt", "(a > (T)0 ? a : a * (T)p0)"),
        &["negative_slope"],
    ),
    float1("Floor", "floor(a)"),
    float1("Ceil", "ceil(a)"),
    float1("Trunc", "trunc(a)"),
    Elementwise {
        guard: Some(decimals_zero),
        ..e("Round", 1, Out, Some("rint(a)"), Some("a"), None)
    },
    // Unary on every numeric dtype.
    e("Neg", 1, Out, Some("-a"), Some("-a"), None),
    e(
        "Abs",
        1,
        Out,
        Some("fabs(a)"),
        Some("(a < 0 ? -a : a)"),
        None,
    ),
    e("Square", 1, Out, Some("a * a"), Some("a * a"), None),
    e(
        "Sign",
        1,
        Out,
        Some("(T)((a > (T)0) - (a < (T)0))"),
        Some("(T)((a > 0) - (a < 0))"),
        None,
    ),
    e(
        "ReLU",
        1,
        Out,
        Some("(a > (T)0 ? a : (T)0)"),
        Some("(a > 0 ? a : (T)0)"),
        Some("a"),
    ),
    e("IsNan", 1, Input, Some("isnan(a)"), None, None),
    e("IsInf", 1, Input, Some("isinf(a)"), None, None),
    e("IsFinite", 1, Input, Some("isfinite(a)"), None, None),
    e("LogicalNot", 1, Bool, None, None, Some("!a")),
    e("BoolNot", 1, Bool, None, None, Some("!a")),
    e("bool_not", 1, Bool, None, None, Some("!a")),
    e("BitwiseNot", 1, Out, None, Some("~a"), Some("!a")),
    e("ZerosLike", 1, Out, Some("(T)0"), Some("(T)0"), Some("0")),
    e("OnesLike", 1, Out, Some("(T)1"), Some("(T)1"), Some("1")),
    // Binary arithmetic, broadcasting.
    num2("Add", "a + b"),
    num2("Sub", "a - b"),
    num2("Mul", "a * b"),
    // A tensor and a number (a 0-d tensor here): the same kernels, the
    // number broadcast.
    num2("Muls", "a * b"),
    float2("RealDiv", "a / b"),
    float2("Div", "a / b"),
    float2("Divs", "a / b"),
    num2("Maximum", "(a > b ? a : b)"),
    num2("Minimum", "(a < b ? a : b)"),
    num2("SquaredDifference", "(a - b) * (a - b)"),
    float2("Pow", "pow(a, b)"),
    float2("FloorDiv", "floor(a / b)"),
    float2("Atan2", "atan2(a, b)"),
    float2("Hypot", "hypot(a, b)"),
    float2("DivNoNan", "(b == (T)0 ? (T)0 : a / b)"),
    float2("MulNoNan", "(b == (T)0 ? (T)0 : a * b)"),
    // Backward: `y_backprop` where ReLU's output `x` is positive.
    e(
        "ReluGrad",
        2,
        Out,
        Some("(b > (T)0 ? a : (T)0)"),
        Some("(b > 0 ? a : (T)0)"),
        None,
    ),
    // The activations' backward primitives (MindSpore's argument order).
    float2("SigmoidGrad", "b * a * ((T)1 - a)"),
    float2("TanhGrad", "b * ((T)1 - a * a)"),
    float2("ReLU6Grad", "(b > (T)0 && b <= (T)6 ? a : (T)0)"),
    float2("SiLUGrad", "a * sigm(b) * ((T)1 + b * ((T)1 - sigm(b)))"),
    // `dy · GeLU'(x)` in its tanh form (ops' `gelu_slope`).
    unread(float2("GeLUGrad", "a * gelu_slope_(b)"), 1),
    // Comparisons (in the promoted dtype) and logic.
    cmp("Equal", "a == b"),
    cmp("NotEqual", "a != b"),
    cmp("Greater", "a > b"),
    cmp("GreaterEqual", "a >= b"),
    cmp("Less", "a < b"),
    cmp("LessEqual", "a <= b"),
    e("LogicalAnd", 2, Bool, None, None, Some("a && b")),
    e("LogicalOr", 2, Bool, None, None, Some("a || b")),
    e("LogicalXor", 2, Bool, None, None, Some("a != b")),
    e("BitwiseAnd", 2, Out, None, Some("a & b"), Some("a & b")),
    e("BitwiseOr", 2, Out, None, Some("a | b"), Some("a | b")),
    e("BitwiseXor", 2, Out, None, Some("a ^ b"), Some("a ^ b")),
];

/// The elementwise entry of `op`, if it has one.
pub fn elementwise(op: &str) -> Option<&'static Elementwise> {
    ELEMENTWISE.iter().find(|e| e.op == op)
}

/// Whether `op` has a GPU kernel (some calls of it may still run on the CPU:
/// unsupported dtypes or attributes).
pub fn has_gpu_kernel(op: &str) -> bool {
    ops::lookup(op).is_some_and(|op| crate::kernels::kernel_for(op).is_some())
}
