//! The incremental database of the MindIR DSL, on salsa.
//!
//! Inputs are file texts. Every query below is memoised and re-executes only
//! when something it read changed; values that come out equal stop the change
//! from spreading ("early cut-off").
//!
//! ```text
//! File.text ─► parse ─► items ─┬─► item_names ──────────────────┐
//!                              └─► item_syntax(k) ─┬─► norm(k) ──┴─► lower(k) ─► infer(k) ─┐
//!                                                  │            └─► weight(k) ─► weight_ty(k)
//!                                                  └─► positions(k) ─────────────────────────┴─► item_diagnostics(k)
//! file_diagnostics = syntax errors + duplicate items + every item_diagnostics(k)
//! ```
//!
//! `k` is an [`ItemKey`]: a file and a top-level name. `item_syntax(k)`
//! re-runs on every edit (it looks the item up), but returns the same green
//! node for every item the edit did not touch, which stops the change there.
//!
//! Two choices make edits cheap:
//!
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
//! Inference of an entry reads the lowerings of the graphs it calls through
//! [`ProgramSource`], so salsa records those dependencies. A callee's ranges
//! are moved into a virtual region (from [`VIRTUAL_BASE`] on, one segment per
//! callee, in order of first use) so the ranges that inference reports from
//! other graphs can be told apart and mapped back to their own items.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use analysis::infer::{infer_entry, EntryResult, ProgramSource};
use analysis::lower::{lower_graph, lower_weight, IfInfo};
use analysis::{Code, Diagnostic, ItemIndex, LoweredGraph};
use ir::{Ty, WeightDef};
use salsa::Setter;
use syntax::ast::{self, AstNode};
use syntax::{
    GreenNode, NodeOrToken, Parse, SyntaxKind, SyntaxNode, TextEdit, TextRange, TextSize,
};

pub use salsa;

/// A source file: its text and, when the text came from edits of the previous
/// text, those edits (so the parse can be updated instead of redone).
#[salsa::input(debug)]
pub struct File {
    #[returns(ref)]
    pub text: Arc<str>,
    #[returns(ref)]
    pub edit_hint: Option<Arc<EditHint>>,
}

/// The previous parse and the edits that lead from its text to the new one.
pub struct EditHint {
    pub old: Parse,
    pub edits: Vec<TextEdit>,
}

impl std::fmt::Debug for EditHint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EditHint({} edits)", self.edits.len())
    }
}

/// A top-level item of a file, by name.
#[salsa::interned(unsafe(no_lifetime), revisions = usize::MAX)]
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

/// One top-level item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemInfo {
    pub kind: ItemKind,
    pub name: String,
    /// The whole item, in the file.
    pub range: TextRange,
    /// Its name, in the file.
    pub name_range: TextRange,
    pub green: Green,
    /// Whether this is the first item with its name (later ones are errors).
    pub first: bool,
}

/// The top-level items of a file, in source order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Items {
    pub items: Vec<ItemInfo>,
    /// The first item of each name.
    pub by_name: HashMap<String, usize>,
    /// Duplicate top-level names.
    pub diagnostics: Vec<Diagnostic>,
    /// The names of graphs and weights, without positions.
    pub names: ItemIndex,
}

impl Items {
    pub fn get(&self, name: &str) -> Option<&ItemInfo> {
        self.by_name.get(name).map(|&i| &self.items[i])
    }

    /// The item whose range contains `offset` (an offset at an item's end counts).
    pub fn at(&self, offset: TextSize) -> Option<&ItemInfo> {
        let i = self.items.partition_point(|it| it.range.end() < offset);
        self.items
            .get(i)
            .filter(|it| it.range.start() <= offset && offset <= it.range.end())
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

/// Maps an item's normalised offsets back to the real text of the item.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PositionMap {
    /// For each token: normalised start, real start, real length.
    tokens: Vec<(u32, u32, u32)>,
    norm_len: u32,
    real_len: u32,
}

impl PositionMap {
    /// The real offset (relative to the item) of a normalised one.
    pub fn to_real(&self, offset: TextSize) -> TextSize {
        let x = u32::from(offset);
        if x >= self.norm_len {
            return TextSize::from(self.real_len);
        }
        let i = self.tokens.partition_point(|t| t.0 <= x).saturating_sub(1);
        let Some(&(norm, real, len)) = self.tokens.get(i) else {
            return offset;
        };
        TextSize::from(real + (x - norm).min(len))
    }

