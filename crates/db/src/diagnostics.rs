//! Diagnostics: each item's ([`item_diagnostics`]), mapped from its
//! lowering and inference to the file ([`FileMapper`]), and a file's
//! ([`file_diagnostics`], or [`file_diagnostics_memo`] for the language
//! server, which asks salsa only about the items whose stamps moved).

use super::*;

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
    // The item a callee segment belongs to: of this file, or of an
    // imported one (its global name resolved through the namespace).
    let has_imports = !file.imports(db).is_empty();
    let callee_key = |name: &str| -> ItemKey {
        if has_imports {
            if let Some(k) = namespace(db, file).resolve.get(name) {
                return *k;
            }
        }
        ItemKey::new(db, file, name)
    };
    // A range of the item (normalised) or of a callee segment → (callee, real relative range).
    let map = |segments: &[(String, u32, u32)], r: TextRange| -> (Option<ItemKey>, TextRange) {
        let start = u32::from(r.start());
        let r = TextRange::new(r.start(), r.end().max(r.start()));
        if start < VIRTUAL_BASE {
            return (None, own.range_to_real(r));
        }
        match segments.iter().rev().find(|(_, b, _)| *b <= start) {
            Some((name, base, _)) => {
                let rel = r - TextSize::from(*base);
                let callee = callee_key(name);
                (Some(callee), positions(db, callee).range_to_real(rel))
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
        let related = std::mem::take(&mut d.related);
        for mut r in related {
            match map(segments, r.range) {
                (None, rel) => r.range = rel,
                // In an imported file: placed in that file now (its path
                // says where), so the diagnostic follows that file's edits.
                (Some(callee), rel) if callee.file(db) != file => {
                    let other = callee.file(db);
                    let Some(info) = items(db, other).get(callee.name(db)) else {
                        continue;
                    };
                    let Some(path) = other.path(db).clone() else {
                        continue;
                    };
                    r.range = rel + info.range.start();
                    r.file = Some(path);
                }
                (Some(callee), rel) => {
                    let item = callee.name(db).clone();
                    out.foreign.push((index, d.related.len() as u32, item, rel));
                    r.range = TextRange::default();
                }
            }
            d.related.push(r);
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

/// A file's diagnostics: file-level ones with absolute ranges, and the
/// diagnostics of each item that has some (relative to the item).
/// [`FileDiagnostics::to_vec`] flattens them, in position order, into what
/// `mirdsl check` prints and the language server publishes;
/// [`FileDiagnostics::visit`] walks them in that order without copying.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileDiagnostics {
    /// Syntax errors, duplicate items, duplicate weights: absolute and sorted.
    pub file_level: Vec<Diagnostic>,
    /// Each first item with diagnostics (or a failure): its name, start, name
    /// range, and diagnostics; in source order.
    pub items: Vec<(String, TextSize, TextRange, Arc<ItemDiagnostics>)>,
    /// The items (where the callees that related ranges point into start).
    index: Arc<Items>,
}

/// Where each top-level item starts.
pub struct Starts<'a>(&'a Items);

impl Starts<'_> {
    pub fn get(&self, name: &str) -> Option<TextSize> {
        self.0.get(name).map(|i| i.range.start())
    }
}

/// Maps the ranges of one diagnostic of a [`FileDiagnostics`] to the file.
pub struct Placed<'a> {
    shift: TextSize,
    foreign: &'a [(u32, u32, String, TextRange)],
    starts: &'a Starts<'a>,
}

