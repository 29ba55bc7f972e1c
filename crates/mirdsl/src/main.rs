//! `mirdsl`: the command-line face of the MindIR DSL tools.

mod diff;
mod files;
mod grad_cmd;
mod graph_diff;
mod interop_cmd;
mod passes;
mod render;
mod run;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Syntax trees, IR graphs and tensors are many small allocations; mimalloc
/// handles them markedly faster than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "mirdsl",
    version,
    about = "Write, read, check and run MindIR graphs as text."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the Language Server Protocol over stdin/stdout.
    Lsp {
        /// Accepted for clients that pass it (VS Code's); stdio is the only transport.
        #[arg(long)]
        stdio: bool,
        /// Run one `mirdsl/run` job (JSON on stdin, result on stdout): the
        /// server's child process for runs it can stop.
        #[arg(long, hide = true)]
        run_worker: bool,
        #[arg(long, value_name = "SIZE", help = run::max_memory_help("The most memory tensors may take at once in a `mirdsl/run`; W0003 warns against it too"))]
        max_memory: Option<String>,
    },
    /// Serve the Debug Adapter Protocol over stdin/stdout: debug a graph
    /// (breakpoints, stepping, tensors, NaN stops) from VS Code or nvim-dap.
    Dap,
    /// Format `.mir` files in place (directories are searched for `.mir` files;
    /// `-` formats standard input to standard output).
    Fmt {
        /// Files or directories, or `-` for standard input.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Change nothing: print a unified diff of what formatting would
        /// change (to stdout) and exit 1 if anything would.
        #[arg(long)]
        check: bool,
    },
    /// Print the lossless syntax tree of a file (a debug view).
    Parse { file: PathBuf },
    /// Type- and shape-check files (directories are searched for `.mir` files).
    Check {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = CheckFormat::Human)]
        format: CheckFormat,
        #[arg(long, value_name = "SIZE", help = run::max_memory_help("Warn (W0003) where a tensor's static size exceeds this budget"))]
        max_memory: Option<String>,
    },
    /// Print the lowered MindIR of a file's graphs.
    Ir {
        file: PathBuf,
        /// This graph and every graph it reaches (calls, graph values), with the
        /// weights they use.
        #[arg(long)]
        entry: Option<String>,
        #[arg(long, value_enum, default_value_t = IrFormat::Mir)]
        format: IrFormat,
    },
    /// Run a graph on the CPU and print its result.
    Run(run::RunArgs),
    /// Print the gradient program of a graph (DSL text that checks and runs on its own).
    Grad {
        file: PathBuf,
        /// The graph to differentiate.
        #[arg(long)]
        entry: String,
        /// Differentiate with respect to these parameters (names or 0-based
        /// positions) and weights, in this order (`weights`: every float weight
        /// the graph uses); default: the first parameter.
        #[arg(long, value_delimiter = ',')]
        wrt: Vec<String>,
        /// Print the vector-Jacobian product (`vjp`) instead: `(output, backprop)`.
        #[arg(long, conflicts_with = "wrt")]
        vjp: bool,
    },
    /// Turn a MindSpore model (`.mindir`) or IR dump (`.ir`) into DSL text.
    Import(interop_cmd::ImportArgs),
    /// Write a graph as a MindSpore model (`.mindir`) that MindSpore 2.10 loads.
    Export(interop_cmd::ExportArgs),
    /// Print a file's graphs as Graphviz DOT (or SVG), in MindSpore's style.
    Dot(interop_cmd::DotArgs),
    /// List a folder of MindSpore compile dumps (`save_graphs`) as a pipeline:
    /// stages in order, nodes per stage, primitives appearing and disappearing.
    Passes(passes::PassesArgs),
    /// A structural diff of two graphs (`.ir`, `.mir` or `.mindir`): nodes
    /// paired by scope, debug name and structure. Exit 0 equal, 1 different.
    Diff(graph_diff::DiffArgs),
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum CheckFormat {
    Human,
    Json,
    Github,
    Sarif,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum IrFormat {
    /// DSL text (parses and checks again).
    Mir,
    /// The text form of MindSpore's `.ir` dumps.
    MsIr,
    /// Graphviz DOT in the style of MindSpore's `.dot` files.
    Dot,
}

/// Exit codes shared by every subcommand.
pub const EXIT_OK: u8 = 0;
pub const EXIT_FAILURE: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Like other Unix tools, end quietly when the reader of our output goes away
    // (`mirdsl ir big.mir | head`) instead of failing to print. Not the language
    // server: it writes jobs to run workers that a cancellation kills, and a
    // write to a dead worker must be an error it handles, not its end.
    #[cfg(unix)]
    if !matches!(cli.command, Command::Lsp { .. }) {
        // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    let code = match cli.command {
        // 0 after `shutdown` and `exit`; 1 for `exit` without `shutdown`.
        Command::Lsp {
            run_worker: true, ..
        } => {
            // Inherited from the server: large tensors want huge pages back.
            #[cfg(target_os = "linux")]
            // SAFETY: a prctl on this process with constant arguments.
            unsafe {
                libc::prctl(libc::PR_SET_THP_DISABLE, 0, 0, 0, 0);
            }
            lsp::run_worker() as u8
        }
        Command::Lsp { max_memory, .. } => {
            // No transparent huge pages for the server: its allocator
            // returns memory between edits and faults it back in, and each
            // fault of a huge page zeroes 2 MiB on the edit's path (bench
            // lsp, 1k lines: max latency 11-15 ms -> 4-6 ms, RSS 36 -> 20 MB).
            // Its run workers, which do the numeric work, re-enable them.
            #[cfg(target_os = "linux")]
            // SAFETY: a prctl on this process with constant arguments.
            unsafe {
                libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
            }
            let budget = match max_memory.as_deref().map(tensor::limits::parse_size) {
                None => None,
                Some(Ok(n)) => Some(n),
                Some(Err(e)) => {
                    eprintln!("error: --max-memory: {e}");
                    return ExitCode::from(EXIT_USAGE);
                }
            };
            if let Some(n) = budget {
                analysis::limits::set_memory_budget(n);
            }
            lsp::run_stdio(budget) as u8
        }
        Command::Dap => dap::run_stdio() as u8,
        Command::Fmt { paths, check } => fmt_command(&paths, check),
        Command::Parse { file } => parse_command(&file),
        Command::Check {
            paths,
            format,
            max_memory,
        } => {
            if let Some(m) = max_memory {
                match tensor::limits::parse_size(&m) {
                    Ok(n) => analysis::limits::set_memory_budget(n),
                    Err(e) => {
                        eprintln!("error: --max-memory: {e}");
                        return ExitCode::from(EXIT_USAGE);
                    }
                }
            }
            check_command(&paths, format)
        }
        Command::Ir {
            file,
            entry,
            format,
        } => ir_command(&file, entry.as_deref(), format),
        Command::Run(args) => run::run_command(&args),
        Command::Grad {
            file,
            entry,
            wrt,
            vjp,
        } => grad_cmd::grad_command(&file, &entry, &wrt, vjp),
        Command::Import(args) => interop_cmd::import_command(&args),
        Command::Export(args) => interop_cmd::export_command(&args),
        Command::Dot(args) => interop_cmd::dot_command(&args),
        Command::Passes(args) => passes::passes_command(&args),
        Command::Diff(args) => graph_diff::diff_command(&args),
    };
    ExitCode::from(code)
}

