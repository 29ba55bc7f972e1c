//! `mirdsl import`, `mirdsl export` and `mirdsl dot`: MindSpore's file formats
//! and graph pictures.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::{EXIT_FAILURE, EXIT_OK, EXIT_USAGE};

#[derive(clap::Args)]
pub struct ImportArgs {
    /// A MindSpore model (`.mindir`) or IR dump (`.ir`).
    pub file: PathBuf,
    /// Where to write the DSL text (default: standard output). Weights go to a
    /// `.safetensors` file beside it, with the same stem.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct ExportArgs {
    /// The `.mir` file.
    pub file: PathBuf,
    /// The graph to export (default: `main`, else the last graph).
    #[arg(long)]
    pub entry: Option<String>,
    /// The `.mindir` file to write.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Fix a symbolic dimension to a size (a static graph); without it a
    /// symbolic dimension is dynamic (-1), and one export serves every size.
    #[arg(long = "dim", value_name = "SYM=N")]
    pub dims: Vec<String>,
}

#[derive(clap::Args)]
pub struct DotArgs {
    /// A `.mir` file (or a `.mindir` / `.ir` file, imported first).
    pub file: PathBuf,
    /// This graph and every graph it reaches (calls, graph values), with the
    /// weights they use (as `mirdsl ir --entry`).
    #[arg(long)]
    pub entry: Option<String>,
    /// Render SVG instead of printing DOT.
    #[arg(long)]
    pub svg: bool,
}

fn is_model(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "mindir" || e == "ir")
}

/// Imports a MindSpore file; `weights_file` is the `.safetensors` name the text loads.
pub(crate) fn import_text(path: &Path, weights_file: &str) -> Result<interop::Imported, u8> {
    let opts = interop::WeightOptions {
        file: weights_file.to_string(),
        ..Default::default()
    };
    let result = match path.extension().and_then(|e| e.to_str()) {
        // A regular file is memory-mapped: its weights (and the external
        // data files of MindSpore's layout for models over 1 GB) are copied
        // to the weights file without being held in memory.
        Some("mindir") if std::fs::metadata(path).is_ok_and(|m| m.is_file()) => {
            interop::mindir::import_file(path, &opts)
        }
        Some("mindir") => {
            let bytes = crate::files::read_input(path, crate::files::MAX_MODEL).map_err(|e| {
                eprintln!("error: {e}");
                EXIT_USAGE
            })?;
            interop::mindir::import(&bytes, &opts)
        }
        Some("ir") => {
            let text = crate::read(path)?;
            interop::ir_text::import(&text, &opts)
        }
        _ => {
            eprintln!(
                "error: {}: expected a `.mindir` model or an `.ir` dump",
                path.display()
            );
            return Err(EXIT_USAGE);
        }
    };
    result.map_err(|e| {
        eprintln!("error: cannot import {}: {e}", path.display());
        EXIT_FAILURE
    })
}

