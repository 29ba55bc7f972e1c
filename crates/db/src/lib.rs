//! The incremental database of the MindIR DSL, on salsa.
//!
//! The inputs are kept per top-level item. When a file changes, the writer
//! ([`RootDb::apply_edits`], [`RootDb::set_text`]) reparses it incrementally,
//! works out which items changed (unchanged items keep their green nodes, so
//! this is a pointer comparison), and sets only those items' inputs; the
//! file-wide inputs that item queries read (the item names, which items
//! exist) are set only when they change. The queries below are memoised and
//! re-execute only when something they read changed; values that come out
//! equal stop the change from spreading ("early cut-off").
//!
//! ```text
//! inputs (the writer sets them)          queries
//! File.text, .parse, .items, .line_index ─────────────────────────────────────────┐
//! File.names (item names, effects) ──────────────────┐                          │
//! File.slots ─► ItemSlot(name).syntax ─► item_syntax(k) ─┬─► norm(k) ──┴─► lower(k) ─► infer(k) ─┐ │
//!                                                     │            └─► weight(k) ─► weight_ty(k)│ │
//!                                                     └─► positions(k) ────────────────────────┴─► item_diagnostics(k)
//! file_diagnostics(file) = syntax errors + duplicate items + every item_diagnostics(k)  ◄───────────┘
//! ```
//!
//! `k` is an [`ItemKey`]: a file and a top-level name.
//!
//! Four choices make an edit cost what it changes, not what the file holds:
//!
//! * **Inputs per item.** Each item's syntax is its own input; the inputs that
//!   say which items exist and what they are called have `MEDIUM` durability
//!   (they change rarely), as rust-analyzer keeps library files `HIGH`. (Item
//!   inputs stay `LOW`: an input whose durability drops is not backdated by
//!   salsa, so an item created `MEDIUM` would be lowered and inferred again,
//!   with its callers, on its first edit, whitespace included.)
//! * **Stamps.** Each item carries the generation at which something its
//!   diagnostics depend on last changed: its syntax, an item it refers to
//!   (transitively), the names ([`ItemInfo::stamp`]). The language server
//!   keeps item diagnostics by stamp ([`file_diagnostics_memo`]) and asks
//!   salsa only about the items whose stamps moved, instead of validating
//!   every item after every edit.
//! * **Positions are per item.** A graph is lowered from its own syntax
//!   subtree, re-rooted, so every range in a [`LoweredGraph`] is relative to
//!   the start of its item. Editing one graph moves the text of every graph
//!   after it, but not their relative ranges, so their lowering and inference
//!   stay valid.
//! * **Trivia are normalised away.** Lowering reads a copy of the item's tree
//!   in which each whitespace run is one space, each newline one `\n` and each
//!   comment one `#` ([`norm`]). Whitespace or comment edits inside a graph
//!   therefore leave its lowering (and inference) untouched; a per-item
//!   position map ([`positions`]) takes ranges back to the real text.
//!
//! Inference of an entry reads what it needs of the graphs it calls through
//! [`ProgramSource`], so salsa records those dependencies: a callee's
//! signature, and where nothing would be reported at the call only the
//! call's memoised summary ([`calls`]), so an edit inside a graph re-infers
//! its callers only when that summary changes. A callee evaluated in place
//! (a closure, recursion, a call that finds a problem) is read whole; its ranges
//! are moved into a virtual region (from [`VIRTUAL_BASE`] on, one segment per
//! callee, in order of first use) so the ranges that inference reports from
//! other graphs can be told apart and mapped back to their own items.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use analysis::infer::{infer_entry_own, EntryResult, ProgramSource, Signature};
use analysis::link::ImportDecl;
use analysis::lower::{lower_graph, lower_weight};
use analysis::{Code, Diagnostic, ItemIndex, LoweredGraph};
use ir::{Ty, WeightDef};
use salsa::{Durability, Setter};
use syntax::ast::{self, AstNode};
use syntax::{GreenNode, LineIndex, Parse, SyntaxKind, SyntaxNode, TextEdit, TextRange, TextSize};

