//! Constant values: the payload of ValueNodes and of primitive attributes.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use tensor::Tensor;

use crate::ty::{DType, Ty};

/// A scalar constant. Floats compare by bits so values can be hashed.
#[derive(Debug, Clone, Copy)]
pub enum ScalarConst {
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl ScalarConst {
    pub fn as_f64(self) -> f64 {
        match self {
            ScalarConst::Int(i) => i as f64,
            ScalarConst::Float(x) => x,
            ScalarConst::Bool(b) => b as u8 as f64,
        }
    }

    pub fn as_i64(self) -> Option<i64> {
        match self {
            ScalarConst::Int(i) => Some(i),
            ScalarConst::Bool(b) => Some(b as i64),
            ScalarConst::Float(_) => None,
        }
    }
}

impl PartialEq for ScalarConst {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ScalarConst::Int(a), ScalarConst::Int(b)) => a == b,
            (ScalarConst::Float(a), ScalarConst::Float(b)) => a.to_bits() == b.to_bits(),
            (ScalarConst::Bool(a), ScalarConst::Bool(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for ScalarConst {}

impl Hash for ScalarConst {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            ScalarConst::Int(i) => i.hash(state),
            ScalarConst::Float(x) => x.to_bits().hash(state),
            ScalarConst::Bool(b) => b.hash(state),
        }
    }
}

impl fmt::Display for ScalarConst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScalarConst::Int(i) => write!(f, "{i}"),
            ScalarConst::Float(x) => fmt_float(*x, f),
            ScalarConst::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// Floats print so that they read back as floats (`1.0`, not `1`).
fn fmt_float(x: f64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if x.is_finite() && x == x.trunc() && x.abs() < 1e15 {
        write!(f, "{x:.1}")
    } else {
        write!(f, "{x:?}")
    }
}

/// The value of a primitive attribute (a constant keyword argument).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AttrValue {
    Int(i64),
    Float(FloatBits),
    Bool(bool),
    Str(String),
    DType(DType),
    Tuple(Vec<AttrValue>),
    None,
}

/// An `f64` that can be hashed and compared (by bits).
#[derive(Debug, Clone, Copy)]
pub struct FloatBits(pub f64);

impl PartialEq for FloatBits {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}
impl Eq for FloatBits {}
impl Hash for FloatBits {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state)
    }
}

impl AttrValue {
    pub fn float(x: f64) -> AttrValue {
        AttrValue::Float(FloatBits(x))
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            AttrValue::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            AttrValue::Int(i) => Some(*i as f64),
            AttrValue::Float(x) => Some(x.0),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            AttrValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            AttrValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// An int or a tuple of ints, as a list (`axis=1` and `axis=(1,)` alike).
    pub fn as_ints(&self) -> Option<Vec<i64>> {
        match self {
            AttrValue::Int(i) => Some(vec![*i]),
            AttrValue::Tuple(items) => items.iter().map(AttrValue::as_int).collect(),
            _ => None,
        }
    }
}

impl fmt::Display for AttrValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttrValue::Int(i) => write!(f, "{i}"),
            AttrValue::Float(x) => fmt_float(x.0, f),
            AttrValue::Bool(b) => write!(f, "{b}"),
            AttrValue::Str(s) => write!(f, "{s:?}"),
            AttrValue::DType(d) => write!(f, "{d}"),
            AttrValue::None => f.write_str("none"),
            AttrValue::Tuple(items) => crate::ty::fmt_tuple(f, items),
        }
    }
}

/// A primitive with its attributes bound, as in a MindIR Primitive ValueNode.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PrimRef {
    pub name: String,
    /// Attributes given explicitly, in schema order; defaults are not stored.
    pub attrs: Vec<(String, AttrValue)>,
}

impl PrimRef {
    pub fn new(name: impl Into<String>) -> PrimRef {
        PrimRef {
            name: name.into(),
            attrs: Vec::new(),
        }
    }

    pub fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

/// What a gradient is taken with respect to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum WrtItem {
    /// A parameter of the differentiated function, by position.
    Param(usize),
    /// A top-level weight, by name.
    Weight(String),
}

/// Automatic-differentiation metafunctions (spec §7).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MetaFn {
    /// `grad(f, wrt=...)`; `wrt: None` means the first parameter, returned bare.
    Grad { wrt: Option<Vec<WrtItem>> },
    /// `value_and_grad(f, wrt=...)`.
    ValueAndGrad { wrt: Option<Vec<WrtItem>> },
    /// `vjp(f)`.
    Vjp,
    /// `jvp(f)`: forward mode, `jvp(f)(x..., v...)` is `(f(x...), J·v)`.
    Jvp,
    /// `hvp(f)`: `hvp(f)(x..., v)` is the Hessian of `f`'s summed output with
    /// respect to its first parameter, times `v`.
    Hvp,
    /// `vmap(f, in_axes=..., out_axes=...)`: `f` mapped over a batch axis
    /// of its arguments (JAX's `jax.vmap`).
    Vmap {
        in_axes: BatchAxes,
        out_axes: BatchAxes,
    },
    /// `jacfwd(f, wrt=...)`: the Jacobian by forward mode, shaped
    /// `out.shape + x.shape` (JAX's convention).
    Jacfwd { wrt: Option<Vec<WrtItem>> },
    /// `jacrev(f, wrt=...)`: the Jacobian by reverse mode.
    Jacrev { wrt: Option<Vec<WrtItem>> },
    /// `hessian(f, wrt=...)`: `jacfwd(jacrev(f))`.
    Hessian { wrt: Option<Vec<WrtItem>> },
    /// `checkpoint(f)`: `f`, whose intermediates a derivative recomputes
    /// in the backward pass instead of keeping (MindSpore's `recompute`).
    Checkpoint,
}

