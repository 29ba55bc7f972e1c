//! `launch`: the arguments, the program (a `.mir` file, or a MindSpore
//! `.mindir`/`.ir` imported to DSL text first), and the run's thread.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};

use serde_json::Value as Json;

use crate::eval::Evaluator;
use crate::runner::{DebugObserver, Resume, RunEvent, Settings};
use crate::source::SourceMap;

/// The launch request's arguments.
#[derive(Debug, Clone, Default)]
pub struct LaunchArgs {
    pub program: PathBuf,
    pub entry: Option<String>,
    pub args: Vec<(String, String)>,
    /// Whether the launch gave `args` at all (else every parameter is `ones`,
    /// as the Debug lens and F5 on a model with no configuration give them).
    pub args_given: bool,
    pub dims: Vec<String>,
    pub load_weights: Option<PathBuf>,
    pub steps: usize,
    pub device: String,
    pub stop_on_entry: bool,
    /// `noDebug` (VS Code's Run Without Debugging): a plain run, as
    /// `mirdsl run` does it, that stops nowhere.
    pub no_debug: bool,
}

impl LaunchArgs {
    pub fn from_json(a: &Json) -> Result<LaunchArgs, String> {
        let program = a
            .get("program")
            .and_then(Json::as_str)
            .ok_or("`program` (the `.mir` file to debug) is missing")?;
        let mut args = Vec::new();
        match a.get("args") {
            None | Some(Json::Null) => {}
            Some(Json::Object(m)) => {
                for (k, v) in m {
                    let v = match v {
                        Json::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    args.push((k.clone(), v));
                }
            }
            Some(Json::Array(items)) => {
                for it in items {
                    let s = it.as_str().ok_or("`args` items are NAME=VALUE strings")?;
                    let (k, v) = s
                        .split_once('=')
                        .ok_or_else(|| format!("`args`: `{s}` is not NAME=VALUE"))?;
                    args.push((k.trim().to_string(), v.trim().to_string()));
                }
            }
            Some(_) => return Err("`args` maps parameter names to VALUE strings".into()),
        }
        let dims = match a.get("dims") {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Object(m)) => m
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{k}={}",
                        v.as_str().map(String::from).unwrap_or(v.to_string())
                    )
                })
                .collect(),
            Some(Json::Array(items)) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(String::from)
                        .ok_or("`dims` items are SYM=N strings")
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err("`dims` maps symbols to sizes".into()),
        };
        let steps = match a.get("steps") {
            None | Some(Json::Null) => 1,
            Some(v) => v
                .as_u64()
                .filter(|&n| n >= 1)
                .ok_or("`steps` is a number >= 1")? as usize,
        };
        let device = a
            .get("device")
            .and_then(Json::as_str)
            .unwrap_or("cpu")
            .to_string();
        if gpu::DeviceChoice::parse(&device).is_none() {
            return Err(format!("`device` is cpu, gpu or auto, not `{device}`"));
        }
        Ok(LaunchArgs {
            program: PathBuf::from(program),
            entry: a.get("entry").and_then(Json::as_str).map(String::from),
            args,
            args_given: !matches!(a.get("args"), None | Some(Json::Null)),
            dims,
            load_weights: a
                .get("loadWeights")
                .and_then(Json::as_str)
                .map(PathBuf::from),
            steps,
            device,
            stop_on_entry: a
                .get("stopOnEntry")
                .and_then(Json::as_bool)
                .unwrap_or(false),
            no_debug: a.get("noDebug").and_then(Json::as_bool).unwrap_or(false),
        })
    }
}

/// A program ready to run.
pub struct Loaded {
    pub root: PathBuf,
    pub text: Arc<str>,
    pub program: ir::Program,
    pub map: Arc<SourceMap>,
    pub entry: String,
    pub base_dir: PathBuf,
    /// The folder holding an imported model's DSL text, removed at the end.
    pub scratch: Option<PathBuf>,
}

/// Imports a MindSpore model or dump to a `.mir` file (and its weights) in
/// a scratch folder; returns the file.
fn import_model(path: &Path) -> Result<(PathBuf, PathBuf), String> {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    let opts = interop::WeightOptions {
        file: format!("{stem}.safetensors"),
        ..interop::WeightOptions::default()
    };
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let imported = if path.extension().is_some_and(|e| e == "ir") {
        interop::ir_text::import(&String::from_utf8_lossy(&bytes), &opts)
    } else {
        interop::mindir::import(&bytes, &opts)
    }
    .map_err(|e| format!("cannot import {}: {e}", path.display()))?;
    // One folder per session, even with several sessions in one process.
    static SESSIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = SESSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("mirdsl-dap-{}-{n}-{stem}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    if let Some(st) = imported.safetensors() {
        std::fs::write(dir.join(&opts.file), st).map_err(|e| e.to_string())?;
    }
    let file = dir.join(format!("{stem}.mir"));
    std::fs::write(&file, imported.text.as_bytes()).map_err(|e| e.to_string())?;
    Ok((file, dir))
}

