//! MindSpore 2.10's primitives, and how they map onto this registry.
//!
//! [`PRIMS`] (generated into `mindspore_schema.rs` by
//! `crates/ops/data/gen_mindspore_schemas.py` from MindSpore's own
//! definitions) holds every MindSpore primitive: its kind, its arguments in
//! MindIR's order with their roles, declared types and defaults, its side
//! effects and the first sentence of its docstring.
//!
//! How a MindSpore primitive maps onto the registry's is derived from that
//! table ([`mapping`]): the registry primitive of the same name (or the one
//! [`ALIASES`] names), MindSpore's arguments that the registry has as
//! attributes become those attributes (by name, converted as MindSpore writes
//! them: dtypes as `TypeId` numbers, strings as enum numbers), and the others
//! are its inputs, in order. [`ALIASES`] is the one declarative table of the
//! exceptions: other names, renamed arguments, different conventions. A
//! primitive added to the registry under MindSpore's name, with MindSpore's
//! argument names (the registry's conventions), maps with no code and no row.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::{lookup, AttrType, Category, OpDef, ParamKind};

pub use crate::mindspore_schema::{PRIMS, SERIES, VERSION};

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

/// MindSpore primitives the registry does not support (neither by name nor
/// through [`ALIASES`]), sorted by name.
pub fn unsupported() -> impl Iterator<Item = &'static MsPrim> {
    PRIMS.iter().filter(|p| registry_op(p.name).is_none())
}

// ---------------------------------------------------------------------------
// The declarative table of exceptions.

/// How one MindSpore argument maps where the name alone does not say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ArgRule {
    /// The registry's attribute of another name (`Zeros`' `size` is `shape`).
    Attr(&'static str),
    /// The registry's attribute of this name, converted so.
    AttrConv(&'static str, Conv),
    /// The registry's attribute of MindSpore's name, converted so
    /// (`MaxPoolGrad`'s `kernel_size` is an NCHW 4-tuple in MindIR).
    Conv(Conv),
    /// Of an old-style primitive: the registry's attribute of MindSpore's
    /// name, stored under this second name as well (MindSpore's C++ reads
    /// `MaxPoolGrad`'s `data_format` as `format`).
    AlsoStored(&'static str),
    /// An argument the registry does not have: export writes this value, and
    /// import refuses any other.
    Fixed(MsValue),
}

/// A MindSpore primitive the registry has under another name, or whose
/// arguments map otherwise than by name.
#[derive(Debug, Clone, Copy)]
pub struct Alias {
    /// MindSpore's name (in `.mindir` files and `.ir` dumps).
    pub ms: &'static str,
    /// The registry's name.
    pub ours: &'static str,
    /// Whether export writes `ours` as this MindSpore primitive.
    pub export: bool,
    /// MindSpore's arguments that do not map by name: `(name, rule)`.
    pub args: &'static [(&'static str, ArgRule)],
    /// Of a primitive function: registry attributes that are none of its
    /// arguments, which MindSpore keeps as attributes on the primitive
    /// (`primitive_attrs` in its dumps) and its kernel reads there.
    pub prim_attrs: &'static [&'static str],
}

const fn same(ms: &'static str, ours: &'static str) -> Alias {
    Alias {
        ms,
        ours,
        export: false,
        args: &[],
        prim_attrs: &[],
    }
}

const fn renamed(ms: &'static str, ours: &'static str) -> Alias {
    Alias {
        ms,
        ours,
        export: true,
        args: &[],
        prim_attrs: &[],
    }
}

