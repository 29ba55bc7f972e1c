//! Where an op's schema comes from: MindSpore 2.10's own definition of the
//! primitive (the generated table, [`crate::mindspore::PRIMS`]) plus the
//! registry's overrides, or a schema of the registry's own for the ops
//! MindSpore has no counterpart of (and those whose signature truly deviates).
//!
//! [`derive`] turns a MindSpore primitive into the registry's parameters by
//! the conventions of `docs/adding-a-primitive.md`: its tensors are inputs in
//! order, its other arguments attributes of the same name, typed and defaulted
//! as MindSpore declares them (an enum's strings are the allowed values).

use crate::mindspore::{schema as ms_schema, MsArg, MsKind, MsRole, MsTy, MsValue, ALIASES};
use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use crate::{AttrDefault, AttrType, DType, OpDef, ParamDef, ParamKind};

/// Where an op record's parameters come from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Schema {
    /// Derived from MindSpore's definition of the primitive of the op's name
    /// (or the one [`ALIASES`] exports it as), changed by `overrides`.
    /// `docs`: each parameter's doc (hover, completion), by name; a
    /// parameter without one shows none.
    MindSpore {
        overrides: &'static [Override],
        docs: &'static [(&'static str, &'static str)],
    },
    /// The registry's own parameters: a mirdsl-private op (names starting
    /// with `_`, composites, DSL-only helpers), or one whose MindSpore
    /// signature deviates too far for overrides; `why` says which.
    Own {
        params: &'static [ParamDef],
        why: &'static str,
    },
}

/// One change to a derived schema, with its reason.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Override {
    pub change: Change,
    pub why: &'static str,
}

/// What an [`Override`] changes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Change {
    /// The registry's names of the inputs, in order (MindIR's node inputs are
    /// positional: the names are the DSL's).
    Inputs(&'static [&'static str]),
    /// The registry does not take this MindSpore argument (MindSpore's
    /// default is its behaviour; export writes that default).
    Drop(&'static str),
    /// The parameter of this name is this, in the registry.
    Set(&'static str, ParamKind),
    /// A parameter MindSpore does not have, after the one named (`""`: first).
    Insert(&'static str, ParamDef),
}

impl Override {
    pub const fn inputs(names: &'static [&'static str], why: &'static str) -> Override {
        Override {
            change: Change::Inputs(names),
            why,
        }
    }

    pub const fn drop(name: &'static str, why: &'static str) -> Override {
        Override {
            change: Change::Drop(name),
            why,
        }
    }

    /// The parameter is an attribute of this type and default.
    pub const fn attr(
        name: &'static str,
        ty: AttrType,
        default: Option<AttrDefault>,
        why: &'static str,
    ) -> Override {
        Override {
            change: Change::Set(name, ParamKind::Attr { ty, default }),
            why,
        }
    }

    /// The parameter is an input.
    pub const fn input(name: &'static str, why: &'static str) -> Override {
        Override {
            change: Change::Set(name, ParamKind::Input),
            why,
        }
    }

    pub const fn insert(after: &'static str, param: ParamDef, why: &'static str) -> Override {
        Override {
            change: Change::Insert(after, param),
            why,
        }
    }
}

/// The reasons overrides share.
pub mod why {
    /// [`super::Change::Inputs`].
    pub const INPUT_NAMES: &str =
        "the registry's input names, the DSL's documented ones (MindIR's \
        node inputs are positional)";
    /// A string attribute whose allowed values differ.
    pub const STRINGS: &str = "the strings the registry's kernels implement (MindSpore's enum \
        has others, or none is declared)";
    /// A default the registry writes otherwise.
    pub const DEFAULT: &str = "the registry's default, the value MindSpore's kernels use";
    /// An attribute type that differs.
    pub const TYPE: &str = "the registry's attribute type; import and export convert \
        MindSpore's values";
    /// A constant the registry takes as an attribute where MindSpore has a
    /// node input.
    pub const TO_ATTR: &str = "a constant in exported models, an attribute in the registry: \
        import reads MindSpore's constant input into it, export writes it back";
    /// A run-time value the registry takes as an input where MindSpore's
    /// Python signature has an argument.
    pub const TO_INPUT: &str = "a run-time input in the registry (MindIR's node input), \
        where MindSpore's Python signature lists an argument";
    /// An argument the registry does not take.
    pub const DROPPED: &str = "not taken by the registry: MindSpore's default is its behaviour";
    /// A parameter MindSpore does not have.
    pub const EXTRA: &str = "a parameter of the registry's MindSpore's signature does not list";
}

/// The registry's name of the MindSpore primitive registry op `ours` is:
/// its own name, or the one a row of [`ALIASES`] exports it as.
pub fn ms_name_of(ours: &str) -> &str {
    ALIASES
        .iter()
        .find(|a| a.ours == ours && a.export)
        .map_or(ours, |a| a.ms)
}

/// Whether MindSpore's argument `a` of a primitive of kind `kind` is a
/// registry input (else an attribute).
fn is_input(kind: MsKind, a: &MsArg) -> bool {
    match kind {
        MsKind::Primitive => a.role == MsRole::Input,
        MsKind::Function => a.ty.is_tensor() || (a.ty == MsTy::Any && a.default.is_none()),
    }
}

fn leak<T>(v: Vec<T>) -> &'static [T] {
    Box::leak(v.into_boxed_slice())
}