/// The text of a source file; on failure the error is printed and the exit
/// code returned.
pub(crate) fn read(path: &Path) -> Result<String, u8> {
    files::read_text(path).map_err(|e| {
        eprintln!("error: {e}");
        EXIT_USAGE
    })
}

/// Expands directories into the `.mir` files below them, sorted.
fn collect_mir_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, u8> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.path());
        for entry in entries {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out)?;
            } else if path.extension().is_some_and(|e| e == "mir") {
                out.push(path);
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let before = files.len();
            walk(path, &mut files).map_err(|e| {
                eprintln!("error: cannot read directory {}: {e}", path.display());
                EXIT_USAGE
            })?;
            if files.len() == before {
                eprintln!("warning: no `.mir` files under {}", path.display());
            }
        } else if path.exists() {
            files.push(path.clone());
        } else {
            eprintln!("error: no such file or directory: {}", path.display());
            return Err(EXIT_USAGE);
        }
    }
    Ok(files)
}

fn fmt_command(paths: &[PathBuf], check: bool) -> u8 {
    if paths.iter().any(|p| p.as_os_str() == "-") {
        if paths.len() > 1 {
            eprintln!("error: `mirdsl fmt -` formats standard input alone; give no other files");
            return EXIT_USAGE;
        }
        return fmt_stdin(check);
    }
    let files = match collect_mir_files(paths) {
        Ok(files) => files,
        Err(code) => return code,
    };
    let mut code = EXIT_OK;
    for file in files {
        let text = match read(&file) {
            Ok(text) => text,
            Err(c) => return c,
        };
        match fmt::format(&text) {
            Err(errors) => {
                render::syntax_errors(&file, &text, &errors);
                eprintln!(
                    "error: not formatting {}: it has syntax errors (fix them first)",
                    file.display()
                );
                code = EXIT_FAILURE;
            }
            Ok(formatted) if formatted == text => {}
            Ok(formatted) if check => {
                let path = file.display();
                print!(
                    "{}",
                    diff::unified(
                        &format!("a/{path}"),
                        &format!("b/{path}"),
                        &text,
                        &formatted
                    )
                );
                eprintln!("{path}: not formatted");
                code = EXIT_FAILURE;
            }
            Ok(formatted) => {
                // Atomically: an error leaves the file as it was.
                if let Err(e) = files::write_atomic(&file, formatted.as_bytes()) {
                    eprintln!("error: {e}");
                    return EXIT_USAGE;
                }
                println!("formatted {}", file.display());
            }
        }
    }
    code
}

