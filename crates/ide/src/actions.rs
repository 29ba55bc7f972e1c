//! Code actions (quick fixes from diagnostics, "add type annotation") and code
//! lenses (run, show graph, show gradient).

use db::File;
use ir::AbsVal;
use syntax::TextRange;

use crate::inlay::annotated;
use crate::sema::{Sema, Target};
use crate::{Analysis, Diagnostic, Edit};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeActionKind {
    QuickFix,
    RefactorRewrite,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeAction {
    pub title: String,
    pub kind: CodeActionKind,
    pub edits: Vec<Edit>,
    /// The diagnostic the action fixes.
    pub diagnostic: Option<Diagnostic>,
    pub is_preferred: bool,
}

/// A command shown above a graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeLens {
    pub range: TextRange,
    pub title: String,
    /// The client command (`mirdsl.run`, `mirdsl.showGraph`, `mirdsl.showGradient`).
    pub command: String,
    /// The graph's name; the server adds the document.
    pub graph: String,
}

pub(crate) fn code_actions(
    analysis: &Analysis,
    range: TextRange,
    others: &[File],
) -> Vec<CodeAction> {
    let mut out = Vec::new();
    let touches = |r: TextRange| r.intersect(range).is_some() || r.contains_range(range);
    let diagnostics = analysis.diagnostics_seeing(others);
    for d in diagnostics.iter().filter(|d| touches(d.range)) {
        for fix in &d.fixes {
            out.push(CodeAction {
                title: fix.label.clone(),
                kind: CodeActionKind::QuickFix,
                edits: vec![Edit {
                    range: fix.range,
                    new_text: fix.new_text(analysis.text()),
                }],
                diagnostic: Some(d.clone()),
                is_preferred: d.fixes.len() == 1,
            });
        }
    }
    // Add the inferred type to an unannotated binding or parameter.
    let sema = Sema::new(analysis);
    if let Some(name) = sema.name_at(range.start()) {
        if let (true, Target::Local { item, node, .. }) = (name.is_def, &name.target) {
            if !annotated(&sema, name.range) {
                if let Some(g) = sema.graph(item) {
                    let vals = g.values(*node);
                    if let [v] = vals.as_slice() {
                        if writable(v) {
                            out.push(CodeAction {
                                title: format!("Add type annotation `: {v}`"),
                                kind: CodeActionKind::RefactorRewrite,
                                edits: vec![Edit {
                                    range: TextRange::empty(name.range.end()),
                                    new_text: format!(": {v}"),
                                }],
                                diagnostic: None,
                                is_preferred: false,
                            });
                        }
                    }
                }
            }
        }
    }
    out
}

/// Whether a value's type can be written as an annotation.
fn writable(v: &AbsVal) -> bool {
    match v {
        AbsVal::Tensor { .. } | AbsVal::Scalar { .. } | AbsVal::Str(_) | AbsVal::None => true,
        AbsVal::Tuple(items) => items.iter().all(writable),
        AbsVal::Func(_) | AbsVal::Any | AbsVal::Monad => false,
    }
}

pub(crate) fn code_lenses(analysis: &Analysis) -> Vec<CodeLens> {
    let items = db::items(analysis.db, analysis.file);
    let mut out = Vec::new();
    for info in items
        .items
        .iter()
        .filter(|i| i.first && i.kind == db::ItemKind::Graph)
    {
        for (title, command) in [
            ("▶ Run", "mirdsl.run"),
            ("Show graph", "mirdsl.showGraph"),
            ("Show gradient", "mirdsl.showGradient"),
        ] {
            out.push(CodeLens {
                range: info.name_range,
                title: title.to_string(),
                command: command.to_string(),
                graph: info.name.clone(),
            });
        }
    }
    out
}
