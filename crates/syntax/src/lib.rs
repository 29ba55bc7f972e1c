//! Syntax of the MindIR DSL: a lossless `rowan` tree for any input, with a typed
//! AST layer over it (in the manner of rust-analyzer's `syntax` crate).
//!
//! `parse` never fails: malformed input gives ERROR nodes plus [`SyntaxError`]s,
//! and the text of the tree is always exactly the input.

pub mod ast;
pub mod green;
mod lexer;
mod line_index;
mod parser;
mod syntax_kind;

use std::sync::Arc;

pub use lexer::{tokenize, unescape_string, Token};
pub use line_index::{ColumnUnit, LineCol, LineCursor, LineIndex};
pub use rowan::{Direction, GreenNode, NodeOrToken, TextRange, TextSize, WalkEvent};
pub use syntax_kind::{MirLanguage, SyntaxKind};

pub type SyntaxNode = rowan::SyntaxNode<MirLanguage>;
pub type SyntaxToken = rowan::SyntaxToken<MirLanguage>;
pub type SyntaxElement = rowan::SyntaxElement<MirLanguage>;
pub type SyntaxNodeChildren = rowan::SyntaxNodeChildren<MirLanguage>;

/// A syntax error: what was expected and where.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SyntaxError {
    pub message: String,
    pub range: TextRange,
    /// The bracket this error leaves unclosed (its range and text), when a
    /// missing closer is the likely cause.
    pub opener: Option<(TextRange, String)>,
}

impl SyntaxError {
    pub fn new(message: impl Into<String>, range: TextRange) -> Self {
        SyntaxError {
            message: message.into(),
            range,
            opener: None,
        }
    }