pub use salsa;

pub mod calls;
mod diagnostics;
mod normal;
mod workspace;
mod writer;
pub use analysis::link::{map_diagnostic, shift_lowered};
pub use diagnostics::*;
pub use normal::{norm, positions, PositionMap};
pub use workspace::{closure, namespace, scope, visible_names, FileScope, Namespace};
pub use writer::diff_edit;
use writer::{Node, Referrers};

/// A source file. Every field is set by the writer; the queries read them.
#[salsa::input(debug)]
pub struct File {
    #[returns(ref)]
    pub text: Arc<str>,
    #[returns(ref)]
    pub parse: Parse,
    /// The top-level items with their places (changes with every edit).
    #[returns(ref)]
    pub items: Arc<Items>,
    #[returns(ref)]
    pub line_index: Arc<LineIndex>,
    /// The names of the top-level graphs and weights and which graphs have
    /// effects: what lowering needs of the rest of the file (set only when
    /// it changes).
    #[returns(ref)]
    pub names: Arc<ItemIndex>,
    /// The input of each top-level name there has been (set only when a new
    /// name appears).
    #[returns(ref)]
    pub slots: Arc<HashMap<String, ItemSlot>>,
    /// Where the file is (`None`: a text without a file; its imports are
    /// relative to the working folder).
    #[returns(ref)]
    pub path: Option<Arc<std::path::Path>>,
    /// The file's `import` items (set only when they change).
    #[returns(ref)]
    pub imports: Arc<Vec<ImportDecl>>,
    /// The file each import names, or why none (set by the writer, which
    /// reads files: [`RootDb::open`]).
    #[returns(ref)]
    pub resolved: Arc<Vec<Result<File, String>>>,
}

/// The syntax of the first top-level item of one name (`None` once there is
/// no item of that name).
#[salsa::input(debug)]
pub struct ItemSlot {
    #[returns(ref)]
    pub syntax: Option<(ItemKind, Green)>,
}

/// A top-level item of a file, by name.
#[salsa::interned(debug, unsafe(no_lifetime), revisions = usize::MAX)]
pub struct ItemKey {
    #[returns(copy)]
    pub file: File,
    #[returns(ref)]
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ItemKind {
    Graph,
    Weight,
}

/// A green node compared by pointer first (unchanged items share their green
/// node with the previous tree after an incremental reparse).
#[derive(Debug, Clone, Eq)]
pub struct Green(pub GreenNode);

impl std::hash::Hash for Green {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state)
    }
}

impl PartialEq for Green {
    fn eq(&self, other: &Green) -> bool {
        std::ptr::eq(&*self.0, &*other.0) || self.0 == other.0
    }
}

impl Green {
    fn same(&self, other: &rowan::GreenNodeData) -> bool {
        std::ptr::eq(&*self.0, other)
    }
}

/// The graphs an item defines (itself and nested ones) with the names each
/// calls, and those that call a primitive with effects: what deciding which
/// graphs have effects needs of the item.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ItemCalls {
    pub graphs: Vec<(String, Vec<String>)>,
    pub direct: Vec<String>,
}

impl ItemCalls {
    fn of(node: &SyntaxNode) -> ItemCalls {
        let graphs = analysis::effects::graph_calls(node);
        let direct = graphs
            .iter()
            .filter(|(_, calls)| {
                calls
                    .iter()
                    .any(|c| analysis::effects::is_effect_primitive(c))
            })
            .map(|(n, _)| n.clone())
            .collect();
        ItemCalls { graphs, direct }
    }
}

/// One top-level item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemInfo {
    pub kind: ItemKind,
    pub name: String,
    pub key: ItemKey,
    /// The whole item, in the file.
    pub range: TextRange,
    /// Its name, in the file.
    pub name_range: TextRange,
    pub green: Green,
    /// Whether this is the first item with its name (later ones are errors).
    pub first: bool,
    /// The generation of the file's items at which something this item's
    /// diagnostics depend on last changed (its syntax, or an item it refers
    /// to, transitively, or the names): equal stamps, equal diagnostics.
    pub stamp: u64,
}

