//! `mirdsl diff A B`: a structural diff of two graphs, each a MindSpore
//! compile dump (`.ir`), a model (`.mindir`) or a `.mir` file. Each is read as
//! a dump (a `.mir` or `.mindir` file printed as MindSpore's IR, as `mirdsl ir
//! --format ms-ir` prints it); nodes are paired by scope, debug name and
//! structure (`irdump::diff`). Exits 0 when the graphs are equal, 1 when they
//! differ, 2 when a file cannot be read (as diff(1) does).

use std::path::{Path, PathBuf};

use crate::{EXIT_FAILURE, EXIT_OK, EXIT_USAGE};

#[derive(clap::Args)]
pub struct DiffArgs {
    /// The first graph: `.ir`, `.mir` or `.mindir`.
    pub a: PathBuf,
    /// The second graph.
    pub b: PathBuf,
    /// `text` (a report as diff(1) prints one) or `json` (`{"a", "b",
    /// "equal", "changes": [{"kind", "graph", ...}]}`, printed whether or not
    /// the graphs differ).
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    pub format: DiffFormat,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffFormat {
    Text,
    Json,
}

/// The changes as JSON: one object per change, its `kind`
/// (`graph_removed`, `graph_added`, `node_removed`, `node_added`,
/// `node_changed`), its graph, and the nodes as `describe` prints them.
fn json_report(a: &Path, b: &Path, changes: &[irdump::diff::Change]) -> serde_json::Value {
    use irdump::diff::Change;
    let items: Vec<serde_json::Value> = changes
        .iter()
        .map(|c| match c {
            Change::GraphRemoved(g) => serde_json::json!({"kind": "graph_removed", "graph": g}),
            Change::GraphAdded(g) => serde_json::json!({"kind": "graph_added", "graph": g}),
            Change::NodeRemoved { graph, node } => {
                serde_json::json!({"kind": "node_removed", "graph": graph, "node": node})
            }
            Change::NodeAdded { graph, node } => {
                serde_json::json!({"kind": "node_added", "graph": graph, "node": node})
            }
            Change::NodeChanged { graph, a, b, what } => serde_json::json!({
                "kind": "node_changed", "graph": graph, "a": a, "b": b, "what": what
            }),
        })
        .collect();
    serde_json::json!({
        "a": a.display().to_string(),
        "b": b.display().to_string(),
        "equal": changes.is_empty(),
        "changes": items,
    })
}

/// The file as dump text.
fn dump_text(path: &Path) -> Result<String, u8> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("ir") => crate::read(path).map_err(|_| EXIT_USAGE),
        Some("mir") | Some("mindir") => {
            let (root, text) = if path.extension().is_some_and(|e| e == "mindir") {
                let imported = crate::interop_cmd::import_text(path, "weights.safetensors")
                    .map_err(|_| EXIT_USAGE)?;
                (path.with_extension("mir"), imported.text)
            } else {
                (
                    path.to_path_buf(),
                    crate::read(path).map_err(|_| EXIT_USAGE)?,
                )
            };
            let linked = analysis::link::link(
                &root,
                Some(std::sync::Arc::from(text)),
                &analysis::modules::FsLoader,
            );
            if linked.has_errors() {
                crate::render_linked_errors(path, &linked);
                eprintln!(
                    "error: {} has errors; fix them to compare it",
                    path.display()
                );
                return Err(EXIT_USAGE);
            }
            let program = linked.analysis.source.program();
            let types = crate::interop_cmd::node_types(&linked.analysis);
            let text = ir::print_ms::print_program(&program, &types);
            Ok(text)
        }
        _ => {
            eprintln!(
                "error: {}: expected an `.ir` dump, a `.mir` file or a `.mindir` model",
                path.display()
            );
            Err(EXIT_USAGE)
        }
    }
}

pub fn diff_command(args: &DiffArgs) -> u8 {
    let (a, b) = match (dump_text(&args.a), dump_text(&args.b)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(c), _) | (_, Err(c)) => return c,
    };
    let (da, db) = (irdump::parse(&a), irdump::parse(&b));
    for (d, p) in [(&da, &args.a), (&db, &args.b)] {
        if d.graphs.is_empty() {
            eprintln!("error: {} holds no graph", p.display());
            return EXIT_USAGE;
        }
    }
    let changes = irdump::diff::diff(&da, &db);
    if args.format == DiffFormat::Json {
        println!("{}", json_report(&args.a, &args.b, &changes));
        return if changes.is_empty() {
            EXIT_OK
        } else {
            EXIT_FAILURE
        };
    }
    if changes.is_empty() {
        return EXIT_OK;
    }
    print!(
        "{}",
        irdump::diff::report(
            &args.a.display().to_string(),
            &args.b.display().to_string(),
            &changes
        )
    );
    EXIT_FAILURE
}
