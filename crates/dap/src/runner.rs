//! The debuggee's thread: runs the entry on an [`exec::Executor`] with an
//! observer that decides where to stop, reports each stop to the session
//! with a snapshot of the stack, and waits there for the session's command.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};

use exec::{ErrorKind, Frames, Observer, RunError, Value};
use ir::NodeKind;

use crate::eval::Evaluator;
use crate::inspect;
use crate::source::{Loc, SourceMap};

/// What the session tells a stopped run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    Continue,
    Next,
    StepIn,
    StepOut,
    /// End the run (the session ends).
    Abort,
}

/// A line breakpoint.
#[derive(Debug, Clone)]
pub struct LineBreakpoint {
    pub id: i64,
    pub line: u32,
    pub condition: Option<String>,
    pub hit_condition: Option<HitCondition>,
    /// A logpoint's message: written (with `{EXPR}` evaluated) instead of stopping.
    pub log: Option<String>,
}

/// When a breakpoint stops, by the number of times it was reached (its
/// condition held): `N` or `== N`, `>= N`, `> N`, `% N`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HitCondition {
    Eq(u64),
    Ge(u64),
    Gt(u64),
    Every(u64),
}

impl HitCondition {
    pub fn parse(text: &str) -> Option<HitCondition> {
        let t = text.trim();
        let (op, n) = ["==", ">=", ">", "%"]
            .iter()
            .find_map(|op| t.strip_prefix(op).map(|rest| (*op, rest)))
            .unwrap_or(("==", t));
        let n: u64 = n.trim().parse().ok()?;
        Some(match op {
            "==" => HitCondition::Eq(n),
            ">=" => HitCondition::Ge(n),
            ">" => HitCondition::Gt(n),
            _ if n == 0 => return None,
            _ => HitCondition::Every(n),
        })
    }

    fn holds(self, hits: u64) -> bool {
        match self {
            HitCondition::Eq(n) => hits == n,
            HitCondition::Ge(n) => hits >= n,
            HitCondition::Gt(n) => hits > n,
            HitCondition::Every(n) => hits.is_multiple_of(n),
        }
    }
}

/// A data breakpoint on a weight.
#[derive(Debug, Clone)]
pub struct DataBreakpoint {
    pub id: i64,
    pub weight: String,
    /// Stop when a training step leaves it unchanged (else: when it changes).
    pub unchanged: bool,
}

/// What the session sets and the observer reads.
#[derive(Default)]
pub struct Settings {
    pub lines: HashMap<usize, Vec<LineBreakpoint>>,
    pub nan: bool,
    pub threshold: Option<f64>,
    pub data: Vec<DataBreakpoint>,
    /// Function breakpoints: (id, graph name).
    pub functions: Vec<(i64, String)>,
}

/// One frame as shown at a stop, innermost first.
pub struct FrameSnap {
    pub name: String,
    pub loc: Option<Loc>,
    pub vars: Vec<(String, Value)>,
}

/// A stop.
pub struct Stop {
    /// `entry`, `breakpoint`, `step`, `pause`, `exception`, `data breakpoint`.
    pub reason: &'static str,
    pub description: String,
    pub text: Option<String>,
    pub hit: Vec<i64>,
    pub frames: Vec<FrameSnap>,
    pub weights: Vec<(String, Value)>,
}

/// What the run tells the session.
pub enum RunEvent {
    Stopped(Stop),
    Output {
        category: &'static str,
        text: String,
    },
    Exited(i32),
}

#[derive(Clone, Copy)]
enum Mode {
    Run,
    Entry,
    StepIn {
        depth: usize,
        line: Option<(usize, u32)>,
    },
    Next {
        depth: usize,
        line: Option<(usize, u32)>,
    },
    Out {
        depth: usize,
    },
}

pub struct DebugObserver {
    pub map: Arc<SourceMap>,
    pub settings: Arc<Mutex<Settings>>,
    pub pause: Arc<AtomicBool>,
    pub resume: Receiver<Resume>,
    pub events: Sender<RunEvent>,
    pub eval: Evaluator,
    /// Name frames with the MindSpore scope of their statement (imported
    /// models keep it as the prefix of each name: `gelu.div`).
    pub show_scopes: bool,
    /// Initial values of weights the run has not used yet, made once to show them.
    initial: HashMap<u32, Value>,
    /// How many times each line breakpoint was reached with its condition holding.
    hits: HashMap<i64, u64>,
    mode: Mode,
    /// The line each frame (by depth) was last seen on.
    last_line: Vec<Option<(usize, u32)>>,
    /// Watched weights' values before the current step.
    before_step: HashMap<u32, Value>,
    /// Watched weights' values when the current call of the entry started.
    pub call_start: Arc<Mutex<HashMap<String, Value>>>,
}

