//! Programs across files (spec §10): loading a file with everything it
//! imports, the names each file sees, and one linked program for the
//! commands that run, differentiate and export (`mirdsl run`, `grad`, `ir`,
//! `dot`, `export`, `check`).
//!
//! Each file lowers on its own, seeing its imports through its
//! [`ItemIndex`] by the names it writes (`dense`, or `nn.dense` after
//! `import "..." as nn`). Linking gives every item of the program one global
//! name: the root file's items keep theirs; a module's items take the prefix
//! of the first import path that reaches them from the root (an alias adds
//! `ALIAS.`, a plain import nothing), so the root's own view of a name is its
//! global name (`nn.fc1.weight`). Each lowered graph is renamed into these
//! global names and its ranges moved into a virtual concatenation of the
//! files (module `m` from [`Linked::bases`]`[m]` on), so that inference can
//! run over one program and its diagnostics be taken back to their files.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ir::{Body, MetaFn, NodeKind, TextRange, TextSize, Value, WeightDef, WeightInit, WrtItem};
use syntax::ast::{self, AstNode};
use syntax::Parse;

use crate::diagnostic::{Code, Diagnostic};
use crate::file::{FileAnalysis, FileSource};
use crate::lower::{lower_graph, lower_weight, Def, IfInfo, ItemIndex, LoweredGraph};
use crate::modules::{resolve, Loader};

/// One `import` item of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportDecl {
    /// The whole item.
    pub range: TextRange,
    /// The path as written (unquoted).
    pub spec: String,
    pub alias: Option<String>,
}

/// A file's imports, in source order.
pub fn import_decls(file: &ast::SourceFile) -> Vec<ImportDecl> {
    file.imports()
        .filter_map(|i| {
            Some(ImportDecl {
                range: i.range(),
                spec: i.path()?,
                alias: i.alias().map(|a| a.text()).filter(|a| !a.is_empty()),
            })
        })
        .collect()
}

/// One file of a program.
#[derive(Debug, Clone)]
pub struct Module {
    pub path: PathBuf,
    pub text: Arc<str>,
    pub parse: Parse,
    pub imports: Vec<ImportDecl>,
    /// For each import, the module it names (`None`: missing, unreadable, or
    /// closing a cycle; an error says which).
    pub targets: Vec<Option<usize>>,
    /// Why each unresolved import is (the message of its error).
    pub errors: Vec<Option<String>>,
}

/// A file with every file it imports, transitively; the root is module 0.
#[derive(Debug, Clone, Default)]
pub struct ModuleGraph {
    pub modules: Vec<Module>,
}

impl ModuleGraph {
    /// Loads `root` (with `text`, if given, instead of reading it) and every
    /// file it imports.
    pub fn load(root: &Path, text: Option<Arc<str>>, loader: &dyn Loader) -> ModuleGraph {
        let root = crate::modules::normalize(root);
        let mut g = ModuleGraph::default();
        let text = text.unwrap_or_else(|| loader.read(&root).unwrap_or_else(|_| Arc::from("")));
        g.push(root, text);
        let mut by_path: HashMap<PathBuf, usize> = HashMap::new();
        by_path.insert(g.modules[0].path.clone(), 0);
        let mut i = 0;
        while i < g.modules.len() {
            let decls = g.modules[i].imports.clone();
            for (k, decl) in decls.iter().enumerate() {
                let target = resolve(&g.modules[i].path, &decl.spec).and_then(|path| {
                    if let Some(&t) = by_path.get(&path) {
                        return Ok(t);
                    }
                    let text = loader.read(&path)?;
                    let t = g.modules.len();
                    by_path.insert(path.clone(), t);
                    g.push(path, text);
                    Ok(t)
                });
                match target {
                    Ok(t) => g.modules[i].targets[k] = Some(t),
                    Err(e) => g.modules[i].errors[k] = Some(e),
                }
            }
            i += 1;
        }
        // An import whose file imports this one back (transitively) closes
        // a cycle: an error, and left out.
        for m in 0..g.modules.len() {
            for k in 0..g.modules[m].imports.len() {
                let Some(t) = g.modules[m].targets[k] else {
                    continue;
                };
                if let Some(path) = g.path_between(t, m) {
                    let names: Vec<String> = std::iter::once(m)
                        .chain(path)
                        .map(|x| g.display_name(x))
                        .collect();
                    g.modules[m].errors[k] = Some(format!(
                        "this import makes a cycle: {} (files may not import each other)",
                        names.join(" → ")
                    ));
                }
            }
        }
        for m in &mut g.modules {
            for k in 0..m.imports.len() {
                if m.errors[k].is_some() {
                    m.targets[k] = None;
                }
            }
        }
        g
    }

