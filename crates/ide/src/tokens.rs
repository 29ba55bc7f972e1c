//! Semantic tokens: every token of the file classified by what it is (a graph,
//! a parameter, a weight, a primitive, a dtype...), names resolved through the
//! lowering's source map.

use analysis::Def;
use syntax::{SyntaxKind, TextRange};

use crate::green::Visit;

use crate::sema::{GraphSema, Sema};
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

/// The class of a name use, by what it resolves to.
fn use_class(g: &GraphSema, def: &Def) -> (TokenKind, u32) {
    match def {
        Def::Node(n) if g.is_param(*n) => (TokenKind::Parameter, 0),
        Def::Node(_) => (TokenKind::Variable, 0),
        Def::Graph(_) | Def::Global(_) => (TokenKind::Function, 0),
        Def::Weight(_) => (TokenKind::Variable, STATIC),
        Def::Prim(_) | Def::Meta(_) => (TokenKind::Function, LIB),
        Def::DType(_) => (TokenKind::Type, 0),
    }
}

/// Every token in `range` (the whole file for `None`) with a class, in order.
/// The tree is walked as green nodes (no cursor per node), each token seen
/// with its parent's and grandparent's kinds; name uses are classified by a
/// lookup in the sorted uses of the graphs in view.
pub(crate) fn semantic_tokens(analysis: &Analysis, range: Option<TextRange>) -> Vec<SemanticToken> {
    let sema = Sema::new(analysis);
    let wanted = |r: TextRange| {
        range.is_none_or(|w| w.intersect(r).is_some_and(|i| !i.is_empty()) || w.contains_range(r))
    };
    let mut uses: Vec<(TextRange, (TokenKind, u32))> = Vec::new();
    for g in sema.graphs_in(range) {
        // By start; of equal ranges the last wins, as when they were a map.
        // Graphs come in order and their ranges are disjoint, so sorting
        // each graph's uses sorts them all (in short sorts, between which
        // a waiting edit is noticed: each graph is a query).
        let first = uses.len();
        uses.extend(g.uses().map(|(r, def)| (r, use_class(&g, def))));
        uses[first..].sort_by_key(|(r, _)| r.start());
    }
    // Tokens come in order: the uses before a token's start are passed once.
    let mut passed = 0;
    let mut resolve = |r: TextRange| {
        while passed < uses.len() && uses[passed].0.start() < r.start() {
            passed += 1;
        }
        uses[passed..]
            .iter()
            .take_while(|(u, _)| u.start() == r.start())
            .filter(|(u, _)| *u == r)
            .last()
            .map(|&(_, class)| class)
    };
    let mut out = Vec::new();
    crate::green::walk(analysis.db, sema.root.green(), |visit| match visit {
        Visit::Node { range, .. } => wanted(range),
        Visit::Token {
            kind,
            text,
            range,
            parent,
            grandparent,
        } => {
            if wanted(range) {
                if let Some((kind, modifiers)) =
                    classify(kind, text, parent, grandparent, || resolve(range))
                {
                    out.push(SemanticToken {
                        range,
                        kind,
                        modifiers,
                    });
                }
            }
            false
        }
    });
    out
}

fn classify(
    kind: SyntaxKind,
    text: &str,
    parent: SyntaxKind,
    grandparent: SyntaxKind,
    resolve: impl FnOnce() -> Option<(TokenKind, u32)>,
) -> Option<(TokenKind, u32)> {
    use SyntaxKind::*;
    Some(match kind {
        COMMENT => (TokenKind::Comment, 0),
        INT | FLOAT => (TokenKind::Number, 0),
        STRING => (TokenKind::String, 0),
        k if k.is_keyword() => (TokenKind::Keyword, 0),
        EQ | EQ2 | NEQ | LT | LTEQ | GT | GTEQ | PLUS | MINUS | STAR | SLASH | AT | THIN_ARROW
        | FAT_ARROW => (TokenKind::Operator, 0),
        IDENT | TEMP => match parent {
            NAME => match grandparent {
                GRAPH => (TokenKind::Function, DECL),
                WEIGHT => (TokenKind::Variable, DECL | STATIC),
                PARAM => (TokenKind::Parameter, DECL),
                KEYWORD_ARG => (TokenKind::Property, 0),
                _ => (TokenKind::Variable, DECL),
            },
            NAME_REF => match resolve() {
                Some(class) => class,
                None if ops::lookup(text).is_some() => (TokenKind::Function, LIB),
                None if text.parse::<ir::DType>().is_ok() => (TokenKind::Type, 0),
                None => (TokenKind::Variable, 0),
            },
            NAMED_TYPE => (TokenKind::Type, 0),
            DIM => (TokenKind::TypeParameter, 0),
            _ => return None,
        },
        _ => return None,
    })
}
