//! One debug session: requests in, responses and events out.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value as Json};

use crate::eval::Evaluator;
use crate::inspect;
use crate::launch::{self, LaunchArgs, Loaded, RunLinks};
use crate::protocol::{read_message, write_message, Incoming};
use crate::runner::{DataBreakpoint, LineBreakpoint, Resume, RunEvent, Settings, Stop};

/// The one thread a run has.
const THREAD: i64 = 1;
/// The largest magnitude the threshold filter allows by default.
pub const DEFAULT_THRESHOLD: f64 = 1e6;

enum Event {
    In(Incoming),
    Run(RunEvent),
    InputError(String),
}

/// What a `variablesReference` names.
#[derive(Clone)]
enum VarRef {
    Locals(usize),
    Weights,
    Value(exec::Value, Vec<usize>),
    /// The values and weights in one MindSpore scope of an imported model.
    Group(Vec<(String, exec::Value)>),
}

struct Session<W: Write> {
    out: W,
    seq: i64,
    launch: Option<(LaunchArgs, Arc<Loaded>)>,
    configured: bool,
    started: bool,
    finished: bool,
    settings: Arc<Mutex<Settings>>,
    pause: Arc<AtomicBool>,
    interrupt: Arc<AtomicBool>,
    resume: Option<Sender<Resume>>,
    run_events: Sender<Event>,
    stopped: Option<Stop>,
    refs: Vec<VarRef>,
    next_id: i64,
    /// 1 when the client counts lines (columns) from 0, as `initialize` says.
    line_shift: u32,
    column_shift: u32,
}

/// Serves one session on `input`/`output` until `disconnect` or the end of
/// the input; returns the process's exit code.
pub fn serve<R: BufRead + Send + 'static, W: Write>(mut input: R, output: W) -> i32 {
    let (tx, rx) = channel::<Event>();
    let reader = tx.clone();
    std::thread::spawn(move || loop {
        match read_message(&mut input) {
            Ok(Incoming::End) => {
                let _ = reader.send(Event::In(Incoming::End));
                return;
            }
            Ok(m) => {
                if reader.send(Event::In(m)).is_err() {
                    return;
                }
            }
            Err(e) => {
                let _ = reader.send(Event::InputError(e.to_string()));
                return;
            }
        }
    });
    let mut s = Session {
        out: output,
        seq: 0,
        launch: None,
        configured: false,
        started: false,
        finished: false,
        settings: Arc::new(Mutex::new(Settings::default())),
        pause: Arc::new(AtomicBool::new(false)),
        interrupt: Arc::new(AtomicBool::new(false)),
        resume: None,
        run_events: tx,
        stopped: None,
        refs: Vec::new(),
        next_id: 1,
        line_shift: 0,
        column_shift: 0,
    };
    let code = loop {
        let Ok(ev) = rx.recv() else { break 0 };
        match ev {
            Event::In(Incoming::End) => break 0,
            Event::InputError(e) => {
                eprintln!("mirdsl dap: cannot read the client's messages: {e}");
                break 1;
            }
            Event::In(Incoming::Malformed(why)) => {
                s.event(
                    "output",
                    json!({"category": "console", "output": format!("mirdsl dap: skipped a malformed message: {why}\n")}),
                );
            }
            Event::In(Incoming::Message(m)) => {
                let handled =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s.message(&m)));
                match handled {
                    Ok(true) => break 0,
                    Ok(false) => {}
                    Err(_) => {
                        let command = m.get("command").and_then(Json::as_str).unwrap_or("?");
                        let seq = m.get("seq").and_then(Json::as_i64).unwrap_or(0);
                        s.respond_err(
                            seq,
                            command,
                            "internal error in mirdsl dap (a bug; please report it)",
                        );
                    }
                }
            }
            Event::Run(r) => s.run_event(r),
        }
    };
    s.end_run();
    if let Some((_, l)) = &s.launch {
        if let Some(d) = &l.scratch {
            let _ = std::fs::remove_dir_all(d);
        }
    }
    code
}