/// `vmap`'s `in_axes`/`out_axes`: one axis (or `none`: not mapped) for
/// every argument (output), or one per argument (per output element).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BatchAxes {
    All(Option<i64>),
    Each(Vec<Option<i64>>),
}

impl BatchAxes {
    /// The axis of argument (output element) `i`.
    pub fn get(&self, i: usize) -> Option<i64> {
        match self {
            BatchAxes::All(a) => *a,
            BatchAxes::Each(v) => v.get(i).copied().flatten(),
        }
    }

    /// `0`, `none`, `(1, none)`, as written.
    pub fn text(&self) -> String {
        let one = |a: &Option<i64>| a.map_or("none".to_string(), |a| a.to_string());
        match self {
            BatchAxes::All(a) => one(a),
            BatchAxes::Each(v) if v.len() == 1 => format!("({},)", one(&v[0])),
            BatchAxes::Each(v) => {
                format!("({})", v.iter().map(one).collect::<Vec<_>>().join(", "))
            }
        }
    }
}

impl MetaFn {
    pub fn name(&self) -> &'static str {
        match self {
            MetaFn::Grad { .. } => "grad",
            MetaFn::ValueAndGrad { .. } => "value_and_grad",
            MetaFn::Vjp => "vjp",
            MetaFn::Jvp => "jvp",
            MetaFn::Hvp => "hvp",
            MetaFn::Vmap { .. } => "vmap",
            MetaFn::Jacfwd { .. } => "jacfwd",
            MetaFn::Jacrev { .. } => "jacrev",
            MetaFn::Hessian { .. } => "hessian",
            MetaFn::Checkpoint => "checkpoint",
        }
    }

    /// How many parameters the differentiated function takes, when `meta(f)`
    /// is called with `nargs` arguments (`jvp` takes a tangent per argument,
    /// `hvp` one vector after them).
    /// `wrt=` of the metafunctions that take it.
    pub fn wrt(&self) -> Option<&Vec<WrtItem>> {
        match self {
            MetaFn::Grad { wrt }
            | MetaFn::ValueAndGrad { wrt }
            | MetaFn::Jacfwd { wrt }
            | MetaFn::Jacrev { wrt }
            | MetaFn::Hessian { wrt } => wrt.as_ref(),
            _ => None,
        }
    }

    pub fn primal_arity(&self, nargs: usize) -> Option<usize> {
        match self {
            MetaFn::Grad { .. }
            | MetaFn::ValueAndGrad { .. }
            | MetaFn::Vjp
            | MetaFn::Vmap { .. }
            | MetaFn::Jacfwd { .. }
            | MetaFn::Jacrev { .. }
            | MetaFn::Hessian { .. }
            | MetaFn::Checkpoint => Some(nargs),
            MetaFn::Jvp => nargs.is_multiple_of(2).then_some(nargs / 2),
            MetaFn::Hvp => nargs.checked_sub(1),
        }
    }
}

/// A constant: the value of a ValueNode.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Scalar {
        value: ScalarConst,
        dtype: DType,
        /// A literal written in the source: its dtype yields to a tensor's.
        weak: bool,
    },
    Str(String),
    None,
    Tuple(Vec<Value>),
    Tensor(Arc<Tensor>),
    Prim(PrimRef),
    /// A graph of the same body (nested graph), by id.
    Graph(crate::graph::GraphId),
    /// A top-level graph, by name (bodies are lowered separately).
    Global(String),
    Meta(MetaFn),
    Type(Ty),
    /// MindIR's `U` monad: the state token that orders side effects (weight
    /// updates). Lowering threads it through graphs with effects (spec §11).
    Monad,
}

impl Value {
    pub fn int(i: i64) -> Value {
        Value::Scalar {
            value: ScalarConst::Int(i),
            dtype: DType::I64,
            weak: true,
        }
    }

    pub fn float(x: f64) -> Value {
        Value::Scalar {
            value: ScalarConst::Float(x),
            dtype: DType::F32,
            weak: true,
        }
    }

    pub fn bool(b: bool) -> Value {
        Value::Scalar {
            value: ScalarConst::Bool(b),
            dtype: DType::Bool,
            weak: false,
        }
    }
}
