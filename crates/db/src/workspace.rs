//! The database as a workspace of files that import each other (spec §10,
//! `docs/language.md` §10).
//!
//! Every file is a [`File`] input with its path; the writer reads the files a
//! file imports ([`RootDb::open`], through an [`analysis::modules::Loader`])
//! and records which file each import names ([`File::resolved`]). The
//! queries here read only inputs and each other, never the disk:
//!
//! ```text
//! File.imports, File.resolved ─► closure(file) ─► scope(file) ─► visible_names(file) ─► lower(k)
//!                                                     └─────────► namespace(file) ─► infer(k) (entries in file)
//! ```
//!
//! A file lowers against the *names* its imports make visible
//! ([`visible_names`]), which an edit inside an imported graph leaves
//! unchanged: such an edit re-infers only the graphs that call the edited
//! one (through [`namespace`], inference reads the imported lowerings), in
//! whichever file they are.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use analysis::link::{Scope, Visible};
use analysis::modules::{FsLoader, Loader};
use analysis::ItemIndex;
use salsa::{Durability, Setter};

use crate::{File, ItemKey, RootDb};

/// The files of the workspace by path, and what reads the ones not open.
pub(crate) struct Files {
    by_path: HashMap<PathBuf, File>,
    loader: Arc<dyn Loader + Send + Sync>,
}

impl Default for Files {
    fn default() -> Files {
        Files {
            by_path: HashMap::new(),
            loader: Arc::new(FsLoader),
        }
    }
}

impl RootDb {
    /// Reads files through `loader` from now on (tests give texts in memory).
    pub fn set_loader(&mut self, loader: Arc<dyn Loader + Send + Sync>) {
        self.workspace.lock().unwrap().loader = loader;
    }

    /// The file at `path`, if the database has it.
    pub fn file_at(&self, path: &Path) -> Option<File> {
        let path = analysis::modules::normalize(path);
        self.workspace.lock().unwrap().by_path.get(&path).copied()
    }

    /// Every file with a path, with its path.
    pub fn files(&self) -> Vec<(PathBuf, File)> {
        let mut out: Vec<(PathBuf, File)> = self
            .workspace
            .lock()
            .unwrap()
            .by_path
            .iter()
            .map(|(p, f)| (p.clone(), *f))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// The file at `path` with `text` (read through the loader when `None`
    /// and the file is new), and every file it imports, transitively.
    pub fn open(&mut self, path: &Path, text: Option<&str>) -> File {
        let path = analysis::modules::normalize(path);
        let known = self.workspace.lock().unwrap().by_path.get(&path).copied();
        match known {
            Some(file) => {
                if let Some(text) = text {
                    self.set_text(file, text);
                }
                file
            }
            None => {
                let text: Arc<str> = match text {
                    Some(t) => Arc::from(t),
                    None => {
                        let loader = self.workspace.lock().unwrap().loader.clone();
                        loader.read(&path).unwrap_or_else(|_| Arc::from(""))
                    }
                };
                self.load(path, &text)
            }
        }
    }

    /// A new file at `path` (registered first, so that imports that come
    /// back to it find it), with its imports resolved.
    fn load(&mut self, path: PathBuf, text: &str) -> File {
        let file = self.new_file_with_path(Some(&path), "");
        self.workspace.lock().unwrap().by_path.insert(path, file);
        if !text.is_empty() {
            self.set_text(file, text);
        }
        file
    }

    /// Resolves a file's imports, reading the files not in the database yet.
    pub(crate) fn resolve_imports(&mut self, file: File) {
        let from: PathBuf = file
            .path(self)
            .as_deref()
            .map_or_else(|| PathBuf::from("<text>"), Path::to_path_buf);
        let decls = file.imports(self).clone();
        let mut resolved = Vec::with_capacity(decls.len());
        for decl in decls.iter() {
            let target = match analysis::modules::resolve(&from, &decl.spec) {
                Err(e) => Err(e),
                Ok(path) => {
                    let known = self.workspace.lock().unwrap().by_path.get(&path).copied();
                    match known {
                        Some(f) => Ok(f),
                        None => {
                            let loader = self.workspace.lock().unwrap().loader.clone();
                            match loader.read(&path) {
                                Ok(text) => Ok(self.load(path, &text)),
                                Err(e) => Err(e),
                            }
                        }
                    }
                }
            };
            resolved.push(target);
        }
        if **file.resolved(self) != resolved {
            file.set_resolved(self)
                .with_durability(Durability::MEDIUM)
                .to(Arc::new(resolved));
        }
    }

    /// Resolves every file's imports again (files appeared or went away on
    /// disk).
    pub fn resolve_all_imports(&mut self) {
        for (_, file) in self.files() {
            if !file.imports(self).is_empty() {
                self.resolve_imports(file);
            }
        }
    }

    /// Forgets the file at `path` (deleted on disk): imports of it are
    /// resolved again by [`RootDb::resolve_all_imports`].
    pub fn forget(&mut self, path: &Path) {
        let path = analysis::modules::normalize(path);
        let file = self.workspace.lock().unwrap().by_path.remove(&path);
        if let Some(file) = file {
            self.set_text(file, "");
        }
    }

    /// Sets the text of the file at `path` from the loader (it changed on
    /// disk and is not open in an editor); `None` if the database does not
    /// have it.
    pub fn reload(&mut self, path: &Path) -> Option<File> {
        let file = self.file_at(path)?;
        let loader = self.workspace.lock().unwrap().loader.clone();
        let text = loader.read(&analysis::modules::normalize(path)).ok()?;
        self.set_text(file, &text);
        Some(file)
    }
}

/// The files `file` imports, transitively (itself first), breadth first.
#[salsa::tracked(returns(ref))]
pub fn closure(db: &dyn salsa::Database, file: File) -> Arc<Vec<File>> {
    let mut out = vec![file];
    let mut seen = HashSet::from([file]);
    let mut i = 0;
    while i < out.len() {
        for t in out[i].resolved(db).iter().flatten() {
            if seen.insert(*t) {
                out.push(*t);
            }
        }
        i += 1;
    }
    Arc::new(out)
}

/// The summed generations of the files `file` imports (what a memo of its
/// diagnostics must see unchanged to stay valid).
pub fn imports_generation(db: &dyn salsa::Database, file: File) -> u64 {
    if file.imports(db).is_empty() {
        return 0;
    }
    closure(db, file)
        .iter()
        .skip(1)
        .map(|f| f.items(db).generation)
        .fold(0u64, u64::wrapping_add)
}

/// What a file sees of the files it imports: [`Scope::items`] refer to
/// modules by index into `files` (0: the file itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileScope {
    pub scope: Scope,
    pub files: Vec<File>,
}

