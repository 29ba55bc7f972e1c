//! The primitive registry: the namespace `mindspore/2.10`.
//!
//! Each primitive is one [`OpDef`]: its schema (inputs and attributes in
//! signature order, attribute types, defaults and allowed values, output
//! structure), its shape rule, its gradient rule and its CPU kernel, all in the
//! file of its family under `defs/`. Docs, hover, completion, checking, autodiff
//! and execution all read this one table. The schema of a primitive MindSpore
//! has is derived from MindSpore's own definition plus the record's overrides
//! ([`schema`]); [`OpDef::params`] gives it.

pub mod batch;
pub mod bind;
pub mod composite;
pub mod defs;
pub mod eager;
pub mod formula;
pub mod grad;
pub mod guard;
pub mod infer;
pub mod kernel;
pub mod mindspore;
pub mod schema;
/// MindSpore's schema table (generated; its own crate so it compiles once).
pub use ms_schema as mindspore_schema;

use std::collections::HashMap;
use std::sync::OnceLock;

pub use bind::{bind_call, check_attr, resolve_attrs, Attrs, BindError, Bound};
pub use defs::state::{effect_of, is_ordered, Effect};
pub use grad::{grad_by_decomposition, DecompCall, DecompFn, GNode, GradBuilder, GradCall, GradFn};
pub use infer::{InferCall, InferFn};
pub use ir::{AbsVal, AttrValue, DType};
pub use kernel::{KArg, KValue, KernelCall, KernelFn};
pub use schema::{Change, Override, Schema};

/// The namespace of this registry's schemas (MindSpore's op set and semantics).
pub const NAMESPACE: &str = "mindspore/2.10";

/// Groups for docs and completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Category {
    Elementwise,
    LinearAlgebra,
    Reduction,
    Shape,
    NeuralNetwork,
    /// MakeTuple, TupleGetItem, Switch, Partial, Depend, StopGradient, Return:
    /// the analyser and the executor give these their meaning.
    Structure,
    TensorMaker,
    /// Helpers used by gradient rules; not for users (names start with `_`).
    Internal,
    /// Side effects: `Load`, `Assign` and the optimizers (see `defs::state`).
    State,
    /// MindSpore's backward primitives (`ReluGrad`, `BiasAddGrad`...).
    Backward,
    /// Defined by a DSL decomposition (see [`composite`]).
    Composite,
    /// Collective communication (`AllReduce`): the identity in one process.
    Communication,
}

/// The type an attribute's value must have.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AttrType {
    Int,
    Float,
    Bool,
    /// A string from the allowed list, matched case-insensitively.
    Str(&'static [&'static str]),
    /// An int or a tuple of ints (`axis=1`, `axis=(0, 1)`, `axis=()`).
    Ints,
    /// A tuple of ints (a shape, a permutation).
    IntTuple,
    /// A float or a tuple of floats (`scales=(2.0, 1.5)`); ints are accepted
    /// and stored as floats.
    Floats,
    /// A tuple of tuples of ints (`Pad`'s `paddings`: `((1, 1), (0, 2))`).
    IntTuples,
    DType,
    /// An int, a float or a bool (a fill value).
    Number,
}

