//! Folding ranges: graph bodies and blocks, multi-line argument lists and
//! tensor literals, runs of comment lines.

use syntax::{NodeOrToken, SyntaxKind};

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
    for el in root.descendants_with_tokens() {
        match el {
            NodeOrToken::Node(n) => {
                let (open, close) = match n.kind() {
                    SyntaxKind::BLOCK => (SyntaxKind::L_BRACE, SyntaxKind::R_BRACE),
                    SyntaxKind::ARG_LIST | SyntaxKind::PARAM_LIST | SyntaxKind::TUPLE_EXPR => {
                        (SyntaxKind::L_PAREN, SyntaxKind::R_PAREN)
                    }
                    SyntaxKind::TENSOR_EXPR => (SyntaxKind::L_BRACK, SyntaxKind::R_BRACK),
                    _ => continue,
                };
                let first = n.first_token().filter(|t| t.kind() == open);
                let last = n.last_token().filter(|t| t.kind() == close);
                let (Some(first), Some(last)) = (first, last) else {
                    continue;
                };
                let (a, b) = (
                    line(first.text_range().start()),
                    line(last.text_range().start()),
                );
                // Keep the closing line visible.
                if b > a + 1 {
                    out.push(Fold {
                        start_line: a,
                        end_line: b - 1,
                        kind: FoldKind::Region,
                    });
                }
            }
            NodeOrToken::Token(t) if t.kind() == SyntaxKind::COMMENT && own_line(&t) => {
                let l = line(t.text_range().start());
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
            _ => {}
        }
    }
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

/// Whether a comment is alone on its line.
fn own_line(t: &syntax::SyntaxToken) -> bool {
    let mut prev = t.prev_token();
    while let Some(p) = prev {
        match p.kind() {
            SyntaxKind::WHITESPACE => prev = p.prev_token(),
            SyntaxKind::NEWLINE => return true,
            _ => return false,
        }
    }
    true
}
