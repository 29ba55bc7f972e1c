//! Document symbols (nested graphs nested in their graphs) and workspace symbols.

use db::File;
use syntax::{ast, AstNode, TextRange};

use crate::Analysis;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolKind {
    Graph,
    NestedGraph,
    Weight,
    /// A section of a runtime actor set (`[Kernel actors:102]`, a block).
    Section,
    /// An actor of a runtime actor set.
    Actor,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub kind: SymbolKind,
    /// The parameters and return type as written (`(x: f32[3]) -> f32[3]`), or a weight's type.
    pub detail: Option<String>,
    pub range: TextRange,
    pub selection_range: TextRange,
    pub children: Vec<Symbol>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceSymbol {
    pub name: String,
    pub kind: SymbolKind,
    pub file: File,
    pub range: TextRange,
    pub container: Option<String>,
}

pub(crate) fn document_symbols(analysis: &Analysis) -> Vec<Symbol> {
    let parse = db::parse(analysis.db, analysis.file);
    parse
        .tree()
        .items()
        .enumerate()
        .map(|(i, item)| {
            // A large file has thousands of items: an edit must not wait.
            if i % 64 == 63 {
                analysis.db.unwind_if_revision_cancelled();
            }
            item
        })
        .filter_map(|item| match item {
            ast::Item::Graph(g) => graph_symbol(&g, SymbolKind::Graph),
            ast::Item::Weight(w) => {
                let name = w.name()?;
                Some(Symbol {
                    name: name.text(),
                    kind: SymbolKind::Weight,
                    detail: w.ty().map(|t| t.syntax().to_string()),
                    range: w.range(),
                    selection_range: name.range(),
                    children: Vec::new(),
                })
            }
        })
        .collect()
}

fn graph_symbol(g: &ast::Graph, kind: SymbolKind) -> Option<Symbol> {
    let name = g.name()?;
    let mut detail = g
        .param_list()
        .map(|p| squash(&p.syntax().to_string()))
        .unwrap_or_else(|| "()".into());
    if let Some(ret) = g.ret_type() {
        detail.push_str(&format!(" -> {}", squash(&ret.syntax().to_string())));
    }
    let children = g
        .body()
        .map(|b| {
            b.stmts()
                .filter_map(|s| match s {
                    ast::Stmt::Graph(inner) => graph_symbol(&inner, SymbolKind::NestedGraph),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    Some(Symbol {
        name: name.text(),
        kind,
        detail: Some(detail),
        range: g.range(),
        selection_range: name.range(),
        children,
    })
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `query`'s characters appear in `name` in order (case-insensitively).
pub fn fuzzy_match(query: &str, name: &str) -> bool {
    let mut chars = name.chars().map(|c| c.to_ascii_lowercase());
    query
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .all(|q| chars.any(|c| c == q))
}

pub(crate) fn workspace_symbols(
    db: &dyn salsa::Database,
    files: &[File],
    query: &str,
) -> Vec<WorkspaceSymbol> {
    let mut out = Vec::new();
    for &file in files {
        let analysis = Analysis::new(db, file);
        fn walk(
            s: &Symbol,
            container: Option<&str>,
            file: File,
            query: &str,
            out: &mut Vec<WorkspaceSymbol>,
        ) {
            if fuzzy_match(query, &s.name) {
                out.push(WorkspaceSymbol {
                    name: s.name.clone(),
                    kind: s.kind,
                    file,
                    range: s.selection_range,
                    container: container.map(str::to_string),
                });
            }
            for c in &s.children {
                walk(c, Some(&s.name), file, query, out);
            }
        }
        for s in document_symbols(&analysis) {
            walk(&s, None, file, query, &mut out);
        }
    }
    out
}