impl AttrType {
    pub fn describe(&self) -> String {
        match self {
            AttrType::Int => "int".into(),
            AttrType::Float => "float".into(),
            AttrType::Bool => "bool".into(),
            AttrType::Str([]) => "str".into(),
            AttrType::Str(allowed) => format!(
                "str, one of {}",
                allowed
                    .iter()
                    .map(|a| format!("\"{a}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            AttrType::Ints => "int or tuple of ints".into(),
            AttrType::IntTuple => "tuple of ints".into(),
            AttrType::Floats => "float or tuple of floats".into(),
            AttrType::IntTuples => "tuple of tuples of ints".into(),
            AttrType::DType => "dtype".into(),
            AttrType::Number => "number".into(),
        }
    }
}

/// An attribute default, in a form that fits in a `static` table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AttrDefault {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(&'static str),
    Ints(&'static [i64]),
    DType(DType),
    None,
}

impl AttrDefault {
    pub fn value(&self) -> AttrValue {
        match *self {
            AttrDefault::Int(i) => AttrValue::Int(i),
            AttrDefault::Float(x) => AttrValue::float(x),
            AttrDefault::Bool(b) => AttrValue::Bool(b),
            AttrDefault::Str(s) => AttrValue::Str(s.to_string()),
            AttrDefault::Ints(v) => {
                AttrValue::Tuple(v.iter().map(|&i| AttrValue::Int(i)).collect())
            }
            AttrDefault::DType(d) => AttrValue::DType(d),
            AttrDefault::None => AttrValue::None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamKind {
    /// A run-time input (a tensor, a scalar, or a tuple for `Concat`).
    Input,
    /// A constant attribute; `default: None` means it is required.
    Attr {
        ty: AttrType,
        default: Option<AttrDefault>,
    },
}

/// One parameter of a primitive's signature.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParamDef {
    pub name: &'static str,
    pub kind: ParamKind,
    pub doc: &'static str,
}

impl ParamDef {
    pub const fn input(name: &'static str, doc: &'static str) -> ParamDef {
        ParamDef {
            name,
            kind: ParamKind::Input,
            doc,
        }
    }

    pub const fn attr(
        name: &'static str,
        ty: AttrType,
        default: Option<AttrDefault>,
        doc: &'static str,
    ) -> ParamDef {
        ParamDef {
            name,
            kind: ParamKind::Attr { ty, default },
            doc,
        }
    }

    pub fn is_input(&self) -> bool {
        matches!(self.kind, ParamKind::Input)
    }
}

/// The structure of a primitive's result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OutputDef {
    Single,
    /// A tuple with these named elements (`LayerNorm` gives `(y, mean, variance)`).
    Tuple(&'static [&'static str]),
}

/// A primitive.
pub struct OpDef {
    pub name: &'static str,
    pub category: Category,
    /// One paragraph: what it computes, in MindSpore's terms.
    pub doc: &'static str,
    /// Where its parameters come from: MindSpore's definition plus
    /// overrides, or its own ([`Schema`]); [`OpDef::params`] gives them.
    pub schema: Schema,
    /// Takes any number of inputs (`MakeTuple`, `Partial`).
    pub variadic: bool,
    pub output: OutputDef,
    pub infer: InferFn,
    /// `None`: not differentiable (its inputs get zero gradients).
    pub grad: Option<GradFn>,
    /// `None` only for structural primitives, which the executor handles itself.
    pub kernel: Option<KernelFn>,
    /// What backends and tools know the op by, beyond its schema and rules.
    pub traits: Traits,
}

/// The traits of an op record: its kernel family, and how the program
/// generator may use it. Backends and tools match on these, never on names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Traits {
    /// The kernel family backends with kernels of their own for a family (the
    /// compiled plans, the GPU) and the exporter's encodings know it by.
    pub family: Family,
    /// How `gradgen` (the random program generator) may draw it.
    pub gradgen: Gradgen,
    /// An elementwise op's formula, written once: the registry's kernel, the
    /// compiled plans' fused loops and the GPU's CUDA are generated from it
    /// ([`formula`]).
    pub formula: Option<&'static formula::Formula>,
    /// How `vmap` runs it on a batch at once, where neither its formula nor
    /// its category says ([`batch::rule`]).
    pub batch: Option<batch::BatchRule>,
}

impl Traits {
    /// No family, drawn by `gradgen` like any op of its category.
    pub const NONE: Traits = Traits {
        family: Family::Other,
        gradgen: Gradgen::Any,
        formula: None,
        batch: None,
    };

    /// A member of `family`.
    pub const fn of(family: Family) -> Traits {
        Traits {
            family,
            gradgen: Gradgen::Any,
            formula: None,
            batch: None,
        }
    }

    /// These traits, drawn by `gradgen` as `gradgen` says.
    pub const fn gradgen(mut self, gradgen: Gradgen) -> Traits {
        self.gradgen = gradgen;
        self
    }

    /// These traits, batched by `vmap` as `rule` says.
    pub const fn batched(mut self, rule: batch::BatchRule) -> Traits {
        self.batch = Some(rule);
        self
    }
}

/// How the random program generator (`gradgen`) may use an op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gradgen {
    /// Drawn like any op of its category whose inputs it can make.
    Any,
    /// Never drawn: its gradient rule follows MindSpore rather than the
    /// derivative (see `ops/tests/gradients.rs`), or it needs inputs a random
    /// program rarely gives it.
    Avoid,
    /// A smooth unary op that keeps the shape, also drawn where a helper,
    /// branch or recursion needs one.
    SmoothUnary,
}

/// What a backend that runs a family of ops with one kernel of its own needs
/// to know of an op: backends match on this, never on an op's name, so a
/// primitive renamed or added in its record reaches them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Its own kernel alone.
    Other,
    /// Pooling over NCHW windows of 2-D images (`kernel_size`, `strides`,
    /// `pad_mode`, `data_format`): `x` for the forward, `(x, y, dy)` for the
    /// gradient.
    Pool2D { reduce: PoolReduce, grad: bool },
    /// 2-D convolution (`out_channel`, `kernel_size`, `stride`, `pad`,
    /// `dilation`, `group`, ...): the forward, and its gradients.
    Conv2D(ConvRole),
    /// Softmax along axes, or its logarithm; `grad`: its backward primitive,
    /// `(dy, y)`.
    Softmax { log: bool, grad: bool },
    /// Normalisation of each row over trailing axes, scaled and shifted.
    RowNorm(RowNorm),
    /// Batch normalisation per channel; `grad`: `BatchNormGrad`.
    BatchNorm { grad: bool },
    /// A reduction of one input over axes.
    Reduce { kind: ReduceKind, axes: ReduceAxes },
    /// The data unchanged under a new shape (`Reshape`, `Squeeze`, `Load`...).
    View,
    /// A strided copy of one input, its strides from the attributes.
    Strided(Strided),
    /// Concatenation along `axis`; `stack`: along a new one.
    Concat { stack: bool },
    /// `Split` into equal parts along `axis`.
    Split,
    /// `Gather(x, indices, axis)`.
    Gather,
    /// `Select(cond, x, y)`.
    Select,
    /// A dtype conversion (`dtype`).
    Cast,
    /// Reads only its input's shape (`Shape`).
    ShapeOf,
    /// A matrix product; `batched`: over leading batch dimensions.
    MatMul { form: MatMulForm, batched: bool },
    /// A bias added along the channel axis (`data_format`).
    BiasAdd,
    /// A gradient summed back to a shape: `BiasAddGrad` (`bias_grad`: over
    /// every axis but the channel's) or `_SumToShapeOf(grad, like)`.
    SumTo { bias_grad: bool },
    /// `_BroadcastToShapeOf(grad, like)`: a reduction's adjoint.
    BroadcastLike,
    /// Softmax cross-entropy against class indices, per row.
    SparseCrossEntropy,
    /// An optimizer's update of a weight and its state.
    Optimizer(Optimizer),
}