    fn push(&mut self, path: PathBuf, text: Arc<str>) {
        let parse = syntax::parse(&text);
        let imports = import_decls(&parse.tree());
        let n = imports.len();
        self.modules.push(Module {
            path,
            text,
            parse,
            imports,
            targets: vec![None; n],
            errors: vec![None; n],
        });
    }

    /// The modules from `from` to `to` along imports (both included), if `to`
    /// can be reached.
    fn path_between(&self, from: usize, to: usize) -> Option<Vec<usize>> {
        let mut prev: HashMap<usize, usize> = HashMap::new();
        let mut work = vec![from];
        let mut seen = HashSet::from([from]);
        while let Some(m) = work.pop() {
            if m == to {
                let mut path = vec![to];
                let mut x = to;
                while x != from {
                    x = prev[&x];
                    path.push(x);
                }
                path.reverse();
                return Some(path);
            }
            for t in self.modules[m].targets.iter().flatten() {
                if seen.insert(*t) {
                    prev.insert(*t, m);
                    work.push(*t);
                }
            }
        }
        None
    }

    /// A short name of a module for messages: its file name.
    pub fn display_name(&self, m: usize) -> String {
        let path = &self.modules[m].path;
        path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into(),
        )
    }
}

/// A top-level item seen from a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Visible {
    /// The name the file uses.
    pub name: String,
    pub module: usize,
    /// The item's own name in its module.
    pub item: String,
    pub is_graph: bool,
    /// The import that makes it visible (`None`: the file's own item).
    pub import: Option<usize>,
}

/// The items a module sees, by the names it uses, and the errors of its
/// import lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    pub items: Vec<Visible>,
    pub diagnostics: Vec<Diagnostic>,
}

/// The first item of each name in a file: (name, is_graph, name range).
pub fn own_items(file: &ast::SourceFile) -> Vec<(String, bool, TextRange)> {
    let mut seen = HashSet::new();
    file.items()
        .filter_map(|item| {
            let name = item.name()?;
            let text = name.text();
            if text.is_empty() || !seen.insert(text.clone()) {
                return None;
            }
            Some((text, matches!(item, ast::Item::Graph(_)), name.range()))
        })
        .collect()
}

/// What module `m` sees: its own items, then each import's, with the errors
/// of its import lines (missing files, cycles, clashes). `items_of(t)` gives
/// module `t`'s own items.
pub fn scope(
    me: usize,
    imports: &[ImportDecl],
    targets: &[Option<usize>],
    errors: &[Option<String>],
    own: &[(String, bool, TextRange)],
    items_of: &dyn Fn(usize) -> Vec<(String, bool, TextRange)>,
    display_name: &dyn Fn(usize) -> String,
) -> Scope {
    let mut out = Scope::default();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for (name, is_graph, _) in own {
        by_name.insert(name.clone(), out.items.len());
        out.items.push(Visible {
            name: name.clone(),
            module: me,
            item: name.clone(),
            is_graph: *is_graph,
            import: None,
        });
    }
    for (k, decl) in imports.iter().enumerate() {
        if let Some(message) = &errors[k] {
            let code = if message.contains("cycle") {
                Code::ImportCycle
            } else {
                Code::ImportNotFound
            };
            out.diagnostics
                .push(Diagnostic::error(code, decl.range, message.clone()));
            continue;
        }
        let Some(t) = targets[k] else { continue };
        // Clashes, grouped by where the other item is.
        let mut clashes: Vec<(Option<usize>, Vec<String>)> = Vec::new();
        for (item, is_graph, _) in items_of(t) {
            let name = match &decl.alias {
                Some(a) => format!("{a}.{item}"),
                None => item.clone(),
            };
            if let Some(&i) = by_name.get(&name) {
                let other = &out.items[i];
                if other.module == t && other.item == item {
                    continue; // the same item, imported twice
                }
                match clashes.iter_mut().find(|(w, _)| *w == other.import) {
                    Some((_, names)) => names.push(name),
                    None => clashes.push((other.import, vec![name])),
                }
                continue;
            }
            by_name.insert(name.clone(), out.items.len());
            out.items.push(Visible {
                name,
                module: t,
                item,
                is_graph,
                import: Some(k),
            });
        }
        for (other, names) in clashes {
            let list: Vec<String> = names.iter().take(5).map(|n| format!("`{n}`")).collect();
            let more = if names.len() > 5 {
                format!(" and {} more", names.len() - 5)
            } else {
                String::new()
            };
            let (related, note) = match other {
                None => (
                    own.iter().find(|o| o.0 == names[0]).map(|o| o.2),
                    "defined in this file here".to_string(),
                ),
                Some(j) => (
                    Some(imports[j].range),
                    format!("also made visible by this import ({})", {
                        targets[j].map_or_else(String::new, display_name)
                    }),
                ),
            };
            let mut d = Diagnostic::error(
                Code::ImportClash,
                decl.range,
                format!(
                    "this import of `{}` makes {}{more} visible a second time{}",
                    display_name(t),
                    list.join(", "),
                    if decl.alias.is_none() {
                        "; import it with `as NAME` to keep its names apart"
                    } else {
                        ""
                    }
                ),
            );
            if let Some(r) = related {
                d = d.with_related(r, note);
            }
            out.diagnostics.push(d);
        }
    }
    out
}