    /// The normalised offset of a real one (the start of the token it is in,
    /// plus the distance into it, clamped for trivia).
    pub fn to_norm(&self, offset: TextSize) -> TextSize {
        let x = u32::from(offset);
        if x >= self.real_len {
            return TextSize::from(self.norm_len);
        }
        let i = self.tokens.partition_point(|t| t.1 <= x).saturating_sub(1);
        let Some(&(norm, real, _)) = self.tokens.get(i) else {
            return offset;
        };
        let next = self.tokens.get(i + 1).map_or(self.norm_len, |t| t.0);
        TextSize::from((norm + (x - real)).min(next))
    }

    pub fn range_to_real(&self, r: TextRange) -> TextRange {
        TextRange::new(self.to_real(r.start()), self.to_real(r.end()))
    }
}

// ---------------------------------------------------------------------------
// The database.

/// What a query execution was, for tests and tracing.
pub type EventLog = Arc<Mutex<Vec<String>>>;

#[salsa::db]
#[derive(Clone)]
pub struct RootDb {
    storage: salsa::Storage<Self>,
}

#[salsa::db]
impl salsa::Database for RootDb {}

impl Default for RootDb {
    fn default() -> Self {
        RootDb::new()
    }
}

impl RootDb {
    pub fn new() -> RootDb {
        RootDb {
            storage: salsa::Storage::new(None),
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
        }
    }

    pub fn new_file(&self, text: &str) -> File {
        File::new(self, Arc::from(text), None)
    }

    /// Replaces a file's text.
    pub fn set_text(&mut self, file: File, text: &str) {
        file.set_edit_hint(self).to(None);
        file.set_text(self).to(Arc::from(text));
    }

    /// Applies edits in order (each in the coordinates of the text the previous
    /// ones left); the parse is updated incrementally where it can be.
    pub fn apply_edits(&mut self, file: File, edits: Vec<TextEdit>) {
        let mut text = file.text(self).to_string();
        for e in &edits {
            e.apply(&mut text);
        }
        self.apply_edits_with_text(file, edits, Arc::from(text));
    }

    /// [`RootDb::apply_edits`] when the caller already has the new text.
    pub fn apply_edits_with_text(&mut self, file: File, edits: Vec<TextEdit>, text: Arc<str>) {
        let old = parse(self, file).clone();
        file.set_edit_hint(self)
            .to(Some(Arc::new(EditHint { old, edits })));
        file.set_text(self).to(text);
    }

