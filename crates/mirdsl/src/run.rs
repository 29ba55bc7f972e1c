//! `mirdsl run`: check a file, then run one of its graphs (spec §9).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{
    self,
    termcolor::{ColorChoice, StandardStream},
};

use crate::{EXIT_FAILURE, EXIT_OK, EXIT_USAGE};

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The `.mir` file.
    pub file: PathBuf,
    /// The graph to run (default: `main`, else the file's last graph).
    #[arg(long)]
    pub entry: Option<String>,
    /// An argument: NAME (a parameter's name or 0-based position) = a literal
    /// scalar, a tensor literal, a `.npy` path, or `zeros`/`ones`/`random`
    /// (shaped from the parameter's annotation).
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    /// The size of a symbolic dimension, for `zeros`/`ones`/`random`.
    #[arg(long = "dim", value_name = "SYM=N")]
    pub dims: Vec<String>,
    /// Where primitives run: `auto` is the GPU when a CUDA driver and device
    /// are present, else the CPU.
    #[arg(long, value_enum, default_value_t = DeviceArg::Cpu)]
    pub device: DeviceArg,
    /// Print the device chosen and, on the GPU, which primitives ran there and
    /// which fell back to the CPU (to stderr).
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// How to print the result.
    #[arg(long, value_enum, default_value_t = RunFormat::Text)]
    pub format: RunFormat,
    /// Also write every output tensor as DIR/out_0.npy, out_1.npy, ... (tuples flattened in order).
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// Fail at the first primitive whose result contains a NaN.
    #[arg(long)]
    pub check_nan: bool,
    /// The most graph calls in progress at once before "recursion too deep".
    #[arg(long, value_name = "N", default_value_t = exec::DEFAULT_MAX_DEPTH)]
    pub max_depth: usize,
    /// Print the run time and peak tensor memory to stderr.
    #[arg(long)]
    pub stats: bool,
    /// Run the graph N times with the same arguments: weight updates of one run
    /// are seen by the next (a training loop). With N > 1 the results are printed
    /// as a JSON array (text: one block per run).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub steps: usize,
    /// Before running, set weights from this `.safetensors` file, MindSpore
    /// `.ckpt` checkpoint, or folder of NAME.npy files (by MindSpore's parameter
    /// names; dtypes and shapes must match). May be given more than once: the
    /// files are read in order (a dump's checkpoint, then the constants the
    /// dump printed in part).
    #[arg(long, value_name = "FILE")]
    pub load_weights: Vec<PathBuf>,
    /// After running, write every weight's value to this file: a MindSpore
    /// `.ckpt` checkpoint for a `.ckpt` path, a folder of NAME.npy files for a
    /// directory or a path ending in `/`, a `.safetensors` file otherwise.
    #[arg(long, value_name = "FILE")]
    pub save_weights: Option<PathBuf>,
    #[arg(long, value_name = "SIZE", help = max_memory_help("The most memory tensors may take at once; a primitive, weight or argument beyond it is refused"))]
    pub max_memory: Option<String>,
    /// Stop the run after this long (`30s`, `500ms`, `2m`, or seconds) with an
    /// error; counted from the start of the command, which ends at most 2 s later
    /// whatever it is doing.
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
}

/// `--max-memory`'s help, with the default on this machine.
pub fn max_memory_help(what: &str) -> String {
    format!(
        "{what}: bytes, or with K, M, G or T (powers of 1024), e.g. `8G` [default: {}; ${} sets it]",
        tensor::limits::describe_default(),
        tensor::limits::MAX_MEMORY_ENV
    )
}

/// A duration: `30s`, `500ms`, `2m`, `1h`, or a number of seconds.
fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = || {
        format!(
            "`{text}` is not a duration: write e.g. `30s`, `500ms`, `2m` or a number of seconds"
        )
    };
    let value: f64 = num.parse().map_err(|_| bad())?;
    let seconds = match unit.trim() {
        "" | "s" => value,
        "ms" => value / 1000.0,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(bad()),
    };
    std::time::Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(bad)
}