/// The [`ItemIndex`] of a file with its scope: every visible name, and the
/// visible graphs with effects (`effectful(module, item)`).
pub fn scoped_index(
    file: &ast::SourceFile,
    scope: &Scope,
    effectful: &dyn Fn(usize, &str) -> bool,
) -> ItemIndex {
    let (mut graphs, mut weights) = (Vec::new(), Vec::new());
    let mut seeds = HashSet::new();
    for v in &scope.items {
        let entry = (v.name.clone(), TextRange::default());
        if v.is_graph {
            graphs.push(entry);
            if v.import.is_some() && effectful(v.module, &v.item) {
                seeds.insert(v.name.clone());
            }
        } else {
            weights.push(entry);
        }
    }
    let mut e: Vec<String> = crate::effects::effectful_graphs_with(file, &seeds)
        .into_iter()
        .chain(seeds)
        .collect();
    e.sort();
    e.dedup();
    ItemIndex::new(graphs, weights, e)
}

/// A copy of a lowered graph with its top-level names changed by `rename`
/// (graphs and weights it refers to, and its own name).
pub fn rename_lowered(g: &LoweredGraph, rename: &dyn Fn(&str) -> Option<String>) -> LoweredGraph {
    let mut body: Body = (*g.body).clone();
    rename_body(&mut body, rename);
    let mut map = g.source_map.clone();
    for (_, def) in map.defs.iter_mut().chain(map.refs.iter_mut()) {
        match def {
            Def::Global(n) | Def::Weight(n) => {
                if let Some(new) = rename(n) {
                    *n = new;
                }
            }
            _ => {}
        }
    }
    LoweredGraph {
        name: rename(&g.name).unwrap_or_else(|| g.name.clone()),
        body: Arc::new(body),
        source_map: map,
        diagnostics: g.diagnostics.clone(),
    }
}

/// Renames the top-level names a body refers to, and its root graph.
pub fn rename_body(body: &mut Body, rename: &dyn Fn(&str) -> Option<String>) {
    fn value(v: &mut Value, rename: &dyn Fn(&str) -> Option<String>) {
        match v {
            Value::Global(n) => {
                if let Some(new) = rename(n) {
                    *n = new;
                }
            }
            Value::Meta(MetaFn::Grad { wrt: Some(items) })
            | Value::Meta(MetaFn::ValueAndGrad { wrt: Some(items) }) => {
                for item in items {
                    if let WrtItem::Weight(n) = item {
                        if let Some(new) = rename(n) {
                            *n = new;
                        }
                    }
                }
            }
            Value::Tuple(vs) => vs.iter_mut().for_each(|v| value(v, rename)),
            _ => {}
        }
    }
    for node in &mut body.nodes {
        match &mut node.kind {
            NodeKind::Weight(n) => {
                if let Some(new) = rename(n) {
                    *n = new;
                }
            }
            NodeKind::Const(v) => value(v, rename),
            _ => {}
        }
    }
    if !body.graphs.is_empty() {
        let root = body.root();
        if let Some(new) = rename(&body.graph(root).name) {
            body.graph_mut(root).name = new;
        }
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
    for r in &mut d.related {
        r.range = f(r.range);
    }
    for fix in &mut d.fixes {
        fix.range = f(fix.range);
    }
    d
}

/// A program linked from its files.
#[derive(Debug, Clone)]
pub struct Linked {
    pub graph: ModuleGraph,
    /// Each module's prefix of global names (`""` for the root).
    pub prefixes: Vec<String>,
    /// Where each module starts in the virtual concatenation of the files.
    pub bases: Vec<u32>,
    /// The linked program (global names, virtual ranges); its `parse` is
    /// the root's and its `diagnostics` every module's, in virtual ranges.
    pub analysis: FileAnalysis,
    /// Each module's diagnostics, in its own ranges.
    pub diagnostics: Vec<Vec<Diagnostic>>,
}

impl Linked {
    /// The module a virtual range lies in, and the range in that file.
    pub fn locate(&self, r: TextRange) -> (usize, TextRange) {
        let m = self
            .bases
            .partition_point(|b| *b <= u32::from(r.start()))
            .saturating_sub(1);
        let base = TextSize::from(self.bases[m]);
        let start = r.start().checked_sub(base).unwrap_or_default();
        let end = r.end().checked_sub(base).unwrap_or(start).max(start);
        (m, TextRange::new(start, end))
    }

    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .flatten()
            .any(|d| d.severity == crate::Severity::Error)
    }
}

