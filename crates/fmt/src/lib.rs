//! `mirdsl fmt`: one canonical layout for `.mir` files.
//!
//! The formatter works on the token stream of a lossless tree, like `gofmt`: it
//! rewrites all horizontal space and indentation, keeps the author's line breaks
//! (at most one blank line in a row, exactly one around top-level graphs), and
//! never adds, drops or reorders a token, so comments always survive. Files with
//! syntax errors are refused rather than guessed at. Lines end as the file's
//! first line break does (`\n`, `\r\n` or `\r`), so a CRLF file stays CRLF.

use syntax::{Parse, SyntaxError, SyntaxKind, SyntaxKind::*, SyntaxToken};

/// Spaces per indentation level, for blocks and for bracketed continuation lines.
const INDENT: usize = 2;
/// Extra indentation of a line continuing an expression after a binary operator.
const CONTINUATION: usize = 4;

/// Formats `text`, or returns the syntax errors that make it unsafe to format.
pub fn format(text: &str) -> Result<String, Vec<SyntaxError>> {
    format_parse(&syntax::parse(text))
}

/// Formats a parsed file; refuses if the parse has errors.
pub fn format_parse(parse: &Parse) -> Result<String, Vec<SyntaxError>> {
    format_parse_checked(parse, &mut || {})
}

/// [`format_parse`], calling `check` every few thousand tokens: a caller
/// that must stop when asked (a language server, when an edit comes) unwinds
/// from it.
pub fn format_parse_checked(
    parse: &Parse,
    check: &mut dyn FnMut(),
) -> Result<String, Vec<SyntaxError>> {
    if !parse.errors().is_empty() {
        return Err(parse.errors().to_vec());
    }
    Ok(Formatter::default().run(parse, check))
}

/// One open bracket: the indentation of the line it was opened on.
struct Open {
    line_indent: usize,
    brace: bool,
}

#[derive(Default)]
struct Formatter {
    out: String,
    open: Vec<Open>,
    line_indent: usize,
    /// The indentation of the line where the current statement (or item) began;
    /// a `{` on a continuation line still indents its body from there.
    statement_indent: usize,
    pending_newlines: usize,
    /// The last token written, comments included.
    prev: Option<SyntaxToken>,
    /// The last significant (non-comment) token written.
    prev_significant: Option<SyntaxToken>,
}

impl Formatter {
    fn run(mut self, parse: &Parse, check: &mut dyn FnMut()) -> String {
        let root = parse.syntax_node();
        // The file's own line ending: its first line break's.
        let ending = root
            .descendants_with_tokens()
            .filter_map(|e| e.into_token())
            .find(|t| t.kind() == NEWLINE)
            .map(|t| t.text().to_string());
        let mut token = root.first_token();
        let mut seen = 0u32;
        while let Some(t) = token {
            seen = seen.wrapping_add(1);
            if seen.is_multiple_of(4096) {
                check();
            }
            match t.kind() {
                WHITESPACE => {}
                NEWLINE => self.pending_newlines += 1,
                _ => self.write(&t),
            }
            token = t.next_token();
        }
        if !self.out.is_empty() {
            self.out.push('\n');
        }
        // Written with `\n` (no token holds one: strings and comments end
        // before a line break); then each becomes the file's ending.
        match ending.as_deref() {
            Some(e) if e != "\n" => self.out.replace('\n', e),
            _ => self.out,
        }
    }

