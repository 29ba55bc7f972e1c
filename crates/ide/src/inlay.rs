//! Inlay hints: the inferred type and shape after each unannotated binding
//! and parameter.

use ir::AbsVal;
use syntax::{ast, AstNode, SyntaxKind, TextRange, TextSize};

use crate::hover::values_text;
use crate::sema::{Sema, Target};
use crate::Analysis;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InlayKind {
    Type,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlayHint {
    /// Where the hint goes (just after the name).
    pub offset: TextSize,
    pub label: String,
    pub kind: InlayKind,
    /// The type alone, for "add annotation" on double-click.
    pub ty: String,
}

pub(crate) fn inlay_hints(analysis: &Analysis, range: Option<TextRange>) -> Vec<InlayHint> {
    let sema = Sema::new(analysis);
    let mut out = Vec::new();
    for g in sema.graphs_in(range) {
        for name in g.names() {
            let (true, Target::Local { node, .. }) = (name.is_def, &name.target) else {
                continue;
            };
            if range.is_some_and(|r| !r.contains_range(name.range)) {
                continue;
            }
            if annotated(&sema, name.range) {
                continue;
            }
            let vals = g.values(*node);
            if vals.is_empty() || vals.iter().all(|v| matches!(v, AbsVal::Any)) {
                continue;
            }
            let ty = values_text(&g, &vals);
            out.push(InlayHint {
                offset: name.range.end(),
                label: format!(": {ty}"),
                kind: InlayKind::Type,
                ty,
            });
        }
    }
    out.sort_by_key(|h| h.offset);
    out
}

/// Whether the name defined at `range` has a written type.
pub(crate) fn annotated(sema: &Sema, range: TextRange) -> bool {
    let Some(token) = sema.token_at(range.start()) else {
        return true;
    };
    let Some(name) = token.parent().filter(|p| p.kind() == SyntaxKind::NAME) else {
        return true;
    };
    let Some(parent) = name.parent() else {
        return true;
    };
    if let Some(p) = ast::Param::cast(parent.clone()) {
        return p.ty().is_some();
    }
    if let Some(l) = ast::LetStmt::cast(parent.clone()) {
        return l.ty().is_some();
    }
    // Tuple patterns cannot be annotated; graphs and weights are not bindings.
    parent.kind() != SyntaxKind::TUPLE_PAT
}