impl DebugObserver {
    pub fn new(
        map: Arc<SourceMap>,
        settings: Arc<Mutex<Settings>>,
        pause: Arc<AtomicBool>,
        resume: Receiver<Resume>,
        events: Sender<RunEvent>,
        eval: Evaluator,
        stop_on_entry: bool,
    ) -> DebugObserver {
        DebugObserver {
            map,
            settings,
            pause,
            resume,
            events,
            eval,
            show_scopes: false,
            initial: HashMap::new(),
            hits: HashMap::new(),
            mode: if stop_on_entry {
                Mode::Entry
            } else {
                Mode::Run
            },
            last_line: Vec::new(),
            before_step: HashMap::new(),
            call_start: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    fn loc(&self, frames: &Frames<'_>, i: usize) -> Option<Loc> {
        let f = frames.frame(i)?;
        if i == 0 && frames.returning() {
            // The `return` statement: the graph's last line that starts with it.
            let g = f.body().graph(f.graph());
            if let Some(l) = g.span.and_then(|s| self.map.locate(s)) {
                if let Some(line) = self.map.return_line(l.module, l.line, l.end_line) {
                    return Some(Loc {
                        module: l.module,
                        line,
                        column: 1,
                        end_line: line,
                        end_column: 1,
                    });
                }
            }
        }
        let node = f.node()?;
        match f.body().node(node).span {
            Some(span) => self.map.locate(span),
            // A statement a transformation made (a gradient program's
            // backward pass): its line in the printed program.
            None if f.body().graph(f.body().root()).origin == ir::GraphOrigin::Generated => {
                self.map.locate_generated(f.item_name(), f.body(), node)
            }
            None => None,
        }
    }

    fn snapshot(&mut self, frames: &Frames<'_>) -> (Vec<FrameSnap>, Vec<(String, Value)>) {
        let mut out = Vec::new();
        for i in 0..frames.len() {
            let Some(f) = frames.frame(i) else { break };
            let body = f.body();
            let vars = f
                .values()
                .into_iter()
                .filter_map(|(n, v)| {
                    let node = body.node(n);
                    let name = node.name.clone()?;
                    if !matches!(node.kind, NodeKind::Param { .. } | NodeKind::Apply(_)) {
                        return None;
                    }
                    Some((name, v.clone()))
                })
                .collect();
            let mut name = if f.name() == f.item_name() {
                f.name().to_string()
            } else {
                format!("{} (in {})", f.name(), f.item_name())
            };
            if self.show_scopes {
                let scope = f
                    .node()
                    .and_then(|n| body.node(n).name.as_deref())
                    .and_then(crate::scope::of);
                if let Some(scope) = scope {
                    name.push_str(&format!(" [{scope}]"));
                }
            }
            out.push(FrameSnap {
                name,
                loc: self.loc(frames, i),
                vars,
            });
        }
        (out, weights_of(frames, &mut self.initial))
    }

    /// Reports a stop and waits for the session's command.
    fn stop(
        &mut self,
        frames: &Frames<'_>,
        reason: &'static str,
        description: String,
        text: Option<String>,
        hit: Vec<i64>,
    ) -> Result<(), RunError> {
        self.pause.store(false, Ordering::Relaxed);
        let (snap, weights) = self.snapshot(frames);
        let _ = self.events.send(RunEvent::Stopped(Stop {
            reason,
            description,
            text,
            hit,
            frames: snap,
            weights,
        }));
        let depth = frames.len();
        let line = self.loc(frames, 0).map(|l| (l.module, l.line));
        let r = self.resume.recv().unwrap_or(Resume::Abort);
        self.mode = match r {
            Resume::Continue => Mode::Run,
            Resume::Next => Mode::Next { depth, line },
            Resume::StepIn => Mode::StepIn { depth, line },
            Resume::StepOut => Mode::Out { depth },
            Resume::Abort => {
                return Err(RunError::new(
                    ErrorKind::Interrupted,
                    "the debug session ended",
                ))
            }
        };
        Ok(())
    }

    /// A logpoint's message with each `{EXPR}` replaced by its value's summary.
    fn log_text(&mut self, frames: &Frames<'_>, message: &str) -> String {
        let (snap, weights) = self.snapshot(frames);
        let scope = snap.first().map(|f| f.vars.clone()).unwrap_or_default();
        let mut out = String::new();
        let mut rest = message;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else {
                break;
            };
            out.push_str(&rest[..open]);
            let expr = &rest[open + 1..open + close];
            let direct = scope
                .iter()
                .rev()
                .chain(weights.iter())
                .find(|(n, _)| n == expr.trim());
            let shown = match direct {
                Some((_, v)) => inspect::summary(v),
                None => match self.eval.evaluate(expr, &scope, &weights) {
                    Ok(v) => inspect::summary(&v),
                    Err(m) => format!("<{m}>"),
                },
            };
            out.push_str(&shown);
            rest = &rest[open + close + 1..];
        }
        out.push_str(rest);
        out
    }

    fn watched(&self, frames: &Frames<'_>) -> Vec<(u32, DataBreakpoint)> {
        let s = self.settings.lock().expect("settings");
        if s.data.is_empty() {
            return Vec::new();
        }
        (0..frames.weight_count() as u32)
            .filter_map(|w| {
                let (name, _) = frames.weight(w)?;
                s.data
                    .iter()
                    .find(|d| d.weight == name)
                    .map(|d| (w, d.clone()))
            })
            .collect()
    }
}

/// The largest weight a stop initialises to show it before the run uses it.
const SHOWN_UNUSED_WEIGHT: usize = 64 << 20;

/// Every weight: its current value, or for one the run has not used yet
/// the value its initialiser gives (the same the run will).
fn weights_of(frames: &Frames<'_>, initial: &mut HashMap<u32, Value>) -> Vec<(String, Value)> {
    (0..frames.weight_count() as u32)
        .filter_map(|w| {
            let (name, v) = frames.weight(w)?;
            let v = match v {
                Some(v) => v.clone(),
                None if initial.contains_key(&w) => initial[&w].clone(),
                None => {
                    let def = frames.weight_def(w)?;
                    let (t, scalar) = exec::weights::init_weight_within(
                        def,
                        frames.base_dir(),
                        SHOWN_UNUSED_WEIGHT,
                    )
                    .ok()?;
                    let v = Value::Tensor(if scalar {
                        exec::TensorVal::new_scalar(t, false, None)
                    } else {
                        exec::TensorVal::new(t, None)
                    });
                    initial.insert(w, v.clone());
                    v
                }
            };
            Some((name.to_string(), v))
        })
        .collect()
}

impl Observer for DebugObserver {
    fn before(&mut self, frames: &Frames<'_>) -> Result<(), RunError> {
        let depth = frames.len();
        let loc = self.loc(frames, 0);
        let line = loc.map(|l| (l.module, l.line));
        self.last_line.truncate(depth);
        self.last_line.resize(depth, None);
        let entered = line.is_some() && self.last_line[depth - 1].is_none();
        let new_line = line.is_some() && self.last_line[depth - 1] != line;
        self.last_line[depth - 1] = line.or(self.last_line[depth - 1]);
        // Watched weights before this step, and "did not change" at the end of a call.
        let watched = self.watched(frames);
        for (w, d) in &watched {
            if let Some((_, Some(v))) = frames.weight(*w) {
                self.before_step.insert(*w, v.clone());
            }
            if d.unchanged && depth == 1 && frames.returning() {
                let start = self
                    .call_start
                    .lock()
                    .expect("start")
                    .get(&d.weight)
                    .cloned();
                if let (Some(s), Some((_, Some(now)))) = (start, frames.weight(*w)) {
                    if inspect::same(&s, now) {
                        let msg = format!("weight `{}` did not change in this step", d.weight);
                        return self.stop(
                            frames,
                            "data breakpoint",
                            msg.clone(),
                            Some(msg),
                            vec![d.id],
                        );
                    }
                }
            }
        }
        if self.pause.load(Ordering::Relaxed) {
            return self.stop(frames, "pause", "paused".into(), None, Vec::new());
        }
        if loc.is_none() {
            return Ok(());
        }
        match self.mode {
            Mode::Entry => {
                return self.stop(frames, "entry", "stopped on entry".into(), None, Vec::new())
            }
            Mode::StepIn { depth: d, line: l } if new_line && (depth != d || line != l) => {
                return self.stop(frames, "step", "step".into(), None, Vec::new());
            }
            Mode::Next { depth: d, .. } if depth < d => {
                return self.stop(frames, "step", "step".into(), None, Vec::new());
            }
            Mode::Next { depth: d, line: l } if depth == d && new_line && line != l => {
                return self.stop(frames, "step", "step".into(), None, Vec::new());
            }
            Mode::Out { depth: d } if depth < d => {
                return self.stop(frames, "step", "step out".into(), None, Vec::new());
            }
            _ => {}
        }
        if entered {
            let hit: Vec<i64> = {
                let s = self.settings.lock().expect("settings");
                let f = frames.frame(0).expect("a frame");
                s.functions
                    .iter()
                    .filter(|(_, n)| {
                        n == f.name() || n == f.item_name() && f.name() == f.item_name()
                    })
                    .map(|(id, _)| *id)
                    .collect()
            };
            if !hit.is_empty() {
                return self.stop(
                    frames,
                    "function breakpoint",
                    "function breakpoint".into(),
                    None,
                    hit,
                );
            }
        }
        if !new_line {
            return Ok(());
        }
        let (module, l) = line.expect("a line");
        let bps: Vec<LineBreakpoint> = {
            let s = self.settings.lock().expect("settings");
            s.lines
                .get(&module)
                .map(|v| v.iter().filter(|b| b.line == l).cloned().collect())
                .unwrap_or_default()
        };
        let mut hit = Vec::new();
        let mut notes = Vec::new();
        for b in bps {
            let reached = match &b.condition {
                None => true,
                Some(c) => {
                    let (snap, weights) = self.snapshot(frames);
                    let scope = snap.first().map(|f| f.vars.clone()).unwrap_or_default();
                    match self.eval.evaluate(c, &scope, &weights) {
                        Ok(v) => inspect::truthy(&v) == Some(true),
                        Err(m) => {
                            // A condition that fails stops, saying why (as VS Code's adapters do).
                            notes.push(format!("the condition `{c}` failed: {m}"));
                            hit.push(b.id);
                            continue;
                        }
                    }
                }
            };
            if !reached {
                continue;
            }
            let n = self.hits.entry(b.id).or_insert(0);
            *n += 1;
            if b.hit_condition.is_some_and(|h| !h.holds(*n)) {
                continue;
            }
            match &b.log {
                Some(message) => {
                    let text = self.log_text(frames, message);
                    let _ = self.events.send(RunEvent::Output {
                        category: "console",
                        text: format!("{text}\n"),
                    });
                }
                None => hit.push(b.id),
            }
        }
        if !hit.is_empty() {
            let text = (!notes.is_empty()).then(|| notes.join("; "));
            return self.stop(frames, "breakpoint", "breakpoint".into(), text, hit);
        }
        Ok(())
    }

