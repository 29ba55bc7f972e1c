//! `mirdsl lsp` as a strict client sees it, over a real process's stdio:
//! the findings of issue 14, each a test. `MIRDSL_LSP_UNDER_TEST=PATH` runs
//! them against another build of the server (an older one, to see them fail).

use std::io::Write;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};
use test_support::lsp::Lsp;

/// `mirdsl lsp`, or the server `MIRDSL_LSP_UNDER_TEST` names.
fn server() -> Command {
    let program = std::env::var("MIRDSL_LSP_UNDER_TEST")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_mirdsl").into());
    let mut command = Command::new(program);
    command.arg("lsp");
    command
}

const URI: &str = "file:///conformance/f.mir";
const TEXT: &str = "graph f(x: f32[3]) {\n  return Exp(x)\n}\n";

fn hover_text(r: &Json) -> String {
    r["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Finding 1: one bad frame does not end the server. Each is answered with
/// the JSON-RPC error it calls for, and the document stays open and served.
#[test]
fn malformed_frames_are_answered_and_the_server_keeps_serving() {
    let mut lsp = Lsp::start(server());
    lsp.open(URI, TEXT);
    assert!(hover_text(&lsp.hover(URI, 1, 10)).contains("Exp"));
    let cases: [(&[u8], i64); 6] = [
        (
            br#"{"jsonrpc":"2.0","id":900,"method":"textDocument/hov"#,
            -32700,
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":901,\"method\":\"\xff\xfe\"}",
            -32700,
        ),
        (b"42", -32600),
        (
            br#"{"id":902,"method":"textDocument/hover","params":{}}"#,
            -32600,
        ),
        (
            br#"[{"jsonrpc":"2.0","id":903,"method":"shutdown"}]"#,
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":{"a":1},"method":"shutdown"}"#,
            -32600,
        ),
    ];
    for (body, code) in cases {
        lsp.send_body(body);
        let answer = lsp.wait_for("an error answer", |m| m.get("error").is_some());
        assert_eq!(
            answer["error"]["code"],
            code,
            "{} → {answer}",
            String::from_utf8_lossy(body)
        );
        if body.starts_with(br#"{"id":902"#) {
            assert_eq!(answer["id"], 902, "{answer}");
        }
        // Still serving the open document.
        let h = lsp.hover(URI, 1, 10);
        assert!(hover_text(&h).contains("Exp"), "after {body:?}: {h}");
    }
    // An unknown request, `$/` or not, is answered: method not found.
    for method in ["$/foo", "mirdsl/noSuchThing"] {
        let r = lsp.request(method, json!({}));
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
    }
    // A header without a length, then a good frame.
    let _ = lsp.stdin.write_all(b"Content-Type: x\r\n\r\n");
    let answer = lsp.wait_for("an error answer", |m| m.get("error").is_some());
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert!(hover_text(&lsp.hover(URI, 1, 10)).contains("Exp"));
    lsp.shutdown();
}

/// The lifecycle as the specification orders it: a request before
/// `initialize` is answered -32002 (server not initialized), a second
/// `initialize` is refused, a string id comes back as it was sent, and after
/// `shutdown` requests are invalid (-32600) until `exit`.
#[test]
fn the_lifecycle_is_enforced() {
    let mut lsp = Lsp::spawn(server());
    let r = lsp.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}}),
    );
    assert_eq!(r["error"]["code"], -32002, "{r}");
    let r = lsp.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    assert!(r["result"]["capabilities"].is_object(), "{r}");
    lsp.notify("initialized", json!({}));
    let r = lsp.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    assert!(r["error"]["code"].is_i64(), "a second initialize: {r}");
    lsp.send(&json!({"jsonrpc": "2.0", "id": "text-id", "method": "workspace/symbol", "params": {"query": ""}}));
    let r = lsp.response("text-id");
    assert!(r["result"].is_array(), "{r}");
    let r = lsp.request("shutdown", Json::Null);
    assert_eq!(r["result"], Json::Null, "{r}");
    let r = lsp.request("workspace/symbol", json!({"query": ""}));
    assert_eq!(r["error"]["code"], -32600, "after shutdown: {r}");
    lsp.notify("exit", Json::Null);
    assert_eq!(lsp.exit_status(), Some(0));
}

/// Finding 1: `exit` without `shutdown` exits with status 1; with it, 0.
#[test]
fn exit_without_shutdown_exits_with_status_1() {
    let mut lsp = Lsp::start(server());
    lsp.notify("exit", Json::Null);
    assert_eq!(lsp.exit_status(), Some(1));
    let lsp = Lsp::start(server());
    lsp.shutdown();
}

/// Finding 4: a `didChange` whose version is not newer than the document's
/// is not applied.
#[test]
fn stale_versions_are_not_applied() {
    let mut lsp = Lsp::start(server());
    lsp.open(URI, TEXT);
    let change = |version: i64, text: &str| json!({"textDocument": {"uri": URI, "version": version}, "contentChanges": [{"text": text}]});
    lsp.notify(
        "textDocument/didChange",
        change(5, "graph f(x: f32[3]) {\n  return Neg(x)\n}\n"),
    );
    lsp.notify(
        "textDocument/didChange",
        change(3, "graph f(x: f32[3]) {\n  return Bogus(x)\n}\n"),
    );
    lsp.notify(
        "textDocument/didChange",
        change(5, "graph f(x: f32[3]) {\n  return Bogus(x)\n}\n"),
    );
    let h = hover_text(&lsp.hover(URI, 1, 10));
    assert!(h.contains("Neg") && !h.contains("Bogus"), "{h}");
    // No diagnostics of the stale versions were published.
    let published: Vec<Json> = lsp
        .seen
        .iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics")
        .map(|m| m["params"]["version"].clone())
        .collect();
    assert!(!published.contains(&json!(3)), "{published:?}");
    lsp.shutdown();
}