const fn args(ms: &'static str, args: &'static [(&'static str, ArgRule)]) -> Alias {
    Alias {
        ms,
        ours: ms,
        export: true,
        args,
        prim_attrs: &[],
    }
}

const fn prim_attrs(ms: &'static str, prim_attrs: &'static [&'static str]) -> Alias {
    Alias {
        ms,
        ours: ms,
        export: true,
        args: &[],
        prim_attrs,
    }
}

/// Every exception to "the registry primitive of MindSpore's name, with
/// MindSpore's argument names". One table for the checker, import and export.
pub const ALIASES: &[Alias] = &[
    // Spellings of older MindSpore versions' dumps: the scalar primitives.
    same("scalar_add", "ScalarAdd"),
    same("scalar_sub", "ScalarSub"),
    same("scalar_mul", "ScalarMul"),
    same("scalar_div", "ScalarDiv"),
    same("scalar_lt", "ScalarLt"),
    same("scalar_gt", "ScalarGt"),
    same("scalar_le", "ScalarLe"),
    same("scalar_ge", "ScalarGe"),
    same("scalar_eq", "ScalarEq"),
    same("Relu", "ReLU"),
    same("Gelu", "GeLU"),
    same("make_tuple", "MakeTuple"),
    // A list is a tuple in the DSL (nothing mutates it in an exported graph).
    same("make_list", "MakeTuple"),
    same("tuple_getitem", "TupleGetItem"),
    same("switch", "Switch"),
    same("depend", "Depend"),
    same("return", "Return"),
    same("stop_gradient", "StopGradient"),
    // The registry's name differs from MindSpore's.
    renamed("Argmax", "ArgMax"),
    // The registry's argument names differ from MindSpore 2.10's (see
    // `DEVIATIONS` in `tests/mindspore_schema.rs`).
    args("Transpose", &[("dims", ArgRule::Attr("perm"))]),
    args("Tile", &[("dims", ArgRule::Attr("multiples"))]),
    args("Zeros", &[("size", ArgRule::Attr("shape"))]),
    args("Fill", &[("type", ArgRule::Attr("dtype"))]),
    // Attributes old-style primitives store otherwise than their `__init__`
    // arguments read, as MindSpore's C++ (shape inference, CPU kernels) reads
    // them: windows and strides as NCHW 4-tuples (`to_kernel_size`), the
    // padding mode upper-cased, the layout under `format` too.
    args(
        "MaxPoolGrad",
        &[
            ("kernel_size", ArgRule::Conv(Conv::Nchw4)),
            ("strides", ArgRule::Conv(Conv::Nchw4)),
            ("pad_mode", ArgRule::Conv(Conv::Upper)),
            ("data_format", ArgRule::AlsoStored("format")),
        ],
    ),
    args(
        "MaxPoolGradGrad",
        &[
            ("kernel_size", ArgRule::Conv(Conv::Nchw4)),
            ("strides", ArgRule::Conv(Conv::Nchw4)),
            ("pad_mode", ArgRule::Conv(Conv::Upper)),
        ],
    ),
    // A reduction's `axis` is a tuple in MindIR: MindSpore's parser casts an
    // int to one (the op definition's `type_cast`); a loaded model is not cast.
    args("ReduceAll", AXIS_TUPLE),
    args("ReduceAny", AXIS_TUPLE),
    args("ReduceMax", AXIS_TUPLE),
    args("ReduceMean", AXIS_TUPLE),
    args("ReduceMin", AXIS_TUPLE),
    args("ReduceProd", AXIS_TUPLE),
    args("ReduceSum", AXIS_TUPLE),
    // MindSpore's bprop of LayerNorm sets the forward's `epsilon` on the
    // LayerNormGrad primitive, whose CPU kernel reads it there (1e-7 without).
    prim_attrs("LayerNormGrad", &["epsilon"]),
];

/// `axis` as a tuple (an int `a` is `(a,)`).
const AXIS_TUPLE: &[(&str, ArgRule)] = &[("axis", ArgRule::Conv(Conv::IntTuple))];

/// Attribute names old-style primitives store under another name than their
/// `__init__` argument (`Conv2D(data_format=...)` keeps `format`).
pub const STORED_ATTR_NAMES: &[(&str, &str)] = &[("format", "data_format")];

/// The row of [`ALIASES`] for MindSpore's `ms`. A registry primitive of
/// MindSpore's own name takes precedence over a row naming another.
fn alias(ms: &str) -> Option<&'static Alias> {
    let row = ALIASES.iter().find(|a| a.ms == ms)?;
    (row.ours == ms || lookup(ms).is_none()).then_some(row)
}

/// The registry name of a MindSpore primitive name (itself when no alias
/// renames it).
pub fn registry_name(ms: &str) -> &str {
    alias(ms).map_or(ms, |a| a.ours)
}

/// The registry primitive a MindSpore name maps to, if any.
pub fn registry_op(ms: &str) -> Option<&'static OpDef> {
    lookup(registry_name(ms))
}

// ---------------------------------------------------------------------------
// Derived mappings.

/// How a MindSpore argument's value is written, beyond its plain value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Conv {
    Plain,
    /// A dtype as a `TypeId` number (`Float32` is 43).
    TypeId,
    /// A string as the enum's number (`data_format` `"NCHW"` is 0).
    Enum(&'static MsEnum),
    /// An int that MindSpore keeps as a one-element tuple (`Softmax`'s axis).
    IntTuple,
    /// A window as a pair: `k` is `(k, k)`, `(1, 1, h, w)` is `(h, w)`.
    Pair,
    /// `None` for "all axes": the registry's `()`.
    NoneIsEmpty,
    /// A window or stride as MindSpore's NCHW 4-tuple: `k` is `(1, 1, k, k)`,
    /// `(h, w)` is `(1, 1, h, w)`.
    Nchw4,
    /// A string MindSpore stores upper-cased (`pad_mode` `"valid"` is `"VALID"`).
    Upper,
}

/// What one node input of a MindSpore primitive is to the registry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ArgMap {
    /// The registry primitive's next input.
    Input,
    /// The registry's attribute of this name.
    Attr(&'static str, Conv),
    /// An argument the registry does not have: MindSpore's value for it.
    Fixed(MsValue),
}

/// How a MindSpore primitive maps onto a registry primitive.
#[derive(Debug, Clone)]
pub struct Mapping {
    /// MindSpore's name.
    pub ms: &'static str,
    pub def: &'static OpDef,
    /// MindSpore's schema (`None` for dump spellings such as `scalar_add`).
    pub schema: Option<&'static MsPrim>,
    /// For a primitive with a known signature: one entry per node input, in
    /// MindSpore's order (an old-style primitive's attributes on the
    /// primitive map by name, [`Mapping::attr`]). `None`: the node inputs are
    /// the registry's inputs in order (then its attributes).
    pub args: Option<Vec<ArgMap>>,
    /// Whether export writes `def` as this MindSpore primitive.
    pub export: bool,
}

impl Mapping {
    /// The row of [`ALIASES`] for MindSpore's argument `ms_arg`, if any.
    fn rule(&self, ms_arg: &str) -> Option<ArgRule> {
        alias(self.ms)
            .and_then(|a| a.args.iter().find(|(n, _)| *n == ms_arg))
            .map(|(_, r)| *r)
    }

    /// The registry attribute that MindSpore's attribute `ms_attr` (on an
    /// old-style primitive) is, if the registry has it.
    pub fn attr(&self, ms_attr: &str) -> Option<&'static str> {
        let name = match self.rule(ms_attr) {
            Some(ArgRule::Attr(n)) | Some(ArgRule::AttrConv(n, _)) => n,
            Some(ArgRule::Conv(_)) | Some(ArgRule::AlsoStored(_)) => ms_attr,
            Some(ArgRule::Fixed(_)) => return None,
            None => STORED_ATTR_NAMES
                .iter()
                .find(|(ms, _)| *ms == ms_attr)
                .map_or(ms_attr, |(_, ours)| ours),
        };
        let p = self.def.param(name)?;
        (!p.is_input()).then_some(p.name)
    }

    /// The registry attributes MindSpore's primitive function keeps as
    /// attributes on the primitive (a row of [`ALIASES`] names them).
    pub fn prim_attrs(&self) -> &'static [&'static str] {
        alias(self.ms).map_or(&[], |a| a.prim_attrs)
    }

    /// How export converts the value of MindSpore's attribute `ms_attr` (on
    /// an old-style primitive): [`Conv::Plain`] unless a row of [`ALIASES`]
    /// says otherwise.
    pub fn attr_conv(&self, ms_attr: &str) -> Conv {
        match self.rule(ms_attr) {
            Some(ArgRule::AttrConv(_, c)) | Some(ArgRule::Conv(c)) => c,
            _ => Conv::Plain,
        }
    }

    /// The second name MindSpore stores its attribute `ms_attr` (on an
    /// old-style primitive) under as well, if a row of [`ALIASES`] gives one.
    pub fn also_stored(&self, ms_attr: &str) -> Option<&'static str> {
        match self.rule(ms_attr) {
            Some(ArgRule::AlsoStored(n)) => Some(n),
            _ => None,
        }
    }
}

