//! Abstract values: what type and shape inference knows about a value. Primitive
//! shape rules (crate `ops`) take and return these.

use std::fmt;

use crate::ty::{DType, Dim, FnTy, Shape, Ty};
use crate::value::ScalarConst;

/// An abstract value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AbsVal {
    Tensor {
        dtype: DType,
        shape: Shape,
    },
    /// A scalar. `weak` marks a literal whose dtype yields to a tensor's when the
    /// two meet (`x - 1` with `x: f32[3]` is `f32[3]`), as in MindSpore and NumPy.
    Scalar {
        dtype: DType,
        value: Option<ScalarConst>,
        weak: bool,
    },
    Tuple(Vec<AbsVal>),
    Str(Option<String>),
    None,
    /// A function value: an opaque handle into the analyser's table of functions.
    Func(u32),
    /// Unknown: inference could not tell, or already reported why.
    Any,
    /// The `U` state token ([`crate::Value::Monad`]).
    Monad,
}

impl AbsVal {
    pub fn tensor(dtype: DType, dims: &[i64]) -> AbsVal {
        AbsVal::Tensor {
            dtype,
            shape: Shape::known(dims),
        }
    }

    pub fn scalar(dtype: DType) -> AbsVal {
        AbsVal::Scalar {
            dtype,
            value: None,
            weak: false,
        }
    }

    pub fn constant(c: ScalarConst, dtype: DType, weak: bool) -> AbsVal {
        AbsVal::Scalar {
            dtype,
            value: Some(c),
            weak,
        }
    }

    pub fn dtype(&self) -> Option<DType> {
        match self {
            AbsVal::Tensor { dtype, .. } | AbsVal::Scalar { dtype, .. } => Some(*dtype),
            _ => None,
        }
    }

    /// A tensor's shape; a scalar counts as rank 0.
    pub fn shape(&self) -> Option<Shape> {
        match self {
            AbsVal::Tensor { shape, .. } => Some(shape.clone()),
            AbsVal::Scalar { .. } => Some(Shape::scalar()),
            _ => None,
        }
    }

    pub fn is_weak(&self) -> bool {
        matches!(self, AbsVal::Scalar { weak: true, .. })
    }

    /// The value of a known scalar constant.
    pub fn const_value(&self) -> Option<ScalarConst> {
        match self {
            AbsVal::Scalar { value, .. } => *value,
            _ => None,
        }
    }

    /// Forgets constant values (a generic graph is specialised by type, not value).
    pub fn widen(&self) -> AbsVal {
        match self {
            AbsVal::Scalar { dtype, weak, .. } => AbsVal::Scalar {
                dtype: *dtype,
                value: None,
                weak: *weak,
            },
            AbsVal::Tuple(items) => AbsVal::Tuple(items.iter().map(AbsVal::widen).collect()),
            AbsVal::Str(_) => AbsVal::Str(None),
            other => other.clone(),
        }
    }

    /// The user-facing type (functions are described by `func_ty`).
    pub fn to_ty(&self, func_ty: &dyn Fn(u32) -> Option<FnTy>) -> Ty {
        match self {
            AbsVal::Tensor { dtype, shape } => Ty::Tensor(*dtype, shape.clone()),
            AbsVal::Scalar { dtype, .. } => Ty::Scalar(*dtype),
            AbsVal::Tuple(items) => Ty::Tuple(items.iter().map(|i| i.to_ty(func_ty)).collect()),
            AbsVal::Str(_) => Ty::Str,
            AbsVal::None => Ty::None,
            AbsVal::Func(id) => Ty::Func(func_ty(*id).map(Box::new)),
            AbsVal::Any => Ty::Unknown,
            AbsVal::Monad => Ty::Monad,
        }
    }

    /// The abstract value of a declared type (for annotated parameters).
    pub fn from_ty(ty: &Ty) -> AbsVal {
        match ty {
            Ty::Scalar(d) => AbsVal::scalar(*d),
            Ty::Tensor(d, s) => AbsVal::Tensor {
                dtype: *d,
                shape: s.clone(),
            },
            Ty::Tuple(items) => AbsVal::Tuple(items.iter().map(AbsVal::from_ty).collect()),
            Ty::Str => AbsVal::Str(None),
            Ty::None => AbsVal::None,
            Ty::Func(_) | Ty::Unknown => AbsVal::Any,
            Ty::Monad => AbsVal::Monad,
        }
    }

    /// The least upper bound of two values (joining `if` branches, recursion):
    /// differing dims become `?`, differing ranks `*`, differing constants unknown.
    /// `None` when the two cannot be joined (different dtypes or structures).
    pub fn join(&self, other: &AbsVal) -> Option<AbsVal> {
        Some(match (self, other) {
            (AbsVal::Any, x) | (x, AbsVal::Any) => x.clone(),
            (
                AbsVal::Tensor {
                    dtype: a,
                    shape: sa,
                },
                AbsVal::Tensor {
                    dtype: b,
                    shape: sb,
                },
            ) if a == b => AbsVal::Tensor {
                dtype: *a,
                shape: join_shapes(sa, sb),
            },
            (
                AbsVal::Scalar {
                    dtype: a,
                    value: va,
                    weak: wa,
                },
                AbsVal::Scalar {
                    dtype: b,
                    value: vb,
                    weak: wb,
                },
            ) if a == b => AbsVal::Scalar {
                dtype: *a,
                value: if va == vb { *va } else { None },
                weak: *wa && *wb,
            },
            (AbsVal::Tuple(a), AbsVal::Tuple(b)) if a.len() == b.len() => AbsVal::Tuple(
                a.iter()
                    .zip(b)
                    .map(|(x, y)| x.join(y))
                    .collect::<Option<_>>()?,
            ),
            (AbsVal::Str(a), AbsVal::Str(b)) => AbsVal::Str(if a == b { a.clone() } else { None }),
            (AbsVal::None, AbsVal::None) => AbsVal::None,
            (AbsVal::Monad, AbsVal::Monad) => AbsVal::Monad,
            (AbsVal::Func(a), AbsVal::Func(b)) if a == b => AbsVal::Func(*a),
            _ => return None,
        })
    }
}

fn join_shapes(a: &Shape, b: &Shape) -> Shape {
    match (a, b) {
        (Shape::Ranked(x), Shape::Ranked(y)) if x.len() == y.len() => Shape::Ranked(
            x.iter()
                .zip(y)
                .map(|(p, q)| if p == q { p.clone() } else { Dim::Unknown })
                .collect(),
        ),
        _ => Shape::Unranked,
    }
}

impl fmt::Display for AbsVal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AbsVal::Tensor { dtype, shape } => write!(f, "{dtype}{shape}"),
            AbsVal::Scalar { dtype, .. } => write!(f, "{dtype}"),
            AbsVal::Tuple(items) => crate::ty::fmt_tuple(f, items),
            AbsVal::Str(_) => f.write_str("str"),
            AbsVal::None => f.write_str("none"),
            AbsVal::Func(_) => f.write_str("fn(...)"),
            AbsVal::Any => f.write_str("?"),
            AbsVal::Monad => f.write_str("monad"),
        }
    }
}
