//! `mirdsl/run`: runs a graph with the executor, one run at a time.
//!
//! The executor cannot be interrupted, so a run goes to a child process
//! (`mirdsl lsp --run-worker`, the job on its stdin, the result on its
//! stdout): a run that is cancelled (`$/cancelRequest`, `shutdown`) or takes
//! longer than its limit is killed, and its memory goes with it. Without a
//! worker program (the server running inside a test) a run goes to a thread;
//! cancelling answers at once, but the thread runs on to its end.
//!
//! Runs wait in a short queue; the requests beyond it are refused.

use std::collections::{HashMap, VecDeque};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};

use crate::lsp;
use crate::server::{failed, Result, RpcError, Shared};
use crate::transport::{code, Outbox, RequestId};

/// Runs waiting beyond the one running.
const MAX_QUEUED: usize = 16;

/// What a run needs: the document's text and how to call the graph.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    pub graph: String,
    pub text: String,
    pub args: Vec<(String, String)>,
    pub dims: HashMap<String, usize>,
    pub base_dir: PathBuf,
    /// `cpu`, `gpu` or `auto`, as `mirdsl run --device`.
    #[serde(default = "cpu")]
    pub device: String,
    /// The document's file, when it has one (its imports are read from disk).
    #[serde(default)]
    pub path: Option<PathBuf>,
    #[serde(skip)]
    pub timeout: Duration,
}

fn cpu() -> String {
    "cpu".into()
}

impl Job {
    /// From `mirdsl/run`'s params `{uri, graph, args?: {name: value}, dims?: {sym: n},
    /// device?: "cpu" | "gpu" | "auto", timeoutMs?}`.
    pub fn new(uri: &lsp::Uri, text: String, params: &Json) -> Result<Job> {
        let graph = params
            .get("graph")
            .and_then(Json::as_str)
            .ok_or_else(|| RpcError::invalid_params("missing `graph`"))?
            .to_string();
        let timeout = params
            .get("timeoutMs")
            .and_then(Json::as_u64)
            .unwrap_or(10_000);
        let mut args = Vec::new();
        if let Some(given) = params.get("args").and_then(Json::as_object) {
            for (k, v) in given {
                let text = match v {
                    Json::String(s) => s.clone(),
                    other => other.to_string(),
                };
                args.push((k.clone(), text));
            }
        }
        let mut dims = HashMap::new();
        if let Some(d) = params.get("dims").and_then(Json::as_object) {
            for (k, v) in d {
                let n = v.as_u64().ok_or_else(|| {
                    RpcError::invalid_params(format!("dimension `{k}` is not a size"))
                })?;
                dims.insert(k.clone(), n as usize);
            }
        }
        let device = params
            .get("device")
            .and_then(Json::as_str)
            .unwrap_or("cpu")
            .to_string();
        if gpu::DeviceChoice::parse(&device).is_none() {
            return Err(RpcError::invalid_params(format!(
                "`device` must be \"cpu\", \"gpu\" or \"auto\", not \"{device}\""
            )));
        }
        let base_dir = uri
            .as_str()
            .strip_prefix("file://")
            .map(PathBuf::from)
            .and_then(|p| p.parent().map(|d| d.to_path_buf()))
            .unwrap_or_else(|| PathBuf::from("."));
        Ok(Job {
            graph,
            text,
            args,
            dims,
            base_dir,
            device,
            path: crate::convert::uri_path(uri),
            timeout: Duration::from_millis(timeout),
        })
    }
}

struct Queued {
    id: RequestId,
    job: Job,
    shared: Arc<Shared>,
    /// From `workspace/executeCommand`: also shown to the user.
    command: bool,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Queued>,
    /// The run in progress: its request, and its child process (if any).
    current: Option<(RequestId, Option<Arc<Mutex<Child>>>)>,
    cancelled: bool,
    started: bool,
}

#[derive(Clone)]
pub struct Runner {
    worker: Option<PathBuf>,
    state: Arc<(Mutex<State>, Condvar)>,
    outbox: Outbox,
}

impl Runner {
    pub fn new(worker: Option<PathBuf>, outbox: Outbox) -> Runner {
        Runner {
            worker,
            state: Arc::new((Mutex::new(State::default()), Condvar::new())),
            outbox,
        }
    }

    pub fn submit(&self, id: RequestId, job: Job, shared: Arc<Shared>, command: bool) {
        let (lock, ready) = &*self.state;
        let mut state = lock.lock().unwrap();
        if state.queue.len() >= MAX_QUEUED {
            drop(state);
            shared.finish::<Json>(
                &id,
                Err(failed(format!(
                    "{MAX_QUEUED} runs are waiting already; cancel some or wait"
                ))),
            );
            return;
        }
        state.queue.push_back(Queued {
            id,
            job,
            shared,
            command,
        });
        if !state.started {
            state.started = true;
            let runner = self.clone();
            std::thread::Builder::new()
                .name("lsp-runner".into())
                .spawn(move || runner.serve())
                .expect("a thread starts");
        }
        ready.notify_all();
    }

