//! `bench lsp`: the language server's edit latency, open time and memory,
//! next to MLIR's.
//!
//! Drives `mirdsl lsp` over stdio on eight workloads: a 1,000-line program, a
//! 20,000-line program, a 20,000-line stress file whose semantics are random
//! (about 10,000 errors), and a 100,000-line workspace of many models calling
//! shared layers; the 1,000-line program and the workspace once more with
//! edits that type a new term at line ends, keystroke group by keystroke
//! group (every other state a syntax error, new references and calls:
//! [`typing_edits`]), in the workspace's models (once more with the requests
//! an editor makes after each change running when the next comes) and then
//! in its shared layers. For each: opens it (timed from `didOpen` to the first
//! `publishDiagnostics`), then makes `--edits` one-line changes inside graphs
//! (30 unless given; inside models for the workspace), each timed from sending
//! `didChange` to receiving the `publishDiagnostics` of that version; reports
//! p50/p95/max, the median round trip of a request answered at once (the
//! floor under those numbers: pipes, client threads, scheduling), and the
//! server's resident memory now and at its peak (`VmRSS`, `VmHWM`), then the
//! time of the other requests an editor makes after an edit ([`REQUESTS`]). Then the same with `mlir-lsp-server-22` (Debian's
//! `mlir-22-tools`) on MLIR files of the same line counts, when it is installed.
//! `--lines N` runs one workload of N lines (a program) instead.
//!
//! Targets (the issue's): p50 under 15 ms and p95 under 30 ms at 20k and
//! 100k lines, both under 5 ms at 1k lines.
//!
//! The server binary: `$MIRDSL`, else `mirdsl` next to this executable
//! (`cargo build --release -p mirdsl -p bench`).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use crate::gen::generate;
use crate::stats::Summary;
use crate::Options;

const WAIT: Duration = Duration::from_secs(120);

/// A message from the server. Diagnostics are only scanned (their version and
/// size), not parsed: parsing megabytes of JSON per edit would load the
/// machine the server runs on and count against it.
enum Message {
    Diagnostics { version: Option<i64>, count: usize },
    Other(Json),
}

fn scan_diagnostics(body: &[u8]) -> Option<Message> {
    let text = std::str::from_utf8(body).ok()?;
    let head = &text[..text.len().min(200)];
    if !head.contains("\"method\":\"textDocument/publishDiagnostics\"") {
        return None;
    }
    let version = text.rfind("\"version\":").and_then(|i| {
        let rest = &text[i + "\"version\":".len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '-'))
            .unwrap_or(rest.len());
        rest[..end].parse().ok()
    });
    let count = text.matches("\"severity\":").count();
    Some(Message::Diagnostics { version, count })
}

/// A large answer (whole-file semantic tokens, symbols, lenses: megabytes)
/// as its id alone, for the same reason as [`scan_diagnostics`]: only when
/// it arrived is measured.
fn scan_large(body: &[u8]) -> Option<Message> {
    const LARGE: usize = 256 << 10;
    if body.len() < LARGE {
        return None;
    }
    let head = std::str::from_utf8(&body[..64]).ok()?;
    let rest = &head[head.find("\"id\":")? + "\"id\":".len()..];
    let end = rest.find(|c: char| !c.is_ascii_digit())?;
    let id: i64 = rest[..end].parse().ok()?;
    Some(Message::Other(
        json!({"jsonrpc": "2.0", "id": id, "result": {"bytes": body.len()}}),
    ))
}

pub(crate) struct Server {
    child: Child,
    stdin: ChildStdin,
    /// Messages with the moment their last byte arrived (before parsing,
    /// so the client's JSON parsing is not counted against the server).
    messages: Receiver<(Instant, Message)>,
    next_id: i64,
    /// Whether the server takes incremental changes.
    incremental: bool,
}

