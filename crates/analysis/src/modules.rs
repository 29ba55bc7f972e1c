//! Where imported files are (spec §10, `docs/language.md` §10): resolving an
//! import's path, reading files, and the standard library shipped with
//! mirdsl.
//!
//! A path is relative to the importing file's folder; one that starts with
//! `@std/` names a file of the standard library (the repository's `lib/`
//! folder, embedded in the binary). Every module is known by one path, made
//! canonical, so a file imported along several paths is one module.

use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// The prefix of paths into the standard library.
pub const STD_PREFIX: &str = "@std/";

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/stdlib_files.rs"));
}

/// The standard library's files embedded in the binary: path below `lib/`, text.
pub fn std_files() -> &'static [(&'static str, &'static str)] {
    embedded::FILES
}

/// The folder the standard library is read from, as a real folder (so that an
/// editor can open its files): `$MIRDSL_STD` if set; else the repository's
/// `lib/` when this binary runs where it was built; else a copy of the
/// embedded files, written once to a cache folder. `None` when none of these
/// can be had (imports from `@std/` are then served from the embedded text
/// under the virtual path `@std/...`).
pub fn std_root() -> Option<&'static Path> {
    static ROOT: OnceLock<Option<PathBuf>> = OnceLock::new();
    ROOT.get_or_init(|| {
        if let Some(dir) = std::env::var_os("MIRDSL_STD") {
            return Some(normalize(Path::new(&dir)));
        }
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../lib");
        if repo.is_dir() {
            return Some(normalize(&repo));
        }
        materialize()
    })
    .as_deref()
}

/// Writes the embedded files to `$XDG_CACHE_HOME/mirdsl/std-HASH` (or
/// `~/.cache/...`, or the temporary folder) unless they are there already.
fn materialize() -> Option<PathBuf> {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (path, text) in std_files() {
        for b in path.bytes().chain([0]).chain(text.bytes()).chain([0]) {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    let dir = base.join("mirdsl").join(format!("std-{hash:016x}"));
    let done = dir.join(".complete");
    if done.exists() {
        return Some(dir);
    }
    for (path, text) in std_files() {
        let file = dir.join(path);
        std::fs::create_dir_all(file.parent()?).ok()?;
        std::fs::write(&file, text).ok()?;
    }
    std::fs::create_dir_all(&dir).ok()?;
    std::fs::write(&done, "").ok()?;
    Some(dir)
}

/// `path` with `.` and `..` taken out, made canonical when it exists (so that
/// links and different spellings name one module).
pub fn normalize(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            c => out.push(c.as_os_str()),
        }
    }
    out
}

/// The module path that `spec` (an import's path) names, imported from the
/// file `from`; or why it names none.
pub fn resolve(from: &Path, spec: &str) -> Result<PathBuf, String> {
    if !spec.ends_with(".mir") {
        return Err(format!("`{spec}` is not a `.mir` file"));
    }
    if let Some(rest) = spec.strip_prefix(STD_PREFIX) {
        return Ok(match std_root() {
            Some(root) => normalize(&root.join(rest)),
            None => PathBuf::from(spec),
        });
    }
    let dir = from.parent().unwrap_or(Path::new(""));
    Ok(normalize(&dir.join(spec)))
}

/// The embedded text of a standard library file named by its virtual path
/// (`@std/nn/dense.mir`) or by its path under [`std_root`].
pub fn std_text(path: &Path) -> Option<&'static str> {
    let rel = match path.to_str().and_then(|p| p.strip_prefix(STD_PREFIX)) {
        Some(rel) => rel.to_string(),
        None => {
            let rel = path.strip_prefix(std_root()?).ok()?;
            rel.components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/")
        }
    };
    std_files().iter().find(|(p, _)| *p == rel).map(|(_, t)| *t)
}

/// Reads module files.
pub trait Loader {
    /// The text of the module at `path`, or why it cannot be read.
    fn read(&self, path: &Path) -> Result<Arc<str>, String>;
}

/// Reads files from disk; standard library files that are not on disk come
/// from the embedded copy.
#[derive(Debug, Default, Clone, Copy)]
pub struct FsLoader;

impl Loader for FsLoader {
    fn read(&self, path: &Path) -> Result<Arc<str>, String> {
        match std::fs::read_to_string(path) {
            Ok(text) => Ok(Arc::from(text)),
            Err(e) => match std_text(path) {
                Some(text) => Ok(Arc::from(text)),
                None if e.kind() == std::io::ErrorKind::NotFound => {
                    Err(format!("no such file: {}", path.display()))
                }
                None => Err(format!("cannot read {}: {e}", path.display())),
            },
        }
    }
}

/// Where the standard library defines each of its top-level names: name →
/// the import path of its file (`@std/nn/loss.mir`), for "import it" advice.
/// Parsed once; the first file (in path order) wins a name defined twice.
pub fn std_definitions() -> &'static std::collections::BTreeMap<String, String> {
    static INDEX: OnceLock<std::collections::BTreeMap<String, String>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut out = std::collections::BTreeMap::new();
        let mut files: Vec<&(&str, &str)> = std_files().iter().collect();
        files.sort();
        for (path, text) in files {
            let parse = syntax::parse(text);
            let (index, _) = crate::lower::ItemIndex::build(&parse.tree());
            for (name, _) in index.graphs.iter().chain(&index.weights) {
                out.entry(name.clone())
                    .or_insert_with(|| format!("{STD_PREFIX}{path}"));
            }
        }
        out
    })
}
