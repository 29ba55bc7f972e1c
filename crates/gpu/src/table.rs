//! Which registry primitives run on the GPU, and how.
//!
//! Elementwise primitives are one CUDA expression each (over `a`, `b` of the
//! compute type `T`, and the attribute values `p0`, `p1`), generated from the
//! formula in the op's record, as are its storages and compute dtype (the
//! formula's `ints`, `bools`, `logic` and `test`): every op with a formula
//! has GPU kernels, and this file names none of them ([`EXTRA`] holds the
//! one alias, `Round`). [`crate::source`] turns every entry
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

/// Float-valued, on floats (integer inputs of the float-valued functions
/// are cast to `f32` by the shape rule).
const fn float(op: &'static str) -> Elementwise {
    Elementwise {
        op,
        unread: 0,
        compute: Compute::Out,
        float: true,
        int: false,
        boolean: false,
        like: None,
        guard: None,
    }
}

use Compute::*;

fn decimals_zero(a: &Attrs) -> bool {
    a.get("decimals").and_then(|v| v.as_int()).unwrap_or(0) == 0
}

/// The elementwise entry of an op with a formula in its record: its storages
/// and compute dtype follow from the formula (`ints`, `bools`, `logic`,
/// `test`); inputs the formula does not read are `unread`.
fn from_record(op: &'static ops::OpDef) -> Option<Elementwise> {
    let f = op.traits.formula?;
    let compute = if f.logic {
        Bool
    } else if f.test && f.arity == 1 {
        Input
    } else if f.test {
        Promoted
    } else {
        Out
    };
    Some(Elementwise {
        op: op.name,
        unread: op.input_count().saturating_sub(f.arity),
        compute,
        float: f.float.is_some() && !f.logic,
        int: f.ints && !f.logic,
        boolean: f.bools,
        like: None,
        guard: None,
    })
}

/// Entries no record's formula gives: `Round` computes `Rint`'s formula
/// when `decimals` is 0.
const EXTRA: &[Elementwise] = &[Elementwise {
    like: Some("Rint"),
    guard: Some(decimals_zero),
    ..float("Round")
}];

/// The elementwise primitives with GPU kernels: every op whose record has a
/// formula, and [`EXTRA`]; sorted by name.
pub fn elementwise_ops() -> &'static [Elementwise] {
    static ALL: std::sync::OnceLock<Vec<Elementwise>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let mut all: Vec<Elementwise> = ops::registry()
            .values()
            .filter_map(|op| from_record(op))
            .chain(EXTRA.iter().copied())
            .collect();
        all.sort_by_key(|e| e.op);
        all
    })
}

/// The elementwise entry of `op`, if it has one.
pub fn elementwise(op: &str) -> Option<&'static Elementwise> {
    let all = elementwise_ops();
    all.binary_search_by_key(&op, |e| e.op)
        .ok()
        .map(|i| &all[i])
}

/// Whether `op` has a GPU kernel (some calls of it may still run on the CPU:
/// unsupported dtypes or attributes).
pub fn has_gpu_kernel(op: &str) -> bool {
    ops::lookup(op).is_some_and(|op| crate::kernels::kernel_for(op).is_some())
}
