//! Composite primitives: MindSpore primitives that are compositions of others,
//! defined as decompositions written in the DSL itself, in the file
//! [`SOURCE_PATH`] (namespace [`NAMESPACE`]), the way MindSpore's expanders
//! define them.
//!
//! Each `graph` there is one primitive: parameters with a default
//! (`alpha: f32 = 0.01`) or an attribute type (`size: ints`, a required
//! attribute) are its attributes, the others its inputs, and the `#` lines
//! above it its documentation. Attribute types are the scalar dtypes (`f32`,
//! `i64`, `bool`) and `float`, `int`, `str`, `dtype`, `ints` (an int or a
//! tuple of ints), `floats` and `number`. So the file is the one place such
//! an op is defined: its schema comes from the signature, and its shape rule,
//! gradient and kernel from the body (the analysis infers, differentiates and
//! runs the body specialised on the call's attributes: an *instance*). In an
//! instance, an `if` on attributes alone (`if reduction == "sum"`,
//! `if dtype == none`) keeps only the branch taken. A string attribute takes
//! the strings its body compares it with and its default (any case, as every
//! string attribute), or any string when the body compares it with none.
//!
//! A composite is an [`OpDef`] like any primitive (binding, docs, completion
//! and import see no difference); [`composite`] tells the ones that need their
//! body, and [`instance_key`] names the body specialised on a call's attributes.
//!
//! *Expansions* ([`EXPANSIONS_SOURCE_PATH`]) are written the same way but
//! define no primitive: each is a decomposition of a registered primitive
//! (the internal `_...Grad` helpers the gradient rules emit) into
//! differentiable ones, with exactly its signature. The primitive keeps its
//! kernel for running; the autodiff inlines the expansion (an instance, keyed
//! like a composite's) where it differentiates a call of a primitive that has
//! no gradient rule of its own: a gradient differentiated again.

use crate::Traits;
use std::collections::HashMap;
use std::sync::OnceLock;

use ir::{AbsVal, AttrValue};
use syntax::ast::{self, AstNode};

use crate::{AttrDefault, AttrType, Category, InferCall, OpDef, OpError, OutputDef, ParamDef};

/// The namespace of the composite definitions.
pub const NAMESPACE: &str = "mindspore/2.10/composite";

/// Where the definitions live, relative to the workspace root.
pub const SOURCE_PATH: &str = "crates/ops/composite/mindspore-2.10.mir";

/// The definitions (embedded: the registry needs no file at run time).
pub const SOURCE: &str = include_str!("../composite/mindspore-2.10.mir");

/// Where the expansions live, relative to the workspace root.
pub const EXPANSIONS_SOURCE_PATH: &str = "crates/ops/composite/gradient-helpers.mir";

/// The expansions (embedded).
pub const EXPANSIONS_SOURCE: &str = include_str!("../composite/gradient-helpers.mir");

/// A composite primitive, or an expansion (then `op` is its signature as the
/// definition writes it, not the registered primitive).
#[derive(Debug)]
pub struct Composite {
    pub op: &'static OpDef,
    /// Its definition's range in [`SOURCE`] (the whole `graph` item).
    pub range: syntax::TextRange,
}

/// A composite's shape rule is its body's: the analysis evaluates the body, so
/// this is never what decides a call's type.
fn expanded_by_analysis(call: &InferCall) -> Result<AbsVal, OpError> {
    Err(OpError::call(format!(
        "`{}` is a composite primitive: its body (in {SOURCE_PATH}) gives its type",
        call.op.name
    )))
}

/// The definitions of a file, by name.
fn definitions(source: &str) -> HashMap<&'static str, Composite> {
    let file = syntax::parse(source).tree();
    let mut out = HashMap::new();
    for graph in file.graphs() {
        let Some(def) = definition(&graph) else {
            continue;
        };
        let range = graph.syntax().text_range();
        out.insert(def.name, Composite { op: def, range });
    }
    out
}

/// Every composite, by name.
pub fn composites() -> &'static HashMap<&'static str, Composite> {
    static COMPOSITES: OnceLock<HashMap<&'static str, Composite>> = OnceLock::new();
    COMPOSITES.get_or_init(|| definitions(SOURCE))
}

/// The composite named `name`.
pub fn composite(name: &str) -> Option<&'static Composite> {
    composites().get(name)
}

/// Every expansion, by the name of the primitive it decomposes.
pub fn expansions() -> &'static HashMap<&'static str, Composite> {
    static EXPANSIONS: OnceLock<HashMap<&'static str, Composite>> = OnceLock::new();
    EXPANSIONS.get_or_init(|| definitions(EXPANSIONS_SOURCE))
}