    fn fault(&mut self, frames: &Frames<'_>, error: &RunError) {
        // Stop where the run failed, so its values can be read; any resume ends it.
        let msg = format!("run-time fault: {}", error.message);
        let _ = self.stop(
            frames,
            "exception",
            "run-time fault".into(),
            Some(msg),
            Vec::new(),
        );
    }

    fn after(&mut self, frames: &Frames<'_>, writes: &[u32]) -> Result<(), RunError> {
        // Data breakpoints: a watched weight this step wrote with new bits.
        if !writes.is_empty() {
            for (w, d) in self.watched(frames) {
                if d.unchanged || !writes.contains(&w) {
                    continue;
                }
                let (Some(old), Some((_, Some(new)))) =
                    (self.before_step.get(&w), frames.weight(w))
                else {
                    continue;
                };
                if !inspect::same(old, new) {
                    let delta = delta(old, new);
                    let msg = format!("weight `{}` changed (largest change {delta})", d.weight);
                    return self.stop(
                        frames,
                        "data breakpoint",
                        msg.clone(),
                        Some(msg),
                        vec![d.id],
                    );
                }
            }
        }
        let (nan, threshold) = {
            let s = self.settings.lock().expect("settings");
            (s.nan, s.threshold)
        };
        if !nan && threshold.is_none() {
            return Ok(());
        }
        let Some(f) = frames.frame(0) else {
            return Ok(());
        };
        let Some(node) = f.node() else { return Ok(()) };
        let body = f.body();
        let Some(result) = f.value(node) else {
            return Ok(());
        };
        let NodeKind::Apply(inputs) = &body.node(node).kind else {
            return Ok(());
        };
        let callee = describe_callee(body, inputs[0]);
        // The operands as values, with a name to show.
        let operands: Vec<(String, Value)> = inputs[1..]
            .iter()
            .enumerate()
            .filter_map(|(k, &n)| {
                let v = match &body.node(n).kind {
                    NodeKind::Const(c)
                        if !matches!(c, ir::Value::Graph(_) | ir::Value::Global(_)) =>
                    {
                        const_value(c)?
                    }
                    _ => f.value(n)?.clone(),
                };
                let name = body
                    .node(n)
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("operand {k}"));
                Some((name, v))
            })
            .collect();
        if nan {
            let (n, i) = inspect::bad_count(result);
            if n + i > 0 {
                let bad_in: Vec<&(String, Value)> = operands
                    .iter()
                    .filter(|(_, v)| {
                        let (a, b) = inspect::bad_count(v);
                        a + b > 0
                    })
                    .collect();
                // Stop where bad numbers first appear, not everywhere they flow.
                if bad_in.is_empty() {
                    let what = match (n, i) {
                        (0, i) => format!("{i} Inf"),
                        (n, 0) => format!("{n} NaN"),
                        (n, i) => format!("{n} NaN and {i} Inf"),
                    };
                    let culprit = culprit(&callee, &operands);
                    let msg = format!("`{callee}` produced {what} from finite operands{culprit}");
                    return self.stop(
                        frames,
                        "exception",
                        "NaN or Inf".into(),
                        Some(msg),
                        Vec::new(),
                    );
                }
            }
        }
        if let Some(t) = threshold {
            if inspect::max_abs(result).is_some_and(|m| m > t) {
                let over_in = operands
                    .iter()
                    .any(|(_, v)| inspect::max_abs(v).is_some_and(|m| m > t));
                if !over_in {
                    let m = inspect::max_abs(result).unwrap_or(0.0);
                    let culprit = culprit(&callee, &operands);
                    let msg = format!("`{callee}` produced a value of magnitude {m} above the threshold {t}{culprit}");
                    return self.stop(
                        frames,
                        "exception",
                        "threshold".into(),
                        Some(msg),
                        Vec::new(),
                    );
                }
            }
        }
        Ok(())
    }
}

