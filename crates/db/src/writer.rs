//! The database's writer: files set and edited, each edit reparsed
//! incrementally and turned into the few item inputs it changes (see the
//! crate docs).

use super::*;

/// One top-level item node of a file, named or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Node {
    pub(crate) green: Green,
    /// Where it starts in the file.
    pub(crate) start: TextSize,
    /// Its index in [`Items::items`], if it has a name.
    pub(crate) info: Option<usize>,
    pub(crate) calls: Arc<ItemCalls>,
    /// The names its text refers to (what its analysis may read of other
    /// items; local names too, which does no harm).
    pub(crate) refs: Arc<Vec<String>>,
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
        let mut refs: Vec<String> = Vec::new();
        // Through the green tree: a cursor per token cost more than the rest.
        syntax::green::walk(node.green(), |visit| {
            if let syntax::green::Visit::Token {
                kind: SyntaxKind::IDENT,
                text,
                parent: SyntaxKind::NAME_REF,
                ..
            } = visit
            {
                refs.push(text.to_string());
            }
            true
        });
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
pub(crate) type Referrers = HashMap<Arc<str>, Arc<[Arc<str>]>>;

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