    fn write(&mut self, t: &SyntaxToken) {
        if let Some(prev) = self.prev.clone() {
            if self.pending_newlines > 0 {
                let newlines = self.newlines_before(t);
                for _ in 0..newlines {
                    self.out.push('\n');
                }
                let (indent, continues) = self.indent_of_line_starting_with(t);
                self.line_indent = indent;
                if !continues {
                    self.statement_indent = indent;
                }
                self.out.extend(std::iter::repeat_n(' ', self.line_indent));
            } else {
                self.out.push_str(space_between(&prev, t));
            }
        } else {
            self.line_indent = 0;
        }
        if t.kind() == COMMENT {
            self.out.push_str(t.text().trim_end());
        } else {
            self.out.push_str(t.text());
        }
        match t.kind() {
            L_BRACE => self.open.push(Open {
                line_indent: self.statement_indent,
                brace: true,
            }),
            L_PAREN | L_BRACK => self.open.push(Open {
                line_indent: self.line_indent,
                brace: false,
            }),
            R_BRACE | R_PAREN | R_BRACK => {
                self.open.pop();
            }
            _ => {}
        }
        self.pending_newlines = 0;
        if t.kind() != COMMENT {
            self.prev_significant = Some(t.clone());
        }
        self.prev = Some(t.clone());
    }

    fn newlines_before(&self, t: &SyntaxToken) -> usize {
        let prev_kind = self.prev.as_ref().map(|p| p.kind());
        // No blank line just inside braces.
        if prev_kind == Some(L_BRACE) || t.kind() == R_BRACE {
            return 1;
        }
        if self.open.is_empty() {
            let after_graph = self
                .prev
                .as_ref()
                .is_some_and(|p| p.kind() == R_BRACE && ends_top_level_graph(p));
            let before_graph = t.kind() == GRAPH_KW && prev_kind != Some(COMMENT);
            if after_graph || before_graph {
                return 2;
            }
        }
        self.pending_newlines.min(2)
    }

    /// The indentation of a new line starting with `t`, and whether the line
    /// continues a statement begun on an earlier line.
    fn indent_of_line_starting_with(&self, t: &SyntaxToken) -> (usize, bool) {
        let in_brackets = self.open.last().is_some_and(|o| !o.brace);
        if matches!(t.kind(), R_BRACE | R_PAREN | R_BRACK) {
            return (self.open.last().map_or(0, |o| o.line_indent), in_brackets);
        }
        let base = self.open.last().map_or(0, |o| o.line_indent + INDENT);
        let after_operator = self
            .prev_significant
            .as_ref()
            .is_some_and(|p| is_binary_operator(p) && self.prev.as_ref() == Some(p));
        if after_operator {
            (base + CONTINUATION, true)
        } else {
            (base, in_brackets)
        }
    }
}

fn ends_top_level_graph(token: &SyntaxToken) -> bool {
    token
        .parent()
        .and_then(|block| block.parent())
        .is_some_and(|graph| {
            graph.kind() == GRAPH && graph.parent().is_some_and(|p| p.kind() == SOURCE_FILE)
        })
}

fn parent_kind(t: &SyntaxToken) -> Option<SyntaxKind> {
    t.parent().map(|p| p.kind())
}

fn is_binary_operator(t: &SyntaxToken) -> bool {
    t.kind().binary_precedence().is_some() && parent_kind(t) == Some(BIN_EXPR)
}

/// The horizontal space between two tokens on one line.
fn space_between(prev: &SyntaxToken, next: &SyntaxToken) -> &'static str {
    let (p, n) = (prev.kind(), next.kind());
    if n == COMMENT {
        return "  ";
    }
    if matches!(p, L_PAREN | L_BRACK) || matches!(n, R_PAREN | R_BRACK | COMMA | SEMI | COLON) {
        return "";
    }
    if parent_kind(prev) == Some(PREFIX_EXPR) && p == MINUS {
        return "";
    }
    if (p == EQ && parent_kind(prev) == Some(KEYWORD_ARG))
        || (n == EQ && parent_kind(next) == Some(KEYWORD_ARG))
    {
        return "";
    }
    match n {
        L_PAREN if parent_kind(next) == Some(ARG_LIST) || parent_kind(next) == Some(PARAM_LIST) => {
            ""
        }
        L_BRACK if matches!(parent_kind(next), Some(SHAPE | INDEX_EXPR)) => "",
        _ => " ",
    }
}