/// `mirdsl fmt -`: standard input formatted to standard output, or with
/// `--check` the diff from standard input to its formatted text.
fn fmt_stdin(check: bool) -> u8 {
    use std::io::Read;
    let mut bytes = Vec::new();
    let limit = files::MAX_SOURCE;
    if let Err(e) = std::io::stdin()
        .lock()
        .take(limit + 1)
        .read_to_end(&mut bytes)
    {
        eprintln!("error: cannot read standard input: {e}");
        return EXIT_USAGE;
    }
    if bytes.len() as u64 > limit {
        eprintln!(
            "error: standard input is larger than {} MiB, the most a source may be",
            limit >> 20
        );
        return EXIT_USAGE;
    }
    let Ok(text) = String::from_utf8(bytes) else {
        eprintln!("error: standard input is not UTF-8");
        return EXIT_USAGE;
    };
    let name = Path::new("<stdin>");
    match fmt::format(&text) {
        Err(errors) => {
            render::syntax_errors(name, &text, &errors);
            eprintln!("error: not formatting standard input: it has syntax errors");
            EXIT_FAILURE
        }
        Ok(formatted) if check => {
            if formatted == text {
                EXIT_OK
            } else {
                print!("{}", diff::unified("<stdin>", "<stdin>", &text, &formatted));
                EXIT_FAILURE
            }
        }
        Ok(formatted) => {
            print!("{formatted}");
            EXIT_OK
        }
    }
}

fn parse_command(file: &Path) -> u8 {
    let text = match read(file) {
        Ok(text) => text,
        Err(c) => return c,
    };
    let parse = syntax::parse(&text);
    print!("{:#?}", parse.syntax_node());
    if parse.errors().is_empty() {
        EXIT_OK
    } else {
        render::syntax_errors(file, &text, parse.errors());
        EXIT_FAILURE
    }
}

fn check_command(paths: &[PathBuf], format: CheckFormat) -> u8 {
    let files = match collect_mir_files(paths) {
        Ok(files) => files,
        Err(code) => return code,
    };
    // Each file must be a readable regular UTF-8 file (not a device or a
    // FIFO, which the workspace's own reads would block on or read forever).
    for file in &files {
        if let Err(c) = read(file) {
            return c;
        }
    }
    let mut checked = Vec::new();
    let mut internal = 0;
    // MindSpore compile dumps: imported, then checked as the text imported
    // (shown under `NAME.mir`).
    let (dumps, files): (Vec<PathBuf>, Vec<PathBuf>) = files
        .into_iter()
        .partition(|f| f.extension().is_some_and(|e| e == "ir"));
    for dump in &dumps {
        let (root, text) = match source(dump) {
            Ok(s) => s,
            Err(_) => {
                internal += 1;
                continue;
            }
        };
        let linked = analysis::link::link(
            &root,
            Some(std::sync::Arc::from(text.as_str())),
            &analysis::modules::FsLoader,
        );
        checked.push(render::Checked {
            path: root.display().to_string(),
            text,
            diagnostics: linked.diagnostics.first().cloned().unwrap_or_default(),
        });
    }
    // The language server's pipeline (the incremental database, as one
    // workspace: files follow their imports), so that CI and the editor say
    // the same thing.
    for c in ide::check_paths(&files) {
        for f in &c.failures {
            eprintln!("error: {}: {}", c.path.display(), ide::failure_message(f));
            internal += 1;
        }
        checked.push(render::Checked {
            path: c.path.display().to_string(),
            text: c.text,
            diagnostics: c.diagnostics,
        });
    }
    let errors = checked
        .iter()
        .flat_map(|c| &c.diagnostics)
        .filter(|d| d.severity == analysis::Severity::Error)
        .count();
    let warnings = checked.iter().map(|c| c.diagnostics.len()).sum::<usize>() - errors;
    match format {
        CheckFormat::Human => {
            render::human(&checked);
            if errors + warnings > 0 {
                eprintln!(
                    "{} file{} checked: {errors} error{}, {warnings} warning{}",
                    checked.len(),
                    if checked.len() == 1 { "" } else { "s" },
                    if errors == 1 { "" } else { "s" },
                    if warnings == 1 { "" } else { "s" }
                );
            }
        }
        CheckFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&render::json(&checked)).unwrap()
        ),
        CheckFormat::Github => print!("{}", render::github(&checked)),
        CheckFormat::Sarif => println!(
            "{}",
            serde_json::to_string_pretty(&render::sarif(&checked)).unwrap()
        ),
    }
    if errors + internal > 0 {
        EXIT_FAILURE
    } else {
        EXIT_OK
    }
}