    pub fn key(&self, file: File, name: &str) -> ItemKey {
        ItemKey::new(self, file, name)
    }
}

// ---------------------------------------------------------------------------
// Queries.

/// The file's syntax tree (updated in place from the edit hint when possible).
#[salsa::tracked(returns(ref), no_eq)]
pub fn parse(db: &dyn salsa::Database, file: File) -> Parse {
    let text = file.text(db);
    if let Some(hint) = file.edit_hint(db) {
        let mut parse = hint.old.clone();
        for e in &hint.edits {
            parse = parse.reparse(e);
        }
        if usize::from(parse.green().text_len()) == text.len() {
            debug_assert_eq!(parse.syntax_node().to_string(), **text);
            return parse;
        }
    }
    syntax::parse(text)
}

/// The file's top-level items.
#[salsa::tracked(returns(ref), no_eq)]
pub fn items(db: &dyn salsa::Database, file: File) -> Items {
    let parse = parse(db, file);
    let tree = parse.tree();
    let (mut names, diagnostics) = ItemIndex::build(&tree);
    for (_, r) in names.graphs.iter_mut().chain(names.weights.iter_mut()) {
        *r = TextRange::default();
    }
    let mut out = Items {
        diagnostics,
        names,
        ..Items::default()
    };
    for item in tree.items() {
        let Some(name) = item.name() else { continue };
        let text = name.text();
        if text.is_empty() {
            continue;
        }
        let kind = match item {
            ast::Item::Graph(_) => ItemKind::Graph,
            ast::Item::Weight(_) => ItemKind::Weight,
        };
        let first = !out.by_name.contains_key(&text);
        if first {
            out.by_name.insert(text.clone(), out.items.len());
        }
        out.items.push(ItemInfo {
            kind,
            name: text,
            range: item.range(),
            name_range: name.range(),
            green: Green(item.syntax().green().to_owned()),
            first,
        });
    }
    out
}

/// The names of the top-level graphs and weights (what lowering needs of the
/// rest of the file), without positions: unchanged by edits inside bodies.
#[salsa::tracked(returns(ref))]
pub fn item_names(db: &dyn salsa::Database, file: File) -> ItemIndex {
    items(db, file).names.clone()
}

/// The syntax of the first item named `key`.
#[salsa::tracked(returns(ref))]
pub fn item_syntax(db: &dyn salsa::Database, key: ItemKey) -> Option<(ItemKind, Green)> {
    let items = items(db, key.file(db));
    items
        .get(key.name(db))
        .map(|it| (it.kind, it.green.clone()))
}

/// The item's tree with trivia normalised (see the crate docs).
#[salsa::tracked(returns(ref))]
pub fn norm(db: &dyn salsa::Database, key: ItemKey) -> Option<(ItemKind, Green)> {
    let (kind, green) = item_syntax(db, key).as_ref()?;
    Some((*kind, Green(normalise(&green.0))))
}

/// Normalised → real offsets of the item's tokens.
#[salsa::tracked(returns(ref))]
pub fn positions(db: &dyn salsa::Database, key: ItemKey) -> PositionMap {
    let Some((_, green)) = item_syntax(db, key).as_ref() else {
        return PositionMap::default();
    };
    let root = SyntaxNode::new_root(green.0.clone());
    let mut map = PositionMap::default();
    let mut norm = 0u32;
    for token in root
        .descendants_with_tokens()
        .filter_map(NodeOrToken::into_token)
    {
        let r = token.text_range();
        map.tokens
            .push((norm, u32::from(r.start()), u32::from(r.len())));
        norm += match trivia_text(token.kind()) {
            Some(t) => t.len() as u32,
            None => u32::from(r.len()),
        };
    }
    map.norm_len = norm;
    map.real_len = u32::from(root.text_range().len());
    map
}

fn trivia_text(kind: SyntaxKind) -> Option<&'static str> {
    match kind {
        SyntaxKind::WHITESPACE => Some(" "),
        SyntaxKind::NEWLINE => Some("\n"),
        SyntaxKind::COMMENT => Some("#"),
        _ => None,
    }
}

