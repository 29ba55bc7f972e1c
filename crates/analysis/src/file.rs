//! Checking a whole file at once (the command line's path; the language
//! server goes through the incremental database instead).

use std::collections::HashMap;
use std::sync::Arc;

use ir::{Program, Ty, WeightDef};
use syntax::ast;

use crate::diagnostic::Diagnostic;
use crate::infer::{EntryResult, ProgramSource};
use crate::lower::{lower_graph, lower_weight, ItemIndex, LoweredGraph};

/// A file's lowered graphs and weights, by name.
#[derive(Debug, Clone, Default)]
pub struct FileSource {
    pub graphs: HashMap<String, Arc<LoweredGraph>>,
    pub weights: HashMap<String, WeightDef>,
    /// Graph names in source order.
    pub order: Vec<String>,
}

impl ProgramSource for FileSource {
    fn graph(&self, name: &str) -> Option<Arc<LoweredGraph>> {
        self.graphs.get(name).cloned()
    }

    fn weight(&self, name: &str) -> Option<Ty> {
        self.weights.get(name).map(|w| w.ty.clone())
    }
}

impl FileSource {
    /// The program for execution and transformation: weights and graph bodies.
    pub fn program(&self) -> Program {
        let mut weights: Vec<WeightDef> = self.weights.values().cloned().collect();
        weights.sort_by_key(|w| w.span.map(|s| s.start()));
        Program {
            graphs: self
                .order
                .iter()
                .map(|n| (n.clone(), self.graphs[n].body.clone()))
                .collect(),
            weights,
        }
    }
}

/// Everything `mirdsl check` knows about a file.
#[derive(Debug, Clone)]
pub struct FileAnalysis {
    pub parse: syntax::Parse,
    pub source: FileSource,
    pub entries: HashMap<String, EntryResult>,
    /// All diagnostics, sorted by position.
    pub diagnostics: Vec<Diagnostic>,
}

impl FileAnalysis {
    /// Every value node `node` of graph `item` took, in its own entry's check and
    /// in the calls other entries made (the specialisations of a generic graph).
    pub fn values_of(&self, item: &str, node: ir::NodeId) -> Vec<ir::AbsVal> {
        let mut out: Vec<ir::AbsVal> = Vec::new();
        let own = self
            .entries
            .get(item)
            .and_then(|e| e.node_values.get(&node));
        let others = self
            .entries
            .values()
            .filter_map(|e| e.other_values.get(item).and_then(|m| m.get(&node)));
        for list in own.into_iter().chain(others) {
            for v in list {
                if !out.contains(v) {
                    out.push(v.clone());
                }
            }
        }
        out
    }

    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == crate::Severity::Error)
    }
}

/// Parses, lowers and infers every graph of a file.
pub fn analyze(text: &str) -> FileAnalysis {
    let parse = syntax::parse(text);
    let mut diagnostics: Vec<Diagnostic> = parse.errors().iter().map(Diagnostic::syntax).collect();
    let file = parse.tree();
    let (index, index_diagnostics) = ItemIndex::build(&file);
    diagnostics.extend(index_diagnostics);
    let mut source = FileSource::default();
    for item in file.items() {
        match item {
            ast::Item::Graph(g) => {
                let lowered = lower_graph(&g, &index);
                if source.graphs.contains_key(&lowered.name) || lowered.name.is_empty() {
                    continue;
                }
                diagnostics.extend(lowered.diagnostics.iter().cloned());
                source.order.push(lowered.name.clone());
                source
                    .graphs
                    .insert(lowered.name.clone(), Arc::new(lowered));
            }
            ast::Item::Weight(w) => {
                let (def, ds) = lower_weight(&w, None);
                diagnostics.extend(ds);
                if let Some(def) = def {
                    source.weights.entry(def.name.clone()).or_insert(def);
                }
            }
        }
    }
    let order = crate::infer::callees_first(&source, &source.order);
    let entries = crate::infer::infer_all(&source, &order);
    for name in &source.order {
        diagnostics.extend(entries[name].diagnostics.iter().cloned());
    }
    diagnostics.sort_by_key(|d| (d.range.start(), d.range.end(), d.code));
    diagnostics.dedup();
    FileAnalysis {
        parse,
        source,
        entries,
        diagnostics,
    }
}
