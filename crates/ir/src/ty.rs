//! Types as users write them (spec §3) and as inference reports them.

use std::fmt;

pub use tensor::DType;

/// One dimension of a tensor shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Dim {
    Known(i64),
    /// A symbolic size (`B`): equal wherever the same symbol appears in one signature.
    Sym(String),
    /// `?`: a size nobody knows before run time.
    Unknown,
}

impl Dim {
    pub fn known(&self) -> Option<i64> {
        match self {
            Dim::Known(n) => Some(*n),
            _ => None,
        }
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Known(n) => write!(f, "{n}"),
            Dim::Sym(s) => f.write_str(s),
            Dim::Unknown => f.write_str("?"),
        }
    }
}

/// A tensor shape: a list of dimensions, or unknown rank (`*`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Shape {
    Ranked(Vec<Dim>),
    Unranked,
}

impl Shape {
    pub fn known(dims: &[i64]) -> Shape {
        Shape::Ranked(dims.iter().map(|&d| Dim::Known(d)).collect())
    }

    pub fn scalar() -> Shape {
        Shape::Ranked(Vec::new())
    }

    pub fn rank(&self) -> Option<usize> {
        match self {
            Shape::Ranked(d) => Some(d.len()),
            Shape::Unranked => None,
        }
    }

    pub fn dims(&self) -> Option<&[Dim]> {
        match self {
            Shape::Ranked(d) => Some(d),
            Shape::Unranked => None,
        }
    }

    /// All dimensions as numbers, when every one is known.
    pub fn as_known(&self) -> Option<Vec<i64>> {
        self.dims()?.iter().map(Dim::known).collect()
    }

    /// Element count when known (`None` too when it overflows `i64`).
    pub fn numel(&self) -> Option<i64> {
        self.as_known()?
            .iter()
            .try_fold(1i64, |n, &d| n.checked_mul(d))
    }

    /// Whether the known dimensions' element count, or their byte size in
    /// `dtype` (as MindSpore stores it), overflows `i64`: a shape no tensor
    /// can have. A known 0 makes the count 0 whatever the other dimensions.
    pub fn overflows(&self, dtype: DType) -> bool {
        let Some(dims) = self.dims() else {
            return false;
        };
        let known = dims.iter().filter_map(Dim::known);
        if known.clone().any(|d| d == 0) {
            return false;
        }
        known
            .map(|d| d.max(0))
            .try_fold(dtype.size_of() as i64, |n, d| n.checked_mul(d))
            .is_none()
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Unranked => f.write_str("[*]"),
            Shape::Ranked(dims) => {
                f.write_str("[")?;
                for (i, d) in dims.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{d}")?;
                }
                f.write_str("]")
            }
        }
    }
}

/// A function type: parameter types and result.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FnTy {
    pub params: Vec<Ty>,
    pub ret: Ty,
}

/// A type in the DSL's type language.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Ty {
    Scalar(DType),
    Tensor(DType, Shape),
    Tuple(Vec<Ty>),
    /// A function value; `None` when its signature is not known (a generic graph).
    Func(Option<Box<FnTy>>),
    Str,
    None,
    /// Not known (inference gave up, or an error was reported already).
    Unknown,
    /// The state token that orders side effects; not written in source.
    Monad,
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Scalar(d) => write!(f, "{d}"),
            Ty::Tensor(d, s) => write!(f, "{d}{s}"),
            Ty::Tuple(items) => crate::ty::fmt_tuple(f, items),
            Ty::Func(None) => f.write_str("fn(...)"),
            Ty::Func(Some(sig)) => {
                f.write_str("fn(")?;
                for (i, t) in sig.params.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                write!(f, ") -> {}", sig.ret)
            }
            Ty::Str => f.write_str("str"),
            Ty::None => f.write_str("none"),
            Ty::Unknown => f.write_str("?"),
            Ty::Monad => f.write_str("monad"),
        }
    }
}

/// Writes items as a tuple: `(a, b)`, `(a,)`, `()`.
pub(crate) fn fmt_tuple<T: fmt::Display>(f: &mut fmt::Formatter<'_>, items: &[T]) -> fmt::Result {
    f.write_str("(")?;
    for (i, t) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{t}")?;
    }
    if items.len() == 1 {
        f.write_str(",")?;
    }
    f.write_str(")")
}