/// The expansion of primitive `name`.
pub fn expansion(name: &str) -> Option<&'static Composite> {
    expansions().get(name)
}

/// What differentiating a call of `prim` inlines: its composite's body, or
/// the expansion of a primitive without a gradient rule. The definition, and
/// the file it is in.
pub fn inlined_definition(prim: &str) -> Option<(&'static Composite, &'static str)> {
    if let Some(c) = composite(prim) {
        return Some((c, SOURCE));
    }
    let e = expansion(prim)?;
    let op = crate::lookup(prim)?;
    op.grad.is_none().then_some((e, EXPANSIONS_SOURCE))
}

/// The `# ...` lines right above an item.
fn doc_comment(node: &syntax::SyntaxNode) -> String {
    let mut lines = Vec::new();
    let mut newlines = 0;
    let mut t = node.first_token().and_then(|t| t.prev_token());
    while let Some(tok) = t {
        match tok.kind() {
            syntax::SyntaxKind::COMMENT => {
                newlines = 0;
                lines.push(tok.text().trim_start_matches('#').trim().to_string());
            }
            syntax::SyntaxKind::NEWLINE => {
                newlines += 1;
                if newlines > 1 {
                    break;
                }
            }
            syntax::SyntaxKind::WHITESPACE => {}
            _ => break,
        }
        t = tok.prev_token();
    }
    lines.reverse();
    lines.join(" ")
}

/// Whether a parameter of a definition is an attribute: it has a default, or
/// an attribute type (`size: ints`, a required attribute).
pub fn is_attribute_param(param: &ast::Param) -> bool {
    param.default_value().is_some() || attr_kind(param).is_some()
}

/// An attribute's type and default, from its annotation and default value.
fn attr_kind(param: &ast::Param) -> Option<(AttrType, Option<AttrDefault>)> {
    let annotation = param.ty().map(|t| t.syntax().text().to_string());
    let declared = match annotation.as_deref() {
        Some("f16" | "bf16" | "f32" | "f64" | "float") => Some(AttrType::Float),
        Some("i8" | "i16" | "i32" | "i64" | "u8" | "int") => Some(AttrType::Int),
        Some("bool") => Some(AttrType::Bool),
        Some("str") => Some(AttrType::Str(&[])),
        Some("dtype") => Some(AttrType::DType),
        Some("ints") => Some(AttrType::Ints),
        Some("floats") => Some(AttrType::Floats),
        Some("number") => Some(AttrType::Number),
        _ => None,
    };
    let Some(value) = param.default_value() else {
        // A required attribute: its type says it is one.
        return declared.map(|ty| (ty, None));
    };
    let constant = const_of(&value)?;
    let ty = match (declared, &constant) {
        (Some(ty), _) => ty,
        (_, AttrValue::Float(_)) => AttrType::Float,
        (_, AttrValue::Int(_)) => AttrType::Int,
        (_, AttrValue::Bool(_)) => AttrType::Bool,
        (_, AttrValue::Str(_)) => AttrType::Str(&[]),
        (_, AttrValue::Tuple(_)) => AttrType::Ints,
        (_, AttrValue::None) => AttrType::Number,
        _ => return None,
    };
    let default = match constant {
        AttrValue::Int(i) if ty == AttrType::Float => AttrDefault::Float(i as f64),
        AttrValue::Int(i) => AttrDefault::Int(i),
        AttrValue::Float(x) => AttrDefault::Float(x.0),
        AttrValue::Bool(b) => AttrDefault::Bool(b),
        AttrValue::Str(s) => AttrDefault::Str(Box::leak(s.into_boxed_str())),
        AttrValue::Tuple(items) => {
            let ints: Option<Vec<i64>> = items.iter().map(AttrValue::as_int).collect();
            AttrDefault::Ints(Box::leak(ints?.into_boxed_slice()))
        }
        AttrValue::None => AttrDefault::None,
        AttrValue::DType(d) => AttrDefault::DType(d),
    };
    Some((ty, Some(default)))
}

