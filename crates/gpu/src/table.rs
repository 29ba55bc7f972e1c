//! Which registry primitives run on the GPU, and how.
//!
//! Elementwise primitives are one CUDA expression each (over `a`, `b` of the
//! compute type `T`, and the attribute values `p0`, `p1`), generated from the
//! formula in the op's record; this table says only what is GPU-specific (the
//! compute dtype, the storages, guards). [`crate::source`] turns every entry
//! into kernels, one per storage type it supports. The other
//! families (reductions, softmax, normalisation, shape ops, GEMMs) have
//! hand-written kernel templates, chosen in `kernels::kernel_for`. Every other
//! primitive with a CPU kernel runs there (copied to the host and back), and
//! `--verbose` says so.

use ops::formula::Formula;
use ops::Attrs;

use crate::source::Storage;

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

/// An elementwise primitive on the GPU: what is GPU-specific about it (its
/// compute dtype, its storages, the calls it handles). Its CUDA expression is
/// generated from its record's formula ([`ops::formula`]), never written here.
#[derive(Debug, Clone, Copy)]
pub struct Elementwise {
    pub op: &'static str,
    /// Inputs after those that only line up shapes and are not read (GeLU's
    /// output in `GeLUGrad(dy, x, y)`); the kernel runs when they have the
    /// result's shape.
    pub unread: usize,
    pub compute: Compute,
    /// Kernels for `float`/`double` (else floats run on the CPU).
    pub float: bool,
    /// Kernels for `long long` (every integer dtype).
    pub int: bool,
    /// Kernels for `unsigned char` holding bools.
    pub boolean: bool,
    /// The op whose formula the kernels compute, where it is not `op`'s own:
    /// `Round` computes `Rint`'s (only with `decimals = 0`: see `guard`).
    pub like: Option<&'static str>,
    /// Calls the kernel handles (others run on the CPU).
    pub guard: Option<fn(&Attrs) -> bool>,
}

impl Elementwise {
    /// The formula the kernels compute: the record's.
    pub fn formula(&self) -> &'static Formula {
        let name = self.like.unwrap_or(self.op);
        ops::lookup(name)
            .and_then(|op| op.traits.formula)
            .unwrap_or_else(|| panic!("`{name}` has no formula in its record"))
    }

    /// The inputs the expression reads (`a`, `b`).
    pub fn arity(&self) -> usize {
        self.formula().arity
    }

    /// The float attributes passed as `p0`, `p1`.
    pub fn params(&self) -> &'static [&'static str] {
        self.formula().params
    }

    /// The CUDA expression for compute storage `s` (over `a`, `b` of type
    /// `T`, `p0`, `p1`), generated from the formula.
    pub fn expression(&self, s: Storage) -> Option<String> {
        let f = self.formula();
        match s {
            Storage::F32 | Storage::F64 => self.float.then(|| f.cuda()),
            Storage::I64 => self.int.then(|| f.cuda_int()),
            Storage::U8 => self.boolean.then(|| f.cuda_int()),
        }
    }
}

const fn e(
    op: &'static str,
    compute: Compute,
    float: bool,
    int: bool,
    boolean: bool,
) -> Elementwise {
    Elementwise {
        op,
        unread: 0,
        compute,
        float,
        int,
        boolean,
        like: None,
        guard: None,
    }
}

const fn unread(mut x: Elementwise, n: usize) -> Elementwise {
    x.unread = n;
    x
}

/// Float-valued, on floats (integer inputs of the float-valued functions
/// are cast to `f32` by the shape rule).
const fn float(op: &'static str) -> Elementwise {
    e(op, Compute::Out, true, false, false)
}

/// On floats and integers.
const fn num(op: &'static str) -> Elementwise {
    e(op, Compute::Out, true, true, false)
}

/// A comparison, in the promoted dtype, to `bool`.
const fn cmp(op: &'static str) -> Elementwise {
    e(op, Compute::Promoted, true, true, true)
}

/// A logical op: inputs read as bools, to `bool`.
const fn logic(op: &'static str) -> Elementwise {
    e(op, Compute::Bool, false, false, true)
}

use Compute::*;

fn decimals_zero(a: &Attrs) -> bool {
    a.get("decimals").and_then(|v| v.as_int()).unwrap_or(0) == 0
}

/// The elementwise primitives with GPU kernels (their expressions are their
/// records' formulas).
pub const ELEMENTWISE: &[Elementwise] = &[
    // Unary, float-valued.
    float("Exp"),
    float("Exp2"),
    float("Expm1"),
    float("Log"),
    float("Log2"),
    float("Log10"),
    float("Log1p"),
    float("Sqrt"),
    float("Rsqrt"),
    float("Reciprocal"),
    float("Sin"),
    float("Cos"),
    float("Tan"),
    float("Sinh"),
    float("Cosh"),
    float("Tanh"),
    float("Asin"),
    float("ACos"),
    float("Atan"),
    float("Asinh"),
    float("Acosh"),
    float("Atanh"),
    float("Erf"),
    float("Erfc"),
    float("Erfinv"),
    float("Sigmoid"),
    float("GeLU"),
    float("FastGeLU"),
    float("SiLU"),
    float("Softplus"),
    float("Mish"),
    float("Softsign"),
    float("ReLU6"),
    float("HSwish"),
    float("HSigmoid"),
    float("Elu"),
    float("LeakyReLUExt"),
    float("Floor"),
    float("Ceil"),
    float("Trunc"),
    float("Rint"),
    Elementwise {
        like: Some("Rint"),
        guard: Some(decimals_zero),
        ..float("Round")
    },
    // Unary on every numeric dtype.
    num("Neg"),
    num("Abs"),
    num("Square"),
    num("Sign"),
    e("ReLU", Out, true, true, true),
    e("IsNan", Input, true, false, false),
    e("IsInf", Input, true, false, false),
    e("IsFinite", Input, true, false, false),
    logic("LogicalNot"),
    logic("BoolNot"),
    logic("bool_not"),
    e("BitwiseNot", Out, false, true, true),
    e("ZerosLike", Out, true, true, true),
    e("OnesLike", Out, true, true, true),
    // Binary arithmetic, broadcasting.
    num("Add"),
    num("Sub"),
    num("Mul"),
    // A tensor and a number (a 0-d tensor here): the same kernels, the
    // number broadcast.
    num("Muls"),
    float("RealDiv"),
    float("Div"),
    float("Divs"),
    num("Maximum"),
    num("Minimum"),
    num("SquaredDifference"),
    float("Pow"),
    float("FloorDiv"),
    float("Atan2"),
    float("Hypot"),
    float("DivNoNan"),
    float("MulNoNan"),
    // Backward: `y_backprop` where ReLU's output `x` is positive.
    num("ReluGrad"),
    // The activations' backward primitives (MindSpore's argument order).
    float("SigmoidGrad"),
    float("TanhGrad"),
    float("ReLU6Grad"),
    float("SiLUGrad"),
    unread(float("GeLUGrad"), 1),
    // Comparisons (in the promoted dtype) and logic.
    cmp("Equal"),
    cmp("NotEqual"),
    cmp("Greater"),
    cmp("GreaterEqual"),
    cmp("Less"),
    cmp("LessEqual"),
    logic("LogicalAnd"),
    logic("LogicalOr"),
    logic("LogicalXor"),
    e("BitwiseAnd", Out, false, true, true),
    e("BitwiseOr", Out, false, true, true),
    e("BitwiseXor", Out, false, true, true),
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