/// The top-level items of a file, in source order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Items {
    pub items: Vec<ItemInfo>,
    /// The first item of each name.
    by_name: Arc<HashMap<String, usize>>,
    /// Duplicate top-level names.
    pub diagnostics: Vec<Diagnostic>,
    /// Every top-level item node, named or not.
    nodes: Vec<Node>,
    text_len: Option<TextSize>,
    /// Counts updates (see [`ItemInfo::stamp`]).
    generation: u64,
    /// For each name, the items whose text refers to it.
    referrers: Arc<Referrers>,
}

impl Items {
    pub fn get(&self, name: &str) -> Option<&ItemInfo> {
        self.by_name.get(name).map(|&i| &self.items[i])
    }

    /// The named items whose text refers to `name` (a superset of those
    /// that use the item: local names of the same spelling count too).
    pub fn referrers_of(&self, name: &str) -> impl Iterator<Item = &str> {
        self.referrers
            .get(name)
            .into_iter()
            .flat_map(|l| l.iter().map(|n| &**n))
    }

    /// The item whose range contains `offset` (an offset at an item's end counts).
    pub fn at(&self, offset: TextSize) -> Option<&ItemInfo> {
        let i = self.items.partition_point(|it| it.range.end() < offset);
        self.items
            .get(i)
            .filter(|it| it.range.start() <= offset && offset <= it.range.end())
    }

    /// The names, kinds and effects lowering reads (ranges left out: they
    /// change with every edit).
    fn index(&self) -> ItemIndex {
        let (mut graphs, mut weights) = (Vec::new(), Vec::new());
        for it in self.items.iter().filter(|it| it.first) {
            let entry = (it.name.clone(), TextRange::default());
            match it.kind {
                ItemKind::Graph => graphs.push(entry),
                ItemKind::Weight => weights.push(entry),
            }
        }
        let calls: Vec<&ItemCalls> = self.nodes.iter().map(|n| &*n.calls).collect();
        let mut effectful: HashSet<String> = calls
            .iter()
            .flat_map(|c| c.direct.iter().cloned())
            .collect();
        if !effectful.is_empty() {
            // Callers of graphs with effects have effects (by name, as
            // `analysis::effects::effectful_graphs` decides).
            let mut callers: HashMap<&str, Vec<&str>> = HashMap::new();
            for c in &calls {
                for (name, called) in &c.graphs {
                    for callee in called {
                        callers.entry(callee.as_str()).or_default().push(name);
                    }
                }
            }
            let mut work: Vec<String> = effectful.iter().cloned().collect();
            while let Some(name) = work.pop() {
                for caller in callers.get(name.as_str()).into_iter().flatten() {
                    if effectful.insert(caller.to_string()) {
                        work.push(caller.to_string());
                    }
                }
            }
        }
        let mut effectful: Vec<String> = effectful.into_iter().collect();
        effectful.sort();
        ItemIndex::new(graphs, weights, effectful)
    }
}

/// Start of the virtual region of callee ranges during inference.
pub const VIRTUAL_BASE: u32 = 1 << 31;

/// An entry's inference with where its callees' ranges were put.
#[derive(Debug, Clone, PartialEq)]
pub struct Inferred {
    pub result: EntryResult,
    /// Callee graphs moved into the virtual region: name, base, length.
    pub segments: Vec<(String, u32, u32)>,
}

// ---------------------------------------------------------------------------
// The database and its writer.

/// What a query execution was, for tests and tracing.
pub type EventLog = Arc<Mutex<Vec<String>>>;

/// Queries executed and memoised values validated (see [`RootDb::with_work_counts`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkCounts {
    pub executed: usize,
    pub validated: usize,
}

#[salsa::db]
#[derive(Clone)]
pub struct RootDb {
    storage: salsa::Storage<Self>,
    /// The files of the workspace by path, and what reads them.
    workspace: Arc<Mutex<workspace::Files>>,
}

