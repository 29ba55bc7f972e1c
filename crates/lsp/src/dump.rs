//! Requests on MindSpore compile dumps (`*.ir`, language `mindspore-ir`):
//! answered from `ide::dump` over the document's text, never from the DSL's
//! analysis (a dump is not DSL text), and without diagnostics; the graph
//! of a subgraph grouped by scope, the diff with the stage before, and a
//! node followed to the next or previous stage.

use serde_json::{json, Value as Json};

use crate::convert::{self, Snap};
use crate::lsp;
use crate::server::{failed, Result, RpcError};

/// The dump, when the snapshot's document is one.
pub fn of(s: &Snap) -> Option<std::sync::Arc<ide::dump::Dump>> {
    ide::dump::is_dump(s.uri.as_str()).then(|| ide::dump::dump_of(&s.db, s.file).clone())
}

/// Whether the snapshot's document is a dump (nothing parsed).
pub fn is(s: &Snap) -> bool {
    ide::dump::is_dump(s.uri.as_str())
}

pub fn hover(s: &Snap, d: &ide::dump::Dump, p: lsp::HoverParams) -> Option<lsp::Hover> {
    let offset = s.offset(p.text_document_position_params.position);
    let path = convert::uri_path(&s.uri);
    let dir = path.as_deref().and_then(|p| p.parent());
    ide::dump::dump_hover(d, offset, dir, &|p| p.is_file()).map(|h| lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: match dir.filter(|_| d.actors.is_some()) {
                // An actor's kernel in its kernel graph's dump, as a link.
                Some(dir) => {
                    let files = ide::dump::stages::stages(dir).unwrap_or_default();
                    let read = |p: &std::path::Path| std::fs::read_to_string(p).ok();
                    match ide::dump::dump_actor_kernel_link(d, offset, &files, &read) {
                        Some(link) => format!("{}\nin its kernel graph: {link}\n", h.markdown),
                        None => h.markdown,
                    }
                }
                None => h.markdown,
            },
        }),
        range: Some(s.range(h.range)),
    })
}

pub fn definition(
    s: &Snap,
    d: &ide::dump::Dump,
    p: lsp::GotoDefinitionParams,
) -> Option<lsp::GotoDefinitionResponse> {
    let offset = s.offset(p.text_document_position_params.position);
    ide::dump::dump_definition(d, offset)
        .map(|r| lsp::GotoDefinitionResponse::Scalar(s.location(r)))
}

pub fn references(s: &Snap, d: &ide::dump::Dump, p: lsp::ReferenceParams) -> Vec<lsp::Location> {
    let offset = s.offset(p.text_document_position.position);
    ide::dump::dump_references(d, offset, p.context.include_declaration)
        .into_iter()
        .map(|r| s.location(r))
        .collect()
}

pub fn symbols(s: &Snap, d: &ide::dump::Dump) -> lsp::DocumentSymbolResponse {
    lsp::DocumentSymbolResponse::Nested(
        ide::dump::dump_symbols(d)
            .iter()
            .map(|x| convert::document_symbol(s, x))
            .collect(),
    )
}

/// Code lenses: "Compare with previous pass" above the dump when its folder
/// has a stage before it, and "Show graph" above each subgraph (the same
/// `mirdsl.showGraph` command a `.mir` graph's lens runs, given the dump's
/// URI and the subgraph's name).
pub fn code_lenses(s: &Snap, d: &ide::dump::Dump) -> Vec<lsp::CodeLens> {
    let uri = Json::String(s.uri.as_str().to_string());
    let lens = |at: usize, title: &str, command: &str, args: Vec<Json>| lsp::CodeLens {
        range: s.range(syntax::TextRange::empty(syntax::TextSize::from(at as u32))),
        command: Some(lsp::Command {
            title: title.to_string(),
            command: command.to_string(),
            arguments: Some(args),
        }),
        data: None,
    };
    let mut out = Vec::with_capacity(d.graphs.len() + 1);
    let previous = convert::uri_path(&s.uri)
        .and_then(|p| ide::dump::stages::neighbour(&p, -1))
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    if let Some(name) = previous {
        out.push(lens(
            0,
            &format!("Compare with previous pass ({name})"),
            "mirdsl.comparePreviousPass",
            vec![uri.clone()],
        ));
    }
    for g in &d.graphs {
        out.push(lens(
            g.range.start,
            "Show graph",
            "mirdsl.showGraph",
            vec![uri.clone(), Json::String(g.name.clone())],
        ));
    }
    out
}

pub fn folds(s: &Snap, d: &ide::dump::Dump) -> Vec<ide::Fold> {
    ide::dump::dump_folds(s.text(), d)
}

