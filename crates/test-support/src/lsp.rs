//! An LSP client for the tests that drive a real `mirdsl lsp` process over
//! its stdio: LSP base-protocol framing (`Content-Length` frames out, a
//! thread that reads the server's frames into a channel, closed when the
//! server's output ends) and the requests the tests make. The framing is
//! written apart from the server's own (`crates/lsp/src/transport.rs`) on
//! purpose: a test of the server must not share its reading of the protocol.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

/// `body` as one frame: a `Content-Length` header, a blank line, the body.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(body);
    frame
}

/// The body of the next frame `reader` holds; `None` where its input ends
/// (or cannot be read) before a whole frame, or a header ends without a
/// `Content-Length`.
pub fn read_frame(reader: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length:") {
            length = v.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

/// The next message `reader` holds (see [`read_frame`]); panics on a body
/// that is not JSON.
pub fn read_message(reader: &mut impl BufRead) -> Option<Json> {
    let body = read_frame(reader)?;
    Some(serde_json::from_slice(&body).unwrap_or_else(|e| {
        panic!(
            "the server sent a frame that is not JSON ({e}): {}",
            String::from_utf8_lossy(&body)
        )
    }))
}

/// The messages `output` carries, read on a thread of their own; the channel
/// closes where the output ends.
pub fn read_messages(output: impl Read + Send + 'static) -> Receiver<Json> {
    let (tx, messages) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(output);
        while let Some(message) = read_message(&mut reader) {
            if tx.send(message).is_err() {
                return;
            }
        }
    });
    messages
}

/// A running `mirdsl lsp` and what it has sent that no one asked for yet.
pub struct Lsp {
    pub child: Child,
    pub stdin: ChildStdin,
    messages: Receiver<Json>,
    /// Messages received while waiting for others.
    pub seen: Vec<Json>,
    next_id: i64,
    /// Where its stderr goes (shown when a wait fails).
    stderr: PathBuf,
    /// How long to wait for a message before failing.
    pub wait: Duration,
}

impl Lsp {
    /// `command` (a `mirdsl lsp` with its arguments) started, not initialized
    /// yet; its stdio are the client's, its stderr a file of its own.
    pub fn spawn(mut command: Command) -> Lsp {
        static SPAWNED: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join("mirdsl-lsp-client");
        std::fs::create_dir_all(&dir).expect("a directory for the server's stderr");
        let stderr = dir.join(format!(
            "{}-{}.stderr",
            std::process::id(),
            SPAWNED.fetch_add(1, Ordering::Relaxed)
        ));
        let file = std::fs::File::create(&stderr).expect("a file for the server's stderr");
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(file))
            .spawn()
            .expect("mirdsl lsp starts");
        let stdin = child.stdin.take().unwrap();
        let messages = read_messages(child.stdout.take().unwrap());
        Lsp {
            child,
            stdin,
            messages,
            seen: Vec::new(),
            next_id: 1,
            stderr,
            wait: Duration::from_secs(30),
        }
    }

    /// `command` started and initialized.
    pub fn start(command: Command) -> Lsp {
        let mut lsp = Lsp::spawn(command);
        let r = lsp.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": {}}),
        );
        assert!(r["result"]["capabilities"].is_object(), "{r}");
        lsp.notify("initialized", json!({}));
        lsp
    }

    pub fn send_body(&mut self, body: &[u8]) {
        let _ = self.stdin.write_all(&frame(body));
        let _ = self.stdin.flush();
    }

    pub fn send(&mut self, message: &Json) {
        self.send_body(serde_json::to_string(message).unwrap().as_bytes());
    }

    pub fn notify(&mut self, method: &str, params: Json) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    pub fn send_request(&mut self, method: &str, params: Json) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The next message that satisfies `pred` (others are kept for later).
    pub fn wait_for(&mut self, what: &str, pred: impl Fn(&Json) -> bool) -> Json {
        if let Some(i) = self.seen.iter().position(&pred) {
            return self.seen.remove(i);
        }
        let deadline = Instant::now() + self.wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(m) if pred(&m) => return m,
                Ok(m) => self.seen.push(m),
                Err(_) => {
                    let state = if self.alive() {
                        "is alive"
                    } else {
                        "has exited"
                    };
                    panic!(
                        "no {what} within {:?} (the server {state}); its stderr ends:\n{}",
                        self.wait,
                        self.stderr_tail()
                    )
                }
            }
        }
    }

    pub fn response(&mut self, id: impl Into<Json>) -> Json {
        let id = id.into();
        self.wait_for(&format!("answer to request {id}"), |m| {
            m["id"] == id && m.get("method").is_none()
        })
    }

    pub fn request(&mut self, method: &str, params: Json) -> Json {
        let id = self.send_request(method, params);
        self.response(id)
    }

    pub fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "mindir", "version": 1, "text": text}}),
        );
    }

    pub fn hover(&mut self, uri: &str, line: u32, character: u32) -> Json {
        self.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        )
    }

    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits up to 10 s for the process to end; its exit status.
    pub fn exit_status(&mut self) -> Option<i32> {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        None
    }

    /// A number field of `/proc/PID/status` (`VmRSS:`, `Threads:`...).
    pub fn status_field(&self, name: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    /// The last 4,000 bytes or so of what the server wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        let start = (text.len().saturating_sub(4000)..=text.len())
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(text.len());
        text[start..].to_string()
    }

    /// `shutdown` answered, then `exit`: the process ends with status 0.
    pub fn shutdown(mut self) {
        let r = self.request("shutdown", Json::Null);
        assert_eq!(r["result"], Json::Null, "{r}");
        self.notify("exit", Json::Null);
        assert_eq!(self.exit_status(), Some(0));
    }
}

impl Drop for Lsp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.stderr);
    }
}