/// Finding 5: a lone CR is a line break (as are LF and CRLF), in positions
/// both ways.
#[test]
fn a_lone_cr_is_a_line_break() {
    let mut lsp = Lsp::start(server());
    lsp.open(URI, "graph f(x: f32[3]) {\r  return Exp(x)\r}\r");
    let h = lsp.hover(URI, 1, 10);
    assert!(hover_text(&h).contains("Exp"), "{h}");
    assert_eq!(
        h["result"]["range"]["start"],
        json!({"line": 1, "character": 9})
    );
    lsp.shutdown();
}

/// A program whose run takes long (twenty products of 2048×2048 matrices)
/// and holds big tensors.
fn heavy() -> String {
    let mut text =
        String::from("graph heavy(x: f32[2048, 2048]) -> f32[2048, 2048] {\n  a0 = MatMul(x, x)\n");
    for i in 1..20 {
        text.push_str(&format!("  a{i} = Tanh(MatMul(a{}, x))\n", i - 1));
    }
    text.push_str("  return a19\n}\n");
    text.push_str("graph quick(x: f32[3]) {\n  return x * 2.0\n}\n");
    text
}

/// Finding 6: `mirdsl/run` can be cancelled (the run is stopped at once);
/// hundreds of concurrent requests use a bounded number of threads, and the
/// memory comes back.
#[test]
fn runs_are_cancelled_and_concurrent_requests_stay_bounded() {
    let mut lsp = Lsp::start(server());
    lsp.open(URI, &heavy());
    let _ = lsp.hover(URI, 1, 2);
    let rss_before = lsp.status_field("VmRSS:");
    let id = lsp.send_request(
        "mirdsl/run",
        json!({"uri": URI, "graph": "heavy", "args": {"x": "random"}, "timeoutMs": 60000}),
    );
    std::thread::sleep(Duration::from_millis(300));
    let cancelled = Instant::now();
    lsp.notify("$/cancelRequest", json!({"id": id}));
    let r = lsp.response(id);
    assert_eq!(r["error"]["code"], -32800, "{r}");
    assert!(
        cancelled.elapsed() < Duration::from_secs(5),
        "the cancelled run took {:?} to answer",
        cancelled.elapsed()
    );
    // The cancelled run is stopped: the next run starts at once.
    let r = lsp.request(
        "mirdsl/run",
        json!({"uri": URI, "graph": "quick", "args": {"x": "[1.0, 2.0, 3.0]"}}),
    );
    assert_eq!(r["result"]["result"]["data"], json!([2.0, 4.0, 6.0]), "{r}");
    // 300 requests at once: runs, hovers and semantic tokens.
    let mut ids = Vec::new();
    for i in 0..300 {
        let id = match i % 3 {
            0 => lsp.send_request(
                "mirdsl/run",
                json!({"uri": URI, "graph": "heavy", "args": {"x": "random"}, "timeoutMs": 60000}),
            ),
            1 => lsp.send_request(
                "textDocument/hover",
                json!({"textDocument": {"uri": URI}, "position": {"line": 1, "character": 8}}),
            ),
            _ => lsp.send_request(
                "textDocument/semanticTokens/full",
                json!({"textDocument": {"uri": URI}}),
            ),
        };
        ids.push(id);
    }
    let mut threads = lsp.status_field("Threads:");
    std::thread::sleep(Duration::from_millis(200));
    threads = threads.max(lsp.status_field("Threads:"));
    for &id in &ids {
        lsp.notify("$/cancelRequest", json!({"id": id}));
    }
    for &id in &ids {
        let r = lsp.response(id);
        threads = threads.max(lsp.status_field("Threads:"));
        assert!(r.get("result").is_some() || r.get("error").is_some(), "{r}");
    }
    assert!(threads <= 16, "{threads} threads");
    std::thread::sleep(Duration::from_millis(200));
    let rss_after = lsp.status_field("VmRSS:");
    assert!(
        rss_after < rss_before + 64 * 1024,
        "resident memory grew from {rss_before} kB to {rss_after} kB"
    );
    lsp.shutdown();
}

/// Finding 3: renaming a graph to a metafunction's name is refused (it would
/// rebind the metafunction at every use), with a clear message; so is
/// preparing to rename a metafunction.
#[test]
fn renaming_to_a_metafunction_is_refused() {
    let mut lsp = Lsp::start(server());
    let text = "graph loss(x: f32[3]) {\n  return ReduceSum(x * x)\n}\ngraph main(x: f32[3]) {\n  return grad(loss)(x)\n}\n";
    lsp.open(URI, text);
    for new_name in ["grad", "value_and_grad", "vjp"] {
        let r = lsp.request(
            "textDocument/rename",
            json!({"textDocument": {"uri": URI}, "position": {"line": 0, "character": 7}, "newName": new_name}),
        );
        let message = r["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("metafunction"), "{new_name}: {r}");
    }
    let r = lsp.request(
        "textDocument/prepareRename",
        json!({"textDocument": {"uri": URI}, "position": {"line": 4, "character": 10}}),
    );
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("`grad` is a metafunction"), "{r}");
    lsp.shutdown();
}
