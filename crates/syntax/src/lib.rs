//! Syntax of the MindIR DSL: a lossless `rowan` tree for any input, with a typed
//! AST layer over it (in the manner of rust-analyzer's `syntax` crate).
//!
//! `parse` never fails: malformed input gives ERROR nodes plus [`SyntaxError`]s,
//! and the text of the tree is always exactly the input.

pub mod ast;
mod lexer;
mod line_index;
mod parser;
mod syntax_kind;

use std::sync::Arc;

pub use lexer::{tokenize, unescape_string, Token};
pub use line_index::{ColumnUnit, LineCol, LineIndex};
pub use rowan::{Direction, GreenNode, NodeOrToken, TextRange, TextSize, WalkEvent};
pub use syntax_kind::{MirLanguage, SyntaxKind};

use parser::Entry;

pub type SyntaxNode = rowan::SyntaxNode<MirLanguage>;
pub type SyntaxToken = rowan::SyntaxToken<MirLanguage>;
pub type SyntaxElement = rowan::SyntaxElement<MirLanguage>;
pub type SyntaxNodeChildren = rowan::SyntaxNodeChildren<MirLanguage>;

/// A syntax error: what was expected and where.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SyntaxError {
    pub message: String,
    pub range: TextRange,
}

impl SyntaxError {
    pub fn new(message: impl Into<String>, range: TextRange) -> Self {
        SyntaxError {
            message: message.into(),
            range,
        }
    }
}

/// The result of parsing: a green tree and the errors found on the way.
/// Cheap to clone; equal parses compare equal (salsa relies on this for early cut-off).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Parse {
    green: GreenNode,
    errors: Arc<[SyntaxError]>,
}

/// Parses a whole `.mir` file.
pub fn parse(text: &str) -> Parse {
    let (tokens, mut errors) = lexer::tokenize(text);
    let (green, parse_errors) = parser::parse_tokens(text, &tokens, Entry::SourceFile);
    merge_errors(&mut errors, parse_errors);
    Parse {
        green,
        errors: errors.into(),
    }
}

/// Lexer errors and parser errors in source order; a parser complaint about a
/// token the lexer already rejected is dropped.
fn merge_errors(errors: &mut Vec<SyntaxError>, parse_errors: Vec<SyntaxError>) {
    if errors.is_empty() {
        *errors = parse_errors;
        errors.sort_by_key(|e| (e.range.start(), e.range.end()));
        return;
    }
    let lexed: Vec<TextRange> = errors.iter().map(|e| e.range).collect();
    errors.extend(parse_errors.into_iter().filter(|e| {
        !lexed
            .iter()
            .any(|r| r.contains_range(e.range) && !e.range.is_empty())
    }));
    errors.sort_by_key(|e| (e.range.start(), e.range.end()));
}

/// One contiguous replacement of text: `delete` is replaced by `insert`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextEdit {
    pub delete: TextRange,
    pub insert: String,
}

impl TextEdit {
    pub fn apply(&self, text: &mut String) {
        text.replace_range(
            usize::from(self.delete.start())..usize::from(self.delete.end()),
            &self.insert,
        );
    }
}

impl Parse {
    pub fn green(&self) -> &GreenNode {
        &self.green
    }

    pub fn syntax_node(&self) -> SyntaxNode {
        SyntaxNode::new_root(self.green.clone())
    }

    pub fn tree(&self) -> ast::SourceFile {
        ast::SourceFile::cast(self.syntax_node()).expect("the root is always a SOURCE_FILE")
    }

    pub fn errors(&self) -> &[SyntaxError] {
        &self.errors
    }

    /// The tree as indented text, one node or token a line, with ranges and errors
    /// (like rust-analyzer's "view syntax tree").
    pub fn debug_dump(&self) -> String {
        let mut out = format!("{:#?}", self.syntax_node());
        for error in self.errors.iter() {
            out.push_str(&format!("error {:?}: {}\n", error.range, error.message));
        }
        out
    }

    /// The parse of the text after `edit`. When the edit falls inside one
    /// top-level item and the item still parses cleanly on its own, only that item
    /// is re-lexed and re-parsed and spliced into the old tree; otherwise the whole
    /// text is parsed again. The result is always what `parse` would give.
    pub fn reparse(&self, edit: &TextEdit) -> Parse {
        if let Some(parse) = self.reparse_item(edit) {
            return parse;
        }
        let mut new_text = String::with_capacity(usize::from(self.green.text_len()));
        push_text(&self.green, &mut new_text);
        edit.apply(&mut new_text);
        parse(&new_text)
    }

    fn reparse_item(&self, edit: &TextEdit) -> Option<Parse> {
        let root = self.syntax_node();
        // A binary search over the top-level children, not a walk of them all.
        let item = root.child_or_token_at_range(edit.delete)?.into_node()?;
        let range = item.text_range();
        // The edit must stay strictly inside the item: edits at its edges can join it
        // with its neighbours.
        if edit.delete.start() == range.start() || edit.delete.end() == range.end() {
            return None;
        }
        if self
            .errors
            .iter()
            .any(|e| e.range.intersect(range).is_some() || e.range.start() == range.end())
        {
            return None;
        }
        let mut text = String::with_capacity(usize::from(range.len()));
        push_text(item.green(), &mut text);
        let relative = edit.delete - range.start();
        text.replace_range(
            usize::from(relative.start())..usize::from(relative.end()),
            &edit.insert,
        );
        let (tokens, lex_errors) = lexer::tokenize(&text);
        if !lex_errors.is_empty() {
            return None;
        }
        let (green, errors) = parser::parse_tokens(&text, &tokens, Entry::Item);
        if !errors.is_empty() {
            return None;
        }
        // The item parse is wrapped in a SOURCE_FILE; it must hold exactly one item
        // of the old kind and nothing else.
        let new_root = SyntaxNode::new_root(green);
        let mut children = new_root.children_with_tokens();
        let new_item = children.next()?.into_node()?;
        if children.next().is_some() || new_item.kind() != item.kind() {
            return None;
        }
        let new_green = item.replace_with(new_item.green().to_owned());
        let shift = |r: TextRange| -> TextRange {
            if r.start() >= range.end() {
                let new_len = TextSize::of(text.as_str());
                TextRange::at(r.start() - range.len() + new_len, r.len())
            } else {
                r
            }
        };
        let errors: Vec<SyntaxError> = self
            .errors
            .iter()
            .map(|e| SyntaxError::new(e.message.clone(), shift(e.range)))
            .collect();
        Some(Parse {
            green: new_green,
            errors: errors.into(),
        })
    }
}

/// Appends the text of a green tree: much cheaper than `SyntaxNode::to_string`,
/// which goes through a cursor per token.
fn push_text(node: &rowan::GreenNodeData, out: &mut String) {
    for child in node.children() {
        match child {
            NodeOrToken::Node(n) => push_text(n, out),
            NodeOrToken::Token(t) => out.push_str(t.text()),
        }
    }
}

pub use ast::AstNode;
