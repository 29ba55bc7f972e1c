//! A scripted DAP client: drives `dap::serve` on a thread over OS pipes, as
//! a client drives `mirdsl dap` over its stdio. The framing is the test
//! support crate's, not the adapter's own.

#![allow(dead_code)]

use std::io::{BufReader, PipeWriter, Write};
use std::path::PathBuf;
use std::sync::mpsc::Receiver;
use std::time::Duration;

use serde_json::{json, Value as Json};

pub struct Client {
    input: PipeWriter,
    messages: Receiver<Json>,
    /// Events received while waiting for responses.
    pub events: Vec<Json>,
    seq: i64,
    pub done: Option<std::thread::JoinHandle<i32>>,
}

/// Not a time limit on the adapter's speed: a guard that turns a hang into
/// a failure instead of a stuck test.
const GUARD: Duration = Duration::from_secs(120);

pub fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

impl Client {
    pub fn start() -> Client {
        let (in_r, in_w) = std::io::pipe().expect("a pipe");
        let (out_r, out_w) = std::io::pipe().expect("a pipe");
        let done = std::thread::spawn(move || dap::serve(BufReader::new(in_r), out_w));
        Client {
            input: in_w,
            messages: test_support::lsp::read_messages(out_r),
            events: Vec::new(),
            seq: 0,
            done: Some(done),
        }
    }

    pub fn raw(&mut self, bytes: &[u8]) {
        self.input.write_all(bytes).expect("the adapter reads");
        self.input.flush().unwrap();
    }

    pub fn send(&mut self, command: &str, arguments: Json) -> i64 {
        self.seq += 1;
        let msg =
            json!({"seq": self.seq, "type": "request", "command": command, "arguments": arguments});
        let body = serde_json::to_vec(&msg).unwrap();
        self.raw(&test_support::lsp::frame(&body));
        self.seq
    }

    fn next(&mut self) -> Json {
        self.messages.recv_timeout(GUARD).unwrap_or_else(|_| {
            panic!(
                "no message from the adapter; events so far: {:#?}",
                self.events
            )
        })
    }

    /// The response to a request (success or not).
    pub fn request(&mut self, command: &str, arguments: Json) -> Json {
        let seq = self.send(command, arguments);
        loop {
            let m = self.next();
            if m["type"] == "response" && m["request_seq"] == seq {
                return m;
            }
            self.events.push(m);
        }
    }

    /// The body of a successful response.
    pub fn ok(&mut self, command: &str, arguments: Json) -> Json {
        let r = self.request(command, arguments);
        assert_eq!(r["success"], true, "{command} failed: {r}");
        r["body"].clone()
    }

    /// The next event `name` (earlier ones of other names are kept).
    pub fn event(&mut self, name: &str) -> Json {
        if let Some(i) = self.events.iter().position(|e| e["event"] == name) {
            return self.events.remove(i)["body"].clone();
        }
        loop {
            let m = self.next();
            if m["type"] == "event" && m["event"] == name {
                return m["body"].clone();
            }
            self.events.push(m);
        }
    }

    /// Initializes and launches with `launch` arguments; `setup` sets
    /// breakpoints between `initialized` and `configurationDone`.
    pub fn launch(launch: Json, setup: impl FnOnce(&mut Client)) -> Client {
        let mut c = Client::start();
        let caps = c.ok(
            "initialize",
            json!({"adapterID": "mirdsl", "linesStartAt1": true}),
        );
        assert_eq!(caps["supportsConfigurationDoneRequest"], true);
        c.ok("launch", launch);
        c.event("initialized");
        setup(&mut c);
        c.ok("configurationDone", json!({}));
        c
    }

    pub fn breakpoints(&mut self, file: &std::path::Path, lines: &[u32]) -> Json {
        let bps: Vec<Json> = lines.iter().map(|l| json!({"line": l})).collect();
        self.ok(
            "setBreakpoints",
            json!({"source": {"path": file.display().to_string()}, "breakpoints": bps}),
        )
    }

    /// Waits for a stop; returns its body.
    pub fn stopped(&mut self) -> Json {
        self.event("stopped")
    }

    /// The stack: (name, source path or name, line) innermost first.
    pub fn stack(&mut self) -> Vec<(String, String, u64)> {
        let b = self.ok("stackTrace", json!({"threadId": 1}));
        b["stackFrames"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let src = f["source"]["path"]
                    .as_str()
                    .or(f["source"]["name"].as_str())
                    .unwrap_or("");
                (
                    f["name"].as_str().unwrap().to_string(),
                    src.to_string(),
                    f["line"].as_u64().unwrap(),
                )
            })
            .collect()
    }

    /// The variables of frame `frame` (1 = innermost): name -> variable.
    pub fn locals(&mut self, frame: u64) -> Vec<Json> {
        let s = self.ok("scopes", json!({"frameId": frame}));
        let r = s["scopes"][0]["variablesReference"].clone();
        self.ok("variables", json!({"variablesReference": r}))["variables"]
            .as_array()
            .unwrap()
            .clone()
    }

    pub fn weights(&mut self, frame: u64) -> Vec<Json> {
        let s = self.ok("scopes", json!({"frameId": frame}));
        let r = s["scopes"][1]["variablesReference"].clone();
        self.ok("variables", json!({"variablesReference": r}))["variables"]
            .as_array()
            .unwrap()
            .clone()
    }

    pub fn cont(&mut self) {
        self.ok("continue", json!({"threadId": 1}));
    }

    /// Ends the session and waits for the adapter to return.
    pub fn disconnect(mut self) -> i32 {
        self.ok("disconnect", json!({}));
        self.done
            .take()
            .unwrap()
            .join()
            .expect("the adapter returns")
    }

    /// The program's output and exit code after it runs to its end.
    pub fn finish(&mut self) -> (String, i64) {
        let exited = self.event("exited");
        self.event("terminated");
        let mut out = String::new();
        for e in self.events.iter().filter(|e| e["event"] == "output") {
            out.push_str(e["body"]["output"].as_str().unwrap_or(""));
        }
        (out, exited["exitCode"].as_i64().unwrap())
    }
}

pub fn var<'a>(vars: &'a [Json], name: &str) -> &'a Json {
    vars.iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("no variable `{name}` in {vars:#?}"))
}
