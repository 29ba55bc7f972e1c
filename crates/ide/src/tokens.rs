//! Semantic tokens: every token of the file classified by what it is (a graph,
//! a parameter, a weight, a primitive, a dtype...), names resolved through the
//! lowering's source map.

use std::collections::HashMap;

use syntax::{NodeOrToken, SyntaxKind, SyntaxToken, TextRange};

use crate::sema::{Sema, Target};
use crate::Analysis;

/// Token types; the legend is [`TOKEN_KINDS`] (standard LSP names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenKind {
    Keyword,
    /// Graphs (top-level and nested), primitives and metafunctions (the latter
    /// two with the `defaultLibrary` modifier).
    Function,
    Parameter,
    /// Local bindings; weights are variables with the `static` modifier.
    Variable,
    /// Attribute names of primitive calls (`transpose_b=`).
    Property,
    /// Dtypes and type names.
    Type,
    /// Symbolic dimensions (`B` in `f32[B, 784]`).
    TypeParameter,
    Number,
    String,
    Comment,
    Operator,
}

/// The legend: index = `TokenKind as usize`.
pub const TOKEN_KINDS: &[&str] = &[
    "keyword",
    "function",
    "parameter",
    "variable",
    "property",
    "type",
    "typeParameter",
    "number",
    "string",
    "comment",
    "operator",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenModifier {
    Declaration = 0,
    /// Top-level weights.
    Static = 1,
    /// Primitives and metafunctions.
    DefaultLibrary = 2,
}

/// The modifier legend: bit `i` = `TOKEN_MODIFIERS[i]`.
pub const TOKEN_MODIFIERS: &[&str] = &["declaration", "static", "defaultLibrary"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemanticToken {
    pub range: TextRange,
    pub kind: TokenKind,
    /// Bit set of [`TokenModifier`]s.
    pub modifiers: u32,
}

const DECL: u32 = 1 << TokenModifier::Declaration as u32;
const STATIC: u32 = 1 << TokenModifier::Static as u32;
const LIB: u32 = 1 << TokenModifier::DefaultLibrary as u32;

pub(crate) fn semantic_tokens(analysis: &Analysis, range: Option<TextRange>) -> Vec<SemanticToken> {
    let sema = Sema::new(analysis);
    let wanted = |r: TextRange| {
        range.is_none_or(|w| w.intersect(r).is_some_and(|i| !i.is_empty()) || w.contains_range(r))
    };
    // Resolved names of the graphs in range.
    let mut resolved: HashMap<TextRange, (Target, bool)> = HashMap::new();
    for g in sema.graphs() {
        if !wanted(g.info.range) {
            continue;
        }
        for n in g.names() {
            let is_param = matches!(&n.target, Target::Local { node, .. } if g.is_param(*node));
            resolved.insert(n.range, (n.target, is_param));
        }
    }
    let mut out = Vec::new();
    for child in sema.root.children_with_tokens() {
        if !wanted(child.text_range()) {
            continue;
        }
        let tokens: Vec<SyntaxToken> = match child {
            NodeOrToken::Token(t) => vec![t],
            NodeOrToken::Node(n) => n
                .descendants_with_tokens()
                .filter_map(NodeOrToken::into_token)
                .collect(),
        };
        for t in tokens {
            if !wanted(t.text_range()) {
                continue;
            }
            if let Some((kind, modifiers)) = classify(&t, &resolved) {
                out.push(SemanticToken {
                    range: t.text_range(),
                    kind,
                    modifiers,
                });
            }
        }
    }
    out
}

fn classify(
    t: &SyntaxToken,
    resolved: &HashMap<TextRange, (Target, bool)>,
) -> Option<(TokenKind, u32)> {
    use SyntaxKind::*;
    let kind = t.kind();
    Some(match kind {
        COMMENT => (TokenKind::Comment, 0),
        INT | FLOAT => (TokenKind::Number, 0),
        STRING => (TokenKind::String, 0),
        k if k.is_keyword() => (TokenKind::Keyword, 0),
        EQ | EQ2 | NEQ | LT | LTEQ | GT | GTEQ | PLUS | MINUS | STAR | SLASH | AT | THIN_ARROW
        | FAT_ARROW => (TokenKind::Operator, 0),
        IDENT | TEMP => {
            let parent = t.parent()?;
            match parent.kind() {
                NAME => match parent.parent()?.kind() {
                    GRAPH => (TokenKind::Function, DECL),
                    WEIGHT => (TokenKind::Variable, DECL | STATIC),
                    PARAM => (TokenKind::Parameter, DECL),
                    KEYWORD_ARG => (TokenKind::Property, 0),
                    _ => (TokenKind::Variable, DECL),
                },
                NAME_REF => match resolved.get(&t.text_range()) {
                    Some((Target::Local { .. }, true)) => (TokenKind::Parameter, 0),
                    Some((Target::Local { .. }, false)) => (TokenKind::Variable, 0),
                    Some((Target::Nested { .. } | Target::Graph(_), _)) => (TokenKind::Function, 0),
                    Some((Target::Weight(_), _)) => (TokenKind::Variable, STATIC),
                    Some((Target::Prim(_) | Target::Meta(_), _)) => (TokenKind::Function, LIB),
                    Some((Target::DType(_), _)) => (TokenKind::Type, 0),
                    None if ops::lookup(t.text()).is_some() => (TokenKind::Function, LIB),
                    None if t.text().parse::<ir::DType>().is_ok() => (TokenKind::Type, 0),
                    None => (TokenKind::Variable, 0),
                },
                NAMED_TYPE => (TokenKind::Type, 0),
                DIM => (TokenKind::TypeParameter, 0),
                _ => return None,
            }
        }
        _ => return None,
    })
}