impl Server {
    pub(crate) fn start(program: &str, args: &[&str]) -> Result<Server, String> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start `{program}`: {e}"))?;
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, messages) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::with_capacity(1 << 20, stdout);
            loop {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length:") {
                        length = v.trim().parse::<usize>().ok();
                    }
                }
                let Some(n) = length else { return };
                let mut body = vec![0; n];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                let arrived = Instant::now();
                let message = match scan_diagnostics(&body).or_else(|| scan_large(&body)) {
                    Some(m) => m,
                    None => match serde_json::from_slice(&body) {
                        Ok(m) => Message::Other(m),
                        Err(_) => return,
                    },
                };
                if tx.send((arrived, message)).is_err() {
                    return;
                }
            }
        });
        Ok(Server {
            child,
            stdin,
            messages,
            next_id: 1,
            incremental: true,
        })
    }

    fn send(&mut self, message: &Json) {
        let body = serde_json::to_string(message).unwrap();
        let _ = write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len());
        let _ = self.stdin.flush();
    }

    pub(crate) fn notify(&mut self, method: &str, params: Json) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request without waiting for its answer; its id.
    fn send_request(&mut self, method: &str, params: Json) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    pub(crate) fn request(&mut self, method: &str, params: Json) -> Result<Json, String> {
        self.request_timed(method, params).map(|(_, m)| m)
    }

    /// A request's answer and when its last byte arrived.
    pub(crate) fn request_timed(
        &mut self,
        method: &str,
        params: Json,
    ) -> Result<(Instant, Json), String> {
        let id = self.send_request(method, params);
        loop {
            let (arrived, m) = self
                .messages
                .recv_timeout(WAIT)
                .map_err(|_| format!("no answer to `{method}`"))?;
            if let Message::Other(m) = m {
                if m["id"] == id && m.get("method").is_none() {
                    return Ok((arrived, m));
                }
            }
        }
    }

    /// Waits for the diagnostics of `version` (or, for a server that does not
    /// send versions, the next diagnostics); returns when they arrived and
    /// how many there were.
    pub(crate) fn diagnostics(&mut self, version: i64) -> Result<(Instant, usize), String> {
        loop {
            let (arrived, m) = self
                .messages
                .recv_timeout(WAIT)
                .map_err(|_| format!("no diagnostics for version {version}"))?;
            if let Message::Diagnostics { version: v, count } = m {
                if v.is_none() || v == Some(version) {
                    return Ok((arrived, count));
                }
            }
        }
    }

    pub(crate) fn initialize(&mut self) -> Result<(), String> {
        let r = self.request(
            "initialize",
            json!({"processId": std::process::id(), "rootUri": null, "capabilities": {
                "textDocument": {"publishDiagnostics": {"versionSupport": true}},
                "general": {"positionEncodings": ["utf-16"]},
            }}),
        )?;
        let sync = &r["result"]["capabilities"]["textDocumentSync"];
        let kind = if sync.is_number() {
            sync
        } else {
            &sync["change"]
        };
        self.incremental = *kind == 2;
        self.notify("initialized", json!({}));
        Ok(())
    }

    /// The server's resident memory now and at its peak, in KiB.
    pub(crate) fn memory_kib(&self) -> (Option<u64>, Option<u64>) {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
        else {
            return (None, None);
        };
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        };
        (field("VmRSS:"), field("VmHWM:"))
    }

    pub(crate) fn stop(mut self) {
        let _ = self.request("shutdown", Json::Null);
        self.notify("exit", Json::Null);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
    }
}

/// A one-line edit: replace line `line` (0-based) with `new_line`.
#[derive(Clone)]
struct LineEdit {
    line: usize,
    new_line: String,
}

struct Measured {
    open: Duration,
    latencies: Vec<Duration>,
    /// The median round trip of a request answered at once.
    round_trip: Duration,
    rss_kib: Option<u64>,
    peak_kib: Option<u64>,
    diagnostics: usize,
    /// The median time of each of [`REQUESTS`] after the edits (mirdsl only).
    requests: Vec<Duration>,
}