fn ir_command(file: &Path, entry: Option<&str>, format: IrFormat) -> u8 {
    let linked = match link_clean(file, "to see its IR") {
        Ok(l) => l,
        Err(code) => return code,
    };
    let analysis = &linked.analysis;
    let mut program = analysis.source.program();
    if let Some(name) = entry {
        if let Err(code) = check_entry(file, &linked, name) {
            return code;
        }
        program = interop_cmd::entry_program(&program, name);
    }
    let arity = |name: &str| ops::lookup(name).map(|o| o.input_count());
    let out = match format {
        IrFormat::Mir => {
            let mut out = String::new();
            for w in &program.weights {
                out.push_str(&format!("param {}: {} = ...\n", w.name, w.ty));
            }
            for (_, body) in &program.graphs {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&ir::print::print_body_with(body, &arity));
            }
            out
        }
        IrFormat::MsIr => match entry {
            Some(name) => ir::print_ms::print_program_entry(
                &program,
                name,
                &interop_cmd::node_types(analysis),
            ),
            None => ir::print_ms::print_program(&program, &interop_cmd::node_types(analysis)),
        },
        IrFormat::Dot => ir::print_dot::print_program(&program, &interop_cmd::node_types(analysis)),
    };
    print!("{out}");
    EXIT_OK
}

/// The DSL text of `file` and the path it is linked under: a `.mir` file as
/// it is; a MindSpore compile dump (`.ir`) imported first (as `mirdsl import`
/// would write it, beside the dump as `NAME.mir`; its weights are zeros, as
/// a dump holds no values).
pub(crate) fn source(file: &Path) -> Result<(PathBuf, String), u8> {
    if file.extension().is_some_and(|e| e == "ir") {
        let imported = interop_cmd::import_text(file, "weights.safetensors")?;
        return Ok((file.with_extension("mir"), imported.text));
    }
    Ok((file.to_path_buf(), read(file)?))
}

/// Reads `file` with every file it imports and links them into one program
/// (`docs/language.md` §10); on errors in any of them, prints them and says
/// what could not be done.
pub(crate) fn link_clean(file: &Path, purpose: &str) -> Result<analysis::link::Linked, u8> {
    let (root, text) = source(file)?;
    let linked = analysis::link::link(
        &root,
        Some(std::sync::Arc::from(text)),
        &analysis::modules::FsLoader,
    );
    if linked.has_errors() {
        render_linked_errors(file, &linked);
        let n = linked
            .diagnostics
            .iter()
            .flatten()
            .filter(|d| d.severity == analysis::Severity::Error)
            .count();
        eprintln!(
            "error: {} has {n} error{}; fix {} {purpose}",
            file.display(),
            if n == 1 { "" } else { "s" },
            if n == 1 { "it" } else { "them" }
        );
        return Err(EXIT_FAILURE);
    }
    Ok(linked)
}

/// Prints the errors of every file of a linked program (the root by the
/// path it was given, the others by their own).
pub(crate) fn render_linked_errors(root: &Path, linked: &analysis::link::Linked) {
    let checked: Vec<render::Checked> = linked
        .graph
        .modules
        .iter()
        .zip(&linked.diagnostics)
        .enumerate()
        .filter_map(|(m, (module, ds))| {
            let errors: Vec<_> = ds
                .iter()
                .filter(|d| d.severity == analysis::Severity::Error)
                .cloned()
                .collect();
            (!errors.is_empty()).then(|| render::Checked {
                path: if m == 0 {
                    root.display().to_string()
                } else {
                    module.path.display().to_string()
                },
                text: module.text.to_string(),
                diagnostics: errors,
            })
        })
        .collect();
    render::human(&checked);
}