/// Set by the first Ctrl-C (SIGINT) while a graph runs; a second one ends the
/// process at once.
static INTERRUPT: std::sync::OnceLock<std::sync::Arc<std::sync::atomic::AtomicBool>> =
    std::sync::OnceLock::new();

/// The exit code after Ctrl-C, as shells report a process ended by SIGINT.
pub const EXIT_INTERRUPTED: u8 = 130;

#[cfg(unix)]
extern "C" fn on_sigint(_: libc::c_int) {
    if let Some(flag) = INTERRUPT.get() {
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    // SAFETY: `signal` is async-signal-safe; the next Ctrl-C kills the process.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
    }
}

/// The flag Ctrl-C sets, with its handler installed.
fn interrupt_flag() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    let flag = INTERRUPT
        .get_or_init(|| std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)))
        .clone();
    #[cfg(unix)]
    // SAFETY: installing a handler that only stores to an atomic and resets itself.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
    flag
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum DeviceArg {
    Cpu,
    Gpu,
    Auto,
}

impl DeviceArg {
    pub fn choice(self) -> gpu::DeviceChoice {
        match self {
            DeviceArg::Cpu => gpu::DeviceChoice::Cpu,
            DeviceArg::Gpu => gpu::DeviceChoice::Gpu,
            DeviceArg::Auto => gpu::DeviceChoice::Auto,
        }
    }
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum RunFormat {
    /// Readable, NumPy-like.
    Text,
    /// One JSON value (spec §9).
    Json,
}

/// Runs `mirdsl run`; a panic anywhere is reported as an internal error.
pub fn run_command(args: &RunArgs) -> u8 {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_inner(args))) {
        Ok(code) => code,
        Err(p) => {
            let message = if let Some(s) = p.downcast_ref::<&str>() {
                s.to_string()
            } else if let Some(s) = p.downcast_ref::<String>() {
                s.clone()
            } else {
                "(no message)".into()
            };
            eprintln!(
                "error: internal error: {message}\nnote: this is a bug in mirdsl; please report it"
            );
            EXIT_FAILURE
        }
    }
}

fn color() -> ColorChoice {
    if std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none()
    {
        ColorChoice::Auto
    } else {
        ColorChoice::Never
    }
}