pub fn import_command(args: &ImportArgs) -> u8 {
    if let Some(out) = &args.output {
        if let Err(e) = crate::files::check_output(out) {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    }
    let stem = args
        .output
        .as_deref()
        .unwrap_or(&args.file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "weights".into());
    let weights_name = format!("{stem}.safetensors");
    let imported = match import_text(&args.file, &weights_name) {
        Ok(i) => i,
        Err(code) => return code,
    };
    // The weights live beside the `.mir` file (the current directory when the
    // text goes to standard output).
    let dir = match &args.output {
        Some(out) => out.parent().map(Path::to_path_buf).unwrap_or_default(),
        None => PathBuf::new(),
    };
    if !imported.weights.is_empty() {
        let path = dir.join(&weights_name);
        if let Err(e) = write_weights(&path, &imported.weights) {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
        eprintln!(
            "wrote {} weight{} to {}",
            imported.weights.len(),
            if imported.weights.len() == 1 { "" } else { "s" },
            path.display()
        );
    }
    match &args.output {
        Some(out) => {
            if let Err(e) = crate::files::write_atomic(out, imported.text.as_bytes()) {
                eprintln!("error: {e}");
                return EXIT_USAGE;
            }
        }
        None => print!("{}", imported.text),
    }
    EXIT_OK
}

/// Writes imported weights to a `.safetensors` file, streamed: a weight still
/// in its model file is copied from there. Written beside and renamed, so a
/// failed write leaves no partial file (through a symbolic link, in memory by
/// [`crate::files::write_atomic`], which keeps the link).
fn write_weights(path: &Path, weights: &[(String, tensor::Tensor)]) -> Result<(), String> {
    crate::files::check_output(path)?;
    let items: Vec<(&str, &tensor::Tensor)> =
        weights.iter().map(|(n, t)| (n.as_str(), t)).collect();
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return crate::files::write_atomic(path, &tensor::safetensors::write(&items));
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let write = || -> std::io::Result<()> {
        let file = std::fs::File::create(&tmp)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
        tensor::safetensors::write_to(&mut w, &items)?;
        std::io::Write::flush(&mut w)?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail(e)
    })
}

/// Writes an exported model to `output`, or, when its weights pass
/// MindSpore's limit ([`interop::mindir::external_data_above`]), in
/// MindSpore's external-data layout beside it: `NAME_graph.mindir` and
/// `NAME_variables/data_0`, as `mindspore.export` would.
fn write_model(mut model: interop::proto::ModelProto, output: &Path) -> Result<(), String> {
    let above = interop::mindir::external_data_above();
    if !interop::mindir::needs_external_data(&model, above) {
        return crate::files::write_atomic(output, &interop::mindir::encode(&model));
    }
    let (graph, data, location) = interop::mindir::external_layout(output);
    crate::files::check_output(&graph)?;
    interop::mindir::write_external_data(&mut model, &data, &location)
        .map_err(|e| format!("cannot write {}: {e}", data.display()))?;
    crate::files::write_atomic(&graph, &interop::mindir::encode(&model))?;
    eprintln!(
        "the weights take more than {}: wrote MindSpore's external-data layout, {} and {}",
        tensor::limits::format_bytes(above as usize),
        graph.display(),
        data.display()
    );
    Ok(())
}

pub fn export_command(args: &ExportArgs) -> u8 {
    if let Err(e) = crate::files::check_output(&args.output) {
        eprintln!("error: {e}");
        return EXIT_USAGE;
    }
    // The file with everything it imports, as one self-contained model.
    let linked = match crate::link_clean(&args.file, "to export it") {
        Ok(l) => l,
        Err(c) => return c,
    };
    if let Some(name) = &args.entry {
        if let Err(code) = crate::check_entry(&args.file, &linked, name) {
            return code;
        }
    }
    let base = args
        .file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let dims = match exec::args::parse_dims(&args.dims) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {}", e.message);
            return EXIT_USAGE;
        }
    };
    let symbols = interop::export_dims::symbols(&linked.analysis);
    let mut unknown: Vec<&String> = dims.keys().filter(|k| !symbols.contains(k)).collect();
    unknown.sort();
    if let Some(k) = unknown.first() {
        let hint = ops::similar_names(k, symbols.iter().map(String::as_str))
            .first()
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        eprintln!(
            "error: `--dim {k}=...`: no annotation of {} names a dimension `{k}`{hint} (its dimensions: {})",
            args.file.display(),
            if symbols.is_empty() { "none".to_string() } else { symbols.join(", ") }
        );
        return EXIT_USAGE;
    }
    let opts = interop::mindir::ExportOptions {
        entry: args.entry.clone(),
        base_dir: base,
        dims: dims.into_iter().map(|(k, v)| (k, v as i64)).collect(),
    };
    match interop::mindir::export_program(&linked.analysis, &opts) {
        Ok(model) => match write_model(model, &args.output) {
            Ok(()) => EXIT_OK,
            Err(e) => {
                eprintln!("error: {e}");
                EXIT_USAGE
            }
        },
        Err(interop::mindir::ExportError::Check(diagnostics)) => {
            crate::render::human(&[crate::render::Checked {
                path: args.file.display().to_string(),
                text: linked.graph.modules[0].text.to_string(),
                diagnostics,
            }]);
            eprintln!(
                "error: {} has errors; fix them to export it",
                args.file.display()
            );
            EXIT_FAILURE
        }
        Err(interop::mindir::ExportError::UnsupportedAt(message, span)) => {
            let (m, range) = linked.locate(span);
            let module = &linked.graph.modules[m];
            let path = if m == 0 {
                args.file.display().to_string()
            } else {
                crate::render::display_path(&module.path)
            };
            crate::render::error_at(
                &path,
                &module.text,
                range,
                &format!("cannot export {}: {message}", args.file.display()),
                "MindSpore 2.10 cannot run this (or its gradient) as written",
                &["note: docs/language.md §9 lists what `mirdsl export` cannot write".to_string()],
            );
            EXIT_FAILURE
        }
        Err(e) => {
            eprintln!("error: cannot export {}: {e}", args.file.display());
            EXIT_FAILURE
        }
    }
}

/// The types printers annotate nodes with: every value inference saw for the
/// node, joined.
pub fn node_types(
    analysis: &analysis::FileAnalysis,
) -> impl Fn(&str, ir::NodeId) -> Option<ir::AbsVal> + '_ {
    move |item, node| {
        let values = analysis.values_of(item, node);
        let mut it = values.into_iter();
        let first = it.next()?;
        Some(it.fold(first, |acc, v| acc.join(&v).unwrap_or(ir::AbsVal::Any)))
    }
}

