//! The server on a workspace of files that import each other
//! (`docs/language.md` §10.1): diagnostics of a file follow the files it
//! imports (open or on disk), and definitions cross files.

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

const LAYERS: &str = "\
param fc.weight: f32[4, 3] = zeros

graph dense(x: f32[B, 3]) -> f32[B, 4] {
  return MatMul(x, fc.weight, transpose_b=true)
}
";

const MODEL: &str = "\
import \"layers.mir\" as L

graph net(x: f32[2, 3]) {
  return L.dense(x)
}
";

fn codes(d: &Json) -> Vec<String> {
    d["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn diagnostics_and_definitions_cross_files() {
    let dir = std::env::temp_dir().join(format!("mirdsl-lsp-ws-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dir = std::fs::canonicalize(&dir).unwrap();
    std::fs::write(dir.join("layers.mir"), LAYERS).unwrap();
    let model = format!("file://{}", dir.join("model.mir").display());
    let layers = format!("file://{}", dir.join("layers.mir").display());
    runtime().block_on(async {
        let mut c = Client::start();
        c.initialize(None).await;
        // The model imports a file on disk: no errors.
        c.open(&model, MODEL).await;
        let d = c.diagnostics(&model, 1).await;
        assert!(codes(&d).is_empty(), "{d}");
        // Go to definition of `L.dense` opens layers.mir at `dense`.
        let r = c
            .request(
                "textDocument/definition",
                json!({"textDocument": {"uri": model}, "position": {"line": 3, "character": 11}}),
            )
            .await;
        assert_eq!(r["result"]["uri"], json!(layers), "{r}");
        assert_eq!(
            r["result"]["range"]["start"],
            json!({"line": 2, "character": 6})
        );
        // ... and on the import line, the file itself.
        let r = c
            .request(
                "textDocument/definition",
                json!({"textDocument": {"uri": model}, "position": {"line": 0, "character": 10}}),
            )
            .await;
        assert_eq!(r["result"]["uri"], json!(layers), "{r}");
        // A run of a graph that calls an imported one (zero weights).
        let r = c
            .request(
                "mirdsl/run",
                json!({"uri": model, "graph": "net", "args": {"x": "ones"}}),
            )
            .await;
        assert_eq!(r["result"]["result"]["shape"], json!([2, 4]), "{r}");
        // The gradient view of it.
        let r = c
            .request(
                "mirdsl/ir",
                json!({"uri": model, "graph": "net", "kind": "gradient"}),
            )
            .await;
        assert!(
            r["result"]["text"]
                .as_str()
                .unwrap_or("")
                .contains("L.fc.weight"),
            "{r}"
        );
        // The graph view draws the call of the imported layer.
        let r = c
            .request("mirdsl/graph", json!({"uri": model, "graph": "net"}))
            .await;
        assert!(
            r["result"]["dot"]
                .as_str()
                .unwrap_or("")
                .contains("L.dense"),
            "{r}"
        );
        // References and rename cross files.
        let r = c
            .request(
                "textDocument/references",
                json!({"textDocument": {"uri": model}, "position": {"line": 3, "character": 11},
                       "context": {"includeDeclaration": true}}),
            )
            .await;
        let uris: Vec<&str> = r["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["uri"].as_str().unwrap())
            .collect();
        assert_eq!(uris, [layers.as_str(), model.as_str()], "{r}");
        let r = c
            .request(
                "textDocument/rename",
                json!({"textDocument": {"uri": model}, "position": {"line": 3, "character": 11},
                       "newName": "linear"}),
            )
            .await;
        let changes = &r["result"]["changes"];
        assert_eq!(changes[&layers][0]["newText"], "linear", "{r}");
        assert_eq!(changes[&model][0]["newText"], "L.linear", "{r}");
        // Workspace symbols cover files that are not open.
        let r = c
            .request("workspace/symbol", json!({"query": "dense"}))
            .await;
        assert!(
            r["result"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["location"]["uri"] == json!(layers)),
            "{r}"
        );
        // Opening the library and breaking it re-checks the model.
        c.open(&layers, LAYERS).await;
        c.diagnostics(&layers, 1).await;
        c.notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": layers, "version": 2},
                "contentChanges": [{"text": LAYERS.replace("f32[B, 3]", "f32[B, 5]")}]
            }),
        )
        .await;
        let d = c
            .notification("textDocument/publishDiagnostics", |p| {
                p["uri"] == model && !p["diagnostics"].as_array().unwrap().is_empty()
            })
            .await;
        assert_eq!(codes(&d), ["E0211"], "{d}");
        // Closing it goes back to the text on disk: the model is fine again.
        c.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": layers}}),
        )
        .await;
        let d = c
            .notification("textDocument/publishDiagnostics", |p| {
                p["uri"] == model && p["diagnostics"].as_array().unwrap().is_empty()
            })
            .await;
        assert!(codes(&d).is_empty());
        // A change on disk, reported by the client's file watcher.
        std::fs::write(
            dir.join("layers.mir"),
            LAYERS.replace("f32[B, 3]", "f32[B, 7]"),
        )
        .unwrap();
        c.notify(
            "workspace/didChangeWatchedFiles",
            json!({"changes": [{"uri": layers, "type": 2}]}),
        )
        .await;
        let d = c
            .notification("textDocument/publishDiagnostics", |p| {
                p["uri"] == model && !p["diagnostics"].as_array().unwrap().is_empty()
            })
            .await;
        assert_eq!(codes(&d), ["E0211"], "{d}");
        // A file that goes missing is an error on the import line.
        std::fs::remove_file(dir.join("layers.mir")).unwrap();
        c.notify(
            "workspace/didChangeWatchedFiles",
            json!({"changes": [{"uri": layers, "type": 3}]}),
        )
        .await;
        let d = c
            .notification("textDocument/publishDiagnostics", |p| {
                p["uri"] == model
                    && p["diagnostics"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|d| d["code"] == "E0104")
            })
            .await;
        assert_eq!(d["diagnostics"][0]["range"]["start"]["line"], 0, "{d}");
        c.shutdown().await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}
