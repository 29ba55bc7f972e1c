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
pub use analysis::link::{map_diagnostic, shift_lowered};
pub use diagnostics::*;
pub use normal::{norm, positions, PositionMap};
pub use workspace::{closure, namespace, scope, visible_names, FileScope, Namespace};

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

/// One top-level item node of a file, named or not.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Node {
    green: Green,
    /// Where it starts in the file.
    start: TextSize,
    /// Its index in [`Items::items`], if it has a name.
    info: Option<usize>,
    calls: Arc<ItemCalls>,
    /// The names its text refers to (what its analysis may read of other
    /// items; local names too, which does no harm).
    refs: Arc<Vec<String>>,
}

impl RootDb {
    pub fn new() -> RootDb {
        RootDb {
            storage: salsa::Storage::new(None),
            workspace: Arc::default(),
        }
    }

    /// A database that appends `WillExecute` events (as `query(Id(n))`) to `log`.
    pub fn with_execution_log(log: EventLog) -> RootDb {
        RootDb {
            storage: salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
                if let salsa::EventKind::WillExecute { database_key } = event.kind {
                    log.lock().unwrap().push(format!("{database_key:?}"));
                }
            }))),
            workspace: Arc::default(),
        }
    }

    /// A database that counts query executions and validations of memoised
    /// values (`WillExecute`, `DidValidateMemoizedValue`): how much work an
    /// edit does, for tests of scale.
    pub fn with_work_counts(counts: Arc<Mutex<WorkCounts>>) -> RootDb {
        RootDb {
            storage: salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
                match event.kind {
                    salsa::EventKind::WillExecute { .. } => counts.lock().unwrap().executed += 1,
                    salsa::EventKind::DidValidateMemoizedValue { .. } => {
                        counts.lock().unwrap().validated += 1
                    }
                    _ => {}
                }
            }))),
            workspace: Arc::default(),
        }
    }

    /// A new file.
    pub fn new_file(&mut self, text: &str) -> File {
        self.new_file_with_path(None, text)
    }

    /// A new file at `path` (its imports are relative to its folder).
    pub(crate) fn new_file_with_path(
        &mut self,
        path: Option<&std::path::Path>,
        text: &str,
    ) -> File {
        let parse = syntax::parse(text);
        let index = LineIndex::new(text);
        let file = File::builder(
            Arc::from(text),
            parse.clone(),
            Arc::default(),
            Arc::new(index.clone()),
            Arc::default(),
            Arc::default(),
            path.map(Arc::from),
            Arc::default(),
            Arc::default(),
        )
        .names_durability(Durability::MEDIUM)
        .slots_durability(Durability::MEDIUM)
        .path_durability(Durability::HIGH)
        .imports_durability(Durability::MEDIUM)
        .resolved_durability(Durability::MEDIUM)
        .new(self);
        self.update(file, Arc::from(text), parse, index);
        file
    }

    /// Replaces a file's text (as one edit of the part that differs, so the
    /// parse and the items outside it are kept).
    pub fn set_text(&mut self, file: File, text: &str) {
        let edit = diff_edit(file.text(self), text);
        if edit.delete.is_empty() && edit.insert.is_empty() {
            return;
        }
        self.apply_edits(file, vec![edit]);
    }

    /// Applies edits in order (each in the coordinates of the text the previous
    /// ones left); the parse is updated incrementally where it can be.
    pub fn apply_edits(&mut self, file: File, edits: Vec<TextEdit>) {
        self.edit_file(file, edits, |_, _, e| e);
    }

    /// Applies changes in order: `to_edit` turns each into an edit, seeing the
    /// text and line index the earlier ones left (for positions in lines).
    pub fn edit_file<C>(
        &mut self,
        file: File,
        changes: impl IntoIterator<Item = C>,
        mut to_edit: impl FnMut(&str, &LineIndex, C) -> TextEdit,
    ) {
        let mut text = file.text(self).to_string();
        let mut parse = file.parse(self).clone();
        let mut index = (**file.line_index(self)).clone();
        let mut changed = false;
        for change in changes {
            let e = to_edit(&text, &index, change);
            let mut e = e;
            let end = usize::from(e.delete.end()).min(text.len());
            let start = usize::from(e.delete.start()).min(end);
            if !text.is_char_boundary(start) || !text.is_char_boundary(end) {
                continue;
            }
            e.delete = TextRange::new((start as u32).into(), (end as u32).into());
            e.apply(&mut text);
            parse = parse.reparse(&e);
            index.apply(&text, &e);
            changed = true;
        }
        if !changed {
            return;
        }
        if cfg!(debug_assertions) && text.len() < 1 << 20 {
            assert_eq!(parse.syntax_node().to_string(), text);
            let full = syntax::parse(&text);
            assert_eq!(
                parse.green(),
                full.green(),
                "reparse differs from a full parse of {text:?}"
            );
            assert_eq!(
                parse.errors(),
                full.errors(),
                "reparse errors differ for {text:?}"
            );
            assert_eq!(index, LineIndex::new(&text));
        }
        self.update(file, Arc::from(text), parse, index);
    }

    pub fn key(&self, file: File, name: &str) -> ItemKey {
        ItemKey::new(self, file, name)
    }

    fn generation_of(&self, file: File) -> u64 {
        file.items(self).generation
    }

    /// Sets a file's inputs for a new text and parse: the item inputs only
    /// where an item changed, the names only when they changed.
    fn update(&mut self, file: File, text: Arc<str>, parse: Parse, line_index: LineIndex) {
        let old: Arc<Items> = file.items(self).clone();
        let root = parse.syntax_node();
        let nodes: Vec<SyntaxNode> = root
            .children()
            .filter(|n| ast::Item::can_cast(n.kind()))
            .collect();
        let (n_old, n_new) = (old.nodes.len(), nodes.len());
        let same = |j: usize, i: usize| old.nodes[j].green.same(nodes[i].green());
        // A reparse shares the nodes outside the window it parsed again: those
        // before it keep their place, those after it move by the edit's length.
        let mut pre = 0;
        while pre < n_old.min(n_new)
            && same(pre, pre)
            && old.nodes[pre].start == nodes[pre].text_range().start()
        {
            pre += 1;
        }
        let delta = i64::from(u32::from(root.text_range().len()))
            - old.text_len.map_or(0, |l| i64::from(u32::from(l)));
        let shift_at = |o: TextSize| TextSize::from((i64::from(u32::from(o)) + delta) as u32);
        let shift = |r: TextRange| TextRange::at(shift_at(r.start()), r.len());
        let mut suf = 0;
        while suf < (n_old - pre).min(n_new - pre)
            && same(n_old - 1 - suf, n_new - 1 - suf)
            && shift_at(old.nodes[n_old - 1 - suf].start)
                == nodes[n_new - 1 - suf].text_range().start()
        {
            suf += 1;
        }
        // The changed part: what was there, what is there now.
        let fresh: Vec<(Node, Option<ItemInfo>)> = nodes[pre..n_new - suf]
            .iter()
            .map(|n| self.describe(file, n))
            .collect();
        let old_middle = &old.nodes[pre..n_old - suf];
        fn named(info: Option<&ItemInfo>) -> Option<(ItemKind, &str)> {
            info.map(|i| (i.kind, i.name.as_str()))
        }
        let structure_same = n_old == n_new
            && old_middle
                .iter()
                .zip(&fresh)
                .all(|(o, (_, f))| named(o.info.map(|i| &old.items[i])) == named(f.as_ref()));
        let calls_same = structure_same
            && old_middle
                .iter()
                .zip(&fresh)
                .all(|(o, (f, _))| o.calls == f.calls);
        let refs_same = structure_same
            && old_middle
                .iter()
                .zip(&fresh)
                .all(|(o, (f, _))| o.refs == f.refs);
        let generation = old.generation + 1;
        let mut items = Items {
            items: Vec::with_capacity(old.items.len()),
            nodes: Vec::with_capacity(n_new),
            by_name: old.by_name.clone(),
            diagnostics: Vec::new(),
            text_len: Some(root.text_range().len()),
            generation,
            referrers: old.referrers.clone(),
        };
        let push = |items: &mut Items, mut node: Node, info: Option<ItemInfo>| {
            node.info = info.map(|info| {
                items.items.push(info);
                items.items.len() - 1
            });
            items.nodes.push(node);
        };
        for node in &old.nodes[..pre] {
            let info = node.info.map(|i| old.items[i].clone());
            push(&mut items, node.clone(), info);
        }
        for (node, info) in fresh.iter().cloned() {
            push(&mut items, node, info);
        }
        for node in &old.nodes[n_old - suf..] {
            let mut node = node.clone();
            node.start = shift_at(node.start);
            let info = node.info.map(|i| {
                let mut info = old.items[i].clone();
                info.range = shift(info.range);
                info.name_range = shift(info.name_range);
                info
            });
            push(&mut items, node, info);
        }
        // Which item of each name is the first (only where names changed).
        let mut touched: HashSet<String> = HashSet::new();
        if structure_same {
            for info in fresh.iter().filter_map(|(_, info)| info.as_ref()) {
                touched.insert(info.name.clone());
            }
            // The first-ness of the fresh items is the old one's.
            for (k, o) in old_middle.iter().enumerate() {
                if let (Some(oi), Some(ni)) = (o.info, items.nodes[pre + k].info) {
                    items.items[ni].first = old.items[oi].first;
                }
            }
        } else {
            let mut by_name = HashMap::with_capacity(items.items.len());
            for (i, info) in items.items.iter_mut().enumerate() {
                info.first = !by_name.contains_key(&info.name);
                if info.first {
                    by_name.insert(info.name.clone(), i);
                }
            }
            items.by_name = Arc::new(by_name);
            for o in old_middle {
                if let Some(i) = o.info {
                    touched.insert(old.items[i].name.clone());
                }
            }
            for info in fresh.iter().filter_map(|(_, info)| info.as_ref()) {
                touched.insert(info.name.clone());
            }
        }
        items.diagnostics = duplicates(&items);
        // The item inputs: changed first items get their new syntax.
        let mut slots = file.slots(self).clone();
        let mut new_slots = false;
        let mut to_set = Vec::new();
        // The names whose item changed (their diagnostics and their
        // referrers' may change).
        let mut changed: Vec<String> = Vec::new();
        for name in &touched {
            let syntax = items.get(name).map(|i| (i.kind, i.green.clone()));
            match slots.get(name) {
                Some(slot) => {
                    if slot.syntax(self) != &syntax {
                        to_set.push((*slot, syntax));
                        changed.push(name.clone());
                    }
                }
                None => {
                    let slot = ItemSlot::new(self, syntax);
                    Arc::make_mut(&mut slots).insert(name.clone(), slot);
                    new_slots = true;
                    changed.push(name.clone());
                }
            }
        }
        for (slot, syntax) in to_set {
            slot.set_syntax(self).to(syntax);
        }
        if new_slots {
            file.set_slots(self)
                .with_durability(Durability::MEDIUM)
                .to(slots);
        }
        let mut names_changed = false;
        // With the same names and no effects before or in the changed items,
        // the index (names and effectful graphs) is the same: no need to
        // build it again for every edit that adds or drops a call.
        let effects_unchanged = structure_same
            && file.names(self).effectful.is_empty()
            && fresh.iter().all(|(f, _)| f.calls.direct.is_empty());
        if !calls_same && !effects_unchanged {
            let index = items.index();
            if **file.names(self) != index {
                names_changed = true;
                file.set_names(self)
                    .with_durability(Durability::MEDIUM)
                    .to(Arc::new(index));
            }
        }
        if !refs_same {
            items.referrers = Arc::new(if structure_same {
                // The same items by name: move only the changed items' references
                // (a full rebuild clones every reference of the file).
                let mut map = (*old.referrers).clone();
                for (o, (f, info)) in old_middle.iter().zip(&fresh) {
                    if o.refs != f.refs {
                        if let Some(info) = info {
                            move_references(&mut map, &info.name, &o.refs, &f.refs);
                        }
                    }
                }
                map
            } else {
                referrers(&items)
            });
            if cfg!(debug_assertions) {
                // Moved or rebuilt, the map is what a rebuild gives (lists
                // compared as multisets: moving reorders them).
                let sorted = |m: &Referrers| {
                    let mut v: Vec<(Arc<str>, Vec<Arc<str>>)> = m
                        .iter()
                        .map(|(k, l)| {
                            let mut l = l.to_vec();
                            l.sort();
                            (k.clone(), l)
                        })
                        .collect();
                    v.sort();
                    v
                };
                assert_eq!(sorted(&items.referrers), sorted(&referrers(&items)));
            }
        }
        // Stamp the items whose diagnostics may have changed: those that
        // changed and those that refer to them, transitively; all of them
        // when the names changed (lowering reads them) or an item moved
        // ahead of another of its name.
        if names_changed || !structure_same {
            for info in &mut items.items {
                info.stamp = generation;
            }
        } else if !changed.is_empty() {
            let mut dirty: HashSet<String> = changed.iter().cloned().collect();
            let mut work = changed;
            while let Some(name) = work.pop() {
                for referrer in items
                    .referrers
                    .get(name.as_str())
                    .iter()
                    .flat_map(|l| l.iter())
                {
                    if !dirty.contains(&**referrer) {
                        dirty.insert(referrer.to_string());
                        work.push(referrer.to_string());
                    }
                }
            }
            for info in &mut items.items {
                if dirty.contains(&info.name) {
                    info.stamp = generation;
                }
            }
        }
        let decls = analysis::link::import_decls(&parse.tree());
        let imports_changed = **file.imports(self) != decls;
        if imports_changed {
            file.set_imports(self)
                .with_durability(Durability::MEDIUM)
                .to(Arc::new(decls));
        }
        file.set_text(self).to(text);
        file.set_parse(self).to(parse);
        file.set_items(self).to(Arc::new(items));
        file.set_line_index(self).to(Arc::new(line_index));
        if imports_changed {
            self.resolve_imports(file);
        }
    }

    /// A top-level item node: its calls and references, and its name, kind
    /// and ranges if it has a name.
    fn describe(&self, file: File, node: &SyntaxNode) -> (Node, Option<ItemInfo>) {
        let calls = Arc::new(ItemCalls::of(node));
        let mut refs: Vec<String> = node
            .descendants_with_tokens()
            .filter_map(|e| e.into_token())
            .filter(|t| {
                t.kind() == SyntaxKind::IDENT
                    && t.parent().is_some_and(|p| p.kind() == SyntaxKind::NAME_REF)
            })
            .map(|t| t.text().to_string())
            .collect();
        refs.sort();
        refs.dedup();
        let green = Green(node.green().to_owned());
        let info = ast::Item::cast(node.clone()).and_then(|item| {
            let name = item.name()?;
            let text = name.text();
            if text.is_empty() {
                return None;
            }
            Some(ItemInfo {
                kind: match item {
                    ast::Item::Graph(_) => ItemKind::Graph,
                    ast::Item::Weight(_) => ItemKind::Weight,
                },
                key: ItemKey::new(self, file, text.as_str()),
                name: text,
                range: item.range(),
                name_range: name.range(),
                green: green.clone(),
                first: true,
                stamp: self.generation_of(file) + 1,
            })
        });
        (
            Node {
                green,
                start: node.text_range().start(),
                info: None,
                calls,
                refs: Arc::new(refs),
            },
            info,
        )
    }
}