/// The registry's attribute type of a MindSpore type.
pub fn attr_type(ty: MsTy) -> AttrType {
    match ty {
        MsTy::Int => AttrType::Int,
        MsTy::Float => AttrType::Float,
        MsTy::Bool => AttrType::Bool,
        MsTy::Str => AttrType::Str(&[]),
        MsTy::Enum(e) => AttrType::Str(leak(e.values.iter().map(|&(n, _)| n).collect())),
        MsTy::Ints | MsTy::Pair => AttrType::Ints,
        MsTy::IntTuple => AttrType::IntTuple,
        MsTy::Floats => AttrType::Floats,
        MsTy::DType => AttrType::DType,
        MsTy::Number | MsTy::TensorOrScalar | MsTy::Any => AttrType::Number,
        MsTy::Tensor | MsTy::Tensors => AttrType::Number,
    }
}

/// The dtype of MindSpore's name for it (`float32`, `bool_`).
pub fn dtype_of_ms(name: &str) -> Option<DType> {
    use DType::*;
    Some(match name {
        "bool_" | "bool" => Bool,
        "int8" => I8,
        "int16" => I16,
        "int32" => I32,
        "int64" => I64,
        "uint8" => U8,
        "float16" => F16,
        "float32" => F32,
        "float64" => F64,
        "bfloat16" => BF16,
        _ => return None,
    })
}

/// The registry's default of a MindSpore default (`None` where it has no
/// registry form: an expression, a tuple of floats).
pub fn attr_default(v: MsValue) -> Option<AttrDefault> {
    Some(match v {
        MsValue::None => AttrDefault::None,
        MsValue::Bool(b) => AttrDefault::Bool(b),
        MsValue::Int(i) => AttrDefault::Int(i),
        MsValue::Float(x) => AttrDefault::Float(x),
        MsValue::Str(s) => AttrDefault::Str(s),
        MsValue::Ints(v) => AttrDefault::Ints(v),
        MsValue::DType(d) => AttrDefault::DType(dtype_of_ms(d)?),
        MsValue::Floats(_) | MsValue::Bools(_) | MsValue::Other(_) => return None,
    })
}

/// The parameters of MindSpore's primitive `ms` by the registry's
/// conventions (no docs), with `ALIASES`' renames for registry op `ours`;
/// `None` when MindSpore has no such primitive or does not give its signature.
pub fn derive(ms: &str, ours: &str) -> Option<Vec<ParamDef>> {
    let prim = ms_schema(ms)?;
    let args = prim.args?;
    let ordered = crate::is_ordered(ours);
    let renames = ALIASES
        .iter()
        .filter(|a| a.ms == ms && a.ours == ours)
        .flat_map(|a| a.args.iter());
    let renames: Vec<_> = renames.collect();
    let mut out = Vec::new();
    for a in args {
        // The state token of an ordered call is implicit (the DSL's §12).
        if ordered && a.name == "u" {
            continue;
        }
        let name = renames
            .iter()
            .find_map(|(n, r)| match r {
                crate::mindspore::ArgRule::Attr(x) | crate::mindspore::ArgRule::AttrConv(x, _)
                    if *n == a.name =>
                {
                    Some(*x)
                }
                _ => None,
            })
            .unwrap_or(a.name);
        if is_input(prim.kind, a) {
            out.push(ParamDef::input(name, ""));
        } else {
            // An expression MindSpore computes (no registry form) reads as
            // `None`; a record whose default differs overrides it.
            let default = a
                .default
                .map(|v| attr_default(v).unwrap_or(AttrDefault::None));
            out.push(ParamDef::attr(name, attr_type(a.ty), default, ""));
        }
    }
    Some(out)
}