fn normalise(green: &GreenNode) -> GreenNode {
    let children = green.children().map(|child| match child {
        NodeOrToken::Node(n) => NodeOrToken::Node(normalise(&n.to_owned())),
        NodeOrToken::Token(t) => {
            let kind = syntax_kind(t.kind());
            match trivia_text(kind) {
                Some(text) => NodeOrToken::Token(rowan::GreenToken::new(t.kind(), text)),
                None => NodeOrToken::Token(t.to_owned()),
            }
        }
    });
    GreenNode::new(green.kind(), children)
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
    let names = item_names(db, key.file(db));
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
    let source = DbSource {
        db,
        file,
        entry: entry.clone(),
        moved: RefCell::new(HashMap::new()),
        segments: RefCell::new(Vec::new()),
    };
    // Every query this reads returns normally (failures are values), so a
    // panic here is inference's own and the reads before it are recorded.
    let result = catch_panic(|| infer_entry(&source, &entry))?;
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

impl ProgramSource for DbSource<'_> {
    fn graph(&self, name: &str) -> Option<Arc<LoweredGraph>> {
        let key = ItemKey::new(self.db, self.file, name);
        if name == self.entry {
            return lowered(self.db, key);
        }
        if let Some(g) = self.moved.borrow().get(name) {
            return g.clone();
        }
        let moved = lowered(self.db, key).map(|g| {
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
        weight_ty(self.db, ItemKey::new(self.db, self.file, name)).clone()
    }
}

/// A copy of a lowered graph with every range moved by `delta`.
pub fn shift_lowered(g: &LoweredGraph, delta: TextSize) -> LoweredGraph {
    let s = |r: &mut TextRange| *r += delta;
    let mut body = (*g.body).clone();
    for graph in &mut body.graphs {
        graph.span.iter_mut().for_each(s);
        graph.name_span.iter_mut().for_each(s);
        if let Some((_, r)) = &mut graph.ret_annotation {
            s(r);
        }
    }
    for node in &mut body.nodes {
        node.span.iter_mut().for_each(s);
        if let Some((_, r)) = &mut node.annotation {
            s(r);
        }
    }
    let mut map = g.source_map.clone();
    map.input_spans.values_mut().flatten().for_each(s);
    map.attr_spans
        .values_mut()
        .flatten()
        .for_each(|(_, r)| s(r));
    map.defs.iter_mut().for_each(|(r, _)| s(r));
    map.refs.iter_mut().for_each(|(r, _)| s(r));
    for IfInfo {
        cond,
        then_value,
        else_value,
        ..
    } in &mut map.ifs
    {
        s(cond);
        s(then_value);
        s(else_value);
    }
    map.annotations.iter_mut().for_each(|(_, _, r)| s(r));
    let diagnostics = g
        .diagnostics
        .iter()
        .map(|d| map_diagnostic(d, &|r| r + delta))
        .collect();
    LoweredGraph {
        name: g.name.clone(),
        body: Arc::new(body),
        source_map: map,
        diagnostics,
    }
}

/// A diagnostic with every range mapped.
pub fn map_diagnostic(d: &Diagnostic, f: &dyn Fn(TextRange) -> TextRange) -> Diagnostic {
    let mut d = d.clone();
    d.range = f(d.range);
    for (r, _) in &mut d.related {
        *r = f(*r);
    }
    for fix in &mut d.fixes {
        fix.range = f(fix.range);
    }
    d
}

/// Maps the ranges of one item's lowering or inference to the file.
pub struct FileMapper<'a> {
    db: &'a dyn salsa::Database,
    file: File,
    items: &'a Items,
    /// The item whose own ranges are below [`VIRTUAL_BASE`].
    item: String,
    own: std::cell::OnceCell<Option<(&'a PositionMap, TextSize)>>,
    /// Callee segments: name, base, length, and (once needed) where they are.
    segments: Vec<(String, u32, u32)>,
    segment_maps: Vec<std::cell::OnceCell<Option<(&'a PositionMap, TextSize)>>>,
}

impl<'a> FileMapper<'a> {
    pub fn new(db: &'a dyn salsa::Database, file: File, item: &str) -> FileMapper<'a> {
        FileMapper {
            db,
            file,
            items: items(db, file),
            item: item.to_string(),
            own: std::cell::OnceCell::new(),
            segments: Vec::new(),
            segment_maps: Vec::new(),
        }
    }

    pub fn with_segments(mut self, segments: &[(String, u32, u32)]) -> FileMapper<'a> {
        self.segments = segments.to_vec();
        self.segment_maps = segments
            .iter()
            .map(|_| std::cell::OnceCell::new())
            .collect();
        self
    }

    fn locate(&self, name: &str) -> Option<(&'a PositionMap, TextSize)> {
        let info = self.items.get(name)?;
        let key = ItemKey::new(self.db, self.file, name);
        Some((positions(self.db, key), info.range.start()))
    }

    /// A range of the item (normalised, relative) or of a callee segment, in the file.
    pub fn range(&self, r: TextRange) -> TextRange {
        let start = u32::from(r.start());
        let (located, base) = if start >= VIRTUAL_BASE {
            match self.segments.iter().rposition(|(_, b, _)| *b <= start) {
                Some(i) => (
                    *self.segment_maps[i].get_or_init(|| self.locate(&self.segments[i].0)),
                    self.segments[i].1,
                ),
                None => return TextRange::default(),
            }
        } else {
            (*self.own.get_or_init(|| self.locate(&self.item)), 0)
        };
        let Some((map, item_start)) = located else {
            return TextRange::default();
        };
        let rel = TextRange::new(
            r.start() - TextSize::from(base),
            r.end().max(r.start()) - TextSize::from(base),
        );
        map.range_to_real(rel) + item_start
    }

    /// A file offset as a normalised offset relative to the item.
    pub fn offset_to_item(&self, offset: TextSize) -> Option<TextSize> {
        let (map, item_start) = (*self.own.get_or_init(|| self.locate(&self.item)))?;
        let rel = offset.checked_sub(item_start)?;
        Some(map.to_norm(rel))
    }

    pub fn diagnostic(&self, d: &Diagnostic) -> Diagnostic {
        map_diagnostic(d, &|r| self.range(r))
    }
}

/// A graph whose analysis panicked (a bug in the checker or a primitive's
/// rules): the rest of the file is still checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub item: String,
    /// The item's name in the file.
    pub range: TextRange,
    pub message: String,
}

/// Runs `f`; a panic other than salsa's cancellation becomes `Err(message)`
/// (cancellation keeps unwinding, to the request that started it).
pub fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(v) => Ok(v),
        Err(payload) if payload.is::<salsa::Cancelled>() => std::panic::resume_unwind(payload),
        Err(payload) => Err(if let Some(s) = payload.downcast_ref::<&str>() {
            s.to_string()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "unknown panic".into()
        }),
    }
}

