//! MindSpore 2.10's primitive schemas as data: every primitive's kind, its
//! arguments in MindIR's order with their roles, declared types and
//! defaults, its side effects and the first sentence of its docstring.
//!
//! [`PRIMS`] is generated (`generated.rs`, by
//! `crates/ms-schema/data/gen_mindspore_schemas.py` from MindSpore's own
//! definitions); this crate holds it apart from the registry so the 25,000
//! generated lines compile once, not with every change to an op. How these
//! primitives map onto the registry's is `ops::mindspore`.

use std::collections::HashMap;
use std::sync::OnceLock;

#[rustfmt::skip]
mod generated;

pub use generated::*;

// ---------------------------------------------------------------------------
// The schema table's types.

/// How MindIR holds a primitive's arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MsKind {
    /// A primitive function (`PrimFunc_X` in dumps; classes in
    /// `ops/auto_generate/gen_ops_prim.py`): every argument is a node input,
    /// `__init__`'s ones included, in the order of its definition.
    Function,
    /// An old-style primitive (`ops/operations/*.py`): the tensor inputs are
    /// node inputs, the `__init__` arguments attributes on the primitive.
    Primitive,
}

/// What an argument is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MsRole {
    /// Of a primitive function: an argument of its call (a node input).
    Call,
    /// Of a primitive function: an argument of its `__init__` (also a node
    /// input, after the call's ones in most cases).
    Init,
    /// Of an old-style primitive: a node input.
    Input,
    /// Of an old-style primitive: an attribute on the primitive.
    Attr,
}

/// A MindSpore enum: each string and the number MindIR holds for it.
#[derive(Debug, PartialEq)]
pub struct MsEnum {
    pub name: &'static str,
    pub values: &'static [(&'static str, i64)],
}

impl MsEnum {
    /// The number of a string (matched case-insensitively).
    pub fn value(&self, s: &str) -> Option<i64> {
        self.values
            .iter()
            .find(|(n, _)| *n == s)
            .or_else(|| self.values.iter().find(|(n, _)| n.eq_ignore_ascii_case(s)))
            .map(|&(_, v)| v)
    }

    /// The string of a number (the first one, where several share it).
    pub fn name_of(&self, v: i64) -> Option<&'static str> {
        self.values.iter().find(|&&(_, x)| x == v).map(|&(n, _)| n)
    }
}

/// An argument's type, as far as MindSpore's definitions say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MsTy {
    Tensor,
    /// A tensor or a number (`Union[Tensor, Number]`).
    TensorOrScalar,
    /// A tuple or list of tensors.
    Tensors,
    Int,
    Float,
    Bool,
    /// An int, a float or a bool.
    Number,
    Str,
    /// An int or a tuple of ints.
    Ints,
    /// A tuple of ints.
    IntTuple,
    /// An int or a pair of ints (or an NCHW 4-tuple), always a pair in MindIR
    /// (`to_pair`, `to_kernel_size`, `to_strides`, ... make it so).
    Pair,
    /// A tuple of floats.
    Floats,
    /// A dtype; a `TypeId` number in a primitive function's node input.
    DType,
    /// A string that MindIR holds as this enum's number (`str_to_enum`).
    Enum(&'static MsEnum),
    /// Not declared anywhere MindSpore's Python sources say.
    Any,
}

impl MsTy {
    /// Whether a value of this type is a tensor (or may be one).
    pub fn is_tensor(&self) -> bool {
        matches!(self, MsTy::Tensor | MsTy::TensorOrScalar | MsTy::Tensors)
    }

    pub fn describe(&self) -> &'static str {
        match self {
            MsTy::Tensor => "Tensor",
            MsTy::TensorOrScalar => "Union[Tensor, Number]",
            MsTy::Tensors => "tuple[Tensor]",
            MsTy::Int => "int",
            MsTy::Float => "float",
            MsTy::Bool => "bool",
            MsTy::Number => "Number",
            MsTy::Str | MsTy::Enum(_) => "str",
            MsTy::Ints => "Union[int, tuple[int]]",
            MsTy::IntTuple => "tuple[int]",
            MsTy::Pair => "Union[int, tuple[int, int]]",
            MsTy::Floats => "tuple[float]",
            MsTy::DType => "dtype",
            MsTy::Any => "",
        }
    }
}