/// What an editor asks for after an edit, besides diagnostics: name, method,
/// and the params for a file, a line in its middle and that line's length.
type RequestParams = fn(&str, usize, usize) -> Json;
const REQUESTS: &[(&str, &str, RequestParams)] = &[
    (
        "semanticTokens/full",
        "textDocument/semanticTokens/full",
        |uri, _, _| json!({"textDocument": {"uri": uri}}),
    ),
    (
        "semanticTokens/range (60 lines)",
        "textDocument/semanticTokens/range",
        |uri, line, _| json!({"textDocument": {"uri": uri}, "range": {"start": {"line": line - 30, "character": 0}, "end": {"line": line + 30, "character": 0}}}),
    ),
    (
        "inlayHint (60 lines)",
        "textDocument/inlayHint",
        |uri, line, _| json!({"textDocument": {"uri": uri}, "range": {"start": {"line": line - 30, "character": 0}, "end": {"line": line + 30, "character": 0}}}),
    ),
    (
        "documentSymbol",
        "textDocument/documentSymbol",
        |uri, _, _| json!({"textDocument": {"uri": uri}}),
    ),
    (
        "foldingRange",
        "textDocument/foldingRange",
        |uri, _, _| json!({"textDocument": {"uri": uri}}),
    ),
    (
        "codeLens",
        "textDocument/codeLens",
        |uri, _, _| json!({"textDocument": {"uri": uri}}),
    ),
    (
        "hover",
        "textDocument/hover",
        |uri, line, _| json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": 3}}),
    ),
    (
        "completion",
        "textDocument/completion",
        |uri, line, len| json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": len}}),
    ),
];

/// What the client asks for besides diagnostics.
#[derive(Debug, Clone, Copy)]
struct Asks {
    /// Time each of [`REQUESTS`] after the edits (mirdsl only).
    time_requests: bool,
    /// Follow each edit's diagnostics with [`REQUESTS`], as an editor
    /// refreshes its views, without waiting for their answers.
    editor_requests: bool,
}

fn measure(
    program: &str,
    args: &[&str],
    uri: &str,
    language: &str,
    text: &str,
    edits: &[LineEdit],
    asks: Asks,
) -> Result<Measured, String> {
    let Asks {
        time_requests,
        editor_requests,
    } = asks;
    let mut server = Server::start(program, args)?;
    server.initialize()?;
    let started = Instant::now();
    server.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
    );
    let (arrived, mut diagnostics) = server.diagnostics(1)?;
    let open = arrived - started;
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut latencies = Vec::new();
    for (i, e) in edits.iter().enumerate() {
        let version = i as i64 + 2;
        let old_len16 = lines[e.line].encode_utf16().count();
        lines[e.line] = e.new_line.clone();
        let change = if server.incremental {
            json!({"range": {"start": {"line": e.line, "character": 0}, "end": {"line": e.line, "character": old_len16}}, "text": e.new_line})
        } else {
            let mut full = lines.join("\n");
            full.push('\n');
            json!({"text": full})
        };
        let start = Instant::now();
        server.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}),
        );
        let (arrived, count) = server.diagnostics(version)?;
        latencies.push(arrived - start);
        diagnostics = count;
        if editor_requests {
            // As an editor refreshes its views after a change: the next
            // edit comes while these run (and cancels them).
            let mid = e.line.max(30);
            for (_, method, params) in REQUESTS {
                let params = params(uri, mid, e.new_line.encode_utf16().count());
                server.send_request(method, params);
            }
        }
        // Let the server settle between keystrokes, as a person types.
        std::thread::sleep(Duration::from_millis(30));
    }
    // The floor under those numbers: the round trip of a request every
    // server answers at once (an unknown method), through the same pipes
    // and client threads.
    let mut round_trips = Vec::new();
    for _ in 0..30 {
        let start = Instant::now();
        server.request("$/bench/unknown", json!({}))?;
        round_trips.push(start.elapsed());
        std::thread::sleep(Duration::from_millis(10));
    }
    // Memory after the edits (the requests below allocate their answers).
    let (rss_kib, peak_kib) = server.memory_kib();
    let mut requests = Vec::new();
    if time_requests {
        // A statement line near the middle of the file.
        let mid = (lines.len() / 2..lines.len())
            .find(|&i| lines[i].starts_with("  ") && lines[i].contains(" = "))
            .unwrap_or(lines.len() / 2)
            .max(30);
        for (_, method, params) in REQUESTS {
            let params = params(uri, mid, lines[mid].encode_utf16().count());
            let mut times = Vec::new();
            for _ in 0..5 {
                let start = Instant::now();
                let (arrived, _) = server.request_timed(method, params.clone())?;
                times.push(arrived - start);
            }
            requests.push(Summary::of(&times).median);
        }
    }
    server.stop();
    Ok(Measured {
        open,
        latencies,
        round_trip: Summary::of(&round_trips).median,
        rss_kib,
        peak_kib,
        diagnostics,
        requests,
    })
}