fn attr_type(def: &OpDef, name: &str) -> Option<AttrType> {
    match def.param(name)?.kind {
        ParamKind::Attr { ty, .. } => Some(ty),
        ParamKind::Input => None,
    }
}

/// The conversion of MindSpore argument `a` for the registry attribute `attr`.
fn conv_of(a: &MsArg, def: &OpDef, attr: &str) -> Conv {
    match a.ty {
        MsTy::DType => Conv::TypeId,
        MsTy::Enum(e) => Conv::Enum(e),
        MsTy::Pair => Conv::Pair,
        MsTy::IntTuple if matches!(attr_type(def, attr), Some(AttrType::Int | AttrType::Ints)) => {
            Conv::IntTuple
        }
        _ => Conv::Plain,
    }
}

/// Derives the mapping of MindSpore primitive `ms` onto registry primitive `def`.
fn derive(ms: &'static str, def: &'static OpDef) -> Result<Mapping, String> {
    let row = alias(ms);
    derive_with(
        ms,
        def,
        row.map_or(&[], |a| a.args),
        row.is_none_or(|a| a.export),
    )
}

/// [`derive`] with these exceptions for the arguments.
fn derive_with(
    ms: &'static str,
    def: &'static OpDef,
    rules: &[(&str, ArgRule)],
    export: bool,
) -> Result<Mapping, String> {
    let schema = schema(ms);
    let mut mapping = Mapping {
        ms,
        def,
        schema,
        args: None,
        export,
    };
    let Some(prim) = schema else {
        return Ok(mapping);
    };
    let Some(all) = prim.args else {
        return Ok(mapping);
    };
    if def.variadic {
        return Ok(mapping);
    }
    // Node inputs: each is a registry attribute (by rule or by name) or a
    // candidate for the registry's inputs.
    let mut out: Vec<Option<ArgMap>> = Vec::new();
    let mut candidates: Vec<usize> = Vec::new();
    // The state token of an ordered call is implicit (the DSL's §12).
    let node_inputs: Vec<&MsArg> = all
        .iter()
        .filter(|a| a.is_node_input() && !(crate::is_ordered(def.name) && a.name == "u"))
        .collect();
    for (i, a) in node_inputs.iter().enumerate() {
        let rule = rules.iter().find(|(n, _)| *n == a.name).map(|(_, r)| *r);
        let m = match rule {
            Some(ArgRule::Attr(name)) => Some(ArgMap::Attr(name, conv_of(a, def, name))),
            Some(ArgRule::AttrConv(name, conv)) => Some(ArgMap::Attr(name, conv)),
            Some(ArgRule::Fixed(v)) => Some(ArgMap::Fixed(v)),
            Some(ArgRule::Conv(conv)) => match def.param(a.name) {
                Some(p) if !p.is_input() => Some(ArgMap::Attr(p.name, conv)),
                _ => None,
            },
            Some(ArgRule::AlsoStored(_)) | None => match def.param(a.name) {
                Some(p) if !p.is_input() => Some(ArgMap::Attr(p.name, conv_of(a, def, p.name))),
                _ => None,
            },
        };
        if m.is_none() {
            candidates.push(i);
        }
        out.push(m);
    }
    let want = def.input_count();
    // More candidates than inputs: those with a default are arguments the
    // registry does not have (MindSpore's default is the registry's
    // behaviour), from the last: non-tensor ones first, then optional tensors
    // (`weight=None`).
    let mut extra = candidates.len().saturating_sub(want);
    for optional_tensors in [false, true] {
        for &i in candidates.iter().rev() {
            if extra == 0 || out[i].is_some() {
                continue;
            }
            let a = node_inputs[i];
            let fixable = match a.default {
                Some(MsValue::Other(_)) | None => false,
                Some(MsValue::None) if optional_tensors => a.ty.is_tensor(),
                Some(_) => !optional_tensors && !a.ty.is_tensor(),
            };
            if fixable {
                out[i] = a.default.map(ArgMap::Fixed);
                extra -= 1;
            }
        }
    }
    let inputs: Vec<usize> = candidates
        .iter()
        .copied()
        .filter(|&i| out[i].is_none())
        .collect();
    if inputs.len() != want {
        let names: Vec<&str> = inputs.iter().map(|&i| node_inputs[i].name).collect();
        return Err(format!(
            "MindSpore's `{ms}` has {} {} the registry's `{}` does not have as attributes ({}), \
             the registry has {want} {}",
            names.len(),
            if names.len() == 1 { "input" } else { "inputs" },
            def.name,
            names.join(", "),
            if want == 1 { "input" } else { "inputs" },
        ));
    }
    for &i in &inputs {
        out[i] = Some(ArgMap::Input);
    }
    mapping.args = Some(
        out.into_iter()
            .map(|m| m.unwrap_or(ArgMap::Input))
            .collect(),
    );
    Ok(mapping)
}