/// One item's diagnostics, with ranges relative to the item's start (in the
/// real text), sorted; so they survive edits elsewhere in the file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ItemDiagnostics {
    pub diagnostics: Vec<Diagnostic>,
    /// Related ranges that lie in other items (callees): diagnostic index,
    /// related index, the item, the range relative to that item.
    pub foreign: Vec<(u32, u32, String, TextRange)>,
    /// Why analysing the item failed (a panic), if it did.
    pub failure: Option<String>,
}

/// The diagnostics of the item `key` (lowering, inference, or the weight's).
#[salsa::tracked(returns(ref))]
pub fn item_diagnostics(db: &dyn salsa::Database, key: ItemKey) -> Arc<ItemDiagnostics> {
    let mut out = ItemDiagnostics::default();
    let own = positions(db, key);
    let file = key.file(db);
    // A range of the item (normalised) or of a callee segment → (callee, real relative range).
    let map = |segments: &[(String, u32, u32)], r: TextRange| -> (Option<String>, TextRange) {
        let start = u32::from(r.start());
        let r = TextRange::new(r.start(), r.end().max(r.start()));
        if start < VIRTUAL_BASE {
            return (None, own.range_to_real(r));
        }
        match segments.iter().rev().find(|(_, b, _)| *b <= start) {
            Some((name, base, _)) => {
                let rel = r - TextSize::from(*base);
                let callee = positions(db, ItemKey::new(db, file, name.as_str()));
                (Some(name.clone()), callee.range_to_real(rel))
            }
            None => (None, TextRange::default()),
        }
    };
    let add = |d: &Diagnostic, segments: &[(String, u32, u32)], out: &mut ItemDiagnostics| {
        let index = out.diagnostics.len() as u32;
        let mut d = d.clone();
        d.range = map(segments, d.range).1;
        for fix in &mut d.fixes {
            fix.range = map(segments, fix.range).1;
        }
        for (i, (r, _)) in d.related.iter_mut().enumerate() {
            match map(segments, *r) {
                (None, rel) => *r = rel,
                (Some(item), rel) => {
                    out.foreign.push((index, i as u32, item, rel));
                    *r = TextRange::default();
                }
            }
        }
        out.diagnostics.push(d);
    };
    match norm(db, key).as_ref().map(|(kind, _)| *kind) {
        Some(ItemKind::Graph) => {
            let graph = lower(db, key)
                .clone()
                .and_then(|l| Ok((l, infer(db, key).clone()?)));
            match graph {
                Err(message) => out.failure = Some(message),
                Ok((lowered, inferred)) => {
                    if let Some(lowered) = lowered {
                        for d in &lowered.diagnostics {
                            add(d, &[], &mut out);
                        }
                    }
                    if let Some(inferred) = inferred {
                        for d in &inferred.result.diagnostics {
                            add(d, &inferred.segments, &mut out);
                        }
                    }
                }
            }
        }
        Some(ItemKind::Weight) => {
            if let Some(w) = weight(db, key) {
                for d in &w.1 {
                    add(d, &[], &mut out);
                }
            }
        }
        None => {}
    }
    // Sort (keeping the foreign fix-ups with their diagnostics), then drop duplicates.
    let mut order: Vec<usize> = (0..out.diagnostics.len()).collect();
    order.sort_by_key(|&i| {
        let d = &out.diagnostics[i];
        (d.range.start(), d.range.end(), d.code)
    });
    let mut diagnostics = Vec::with_capacity(order.len());
    let mut foreign = Vec::new();
    type Foreign = Vec<(u32, String, TextRange)>;
    let mut last: Option<(usize, Foreign)> = None;
    for i in order {
        let mine: Foreign = out
            .foreign
            .iter()
            .filter(|f| f.0 as usize == i)
            .map(|f| (f.1, f.2.clone(), f.3))
            .collect();
        if let Some((j, prev)) = &last {
            if out.diagnostics[*j] == out.diagnostics[i] && *prev == mine {
                continue;
            }
        }
        let index = diagnostics.len() as u32;
        foreign.extend(mine.iter().map(|(r, n, t)| (index, *r, n.clone(), *t)));
        diagnostics.push(out.diagnostics[i].clone());
        last = Some((i, mine));
    }
    out.diagnostics = diagnostics;
    out.foreign = foreign;
    Arc::new(out)
}