/// Lines `  NAME = EXPR` inside graphs, spread over the file; each edit
/// multiplies the value by one (a real change: the graph is lowered and
/// inferred again).
fn mir_edits(text: &str, count: usize) -> Vec<LineEdit> {
    let lines: Vec<&str> = text.lines().collect();
    let candidates: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| {
            let t = l.trim_start();
            l.starts_with("  ")
                && !t.starts_with('#')
                && !t.starts_with("graph")
                && !t.starts_with("return")
                && t.contains(" = ")
                && !l.contains('#')
                && !l.contains(';')
                && !l.contains(" if ")
                && !l.contains("fn(")
                && balanced(l)
        })
        .map(|(i, _)| i)
        .collect();
    let step = (candidates.len() / count.max(1)).max(1);
    candidates
        .iter()
        .step_by(step)
        .take(count)
        .map(|&i| LineEdit {
            line: i,
            new_line: format!("{} * 1.0", lines[i]),
        })
        .collect()
}

/// Typing at the ends of the lines `edits` picked, a keystroke group at a
/// time, as a person writes a new term: `x + ` (a syntax error: an operand is
/// missing), `x + Neg(` (an open parenthesis), `x + Neg(y` and `x + Neg(y)`
/// (new references), where `y` is the graph's first parameter. Every other
/// state is broken, so the edits cover the reparse of broken items and the
/// reference and call changes that plain edits leave out.
fn typing_edits(text: &str, edits: &[LineEdit], count: usize) -> Vec<LineEdit> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for e in edits {
        if out.len() >= count {
            break;
        }
        // The parameter of the graph this line is in.
        let Some(param) = lines[..e.line].iter().rev().find_map(|l| {
            let l = l.strip_prefix("graph ")?;
            let open = l.find('(')?;
            let name: String = l[open + 1..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            (!name.is_empty()).then_some(name)
        }) else {
            continue;
        };
        let base = lines[e.line];
        for suffix in [
            " + ".to_string(),
            " + Neg(".to_string(),
            format!(" + Neg({param}"),
            format!(" + Neg({param})"),
        ] {
            out.push(LineEdit {
                line: e.line,
                new_line: format!("{base}{suffix}"),
            });
        }
    }
    out.truncate(count);
    out
}

fn balanced(line: &str) -> bool {
    let mut depth = 0i32;
    for c in line.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
    }
    // The statement must end on this line (not with an operator or a comma).
    let last = line.trim_end().chars().last().unwrap_or(' ');
    depth == 0 && (last.is_ascii_alphanumeric() || matches!(last, '_' | ')' | ']'))
}

/// MLIR with `func.func`s of `arith` ops, exactly `lines` lines.
fn mlir_text(lines: usize) -> String {
    let mut out = String::new();
    let mut n = 0;
    let mut f = 0;
    while n < lines {
        let left = lines - n;
        if left < 4 {
            out.push_str("// padding\n");
            n += 1;
            continue;
        }
        let body = (left - 3).min(24);
        out.push_str(&format!(
            "func.func @f{f}(%arg0: i32, %arg1: i32) -> i32 {{\n"
        ));
        for k in 0..body {
            let (a, b) = if k == 0 {
                ("%arg0".to_string(), "%arg1".to_string())
            } else {
                (format!("%{}", k - 1), "%arg1".to_string())
            };
            let op = ["arith.addi", "arith.muli", "arith.subi"][k % 3];
            out.push_str(&format!("  %{k} = {op} {a}, {b} : i32\n"));
        }
        out.push_str(&format!("  return %{} : i32\n}}\n", body - 1));
        n += body + 3;
        f += 1;
    }
    out
}