    /// Cancels a run: a waiting one is answered at once, a running one is
    /// killed (its answer follows).
    pub fn cancel(&self, id: &RequestId) {
        let (lock, ready) = &*self.state;
        let mut state = lock.lock().unwrap();
        if let Some(i) = state.queue.iter().position(|q| &q.id == id) {
            let q = state.queue.remove(i).unwrap();
            drop(state);
            q.shared.finish::<Json>(
                &q.id,
                Err(RpcError::new(code::REQUEST_CANCELLED, "cancelled")),
            );
            return;
        }
        let child = match &state.current {
            Some((current, child)) if current == id => child.clone(),
            _ => return,
        };
        state.cancelled = true;
        if let Some(child) = child {
            let _ = child.lock().unwrap().kill();
        }
        ready.notify_all();
    }

    /// Cancels every run (at `shutdown` and at the end).
    pub fn cancel_all(&self) {
        let ids: Vec<RequestId> = {
            let state = self.state.0.lock().unwrap();
            state
                .queue
                .iter()
                .map(|q| q.id.clone())
                .chain(state.current.iter().map(|(id, _)| id.clone()))
                .collect()
        };
        for id in ids {
            self.cancel(&id);
        }
    }

    fn serve(self) {
        let (lock, ready) = &*self.state;
        loop {
            let next = {
                let mut state = lock.lock().unwrap();
                loop {
                    if let Some(q) = state.queue.pop_front() {
                        state.current = Some((q.id.clone(), None));
                        state.cancelled = false;
                        break q;
                    }
                    state = ready.wait(state).unwrap();
                }
            };
            let started = Instant::now();
            let outcome = match &self.worker {
                Some(program) => self.run_child(program, &next),
                None => self.run_thread(&next),
            };
            lock.lock().unwrap().current = None;
            let result = match outcome {
                Outcome::Done(Ok(value)) => {
                    if next.command {
                        self.outbox.notify(
                            "window/showMessage",
                            &json!({"type": 3, "message": summary(&next.job.graph, &value, started.elapsed())}),
                        );
                    }
                    Ok(json!({ "graph": next.job.graph, "result": value }))
                }
                Outcome::Done(Err(message)) => Err(failed(message)),
                Outcome::Cancelled => Err(RpcError::new(code::REQUEST_CANCELLED, "cancelled")),
                Outcome::TimedOut => Err(failed(format!(
                    "`{}` did not finish within {} ms",
                    next.job.graph,
                    next.job.timeout.as_millis()
                ))),
            };
            next.shared.finish(&next.id, result);
        }
    }

    /// Waits for `rx` until the job's time is up or the run is cancelled.
    fn wait<T>(&self, rx: &mpsc::Receiver<T>, timeout: Duration) -> Result3<T> {
        let deadline = Instant::now() + timeout;
        loop {
            if self.state.0.lock().unwrap().cancelled {
                return Result3::Cancelled;
            }
            let now = Instant::now();
            if now >= deadline {
                return Result3::TimedOut;
            }
            match rx.recv_timeout((deadline - now).min(Duration::from_millis(20))) {
                Ok(v) => return Result3::Done(v),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return Result3::Gone,
            }
        }
    }

    fn run_child(&self, program: &PathBuf, q: &Queued) -> Outcome {
        let child = Command::new(program)
            .args(["lsp", "--run-worker"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) => {
                return Outcome::Done(Err(format!(
                    "cannot start the run worker {}: {e}",
                    program.display()
                )))
            }
        };
        let input = serde_json::to_vec(&q.job).expect("a job serialises");
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let child = Arc::new(Mutex::new(child));
        {
            let mut state = self.state.0.lock().unwrap();
            if state.cancelled {
                let _ = child.lock().unwrap().kill();
            }
            state.current = Some((q.id.clone(), Some(child.clone())));
        }
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut out = Vec::new();
            let _ = stdout.read_to_end(&mut out);
            let _ = tx.send(out);
        });
        let waited = self.wait(&rx, q.job.timeout);
        {
            let mut child = child.lock().unwrap();
            let _ = child.kill();
            let _ = child.wait();
        }
        match waited {
            Result3::Done(out) => match serde_json::from_slice::<Json>(&out) {
                Ok(Json::Object(mut m)) => match (m.remove("ok"), m.remove("error")) {
                    (Some(v), _) => Outcome::Done(Ok(v)),
                    (_, Some(Json::String(e))) => Outcome::Done(Err(e)),
                    _ => Outcome::Done(Err("the run worker gave no result".into())),
                },
                _ if self.state.0.lock().unwrap().cancelled => Outcome::Cancelled,
                _ => Outcome::Done(Err(
                    "the run ended without a result (the run worker crashed)".into(),
                )),
            },
            Result3::Cancelled => Outcome::Cancelled,
            Result3::TimedOut => Outcome::TimedOut,
            Result3::Gone => Outcome::Done(Err("the run ended without a result".into())),
        }
    }

    fn run_thread(&self, q: &Queued) -> Outcome {
        let job = q.job.clone();
        let (tx, rx) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("lsp-run".into())
            .stack_size(crate::STACK_SIZE)
            .spawn(move || {
                let _ = tx.send(run_job(&job));
            });
        if let Err(e) = spawned {
            return Outcome::Done(Err(format!("cannot start a run: {e}")));
        }
        match self.wait(&rx, q.job.timeout) {
            Result3::Done(r) => Outcome::Done(r),
            Result3::Cancelled => Outcome::Cancelled,
            Result3::TimedOut => Outcome::TimedOut,
            Result3::Gone => Outcome::Done(Err("the run ended without a result".into())),
        }
    }
}