fn args_of(m: &Json) -> &Json {
    static NULL: Json = Json::Null;
    m.get("arguments").unwrap_or(&NULL)
}

impl<W: Write> Session<W> {
    fn send(&mut self, mut msg: Json) {
        self.seq += 1;
        msg["seq"] = json!(self.seq);
        // A client that went away ends the session through its input.
        let _ = write_message(&mut self.out, &msg);
    }

    fn event(&mut self, event: &str, body: Json) {
        self.send(json!({"type": "event", "event": event, "body": body}));
    }

    fn respond(&mut self, req: i64, command: &str, body: Json) {
        self.send(json!({"type": "response", "request_seq": req, "success": true, "command": command, "body": body}));
    }

    fn respond_err(&mut self, req: i64, command: &str, message: &str) {
        self.send(
            json!({"type": "response", "request_seq": req, "success": false, "command": command,
            "message": message, "body": {"error": {"id": 1, "format": message, "showUser": true}}}),
        );
    }

    fn end_run(&mut self) {
        self.interrupt.store(true, Ordering::Relaxed);
        if let Some(r) = self.resume.take() {
            let _ = r.send(Resume::Abort);
        }
    }

    /// Handles one message; true when the session ends.
    fn message(&mut self, m: &Json) -> bool {
        let seq = m.get("seq").and_then(Json::as_i64).unwrap_or(0);
        if m.get("type").and_then(Json::as_str) != Some("request") {
            return false; // responses to reverse requests, stray events
        }
        let Some(command) = m.get("command").and_then(Json::as_str) else {
            self.respond_err(seq, "", "a request without a `command`");
            return false;
        };
        let a = args_of(m);
        let r = match command {
            "initialize" => {
                let from0 = |k: &str| a.get(k).and_then(Json::as_bool) == Some(false);
                self.line_shift = u32::from(from0("linesStartAt1"));
                self.column_shift = u32::from(from0("columnsStartAt1"));
                Ok(capabilities())
            }
            "launch" => self.launch(a),
            "attach" => Err("mirdsl dap launches programs; attach is not supported".into()),
            "setBreakpoints" => self.set_breakpoints(a),
            "setExceptionBreakpoints" => self.set_exception_breakpoints(a),
            "dataBreakpointInfo" => self.data_breakpoint_info(a),
            "setDataBreakpoints" => self.set_data_breakpoints(a),
            "setFunctionBreakpoints" => self.set_function_breakpoints(a),
            "loadedSources" => self.loaded_sources(),
            "exceptionInfo" => self.exception_info(),
            "configurationDone" => {
                self.configured = true;
                self.start();
                Ok(Json::Null)
            }
            "threads" => Ok(json!({"threads": [{"id": THREAD, "name": "main"}]})),
            "stackTrace" => self.stack_trace(a),
            "scopes" => self.scopes(a),
            "variables" => self.variables(a),
            "evaluate" => self.evaluate(a),
            "source" => self.source(a),
            "continue" => self
                .resume(Resume::Continue)
                .map(|_| json!({"allThreadsContinued": true})),
            "next" => self.resume(Resume::Next).map(|_| Json::Null),
            "stepIn" => self.resume(Resume::StepIn).map(|_| Json::Null),
            "stepOut" => self.resume(Resume::StepOut).map(|_| Json::Null),
            "pause" => {
                self.pause.store(true, Ordering::Relaxed);
                Ok(Json::Null)
            }
            "terminate" => {
                self.end_run();
                Ok(Json::Null)
            }
            "disconnect" => {
                self.end_run();
                self.respond(seq, command, Json::Null);
                return true;
            }
            other => Err(format!("mirdsl dap does not support `{other}`")),
        };
        match r {
            Ok(body) => {
                self.respond(seq, command, body);
                if command == "initialize" {
                    // Breakpoints come after `initialized`; they need the program,
                    // which `launch` loads, so it is sent there.
                }
                if command == "launch" {
                    self.event("initialized", Json::Null);
                }
            }
            Err(msg) => self.respond_err(seq, command, &msg),
        }
        false
    }