#[salsa::db]
impl salsa::Database for RootDb {}

impl Default for RootDb {
    fn default() -> Self {
        RootDb::new()
    }
}

// ---------------------------------------------------------------------------
// Queries.

/// The file's syntax tree.
pub fn parse(db: &dyn salsa::Database, file: File) -> &Parse {
    file.parse(db)
}

/// The file's top-level items.
pub fn items(db: &dyn salsa::Database, file: File) -> &Items {
    file.items(db)
}

/// The names of the top-level graphs and weights (what lowering needs of the
/// rest of the file), without positions: unchanged by edits inside bodies.
pub fn item_names(db: &dyn salsa::Database, file: File) -> &ItemIndex {
    file.names(db)
}

/// The line index of a file's text.
pub fn line_index(db: &dyn salsa::Database, file: File) -> &LineIndex {
    file.line_index(db)
}

/// The syntax of the first item named `key`.
#[salsa::tracked(returns(ref))]
pub fn item_syntax(db: &dyn salsa::Database, key: ItemKey) -> Option<(ItemKind, Green)> {
    let slot = *key.file(db).slots(db).get(key.name(db))?;
    slot.syntax(db).clone()
}

fn syntax_kind(raw: rowan::SyntaxKind) -> SyntaxKind {
    <syntax::MirLanguage as rowan::Language>::kind_from_raw(raw)
}

/// A result, or the message of a panic in the analysis that computed it (a
/// checker bug): memoised like any result, so it is not recomputed until
/// something it read changes.
pub type Fallible<T> = Result<T, String>;

/// A graph lowered on its own, with ranges relative to its item (normalised).
#[salsa::tracked(returns(ref))]
pub fn lower(db: &dyn salsa::Database, key: ItemKey) -> Fallible<Option<Arc<LoweredGraph>>> {
    let Some((kind, green)) = norm(db, key).as_ref() else {
        return Ok(None);
    };
    if *kind != ItemKind::Graph {
        return Ok(None);
    }
    let names = visible_names(db, key.file(db));
    let Some(graph) = ast::Graph::cast(SyntaxNode::new_root(green.0.clone())) else {
        return Ok(None);
    };
    catch_panic(|| Some(Arc::new(lower_graph(&graph, names))))
}

/// The lowering of a graph, if it is one and lowering did not fail.
pub fn lowered(db: &dyn salsa::Database, key: ItemKey) -> Option<Arc<LoweredGraph>> {
    lower(db, key).clone().ok().flatten()
}

/// The inference of a graph, if it is one and neither lowering nor inference failed.
pub fn inferred(db: &dyn salsa::Database, key: ItemKey) -> Option<Arc<Inferred>> {
    infer(db, key).clone().ok().flatten()
}

/// A weight lowered on its own (ranges relative to its item, normalised).
#[salsa::tracked(returns(ref))]
pub fn weight(db: &dyn salsa::Database, key: ItemKey) -> Option<Arc<(WeightDef, Vec<Diagnostic>)>> {
    let (kind, green) = norm(db, key).as_ref()?;
    if *kind != ItemKind::Weight {
        return None;
    }
    let w = ast::Weight::cast(SyntaxNode::new_root(green.0.clone()))?;
    let (def, diagnostics) = lower_weight(&w, None);
    Some(Arc::new((def?, diagnostics)))
}

/// A weight's declared type (what inference reads of it).
#[salsa::tracked(returns(ref))]
pub fn weight_ty(db: &dyn salsa::Database, key: ItemKey) -> Option<Ty> {
    weight(db, key).as_ref().map(|w| w.0.ty.clone())
}

/// Inference of the top-level graph `key` as an entry.
#[salsa::tracked(returns(ref))]
pub fn infer(db: &dyn salsa::Database, key: ItemKey) -> Fallible<Option<Arc<Inferred>>> {
    if lower(db, key).clone()?.is_none() {
        return Ok(None);
    }
    let file = key.file(db);
    let entry = key.name(db).clone();
    let source = DbSource::new(db, file, entry.clone());
    // Every query this reads returns normally (failures are values), so a
    // panic here is inference's own and the reads before it are recorded.
    let result = catch_panic(|| infer_entry_own(&source, &entry))?;
    Ok(Some(Arc::new(Inferred {
        result,
        segments: source.segments.into_inner(),
    })))
}