fn mlir_edits(text: &str, count: usize) -> Vec<LineEdit> {
    let lines: Vec<&str> = text.lines().collect();
    let candidates: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains("arith.muli"))
        .map(|(i, _)| i)
        .collect();
    let step = (candidates.len() / count.max(1)).max(1);
    candidates
        .iter()
        .step_by(step)
        .take(count)
        .map(|&i| LineEdit {
            line: i,
            new_line: lines[i].replace("arith.muli", "arith.addi"),
        })
        .collect()
}

/// `bench dump` through the server: opens `text` as `file:///bench/NAME.ir`
/// (a MindSpore compile dump) and times, over `runs` repetitions each, the
/// requests `(method, params)` an editor makes on it, each from sending it to
/// its answer. Returns the open time (`didOpen` to the diagnostics, which are
/// none) and each request's median.
pub fn dump_requests(
    text: &str,
    uri: &str,
    requests: &[(&str, Json)],
    runs: usize,
) -> Result<(Duration, Vec<Duration>), String> {
    let mut server = Server::start(&mirdsl_path().to_string_lossy(), &["lsp"])?;
    server.initialize()?;
    let start = Instant::now();
    server.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "mindspore-ir", "version": 1, "text": text}}),
    );
    let (arrived, _) = server.diagnostics(1)?;
    let open = arrived - start;
    let mut medians = Vec::new();
    for (method, params) in requests {
        let mut params = params.clone();
        // Custom requests (`mirdsl/...`) name the document by `uri`.
        if method.starts_with("textDocument/") {
            params["textDocument"] = json!({"uri": uri});
        } else {
            params["uri"] = json!(uri);
        }
        let mut samples = Vec::new();
        for _ in 0..runs {
            let sent = Instant::now();
            let (arrived, answer) = server.request_timed(method, params.clone())?;
            if answer.get("error").is_some() {
                return Err(format!("{method}: {answer}"));
            }
            samples.push(arrived - sent);
        }
        medians.push(Summary::of(&samples).median);
    }
    server.stop();
    Ok((open, medians))
}

fn mirdsl_path() -> PathBuf {
    if let Some(p) = std::env::var_os("MIRDSL") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().unwrap_or_default();
    exe.with_file_name("mirdsl")
}

/// A workspace of `lines` lines that checks clean: 64 shared layers (each a
/// graph with two weights, a nested graph and an `if`), then models that
/// each call several shared layers between elementwise work. Edits go inside
/// models ([`model_edits`]), as when one model of many is being written, or
/// inside the shared layers ([`layer_edits`]).
pub fn workspace_text(lines: usize, seed: u64) -> String {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let workload = crate::workload::ops();
    let unary = &workload.workspace_unary;
    let shared = 64;
    let mut out = String::with_capacity(lines * 32);
    let mut count = 0;
    let push = |out: &mut String, line: &str, count: &mut usize| {
        out.push_str(line);
        out.push('\n');
        *count += 1;
    };
    for i in 0..shared {
        let op = unary[(next() % unary.len() as u64) as usize];
        for line in [
            format!("# Shared layer {i}."),
            format!("param shared{i}.w: f32[16, 16] = normal(std=0.1, seed={i})"),
            format!("param shared{i}.b: f32[16] = zeros"),
            format!("graph shared{i}(x: f32[B, 16]) -> f32[B, 16] {{"),
            format!("  h = BiasAdd(MatMul(x, shared{i}.w), shared{i}.b)"),
            format!("  a = {op}(h)"),
            format!("  graph gate(v) {{ return {}(v) * v }}", workload.gate),
            "  r = if ReduceMean(a) > 0.0 { gate(a) } else { a * 0.5 }".to_string(),
            "  return r".to_string(),
            "}".to_string(),
            String::new(),
        ] {
            push(&mut out, &line, &mut count);
        }
    }
    let mut model = 0;
    while count + 30 < lines {
        push(&mut out, &format!("# Model {model}."), &mut count);
        push(
            &mut out,
            &format!("graph model{model}(x: f32[8, 16]) -> f32[8, 16] {{"),
            &mut count,
        );
        let steps = 16 + (next() % 8) as usize;
        let mut last = "x".to_string();
        for k in 0..steps {
            let op = unary[(next() % unary.len() as u64) as usize];
            let layer = next() % shared;
            let line = match (k % 3, next() % 2) {
                (0, _) => format!("  a{k} = shared{layer}({last})"),
                (1, 0) => format!("  a{k} = {op}({last}) * 0.5"),
                (1, _) => format!("  a{k} = Add({last}, x) - 1.0"),
                (_, 0) => format!("  a{k} = Maximum({last}, {op}(x))"),
                _ => format!("  a{k} = {last} * {op}({last}) + 0.25"),
            };
            push(&mut out, &line, &mut count);
            last = format!("a{k}");
        }
        push(&mut out, &format!("  return {last}"), &mut count);
        push(&mut out, "}", &mut count);
        push(&mut out, "", &mut count);
        model += 1;
    }
    while count < lines {
        push(&mut out, "# end", &mut count);
    }
    out
}

