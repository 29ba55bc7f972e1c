//! `bench lsp`: the language server's edit latency and memory, next to MLIR's.
//!
//! Drives `mirdsl lsp` over stdio on a generated file (20,000 lines unless
//! `--lines` says otherwise): opens it, then makes `--edits` one-line changes
//! inside graphs (30 unless given), each timed from sending `didChange` to
//! receiving the `publishDiagnostics` of that version; reports p50/p95 and the
//! server's resident memory (`VmRSS`). Then does the same with
//! `mlir-lsp-server-22` (Debian's `mlir-22-tools`) on an MLIR file of the same
//! line count, when it is installed.
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

struct Server {
    child: Child,
    stdin: ChildStdin,
    /// Messages with the moment their last byte arrived (before parsing,
    /// so the client's JSON parsing is not counted against the server).
    messages: Receiver<(Instant, Json)>,
    next_id: i64,
    /// Whether the server takes incremental changes.
    incremental: bool,
}

impl Server {
    fn start(program: &str, args: &[&str]) -> Result<Server, String> {
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
            let mut reader = BufReader::new(stdout);
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
                match serde_json::from_slice(&body) {
                    Ok(m) => {
                        if tx.send((arrived, m)).is_err() {
                            return;
                        }
                    }
                    Err(_) => return,
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

    fn notify(&mut self, method: &str, params: Json) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn request(&mut self, method: &str, params: Json) -> Result<Json, String> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let (_, m) = self
                .messages
                .recv_timeout(WAIT)
                .map_err(|_| format!("no answer to `{method}`"))?;
            if m["id"] == id && m.get("method").is_none() {
                return Ok(m);
            }
        }
    }

    /// Waits for the diagnostics of `version` (or, for a server that does not
    /// send versions, the next diagnostics); returns when they arrived.
    fn diagnostics(&mut self, version: i64) -> Result<(Instant, Json), String> {
        loop {
            let (arrived, m) = self
                .messages
                .recv_timeout(WAIT)
                .map_err(|_| format!("no diagnostics for version {version}"))?;
            if m["method"] == "textDocument/publishDiagnostics" {
                let v = &m["params"]["version"];
                if v.is_null() || *v == version {
                    return Ok((arrived, m["params"].clone()));
                }
            }
        }
    }

    fn initialize(&mut self) -> Result<(), String> {
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

    fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }

    fn stop(mut self) {
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
struct LineEdit {
    line: usize,
    new_line: String,
}

struct Measured {
    open: Duration,
    latencies: Vec<Duration>,
    rss_kib: Option<u64>,
    diagnostics: usize,
}

fn measure(
    program: &str,
    args: &[&str],
    uri: &str,
    language: &str,
    text: &str,
    edits: &[LineEdit],
) -> Result<Measured, String> {
    let mut server = Server::start(program, args)?;
    server.initialize()?;
    let started = Instant::now();
    server.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
    );
    let (arrived, first) = server.diagnostics(1)?;
    let open = arrived - started;
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut latencies = Vec::new();
    let mut diagnostics = first["diagnostics"].as_array().map_or(0, Vec::len);
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
        let (arrived, d) = server.diagnostics(version)?;
        latencies.push(arrived - start);
        diagnostics = d["diagnostics"].as_array().map_or(0, Vec::len);
        // Let the server settle between keystrokes, as a person types.
        std::thread::sleep(Duration::from_millis(30));
    }
    let rss_kib = server.rss_kib();
    server.stop();
    Ok(Measured {
        open,
        latencies,
        rss_kib,
        diagnostics,
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

fn mirdsl_path() -> PathBuf {
    if let Some(p) = std::env::var_os("MIRDSL") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().unwrap_or_default();
    exe.with_file_name("mirdsl")
}

fn report(name: &str, lines: usize, m: &Measured) {
    let s = Summary::of(&m.latencies);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{name:<18} {lines:>6} lines  open→diagnostics {:>8.1} ms  edit→diagnostics p50 {:>7.2} ms  p95 {:>7.2} ms  max {:>7.2} ms  RSS {}  ({} diagnostics)",
        ms(m.open),
        ms(s.median),
        ms(s.p95),
        ms(s.max),
        m.rss_kib
            .map_or("?".into(), |k| format!("{:.1} MB", k as f64 / 1024.0)),
        m.diagnostics
    );
}

pub fn run(options: &Options) {
    let lines = if options.lines == Options::default().lines {
        20_000
    } else {
        options.lines
    };
    let edits = if options.edits == Options::default().edits {
        30
    } else {
        options.edits
    };
    println!(
        "bench lsp: {lines} lines, {edits} one-line edits; time from didChange to its publishDiagnostics\n"
    );
    let mirdsl = mirdsl_path();
    // A program that checks clean (what an engineer edits), and one whose
    // semantics are random (about half its lines are errors: a stress test).
    for (label, text) in [
        (
            "mirdsl lsp (clean program)",
            crate::check::generate_valid(lines, options.seed),
        ),
        ("mirdsl lsp (10k errors)", generate(lines, options.seed)),
    ] {
        let changes = mir_edits(&text, edits);
        match measure(
            &mirdsl.to_string_lossy(),
            &["lsp"],
            "file:///bench/generated.mir",
            "mindir",
            &text,
            &changes,
        ) {
            Ok(m) => {
                report(label, lines, &m);
                let s = Summary::of(&m.latencies);
                let pass = s.median < Duration::from_millis(10)
                    && s.p95 < Duration::from_millis(30)
                    && m.rss_kib.is_some_and(|k| k < 200 * 1024);
                println!(
                    "  targets p50 < 10 ms, p95 < 30 ms, RSS < 200 MB: {}",
                    if pass { "met" } else { "NOT met" }
                );
            }
            Err(e) => {
                println!(
                    "mirdsl lsp: {e} (build it: cargo build --release -p mirdsl, or set MIRDSL)"
                )
            }
        }
    }
    let mlir = mlir_text(lines);
    let mlir_changes = mlir_edits(&mlir, edits);
    match measure(
        "mlir-lsp-server-22",
        &[],
        "file:///bench/generated.mlir",
        "mlir",
        &mlir,
        &mlir_changes,
    ) {
        Ok(m) => report("mlir-lsp-server-22", lines, &m),
        Err(e) => println!("mlir-lsp-server-22: {e} (apt-get install mlir-22-tools)"),
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
}