fn not_a_dump(s: &Snap) -> RpcError {
    RpcError::invalid_params(format!(
        "`{}` is not a MindSpore compile dump (`.ir`)",
        s.uri.as_str()
    ))
}

/// A position parameter (`{line, character}`).
fn position(params: &Json) -> Result<Option<lsp::Position>> {
    match params.get("position") {
        None | Some(Json::Null) => Ok(None),
        Some(p) => serde_json::from_value(p.clone())
            .map(Some)
            .map_err(|e| RpcError::invalid_params(format!("bad `position`: {e}"))),
    }
}

/// `mirdsl/graph` on a dump `{uri, graph?, position?}`: the subgraph named,
/// else the one under `position`, else the entry, drawn grouped by scope →
/// `{graph, svg, dot: null, nodes: {id: range}, graphs: [names]}`.
pub fn graph(s: &Snap, d: &ide::dump::Dump, params: &Json) -> Result<Json> {
    // An actor set is drawn as its actors and the data between them.
    let drawn;
    let d = match &d.actors {
        Some(set) => {
            drawn = set.as_dump();
            &drawn
        }
        None => d,
    };
    let named = params.get("graph").and_then(Json::as_str);
    let g = match named {
        Some(name) => {
            let name = format!("@{}", name.trim_start_matches('@'));
            d.graphs
                .iter()
                .position(|g| g.name == name)
                .ok_or_else(|| failed(format!("no subgraph `{name}` in the dump")))?
        }
        None => position(params)?
            .and_then(|p| d.graph_at(usize::from(s.offset(p))))
            .or_else(|| {
                let entry = d.entry.as_deref()?;
                d.graphs
                    .iter()
                    .position(|g| g.name.trim_start_matches('@') == entry)
            })
            .or((!d.graphs.is_empty()).then_some(0))
            .ok_or_else(|| failed("the dump has no subgraph".to_string()))?,
    };
    let model = graphview::from_dump(d, g).ok_or_else(|| failed("no such subgraph".to_string()))?;
    let nodes: serde_json::Map<String, Json> = model
        .node_spans()
        .into_iter()
        .map(|(id, r)| (id, serde_json::to_value(s.range(r)).unwrap_or(Json::Null)))
        .collect();
    let svg = graphview::render_svg(&model);
    let graphs: Vec<&str> = d.graphs.iter().map(|g| g.name.as_str()).collect();
    Ok(json!({
        "graph": d.graphs[g].name,
        "svg": svg,
        "dot": Json::Null,
        "nodes": nodes,
        "graphs": graphs,
    }))
}

/// The stage `step` away from this dump in its folder, read.
fn stage(s: &Snap, step: isize) -> Result<(std::path::PathBuf, String)> {
    let path = convert::uri_path(&s.uri).ok_or_else(|| {
        failed("the dump is not a file, so it has no folder of stages".to_string())
    })?;
    stage_of(&path, step)
}

/// The stage `step` away from the dump at `path` in its folder, read.
fn stage_of(path: &std::path::Path, step: isize) -> Result<(std::path::PathBuf, String)> {
    let other = ide::dump::stages::neighbour(path, step).ok_or_else(|| {
        failed(format!(
            "{} is the {} stage in its folder",
            path.file_name().unwrap_or_default().to_string_lossy(),
            if step < 0 { "first" } else { "last" }
        ))
    })?;
    let text = std::fs::read_to_string(&other)
        .map_err(|e| failed(format!("cannot read {}: {e}", other.display())))?;
    Ok((other, text))
}