    fn launch(&mut self, a: &Json) -> Result<Json, String> {
        if self.launch.is_some() {
            return Err("this session has launched already".into());
        }
        let args = LaunchArgs::from_json(a)?;
        let loaded = launch::load(&args)?;
        self.launch = Some((args, Arc::new(loaded)));
        if self.configured {
            self.start();
        }
        Ok(Json::Null)
    }

    fn start(&mut self) {
        if self.started {
            return;
        }
        let Some((args, loaded)) = self.launch.clone() else {
            return;
        };
        self.started = true;
        let (rtx, rrx) = channel();
        let (etx, erx) = channel::<RunEvent>();
        self.resume = Some(rtx);
        let links = RunLinks {
            settings: self.settings.clone(),
            pause: self.pause.clone(),
            interrupt: self.interrupt.clone(),
            resume: rrx,
            events: etx,
        };
        let fwd = self.run_events.clone();
        std::thread::spawn(move || {
            while let Ok(e) = erx.recv() {
                if fwd.send(Event::Run(e)).is_err() {
                    return;
                }
            }
        });
        std::thread::Builder::new()
            .name("mirdsl-debuggee".into())
            .stack_size(64 << 20)
            .spawn(move || launch::run(&args, &loaded, links))
            .expect("a thread for the run");
    }

    fn run_event(&mut self, e: RunEvent) {
        match e {
            RunEvent::Stopped(stop) => {
                let mut body = json!({"reason": stop.reason, "description": stop.description,
                    "threadId": THREAD, "allThreadsStopped": true});
                if let Some(t) = &stop.text {
                    body["text"] = json!(t);
                }
                if !stop.hit.is_empty() {
                    body["hitBreakpointIds"] = json!(stop.hit);
                }
                self.stopped = Some(stop);
                self.refs.clear();
                self.event("stopped", body);
            }
            RunEvent::Output { category, text } => {
                self.event("output", json!({"category": category, "output": text}))
            }
            RunEvent::Exited(code) => {
                if !self.finished {
                    self.finished = true;
                    self.resume = None;
                    self.stopped = None;
                    self.event("exited", json!({"exitCode": code}));
                    self.event("terminated", json!({}));
                }
            }
        }
    }

    fn resume(&mut self, r: Resume) -> Result<(), String> {
        if self.stopped.is_none() {
            return Err("the program is not stopped".into());
        }
        self.stopped = None;
        self.refs.clear();
        if let Some(tx) = &self.resume {
            tx.send(r).map_err(|_| "the run has ended".to_string())?;
        }
        Ok(())
    }

    fn loaded(&self) -> Result<&Arc<Loaded>, String> {
        self.launch
            .as_ref()
            .map(|(_, l)| l)
            .ok_or_else(|| "no program is launched".to_string())
    }

