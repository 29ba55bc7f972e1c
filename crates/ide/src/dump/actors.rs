//! A runtime actor set (`*actor_set*.ir`) in the editor: outline of its
//! sections (or blocks) and actors, a fold per section and per actor,
//! definition and references of an actor by name (detailed form) or id
//! (final form), and hover: what the actor is, the kernel it launches (with
//! MindSpore's schema of its primitive), where each input comes from, what
//! it waits for and sends on.

use irdump::actors::{ActorSet, Input};
use syntax::{TextRange, TextSize};

use super::range;
use crate::{Fold, FoldKind, HoverResult, Symbol, SymbolKind};

/// Sections with their actors as children; an actor's detail is its kind
/// and primitive.
pub fn actor_symbols(set: &ActorSet) -> Vec<Symbol> {
    set.sections
        .iter()
        .enumerate()
        .map(|(s, sec)| {
            let children: Vec<Symbol> = set
                .actors
                .iter()
                .filter(|a| a.section == s)
                .map(|a| Symbol {
                    name: match &a.id {
                        Some(id) => format!("{id} {}", a.name),
                        None => a.name.clone(),
                    },
                    kind: SymbolKind::Actor,
                    detail: Some(match a.prim() {
                        Some(p) => format!("{} {p}", a.kind),
                        None => a.kind.clone(),
                    }),
                    range: range(&a.range),
                    selection_range: range(&a.name_range),
                    children: Vec::new(),
                })
                .collect();
            Symbol {
                name: if sec.title.is_empty() {
                    "actors".into()
                } else {
                    sec.title.clone()
                },
                kind: SymbolKind::Section,
                detail: Some(format!(
                    "{} actor{}",
                    children.len(),
                    if children.len() == 1 { "" } else { "s" }
                )),
                range: range(&sec.range),
                selection_range: range(&sec.title_range),
                children,
            }
        })
        .collect()
}

/// One fold per section and per actor spanning several lines.
pub fn actor_folds(text: &str, set: &ActorSet) -> Vec<Fold> {
    let breaks: Vec<usize> = text
        .bytes()
        .enumerate()
        .filter(|(_, b)| *b == b'\n')
        .map(|(i, _)| i)
        .collect();
    let line_of = |offset: usize| breaks.partition_point(|&b| b < offset) as u32;
    set.sections
        .iter()
        .map(|s| {
            (
                s.range.start,
                s.range.end.saturating_sub(1),
                FoldKind::Region,
            )
        })
        .chain(
            set.actors
                .iter()
                .map(|a| (a.range.start, a.range.end, FoldKind::Comment)),
        )
        .filter_map(|(a, b, kind)| {
            let (start_line, end_line) = (line_of(a), line_of(b));
            (end_line > start_line).then_some(Fold {
                start_line,
                end_line,
                kind,
            })
        })
        .collect()
}

/// Where the actor named under `offset` is defined.
pub fn actor_definition(set: &ActorSet, offset: TextSize) -> Option<TextRange> {
    let (k, _) = set.actor_at(usize::from(offset))?;
    Some(range(&set.actors[k].name_range))
}