enum Result3<T> {
    Done(T),
    Cancelled,
    TimedOut,
    Gone,
}

enum Outcome {
    Done(std::result::Result<Json, String>),
    Cancelled,
    TimedOut,
}

/// One line about a result, for `window/showMessage`.
fn summary(graph: &str, value: &Json, took: Duration) -> String {
    let mut text = value.to_string();
    if let Some((i, _)) = text.char_indices().nth(300) {
        text.truncate(i);
        text.push('…');
    }
    format!("{graph} ({} ms): {text}", took.as_millis())
}

/// Runs a job (in this process): the graph's result as `mirdsl run --format
/// json` prints it, or why it cannot run.
pub fn run_job(job: &Job) -> std::result::Result<Json, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_graph(job))).unwrap_or_else(|p| {
        Err(format!(
            "the executor panicked: {}",
            crate::server::panic_message(&*p)
        ))
    })
}

fn run_graph(job: &Job) -> std::result::Result<Json, String> {
    let analysis = program_analysis(job.path.as_deref(), &job.text)
        .map_err(|m| format!("the document has errors; fix them to run it (first: {m})"))?;
    let name = job.graph.as_str();
    let program = analysis.source.program();
    let body = program
        .graph(name)
        .ok_or_else(|| format!("no graph `{name}` in the document"))?
        .clone();
    let options = exec::ExecOptions {
        base_dir: job.base_dir.clone(),
        ..Default::default()
    };
    let choice = gpu::DeviceChoice::parse(&job.device).unwrap_or(gpu::DeviceChoice::Cpu);
    let backend = gpu::select(choice)?.backend;
    let mut ex = exec::Executor::with_backend(&program, options, backend);
    let params = exec::args::entry_params(&body);
    let args = exec::args::build_args(&ex, &params, &job.args, &job.dims).map_err(|e| e.message)?;
    let value = ex.call(name, args).map_err(|e| e.message)?;
    Ok(exec::output::to_json(&value))
}

/// `mirdsl lsp --run-worker`: reads one job (JSON) from stdin, runs it, and
/// writes `{"ok": result}` or `{"error": message}` to stdout.
pub fn run_worker() -> i32 {
    let mut input = Vec::new();
    if std::io::stdin().read_to_end(&mut input).is_err() {
        return 2;
    }
    let job: Job = match serde_json::from_slice(&input) {
        Ok(j) => j,
        Err(e) => {
            println!("{}", json!({ "error": format!("a bad job: {e}") }));
            return 2;
        }
    };
    // The executor follows graph calls recursively: a big stack.
    let result = std::thread::Builder::new()
        .stack_size(crate::STACK_SIZE)
        .spawn(move || run_job(&job))
        .map_err(|e| e.to_string())
        .and_then(|h| h.join().map_err(|_| "the run panicked".to_string()))
        .and_then(|r| r);
    let out = match result {
        Ok(v) => json!({ "ok": v }),
        Err(e) => json!({ "error": e }),
    };
    println!("{out}");
    0
}

/// The program of a document: the file alone, or, when it imports others,
/// linked with them (read from disk); or the first error.
pub fn program_analysis(
    path: Option<&std::path::Path>,
    text: &str,
) -> std::result::Result<analysis::FileAnalysis, String> {
    let has_imports = syntax::parse(text).tree().imports().next().is_some();
    match path {
        Some(path) if has_imports => {
            let linked = analysis::link::link(
                path,
                Some(std::sync::Arc::from(text)),
                &analysis::modules::FsLoader,
            );
            let first = linked
                .diagnostics
                .iter()
                .flatten()
                .find(|d| d.severity == analysis::Severity::Error);
            match first {
                Some(d) => Err(d.message.clone()),
                None => Ok(linked.analysis),
            }
        }
        _ => {
            let analysis = analysis::analyze(text);
            match analysis
                .diagnostics
                .iter()
                .find(|d| d.severity == analysis::Severity::Error)
            {
                Some(d) => Err(d.message.clone()),
                None => Ok(analysis),
            }
        }
    }
}