/// A file's diagnostics: file-level ones with absolute ranges, and each
/// item's (relative to the item). [`FileDiagnostics::to_vec`] flattens them
/// into what `analysis::analyze` gives; [`FileDiagnostics::visit`] walks them
/// in that order without copying.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileDiagnostics {
    /// Syntax errors, duplicate items, duplicate weights: absolute and sorted.
    pub file_level: Vec<Diagnostic>,
    /// Each first item's name, start, name range, and diagnostics.
    pub items: Vec<(String, TextSize, TextRange, Arc<ItemDiagnostics>)>,
}

/// Maps the ranges of one diagnostic of a [`FileDiagnostics`] to the file.
pub struct Placed<'a> {
    shift: TextSize,
    foreign: &'a [(u32, u32, String, TextRange)],
    starts: &'a HashMap<&'a str, TextSize>,
}

impl Placed<'_> {
    pub fn range(&self, r: TextRange) -> TextRange {
        r + self.shift
    }

    /// The `i`-th related range of the diagnostic.
    pub fn related(&self, i: usize, r: TextRange) -> TextRange {
        match self.foreign.iter().find(|f| f.1 as usize == i) {
            Some((_, _, item, rel)) => self.starts.get(item.as_str()).map_or(*rel, |s| *rel + *s),
            None => r + self.shift,
        }
    }
}