/// The mentions of the actor under `offset` (and its definition, if asked).
pub fn actor_references(
    set: &ActorSet,
    offset: TextSize,
    include_declaration: bool,
) -> Vec<TextRange> {
    let Some((k, _)) = set.actor_at(usize::from(offset)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if include_declaration {
        out.push(range(&set.actors[k].name_range));
    }
    out.extend(set.references(k).iter().map(range));
    out
}

/// Hover on an actor's name (its definition or a mention): its kind, its
/// kernel and primitive (with MindSpore's schema), its inputs, what it
/// waits for and whom it sends data.
pub fn actor_hover(set: &ActorSet, offset: TextSize) -> Option<HoverResult> {
    let (k, at) = set.actor_at(usize::from(offset))?;
    let a = &set.actors[k];
    let mut md = format!("**{}**: {} actor", a.name, a.kind);
    if let Some(id) = &a.id {
        md.push_str(&format!(" (`{id}`)"));
    }
    if let Some(sec) = set.sections.get(a.section).filter(|s| !s.title.is_empty()) {
        md.push_str(&format!(" in `{}`", sec.title));
    }
    md.push_str("\n\n");
    if let Some(kernel) = &a.kernel {
        md.push_str(&format!("kernel: `{kernel}`"));
        if let Some(p) = a.prim() {
            md.push_str(&format!(" (primitive `{p}`)"));
        }
        md.push_str("\n\n");
    }
    if let Some(t) = &a.types {
        md.push_str(&format!("type: `{t}`\n\n"));
    }
    if let Some(s) = &a.shapes {
        md.push_str(&format!("shape: `{s}`\n\n"));
    }
    if !a.data_nodes.is_empty() {
        md.push_str(&format!("graph inputs: {}\n\n", a.data_nodes.join(", ")));
    }
    if !a.inputs.is_empty() {
        md.push_str("inputs:\n");
        for (i, inp) in &a.inputs {
            let what = match inp {
                Input::Actor { actor, output } => {
                    let name = match actor.starts_with('%') {
                        true => set
                            .actors
                            .iter()
                            .find(|b| b.section == a.section && b.id.as_deref() == Some(actor))
                            .map_or(actor.as_str(), |b| b.name.as_str()),
                        false => actor.as_str(),
                    };
                    format!("output {output} of `{name}`")
                }
                Input::Weight(w) => format!("weight `{w}`"),
                Input::Data(d) => format!("graph input `{d}`"),
                Input::Const(c) => {
                    let c: String = c.split_whitespace().collect::<Vec<_>>().join(" ");
                    let c = match c.char_indices().nth(80) {
                        Some((cut, _)) => format!("{}...", &c[..cut]),
                        None => c,
                    };
                    format!("constant `{c}`")
                }
            };
            md.push_str(&format!("- {i}: {what}\n"));
        }
        md.push('\n');
    }
    if let Some(n) = a.outputs_num {
        md.push_str(&format!("{n} output{}", if n == 1 { "" } else { "s" }));
        if !a.outputs.is_empty() {
            md.push_str(&format!(", sent to {} input(s)", a.outputs.len()));
        }
        md.push_str("\n\n");
    }
    if !a.controls.is_empty() {
        md.push_str(&format!("waits for {} actor(s)\n\n", a.controls.len()));
    }
    if let Some(p) = a.prim().and_then(ops::mindspore::schema) {
        md.push_str(&format!(
            "MindSpore {}: `{}`\n",
            ops::mindspore::SERIES,
            p.signature()
        ));
    }
    Some(HoverResult {
        range: range(&at),
        markdown: md,
    })
}

/// The scope of the kernel an actor launches (`Default/.../Conv2D-op0`): the
/// detailed form's `kernel_name`, the final form's actor name without its
/// number (`0_Default/...`), and kernel graph N when the actor names it
/// (`kernel_graph0:Conv2D-op0`).
fn kernel_scope(a: &irdump::actors::Actor) -> Option<(String, Option<String>)> {
    let kernel = a.kernel.as_deref()?;
    match kernel.split_once(':') {
        Some((graph, _)) => {
            let n = graph.trim_start_matches("kernel_graph");
            let scope = a
                .name
                .split_once('_')
                .filter(|(d, _)| d.chars().all(|c| c.is_ascii_digit()))
                .map_or(a.name.as_str(), |(_, s)| s);
            Some((scope.to_string(), Some(n.to_string())))
        }
        None => Some((kernel.to_string(), None)),
    }
}

/// Where the kernel of the actor under `offset` is in its kernel graph's
/// dump: among `files` (the folder's dumps), the `graph_build_N_*` dumps
/// (kernel graph N's first, when the actor names it), at the statement of
/// the node whose scope is the kernel's. `(path, 1-based line)`; `read`
/// reads a file.
pub fn actor_kernel_node(
    set: &ActorSet,
    offset: TextSize,
    files: &[std::path::PathBuf],
    read: &dyn Fn(&std::path::Path) -> Option<String>,
) -> Option<(std::path::PathBuf, u32)> {
    let (k, _) = set.actor_at(usize::from(offset))?;
    let (scope, graph) = kernel_scope(&set.actors[k])?;
    let mut builds: Vec<&std::path::PathBuf> = files
        .iter()
        .filter(|f| {
            f.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("graph_build_"))
        })
        .collect();
    if let Some(n) = &graph {
        let own = format!("graph_build_{n}_");
        builds.sort_by_key(|f| {
            !f.file_name()
                .is_some_and(|x| x.to_string_lossy().starts_with(&own))
        });
    }
    let needle = format!("# Fullname with scope: ({scope})");
    for f in builds {
        let Some(text) = read(f) else {
            continue;
        };
        let Some(at) = text.find(&needle) else {
            continue;
        };
        // The node's statement: the last `  %N` line above its scope.
        let lines: Vec<&str> = text[..at].lines().collect();
        let stmt = lines
            .iter()
            .rposition(|l| l.starts_with("  %"))
            .unwrap_or(lines.len().saturating_sub(1));
        return Some((f.clone(), stmt as u32 + 1));
    }
    None
}