fn file_name(p: &std::path::Path) -> String {
    p.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// `mirdsl/dump/compare` `{uri}`: the structural diff of the stage before
/// this dump in its folder and this one, as `mirdsl diff PREVIOUS THIS`
/// prints it → `{previous: uri, text, changes}`.
pub fn compare(s: &Snap, _: Json) -> Result<Json> {
    let this = of(s).ok_or_else(|| not_a_dump(s))?;
    let (prev_path, prev_text) = stage(s, -1)?;
    let prev = ide::dump::parse_dump(&prev_text);
    let this_name = convert::uri_path(&s.uri)
        .map(|p| file_name(&p))
        .unwrap_or_else(|| s.uri.as_str().to_string());
    let (text, changes) = ide::dump::compare(&file_name(&prev_path), &prev, &this_name, &this);
    Ok(json!({
        "previous": convert::path_uri(&prev_path).map(|u| u.as_str().to_string()),
        "text": text,
        "changes": changes,
    }))
}

/// `mirdsl/dump/follow` `{uri, position, direction: "next" | "previous",
/// untilChange?}`: the node under the position in the next or previous
/// stage (with `untilChange`, the first stage where it differs or is gone,
/// passing the stages that leave it as it is) → `{uri, range, found,
/// changes, skipped, message}` (`found` false: the node's graph there).
pub fn follow(s: &Snap, params: Json) -> Result<Json> {
    let this = of(s).ok_or_else(|| not_a_dump(s))?;
    let pos = position(&params)?.ok_or_else(|| RpcError::invalid_params("missing `position`"))?;
    let forward = match params.get("direction").and_then(Json::as_str) {
        None | Some("next") => true,
        Some("previous") => false,
        Some(other) => {
            return Err(RpcError::invalid_params(format!(
                "`direction` is \"next\" or \"previous\", not {other:?}"
            )))
        }
    };
    let until_change = params
        .get("untilChange")
        .and_then(Json::as_bool)
        .unwrap_or(false);
    let step = if forward { 1 } else { -1 };
    let mut path = convert::uri_path(&s.uri).ok_or_else(|| {
        failed("the dump is not a file, so it has no folder of stages".to_string())
    })?;
    let mut from = this;
    let mut offset = s.offset(pos);
    let mut skipped = 0usize;
    let mut last: Option<(std::path::PathBuf, String, ide::dump::Followed)> = None;
    loop {
        let next = match stage_of(&path, step) {
            Ok(next) => next,
            // The end of the folder: where the node last was, if it moved.
            Err(e) => match last {
                Some(found) => break Ok(answer(s, found, skipped.saturating_sub(1), true)?),
                None => break Err(e),
            },
        };
        let (other_path, text) = next;
        let other = std::sync::Arc::new(ide::dump::parse_dump(&text));
        let f = match ide::dump::follow(&from, offset, &other, forward) {
            Ok(f) => f,
            Err(e) => {
                let why = format!("{}: {e}", file_name(&other_path));
                match last {
                    // Walking: where the node last was, and why it stops.
                    Some((p, t, mut f)) => {
                        f.message.push_str(&format!("; following stops at {why}"));
                        break Ok(answer(s, (p, t, f), skipped.saturating_sub(1), false)?);
                    }
                    None => break Err(failed(why)),
                }
            }
        };
        if !until_change || !f.found || !f.changes.is_empty() {
            break Ok(answer(s, (other_path, text, f), skipped, false)?);
        }
        skipped += 1;
        offset = f.range.start();
        path = other_path.clone();
        from = other;
        last = Some((other_path, text, f));
    }
}

/// The answer to `mirdsl/dump/follow`: the found node's place in its stage.
fn answer(
    s: &Snap,
    (path, text, f): (std::path::PathBuf, String, ide::dump::Followed),
    skipped: usize,
    at_end: bool,
) -> Result<Json> {
    let index = syntax::LineIndex::new(&text);
    let at = |o| convert::position(&text, &index, o, s.unit);
    let uri =
        convert::path_uri(&path).ok_or_else(|| failed(format!("no URI for {}", path.display())))?;
    let mut message = format!("{}: {}", file_name(&path), f.message);
    if skipped > 0 {
        message.push_str(&format!(
            " ({skipped} stage{} before it left the node as it was)",
            if skipped == 1 { "" } else { "s" }
        ));
    }
    if at_end {
        message.push_str("; no stage in the folder changes it");
    }
    Ok(json!({
        "uri": uri.as_str(),
        "range": lsp::Range::new(at(f.range.start()), at(f.range.end())),
        "found": f.found,
        "changes": f.changes,
        "skipped": skipped,
        "message": message,
    }))
}

/// `mirdsl/dump/source` `{uri, position}`: the innermost line of the user's
/// own Python code that made the node under the position (the hover's
/// link, for clients that cannot follow a link in a hover) →
/// `{uri, line}` (0-based line), or null when the node has no such frame.
pub fn source(s: &Snap, params: Json) -> Result<Json> {
    let d = of(s).ok_or_else(|| not_a_dump(s))?;
    let pos = position(&params)?.ok_or_else(|| RpcError::invalid_params("missing `position`"))?;
    let path = convert::uri_path(&s.uri);
    let dir = path.as_deref().and_then(|p| p.parent());
    let Some((file, line)) = ide::dump::dump_user_frame(&d, s.offset(pos), dir, &|p| p.is_file())
    else {
        return Ok(Json::Null);
    };
    let uri =
        convert::path_uri(&file).ok_or_else(|| failed(format!("no URI for {}", file.display())))?;
    Ok(json!({ "uri": uri.as_str(), "line": line.saturating_sub(1), "exists": file.is_file() }))
}