    fn set_breakpoints(&mut self, a: &Json) -> Result<Json, String> {
        let loaded = self.loaded()?.clone();
        let source = a.get("source").ok_or("`source` is missing")?;
        let module = match source.get("sourceReference").and_then(Json::as_i64) {
            Some(r) if r > 0 => Some(r as usize - 1).filter(|&m| m < loaded.map.documents()),
            _ => source
                .get("path")
                .and_then(Json::as_str)
                .and_then(|p| loaded.map.module_of_path(p)),
        };
        let text = |b: &Json, k: &str| {
            b.get(k)
                .and_then(Json::as_str)
                .filter(|c| !c.trim().is_empty())
                .map(String::from)
        };
        type Wanted = (u32, Option<String>, Option<String>, Option<String>);
        let wanted: Vec<Wanted> = match a.get("breakpoints").and_then(Json::as_array) {
            Some(bs) => bs
                .iter()
                .map(|b| {
                    (
                        b.get("line").and_then(Json::as_u64).unwrap_or(0) as u32 + self.line_shift,
                        text(b, "condition"),
                        text(b, "hitCondition"),
                        text(b, "logMessage"),
                    )
                })
                .collect(),
            None => a
                .get("lines")
                .and_then(Json::as_array)
                .map(|ls| {
                    ls.iter()
                        .map(|l| {
                            (
                                l.as_u64().unwrap_or(0) as u32 + self.line_shift,
                                None,
                                None,
                                None,
                            )
                        })
                        .collect()
                })
                .unwrap_or_default(),
        };
        let mut out = Vec::new();
        let mut set = Vec::new();
        for (line, condition, hit_condition, log) in wanted {
            if let Some(h) = &hit_condition {
                if crate::runner::HitCondition::parse(h).is_none() {
                    let id = self.next_id;
                    self.next_id += 1;
                    out.push(json!({"id": id, "verified": false, "line": line - self.line_shift,
                        "message": format!("`{h}` is not a hit count: write N, >= N, > N, == N or % N")}));
                    continue;
                }
            }
            let id = self.next_id;
            self.next_id += 1;
            let resolved = module.and_then(|m| loaded.map.statement_line(m, line));
            match (module, resolved) {
                (Some(_), Some(l)) => {
                    set.push(LineBreakpoint {
                        hit_condition: hit_condition
                            .as_deref()
                            .and_then(crate::runner::HitCondition::parse),
                        log,
                        id,
                        line: l,
                        condition,
                    });
                    out.push(json!({"id": id, "verified": true, "line": l - self.line_shift}));
                }
                (None, _) => out.push(
                    json!({"id": id, "verified": false, "line": line - self.line_shift,
                    "message": "this file is not part of the program being debugged"}),
                ),
                (Some(_), None) => out.push(
                    json!({"id": id, "verified": false, "line": line - self.line_shift,
                    "message": "no statement on or after this line"}),
                ),
            }
        }
        if let Some(m) = module {
            self.settings.lock().expect("settings").lines.insert(m, set);
        }
        Ok(json!({"breakpoints": out}))
    }

