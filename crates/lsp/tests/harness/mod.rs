//! An in-process LSP client over a socket pair: sends framed JSON-RPC to the
//! server (running in a thread) and reads what it sends back. Used by the transcript tests (which
//! replay `tests/transcripts/*.txt`) and by the protocol tests in Rust.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use serde_json::{json, Value as Json};
use tokio::sync::mpsc;

pub struct Client {
    to_server: UnixStream,
    from_server: mpsc::UnboundedReceiver<Json>,
    /// Notifications (and server requests) received while waiting for something else.
    pub pending: VecDeque<Json>,
    next_id: i64,
    /// The server's thread; its result is the exit status.
    pub server: Option<std::thread::JoinHandle<i32>>,
}

const WAIT: Duration = Duration::from_secs(60);

impl Client {
    /// Starts a server (in a thread of this process, over a socket pair).
    pub fn start() -> Client {
        Client::start_with(lsp::Options::default())
    }

    pub fn start_with(options: lsp::Options) -> Client {
        let (client_end, server_end) = UnixStream::pair().unwrap();
        let server_out = server_end.try_clone().unwrap();
        let server = std::thread::Builder::new()
            .name("test-server".into())
            .spawn(move || lsp::serve(server_end, server_out, options))
            .unwrap();
        let client_read = client_end.try_clone().unwrap();
        let (tx, from_server) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(client_read);
            while let Some(message) = test_support::lsp::read_message(&mut reader) {
                if tx.send(message).is_err() {
                    return;
                }
            }
        });
        Client {
            to_server: client_end,
            from_server,
            pending: VecDeque::new(),
            next_id: 1,
            server: Some(server),
        }
    }

    /// Sends bytes as they are (for malformed frames).
    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        self.to_server.write_all(bytes).unwrap();
        self.to_server.flush().unwrap();
    }

    /// Sends a body in one frame, whatever it holds.
    pub async fn send_body(&mut self, body: &[u8]) {
        self.send_bytes(&test_support::lsp::frame(body)).await;
    }

    pub async fn send_raw(&mut self, message: &Json) {
        let body = serde_json::to_string(message).unwrap();
        self.send_body(body.as_bytes()).await;
    }

    pub async fn notify(&mut self, method: &str, params: Json) {
        self.send_raw(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// Sends a request without waiting; returns its id.
    pub async fn send_request(&mut self, method: &str, params: Json) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send_raw(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    async fn next(&mut self) -> Json {
        match tokio::time::timeout(WAIT, self.from_server.recv()).await {
            Ok(Some(m)) => m,
            Ok(None) => panic!("the server closed the connection"),
            Err(_) => {
                let seen: Vec<String> = self
                    .pending
                    .iter()
                    .map(|m| {
                        let mut s = m.to_string();
                        s.truncate(160);
                        s
                    })
                    .collect();
                panic!(
                    "timed out waiting for the server; received meanwhile:\n{}",
                    seen.join("\n")
                )
            }
        }
    }

    /// The response to request `id` (result or error object).
    pub async fn response(&mut self, id: i64) -> Json {
        let is_it = |m: &Json| m.get("id") == Some(&json!(id)) && m.get("method").is_none();
        if let Some(i) = self.pending.iter().position(is_it) {
            return self.pending.remove(i).unwrap();
        }
        loop {
            let m = self.next().await;
            if is_it(&m) {
                return m;
            }
            self.pending.push_back(m);
        }
    }

    /// Sends a request and waits for its response.
    pub async fn request(&mut self, method: &str, params: Json) -> Json {
        let id = self.send_request(method, params).await;
        self.response(id).await
    }

    /// The next notification `method` whose params satisfy `pred` (earlier ones dropped).
    pub async fn notification(&mut self, method: &str, pred: impl Fn(&Json) -> bool) -> Json {
        while let Some(i) = self.pending.iter().position(|m| m["method"] == method) {
            let m = self.pending.remove(i).unwrap();
            if pred(&m["params"]) {
                return m["params"].clone();
            }
        }
        loop {
            let m = self.next().await;
            if m["method"] == method && pred(&m["params"]) {
                return m["params"].clone();
            }
            if m["method"] != method {
                self.pending.push_back(m);
            }
        }
    }

    /// The diagnostics published for `uri` at `version`.
    pub async fn diagnostics(&mut self, uri: &str, version: i64) -> Json {
        self.notification("textDocument/publishDiagnostics", |p| {
            p["uri"] == uri && p["version"] == version
        })
        .await
    }

    pub async fn initialize(&mut self, encodings: Option<&[&str]>) -> Json {
        let mut caps = json!({
            "textDocument": {
                "hover": {"contentFormat": ["markdown"]},
                "completion": {"completionItem": {"snippetSupport": true}},
                "publishDiagnostics": {"relatedInformation": true, "versionSupport": true},
            }
        });
        if let Some(e) = encodings {
            caps["general"] = json!({"positionEncodings": e});
        }
        let r = self
            .request(
                "initialize",
                json!({"processId": null, "rootUri": null, "capabilities": caps}),
            )
            .await;
        self.notify("initialized", json!({})).await;
        r
    }

    pub async fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "mindir", "version": 1, "text": text}}),
        )
        .await;
    }

    /// The next message from the server, if one comes within `wait`.
    pub async fn next_within(&mut self, wait: Duration) -> Option<Json> {
        if let Some(m) = self.pending.pop_front() {
            return Some(m);
        }
        tokio::time::timeout(wait, self.from_server.recv())
            .await
            .ok()
            .flatten()
    }

    /// Waits for the server to end; its exit status.
    pub async fn exit_status(&mut self) -> i32 {
        let server = self.server.take().expect("the server was started");
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            let _ = tx.send(server.join().unwrap_or(101));
        });
        tokio::time::timeout(WAIT, rx)
            .await
            .expect("the server did not end")
            .unwrap()
    }

    pub async fn shutdown(mut self) {
        let r = self.request("shutdown", Json::Null).await;
        assert_eq!(r["result"], Json::Null, "{r}");
        self.notify("exit", Json::Null).await;
        assert_eq!(self.exit_status().await, 0);
    }
}