fn mappings() -> &'static HashMap<&'static str, Result<Mapping, String>> {
    static MAPPINGS: OnceLock<HashMap<&'static str, Result<Mapping, String>>> = OnceLock::new();
    MAPPINGS.get_or_init(|| {
        let names = PRIMS
            .iter()
            .map(|p| p.name)
            .chain(ALIASES.iter().map(|a| a.ms));
        let mut map = HashMap::new();
        for ms in names {
            if map.contains_key(ms) {
                continue;
            }
            if let Some(def) = registry_op(ms) {
                map.insert(ms, derive(ms, def));
            }
        }
        map
    })
}

/// How MindSpore's primitive `ms` (a name in a model file; a `PrimFunc_`
/// prefix is removed) maps onto the registry: `None` when the registry has no
/// primitive for it, `Some(Err(why))` when its arguments do not line up.
pub fn mapping(ms: &str) -> Option<&'static Result<Mapping, String>> {
    let ms = ms.strip_prefix("PrimFunc_").unwrap_or(ms);
    mappings().get(ms)
}

/// How export writes registry primitive `ours`: the MindSpore primitive of its
/// name (or the alias that says so).
pub fn export_mapping(ours: &str) -> Option<&'static Result<Mapping, String>> {
    let ms = ALIASES
        .iter()
        .find(|a| a.ours == ours && a.export)
        .map_or(ours, |a| a.ms);
    let m = mapping(ms)?;
    match m {
        Ok(m) if m.def.name != ours || !m.export => None,
        _ => Some(m),
    }
}