    /// Function breakpoints name graphs: the run stops at a graph's first
    /// statement each time it is called.
    fn set_function_breakpoints(&mut self, a: &Json) -> Result<Json, String> {
        let mut set = Vec::new();
        let mut out = Vec::new();
        for b in a
            .get("breakpoints")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let id = self.next_id;
            self.next_id += 1;
            let name = b
                .get("name")
                .and_then(Json::as_str)
                .unwrap_or("")
                .trim()
                .to_string();
            let known = self
                .loaded()
                .is_ok_and(|l| l.program.graph(&name).is_some());
            if known {
                set.push((id, name));
                out.push(json!({"id": id, "verified": true}));
            } else {
                out.push(
                    json!({"id": id, "verified": false, "message": format!("no graph `{name}`")}),
                );
            }
        }
        self.settings.lock().expect("settings").functions = set;
        Ok(json!({"breakpoints": out}))
    }

    fn loaded_sources(&mut self) -> Result<Json, String> {
        let n = self.loaded()?.map.documents();
        let sources: Vec<Json> = (0..n).map(|m| self.source_json(m)).collect();
        Ok(json!({"sources": sources}))
    }

    fn exception_info(&mut self) -> Result<Json, String> {
        let stop = self.stopped()?;
        if stop.reason != "exception" {
            return Err("the program did not stop on an exception".into());
        }
        let id = match stop.description.as_str() {
            "NaN or Inf" => "nan",
            "threshold" => "threshold",
            _ => "fault",
        };
        Ok(
            json!({"exceptionId": id, "description": stop.text.clone().unwrap_or_default(),
            "breakMode": if id == "fault" { "unhandled" } else { "always" }}),
        )
    }

    fn set_exception_breakpoints(&mut self, a: &Json) -> Result<Json, String> {
        let mut filters: Vec<String> = a
            .get("filters")
            .and_then(Json::as_array)
            .map(|f| {
                f.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        let mut threshold = None;
        for o in a
            .get("filterOptions")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let id = o.get("filterId").and_then(Json::as_str).unwrap_or("");
            if id == "threshold" {
                let c = o
                    .get("condition")
                    .and_then(Json::as_str)
                    .unwrap_or("")
                    .trim();
                threshold = Some(if c.is_empty() {
                    DEFAULT_THRESHOLD
                } else {
                    c.parse::<f64>().map_err(|_| {
                        format!(
                            "the threshold filter's condition is a number (e.g. 1e6), not `{c}`"
                        )
                    })?
                });
            }
            filters.push(id.to_string());
        }
        let mut s = self.settings.lock().expect("settings");
        s.nan = filters.iter().any(|f| f == "nan");
        s.threshold = if filters.iter().any(|f| f == "threshold") {
            Some(threshold.unwrap_or(DEFAULT_THRESHOLD))
        } else {
            None
        };
        let n = filters.len();
        drop(s);
        Ok(json!({"breakpoints": vec![json!({"verified": true}); n]}))
    }

    fn data_breakpoint_info(&mut self, a: &Json) -> Result<Json, String> {
        let name = a.get("name").and_then(Json::as_str).unwrap_or("");
        let loaded = self.loaded()?;
        if loaded.program.weight(name).is_some() {
            Ok(
                json!({"dataId": format!("weight:{name}"), "description": format!("weight `{name}`"),
                "accessTypes": ["write"], "canPersist": true}),
            )
        } else {
            Ok(json!({"dataId": null, "description": "only weights can be watched"}))
        }
    }

    fn set_data_breakpoints(&mut self, a: &Json) -> Result<Json, String> {
        let mut set = Vec::new();
        let mut out = Vec::new();
        for b in a
            .get("breakpoints")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let id = self.next_id;
            self.next_id += 1;
            let data_id = b.get("dataId").and_then(Json::as_str).unwrap_or("");
            let (weight, unchanged) = if let Some(w) = data_id.strip_prefix("weight-unchanged:") {
                (w, true)
            } else if let Some(w) = data_id.strip_prefix("weight:") {
                let cond = b
                    .get("condition")
                    .and_then(Json::as_str)
                    .unwrap_or("")
                    .trim();
                (w, cond == "unchanged")
            } else {
                out.push(json!({"id": id, "verified": false, "message": format!("`{data_id}` is not a weight")}));
                continue;
            };
            let known = self
                .loaded()
                .is_ok_and(|l| l.program.weight(weight).is_some());
            if !known {
                out.push(json!({"id": id, "verified": false, "message": format!("no weight `{weight}`")}));
                continue;
            }
            set.push(DataBreakpoint {
                id,
                weight: weight.to_string(),
                unchanged,
            });
            out.push(json!({"id": id, "verified": true}));
        }
        self.settings.lock().expect("settings").data = set;
        Ok(json!({"breakpoints": out}))
    }

    fn stopped(&self) -> Result<&Stop, String> {
        self.stopped
            .as_ref()
            .ok_or_else(|| "the program is not stopped".to_string())
    }

    fn source_json(&self, module: usize) -> Json {
        let Ok(l) = self.loaded() else {
            return Json::Null;
        };
        if let Some((name, _)) = l.map.generated(module) {
            return json!({"name": format!("{name}.grad.mir"), "sourceReference": module + 1,
                "presentationHint": "deemphasize", "origin": "generated by differentiation"});
        }
        let m = &l.map.modules[module];
        let name = m
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| m.path.display().to_string());
        if m.on_disk() {
            let path = std::fs::canonicalize(&m.path).unwrap_or_else(|_| m.path.clone());
            json!({"name": name, "path": path.display().to_string()})
        } else {
            json!({"name": name, "path": m.path.display().to_string(),
                "sourceReference": module + 1, "presentationHint": "deemphasize"})
        }
    }

    fn stack_trace(&mut self, a: &Json) -> Result<Json, String> {
        let stop = self.stopped()?;
        let start = a.get("startFrame").and_then(Json::as_u64).unwrap_or(0) as usize;
        let levels = a.get("levels").and_then(Json::as_u64).unwrap_or(0) as usize;
        let total = stop.frames.len();
        let end = if levels == 0 {
            total
        } else {
            (start + levels).min(total)
        };
        let frames: Vec<(usize, String, Option<crate::source::Loc>)> = stop.frames
            [start.min(total)..end]
            .iter()
            .enumerate()
            .map(|(k, f)| (start + k, f.name.clone(), f.loc))
            .collect();
        let out: Vec<Json> = frames
            .into_iter()
            .map(|(i, name, loc)| match loc {
                Some(l) => json!({"id": i + 1, "name": name, "source": self.source_json(l.module),
                    "line": l.line - self.line_shift, "column": l.column - self.column_shift,
                    "endLine": l.end_line - self.line_shift, "endColumn": l.end_column - self.column_shift}),
                None => json!({"id": i + 1, "name": name, "line": 0, "column": 0,
                    "presentationHint": "subtle"}),
            })
            .collect();
        Ok(json!({"stackFrames": out, "totalFrames": total}))
    }

    fn frame_index(&self, a: &Json) -> Result<usize, String> {
        let stop = self.stopped()?;
        let id = a.get("frameId").and_then(Json::as_u64).unwrap_or(1) as usize;
        if id == 0 || id > stop.frames.len() {
            return Err(format!("no frame {id}"));
        }
        Ok(id - 1)
    }

    fn new_ref(&mut self, r: VarRef) -> usize {
        self.refs.push(r);
        self.refs.len()
    }

    fn scopes(&mut self, a: &Json) -> Result<Json, String> {
        let i = self.frame_index(a)?;
        let locals = self.new_ref(VarRef::Locals(i));
        let weights = self.new_ref(VarRef::Weights);
        Ok(json!({"scopes": [
            {"name": "Locals", "presentationHint": "locals", "variablesReference": locals, "expensive": false},
            {"name": "Weights", "variablesReference": weights, "expensive": false},
        ]}))
    }

    fn variable(&mut self, name: &str, v: &exec::Value) -> Json {
        let r = if inspect::expandable(v) {
            self.new_ref(VarRef::Value(v.clone(), Vec::new()))
        } else {
            0
        };
        json!({"name": name, "value": inspect::summary(v), "type": inspect::type_of(v),
            "variablesReference": r, "evaluateName": name})
    }

    fn variables(&mut self, a: &Json) -> Result<Json, String> {
        let r = a
            .get("variablesReference")
            .and_then(Json::as_u64)
            .unwrap_or(0) as usize;
        let target = self
            .refs
            .get(r.wrapping_sub(1))
            .cloned()
            .ok_or_else(|| format!("no variables {r}"))?;
        let stop = self.stopped()?;
        let out: Vec<Json> = match target {
            VarRef::Locals(i) => {
                let vars = stop.frames[i].vars.clone();
                vars.iter().map(|(n, v)| self.variable(n, v)).collect()
            }
            VarRef::Weights => {
                let ws = stop.weights.clone();
                ws.iter().map(|(n, v)| self.variable(n, v)).collect()
            }
            VarRef::Group(vars) => vars.iter().map(|(n, v)| self.variable(n, v)).collect(),
            VarRef::Value(v, path) => inspect::children(&v, &path)
                .into_iter()
                .map(|c| {
                    let r = match c.path {
                        Some(p) => self.new_ref(VarRef::Value(v.clone(), p)),
                        None => 0,
                    };
                    json!({"name": c.name, "value": c.value, "type": c.ty, "variablesReference": r})
                })
                .collect(),
        };
        // Paging (`start`, `count`), as clients ask for big tensors.
        let start = a.get("start").and_then(Json::as_u64).unwrap_or(0) as usize;
        let out: Vec<Json> = match a.get("count").and_then(Json::as_u64) {
            Some(n) if n > 0 => out.into_iter().skip(start).take(n as usize).collect(),
            _ => out.into_iter().skip(start).collect(),
        };
        Ok(json!({"variables": out}))
    }

    fn evaluate(&mut self, a: &Json) -> Result<Json, String> {
        let expr = a
            .get("expression")
            .and_then(Json::as_str)
            .unwrap_or("")
            .trim()
            .to_string();
        let context = a.get("context").and_then(Json::as_str).unwrap_or("");
        let i = if a.get("frameId").is_some() {
            self.frame_index(a)?
        } else {
            0
        };
        let stop = self.stopped()?;
        let scope = stop
            .frames
            .get(i)
            .map(|f| f.vars.clone())
            .unwrap_or_default();
        let weights = stop.weights.clone();
        let direct = scope
            .iter()
            .rev()
            .chain(weights.iter())
            .find(|(n, _)| *n == expr)
            .map(|(_, v)| v.clone());
        // An imported model's names carry MindSpore's scope (`block.act.div`).
        let imported = self.loaded().is_ok_and(|l| l.scratch.is_some());
        let value = match direct {
            Some(v) => v,
            None => {
                // A cell's name (a hover on `block` or `fc` of `block.fc.x`):
                // the values and weights in its scope.
                let members: Vec<(String, exec::Value)> = if imported {
                    let values = crate::scope::members(&expr, &scope);
                    let ws = crate::scope::members(&expr, &weights);
                    values.into_iter().chain(ws).cloned().collect()
                } else {
                    Vec::new()
                };
                if !members.is_empty() {
                    let n = members.len();
                    let w = members
                        .iter()
                        .filter(|(m, _)| weights.iter().any(|(x, _)| x == m))
                        .count();
                    let name = crate::scope::of(&format!("{expr}._")).unwrap_or(expr.clone());
                    let r = self.new_ref(VarRef::Group(members));
                    return Ok(json!({"result": format!(
                        "MindSpore scope `{name}`: {} values, {w} weights", n - w),
                        "variablesReference": r}));
                }
                let l = self.loaded()?;
                let ev = Evaluator {
                    root: l.root.clone(),
                    text: l.text.clone(),
                    base_dir: l.base_dir.clone(),
                };
                ev.evaluate(&expr, &scope, &weights)?
            }
        };
        if context == "clipboard" {
            // "Copy Value": every element, as `mirdsl run` prints them.
            let text = exec::output::to_text(&value);
            return Ok(json!({"result": text.trim_end(), "variablesReference": 0}));
        }
        let r = if inspect::expandable(&value) {
            self.new_ref(VarRef::Value(value.clone(), Vec::new()))
        } else {
            0
        };
        let mut result = inspect::summary(&value);
        if let Some(s) = crate::scope::of(&expr).filter(|_| imported) {
            // First, where a narrow hover does not cut it off.
            result = format!("MindSpore scope `{s}`: {result}");
        }
        Ok(json!({"result": result, "type": inspect::type_of(&value), "variablesReference": r}))
    }

    fn source(&mut self, a: &Json) -> Result<Json, String> {
        let l = self.loaded()?;
        let r = a
            .get("sourceReference")
            .or_else(|| a.get("source").and_then(|s| s.get("sourceReference")))
            .and_then(Json::as_u64)
            .unwrap_or(0) as usize;
        let text = match l.map.modules.get(r.wrapping_sub(1)) {
            Some(m) => m.text.clone(),
            None => {
                l.map
                    .generated(r.wrapping_sub(1))
                    .ok_or_else(|| format!("no source {r}"))?
                    .1
            }
        };
        Ok(json!({"content": &*text, "mimeType": "text/x-mindir"}))
    }
}

/// What the adapter can do (the `initialize` response).
pub fn capabilities() -> Json {
    json!({
        "supportsConfigurationDoneRequest": true,
        "supportsConditionalBreakpoints": true,
        "supportsEvaluateForHovers": true,
        "supportsDataBreakpoints": true,
        "supportsExceptionFilterOptions": true,
        "supportsTerminateRequest": true,
        "supportsFunctionBreakpoints": true,
        "supportsHitConditionalBreakpoints": true,
        "supportsLogPoints": true,
        "supportsLoadedSourcesRequest": true,
        "supportsExceptionInfoRequest": true,
        "supportsClipboardContext": true,
        "exceptionBreakpointFilters": [
            {"filter": "nan", "label": "NaN or Inf",
             "description": "Stop at the first statement whose result holds a NaN or Inf that its operands did not", "default": false},
            {"filter": "threshold", "label": "Values above a threshold",
             "description": "Stop at the first statement whose result exceeds the threshold in magnitude",
             "default": false, "supportsCondition": true,
             "conditionDescription": "the largest magnitude allowed, e.g. 1e6"}
        ]
    })
}