impl FileScope {
    /// The file and item a visible name names.
    pub fn item<'v>(&self, v: &'v Visible) -> (File, &'v str) {
        (self.files[v.module], v.item.as_str())
    }
}

fn display_name(db: &dyn salsa::Database, file: File) -> String {
    match file.path(db) {
        Some(p) => p
            .file_name()
            .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into()),
        None => "this file".into(),
    }
}

fn own_names(db: &dyn salsa::Database, file: File) -> Vec<(String, bool, syntax::TextRange)> {
    let names = file.names(db);
    names
        .graphs
        .iter()
        .map(|(n, _)| (n.clone(), true, syntax::TextRange::default()))
        .chain(
            names
                .weights
                .iter()
                .map(|(n, _)| (n.clone(), false, syntax::TextRange::default())),
        )
        .collect()
}

/// The items `file` sees and the errors of its import lines (files missing,
/// cycles, clashes).
#[salsa::tracked(returns(ref))]
pub fn scope(db: &dyn salsa::Database, file: File) -> Arc<FileScope> {
    let decls = file.imports(db);
    let resolved = file.resolved(db);
    let mut files = vec![file];
    let mut targets = Vec::with_capacity(decls.len());
    let mut errors = Vec::with_capacity(decls.len());
    for k in 0..decls.len() {
        match resolved.get(k) {
            None => {
                targets.push(None);
                errors.push(None);
            }
            Some(Err(e)) => {
                targets.push(None);
                errors.push(Some(e.clone()));
            }
            Some(Ok(t)) => {
                // A file that imports this one back closes a cycle.
                if closure(db, *t).contains(&file) {
                    let mut names = vec![display_name(db, file)];
                    names.extend(
                        cycle_path(db, *t, file)
                            .iter()
                            .map(|f| display_name(db, *f)),
                    );
                    targets.push(None);
                    errors.push(Some(format!(
                        "this import makes a cycle: {} (files may not import each other)",
                        names.join(" → ")
                    )));
                    continue;
                }
                let i = match files.iter().position(|f| f == t) {
                    Some(i) => i,
                    None => {
                        files.push(*t);
                        files.len() - 1
                    }
                };
                targets.push(Some(i));
                errors.push(None);
            }
        }
    }
    let own = own_names(db, file);
    let mut scope = analysis::link::scope(
        0,
        decls,
        &targets,
        &errors,
        &own,
        &|t| own_names(db, files[t]),
        &|t| display_name(db, files[t]),
    );
    // A clash with an item of this file points at it.
    if scope.diagnostics.iter().any(|d| {
        d.related
            .iter()
            .any(|r| r.range == syntax::TextRange::default())
    }) {
        let items = file.items(db);
        for d in &mut scope.diagnostics {
            let first = d.message.split('`').nth(3).map(str::to_string);
            for r in &mut d.related {
                if r.range == syntax::TextRange::default() {
                    if let Some(info) = first.as_deref().and_then(|n| items.get(n)) {
                        r.range = info.name_range;
                    }
                }
            }
        }
    }
    Arc::new(FileScope { scope, files })
}