/// One edit turning `old` into `new`: the part between their common prefix
/// and suffix (so a whole-text change keeps the parse of what it left alone).
pub fn diff_edit(old: &str, new: &str) -> TextEdit {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let mut prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    while !old.is_char_boundary(prefix) || !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let max = a.len().min(b.len()) - prefix;
    let mut suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(max)
        .take_while(|(x, y)| x == y)
        .count();
    while !old.is_char_boundary(a.len() - suffix) || !new.is_char_boundary(b.len() - suffix) {
        suffix -= 1;
    }
    TextEdit {
        delete: TextRange::new(
            TextSize::from(prefix as u32),
            TextSize::from((a.len() - suffix) as u32),
        ),
        insert: new[prefix..b.len() - suffix].to_string(),
    }
}

/// For each name, the named items whose text refers to it (one entry per
/// referring item). Shared strings and lists: an edit clones the map, not
/// every reference of the file.
type Referrers = HashMap<Arc<str>, Arc<[Arc<str>]>>;

fn referrers(items: &Items) -> Referrers {
    let mut out: HashMap<Arc<str>, Vec<Arc<str>>> = HashMap::new();
    for node in &items.nodes {
        let Some(i) = node.info else { continue };
        let referrer: Arc<str> = Arc::from(items.items[i].name.as_str());
        for name in node.refs.iter() {
            out.entry(Arc::from(name.as_str()))
                .or_default()
                .push(referrer.clone());
        }
    }
    out.into_iter().map(|(k, v)| (k, v.into())).collect()
}