/// Statement lines inside the models of [`workspace_text`], spread over the
/// file; each edit multiplies the value by one.
fn model_edits(text: &str, count: usize) -> Vec<LineEdit> {
    statement_edits(text, count, "graph model", "  a")
}

/// Statement lines inside the shared layers of [`workspace_text`] (each
/// called by hundreds of models), spread over them; each edit multiplies the
/// value by one.
fn layer_edits(text: &str, count: usize) -> Vec<LineEdit> {
    statement_edits(text, count, "graph shared", "  a = ")
}

/// Up to `count` lines that start with `statement` and bind a name, inside
/// graphs whose header starts with `graph`, spread evenly; each edit
/// multiplies the value by one.
fn statement_edits(text: &str, count: usize, graph: &str, statement: &str) -> Vec<LineEdit> {
    let mut inside = false;
    let mut candidates = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.starts_with("graph ") {
            inside = l.starts_with(graph);
        } else if inside && l.starts_with(statement) && l.contains(" = ") {
            candidates.push(i);
        }
    }
    let lines: Vec<&str> = text.lines().collect();
    let step = (candidates.len() / count.max(1)).max(1);
    candidates
        .iter()
        .step_by(step)
        .take(count)
        .map(|&i| LineEdit {
            line: i,
            new_line: format!("{} * 1.0", lines[i]),
        })
        .collect()
}

fn megabytes(kib: Option<u64>) -> String {
    kib.map_or("?".into(), |k| format!("{:.0} MB", k as f64 / 1024.0))
}

/// One row of the table (and whether the targets were met, where there are some).
fn report(name: &str, lines: usize, m: &Measured, target: Option<(f64, f64)>) {
    let s = Summary::of(&m.latencies);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let verdict = match target {
        Some((p50, p95)) => {
            let met = ms(s.median) < p50 && ms(s.p95) < p95;
            format!(
                "{} (p50 < {p50} ms, p95 < {p95} ms)",
                if met { "met" } else { "NOT met" }
            )
        }
        None => "-".into(),
    };
    println!(
        "| {name} | {lines} | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} | {} | {} | {} | {verdict} |",
        ms(m.open),
        ms(s.median),
        ms(s.p95),
        ms(s.max),
        ms(m.round_trip),
        megabytes(m.rss_kib),
        megabytes(m.peak_kib),
        m.diagnostics
    );
}

struct Workload {
    name: &'static str,
    text: String,
    edits: Vec<LineEdit>,
    /// p50 and p95 targets in ms.
    target: Option<(f64, f64)>,
    /// Whether each edit's diagnostics are followed by the requests an
    /// editor makes to refresh its views ([`REQUESTS`]).
    editor_requests: bool,
}