    /// The error with its ranges moved by `f`.
    pub fn shifted(&self, f: impl Fn(TextRange) -> TextRange) -> SyntaxError {
        SyntaxError {
            message: self.message.clone(),
            range: f(self.range),
            opener: self.opener.as_ref().map(|(r, t)| (f(*r), t.clone())),
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

/// The token(s) at `offset` below `root`, as `root.token_at_offset` gives
/// them, found by a binary search over the top-level children (rowan walks
/// them one by one, and a file has thousands).
pub fn token_at_offset(root: &SyntaxNode, offset: TextSize) -> rowan::TokenAtOffset<SyntaxToken> {
    use rowan::TokenAtOffset::{Between, None as Nothing, Single};
    let found = match root.child_or_token_at_range(TextRange::empty(offset)) {
        Some(NodeOrToken::Node(n)) => n.token_at_offset(offset),
        Some(NodeOrToken::Token(t)) => Single(t),
        None => Nothing,
    };
    match found {
        Single(t) => {
            let r = t.text_range();
            // At the edge of a top-level child, the token across the edge.
            if r.start() == offset {
                if let Some(p) = t.prev_token().filter(|p| p.text_range().end() == offset) {
                    return Between(p, t);
                }
            }
            if r.end() == offset {
                if let Some(n) = t.next_token().filter(|n| n.text_range().start() == offset) {
                    return Between(t, n);
                }
            }
            Single(t)
        }
        Nothing => root.token_at_offset(offset),
        between => between,
    }
}

/// Parses a whole `.mir` file.
pub fn parse(text: &str) -> Parse {
    let (tokens, mut errors) = lexer::tokenize(text);
    let (green, parse_errors) = parser::parse_tokens(text, &tokens);
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

    /// The parse of the text after `edit`. Only a window of top-level children
    /// around the edit is re-lexed and re-parsed and spliced into the old tree
    /// (so the other items keep their green nodes, pointer-equal), whether or not
    /// the window has errors; where the window cannot be shown to parse as it
    /// would in the whole file, the whole text is parsed again. The result is
    /// always what `parse` would give.
    pub fn reparse(&self, edit: &TextEdit) -> Parse {
        if let Some(parse) = self.reparse_window(edit) {
            return parse;
        }
        let mut new_text = String::with_capacity(usize::from(self.green.text_len()));
        push_text(&self.green, &mut new_text);
        edit.apply(&mut new_text);
        parse(&new_text)
    }

    /// The window runs from the start of the last `graph` or `param` that begins
    /// a line before the edit, with its keyword untouched (the parser is at the
    /// top level there, as at the file's start, and what came before looked at
    /// most at that keyword), to the first top-level item that begins after the
    /// edit. The text from that item on is unchanged, so when the window's parse
    /// reaches an item at that same offset (the parser back at the top level),
    /// the old tree from there on is what a full parse would build. The window
    /// includes that next item, since the parser looks one token ahead.
    ///
    /// Errors: an item never reports one at its own first token, so one at a
    /// boundary belongs to what precedes it.
    fn reparse_window(&self, edit: &TextEdit) -> Option<Parse> {
        let kind = <MirLanguage as rowan::Language>::kind_from_raw;
        struct Child {
            range: TextRange,
            item: bool,
            /// Where its keyword ends, for a `graph` or `param` that begins a line.
            window_start: Option<TextSize>,
        }
        let mut children: Vec<Child> = Vec::new();
        let mut offset = TextSize::from(0);
        let mut line_start = true;
        for child in self.green.children() {
            let range = TextRange::at(offset, child.text_len());
            offset += child.text_len();
            let (item, window_start) = match child {
                NodeOrToken::Node(n) => {
                    let k = kind(n.kind());
                    let keyword = match n.children().next() {
                        Some(NodeOrToken::Token(t))
                            if matches!(
                                kind(t.kind()),
                                SyntaxKind::GRAPH_KW | SyntaxKind::PARAM_KW
                            ) =>
                        {
                            Some(range.start() + t.text_len())
                        }
                        _ => None,
                    };
                    let item = is_item(k);
                    (item, keyword.filter(|_| item && line_start))
                }
                NodeOrToken::Token(_) => (false, None),
            };
            children.push(Child {
                range,
                item,
                window_start,
            });
            line_start =
                matches!(child, NodeOrToken::Token(t) if kind(t.kind()) == SyntaxKind::NEWLINE);
        }
        let first = children
            .iter()
            .rposition(|c| c.window_start.is_some_and(|k| k < edit.delete.start()))
            .unwrap_or(0);
        let next = (first + 1..children.len())
            .find(|&i| children[i].item && children[i].range.start() > edit.delete.end());
        let window_start = children.get(first).map_or(0.into(), |c| c.range.start());
        let end = next.unwrap_or(children.len());
        let mut text = String::new();
        for child in self
            .green
            .children()
            .skip(first)
            .take(next.map_or(end, |i| i + 1) - first)
        {
            match child {
                NodeOrToken::Node(n) => push_text(n, &mut text),
                NodeOrToken::Token(t) => text.push_str(t.text()),
            }
        }
        let relative = edit.delete - window_start;
        if usize::from(relative.end()) > text.len() {
            return None;
        }
        text.replace_range(
            usize::from(relative.start())..usize::from(relative.end()),
            &edit.insert,
        );
        let delta = i64::from(u32::from(TextSize::of(edit.insert.as_str())))
            - i64::from(u32::from(edit.delete.len()));
        let shift = |at: TextSize| TextSize::from((i64::from(u32::from(at)) + delta) as u32);
        // Where the next item starts: in the old text, in the window's text.
        let next_start = next.map(|i| children[i].range.start());
        let next_relative = next_start.map(|s| shift(s - window_start));
        let (tokens, mut errors) = lexer::tokenize(&text);
        let (green, parse_errors) = parser::parse_tokens(&text, &tokens);
        merge_errors(&mut errors, parse_errors);
        // The window's children up to the next item, which must start where it did.
        let mut replacement = Vec::new();
        let mut at = TextSize::from(0);
        let mut reached = next_relative.is_none();
        for child in green.children() {
            if Some(at) == next_relative {
                reached = matches!(child, NodeOrToken::Node(n) if is_item(kind(n.kind())));
                break;
            }
            at += child.text_len();
            replacement.push(child.to_owned());
        }
        if !reached {
            return None;
        }
        let straddles = |r: TextRange, at: Option<TextSize>| {
            at.is_some_and(|at| r.start() < at && at < r.end())
        };
        if errors.iter().any(|e| straddles(e.range, next_relative))
            || self
                .errors
                .iter()
                .any(|e| straddles(e.range, next_start) || straddles(e.range, Some(window_start)))
        {
            return None;
        }
        let before_next = |at: TextSize, next: Option<TextSize>| next.is_none_or(|n| at <= n);
        let mut merged: Vec<SyntaxError> = self
            .errors
            .iter()
            // One at the window's start is from before it (when there is a before).
            .filter(|e| {
                let at = e.range.start();
                at < window_start || (at == window_start && window_start > 0.into())
            })
            .cloned()
            .collect();
        merged.extend(
            errors
                .into_iter()
                .filter(|e| before_next(e.range.start(), next_relative))
                .map(|e| e.shifted(|r| r + window_start)),
        );
        if let Some(next_start) = next_start {
            merged.extend(
                self.errors
                    .iter()
                    .filter(|e| e.range.start() > next_start)
                    .map(|e| e.shifted(|r| TextRange::at(shift(r.start()), r.len()))),
            );
        }
        let new_green = self.green.splice_children(first..end, replacement);
        Some(Parse {
            green: new_green,
            errors: merged.into(),
        })
    }
}

/// Whether a top-level node is an item (what the parser's top level starts).
fn is_item(kind: SyntaxKind) -> bool {
    matches!(
        kind,
        SyntaxKind::GRAPH | SyntaxKind::WEIGHT | SyntaxKind::IMPORT
    )
}

fn push_text(node: &rowan::GreenNodeData, out: &mut String) {
    for child in node.children() {
        match child {
            NodeOrToken::Node(n) => push_text(n, out),
            NodeOrToken::Token(t) => out.push_str(t.text()),
        }
    }
}

pub use ast::AstNode;