/// A literal constant: numbers (with a sign), booleans, strings, `none` and
/// tuples of those.
fn const_of(e: &ast::Expr) -> Option<AttrValue> {
    match e {
        ast::Expr::Literal(lit) => Some(match lit.kind()? {
            ast::LiteralKind::Int(i) => AttrValue::Int(i),
            ast::LiteralKind::Float(x) => AttrValue::float(x),
            ast::LiteralKind::Bool(b) => AttrValue::Bool(b),
            ast::LiteralKind::Str(s) => AttrValue::Str(s),
            ast::LiteralKind::None => AttrValue::None,
            ast::LiteralKind::IntOverflow => return None,
        }),
        ast::Expr::Prefix(p) if p.op_kind() == Some(syntax::SyntaxKind::MINUS) => {
            match const_of(&p.operand()?)? {
                AttrValue::Int(i) => Some(AttrValue::Int(-i)),
                AttrValue::Float(x) => Some(AttrValue::float(-x.0)),
                _ => None,
            }
        }
        ast::Expr::Paren(p) => const_of(&p.expr()?),
        ast::Expr::Tuple(t) => Some(AttrValue::Tuple(
            t.fields().map(|f| const_of(&f)).collect::<Option<_>>()?,
        )),
        _ => None,
    }
}

/// The schema of one definition.
fn definition(graph: &ast::Graph) -> Option<&'static OpDef> {
    let name: &'static str = Box::leak(graph.name()?.text().into_boxed_str());
    let mut params = Vec::new();
    for p in graph.params() {
        let pname: &'static str = Box::leak(p.name()?.text().into_boxed_str());
        params.push(match attr_kind(&p) {
            Some((AttrType::Str(_), default)) => {
                // The strings the body tells apart, and the default: the
                // values the attribute takes (matched in any case).
                let mut allowed = compared_strings(graph, pname);
                if let Some(AttrDefault::Str(d)) = default {
                    if !allowed.iter().any(|a| a.eq_ignore_ascii_case(d)) {
                        allowed.push(d.to_string());
                    }
                }
                let allowed: Vec<&'static str> = allowed
                    .into_iter()
                    .map(|a| &*Box::leak(a.into_boxed_str()))
                    .collect();
                let ty = AttrType::Str(Box::leak(allowed.into_boxed_slice()));
                ParamDef::attr(pname, ty, default, "")
            }
            Some((ty, default)) => ParamDef::attr(pname, ty, default, ""),
            None => ParamDef::input(pname, ""),
        });
    }
    let doc: &'static str = Box::leak(doc_comment(graph.syntax()).into_boxed_str());
    Some(Box::leak(Box::new(OpDef {
        name,
        category: Category::Composite,
        doc,
        schema: crate::Schema::own(Box::leak(params.into_boxed_slice())),
        variadic: false,
        output: OutputDef::Single,
        infer: expanded_by_analysis,
        grad: None,
        kernel: None,
        traits: Traits::NONE,
    })))
}

/// The string literals a definition compares attribute `name` with
/// (`reduction == "sum"`), in the order they appear.
fn compared_strings(graph: &ast::Graph, name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for node in graph.syntax().descendants() {
        let Some(b) = ast::BinExpr::cast(node) else {
            continue;
        };
        if !matches!(
            b.op_kind(),
            Some(syntax::SyntaxKind::EQ2 | syntax::SyntaxKind::NEQ)
        ) {
            continue;
        }
        let (Some(l), Some(r)) = (b.lhs(), b.rhs()) else {
            continue;
        };
        for (a, c) in [(&l, &r), (&r, &l)] {
            let (ast::Expr::NameRef(n), ast::Expr::Literal(lit)) = (a, c) else {
                continue;
            };
            if let (true, Some(ast::LiteralKind::Str(s))) = (n.text() == name, lit.kind()) {
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        }
    }
    out
}

/// The name of `prim`'s instance: the composite's body specialised on the
/// call's attributes (defaults filled in). A DSL identifier (it names a
/// top-level graph of the program being run or differentiated) that reads as
/// what it is: `LeakyReLU.i4f2a91c07b3de0d1`.
pub fn instance_key(prim: &ir::PrimRef) -> Option<String> {
    let c = composite(&prim.name).or_else(|| expansion(&prim.name))?;
    let attrs = instance_attrs(c.op, &prim.attrs);
    // FNV-1a of the attribute values: stable across runs and builds.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (k, v) in &attrs {
        for b in format!("{k}={v};").bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    Some(format!("{}.i{h:016x}", prim.name))
}

/// Every attribute of a call of `op`: those given, then the defaults.
pub fn instance_attrs(op: &OpDef, given: &[(String, AttrValue)]) -> Vec<(String, AttrValue)> {
    op.attrs()
        .map(|p| {
            let v = given
                .iter()
                .find(|(k, _)| k == p.name)
                .map(|(_, v)| v.clone())
                .or_else(|| match p.kind {
                    crate::ParamKind::Attr {
                        default: Some(d), ..
                    } => Some(d.value()),
                    _ => None,
                })
                .unwrap_or(AttrValue::None);
            (p.name.to_string(), v)
        })
        .collect()
}