fn run_inner(a: &RunArgs) -> u8 {
    let max_memory = match a.max_memory.as_deref().map(tensor::limits::parse_size) {
        None => match std::env::var(tensor::limits::MAX_MEMORY_ENV) {
            Ok(v) if tensor::limits::parse_size(&v).is_err() => {
                eprintln!(
                    "error: ${}: {}",
                    tensor::limits::MAX_MEMORY_ENV,
                    tensor::limits::parse_size(&v).unwrap_err()
                );
                return EXIT_USAGE;
            }
            _ => tensor::limits::default_max_memory(),
        },
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("error: --max-memory: {e}");
            return EXIT_USAGE;
        }
    };
    let timeout = match a.timeout.as_deref().map(parse_duration) {
        None => None,
        Some(Ok(d)) => Some(d),
        Some(Err(e)) => {
            eprintln!("error: --timeout: {e}");
            return EXIT_USAGE;
        }
    };
    analysis::limits::set_memory_budget(max_memory);
    let start = Instant::now();
    if let Some(t) = timeout {
        // The executor stops itself at the deadline; this bounds the rest too
        // (checking the file, a kernel that does not poll), a little later.
        let limit = a.timeout.clone().unwrap_or_default();
        std::thread::spawn(move || {
            std::thread::sleep(t + std::time::Duration::from_secs(2));
            eprintln!("error: `mirdsl run` did not finish within {limit} (`--timeout`)");
            std::process::exit(i32::from(EXIT_FAILURE));
        });
    }
    let (root, text) = match crate::source(&a.file) {
        Ok(t) => t,
        Err(code) => return code,
    };
    if let Err(code) = unprinted_constants_given(a, &text) {
        return code;
    }
    let selected = match gpu::select(a.device.choice()) {
        Ok(s) => s,
        Err(m) => {
            eprintln!("error: {m}");
            return EXIT_FAILURE;
        }
    };
    if a.verbose {
        eprintln!("{}", selected.note);
    }
    let (backend, gpu_stats) = (selected.backend, selected.stats);
    let linked = analysis::link::link(
        &root,
        Some(std::sync::Arc::from(text.as_str())),
        &analysis::modules::FsLoader,
    );
    if linked.has_errors() {
        crate::render_linked_errors(&a.file, &linked);
        let n = linked
            .diagnostics
            .iter()
            .flatten()
            .filter(|d| d.severity == analysis::Severity::Error)
            .count();
        eprintln!(
            "error: not running {}: it has {n} error{}",
            a.file.display(),
            if n == 1 { "" } else { "s" }
        );
        return EXIT_FAILURE;
    }
    let analysis = &linked.analysis;
    let program = analysis.source.program();
    let entry = match &a.entry {
        Some(e) => {
            if let Err(code) = crate::check_entry(&a.file, &linked, e) {
                return code;
            }
            e.clone()
        }
        None => match program.graph("main") {
            Some(_) => "main".to_string(),
            None => match program.graphs.last() {
                Some((n, _)) => n.clone(),
                None => {
                    eprintln!("error: {} has no graph to run", a.file.display());
                    return EXIT_USAGE;
                }
            },
        },
    };
    let base_dir = a
        .file
        .parent()
        .map(Path::to_path_buf)
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."));
    let options = exec::ExecOptions {
        base_dir,
        max_depth: a.max_depth.max(1),
        check_nan: a.check_nan,
        max_memory,
        interrupt: Some(interrupt_flag()),
        deadline: None,
    };
    let mut ex = exec::Executor::with_backend(&program, options, backend);
    let params = exec::args::entry_params(program.graph(&entry).expect("checked above"));
    let dims = match exec::args::parse_dims(&a.dims) {
        Ok(d) => d,
        Err(e) => return arg_error(&e),
    };
    let symbols = exec::args::dim_symbols(&params);
    let mut unused: Vec<&String> = dims.keys().filter(|k| !symbols.contains(k)).collect();
    unused.sort();
    for k in unused {
        eprintln!(
            "warning: `--dim {k}=...` is not used: no parameter of `{entry}` has a dimension `{k}`{}",
            if symbols.is_empty() {
                String::new()
            } else {
                format!(" (its dimensions: {})", symbols.join(", "))
            }
        );
    }
    let mut given = Vec::new();
    for s in &a.args {
        match exec::args::split_assignment(s, "--arg") {
            Ok(kv) => given.push(kv),
            Err(e) => return arg_error(&e),
        }
    }
    let values = match exec::args::build_args(&ex, &params, &given, &dims) {
        Ok(v) => v,
        Err(e) => return arg_error(&e),
    };
    // Weights the file names as MindSpore does (`layer2.down.0.weight`) and
    // the program as the importer wrote them (`layer2.down._0.weight`).
    let mut file_names: HashMap<String, String> = HashMap::new();
    for path in &a.load_weights {
        match load_weights(&mut ex, path) {
            Ok(names) => file_names.extend(names),
            Err(m) => {
                eprintln!("error: {m}");
                return EXIT_USAGE;
            }
        }
    }
    if let Some(t) = timeout {
        ex.set_deadline(Some(start + t));
    }
    let start = Instant::now();
    let mut results = Vec::with_capacity(a.steps.max(1));
    for _ in 0..a.steps.max(1) {
        match ex.call(&entry, values.clone()) {
            Ok(v) => results.push(v),
            Err(mut e) => {
                match e.kind {
                    exec::ErrorKind::Interrupted => e.message = "interrupted (Ctrl-C)".into(),
                    exec::ErrorKind::Timeout => {
                        e.message = format!(
                            "`{entry}` did not finish within {} (`--timeout`)",
                            a.timeout.as_deref().unwrap_or("its time limit")
                        )
                    }
                    _ => {}
                }
                render_error(&a.file, &linked, &entry, &e);
                return if e.kind == exec::ErrorKind::Interrupted {
                    EXIT_INTERRUPTED
                } else {
                    EXIT_FAILURE
                };
            }
        }
    }
    let elapsed = start.elapsed();
    if a.verbose {
        for note in ex.transform_notes() {
            eprintln!("{note}");
        }
    }
    if let (true, Some(stats)) = (a.verbose, &gpu_stats) {
        for line in stats.report() {
            eprintln!("{line}");
        }
    }
    if let Some(path) = &a.save_weights {
        if let Err(m) = save_weights(&mut ex, path, &file_names) {
            eprintln!("error: {m}");
            return EXIT_USAGE;
        }
    }
    let value = if results.len() == 1 {
        results.pop().expect("one result")
    } else {
        exec::Value::tuple(results)
    };
    if a.stats {
        let m = ex.memory();
        eprintln!(
            "ran `{entry}` in {:.3} ms; peak tensor memory {} ({} tensors made, deepest call nesting {})",
            elapsed.as_secs_f64() * 1e3,
            human_bytes(m.peak_bytes),
            m.allocations,
            ex.deepest_call()
        );
    }
    if let Some(dir) = &a.out_dir {
        if let Err(m) = exec::output::write_npy(&value, dir) {
            eprintln!("error: {m}");
            return EXIT_USAGE;
        }
    }
    match a.format {
        RunFormat::Json => println!(
            "{}",
            serde_json::to_string(&exec::output::to_json(&value)).expect("JSON values serialise")
        ),
        RunFormat::Text => print!("{}", exec::output::to_text(&value)),
    }
    EXIT_OK
}

