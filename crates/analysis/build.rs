//! Embeds the standard library (`lib/` at the repository root, `.mir` files)
//! in the binary, so that `import "@std/..."` works from a bare `mirdsl`.

use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "mir") {
            out.push(path);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let lib = manifest.join("../../lib");
    println!("cargo:rerun-if-changed=build.rs");
    let mut files = Vec::new();
    if lib.is_dir() {
        println!("cargo:rerun-if-changed={}", lib.display());
        walk(&lib, &mut files);
    }
    let mut code = String::from("/// The embedded standard library: path below `lib/`, text.\npub static FILES: &[(&str, &str)] = &[\n");
    for path in &files {
        let rel = path.strip_prefix(&lib).unwrap();
        let rel: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let abs = std::fs::canonicalize(path).unwrap_or(path.clone());
        code.push_str(&format!(
            "    ({:?}, include_str!({:?})),\n",
            rel.join("/"),
            abs.display().to_string()
        ));
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("stdlib_files.rs");
    std::fs::write(out, code).unwrap();
}