/// A default value, as MindSpore writes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MsValue {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'static str),
    Ints(&'static [i64]),
    Floats(&'static [f64]),
    Bools(&'static [bool]),
    /// `mstype.int32`: the dtype's MindSpore name.
    DType(&'static str),
    /// An expression that is not a literal, as MindSpore wrote it.
    Other(&'static str),
}

impl std::fmt::Display for MsValue {
    /// Python's spelling (`False`, `(1, 1)`, `'mean'`, `mstype.int32`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fn tuple<T: std::fmt::Display>(
            f: &mut std::fmt::Formatter<'_>,
            items: &[T],
        ) -> std::fmt::Result {
            let items: Vec<String> = items.iter().map(|x| x.to_string()).collect();
            if items.len() == 1 {
                write!(f, "({},)", items[0])
            } else {
                write!(f, "({})", items.join(", "))
            }
        }
        match self {
            MsValue::None => f.write_str("None"),
            MsValue::Bool(true) => f.write_str("True"),
            MsValue::Bool(false) => f.write_str("False"),
            MsValue::Int(i) => write!(f, "{i}"),
            MsValue::Float(x) => write!(f, "{x:?}"),
            MsValue::Str(s) => write!(f, "'{s}'"),
            MsValue::Ints(v) => tuple(f, v),
            MsValue::Floats(v) => tuple(f, &v.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>()),
            MsValue::Bools(v) => tuple(
                f,
                &v.iter()
                    .map(|&b| if b { "True" } else { "False" })
                    .collect::<Vec<_>>(),
            ),
            MsValue::DType(d) => write!(f, "mstype.{d}"),
            MsValue::Other(s) => f.write_str(s),
        }
    }
}

/// One argument of a MindSpore primitive.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MsArg {
    pub name: &'static str,
    pub role: MsRole,
    pub ty: MsTy,
    /// The type as MindSpore's docstring or argument handler declares it
    /// (`Union[int, tuple[int]], optional`); empty when none does.
    pub decl: &'static str,
    /// `None`: required.
    pub default: Option<MsValue>,
}

impl MsArg {
    pub const fn new(
        name: &'static str,
        role: MsRole,
        ty: MsTy,
        decl: &'static str,
        default: Option<MsValue>,
    ) -> MsArg {
        MsArg {
            name,
            role,
            ty,
            decl,
            default,
        }
    }

    /// Whether MindIR holds it as a node input.
    pub fn is_node_input(&self) -> bool {
        !matches!(self.role, MsRole::Attr)
    }

    /// `name: type = default`.
    pub fn describe(&self) -> String {
        let mut s = self.name.to_string();
        let ty = self.ty.describe();
        if !ty.is_empty() {
            s.push_str(": ");
            s.push_str(ty);
        }
        if let Some(d) = self.default {
            s.push_str(&format!(" = {d}"));
        }
        s
    }
}

/// A MindSpore primitive.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MsPrim {
    pub name: &'static str,
    pub kind: MsKind,
    /// The file of MindSpore's package that defines it
    /// (`ops/auto_generate/gen_ops_prim.py`).
    pub source: &'static str,
    /// The first sentence of its docstring (empty when it has none).
    pub doc: &'static str,
    /// `side_effect_mem`, `side_effect_io`, `side_effect_hidden` (its
    /// labels), and `writes:NAME` for each input it writes to.
    pub effects: &'static [&'static str],
    /// Its arguments, in MindIR's order; `None` for primitives defined only
    /// in C++ (`MakeTuple`, view and tensor-method primitives), whose
    /// signature MindSpore's Python sources do not give.
    pub args: Option<&'static [MsArg]>,
}

impl MsPrim {
    pub const fn new(
        name: &'static str,
        kind: MsKind,
        source: &'static str,
        doc: &'static str,
        effects: &'static [&'static str],
        args: Option<&'static [MsArg]>,
    ) -> MsPrim {
        MsPrim {
            name,
            kind,
            source,
            doc,
            effects,
            args,
        }
    }

    pub fn args(&self) -> &'static [MsArg] {
        self.args.unwrap_or(&[])
    }

    pub fn arg(&self, name: &str) -> Option<&'static MsArg> {
        self.args().iter().find(|a| a.name == name)
    }

    /// The arguments MindIR holds as node inputs, in order.
    pub fn node_inputs(&self) -> impl Iterator<Item = &'static MsArg> {
        self.args().iter().filter(|a| a.is_node_input())
    }

    /// `MatMul(input: Tensor, mat2: Tensor, transpose_a: bool = False, ...)`.
    pub fn signature(&self) -> String {
        match self.args {
            None => format!("{}(...)", self.name),
            Some(args) => {
                let args: Vec<String> = args.iter().map(MsArg::describe).collect();
                format!("{}({})", self.name, args.join(", "))
            }
        }
    }

    /// What kind of primitive it is and which arguments are which, in a sentence.
    pub fn kind_note(&self) -> String {
        let names = |pred: &dyn Fn(&MsArg) -> bool| -> Vec<String> {
            self.args()
                .iter()
                .filter(|a| pred(a))
                .map(|a| format!("`{}`", a.name))
                .collect()
        };
        match (self.kind, self.args) {
            (_, None) => format!(
                "defined in C++ only ({}); MindSpore's Python sources do not give its signature",
                self.source
            ),
            (MsKind::Function, Some(_)) => {
                let init = names(&|a| a.role == MsRole::Init);
                if init.is_empty() {
                    "a primitive function: every argument is a node input".to_string()
                } else {
                    format!(
                        "a primitive function: every argument is a node input; {} {} given to `__init__`",
                        init.join(", "),
                        if init.len() == 1 { "is" } else { "are" }
                    )
                }
            }
            (MsKind::Primitive, Some(_)) => {
                let attrs = names(&|a| a.role == MsRole::Attr);
                if attrs.is_empty() {
                    "an old-style primitive without attributes".to_string()
                } else {
                    format!(
                        "an old-style primitive: {} {} attributes on the primitive",
                        attrs.join(", "),
                        if attrs.len() == 1 { "is an" } else { "are" }
                    )
                    .replace("is an attributes", "is an attribute")
                }
            }
        }
    }
}

/// MindSpore's primitive of this name.
pub fn schema(name: &str) -> Option<&'static MsPrim> {
    PRIMS
        .binary_search_by(|p| p.name.cmp(name))
        .ok()
        .map(|i| &PRIMS[i])
}

/// Whether `name` is a MindSpore 2.10 primitive.
pub fn is_mindspore_primitive(name: &str) -> bool {
    schema(name).is_some()
}

/// The enum MindSpore holds an argument of this name as (`data_format`:
/// `Format`), from the first primitive function whose argument it is.
pub fn enum_of_arg(name: &str) -> Option<&'static MsEnum> {
    static ENUMS: OnceLock<HashMap<&'static str, &'static MsEnum>> = OnceLock::new();
    let map = ENUMS.get_or_init(|| {
        let mut map = HashMap::new();
        for a in PRIMS.iter().flat_map(|p| p.args()) {
            if let MsTy::Enum(e) = a.ty {
                map.entry(a.name).or_insert(e);
            }
        }
        map
    });
    map.get(name).copied()
}
