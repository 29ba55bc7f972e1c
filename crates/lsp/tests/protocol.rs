//! Protocol behaviour that a fixed transcript cannot pin down: cancellation by
//! newer edits, bursts of edits, runs and gradients (whose results belong to
//! other crates).

mod harness;

use harness::Client;
use serde_json::{json, Value as Json};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(lsp::STACK_SIZE)
        .enable_all()
        .build()
        .unwrap()
}

/// A big file: `n` graphs that each call the first one.
fn big_file(n: usize) -> String {
    let mut text = String::from("graph g0(x: f32[4, 4]) {\n  return x\n}\n");
    for i in 1..n {
        text.push_str(&format!(
            "# graph {i} 😀\ngraph g{i}(x: f32[4, 4]) {{\n  a = MatMul(x, x)\n  b = ReLU(a + 1.0)\n  c = ReduceSum(b, axis=1, keep_dims=true)\n  return g0(b * c)\n}}\n"
        ));
    }
    text
}

#[test]
fn newer_edits_cancel_work_in_flight_and_diagnostics_follow_the_last_version() {
    runtime().block_on(async {
        let mut c = Client::start();
        c.initialize(None).await;
        let uri = "file:///work/big.mir";
        c.open(uri, &big_file(400)).await;
        // Heavy requests, each followed at once by an edit.
        let mut ids = Vec::new();
        for v in 2..=6 {
            ids.push(
                c.send_request("textDocument/semanticTokens/full", json!({"textDocument": {"uri": uri}}))
                    .await,
            );
            c.notify(
                "textDocument/didChange",
                json!({
                    "textDocument": {"uri": uri, "version": v},
                    "contentChanges": [{"range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 0}}, "text": "# x\n"}]
                }),
            )
            .await;
        }
        let mut cancelled = 0;
        for id in ids {
            let r = c.response(id).await;
            if r["error"]["code"] == -32801 {
                cancelled += 1;
            }
            // Either answered, or cancelled by the newer text (ContentModified).
            assert!(
                r["result"].is_object() || r["error"]["code"] == -32801,
                "unexpected answer: {r}"
            );
        }
        // Usually most are cancelled; how many depends on timing.
        println!("{cancelled} of 5 requests were cancelled by newer edits");
        let last = c.diagnostics(uri, 6).await;
        assert_eq!(last["diagnostics"], json!([]), "{last}");
        // No diagnostics of an older version came after the newest one.
        let later: Vec<&Json> = c
            .pending
            .iter()
            .filter(|m| m["method"] == "textDocument/publishDiagnostics")
            .collect();
        assert!(later.iter().all(|m| m["params"]["version"] == 6), "{later:?}");
        // The edits all landed: lines 2-6 are the five comments.
        let h = c
            .request(
                "textDocument/hover",
                json!({"textDocument": {"uri": uri}, "position": {"line": 10, "character": 2}}),
            )
            .await;
        assert!(h["result"]["contents"]["value"].as_str().unwrap().contains("let a: f32[4, 4]"), "{h}");
        c.shutdown().await;
    });
}

#[test]
fn a_burst_of_keystrokes_publishes_the_final_state() {
    runtime().block_on(async {
        let mut c = Client::start();
        c.initialize(None).await;
        let uri = "file:///work/typing.mir";
        c.open(uri, "graph f(x: f32[3]) {\n  return x\n}\n").await;
        c.diagnostics(uri, 1).await;
        // Type `y = Exp(x)` and use it, one character at a time.
        let typed = "y = Exp(x)\n  ";
        let mut col = 2;
        let mut line = 1;
        let mut version = 1;
        for ch in typed.chars() {
            version += 1;
            c.notify(
                "textDocument/didChange",
                json!({
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": col}}, "text": ch.to_string()}]
                }),
            )
            .await;
            if ch == '\n' {
                line += 1;
                col = 0;
            } else {
                col += 1;
            }
        }
        let d = c.diagnostics(uri, version).await;
        // `y` is never used: the only diagnostic.
        let codes: Vec<&str> = d["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["code"].as_str().unwrap())
            .collect();
        assert_eq!(codes, ["W0001"], "{d}");
        c.shutdown().await;
    });
}

#[test]
fn run_request_uses_the_executor() {
    runtime().block_on(async {
        let mut c = Client::start();
        c.initialize(None).await;
        let uri = "file:///work/run.mir";
        c.open(
            uri,
            "graph add(x: f32[3], k: i64) {\n  return x * 2.0 + 1.0\n}\ngraph forever(n: i64) -> i64 {\n  r = if n < 0 { 0 } else { forever(n + 1) + forever(n + 2) }\n  return r\n}\n",
        )
        .await;
        let r = c
            .request(
                "mirdsl/run",
                json!({"uri": uri, "graph": "add", "args": {"x": "[1.0, 2.0, 3.0]", "k": 2}}),
            )
            .await;
        assert_eq!(
            r["result"]["result"],
            json!({"dtype": "f32", "shape": [3], "data": [3.0, 5.0, 7.0]}),
            "{r}"
        );
        // A bad argument is an error answer, not a crash.
        let r = c
            .request("mirdsl/run", json!({"uri": uri, "graph": "add", "args": {"x": "[1.0]"}}))
            .await;
        assert!(r["error"]["message"].is_string(), "{r}");
        // A run past its time limit is answered with an error.
        let r = c
            .request(
                "mirdsl/run",
                json!({"uri": uri, "graph": "forever", "args": {"n": 0}, "timeoutMs": 300}),
            )
            .await;
        let message = r["error"]["message"].as_str().unwrap_or_default().to_string();
        assert!(
            message.contains("did not finish") || message.contains("recursion"),
            "{r}"
        );
        c.shutdown().await;
    });
}

#[test]
fn run_request_takes_a_device() {
    runtime().block_on(async {
        let mut c = Client::start();
        c.initialize(None).await;
        let uri = "file:///work/device.mir";
        c.open(uri, "graph add(x: f32[3]) {\n  return x * 2.0 + 1.0\n}\n")
            .await;
        let want = json!({"dtype": "f32", "shape": [3], "data": [3.0, 5.0, 7.0]});
        let args = json!({"x": "[1.0, 2.0, 3.0]"});
        // `auto` runs wherever it can; the result is the same.
        let r = c
            .request(
                "mirdsl/run",
                json!({"uri": uri, "graph": "add", "args": args, "device": "auto"}),
            )
            .await;
        assert_eq!(r["result"]["result"], want, "{r}");
        // `gpu` without a GPU is an error naming what is missing.
        let r = c
            .request(
                "mirdsl/run",
                json!({"uri": uri, "graph": "add", "args": args, "device": "gpu"}),
            )
            .await;
        if gpu::probe::all().is_ok() {
            assert_eq!(r["result"]["result"], want, "{r}");
        } else {
            let m = r["error"]["message"].as_str().unwrap_or_default();
            assert!(m.contains("--device gpu: "), "{r}");
        }
        // An unknown device is a bad request.
        let r = c
            .request(
                "mirdsl/run",
                json!({"uri": uri, "graph": "add", "args": args, "device": "tpu"}),
            )
            .await;
        let m = r["error"]["message"].as_str().unwrap_or_default();
        assert!(m.contains("`device` must be"), "{r}");
        c.shutdown().await;
    });
}

#[test]
fn gradient_request_answers_text_or_a_clear_error() {
    runtime().block_on(async {
        let mut c = Client::start();
        c.initialize(None).await;
        let uri = "file:///work/grad.mir";
        c.open(uri, "graph sq(x: f32[3]) {\n  return ReduceSum(x * x)\n}\n")
            .await;
        let r = c
            .request(
                "mirdsl/ir",
                json!({"uri": uri, "graph": "sq", "kind": "gradient"}),
            )
            .await;
        match r["result"]["text"].as_str() {
            Some(text) => assert!(text.contains("graph"), "{text}"),
            None => assert!(
                r["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("differentiate"),
                "{r}"
            ),
        }
        c.shutdown().await;
    });
}

/// `$/cancelRequest` stops a request in flight (salsa's local cancellation
/// unwinds its queries): it is answered `RequestCancelled` at once, and only
/// once. A newer edit answers one `ContentModified`.
#[test]
fn cancel_request_and_newer_edits_end_requests_in_flight() {
    runtime().block_on(async {
        let mut c = Client::start();
        c.initialize(None).await;
        let uri = "file:///work/wait.mir";
        c.open(uri, "graph f(x: f32[3]) {\n  return x\n}\n").await;
        c.diagnostics(uri, 1).await;
        let id = c
            .send_request("mirdsl/debug/wait", json!({"uri": uri, "ms": 20000}))
            .await;
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let started = std::time::Instant::now();
        c.notify("$/cancelRequest", json!({"id": id})).await;
        let r = c.response(id).await;
        assert_eq!(r["error"]["code"], -32800, "{r}");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        // Cancelling again (or an unknown id) answers nothing more.
        c.notify("$/cancelRequest", json!({"id": id})).await;
        c.notify("$/cancelRequest", json!({"id": 9999})).await;
        let id = c
            .send_request("mirdsl/debug/wait", json!({"uri": uri, "ms": 20000}))
            .await;
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        c.notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [{"range": {"start": {"line": 1, "character": 9}, "end": {"line": 1, "character": 10}}, "text": "x * 2.0"}]
            }),
        )
        .await;
        let r = c.response(id).await;
        assert_eq!(r["error"]["code"], -32801, "{r}");
        c.diagnostics(uri, 2).await;
        // Nothing else answered either request.
        let more: Vec<&Json> = c.pending.iter().filter(|m| m.get("id").is_some()).collect();
        assert!(more.is_empty(), "{more:?}");
        c.shutdown().await;
    });
}

/// Issue 14, finding 8: code lenses work in any client. The server carries
/// out their commands (`workspace/executeCommand`): a run is answered (and
/// shown), a gradient or a graph is written to a file the client is asked to
/// show. A client that carries them out itself says so and the server does
/// not offer them.
#[test]
fn code_lens_commands_are_carried_out_by_the_server() {
    runtime().block_on(async {
        let mut c = Client::start();
        let r = c
            .request(
                "initialize",
                json!({"processId": null, "rootUri": null, "capabilities": {"window": {"showDocument": {"support": true}}}}),
            )
            .await;
        assert_eq!(
            r["result"]["capabilities"]["executeCommandProvider"]["commands"],
            json!(["mirdsl.run", "mirdsl.showGraph", "mirdsl.showGradient"])
        );
        c.notify("initialized", json!({})).await;
        let uri = "file:///work/lens.mir";
        c.open(uri, "graph sq(x: f32[3]) {\n  return ReduceSum(x * x)\n}\n")
            .await;
        let lenses = c
            .request("textDocument/codeLens", json!({"textDocument": {"uri": uri}}))
            .await;
        let commands: Vec<Json> = lenses["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["command"].clone())
            .collect();
        assert_eq!(commands.len(), 3);
        // Each lens's command, as the client would send it.
        let run = commands.iter().find(|c| c["command"] == "mirdsl.run").unwrap();
        let mut arguments = run["arguments"].as_array().unwrap().clone();
        arguments.push(json!({"args": {"x": "[1.0, 2.0, 3.0]"}}));
        let r = c
            .request(
                "workspace/executeCommand",
                json!({"command": "mirdsl.run", "arguments": arguments}),
            )
            .await;
        assert_eq!(r["result"]["result"]["data"], json!([14.0]), "{r}");
        let shown = c
            .notification("window/showMessage", |p| p["message"].as_str().is_some())
            .await;
        assert!(shown["message"].as_str().unwrap().contains("sq"), "{shown}");
        let gradient = commands
            .iter()
            .find(|c| c["command"] == "mirdsl.showGradient")
            .unwrap();
        let r = c
            .request(
                "workspace/executeCommand",
                json!({"command": "mirdsl.showGradient", "arguments": gradient["arguments"]}),
            )
            .await;
        let text = r["result"]["text"].as_str().unwrap_or_default();
        assert!(text.contains("graph"), "{r}");
        let path = r["result"]["uri"].as_str().unwrap().strip_prefix("file://").unwrap().to_string();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        let asked = c.notification("window/showDocument", |_| true).await;
        assert_eq!(asked["uri"], r["result"]["uri"]);
        let graph = commands.iter().find(|c| c["command"] == "mirdsl.showGraph").unwrap();
        let r = c
            .request(
                "workspace/executeCommand",
                json!({"command": "mirdsl.showGraph", "arguments": graph["arguments"]}),
            )
            .await;
        assert!(r["result"]["text"].as_str().unwrap().starts_with("<svg"), "{r}");
        let r = c
            .request("workspace/executeCommand", json!({"command": "mirdsl.nope", "arguments": [uri, "sq"]}))
            .await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
        // Named as unknown whatever its arguments.
        let r = c
            .request("workspace/executeCommand", json!({"command": "mirdsl.nope", "arguments": []}))
            .await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
        let message = r["error"]["message"].as_str().unwrap();
        assert!(message.starts_with("unknown command `mirdsl.nope`"), "{message}");
        c.shutdown().await;
        // A client with commands of its own.
        let mut c = Client::start();
        let r = c
            .request(
                "initialize",
                json!({"processId": null, "rootUri": null, "capabilities": {},
                       "initializationOptions": {"clientCommands": ["mirdsl.run", "mirdsl.showGraph", "mirdsl.showGradient"]}}),
            )
            .await;
        assert_eq!(r["result"]["capabilities"]["executeCommandProvider"]["commands"], json!([]));
        c.shutdown().await;
    });
}

/// A client that pulls diagnostics is not pushed any; one that does not is.
#[test]
fn diagnostics_are_pulled_or_pushed_as_the_client_can() {
    runtime().block_on(async {
        let mut c = Client::start();
        let r = c
            .request(
                "initialize",
                json!({"processId": null, "rootUri": null, "capabilities": {"textDocument": {"diagnostic": {}}, "workspace": {"diagnostics": {"refreshSupport": true}}}}),
            )
            .await;
        let provider = &r["result"]["capabilities"]["diagnosticProvider"];
        assert_eq!(provider["workspaceDiagnostics"], true);
        // Imports make one file's diagnostics depend on another's.
        assert_eq!(provider["interFileDependencies"], true);
        c.notify("initialized", json!({})).await;
        let uri = "file:///work/pull.mir";
        c.open(uri, "graph f(x) {\n  return Bogus(x)\n}\n").await;
        let d = c
            .request("textDocument/diagnostic", json!({"textDocument": {"uri": uri}}))
            .await;
        assert_eq!(d["result"]["items"][0]["code"], "E0140", "{d}");
        let pushed = c.next_within(std::time::Duration::from_millis(300)).await;
        assert!(pushed.is_none(), "{pushed:?}");
        c.shutdown().await;
        let mut c = Client::start();
        let r = c.initialize(None).await;
        assert!(r["result"]["capabilities"]["diagnosticProvider"].is_null());
        c.open(uri, "graph f(x) {\n  return Bogus(x)\n}\n").await;
        let d = c.diagnostics(uri, 1).await;
        assert_eq!(d["diagnostics"][0]["code"], "E0140", "{d}");
        c.shutdown().await;
    });
}