/// How a [`Family::Reduce`] combines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceKind {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
    All,
    Any,
}

/// Where a [`Family::Reduce`] finds its axes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceAxes {
    /// The attribute `axis` (`()`: every axis).
    Axis,
    /// The attribute `dim` (`None`: every axis).
    Dim,
    /// Every axis.
    All,
}

/// Which strided copy a [`Family::Strided`] op makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strided {
    /// `perm`.
    Transpose,
    /// `shape`, broadcast from the end.
    BroadcastTo,
    /// `multiples`.
    Tile,
    /// `begin`, `size`.
    Slice,
    /// `dim`, `start`, `length`.
    Narrow,
    /// `dim`, `start`, `end`, `step`.
    SliceExt,
    /// `begin`, `end`, `strides` and the masks.
    StridedSlice,
}

/// How a [`Family::MatMul`] op reads its operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatMulForm {
    /// `transpose_a`, `transpose_b` attributes.
    Transposes,
    /// As given, no transposes.
    Plain,
    /// `Dense(x, w, b)`: `x · wᵀ + b`.
    Dense,
}

/// Which optimizer a [`Family::Optimizer`] op applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Optimizer {
    Momentum,
    Sgd,
    Adam,
}

/// How a pooling window reduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolReduce {
    Max,
    Avg,
}

/// Which product of a 2-D convolution an op computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConvRole {
    /// `Conv2D(x, w)`.
    Forward,
    /// The image's gradient from the output's (`Conv2DBackpropInput`, and
    /// `Conv2DTranspose`, the same product used forward).
    InputGrad,
    /// The filter's gradient (`Conv2DBackpropFilter`).
    FilterGrad,
}

/// Which row normalisation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowNorm {
    /// MindSpore's `LayerNorm`: rows from `begin_norm_axis`, scale and shift
    /// shaped from `begin_params_axis`; `(y, mean, rstd)`.
    Layer,
    /// `LayerNormExt` (`normalized_shape`, as `mint.nn.functional.layer_norm`).
    LayerExt,
    /// `RmsNorm`: scaled by the root mean square, no shift.
    Rms,
    /// `LayerNormGrad`: `LayerNorm`'s backward primitive.
    LayerGrad,
}

impl std::fmt::Debug for OpDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OpDef({})", self.name)
    }
}

impl OpDef {
    /// The record with its kernel family set (for records made by a shared
    /// constructor).
    pub const fn in_family(mut self, family: Family) -> OpDef {
        self.traits.family = family;
        self
    }

    /// The record drawn by `gradgen` as `gradgen` says (for records made by a
    /// shared constructor).
    pub const fn drawn(mut self, gradgen: Gradgen) -> OpDef {
        self.traits.gradgen = gradgen;
        self
    }