/// Checks the program; errors are returned as one message.
pub fn load(a: &LaunchArgs) -> Result<Loaded, String> {
    // `device: "gpu"` without a usable GPU fails the launch, naming what is
    // missing, before anything is imported or run.
    if gpu::DeviceChoice::parse(&a.device) == Some(gpu::DeviceChoice::Gpu) {
        gpu::probe::all().map_err(|e| {
            format!(
                "`device: \"gpu\"`: {e} (use \"cpu\", or \"auto\" for the GPU where there is one)"
            )
        })?;
    }
    let (root, scratch) = match a.program.extension().and_then(|e| e.to_str()) {
        Some("mindir") | Some("ir") => {
            let (f, d) = import_model(&a.program)?;
            (f, Some(d))
        }
        _ => (a.program.clone(), None),
    };
    let text = std::fs::read_to_string(&root)
        .map_err(|e| format!("cannot read {}: {e}", root.display()))?;
    let text: Arc<str> = Arc::from(text);
    let linked = analysis::link::link(&root, Some(text.clone()), &analysis::modules::FsLoader);
    if linked.has_errors() {
        let mut msgs = Vec::new();
        for (m, ds) in linked.diagnostics.iter().enumerate() {
            for d in ds
                .iter()
                .filter(|d| d.severity == analysis::Severity::Error)
            {
                let module = &linked.graph.modules[m];
                let line = module.text[..usize::from(d.range.start()).min(module.text.len())]
                    .matches('\n')
                    .count()
                    + 1;
                msgs.push(format!("{}:{line}: {}", module.path.display(), d.message));
            }
        }
        return Err(format!(
            "{} has errors, so it cannot run:\n{}",
            a.program.display(),
            msgs.join("\n")
        ));
    }
    let program = linked.analysis.source.program();
    let entry = match &a.entry {
        Some(e) if program.graph(e).is_some() => e.clone(),
        Some(e) => {
            let names: Vec<&str> = program
                .graphs
                .iter()
                .map(|(n, _)| n.as_str())
                .filter(|n| !n.contains('.') && !n.starts_with('@'))
                .collect();
            return Err(format!(
                "no graph `{e}` in {} (its graphs: {})",
                a.program.display(),
                names.join(", ")
            ));
        }
        None => match program.graph("main") {
            Some(_) => "main".into(),
            None => program
                .graphs
                .last()
                .map(|(n, _)| n.clone())
                .ok_or_else(|| format!("{} has no graph to run", a.program.display()))?,
        },
    };
    let map = Arc::new(SourceMap::new(&linked, &program));
    let base_dir = root
        .parent()
        .map(Path::to_path_buf)
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."));
    Ok(Loaded {
        root,
        text,
        program,
        map,
        entry,
        base_dir,
        scratch,
    })
}

/// What the run thread needs from the session.
pub struct RunLinks {
    pub settings: Arc<Mutex<Settings>>,
    pub pause: Arc<AtomicBool>,
    pub interrupt: Arc<AtomicBool>,
    pub resume: Receiver<Resume>,
    pub events: Sender<RunEvent>,
}

/// Runs the entry `steps` times under the debugger (on this thread).
pub fn run(a: &LaunchArgs, l: &Loaded, links: RunLinks) {
    let events = links.events.clone();
    let out = |category: &'static str, text: String| {
        let _ = events.send(RunEvent::Output { category, text });
    };
    let code = match run_inner(a, l, links, &out) {
        Ok(()) => 0,
        Err(m) => {
            out("stderr", format!("{m}\n"));
            1
        }
    };
    let _ = events.send(RunEvent::Exited(code));
}

