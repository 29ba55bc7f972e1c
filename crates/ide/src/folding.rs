//! Folding ranges: graph bodies and blocks, multi-line argument lists and
//! tensor literals, runs of comment lines.

use syntax::SyntaxKind;

use crate::green::{first_token_kind, last_token, walk, Visit};
use crate::Analysis;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoldKind {
    Region,
    Comment,
}

/// Lines `start_line..=end_line` (0-based) fold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fold {
    pub start_line: u32,
    pub end_line: u32,
    pub kind: FoldKind,
}

pub(crate) fn folding_ranges(analysis: &Analysis) -> Vec<Fold> {
    let text = analysis.text();
    let index = db::line_index(analysis.db, analysis.file);
    let line = |o| index.line_col(text, o, syntax::ColumnUnit::Utf8).line;
    let root = db::parse(analysis.db, analysis.file).syntax_node();
    let mut out = Vec::new();
    let mut comment_run: Option<(u32, u32)> = None;
    // Whether only whitespace stands between the last line break and here.
    let mut line_start = true;
    walk(analysis.db, root.green(), |visit| {
        match visit {
            Visit::Node { node, kind, range } => {
                let (open, close) = match kind {
                    SyntaxKind::BLOCK => (SyntaxKind::L_BRACE, SyntaxKind::R_BRACE),
                    SyntaxKind::ARG_LIST | SyntaxKind::PARAM_LIST | SyntaxKind::TUPLE_EXPR => {
                        (SyntaxKind::L_PAREN, SyntaxKind::R_PAREN)
                    }
                    SyntaxKind::TENSOR_EXPR => (SyntaxKind::L_BRACK, SyntaxKind::R_BRACK),
                    _ => return true,
                };
                if let (Some(first), Some((last, len))) = (first_token_kind(node), last_token(node))
                {
                    if first != open || last != close {
                        return true;
                    }
                    // The first token starts the node, the last ends it.
                    let (a, b) = (line(range.start()), line(range.end() - len));
                    // Keep the closing line visible.
                    if b > a + 1 {
                        out.push(Fold {
                            start_line: a,
                            end_line: b - 1,
                            kind: FoldKind::Region,
                        });
                    }
                }
            }
            Visit::Token { kind, range, .. } => {
                if kind == SyntaxKind::COMMENT && line_start {
                    let l = line(range.start());
                    comment_run = match comment_run {
                        Some((s, e)) if e + 1 == l => Some((s, l)),
                        Some((s, e)) => {
                            if e > s {
                                out.push(Fold {
                                    start_line: s,
                                    end_line: e,
                                    kind: FoldKind::Comment,
                                });
                            }
                            Some((l, l))
                        }
                        None => Some((l, l)),
                    };
                }
                match kind {
                    SyntaxKind::WHITESPACE => {}
                    SyntaxKind::NEWLINE => line_start = true,
                    _ => line_start = false,
                }
            }
        }
        true
    });
    if let Some((s, e)) = comment_run {
        if e > s {
            out.push(Fold {
                start_line: s,
                end_line: e,
                kind: FoldKind::Comment,
            });
        }
    }
    out.sort_by_key(|f| (f.start_line, f.end_line));
    out.dedup();
    out
}