/// The files from `from` to `to` along imports (`to` included, `from` not).
fn cycle_path(db: &dyn salsa::Database, from: File, to: File) -> Vec<File> {
    let mut prev: HashMap<File, File> = HashMap::new();
    let mut work = std::collections::VecDeque::from([from]);
    let mut seen = HashSet::from([from]);
    while let Some(f) = work.pop_front() {
        if f == to {
            let mut path = vec![to];
            let mut x = to;
            while x != from {
                x = prev[&x];
                path.push(x);
            }
            path.reverse();
            return path;
        }
        for t in f.resolved(db).iter().flatten() {
            if seen.insert(*t) {
                prev.insert(*t, f);
                work.push_back(*t);
            }
        }
    }
    vec![to]
}

/// The names lowering resolves in `file`: its own items' and those its
/// imports make visible, with the graphs that have effects.
#[salsa::tracked(returns(ref))]
pub fn visible_names(db: &dyn salsa::Database, file: File) -> ItemIndex {
    let own = file.names(db);
    if file.imports(db).is_empty() {
        return (**own).clone();
    }
    let fs = scope(db, file);
    let (mut graphs, mut weights) = (own.graphs.clone(), own.weights.clone());
    let mut effectful_graphs = own.effectful.clone();
    let mut seeds: HashSet<String> = HashSet::new();
    for v in fs.scope.items.iter().filter(|v| v.import.is_some()) {
        let entry = (v.name.clone(), syntax::TextRange::default());
        if v.is_graph {
            graphs.push(entry);
            let (t, item) = fs.item(v);
            if visible_names(db, t).is_effectful(item) {
                seeds.insert(v.name.clone());
            }
        } else {
            weights.push(entry);
        }
    }
    if !seeds.is_empty() {
        // Callers of imported graphs with effects have effects.
        let items = file.items(db);
        let mut effectful: HashSet<String> = own.effectful.iter().cloned().collect();
        effectful.extend(seeds);
        loop {
            let before = effectful.len();
            for node in &items.nodes {
                for (name, calls) in &node.calls.graphs {
                    if !effectful.contains(name) && calls.iter().any(|c| effectful.contains(c)) {
                        effectful.insert(name.clone());
                    }
                }
            }
            if effectful.len() == before {
                break;
            }
        }
        effectful_graphs = effectful.into_iter().collect();
        effectful_graphs.sort();
    }
    ItemIndex::new(graphs, weights, effectful_graphs)
}

/// The global names of the program whose entries are in `file`: its own
/// items and imports by the names it writes, the items of files further
/// away with the prefix of the first import path to them (as
/// `analysis::link` names them).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Namespace {
    /// Global name → item.
    pub resolve: HashMap<String, ItemKey>,
    /// For each file whose names differ from the global ones: its name →
    /// global name.
    pub renames: HashMap<File, HashMap<String, String>>,
}

#[salsa::tracked(returns(ref))]
pub fn namespace(db: &dyn salsa::Database, file: File) -> Arc<Namespace> {
    // Prefixes, breadth first from `file`.
    let mut prefix: HashMap<File, String> = HashMap::from([(file, String::new())]);
    let mut order = vec![file];
    let mut i = 0;
    while i < order.len() {
        let f = order[i];
        let fs = scope(db, f);
        let decls = f.imports(db);
        let mut seen_imports = HashSet::new();
        for v in &fs.scope.items {
            let Some(k) = v.import else { continue };
            if !seen_imports.insert(k) {
                continue;
            }
            let t = fs.files[v.module];
            if !prefix.contains_key(&t) {
                let p = format!(
                    "{}{}",
                    prefix[&f],
                    decls[k]
                        .alias
                        .as_deref()
                        .map_or(String::new(), |a| format!("{a}."))
                );
                prefix.insert(t, p);
                order.push(t);
            }
        }
        i += 1;
    }
    let mut ns = Namespace::default();
    for &f in &order {
        let mut p = prefix[&f].clone();
        let own = own_names(db, f);
        if own
            .iter()
            .any(|(x, _, _)| ns.resolve.contains_key(&format!("{p}{x}")))
        {
            let stem: String = f
                .path(db)
                .as_deref()
                .and_then(Path::file_stem)
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            let mut k = 1;
            loop {
                p = format!("_{stem}{k}.");
                if !own
                    .iter()
                    .any(|(x, _, _)| ns.resolve.contains_key(&format!("{p}{x}")))
                {
                    break;
                }
                k += 1;
            }
            prefix.insert(f, p.clone());
        }
        for (x, _, _) in &own {
            ns.resolve
                .insert(format!("{p}{x}"), ItemKey::new(db, f, x.as_str()));
        }
    }
    for &f in &order {
        let fs = scope(db, f);
        let mut map = HashMap::new();
        for v in &fs.scope.items {
            let (t, item) = fs.item(v);
            let global = format!("{}{item}", prefix.get(&t).map_or("", String::as_str));
            if global != v.name {
                map.insert(v.name.clone(), global);
            }
        }
        if !map.is_empty() {
            ns.renames.insert(f, map);
        }
    }
    Arc::new(ns)
}
