//! Custom requests for the editors: `mirdsl/graph`, `mirdsl/ir` (and
//! `mirdsl/run`, in `runner`); the `mirdsl.showGraph` and
//! `mirdsl.showGradient` commands for other clients.

use std::fmt::Write;

use analysis::LoweredGraph;
use db::FileMapper;
use ir::{GraphId, NodeId, NodeKind, Value};
use serde_json::{json, Value as Json};
use syntax::TextRange;

use crate::convert::Snap;
use crate::server::{failed, Result, RpcError, Shared};

/// The hook for drawing a graph's DOT text as SVG: `graphview` lays it out in
/// pure Rust (node ids stay the DOT ids, so `nodes` maps them to ranges); `None`
/// only for DOT it cannot read, and the client then renders the DOT itself.
pub fn render_svg(dot: &str) -> Option<String> {
    graphview::dot_to_svg(dot)
}

fn str_param(params: &Json, key: &str) -> Result<String> {
    params
        .get(key)
        .and_then(Json::as_str)
        .map(str::to_string)
        .ok_or_else(|| RpcError::invalid_params(format!("missing `{key}`")))
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A top-level graph (with its nested graphs as clusters) as Graphviz DOT, and
/// the source range of each DOT node (`n<id>`), relative to the lowering.
pub fn graph_dot(
    lowered: &LoweredGraph,
    describe: &dyn Fn(NodeId) -> Option<String>,
) -> (String, Vec<(String, TextRange)>) {
    let body = &lowered.body;
    let mut out = String::new();
    let mut ranges = Vec::new();
    let _ = writeln!(out, "digraph \"{}\" {{", dot_escape(&lowered.name));
    let _ = writeln!(out, "  rankdir=TB;");
    let _ = writeln!(
        out,
        "  node [shape=box, style=rounded, fontname=\"monospace\", fontsize=10];"
    );
    // Which nodes are drawn: parameters, CNodes, and constants used as arguments.
    fn cluster(
        body: &ir::Body,
        g: GraphId,
        depth: usize,
        out: &mut String,
        ranges: &mut Vec<(String, TextRange)>,
        describe: &dyn Fn(NodeId) -> Option<String>,
    ) {
        let graph = body.graph(g);
        let pad = "  ".repeat(depth + 1);
        let _ = writeln!(out, "{pad}subgraph cluster_g{} {{", g.0);
        let _ = writeln!(out, "{pad}  label=\"{}\";", dot_escape(&graph.name));
        for &p in &graph.params {
            let node = body.node(p);
            let name = node.name.clone().unwrap_or_else(|| format!("%{}", p.0));
            let ty = describe(p)
                .map(|t| format!("\\n{}", dot_escape(&t)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{pad}  n{} [label=\"{}{ty}\", shape=ellipse];",
                p.0,
                dot_escape(&name)
            );
            if let Some(s) = node.span {
                ranges.push((format!("n{}", p.0), s));
            }
        }
        for &n in &graph.nodes {
            let node = body.node(n);
            let NodeKind::Apply(inputs) = &node.kind else {
                continue;
            };
            let op = match inputs.first().map(|&i| &body.node(i).kind) {
                Some(NodeKind::Const(Value::Prim(p))) => p.name.clone(),
                Some(NodeKind::Const(Value::Global(name))) => name.clone(),
                Some(NodeKind::Const(Value::Graph(h))) => body.graph(*h).name.clone(),
                Some(NodeKind::Const(Value::Meta(m))) => m.name().to_string(),
                _ => "call".to_string(),
            };
            let bound = node
                .name
                .clone()
                .map(|b| format!("{b} = "))
                .unwrap_or_default();
            let ty = describe(n)
                .map(|t| format!("\\n{}", dot_escape(&t)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{pad}  n{} [label=\"{}{}{ty}\"];",
                n.0,
                dot_escape(&bound),
                dot_escape(&op)
            );
            if let Some(s) = node.span {
                ranges.push((format!("n{}", n.0), s));
            }
        }
        for child in body.children(g) {
            cluster(body, child, depth + 1, out, ranges, describe);
        }
        let _ = writeln!(out, "{pad}}}");
    }
    cluster(body, body.root(), 0, &mut out, &mut ranges, describe);
    // Edges: argument → call; constants drawn where they are used.
    for (id, node) in body.nodes.iter().enumerate() {
        let NodeKind::Apply(inputs) = &node.kind else {
            continue;
        };
        let skip_callee = matches!(
            inputs.first().map(|&i| &body.node(i).kind),
            Some(NodeKind::Const(
                Value::Prim(_) | Value::Global(_) | Value::Graph(_) | Value::Meta(_)
            ))
        );
        for (k, &input) in inputs.iter().enumerate() {
            if k == 0 && skip_callee {
                continue;
            }
            let source = match &body.node(input).kind {
                NodeKind::Const(v) => {
                    let label = const_label(body, v);
                    let cid = format!("c{id}_{k}");
                    let _ = writeln!(
                        out,
                        "  {cid} [label=\"{}\", shape=plaintext];",
                        dot_escape(&label)
                    );
                    cid
                }
                NodeKind::Weight(w) => {
                    let wid = format!("w{}", input.0);
                    let _ = writeln!(
                        out,
                        "  {wid} [label=\"{}\", shape=cylinder];",
                        dot_escape(w)
                    );
                    wid
                }
                _ => format!("n{}", input.0),
            };
            let _ = writeln!(out, "  {source} -> n{id};");
        }
        if let Some(o) = body
            .graphs
            .iter()
            .position(|g| g.output == Some(NodeId(id as u32)))
        {
            let _ = writeln!(out, "  ret{o} [label=\"return\", shape=doublecircle];");
            let _ = writeln!(out, "  n{id} -> ret{o};");
        }
    }
    let _ = writeln!(out, "}}");
    (out, ranges)
}

fn const_label(body: &ir::Body, v: &Value) -> String {
    match v {
        Value::Graph(g) => format!("graph {}", body.graph(*g).name),
        Value::Tensor(t) => format!("{}{:?}", t.dtype(), t.shape()),
        Value::Scalar { value, .. } => value.to_string(),
        Value::Str(s) => {
            let s = format!("{s:?}");
            match s.char_indices().nth(40) {
                Some((i, _)) => format!("{}…", &s[..i]),
                None => s,
            }
        }
        Value::None => "none".into(),
        Value::Tuple(items) => format!("tuple of {}", items.len()),
        Value::Prim(p) => p.name.clone(),
        Value::Global(name) => name.clone(),
        Value::Meta(m) => m.name().to_string(),
        Value::Type(t) => t.to_string(),
        Value::Monad => "U".into(),
    }
}

fn lowered_graph(snap: &Snap, name: &str) -> Result<std::sync::Arc<LoweredGraph>> {
    let key = snap.db.key(snap.file, name);
    match db::lower(&snap.db, key).clone() {
        Ok(Some(g)) => Ok(g),
        Ok(None) => Err(failed(format!("no graph `{name}` in the document"))),
        Err(message) => Err(failed(format!(
            "lowering `{name}` failed (a bug in mirdsl): {message}"
        ))),
    }
}

/// `mirdsl/graph` `{uri, graph}` → `{graph, dot, svg, nodes: {id: range}}`.
pub fn graph(s: &Snap, params: Json) -> Result<Json> {
    if let Some(d) = crate::dump::of(s) {
        return crate::dump::graph(s, &d, &params);
    }
    let name = str_param(&params, "graph")?;
    let lowered = lowered_graph(s, &name)?;
    let key = s.db.key(s.file, &name);
    let inferred = db::inferred(&s.db, key);
    let describe = |n: NodeId| -> Option<String> {
        let vals = inferred.as_ref()?.result.node_values.get(&n)?;
        let parts: Vec<String> = vals.iter().map(|v| v.to_string()).collect();
        (!parts.is_empty()).then(|| parts.join(" | "))
    };
    let (dot, ranges) = graph_dot(&lowered, &describe);
    let mut mapper = FileMapper::new(&s.db, s.file, &name);
    if let Some(inf) = &inferred {
        mapper = mapper.with_segments(&inf.segments);
    }
    let nodes: serde_json::Map<String, Json> = ranges
        .into_iter()
        .map(|(id, r)| {
            let range = s.range(mapper.range(r));
            (id, serde_json::to_value(range).unwrap_or(Json::Null))
        })
        .collect();
    let svg = render_svg(&dot);
    Ok(json!({ "graph": name, "dot": dot, "svg": svg, "nodes": nodes }))
}

/// `mirdsl/ir` `{uri, graph, kind: "ir" | "gradient"}` → `{text}`.
pub fn ir(s: &Snap, params: Json) -> Result<Json> {
    let name = str_param(&params, "graph")?;
    let kind = params
        .get("kind")
        .and_then(Json::as_str)
        .unwrap_or("ir")
        .to_string();
    let arity = |p: &str| ops::lookup(p).map(|o| o.input_count());
    match kind.as_str() {
        "ir" => {
            let lowered = lowered_graph(s, &name)?;
            let text = ir::print::print_body_with(&lowered.body, &arity);
            Ok(json!({ "graph": name, "kind": kind, "text": text }))
        }
        "gradient" => {
            let text = gradient_text(s, &name)?;
            Ok(json!({ "graph": name, "kind": kind, "text": text }))
        }
        other => Err(RpcError::invalid_params(format!(
            "`kind` is \"ir\" or \"gradient\", not {other:?}"
        ))),
    }
}

/// The gradient program of a graph, as DSL text.
fn gradient_text(s: &Snap, name: &str) -> Result<String> {
    if let Some(d) = db::file_diagnostics(&s.db, s.file)
        .to_vec()
        .iter()
        .find(|d| d.severity == analysis::Severity::Error)
    {
        return Err(failed(format!(
            "the document has errors; fix them to see the gradient (first: {})",
            d.message
        )));
    }
    // Not the database's: the whole-file program (the snapshot is not
    // needed past this point).
    let path = s
        .file
        .path(&s.db)
        .as_deref()
        .map(std::path::Path::to_path_buf);
    let analysis = crate::runner::program_analysis(path.as_deref(), s.text()).map_err(|m| {
        failed(format!(
            "the program has errors; fix them to see the gradient (first: {m})"
        ))
    })?;
    let program = analysis.source.program();
    if program.graph(name).is_none() {
        return Err(failed(format!("no graph `{name}` in the document")));
    }
    let target = autodiff::GradTarget {
        item: name.to_string(),
        graph: GraphId(0),
    };
    let options = autodiff::Options {
        composites: Some(analysis::composite::instance_body),
        ..Default::default()
    };
    autodiff::gradient_program_text(&program, &target, &ir::MetaFn::Grad { wrt: None }, &options)
        .map_err(|e| failed(format!("cannot differentiate `{name}`: {e}")))
}

/// `mirdsl/debug/wait` `{uri, ms}`: waits (for tests of cancellation), as
/// a long query would: salsa's cancellation ends it.
pub fn wait(s: &Snap, params: Json) -> Result<Json> {
    use db::salsa::Database;
    let ms = params.get("ms").and_then(Json::as_u64).unwrap_or(1000);
    let end = std::time::Instant::now() + std::time::Duration::from_millis(ms);
    while std::time::Instant::now() < end {
        s.db.unwind_if_revision_cancelled();
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    Ok(json!({ "waited": ms }))
}

/// The `mirdsl.showGraph` and `mirdsl.showGradient` commands for clients
/// without views of their own: the SVG drawing or the gradient text is
/// written to a temporary file and shown (`window/showDocument`, when the
/// client can), and returned.
pub fn show(s: &Snap, shared: &Shared, params: Json, gradient: bool, show: bool) -> Result<Json> {
    let name = str_param(&params, "graph")?;
    let (text, extension, external) = if gradient {
        (gradient_text(s, &name)?, "mir", false)
    } else {
        let g = graph(s, params)?;
        match g["svg"].as_str() {
            Some(svg) => (svg.to_string(), "svg", true),
            None => (
                g["dot"].as_str().unwrap_or_default().to_string(),
                "dot",
                false,
            ),
        }
    };
    let dir = std::env::temp_dir().join(format!("mirdsl-lsp-{}", std::process::id()));
    let what = if gradient { "gradient" } else { "graph" };
    let path = dir.join(format!("{name}.{what}.{extension}"));
    let written = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&path, &text));
    let uri = match written {
        Ok(()) => Some(format!("file://{}", path.display())),
        Err(_) => None,
    };
    if let (true, Some(uri)) = (show, &uri) {
        let id = format!("mirdsl-{}", shared.next_id());
        shared.outbox.request(
            &id,
            "window/showDocument",
            &json!({"uri": uri, "external": external, "takeFocus": true}),
        );
    }
    Ok(json!({ "graph": name, "kind": what, "text": text, "uri": uri }))
}