struct DbSource<'a> {
    db: &'a dyn salsa::Database,
    file: File,
    entry: String,
    moved: RefCell<HashMap<String, Option<Arc<LoweredGraph>>>>,
    segments: RefCell<Vec<(String, u32, u32)>>,
}

impl<'a> DbSource<'a> {
    pub(crate) fn new(db: &'a dyn salsa::Database, file: File, entry: String) -> DbSource<'a> {
        DbSource {
            db,
            file,
            entry,
            moved: RefCell::new(HashMap::new()),
            segments: RefCell::new(Vec::new()),
        }
    }

    /// The item a global name of the program names (`docs/language.md`
    /// §10: the entry's file sees its imports by the names it writes).
    fn key(&self, name: &str) -> ItemKey {
        if !self.file.imports(self.db).is_empty() {
            if let Some(key) = namespace(self.db, self.file).resolve.get(name) {
                return *key;
            }
        }
        ItemKey::new(self.db, self.file, name)
    }

    /// A graph's lowering in the program's global names.
    fn lowered_global(&self, key: ItemKey) -> Option<Arc<LoweredGraph>> {
        let g = lowered(self.db, key)?;
        if self.file.imports(self.db).is_empty() && key.file(self.db) == self.file {
            return Some(g);
        }
        let ns = namespace(self.db, self.file);
        match ns.renames.get(&key.file(self.db)) {
            Some(map) if !map.is_empty() => {
                Some(Arc::new(analysis::link::rename_lowered(&g, &|n| {
                    map.get(n).cloned()
                })))
            }
            _ => Some(g),
        }
    }
}

impl ProgramSource for DbSource<'_> {
    fn graph(&self, name: &str) -> Option<Arc<LoweredGraph>> {
        let key = self.key(name);
        if name == self.entry {
            return self.lowered_global(key);
        }
        if let Some(g) = self.moved.borrow().get(name) {
            return g.clone();
        }
        let moved = self.lowered_global(key).map(|g| {
            let len = g
                .body
                .graph(g.body.root())
                .span
                .map_or(0, |s| u32::from(s.end()));
            let mut segments = self.segments.borrow_mut();
            let base = segments.last().map_or(VIRTUAL_BASE, |(_, b, l)| b + l + 1);
            segments.push((name.to_string(), base, len));
            Arc::new(shift_lowered(&g, TextSize::from(base)))
        });
        self.moved
            .borrow_mut()
            .insert(name.to_string(), moved.clone());
        moved
    }

    fn weight(&self, name: &str) -> Option<Ty> {
        weight_ty(self.db, self.key(name)).clone()
    }

    fn signature(&self, name: &str) -> Option<Arc<Signature>> {
        let key = self.key(name);
        let sig = calls::signature(self.db, key).clone()?;
        if self.file.imports(self.db).is_empty() && key.file(self.db) == self.file {
            return Some(sig);
        }
        // The graph's name in this program's global names, as
        // `lowered_global` renames it.
        let ns = namespace(self.db, self.file);
        match ns
            .renames
            .get(&key.file(self.db))
            .and_then(|m| m.get(&sig.name))
        {
            Some(global) => Some(Arc::new(Signature {
                name: global.clone(),
                ..(*sig).clone()
            })),
            None => Some(sig),
        }
    }

    fn call_result(&self, name: &str, args: &[ir::AbsVal]) -> Option<analysis::infer::CallSummary> {
        if !calls::may_nest() {
            return None;
        }
        // Evaluated in the callee's own file and names: a result holds no
        // names, so it is the same in any caller's.
        let key = self.key(name);
        calls::call_output(self.db, calls::CallKey::new(self.db, key, args.to_vec())).clone()
    }
}