/// A dump's tensor constants printed in part (the import names each in a
/// note: `interop::ir_text::unprinted_constants`) are weights whose value the
/// dump does not hold: running without a `--load-weights` file that gives
/// each is refused, naming the constant and its line in the dump.
fn unprinted_constants_given(a: &RunArgs, text: &str) -> Result<(), u8> {
    let unprinted = interop::ir_text::unprinted_constants(text);
    if unprinted.is_empty() {
        return Ok(());
    }
    let mut given: Vec<String> = Vec::new();
    for path in &a.load_weights {
        if let Ok(f) = tensor::named::NamedTensors::open(path) {
            for n in f.names() {
                given.push(interop::model::weight_name(&n));
                given.push(n);
            }
        }
    }
    let missing: Vec<&(String, usize)> = unprinted
        .iter()
        .filter(|(n, _)| !given.contains(n))
        .collect();
    for (name, line) in &missing {
        eprintln!(
            "error: {}:{line}: a tensor constant MindSpore printed in part (`value=[...]`), imported \
             as the weight `{name}`: the dump does not hold its value; give it with --load-weights \
             (a .ckpt, .safetensors or folder of NAME.npy holding `{name}`)",
            a.file.display()
        );
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(EXIT_FAILURE)
    }
}

/// Sets the weights named in a `.safetensors` file, a MindSpore `.ckpt`
/// checkpoint or a folder of NAME.npy files (by MindSpore's parameter names); every name must be a weight,
/// of the weight's dtype and shape (checked before its data is read).
/// A checkpoint is memory-mapped and each parameter decoded once. A name
/// that is no weight may be one as an importer spells it in the DSL
/// (`layer2.down.0.weight`: `layer2.down._0.weight`); those are returned
/// (the program's name to the file's), for writing them back.
fn load_weights(ex: &mut exec::Executor, path: &Path) -> Result<HashMap<String, String>, String> {
    let mut renamed = HashMap::new();
    let shown = path.display();
    let file = tensor::named::NamedTensors::open(path).map_err(|e| {
        if e.0.starts_with(&shown.to_string()) {
            e.0
        } else {
            format!("{shown}: {}", e.0)
        }
    })?;
    let file_format = tensor::named::Format::of_path(path);
    for info in file.infos() {
        let mut name = &info.name;
        let dsl = interop::model::weight_name(name);
        if ex.weight_value(name).is_err() && dsl != *name && ex.weight_value(&dsl).is_ok() {
            renamed.insert(dsl.clone(), name.clone());
            name = &dsl;
        }
        let current = ex.weight_value(name).map_err(|_| {
            let mut known: Vec<String> = ex
                .weights()
                .map(|w| w.into_iter().map(|(n, _)| n).collect())
                .unwrap_or_default();
            known.sort();
            let shown_known: Vec<String> = known.iter().take(8).map(|n| format!("`{n}`")).collect();
            format!(
                "{shown}: parameter `{name}` is not a weight of the program (its weights: {}{})",
                shown_known.join(", "),
                if known.len() > 8 {
                    format!(" and {} more", known.len() - 8)
                } else {
                    String::new()
                }
            )
        })?;
        let Some(c) = current.as_tensor() else {
            continue;
        };
        let declared = c.tensor().shape().to_vec();
        let dtype = c.tensor().dtype();
        // NumPy has no bfloat16: a folder of .npy files holds a bf16 weight
        // as float32, rounded back when it is loaded.
        let npy_bf16 = file_format == Some(tensor::named::Format::NpyDir)
            && dtype == tensor::DType::BF16
            && info.dtype == Ok(tensor::DType::F32);
        match &info.dtype {
            _ if npy_bf16 => {}
            Err(ms) => {
                return Err(format!(
                    "{shown}: parameter `{name}` is {ms}, a dtype mirdsl does not have (the weight is {dtype})"
                ))
            }
            Ok(d) if *d != dtype => {
                return Err(format!(
                    "{shown}: parameter `{name}` is {d} in the file, but the weight is declared {dtype}{declared:?}"
                ))
            }
            Ok(_) => {}
        }
        if info.shape != declared {
            return Err(format!(
                "{shown}: parameter `{name}` has shape {:?} in the file, but the weight is declared {dtype}{declared:?}",
                info.shape
            ));
        }
        let mut t = file
            .read(&info.name)
            .map_err(|e| format!("{shown}: {}", e.0))?;
        if npy_bf16 {
            t = t.cast(dtype);
        }
        ex.set_weight(name, ex.tensor(t)).map_err(|e| e.message)?;
    }
    Ok(renamed)
}