/// Names the operand most likely at fault: an operand with zeros for
/// division-like primitives, a non-positive one for logarithms and roots,
/// else the operand of largest magnitude.
fn culprit(callee: &str, operands: &[(String, Value)]) -> String {
    let tensors: Vec<(&String, Vec<f64>)> = operands
        .iter()
        .filter_map(|(n, v)| v.as_tensor().map(|t| (n, t.tensor().to_f64_vec())))
        .collect();
    if tensors.is_empty() {
        return String::new();
    }
    let describe = |n: &str, xs: &[f64]| {
        let s = inspect::stats(xs);
        format!("; operand `{n}` (min {}, max {})", s.min, s.max)
    };
    let lower = callee.to_ascii_lowercase();
    let pick = if lower.contains("div") || lower.contains("reciprocal") {
        tensors
            .iter()
            .skip(1)
            .chain(tensors.iter())
            .find(|(_, xs)| xs.contains(&0.0))
    } else if lower.contains("log") || lower.contains("sqrt") || lower.contains("pow") {
        tensors.iter().find(|(_, xs)| xs.iter().any(|&x| x <= 0.0))
    } else {
        None
    };
    let pick = pick.or_else(|| {
        tensors.iter().max_by(|a, b| {
            let m = |xs: &[f64]| xs.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            m(&a.1).total_cmp(&m(&b.1))
        })
    });
    pick.map(|(n, xs)| describe(n, xs)).unwrap_or_default()
}

fn describe_callee(body: &ir::Body, n: ir::NodeId) -> String {
    let node = body.node(n);
    match &node.kind {
        NodeKind::Const(ir::Value::Prim(p)) => p.name.to_string(),
        NodeKind::Const(ir::Value::Global(g)) => g.clone(),
        NodeKind::Const(ir::Value::Graph(g)) => body.graph(*g).name.clone(),
        _ => node
            .name
            .clone()
            .unwrap_or_else(|| "a function value".into()),
    }
}

fn delta(old: &Value, new: &Value) -> String {
    match (old.as_tensor(), new.as_tensor()) {
        (Some(a), Some(b)) => {
            let d = inspect::all(a.tensor())
                .zip(inspect::all(b.tensor()))
                .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
            format!("{d}")
        }
        _ => "?".into(),
    }
}

/// A constant operand as a value (for display).
fn const_value(c: &ir::Value) -> Option<Value> {
    match c {
        ir::Value::Scalar { value, dtype, .. } => Some(Value::scalar(*value, *dtype)),
        ir::Value::Tensor(t) => Some(Value::tensor((**t).clone())),
        _ => None,
    }
}
