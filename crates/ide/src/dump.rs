//! MindSpore's compile dumps (`.ir`, language `mindspore-ir`) in the editor:
//! outline, folding, definition, references, hover, semantic tokens, and
//! the dump among its folder's stages, over the located dump model of
//! `irdump`. Plain functions of the document's text; a dump is
//! MindSpore's truth, so nothing here reports a diagnostic.

use std::path::{Path, PathBuf};

use syntax::{TextRange, TextSize};

use crate::{Fold, FoldKind, HoverResult, Symbol, SymbolKind};

pub use irdump::{parse as parse_dump, stages, Dump};

mod actors;
mod passes;
mod tokens;

pub use actors::actor_kernel_node;

/// A link to the kernel of the actor under `offset` in its kernel graph's
/// dump (`[graph_build_0_0126.ir:99](file:///...#L99)`), when the document
/// is an actor set and one of `files` holds the kernel.
pub fn dump_actor_kernel_link(
    d: &Dump,
    offset: TextSize,
    files: &[PathBuf],
    read: &dyn Fn(&Path) -> Option<String>,
) -> Option<String> {
    let (file, line) = actor_kernel_node(d.actors.as_ref()?, offset, files, read)?;
    Some(format!(
        "[{}:{line}]({}#L{line})",
        file.file_name().unwrap_or_default().to_string_lossy(),
        file_uri(&file)
    ))
}
pub use passes::{compare, follow, node_at, Followed};
pub use tokens::dump_tokens;

/// The file's dump, parsed once per revision of its text (every request on
/// a dump reads it: 25-30 ms for 100,000 lines).
#[salsa::tracked(returns(ref), no_eq)]
pub fn dump_of(db: &dyn salsa::Database, file: db::File) -> std::sync::Arc<Dump> {
    std::sync::Arc::new(irdump::parse(file.text(db)))
}

pub(crate) fn range(r: &std::ops::Range<usize>) -> TextRange {
    TextRange::new(TextSize::from(r.start as u32), TextSize::from(r.end as u32))
}

/// Whether a document is a compile dump (by its path or URI).
pub fn is_dump(path: &str) -> bool {
    path.ends_with(".ir")
}

/// The outline: the dump's parameters (weights and inputs), then each
/// subgraph with its node count.
pub fn dump_symbols(d: &Dump) -> Vec<Symbol> {
    if let Some(set) = &d.actors {
        return actors::actor_symbols(set);
    }
    let mut out: Vec<Symbol> = d
        .params
        .iter()
        .map(|p| Symbol {
            name: p.name.clone(),
            kind: SymbolKind::Weight,
            detail: p.ty.clone(),
            range: range(&p.line),
            selection_range: range(&p.range),
            children: Vec::new(),
        })
        .collect();
    for g in &d.graphs {
        let entry = d.entry.as_deref() == g.name.strip_prefix('@');
        out.push(Symbol {
            name: g.name.clone(),
            kind: if g.parent.is_some() {
                SymbolKind::NestedGraph
            } else {
                SymbolKind::Graph
            },
            detail: Some(format!(
                "{} node{}{}",
                g.nodes.len(),
                if g.nodes.len() == 1 { "" } else { "s" },
                if entry { ", entry" } else { "" }
            )),
            range: range(&g.range),
            selection_range: range(&g.name_range),
            children: Vec::new(),
        });
    }
    out
}

/// One fold per subgraph, and one per node that spans several lines (its
/// type line and Python frames).
pub fn dump_folds(text: &str, d: &Dump) -> Vec<Fold> {
    if let Some(set) = &d.actors {
        return actors::actor_folds(text, set);
    }
    let mut marks: Vec<(usize, usize, FoldKind)> = Vec::new();
    for g in &d.graphs {
        marks.push((
            g.range.start,
            g.range.end.saturating_sub(1),
            FoldKind::Region,
        ));
        for n in &g.nodes {
            marks.push((n.range.start, n.range.end, FoldKind::Comment));
        }
    }
    // Line numbers of every mark, counting line breaks once, in order.
    let mut starts: Vec<usize> = marks.iter().flat_map(|m| [m.0, m.1]).collect();
    starts.sort_unstable();
    starts.dedup();
    let mut lines = std::collections::HashMap::with_capacity(starts.len());
    let (mut pos, mut line) = (0usize, 0u32);
    let bytes = text.as_bytes();
    for s in starts {
        let s = s.min(bytes.len());
        line += bytes[pos..s].iter().filter(|&&b| b == b'\n').count() as u32;
        pos = s;
        lines.insert(s, line);
    }
    marks
        .into_iter()
        .filter_map(|(a, b, kind)| {
            let (a, b) = (lines[&a.min(bytes.len())], lines[&b.min(bytes.len())]);
            (b > a).then_some(Fold {
                start_line: a,
                end_line: b,
                kind,
            })
        })
        .collect()
}

/// Where the name under `offset` is defined.
pub fn dump_definition(d: &Dump, offset: TextSize) -> Option<TextRange> {
    if let Some(set) = &d.actors {
        return actors::actor_definition(set, offset);
    }
    let (_, _, target) = d.name_at(usize::from(offset))?;
    Some(range(&d.definition(target?)))
}