/// Writes every weight's current value, in its own dtype, to a
/// `.safetensors` file, (by extension) a MindSpore `.ckpt` checkpoint, or a
/// folder of NAME.npy files (a directory or a path ending in `/`).
/// Weights loaded under another name (`file_names`) are written under it.
fn save_weights(
    ex: &mut exec::Executor,
    path: &Path,
    file_names: &HashMap<String, String>,
) -> Result<(), String> {
    let weights = ex.weights().map_err(|e| e.message)?;
    let tensors: Vec<(String, tensor::Tensor)> = weights
        .into_iter()
        .filter_map(|(n, v)| {
            let n = file_names.get(&n).cloned().unwrap_or(n);
            v.as_tensor().map(|t| (n, t.tensor().clone()))
        })
        .collect();
    let items: Vec<(&str, &tensor::Tensor)> =
        tensors.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let bytes = match tensor::named::Format::of_path(path) {
        Some(tensor::named::Format::NpyDir) => {
            return tensor::named::write(path, &items).map_err(|e| e.0);
        }
        Some(tensor::named::Format::Ckpt) => tensor::ckpt::write(&items),
        _ => tensor::safetensors::write(&items),
    };
    crate::files::write_atomic(path, &bytes)
}

fn arg_error(e: &exec::args::ArgError) -> u8 {
    eprintln!("error: {}", e.message);
    if e.usage {
        EXIT_USAGE
    } else {
        EXIT_FAILURE
    }
}

fn human_bytes(n: usize) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut x = n as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{x:.1} {}", UNITS[u])
    }
}

/// How a module of a linked program is named in messages: the root by the
/// path it was given, the others by their path (relative to the current
/// folder when below it).
pub(crate) fn module_path(root: &Path, linked: &analysis::link::Linked, m: usize) -> String {
    if m == 0 {
        return root.display().to_string();
    }
    let path = &linked.graph.modules[m].path;
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.clone())
        .display()
        .to_string()
}