impl Placed<'_> {
    pub fn range(&self, r: TextRange) -> TextRange {
        r + self.shift
    }

    /// The `i`-th related range of the diagnostic.
    pub fn related(&self, i: usize, r: TextRange) -> TextRange {
        match self.foreign.iter().find(|f| f.1 as usize == i) {
            Some((_, _, item, rel)) => self.starts.get(item.as_str()).map_or(*rel, |s| *rel + s),
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
    pub fn starts(&self) -> Starts<'_> {
        Starts(&self.index)
    }

    /// The map to the file of diagnostic `diag` of item `item`.
    pub fn place<'a>(&'a self, starts: &'a Starts<'a>, item: usize, diag: usize) -> Placed<'a> {
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
    pub fn place_file_level<'a>(&'a self, starts: &'a Starts<'a>) -> Placed<'a> {
        Placed {
            shift: TextSize::from(0),
            foreign: &[],
            starts,
        }
    }

    /// Every diagnostic in position order, with a map of its ranges to the
    /// file: file-level ones merged with the items' (which are in source
    /// order, each sorted), by (start, end, code).
    pub fn visit(&self, mut f: impl FnMut(&Diagnostic, &Placed)) {
        let starts = self.starts();
        let absolute = self.place_file_level(&starts);
        let mut file_level = self.file_level.iter().peekable();
        for (index, (_, start, _, item)) in self.items.iter().enumerate() {
            for (i, d) in item.diagnostics.iter().enumerate() {
                let key = (d.range.start() + *start, d.range.end() + *start, d.code);
                while let Some(fd) =
                    file_level.next_if(|fd| (fd.range.start(), fd.range.end(), fd.code) <= key)
                {
                    f(fd, &absolute);
                }
                f(d, &self.place(&starts, index, i));
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
            for (i, r) in d.related.iter_mut().enumerate() {
                if r.file.is_none() {
                    r.range = p.related(i, r.range);
                }
            }
            out.push(d);
        });
        out
    }
}

/// Every diagnostic of a file (the database's own memo: re-executes after
/// every edit and validates every item's; the server uses
/// [`file_diagnostics_memo`], which fetches only the items that may have
/// changed).
#[salsa::tracked(returns(ref), no_eq)]
pub fn file_diagnostics(db: &dyn salsa::Database, file: File) -> Arc<FileDiagnostics> {
    Arc::new(build_file_diagnostics(db, file, &mut |_, info| {
        item_diagnostics(db, info.key).clone()
    }))
}

/// Computes the diagnostics of the first items of a file on up to `threads`
/// threads, each with its own handle (salsa shares what they compute), so
/// that a whole-file pass after it finds them memoised: opening a big file,
/// `mirdsl check`. A write cancels them as it cancels any query.
pub fn prefetch_item_diagnostics(db: &RootDb, file: File, threads: usize) {
    let keys: Vec<ItemKey> = file
        .items(db)
        .items
        .iter()
        .filter(|i| i.first)
        .map(|i| i.key)
        .collect();
    if keys.len() < 32 {
        return;
    }
    prefetch_keys(db, &keys, threads, false);
}

/// As [`prefetch_item_diagnostics`], for the items whose stamps changed
/// since `memo` saw them (what [`file_diagnostics_memo`] will ask salsa
/// about): an edit inside a graph re-infers it and every graph that calls
/// it, each on its own, so they share the threads.
pub fn prefetch_changed_item_diagnostics(
    db: &RootDb,
    file: File,
    memo: &Mutex<DiagnosticsMemo>,
    threads: usize,
) {
    let keys: Vec<ItemKey> = {
        let memo = memo
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if workspace::imports_generation(db, file) != memo.deps {
            return;
        }
        file.items(db)
            .items
            .iter()
            .enumerate()
            .filter(|(index, info)| info.first && memo.current(*index, info).is_none())
            .map(|(_, info)| info.key)
            .collect()
    };
    if keys.len() >= 2 {
        // The calling thread, a language server worker, takes a share.
        prefetch_keys(db, &keys, threads, true);
    }
}