impl FileDiagnostics {
    pub fn len(&self) -> usize {
        self.file_level.len()
            + self
                .items
                .iter()
                .map(|i| i.3.diagnostics.len())
                .sum::<usize>()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The items whose analysis panicked.
    pub fn failures(&self) -> Vec<Failure> {
        self.items
            .iter()
            .filter_map(|(name, _, range, d)| {
                Some(Failure {
                    item: name.clone(),
                    range: *range,
                    message: d.failure.clone()?,
                })
            })
            .collect()
    }

    /// Where each item starts (for [`FileDiagnostics::place`]).
    pub fn starts(&self) -> HashMap<&str, TextSize> {
        self.items
            .iter()
            .map(|(n, s, _, _)| (n.as_str(), *s))
            .collect()
    }

    /// The map to the file of diagnostic `diag` of item `item`.
    pub fn place<'a>(
        &'a self,
        starts: &'a HashMap<&'a str, TextSize>,
        item: usize,
        diag: usize,
    ) -> Placed<'a> {
        let (_, start, _, d) = &self.items[item];
        let lo = d.foreign.partition_point(|x| (x.0 as usize) < diag);
        let hi = d.foreign.partition_point(|x| (x.0 as usize) <= diag);
        Placed {
            shift: *start,
            foreign: &d.foreign[lo..hi],
            starts,
        }
    }

    /// The map of file-level diagnostics (already in the file).
    pub fn place_file_level<'a>(&'a self, starts: &'a HashMap<&'a str, TextSize>) -> Placed<'a> {
        Placed {
            shift: TextSize::from(0),
            foreign: &[],
            starts,
        }
    }

    /// Every diagnostic in position order, with a map of its ranges to the file.
    pub fn visit(&self, mut f: impl FnMut(&Diagnostic, &Placed)) {
        let starts = self.starts();
        let absolute = Placed {
            shift: TextSize::from(0),
            foreign: &[],
            starts: &starts,
        };
        let mut file_level = self.file_level.iter().peekable();
        for (_, start, _, item) in &self.items {
            for (i, d) in item.diagnostics.iter().enumerate() {
                let key = (d.range.start() + *start, d.range.end() + *start, d.code);
                while let Some(fd) =
                    file_level.next_if(|fd| (fd.range.start(), fd.range.end(), fd.code) <= key)
                {
                    f(fd, &absolute);
                }
                let lo = item.foreign.partition_point(|x| (x.0 as usize) < i);
                let hi = item.foreign.partition_point(|x| (x.0 as usize) <= i);
                f(
                    d,
                    &Placed {
                        shift: *start,
                        foreign: &item.foreign[lo..hi],
                        starts: &starts,
                    },
                );
            }
        }
        for fd in file_level {
            f(fd, &absolute);
        }
    }

    /// Every diagnostic with ranges in the file, in position order.
    pub fn to_vec(&self) -> Vec<Diagnostic> {
        let mut out = Vec::with_capacity(self.len());
        self.visit(|d, p| {
            let mut d = d.clone();
            d.range = p.range(d.range);
            for fix in &mut d.fixes {
                fix.range = p.range(fix.range);
            }
            for (i, (r, _)) in d.related.iter_mut().enumerate() {
                *r = p.related(i, *r);
            }
            out.push(d);
        });
        out
    }
}

/// Every diagnostic of a file.
#[salsa::tracked(returns(ref))]
pub fn file_diagnostics(db: &dyn salsa::Database, file: File) -> Arc<FileDiagnostics> {
    let parse = parse(db, file);
    let mut file_level: Vec<Diagnostic> = parse
        .errors()
        .iter()
        .map(|e| Diagnostic::error(Code::Syntax, e.range, e.message.clone()))
        .collect();
    let items = items(db, file);
    file_level.extend(items.diagnostics.iter().cloned());
    let mut per_item = Vec::new();
    for info in &items.items {
        match (info.first, info.kind) {
            (true, _) => {
                let key = ItemKey::new(db, file, info.name.as_str());
                per_item.push((
                    info.name.clone(),
                    info.range.start(),
                    info.name_range,
                    item_diagnostics(db, key).clone(),
                ));
            }
            (false, ItemKind::Graph) => {}
            (false, ItemKind::Weight) => {
                // A duplicate weight: checked on its own, not incrementally.
                let node = SyntaxNode::new_root(info.green.0.clone());
                if let Some(w) = ast::Weight::cast(node) {
                    let start = info.range.start();
                    let (_, ds) = lower_weight(&w, None);
                    file_level.extend(ds.iter().map(|d| map_diagnostic(d, &|r| r + start)));
                }
            }
        }
    }
    file_level.sort_by_key(|d| (d.range.start(), d.range.end(), d.code));
    file_level.dedup();
    Arc::new(FileDiagnostics {
        file_level,
        items: per_item,
    })
}

/// The line index of a file's text.
#[salsa::tracked(returns(ref), no_eq)]
pub fn line_index(db: &dyn salsa::Database, file: File) -> syntax::LineIndex {
    syntax::LineIndex::new(file.text(db))
}