/// The uses of the name under `offset` (and its definition, if asked).
pub fn dump_references(d: &Dump, offset: TextSize, include_declaration: bool) -> Vec<TextRange> {
    if let Some(set) = &d.actors {
        return actors::actor_references(set, offset, include_declaration);
    }
    let Some((_, _, Some(target))) = d.name_at(usize::from(offset)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if include_declaration {
        out.push(range(&d.definition(target)));
    }
    out.extend(d.references(target).iter().map(range));
    out
}

/// Where a Python frame's file is: as printed when it exists (a relative
/// path against the dump's folder or the folder above it, where the script
/// that wrote a `save_graphs_path="dump"` folder sits), else a file of that
/// name next to the dump folder (a folder moved from the machine that made
/// it), else the path as printed.
fn frame_path(f: &irdump::Frame, dir: Option<&Path>, exists: &dyn Fn(&Path) -> bool) -> PathBuf {
    let path = Path::new(&f.file);
    let mut candidates: Vec<PathBuf> = Vec::new();
    let dirs: Vec<&Path> = dir
        .into_iter()
        .flat_map(|d| [Some(d), d.parent()])
        .flatten()
        .collect();
    if path.is_absolute() {
        candidates.push(path.to_path_buf());
    } else {
        candidates.extend(dirs.iter().map(|d| d.join(path)));
    }
    if let Some(name) = path.file_name() {
        candidates.extend(dirs.iter().map(|d| d.join(name)));
    }
    candidates
        .iter()
        .find(|c| exists(c))
        .or(candidates.first())
        .cloned()
        .unwrap_or_else(|| path.to_path_buf())
}

/// A `file://` URI with the bytes a URI cannot hold percent-encoded.
fn file_uri(path: &Path) -> String {
    let mut out = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~:".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A link to a Python frame's line (`[model.py:38](file:///.../model.py#L38)`,
/// which VS Code opens at that line).
fn frame_link(f: &irdump::Frame, dir: Option<&Path>, exists: &dyn Fn(&Path) -> bool) -> String {
    let path = frame_path(f, dir, exists);
    format!(
        "[{}:{}]({}#L{})",
        Path::new(&f.file)
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        f.line,
        file_uri(&path),
        f.line
    )
}

/// The innermost frame of the user's own code of the node under `offset`,
/// with its file found as the hover's link finds it: `(path, 1-based line)`.
pub fn dump_user_frame(
    d: &Dump,
    offset: TextSize,
    dir: Option<&Path>,
    exists: &dyn Fn(&Path) -> bool,
) -> Option<(PathBuf, u32)> {
    let (g, k) = node_at(d, offset)?;
    let f = d.graphs[g].nodes[k].user_frame()?;
    Some((frame_path(f, dir, exists), f.line))
}

/// Hover: a node's dumped type, scope, primitive (with MindSpore's schema)
/// and the innermost frame of the user's code; a parameter's type; a graph's
/// size. `dir` is the dump's folder (for relative Python paths), `exists`
/// says whether a file is there (to find a moved script). On a primitive's
/// name: its node's hover.
pub fn dump_hover(
    d: &Dump,
    offset: TextSize,
    dir: Option<&Path>,
    exists: &dyn Fn(&Path) -> bool,
) -> Option<HoverResult> {
    if let Some(set) = &d.actors {
        return actors::actor_hover(set, offset);
    }
    let (name, at, target) = match d.name_at(usize::from(offset)) {
        Some(x) => x,
        None => {
            let (g, k) = node_at(d, offset)?;
            let n = &d.graphs[g].nodes[k];
            let (p, r) = n
                .prim
                .as_ref()
                .filter(|(_, r)| r.contains(&usize::from(offset)))?;
            (p.clone(), r.clone(), Some(irdump::Target::Node(g, k)))
        }
    };
    let mut md = String::new();
    match target? {
        irdump::Target::Node(g, k) => {
            let n = &d.graphs[g].nodes[k];
            md.push_str(&format!("**{}**", n.id));
            if !n.label.is_empty() {
                md.push_str(&format!(" ({})", n.label));
            }
            match n.prim_name() {
                Some(p) => md.push_str(&format!(" = `{p}`")),
                None => md.push_str(" = a call"),
            }
            md.push_str(&format!(" in `{}`\n\n", d.graphs[g].name));
            if let Some(t) = &n.ty {
                md.push_str(&format!("type: `{t}`\n\n"));
            }
            if let Some(s) = &n.scope {
                md.push_str(&format!("scope: `{s}`\n\n"));
            }
            if let Some(f) = n.user_frame() {
                md.push_str(&format!("from {}", frame_link(f, dir, exists)));
                if !f.code.is_empty() {
                    md.push_str(&format!(": `{}`", f.code));
                }
                md.push_str("\n\n");
            }
            if let Some(p) = n.prim_name().and_then(ops::mindspore::schema) {
                md.push_str(&format!(
                    "MindSpore {}: `{}`",
                    ops::mindspore::SERIES,
                    p.signature()
                ));
                if !p.doc.is_empty() {
                    md.push_str(&format!("\n\n{}", p.doc));
                }
                md.push('\n');
            }
        }
        irdump::Target::Param(i) => {
            let p = &d.params[i];
            md.push_str(&format!("**{}**", p.name));
            if let Some(t) = &p.ty {
                md.push_str(&format!(": `{t}`"));
            }
            md.push('\n');
        }
        irdump::Target::GraphParam(g, _) => {
            md.push_str(&format!(
                "**{name}**: a parameter of `{}`\n",
                d.graphs[g].name
            ));
        }
        irdump::Target::Graph(g) => {
            let graph = &d.graphs[g];
            md.push_str(&format!(
                "**{}**: a subgraph of {} node{}",
                graph.name,
                graph.nodes.len(),
                if graph.nodes.len() == 1 { "" } else { "s" }
            ));
            if let Some(p) = &graph.parent {
                md.push_str(&format!(", nested in `{p}`"));
            }
            md.push('\n');
        }
    }
    Some(HoverResult {
        range: range(&at),
        markdown: md,
    })
}
