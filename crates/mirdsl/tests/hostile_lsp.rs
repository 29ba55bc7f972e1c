//! Hostile inputs through the language server's `mirdsl/run` (issue 13): the
//! server runs whatever file is open, so every case that `mirdsl run` refuses
//! (`tests/hostile.rs`) is a clear error here too, quickly and within the
//! server's memory budget (`mirdsl lsp --max-memory`); a run past its
//! `timeoutMs` or cancelled stops, and the server goes on answering.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};
use test_support::lsp::Lsp;

/// The most memory the server (and its run worker) may map.
const ADDRESS_SPACE: u64 = 4 << 30;

/// `mirdsl lsp ARGS`, initialized, within [`ADDRESS_SPACE`].
fn start(args: &[&str]) -> Lsp {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mirdsl"));
    command
        .arg("lsp")
        .args(args)
        .env_remove("MIRDSL_MAX_MEMORY");
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: setrlimit is async-signal-safe.
        unsafe {
            command.pre_exec(|| {
                let lim = libc::rlimit {
                    rlim_cur: ADDRESS_SPACE,
                    rlim_max: ADDRESS_SPACE,
                };
                libc::setrlimit(libc::RLIMIT_AS, &lim);
                Ok(())
            });
        }
    }
    let mut lsp = Lsp::start(command);
    // Runs take their time.
    lsp.wait = Duration::from_secs(60);
    lsp
}

/// `mirdsl/run`: its answer and how long it took.
fn run(lsp: &mut Lsp, params: Json) -> (Json, Duration) {
    let start = Instant::now();
    let r = lsp.request("mirdsl/run", params);
    (r, start.elapsed())
}

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("mirdsl-hostile-lsp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// The error message of an answer that must be an error, with no panic in it.
#[track_caller]
fn error_message(r: &Json) -> String {
    let message = r["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("not an error: {r}"))
        .to_string();
    for bad in ["panicked", "bug in mirdsl", "crashed"] {
        assert!(!message.contains(bad), "{bad:?} in {message}");
    }
    message
}

#[test]
fn server_runs_refuse_hostile_programs_with_clear_errors() {
    let d = dir("refuse");
    let mut lsp = start(&["--max-memory", "1G"]);
    let cases: &[(&str, &str, &[&str])] = &[
        // An outer product of 149 GiB: refused before allocating.
        (
            "graph main() {\n  return Ones((200000, 1), f32) * Ones((1, 200000), f32)\n}\n",
            "main",
            &["f32[200000, 200000]", "149.0 GiB", "memory budget"],
        ),
        // A 40 GB weight.
        (
            "param w: f32[100000, 100000] = zeros\ngraph main() {\n  return ReduceSum(w)\n}\n",
            "main",
            &["37.3 GiB", "memory budget"],
        ),
        // load() of a device and of a missing file (relative to the document's folder).
        (
            "param w: f32[4] = load(\"/dev/zero\")\ngraph main() {\n  return ReduceSum(w)\n}\n",
            "main",
            &["/dev/zero", "not a regular file"],
        ),
        (
            "param w: f32[4] = load(\"missing.npy\")\ngraph main() {\n  return ReduceSum(w)\n}\n",
            "main",
            &["missing.npy: no such file"],
        ),
        // An element count that wraps: an error in the document, not 0.0.
        (
            "graph main() {\n  return ReduceSum(Zeros((4611686018427387904, 4), f32))\n}\n",
            "main",
            &["the document has errors", "cannot exist"],
        ),
        (
            "graph main() {\n  return ReduceSum(Zeros((3037000500, 3037000500), f32))\n}\n",
            "main",
            &["the document has errors", "cannot exist"],
        ),
    ];
    for (i, (text, graph, needles)) in cases.iter().enumerate() {
        let path = d.join(format!("case{i}.mir"));
        std::fs::write(&path, text).unwrap();
        let u = uri(&path);
        lsp.open(&u, text);
        let (r, took) = run(&mut lsp, json!({"uri": u, "graph": graph}));
        let message = error_message(&r);
        for n in *needles {
            assert!(message.contains(n), "case {i}: missing {n:?} in {message}");
        }
        assert!(took < Duration::from_secs(20), "case {i} took {took:?}");
    }
    // The server is still answering, and runs what fits.
    let path = d.join("fine.mir");
    let text = "graph main(x: f32[3]) {\n  return x * 2.0\n}\n";
    lsp.open(&uri(&path), text);
    let (r, _) = run(
        &mut lsp,
        json!({"uri": uri(&path), "graph": "main", "args": {"x": "[1.0, 2.0, 3.0]"}}),
    );
    assert_eq!(r["result"]["result"]["data"], json!([2.0, 4.0, 6.0]), "{r}");
    lsp.shutdown();
}

#[cfg(unix)]
#[test]
fn a_server_run_of_a_fifo_does_not_block() {
    let d = dir("fifo");
    let fifo = d.join("w.npy");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let mut lsp = start(&[]);
    let path = d.join("prog.mir");
    let text = "param w: f32[4] = load(\"w.npy\")\ngraph main() {\n  return ReduceSum(w)\n}\n";
    lsp.open(&uri(&path), text);
    let (r, took) = run(&mut lsp, json!({"uri": uri(&path), "graph": "main"}));
    let message = error_message(&r);
    assert!(message.contains("FIFO"), "{message}");
    assert!(took < Duration::from_secs(20), "{took:?}");
    lsp.shutdown();
}

const FIBONACCI: &str = "graph fibonacci(n: i64) -> i64 {
  r = if n < 1 { 0 } else if n == 1 { 1 } else {
    a = fibonacci(n - 1)
    b = fibonacci(n - 2)
    a + b
  }
  return r
}

graph main() {
  return fibonacci(60)
}
";

#[test]
fn server_runs_stop_at_their_time_limit_and_when_cancelled() {
    let d = dir("stop");
    let mut lsp = start(&[]);
    let path = d.join("prog.mir");
    lsp.open(&uri(&path), FIBONACCI);
    let (r, took) = run(
        &mut lsp,
        json!({"uri": uri(&path), "graph": "main", "timeoutMs": 500}),
    );
    let message = error_message(&r);
    assert!(message.contains("did not finish within"), "{message}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    let id = lsp.send_request(
        "mirdsl/run",
        json!({"uri": uri(&path), "graph": "main", "timeoutMs": 60000}),
    );
    std::thread::sleep(Duration::from_millis(300));
    let cancelled = Instant::now();
    lsp.notify("$/cancelRequest", json!({"id": id}));
    let r = lsp.response(id);
    assert_eq!(r["error"]["code"], -32800, "{r}");
    assert!(cancelled.elapsed() < Duration::from_secs(5));
    lsp.shutdown();
}

#[test]
fn lsp_max_memory_must_be_a_size() {
    let out = Command::new(env!("CARGO_BIN_EXE_mirdsl"))
        .args(["lsp", "--max-memory", "plenty"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--max-memory"), "{err}");
}
