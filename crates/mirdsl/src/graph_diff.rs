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