    /// The record batched by `vmap` as `rule` says (for records made by a
    /// shared constructor).
    pub const fn batched(mut self, rule: batch::BatchRule) -> OpDef {
        self.traits.batch = Some(rule);
        self
    }

    /// The record computed by `formula` (an elementwise op).
    pub const fn with_formula(mut self, formula: &'static formula::Formula) -> OpDef {
        self.traits.formula = Some(formula);
        self
    }

    /// Its inputs and attributes in signature order: its own schema, or the
    /// one derived from MindSpore's definition with its overrides (made once).
    pub fn params(&self) -> &'static [ParamDef] {
        match self.schema {
            Schema::Own { params, .. } => params,
            Schema::MindSpore { .. } => schema::derived(self),
        }
    }

    pub fn inputs(&self) -> impl Iterator<Item = &'static ParamDef> {
        self.params().iter().filter(|p| p.is_input())
    }

    pub fn attrs(&self) -> impl Iterator<Item = &'static ParamDef> {
        self.params().iter().filter(|p| !p.is_input())
    }

    pub fn input_count(&self) -> usize {
        self.inputs().count()
    }

    pub fn param(&self, name: &str) -> Option<&'static ParamDef> {
        self.params().iter().find(|p| p.name == name)
    }

    /// `MatMul(x, y, transpose_a=false, transpose_b=false)`: the signature as text.
    pub fn signature(&self) -> String {
        let params: Vec<String> = self
            .params()
            .iter()
            .map(|p| match p.kind {
                ParamKind::Input => p.name.to_string(),
                ParamKind::Attr {
                    default: Some(d), ..
                } => format!("{}={}", p.name, d.value()),
                ParamKind::Attr { ty, default: None } => format!("{}: {}", p.name, ty.describe()),
            })
            .collect();
        let variadic = if self.variadic { ", ..." } else { "" };
        format!("{}({}{variadic})", self.name, params.join(", "))
    }
}

/// An error from a primitive's rules, with what it is about.
#[derive(Debug, Clone, PartialEq)]
pub struct OpError {
    pub message: String,
    pub target: ErrorTarget,
    /// Extra facts for the user ("`x` has shape [2, 3]").
    pub notes: Vec<String>,
}

/// Which argument of the call an error is about (for its source span).
#[derive(Debug, Clone, PartialEq)]
pub enum ErrorTarget {
    Call,
    Input(usize),
    Attr(&'static str),
}

impl OpError {
    pub fn call(message: impl Into<String>) -> OpError {
        OpError {
            message: message.into(),
            target: ErrorTarget::Call,
            notes: Vec::new(),
        }
    }

    pub fn input(index: usize, message: impl Into<String>) -> OpError {
        OpError {
            message: message.into(),
            target: ErrorTarget::Input(index),
            notes: Vec::new(),
        }
    }

    pub fn attr(name: &'static str, message: impl Into<String>) -> OpError {
        OpError {
            message: message.into(),
            target: ErrorTarget::Attr(name),
            notes: Vec::new(),
        }
    }

    pub fn with_note(mut self, note: impl Into<String>) -> OpError {
        self.notes.push(note.into());
        self
    }
}

impl std::fmt::Display for OpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Every primitive, by name.
pub fn registry() -> &'static HashMap<&'static str, &'static OpDef> {
    static REGISTRY: OnceLock<HashMap<&'static str, &'static OpDef>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut map = HashMap::new();
        for op in defs::all() {
            let previous = map.insert(op.name, op);
            assert!(previous.is_none(), "primitive {} is defined twice", op.name);
        }
        // A composite never shadows a primitive (a test checks there is none).
        for c in composite::composites().values() {
            map.entry(c.op.name).or_insert(c.op);
        }
        map
    })
}

pub fn lookup(name: &str) -> Option<&'static OpDef> {
    registry().get(name).copied()
}

/// All user-visible primitives, sorted by name (completion, docs).
pub fn public_ops() -> Vec<&'static OpDef> {
    let mut ops: Vec<_> = registry()
        .values()
        .copied()
        .filter(|o| o.category != Category::Internal)
        .collect();
    ops.sort_by_key(|o| o.name);
    ops
}

/// The closest known names to `name` (for "did you mean").
pub fn similar_names<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Vec<&'a str> {
    let lower = name.to_ascii_lowercase();
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .map(|c| (edit_distance(&lower, &c.to_ascii_lowercase()), c))
        .filter(|(d, c)| *d <= (c.len().max(name.len()) / 3).max(1))
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, c)| c).collect()
}

pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, &cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}