/// Computes `keys`' item diagnostics on `threads` threads, each taking the
/// next item not yet taken (their costs differ). With `caller_helps` the
/// calling thread is one of them; else (a caller with a small stack, such
/// as `mirdsl check`'s main thread) it only waits. A panic (a cancellation,
/// a checker bug) is met again, and handled, by the caller's own pass.
fn prefetch_keys(db: &RootDb, keys: &[ItemKey], threads: usize, caller_helps: bool) {
    if threads < 2 {
        return;
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = |handle: &RootDb| {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(key) = keys.get(i) else { break };
            item_diagnostics(handle, *key);
        }));
    };
    let spawned = threads.min(keys.len()) - usize::from(caller_helps);
    std::thread::scope(|scope| {
        for _ in 0..spawned {
            let handle = db.clone();
            let work = &work;
            let _ = std::thread::Builder::new()
                // Inference follows call chains recursively.
                .stack_size(64 << 20)
                .spawn_scoped(scope, move || work(&handle));
        }
        if caller_helps {
            work(db);
        }
    });
}

/// Items' diagnostics kept by stamp ([`ItemInfo::stamp`]) across edits,
/// aligned with the items: a document's memo in the language server.
#[derive(Default)]
pub struct DiagnosticsMemo {
    items: Vec<Option<(String, u64, Arc<ItemDiagnostics>)>>,
    /// The generations of the files this one imports, summed, when the
    /// items were computed: an edit in an imported file may change them.
    deps: u64,
}

impl DiagnosticsMemo {
    /// Item `index`'s diagnostics when they were computed for its present
    /// name and stamp.
    fn current(&self, index: usize, info: &ItemInfo) -> Option<&Arc<ItemDiagnostics>> {
        match self.items.get(index) {
            Some(Some((name, stamp, d))) if *name == info.name && *stamp == info.stamp => Some(d),
            _ => None,
        }
    }

    /// Whether nothing was computed through it yet.
    pub fn is_new(&self) -> bool {
        self.items.is_empty()
    }
}

/// What [`file_diagnostics`] gives, fetching from the database only the
/// items whose stamps changed since `memo` saw them: an edit inside one graph
/// asks salsa about that graph and those that refer to it, not about every
/// item of the file.
pub fn file_diagnostics_memo(
    db: &dyn salsa::Database,
    file: File,
    memo: &Mutex<DiagnosticsMemo>,
) -> FileDiagnostics {
    // A query cancelled while the memo was held leaves it poisoned, but
    // consistent (each entry is replaced whole).
    let mut memo = memo
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let deps = workspace::imports_generation(db, file);
    if deps != memo.deps {
        memo.items.clear();
        memo.deps = deps;
    }
    memo.items.resize(file.items(db).items.len(), None);
    build_file_diagnostics(db, file, &mut |index, info| {
        if let Some(d) = memo.current(index, info) {
            return d.clone();
        }
        let d = item_diagnostics(db, info.key).clone();
        memo.items[index] = Some((info.name.clone(), info.stamp, d.clone()));
        d
    })
}

fn build_file_diagnostics(
    db: &dyn salsa::Database,
    file: File,
    fetch: &mut dyn FnMut(usize, &ItemInfo) -> Arc<ItemDiagnostics>,
) -> FileDiagnostics {
    let parse = file.parse(db);
    let mut file_level: Vec<Diagnostic> = parse.errors().iter().map(Diagnostic::syntax).collect();
    let items = file.items(db);
    file_level.extend(items.diagnostics.iter().cloned());
    if !file.imports(db).is_empty() {
        file_level.extend(scope(db, file).scope.diagnostics.iter().cloned());
    }
    let mut per_item = Vec::new();
    for (index, info) in items.items.iter().enumerate() {
        match (info.first, info.kind) {
            (true, _) => {
                let d = fetch(index, info);
                if !d.diagnostics.is_empty() || d.failure.is_some() {
                    per_item.push((info.name.clone(), info.range.start(), info.name_range, d));
                }
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
    FileDiagnostics {
        file_level,
        items: per_item,
        index: items.clone(),
    }
}