/// What `--entry G` shows (`ir`, `dot`): `entry` and every top-level graph
/// it reaches (calls and graph values, transitively), in the program's order,
/// with only the weights those graphs use.
pub fn entry_program(program: &ir::Program, entry: &str) -> ir::Program {
    reached_from(program, &[entry])
}

/// The graphs of `program` that `roots` reach (the roots included), in
/// program order, with the weights those graphs use.
pub fn reached_from(program: &ir::Program, roots: &[&str]) -> ir::Program {
    fn refs<'v>(v: &'v ir::Value, graphs: &mut Vec<&'v str>, weights: &mut HashSet<&'v str>) {
        match v {
            ir::Value::Global(name) => graphs.push(name),
            ir::Value::Tuple(items) => items.iter().for_each(|i| refs(i, graphs, weights)),
            ir::Value::Meta(
                ir::MetaFn::Grad { wrt: Some(items) }
                | ir::MetaFn::ValueAndGrad { wrt: Some(items) },
            ) => weights.extend(items.iter().filter_map(|w| match w {
                ir::WrtItem::Weight(name) => Some(name.as_str()),
                ir::WrtItem::Param(_) => None,
            })),
            _ => {}
        }
    }
    let bodies: HashMap<&str, &ir::Body> = program
        .graphs
        .iter()
        .map(|(n, b)| (n.as_str(), &**b))
        .collect();
    let mut keep: Vec<&str> = roots.to_vec();
    let mut kept: HashSet<&str> = roots.iter().copied().collect();
    let mut weights: HashSet<&str> = HashSet::new();
    let mut i = 0;
    while i < keep.len() {
        if let Some(body) = bodies.get(keep[i]) {
            let mut graphs = Vec::new();
            for n in &body.nodes {
                match &n.kind {
                    ir::NodeKind::Const(v) => refs(v, &mut graphs, &mut weights),
                    ir::NodeKind::Weight(name) => {
                        weights.insert(name);
                    }
                    _ => {}
                }
            }
            for g in graphs {
                if bodies.contains_key(g) && kept.insert(g) {
                    keep.push(g);
                }
            }
        }
        i += 1;
    }
    ir::Program {
        graphs: program
            .graphs
            .iter()
            .filter(|(n, _)| kept.contains(n.as_str()))
            .cloned()
            .collect(),
        weights: program
            .weights
            .iter()
            .filter(|w| weights.contains(w.name.as_str()))
            .cloned()
            .collect(),
    }
}

pub fn dot_command(args: &DotArgs) -> u8 {
    let text = if is_model(&args.file) {
        match import_text(&args.file, "weights.safetensors") {
            Ok(i) => i.text,
            Err(c) => return c,
        }
    } else {
        match crate::read(&args.file) {
            Ok(t) => t,
            Err(c) => return c,
        }
    };
    // A `.mir` file is read with the files it imports (a model file's text
    // imports nothing).
    let root = if is_model(&args.file) {
        args.file.with_extension("mir")
    } else {
        args.file.clone()
    };
    let linked = analysis::link::link(
        &root,
        Some(std::sync::Arc::from(text)),
        &analysis::modules::FsLoader,
    );
    let unparsed = linked
        .graph
        .modules
        .iter()
        .any(|m| !m.parse.errors().is_empty());
    if unparsed {
        crate::render_linked_errors(&args.file, &linked);
        eprintln!("error: {} does not parse", args.file.display());
        return EXIT_FAILURE;
    }
    let analysis = &linked.analysis;
    let mut program = analysis.source.program();
    if let Some(name) = &args.entry {
        if let Err(code) = crate::check_entry(&args.file, &linked, name) {
            return code;
        }
        program = entry_program(&program, name);
    } else {
        // Every graph, and only the weights they use (an unused one would
        // be drawn alone).
        let all: Vec<String> = program.graphs.iter().map(|(n, _)| n.clone()).collect();
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        program = reached_from(&program, &all);
    }
    let types = node_types(analysis);
    let dot = ir::print_dot::print_program(&program, &types);
    if args.svg {
        match graphview::dot_to_svg(&dot) {
            Some(svg) => print!("{svg}"),
            None => {
                eprintln!("error: SVG rendering not available yet for this graph (print DOT without --svg and render it with Graphviz: `dot -Tsvg`)");
                return EXIT_FAILURE;
            }
        }
    } else {
        print!("{dot}");
    }
    EXIT_OK
}