/// Gives each module its prefix of global names: the aliases along the first
/// import path from the root (breadth first, in import order); a module
/// whose names would meet another's gets a prefix of its own file name.
fn prefixes(g: &ModuleGraph, own: &[Vec<(String, bool, TextRange)>]) -> Vec<String> {
    let n = g.modules.len();
    let mut prefix: Vec<Option<String>> = vec![None; n];
    prefix[0] = Some(String::new());
    let mut order = vec![0];
    let mut i = 0;
    while i < order.len() {
        let m = order[i];
        for (k, t) in g.modules[m].targets.iter().enumerate() {
            let Some(t) = *t else { continue };
            if prefix[t].is_none() {
                let p = prefix[m].clone().unwrap_or_default();
                prefix[t] = Some(match &g.modules[m].imports[k].alias {
                    Some(a) => format!("{p}{a}."),
                    None => p,
                });
                order.push(t);
            }
        }
        i += 1;
    }
    let mut taken: HashSet<String> = HashSet::new();
    let mut out = vec![String::new(); n];
    for &m in &order {
        let mut p = prefix[m].clone().unwrap_or_default();
        let clashes = |p: &str, taken: &HashSet<String>| {
            own[m]
                .iter()
                .any(|(x, _, _)| taken.contains(&format!("{p}{x}")))
        };
        if clashes(&p, &taken) {
            let stem: String = g.modules[m]
                .path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            let mut k = 1;
            loop {
                p = format!("_{stem}{k}.");
                if !clashes(&p, &taken) {
                    break;
                }
                k += 1;
            }
        }
        for (x, _, _) in &own[m] {
            taken.insert(format!("{p}{x}"));
        }
        out[m] = p;
    }
    out
}

/// Loads, lowers, links and checks the program whose root is `root`.
pub fn link(root: &Path, text: Option<Arc<str>>, loader: &dyn Loader) -> Linked {
    link_graph(ModuleGraph::load(root, text, loader))
}

