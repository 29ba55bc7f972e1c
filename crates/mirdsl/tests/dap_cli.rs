//! `mirdsl dap` as a process, as editors start it: a session over its stdio
//! stops at a breakpoint, and ending the session (disconnect, or the client
//! going away) ends the process and its run, stopped or running.
//! (`crates/dap/tests/session/` covers the protocol itself.)

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

/// Not a speed limit: turns a hang into a failure.
const GUARD: Duration = Duration::from_secs(120);

struct Dap {
    child: Child,
    stdin: Option<ChildStdin>,
    out: Receiver<Json>,
    seq: i64,
}

fn data(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../dap/tests/data")
        .join(name)
        .display()
        .to_string()
}

impl Dap {
    fn start() -> Dap {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mirdsl"))
            .arg("dap")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("mirdsl dap starts");
        let stdin = child.stdin.take();
        let out = test_support::lsp::read_messages(child.stdout.take().unwrap());
        Dap {
            child,
            stdin,
            out,
            seq: 0,
        }
    }

    fn send(&mut self, command: &str, arguments: Json) -> i64 {
        self.seq += 1;
        let body = serde_json::to_vec(
            &json!({"seq": self.seq, "type": "request", "command": command, "arguments": arguments}),
        )
        .unwrap();
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(&test_support::lsp::frame(&body)).unwrap();
        stdin.flush().unwrap();
        self.seq
    }

    /// Waits for the response to request `seq`, or for event `event`.
    fn wait(&mut self, seq: Option<i64>, event: Option<&str>) -> Json {
        loop {
            let m = self
                .out
                .recv_timeout(GUARD)
                .expect("a message from mirdsl dap");
            if seq.is_some_and(|s| m["type"] == "response" && m["request_seq"] == s) {
                assert_eq!(m["success"], true, "{m}");
                return m;
            }
            if event.is_some_and(|e| m["type"] == "event" && m["event"] == e) {
                return m;
            }
        }
    }

    fn ok(&mut self, command: &str, arguments: Json) -> Json {
        let s = self.send(command, arguments);
        self.wait(Some(s), None)
    }

    /// Waits for the process to end; its exit status.
    fn exit(&mut self) -> std::process::ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            if start.elapsed() > GUARD {
                let _ = self.child.kill();
                panic!("mirdsl dap did not end with its session");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn launch(&mut self, launch: Json, breakpoint: Option<u32>) {
        self.ok("initialize", json!({"adapterID": "mirdsl"}));
        self.ok("launch", launch);
        self.wait(None, Some("initialized"));
        if let Some(line) = breakpoint {
            let b = self.ok(
                "setBreakpoints",
                json!({"source": {"path": data("debug.mir")}, "breakpoints": [{"line": line}]}),
            );
            assert_eq!(b["body"]["breakpoints"][0]["verified"], true, "{b}");
        }
        self.ok("configurationDone", json!({}));
    }
}

fn debug_main() -> Json {
    json!({"program": data("debug.mir"), "entry": "main", "args": {"x": "ones"}})
}

#[test]
fn a_session_stops_and_disconnect_ends_the_process() {
    let mut d = Dap::start();
    d.launch(debug_main(), Some(23));
    let stop = d.wait(None, Some("stopped"));
    assert_eq!(stop["body"]["reason"], "breakpoint");
    let st = d.ok("stackTrace", json!({"threadId": 1}));
    assert_eq!(st["body"]["stackFrames"][0]["line"], 23);
    d.ok("disconnect", json!({}));
    assert!(d.exit().success());
}

#[test]
fn a_client_that_goes_away_ends_the_process() {
    let mut d = Dap::start();
    d.launch(debug_main(), Some(23));
    d.wait(None, Some("stopped"));
    // The editor dies: the adapter's input ends while its run is stopped.
    drop(d.stdin.take());
    assert!(d.exit().success());
}

#[test]
fn disconnect_interrupts_a_running_graph() {
    // A recursion of a million calls, stopped long before its end.
    let dir = std::env::temp_dir().join(format!("mirdsl-dap-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("long.mir");
    std::fs::write(
        &file,
        "graph count(n: i64) -> i64 {\n  r = if n < 1 { 0 } else { count(n - 1) + 1 }\n  return r\n}\n\
         graph main() -> i64 {\n  return count(1000000)\n}\n",
    )
    .unwrap();
    let mut d = Dap::start();
    d.launch(json!({"program": file.display().to_string()}), None);
    d.ok("disconnect", json!({}));
    assert!(d.exit().success());
    let _ = std::fs::remove_dir_all(&dir);
}