/// Updates the referrers map for one item whose references went from `old`
/// to `new` (both sorted): one entry of `name` per referring item, as
/// [`referrers`] builds them.
fn move_references(map: &mut Referrers, name: &str, old: &[String], new: &[String]) {
    for gone in old.iter().filter(|r| new.binary_search(r).is_err()) {
        let Some(list) = map.get_mut(gone.as_str()) else {
            continue;
        };
        let mut kept: Vec<Arc<str>> = list.to_vec();
        if let Some(i) = kept.iter().position(|n| &**n == name) {
            kept.swap_remove(i);
        }
        if kept.is_empty() {
            map.remove(gone.as_str());
        } else {
            *list = kept.into();
        }
    }
    let referrer: Arc<str> = Arc::from(name);
    for added in new.iter().filter(|r| old.binary_search(r).is_err()) {
        let list = map
            .entry(Arc::from(added.as_str()))
            .or_insert_with(|| Arc::from([]));
        let mut grown = list.to_vec();
        grown.push(referrer.clone());
        *list = grown.into();
    }
}

/// Errors for the second and later items of one name.
fn duplicates(items: &Items) -> Vec<Diagnostic> {
    items
        .items
        .iter()
        .filter(|it| !it.first)
        .filter_map(|it| {
            let first = items.get(&it.name)?;
            Some(
                Diagnostic::error(
                    Code::DuplicateItem,
                    it.name_range,
                    format!("`{}` is defined twice at the top level", it.name),
                )
                .with_related(first.name_range, "first defined here"),
            )
        })
        .collect()
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