fn run_inner(
    a: &LaunchArgs,
    l: &Loaded,
    links: RunLinks,
    out: &dyn Fn(&'static str, String),
) -> Result<(), String> {
    let choice = gpu::DeviceChoice::parse(&a.device)
        .ok_or_else(|| format!("`device` is cpu, gpu or auto, not `{}`", a.device))?;
    let selected = gpu::select(choice)?;
    if choice != gpu::DeviceChoice::Cpu {
        // Which device runs it (`device: gpu (NVIDIA ...)`), or why not.
        out("console", format!("{}\n", selected.note));
    }
    let options = exec::ExecOptions {
        base_dir: l.base_dir.clone(),
        interrupt: Some(links.interrupt.clone()),
        ..exec::ExecOptions::default()
    };
    let mut ex = exec::Executor::with_backend(&l.program, options, selected.backend);
    let params = exec::args::entry_params(l.program.graph(&l.entry).expect("checked"));
    let dims = exec::args::parse_dims(&a.dims).map_err(|e| e.message)?;
    // Relative paths (`.npy` arguments, `loadWeights`) are the program's
    // folder's: an editor starts the adapter wherever it likes.
    let folder = a
        .program
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let args: Vec<(String, String)> = a
        .args
        .iter()
        .map(|(k, v)| {
            let p = Path::new(v);
            if v.ends_with(".npy") && p.is_relative() && !p.exists() {
                (k.clone(), folder.join(p).display().to_string())
            } else {
                (k.clone(), v.clone())
            }
        })
        .collect();
    let args = if a.args_given {
        args
    } else {
        let filled: Vec<(String, String)> = params
            .iter()
            .map(|p| (p.name.clone(), "ones".to_string()))
            .collect();
        if !filled.is_empty() {
            let names: Vec<&str> = filled.iter().map(|(n, _)| n.as_str()).collect();
            out(
                "console",
                format!("no `args` in the launch: {} = ones\n", names.join(", ")),
            );
        }
        filled
    };
    let values = exec::args::build_args(&ex, &params, &args, &dims).map_err(|e| {
        e.message
            .replace("with `--arg NAME=VALUE`", "in the launch's `args`")
    })?;
    if let Some(path) = &a.load_weights {
        let path = if path.is_relative() && !path.exists() {
            folder.join(path)
        } else {
            path.clone()
        };
        load_weights(&mut ex, &path)?;
    }
    let eval = Evaluator {
        root: l.root.clone(),
        text: l.text.clone(),
        base_dir: l.base_dir.clone(),
    };
    let mut obs = DebugObserver::new(
        l.map.clone(),
        links.settings.clone(),
        links.pause.clone(),
        links.resume,
        links.events.clone(),
        eval,
        a.stop_on_entry,
    );
    obs.show_scopes = l.scratch.is_some();
    let call_start = obs.call_start.clone();
    if !a.no_debug {
        ex.set_observer(Some(Box::new(obs)));
    }
    let mut results = Vec::new();
    for step in 0..a.steps.max(1) {
        // The watched weights at the start of this call ("did not change").
        let watched: Vec<String> = links
            .settings
            .lock()
            .expect("settings")
            .data
            .iter()
            .filter(|d| d.unchanged)
            .map(|d| d.weight.clone())
            .collect();
        let mut start = std::collections::HashMap::new();
        for w in watched {
            if let Ok(v) = ex.weight_value(&w) {
                start.insert(w, v);
            }
        }
        *call_start.lock().expect("start") = start;
        match ex.call(&l.entry, values.clone()) {
            Ok(v) => results.push(v),
            Err(e) if e.kind == exec::ErrorKind::Interrupted => {
                return Err(format!("`{}` stopped: {}", l.entry, e.message));
            }
            Err(e) => {
                let mut m = format!("run-time fault in step {}: {}", step + 1, e.message);
                if let Some(loc) = e.span.and_then(|s| l.map.locate(s)) {
                    let p = &l.map.modules[loc.module].path;
                    m.push_str(&format!(
                        "\n  at {}:{}:{}",
                        p.display(),
                        loc.line,
                        loc.column
                    ));
                }
                for t in &e.trace {
                    m.push_str(&format!("\n  in `{}`", t.graph));
                }
                return Err(m);
            }
        }
    }
    let value = if results.len() == 1 {
        results.pop().expect("one")
    } else {
        exec::Value::tuple(results)
    };
    out("stdout", exec::output::to_text(&value));
    Ok(())
}

fn load_weights(ex: &mut exec::Executor, path: &Path) -> Result<(), String> {
    let names = tensor::file::safetensors_names(path).map_err(|e| e.0)?;
    for name in names {
        let current = ex.weight_value(&name).map_err(|_| {
            format!(
                "{}: `{name}` is not a weight of the program",
                path.display()
            )
        })?;
        if let Some(c) = current.as_tensor() {
            let declared = c.tensor().shape().to_vec();
            let t = tensor::file::load_safetensors(path, &name, &mut |e| {
                if e.shape != declared {
                    return Err(format!(
                        "`{name}` has shape {:?}, but the weight is declared {declared:?}",
                        e.shape
                    ));
                }
                Ok(())
            })
            .map_err(|e| format!("{}: {}", path.display(), e.0))?;
            let t = t.cast(c.tensor().dtype());
            ex.set_weight(&name, ex.tensor(t)).map_err(|e| e.message)?;
        }
    }
    Ok(())
}