pub fn run(options: &Options) {
    let edits = if options.edits == Options::default().edits {
        30
    } else {
        options.edits
    };
    let seed = options.seed;
    // The issue's targets: (p50, p95) in ms.
    const SMALL: Option<(f64, f64)> = Some((5.0, 5.0));
    const LARGE: Option<(f64, f64)> = Some((15.0, 30.0));
    let workload = |name, text: String, edits, target| Workload {
        name,
        text,
        edits,
        target,
        editor_requests: false,
    };
    let workloads: Vec<Workload> = if options.lines != Options::default().lines {
        let text = crate::check::generate_valid(options.lines, seed);
        vec![workload(
            "program",
            text.clone(),
            mir_edits(&text, edits),
            None,
        )]
    } else {
        let small = crate::check::generate_valid(1_000, seed);
        let medium = crate::check::generate_valid(20_000, seed);
        let stress = generate(20_000, seed);
        let workspace = workspace_text(100_000, seed);
        let typing = |text: &str, lines: &[LineEdit]| typing_edits(text, lines, edits);
        let in_models = typing(&workspace, &model_edits(&workspace, edits));
        vec![
            workload("program", small.clone(), mir_edits(&small, edits), SMALL),
            workload(
                "program, typing",
                small.clone(),
                typing(&small, &mir_edits(&small, edits.div_ceil(4) * 2)),
                SMALL,
            ),
            workload("program", medium.clone(), mir_edits(&medium, edits), LARGE),
            workload(
                "stress (10k errors)",
                stress.clone(),
                mir_edits(&stress, edits),
                LARGE,
            ),
            workload(
                "models + shared layers",
                workspace.clone(),
                model_edits(&workspace, edits),
                LARGE,
            ),
            workload(
                "models + shared layers, typing",
                workspace.clone(),
                in_models.clone(),
                LARGE,
            ),
            // The same typing, each keystroke group's diagnostics followed by
            // an editor's refresh (whole-file semantic tokens, symbols,
            // folds, lenses...): the next edit must not wait for them.
            Workload {
                editor_requests: true,
                ..workload(
                    "models + shared layers, typing, with an editor's requests",
                    workspace.clone(),
                    in_models,
                    LARGE,
                )
            },
            // Typing in a layer that hundreds of models call: every caller
            // depends on it.
            workload(
                "models + shared layers, typing in a shared layer",
                workspace.clone(),
                typing(&workspace, &layer_edits(&workspace, edits)),
                LARGE,
            ),
        ]
    };
    println!(
        "bench lsp: {edits} one-line edits per workload; latency from didChange to its publishDiagnostics\n"
    );
    println!("| server, workload | lines | open ms | p50 ms | p95 ms | max ms | round trip ms | RSS | peak RSS | diagnostics | targets |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mirdsl = mirdsl_path();
    let mut request_rows = Vec::new();
    for w in &workloads {
        let lines = w.text.lines().count();
        match measure(
            &mirdsl.to_string_lossy(),
            &["lsp"],
            "file:///bench/generated.mir",
            "mindir",
            &w.text,
            &w.edits,
            Asks {
                time_requests: true,
                editor_requests: w.editor_requests,
            },
        ) {
            Ok(m) => {
                report(&format!("mirdsl lsp, {}", w.name), lines, &m, w.target);
                request_rows.push((w.name, lines, m.requests));
            }
            Err(e) => println!(
                "mirdsl lsp: {e} (build it: cargo build --release -p mirdsl, or set MIRDSL)"
            ),
        }
    }
    let mut counts: Vec<usize> = workloads.iter().map(|w| w.text.lines().count()).collect();
    counts.dedup();
    for lines in counts {
        let mlir = mlir_text(lines);
        let mlir_changes = mlir_edits(&mlir, edits);
        match measure(
            "mlir-lsp-server-22",
            &[],
            "file:///bench/generated.mlir",
            "mlir",
            &mlir,
            &mlir_changes,
            Asks {
                time_requests: false,
                editor_requests: false,
            },
        ) {
            Ok(m) => report("mlir-lsp-server-22, func.func of arith", lines, &m, None),
            Err(e) => {
                println!("mlir-lsp-server-22: {e} (apt-get install mlir-22-tools)");
                break;
            }
        }
    }
    println!(
        "\nmirdsl lsp, requests after the edits (median of 5, ms, to the answer's last byte; \
         ranges and positions near the middle of the file):\n"
    );
    let names: Vec<&str> = REQUESTS.iter().map(|(n, _, _)| *n).collect();
    println!("| workload | lines | {} |", names.join(" | "));
    println!("|---|---|{}", "---|".repeat(names.len()));
    for (name, lines, times) in request_rows {
        let cells: Vec<String> = times
            .iter()
            .map(|d| format!("{:.2}", d.as_secs_f64() * 1e3))
            .collect();
        println!("| {name} | {lines} | {} |", cells.join(" | "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_mlir_has_the_line_count_and_edits_stay_valid() {
        for n in [10, 100, 1000] {
            let t = mlir_text(n);
            assert_eq!(t.lines().count(), n);
        }
        let t = mlir_text(1000);
        let edits = mlir_edits(&t, 30);
        assert_eq!(edits.len(), 30);
        assert!(edits.iter().all(|e| e.new_line.contains("arith.addi")));
    }

    #[test]
    fn mir_edits_are_spread_statement_lines() {
        let text = generate(2000, 1);
        let edits = mir_edits(&text, 30);
        assert_eq!(edits.len(), 30);
        let lines: Vec<&str> = text.lines().collect();
        for e in &edits {
            assert!(lines[e.line].contains(" = "));
            assert!(e.new_line.ends_with(" * 1.0"));
        }
        // The edited text still parses.
        let mut edited: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        for e in &edits {
            edited[e.line] = e.new_line.clone();
        }
        let parse = syntax::parse(&(edited.join("\n") + "\n"));
        assert!(parse.errors().is_empty(), "{:?}", &parse.errors()[..1]);
    }

    #[test]
    fn the_workspace_checks_clean_and_edits_stay_inside_models() {
        let text = workspace_text(3_000, 1);
        assert_eq!(text.lines().count(), 3_000);
        let analysis = analysis::analyze(&text);
        assert!(
            analysis.diagnostics.is_empty(),
            "{:?}",
            &analysis.diagnostics[..1]
        );
        let edits = model_edits(&text, 30);
        assert_eq!(edits.len(), 30);
        let mut edited: Vec<String> = text.lines().map(str::to_string).collect();
        for e in &edits {
            edited[e.line] = e.new_line.clone();
        }
        let analysis = analysis::analyze(&(edited.join("\n") + "\n"));
        assert!(analysis.diagnostics.is_empty());
    }

    #[test]
    fn large_answers_are_scanned_for_their_id() {
        let data = "1,".repeat(200_000);
        let body = format!(r#"{{"id":42,"jsonrpc":"2.0","result":{{"data":[{data}0]}}}}"#);
        match scan_large(body.as_bytes()) {
            Some(Message::Other(m)) => assert_eq!(m["id"], 42),
            _ => panic!("not scanned"),
        }
        assert!(scan_large(br#"{"id":1,"jsonrpc":"2.0","result":null}"#).is_none());
    }

    #[test]
    fn layer_edits_stay_inside_shared_layers_and_check_clean() {
        let text = workspace_text(3_000, 1);
        let lines: Vec<&str> = text.lines().collect();
        let edits = layer_edits(&text, 8);
        assert_eq!(edits.len(), 8);
        let mut edited: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        for e in &edits {
            let header = lines[..e.line]
                .iter()
                .rev()
                .find(|l| l.starts_with("graph "))
                .unwrap();
            assert!(header.starts_with("graph shared"), "{header}");
            edited[e.line] = e.new_line.clone();
        }
        for e in typing_edits(&text, &edits, 32) {
            edited[e.line] = e.new_line;
        }
        let analysis = analysis::analyze(&(edited.join("\n") + "\n"));
        assert!(
            analysis.diagnostics.is_empty(),
            "{:?}",
            &analysis.diagnostics[..1]
        );
    }
}