/// What the primary label of a fault says: the message without the
/// primitive it starts with (`` `Gather`: index 7 ...`` -> `index 7 ...`),
/// which the header names.
fn fault_label(message: &str) -> String {
    let first = message.lines().next().unwrap_or(message);
    // "`Gather`: index 7 is ..." or "`Reshape` cannot reshape ...".
    let detail = first.strip_prefix('`').and_then(|rest| {
        let (name, detail) = rest.split_once('`')?;
        let detail = detail.strip_prefix(':').unwrap_or(detail).trim_start();
        (!name.contains(' ') && !detail.is_empty()).then_some(detail)
    });
    detail.unwrap_or(first).to_string()
}

/// The innermost call sites shown of a fault's call stack (the outermost
/// call in the file the user ran is always shown too).
const SHOWN_CALLS: usize = 6;

/// A run-time fault with a source snippet, the call stack as secondary
/// labels: the fault where it happened (a library's graph, a graph of
/// another file) and each call that led there, in whichever file it is,
/// down to the user's own line in the file they ran.
pub(crate) fn render_error(
    root: &Path,
    linked: &analysis::link::Linked,
    entry: &str,
    e: &exec::RunError,
) {
    let mut files = SimpleFiles::new();
    let mut ids: Vec<Option<usize>> = vec![None; linked.graph.modules.len()];
    let mut file_of = |m: usize| {
        *ids[m].get_or_insert_with(|| {
            files.add(
                module_path(root, linked, m),
                linked.graph.modules[m].text.to_string(),
            )
        })
    };
    // Spans are in the linked program's virtual text.
    let place = |r: ir::TextRange| {
        let (m, r) = linked.locate(r);
        (m, usize::from(r.start())..usize::from(r.end()))
    };
    let mut labels = Vec::new();
    let primary = e.span.map(place);
    if let Some((m, range)) = &primary {
        labels
            .push(Label::primary(file_of(*m), range.clone()).with_message(fault_label(&e.message)));
    }
    // Innermost first; the outermost call made from the root file always.
    let sites: Vec<(&str, (usize, std::ops::Range<usize>))> = e
        .trace
        .iter()
        .filter_map(|t| Some((t.graph.as_str(), place(t.call_site?))))
        .collect();
    let outermost_root = sites.iter().rposition(|(_, (m, _))| *m == 0);
    let mut shown: Vec<(usize, std::ops::Range<usize>)> = primary.iter().cloned().collect();
    let mut skipped = 0;
    for (k, (graph, site)) in sites.iter().enumerate() {
        if shown.contains(site) {
            continue;
        }
        if shown.len() > SHOWN_CALLS && Some(k) != outermost_root {
            skipped += 1;
            continue;
        }
        labels.push(
            Label::secondary(file_of(site.0), site.1.clone())
                .with_message(format!("in this call of `{graph}`")),
        );
        shown.push(site.clone());
    }
    let mut notes = e.notes.clone();
    if skipped > 0 {
        notes.push(format!(
            "{skipped} more call{} not shown",
            if skipped == 1 { "" } else { "s" }
        ));
    }
    if !e.trace.is_empty() {
        let chain: Vec<&str> = std::iter::once(entry)
            .chain(e.trace.iter().rev().map(|t| t.graph.as_str()))
            .collect();
        let chain = if chain.len() > 8 {
            format!(
                "{} -> ... -> {}",
                chain[..3].join(" -> "),
                chain[chain.len() - 3..].join(" -> ")
            )
        } else {
            chain.join(" -> ")
        };
        notes.push(format!("call stack: {chain}"));
    }
    let d = CsDiagnostic::error()
        .with_message(format!("run-time fault: {}", e.message))
        .with_labels(labels)
        .with_notes(notes);
    let writer = StandardStream::stderr(color());
    if term::emit_to_write_style(&mut writer.lock(), &term::Config::default(), &files, &d).is_err()
    {
        eprintln!("error: run-time fault: {}", e.message);
    }
}