/// `derived` changed by `overrides`, with `docs` set.
pub fn apply(
    mut params: Vec<ParamDef>,
    overrides: &[Override],
    docs: &[(&'static str, &'static str)],
) -> Result<Vec<ParamDef>, String> {
    let at = |params: &[ParamDef], n: &str| {
        params
            .iter()
            .position(|p| p.name == n)
            .ok_or_else(|| format!("no parameter `{n}` to override"))
    };
    for o in overrides {
        match o.change {
            Change::Inputs(names) => {
                let inputs: Vec<usize> = (0..params.len())
                    .filter(|&i| params[i].is_input())
                    .collect();
                if inputs.len() != names.len() {
                    return Err(format!(
                        "{} input names for {} inputs",
                        names.len(),
                        inputs.len()
                    ));
                }
                for (i, n) in inputs.into_iter().zip(names) {
                    params[i].name = n;
                }
            }
            Change::Drop(n) => {
                let i = at(&params, n)?;
                params.remove(i);
            }
            Change::Set(n, kind) => {
                let i = at(&params, n)?;
                params[i].kind = kind;
            }
            Change::Insert(after, p) => {
                let i = if after.is_empty() {
                    0
                } else {
                    at(&params, after)? + 1
                };
                params.insert(i, p);
            }
        }
    }
    for p in &mut params {
        if let Some((_, d)) = docs.iter().find(|(n, _)| *n == p.name) {
            p.doc = d;
        }
    }
    for (n, _) in docs {
        if !params.iter().any(|p| p.name == *n) {
            return Err(format!("a doc for `{n}`, which is not a parameter"));
        }
    }
    Ok(params)
}

impl Schema {
    /// The registry's own parameters (a mirdsl-private op, or one MindSpore
    /// has no counterpart of).
    pub const fn own(params: &'static [ParamDef]) -> Schema {
        Schema::Own { params, why: "" }
    }

    /// The registry's own parameters for an op MindSpore has, and why its
    /// signature cannot be derived from MindSpore's.
    pub const fn own_because(params: &'static [ParamDef], why: &'static str) -> Schema {
        Schema::Own { params, why }
    }

    /// Derived from MindSpore's definition, changed by `overrides`, with
    /// these parameter docs.
    pub const fn ms(
        overrides: &'static [Override],
        docs: &'static [(&'static str, &'static str)],
    ) -> Schema {
        Schema::MindSpore { overrides, docs }
    }
}

/// The parameters of `op`, whose schema is [`Schema::MindSpore`]: derived
/// once per op name and kept for the life of the process.
pub fn derived(op: &OpDef) -> &'static [ParamDef] {
    static DERIVED: OnceLock<RwLock<HashMap<&'static str, &'static [ParamDef]>>> = OnceLock::new();
    let map = DERIVED.get_or_init(Default::default);
    if let Some(p) = map.read().unwrap_or_else(|e| e.into_inner()).get(op.name) {
        return p;
    }
    let params = build(op).unwrap_or_else(|e| panic!("the schema of `{}`: {e}", op.name));
    let params: &'static [ParamDef] = leak(params);
    map.write()
        .unwrap_or_else(|e| e.into_inner())
        .entry(op.name)
        .or_insert(params)
}

/// `op`'s parameters from its schema, or why they cannot be made.
pub fn build(op: &OpDef) -> Result<Vec<ParamDef>, String> {
    match op.schema {
        Schema::Own { params, .. } => Ok(params.to_vec()),
        Schema::MindSpore { overrides, docs } => {
            let ms = ms_name_of(op.name);
            let derived = derive(ms, op.name).ok_or_else(|| {
                format!(
                    "MindSpore {} has no primitive `{ms}` with a known signature",
                    crate::mindspore::SERIES
                )
            })?;
            apply(derived, overrides, docs)
        }
    }
}

impl Schema {
    /// The parameters of an own schema (for records that share some of
    /// another's); panics on a derived one.
    pub const fn own_params(&self) -> &'static [ParamDef] {
        match self {
            Schema::Own { params, .. } => params,
            Schema::MindSpore { .. } => panic!("a derived schema has no own parameters"),
        }
    }
}