/// `"; did you mean `x`?"` (or `` `x` or `y` ``) when `name` is close to one
/// of `candidates`; empty otherwise.
pub(crate) fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> String {
    let close = ops::similar_names(name, candidates);
    match close.as_slice() {
        [] => String::new(),
        [one] => format!("; did you mean `{one}`?"),
        [rest @ .., last] => {
            let rest: Vec<String> = rest.iter().map(|n| format!("`{n}`")).collect();
            format!("; did you mean {} or `{last}`?", rest.join(", "))
        }
    }
}

/// A list of names for a message: `` `a`, `b`, `c` `` and "and N more" past `max`.
fn name_list(names: &[String], max: usize) -> String {
    let shown: Vec<String> = names.iter().take(max).map(|n| format!("`{n}`")).collect();
    if names.len() > max {
        format!("{}, and {} more", shown.join(", "), names.len() - max)
    } else {
        shown.join(", ")
    }
}

/// How an imported module is named in notes: `@std/nn/dense.mir` for the
/// standard library's, else its file name.
fn import_name(linked: &analysis::link::Linked, m: usize) -> String {
    let path = &linked.graph.modules[m].path;
    let std_rel = analysis::modules::std_root()
        .and_then(|root| path.strip_prefix(root).ok())
        .and_then(|rel| rel.to_str());
    match std_rel {
        Some(rel) => format!("{}{rel}", analysis::modules::STD_PREFIX),
        None if path.starts_with(analysis::modules::STD_PREFIX) => path.display().to_string(),
        None => linked.graph.display_name(m),
    }
}

/// The graphs of a linked program: the root file's own, in source order, and
/// those of each imported file (by its file name), with their linked names.
pub(crate) struct GraphNames {
    pub own: Vec<String>,
    pub imported: Vec<(String, Vec<String>)>,
}

impl GraphNames {
    pub fn of(linked: &analysis::link::Linked) -> GraphNames {
        let source = &linked.analysis.source;
        let graphs_of = |m: usize| -> Vec<String> {
            let tree = linked.graph.modules[m].parse.tree();
            analysis::link::own_items(&tree)
                .into_iter()
                .filter(|(_, is_graph, _)| *is_graph)
                .map(|(name, _, _)| format!("{}{name}", linked.prefixes[m]))
                .filter(|name| source.graphs.contains_key(name))
                .collect()
        };
        let own = graphs_of(0);
        let mut imported: Vec<(String, Vec<String>)> = Vec::new();
        for m in 1..linked.graph.modules.len() {
            let names: Vec<String> = graphs_of(m)
                .into_iter()
                .filter(|n| !own.contains(n))
                .collect();
            if !names.is_empty() {
                imported.push((import_name(linked, m), names));
            }
        }
        GraphNames { own, imported }
    }

    fn all(&self) -> impl Iterator<Item = &str> {
        self.own
            .iter()
            .chain(self.imported.iter().flat_map(|(_, names)| names))
            .map(String::as_str)
    }

    /// "no graph `x` in FILE; did you mean `y`?" with notes naming the file's
    /// own graphs, then the imported ones briefly, per file.
    pub fn missing(&self, file: &Path, name: &str) -> String {
        let mut out = format!(
            "error: no graph `{name}` in {}{}",
            file.display(),
            did_you_mean(name, self.all())
        );
        if self.own.is_empty() {
            out.push_str(&format!(
                "\nnote: {} has no graphs of its own",
                file.display()
            ));
        } else {
            out.push_str(&format!(
                "\nnote: the graphs of {}: {}",
                file.display(),
                name_list(&self.own, 12)
            ));
        }
        const FILES: usize = 4;
        for (module, names) in self.imported.iter().take(FILES) {
            out.push_str(&format!(
                "\nnote: imported from {module}: {}",
                name_list(names, 3)
            ));
        }
        if self.imported.len() > FILES {
            let rest: usize = self.imported[FILES..].iter().map(|(_, n)| n.len()).sum();
            out.push_str(&format!(
                "\nnote: and {rest} graph{} from {} more imported files",
                if rest == 1 { "" } else { "s" },
                self.imported.len() - FILES
            ));
        }
        out
    }
}

/// Checks that `name` is a graph of the linked program; if not, prints why
/// (with what it might have meant) and gives the usage exit code.
pub(crate) fn check_entry(
    file: &Path,
    linked: &analysis::link::Linked,
    name: &str,
) -> Result<(), u8> {
    if linked.analysis.source.graphs.contains_key(name) {
        return Ok(());
    }
    eprintln!("{}", GraphNames::of(linked).missing(file, name));
    Err(EXIT_USAGE)
}