/// Links a loaded program.
pub fn link_graph(g: ModuleGraph) -> Linked {
    let n = g.modules.len();
    let files: Vec<ast::SourceFile> = g.modules.iter().map(|m| m.parse.tree()).collect();
    let own: Vec<Vec<(String, bool, TextRange)>> = files.iter().map(own_items).collect();
    let scopes: Vec<Scope> = (0..n)
        .map(|m| {
            let module = &g.modules[m];
            scope(
                m,
                &module.imports,
                &module.targets,
                &module.errors,
                &own[m],
                &|t| own[t].clone(),
                &|t| g.display_name(t),
            )
        })
        .collect();
    // Effects, callees first (imports form no cycle once cycles are cut).
    let mut effectful: Vec<Option<HashSet<String>>> = vec![None; n];
    fn solve(
        m: usize,
        g: &ModuleGraph,
        files: &[ast::SourceFile],
        scopes: &[Scope],
        out: &mut Vec<Option<HashSet<String>>>,
        index: &mut Vec<Option<ItemIndex>>,
    ) {
        if out[m].is_some() {
            return;
        }
        out[m] = Some(HashSet::new());
        for t in g.modules[m].targets.iter().flatten() {
            solve(*t, g, files, scopes, out, index);
        }
        let idx = scoped_index(&files[m], &scopes[m], &|t, item| {
            out[t].as_ref().is_some_and(|s| s.contains(item))
        });
        out[m] = Some(idx.effectful.iter().cloned().collect());
        index[m] = Some(idx);
    }
    let mut indexes: Vec<Option<ItemIndex>> = vec![None; n];
    for m in 0..n {
        solve(m, &g, &files, &scopes, &mut effectful, &mut indexes);
    }
    let prefixes = prefixes(&g, &own);
    let mut bases = Vec::with_capacity(n);
    let mut next = 0u32;
    for m in &g.modules {
        bases.push(next);
        next = next.saturating_add(m.text.len() as u32 + 1);
    }
    let mut source = FileSource::default();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    // The modules the root reaches (imports that close a cycle are cut),
    // the root's graphs last, so that "the last graph" is the root's.
    let mut reached = vec![0];
    let mut i = 0;
    while i < reached.len() {
        for t in g.modules[reached[i]].targets.iter().flatten() {
            if !reached.contains(t) {
                reached.push(*t);
            }
        }
        i += 1;
    }
    reached.sort();
    let order: Vec<usize> = reached[1..].iter().copied().chain([0]).collect();
    for &m in &order {
        let index = indexes[m].as_ref().expect("solved");
        let visible: HashMap<&str, String> = scopes[m]
            .items
            .iter()
            .map(|v| (v.name.as_str(), format!("{}{}", prefixes[v.module], v.item)))
            .collect();
        let rename = |name: &str| visible.get(name).cloned();
        let base = TextSize::from(bases[m]);
        let shift = |r: TextRange| r + base;
        diagnostics.extend(
            g.modules[m]
                .parse
                .errors()
                .iter()
                .map(|e| map_diagnostic(&Diagnostic::syntax(e), &shift)),
        );
        diagnostics.extend(
            scopes[m]
                .diagnostics
                .iter()
                .map(|d| map_diagnostic(d, &shift)),
        );
        let (_, index_diagnostics) = ItemIndex::build(&files[m]);
        diagnostics.extend(index_diagnostics.iter().map(|d| map_diagnostic(d, &shift)));
        let dir = g.modules[m].path.parent().map(Path::to_path_buf);
        for item in files[m].items() {
            match item {
                ast::Item::Graph(graph) => {
                    let lowered = lower_graph(&graph, index);
                    if lowered.name.is_empty() {
                        continue;
                    }
                    let lowered = shift_lowered(&rename_lowered(&lowered, &rename), base);
                    if source.graphs.contains_key(&lowered.name) {
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
                    diagnostics.extend(ds.iter().map(|d| map_diagnostic(d, &shift)));
                    if let Some(def) = def {
                        let def = relink_weight(def, &rename, base, dir.as_deref(), m == 0);
                        source.weights.entry(def.name.clone()).or_insert(def);
                    }
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
    let mut linked = Linked {
        prefixes,
        bases,
        analysis: FileAnalysis {
            parse: g.modules[0].parse.clone(),
            source,
            entries,
            diagnostics: Vec::new(),
        },
        diagnostics: vec![Vec::new(); n],
        graph: g,
    };
    for d in &diagnostics {
        let (m, range) = linked.locate(d.range);
        let mut local = d.clone();
        local.range = range;
        local.fixes.retain(|f| linked.locate(f.range).0 == m);
        for fix in &mut local.fixes {
            fix.range = linked.locate(fix.range).1;
        }
        for r in &mut local.related {
            let (k, range) = linked.locate(r.range);
            r.range = range;
            if k != m {
                r.file = Some(Arc::from(linked.graph.modules[k].path.as_path()));
            }
        }
        linked.diagnostics[m].push(local);
    }
    for ds in &mut linked.diagnostics {
        ds.dedup();
    }
    linked.analysis.diagnostics = diagnostics;
    linked
}

/// A module's weight in the linked program: its global name, its ranges in
/// the virtual concatenation, and a `load` path relative to its own file
/// made absolute (the root's stays as written: runs read it from the root's
/// folder).
fn relink_weight(
    mut def: WeightDef,
    rename: &dyn Fn(&str) -> Option<String>,
    base: TextSize,
    dir: Option<&Path>,
    root: bool,
) -> WeightDef {
    if let Some(new) = rename(&def.name) {
        def.name = new;
    }
    def.span = def.span.map(|r| r + base);
    def.name_span = def.name_span.map(|r| r + base);
    if let (WeightInit::Load { path, .. }, Some(dir), false) = (&mut def.init, dir, root) {
        if Path::new(path.as_str()).is_relative() {
            *path = dir.join(&*path).display().to_string();
        }
    }
    def
}