/// What a MindSpore name is to the registry.
#[derive(Debug, Clone, Copy)]
pub enum Support {
    /// The registry has it.
    Supported(&'static OpDef),
    /// A MindSpore 2.10 primitive the registry does not have.
    Unsupported(&'static MsPrim),
    /// Not a MindSpore 2.10 primitive.
    Unknown,
}

/// Whether the registry supports MindSpore's primitive `name`.
pub fn support(name: &str) -> Support {
    if let Some(def) = registry_op(name) {
        return Support::Supported(def);
    }
    match schema(name) {
        Some(p) => Support::Unsupported(p),
        None => Support::Unknown,
    }
}

/// Registry primitives whose name is a MindSpore primitive's, and that are not
/// structural (the importer and exporter handle `MakeTuple` and the like).
pub fn registry_ops_named_as_mindspore() -> Vec<&'static OpDef> {
    crate::public_ops()
        .into_iter()
        .filter(|d| d.category != Category::Structure && schema(d.name).is_some())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_unique() {
        for w in PRIMS.windows(2) {
            assert!(w[0].name < w[1].name, "{} then {}", w[0].name, w[1].name);
        }
        assert!(PRIMS.len() > 1400, "{} primitives", PRIMS.len());
        for p in PRIMS {
            let mut names = std::collections::HashSet::new();
            for a in p.args() {
                assert!(
                    !a.name.is_empty()
                        && a.name
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_'),
                    "{}: argument {:?}",
                    p.name,
                    a.name
                );
                assert!(names.insert(a.name), "{}: `{}` twice", p.name, a.name);
            }
        }
    }

    #[test]
    fn lookups() {
        let m = schema("MatMul").unwrap();
        assert_eq!(m.kind, MsKind::Function);
        assert_eq!(
            m.signature(),
            "MatMul(input: Tensor, mat2: Tensor, transpose_a: bool = False, transpose_b: bool = False)"
        );
        assert_eq!(m.arg("transpose_a").unwrap().role, MsRole::Init);
        let c = schema("Conv2D").unwrap();
        assert_eq!(c.kind, MsKind::Primitive);
        assert_eq!(c.node_inputs().count(), 2);
        assert!(schema("NoSuchPrimitive").is_none());
        assert!(schema("MakeTuple").unwrap().args.is_none());
    }

    #[test]
    fn enums() {
        let red = match schema("NLLLoss").unwrap().arg("reduction").unwrap().ty {
            MsTy::Enum(e) => e,
            other => panic!("{other:?}"),
        };
        assert_eq!(red.value("mean"), Some(1));
        assert_eq!(red.name_of(2), Some("none"));
        let fmt = match schema("BiasAdd").unwrap().arg("data_format").unwrap().ty {
            MsTy::Enum(e) => e,
            other => panic!("{other:?}"),
        };
        assert_eq!(fmt.value("NCHW"), Some(0));
        assert_eq!(fmt.value("NHWC"), Some(1));
        assert_eq!(fmt.name_of(0), Some("nchw"));
    }

    /// Every MindSpore primitive with a known signature maps with no row of
    /// [`ALIASES`] onto a registry primitive written by the conventions of
    /// `OPS_BRIEF.md` (MindSpore's name; its tensors as inputs in order, its
    /// other arguments as attributes of the same name), and onto one that
    /// leaves out arguments with defaults.
    #[test]
    fn any_primitive_written_by_the_conventions_maps() {
        use crate::{AbsVal, AttrDefault, OutputDef, ParamDef};
        fn infer(_: &crate::InferCall) -> Result<AbsVal, crate::OpError> {
            Ok(AbsVal::Any)
        }
        fn attr_type(ty: MsTy) -> AttrType {
            match ty {
                MsTy::Int => AttrType::Int,
                MsTy::Float => AttrType::Float,
                MsTy::Bool => AttrType::Bool,
                MsTy::Str | MsTy::Enum(_) => AttrType::Str(&[]),
                MsTy::Ints | MsTy::Pair => AttrType::Ints,
                MsTy::IntTuple => AttrType::IntTuple,
                MsTy::DType => AttrType::DType,
                _ => AttrType::Number,
            }
        }
        let mut checked = 0;
        // Ordered primitives (`Load`...) take MindSpore's state token implicitly.
        for p in PRIMS
            .iter()
            .filter(|p| p.args.is_some() && !crate::is_ordered(p.name))
        {
            let is_input = |a: &MsArg| match p.kind {
                MsKind::Primitive => a.role == MsRole::Input,
                MsKind::Function => a.ty.is_tensor() || (a.ty == MsTy::Any && a.default.is_none()),
            };
            for leave_out_defaults in [false, true] {
                let params: Vec<ParamDef> = p
                    .args()
                    .iter()
                    .filter(|a| !(leave_out_defaults && a.default.is_some() && !is_input(a)))
                    .filter(|a| !(leave_out_defaults && a.default == Some(MsValue::None)))
                    .map(|a| {
                        if is_input(a) {
                            ParamDef::input(a.name, "")
                        } else {
                            ParamDef::attr(
                                a.name,
                                attr_type(a.ty),
                                a.default.map(|_| AttrDefault::None),
                                "",
                            )
                        }
                    })
                    .collect();
                let def: &'static OpDef = Box::leak(Box::new(OpDef {
                    name: p.name,
                    category: Category::Elementwise,
                    doc: "",
                    params: Box::leak(params.into_boxed_slice()),
                    variadic: false,
                    output: OutputDef::Single,
                    infer,
                    grad: None,
                    kernel: None,
                }));
                match derive_with(p.name, def, &[], true) {
                    Ok(m) => {
                        if let Some(args) = &m.args {
                            assert_eq!(args.len(), p.node_inputs().count(), "{}", p.name);
                            let inputs = args.iter().filter(|a| **a == ArgMap::Input).count();
                            assert_eq!(inputs, def.input_count(), "{}", p.name);
                        }
                    }
                    Err(e) => panic!(
                        "{} (leaving out defaults: {leave_out_defaults}): {e}",
                        p.name
                    ),
                }
                checked += 1;
            }
        }
        assert!(checked > 2500, "{checked}");
    }

    #[test]
    fn derived_mappings() {
        use ArgMap::*;
        let m = mapping("MatMul").unwrap().as_ref().unwrap();
        assert_eq!(
            m.args.as_deref().unwrap(),
            &[
                Input,
                Input,
                Attr("transpose_a", Conv::Plain),
                Attr("transpose_b", Conv::Plain)
            ]
        );
        let m = mapping("PrimFunc_ReduceSum").unwrap().as_ref().unwrap();
        assert_eq!(
            m.args.as_deref().unwrap(),
            &[
                Input,
                Attr("axis", Conv::IntTuple),
                Attr("keep_dims", Conv::Plain),
                Fixed(MsValue::Bool(false))
            ]
        );
        let m = mapping("Softmax").unwrap().as_ref().unwrap();
        assert_eq!(
            m.args.as_deref().unwrap(),
            &[Input, Attr("axis", Conv::IntTuple)]
        );
        let m = mapping("scalar_div").unwrap().as_ref().unwrap();
        assert_eq!(m.def.name, "ScalarDiv");
        let m = export_mapping("ArgMax").unwrap().as_ref().unwrap();
        assert_eq!(m.ms, "Argmax");
        assert!(matches!(
            m.args.as_deref().unwrap()[2],
            Attr("output_type", Conv::TypeId)
        ));
        assert!(export_mapping("ReduceSum").unwrap().as_ref().unwrap().ms == "ReduceSum");
        // Old-style attributes MindSpore stores otherwise (rows of ALIASES).
        let m = export_mapping("MaxPoolGrad").unwrap().as_ref().unwrap();
        assert_eq!(m.attr_conv("kernel_size"), Conv::Nchw4);
        assert_eq!(m.attr_conv("pad_mode"), Conv::Upper);
        assert_eq!(m.attr_conv("data_format"), Conv::Plain);
        assert_eq!(m.also_stored("data_format"), Some("format"));
        assert_eq!(m.attr("kernel_size"), Some("kernel_size"));
        assert_eq!(m.attr("format"), Some("data_format"));
        let m = export_mapping("LayerNormGrad").unwrap().as_ref().unwrap();
        assert_eq!(m.prim_attrs(), &["epsilon"]);
        assert_eq!(m.attr("epsilon"), Some("epsilon"));
        let m = mapping("MaxPool").unwrap().as_ref().unwrap();
        assert_eq!(m.attr_conv("kernel_size"), Conv::Plain);
        assert_eq!(m.also_stored("data_format"), None);
        assert!(mapping("FlashAttentionScore").is_none());
        assert!(matches!(
            support("FlashAttentionScore"),
            Support::Unsupported(_)
        ));
        assert!(matches!(support("Relu"), Support::Supported(_)));
        assert!(matches!(support("Frobnicate"), Support::Unknown));
    }
}
