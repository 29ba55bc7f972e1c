//! A fuzz test of the server, bounded to a few seconds: random edits (with
//! CR, LF and CRLF line breaks and non-ASCII text), stale versions, random
//! requests at random positions (some past the end), cancellations, and
//! malformed frames, interleaved. The server must answer every request
//! exactly once, never end early, and its final diagnostics must equal what
//! `mirdsl check` says of the final text. `MIRDSL_FUZZ_STEPS` sets the steps
//! per seed (default 150), `MIRDSL_FUZZ_SEEDS` the seeds (default 8); 300 seeds
//! of 300 steps ran clean (82 s).

mod harness;

use harness::Client;
use serde_json::{json, Value as Json};
use syntax::{ColumnUnit, LineIndex, TextSize};

struct Rng(u64);

impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

fn position(text: &str, offset: usize) -> Json {
    let index = LineIndex::new(text);
    let lc = index.line_col(text, TextSize::from(offset as u32), ColumnUnit::Utf16);
    json!({"line": lc.line, "character": lc.col})
}

const INSERTS: &[&str] = &[
    " ",
    "\n",
    "\r\n",
    "\r",
    "x",
    "1.0",
    "(",
    ")",
    "{",
    "}",
    ",",
    "+ 2",
    "# ü 😀\n",
    "y = x\n",
    "Add(",
    "MatMul(x, x)",
    "f32[3]",
    "graph q(a) { return a }\n",
    "grad(",
    "return ",
    "\"s\"",
    "",
    "",
    "",
];

const METHODS: &[&str] = &[
    "textDocument/hover",
    "textDocument/completion",
    "textDocument/definition",
    "textDocument/references",
    "textDocument/documentHighlight",
    "textDocument/prepareRename",
    "textDocument/rename",
    "textDocument/signatureHelp",
    "textDocument/semanticTokens/full",
    "textDocument/semanticTokens/full/delta",
    "textDocument/semanticTokens/range",
    "textDocument/inlayHint",
    "textDocument/foldingRange",
    "textDocument/formatting",
    "textDocument/rangeFormatting",
    "textDocument/codeAction",
    "textDocument/codeLens",
    "textDocument/documentSymbol",
    "textDocument/selectionRange",
    "textDocument/prepareCallHierarchy",
    "textDocument/linkedEditingRange",
    "textDocument/diagnostic",
    "workspace/symbol",
    "workspace/diagnostic",
    "mirdsl/graph",
    "mirdsl/ir",
    "$/unknown",
];

const MALFORMED: &[&[u8]] = &[
    br#"{"jsonrpc":"2.0","id":7,"method":"textDocument/hov"#,
    b"\xff\xfe\xfd",
    b"42",
    b"[]",
    br#"[{"jsonrpc":"2.0","method":"initialized"}]"#,
    br#"{"id":1,"method":"shutdown"}"#,
    br#"{"jsonrpc":"2.0","id":null,"method":"shutdown"}"#,
    br#"{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{}}}"#,
    br#"{"jsonrpc":"2.0","id":"x","method":"textDocument/hover","params":{"nope":1}}"#,
    b"",
];

fn params(method: &str, uri: &str, text: &str, rng: &mut Rng) -> Json {
    // Mostly inside the text; sometimes past its end.
    let pos = |rng: &mut Rng| {
        if rng.next(10) == 0 {
            json!({"line": rng.next(500), "character": rng.next(500)})
        } else {
            let mut o = rng.next(text.len() + 1);
            while !text.is_char_boundary(o) {
                o -= 1;
            }
            position(text, o)
        }
    };
    let doc = json!({"uri": uri});
    let (a, b) = (pos(rng), pos(rng));
    let range = json!({"start": a, "end": b});
    match method {
        "textDocument/references" => {
            json!({"textDocument": doc, "position": a, "context": {"includeDeclaration": true}})
        }
        "textDocument/rename" => {
            json!({"textDocument": doc, "position": a, "newName": (["y2", "grad", "return", "z"][rng.next(4)])})
        }
        "textDocument/semanticTokens/full/delta" => {
            json!({"textDocument": doc, "previousResultId": rng.next(6).to_string()})
        }
        "textDocument/semanticTokens/range" | "textDocument/inlayHint" => {
            json!({"textDocument": doc, "range": range})
        }
        "textDocument/formatting" => {
            json!({"textDocument": doc, "options": {"tabSize": 2, "insertSpaces": true}})
        }
        "textDocument/rangeFormatting" => {
            json!({"textDocument": doc, "range": range, "options": {"tabSize": 2, "insertSpaces": true}})
        }
        "textDocument/codeAction" => {
            json!({"textDocument": doc, "range": range, "context": {"diagnostics": []}})
        }
        "textDocument/codeLens"
        | "textDocument/documentSymbol"
        | "textDocument/foldingRange"
        | "textDocument/semanticTokens/full"
        | "textDocument/diagnostic" => json!({"textDocument": doc}),
        "textDocument/selectionRange" => json!({"textDocument": doc, "positions": [a, b]}),
        "workspace/symbol" => json!({"query": (["", "g", "x", "ü"][rng.next(4)])}),
        "workspace/diagnostic" => json!({"previousResultIds": []}),
        "mirdsl/graph" => json!({"uri": uri, "graph": (["f", "g", "nope"][rng.next(3)])}),
        "mirdsl/ir" => {
            json!({"uri": uri, "graph": (["f", "g"][rng.next(2)]), "kind": (["ir", "gradient"][rng.next(2)])})
        }
        _ => json!({"textDocument": doc, "position": a}),
    }
}

/// `check`'s diagnostics of `text` in LSP terms (UTF-16 positions).
fn checked(text: &str) -> Vec<(String, Json, String)> {
    let (ds, _) = ide::check_text(text);
    ds.iter()
        .map(|d| {
            (
                d.code.as_str().to_string(),
                json!({"start": position(text, d.range.start().into()), "end": position(text, d.range.end().into())}),
                d.message.clone(),
            )
        })
        .collect()
}

fn published(p: &Json) -> Vec<(String, Json, String)> {
    p["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let message = d["message"].as_str().unwrap();
            (
                d["code"].as_str().unwrap().to_string(),
                d["range"].clone(),
                message.split("\nnote: ").next().unwrap().to_string(),
            )
        })
        .collect()
}

fn fuzz(seed: u64, steps: usize) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let examples = [
            include_str!("../../../testdata/mlp.mir"),
            include_str!("../../../testdata/hof.mir"),
            include_str!("../../../testdata/closure.mir"),
            "graph f(x: f32[3]) {\r\n  y = Exp(x)\r  return y\n}\ngraph g(a) { return f(a) }\n",
        ];
        let mut text = examples[rng.next(examples.len())].to_string();
        let mut c = Client::start();
        c.initialize(None).await;
        let uri = "file:///fuzz/f.mir";
        c.open(uri, &text).await;
        let mut version = 1;
        let mut asked: Vec<i64> = Vec::new();
        for _ in 0..steps {
            match rng.next(10) {
                0..=3 => {
                    // An edit (sometimes two in one change).
                    let mut changes = Vec::new();
                    for _ in 0..1 + rng.next(2) {
                        let mut a = rng.next(text.len() + 1);
                        while !text.is_char_boundary(a) {
                            a -= 1;
                        }
                        let mut b = (a + rng.next(8)).min(text.len());
                        while !text.is_char_boundary(b) {
                            b -= 1;
                        }
                        // A CRLF split by an edit joins differently on each side:
                        // keep it whole.
                        let crlf_at = |o: usize| {
                            o > 0 && o < text.len() && &text.as_bytes()[o - 1..o + 1] == b"\r\n"
                        };
                        if crlf_at(a) {
                            a -= 1;
                        }
                        if crlf_at(b) {
                            b += 1;
                        }
                        let insert = INSERTS[rng.next(INSERTS.len())];
                        changes.push(json!({"range": {"start": position(&text, a), "end": position(&text, b)}, "text": insert}));
                        text.replace_range(a..b, insert);
                    }
                    version += 1;
                    c.notify(
                        "textDocument/didChange",
                        json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}),
                    )
                    .await;
                }
                4 => {
                    // A stale version: not applied.
                    c.notify(
                        "textDocument/didChange",
                        json!({"textDocument": {"uri": uri, "version": version - rng.next(3) as i32}, "contentChanges": [{"text": "garbage"}]}),
                    )
                    .await;
                }
                5 => {
                    let body = MALFORMED[rng.next(MALFORMED.len())];
                    c.send_body(body).await;
                }
                6 if !asked.is_empty() => {
                    let id = asked[rng.next(asked.len())];
                    c.notify("$/cancelRequest", json!({"id": id})).await;
                }
                _ => {
                    let method = METHODS[rng.next(METHODS.len())];
                    let p = params(method, uri, &text, &mut rng);
                    asked.push(c.send_request(method, p).await);
                }
            }
        }
        // Every request is answered, once.
        for id in &asked {
            let r = c.response(*id).await;
            assert!(
                r.get("result").is_some() != r.get("error").is_some(),
                "seed {seed}: {r}"
            );
        }
        let again: Vec<&Json> = c
            .pending
            .iter()
            .filter(|m| {
                m.get("method").is_none()
                    && m["id"].as_i64().is_some_and(|id| asked.contains(&id))
            })
            .collect();
        assert!(again.is_empty(), "seed {seed}: answered twice: {again:?}");
        // The final diagnostics are `check`'s.
        let last = c.diagnostics(uri, version as i64).await;
        assert_eq!(
            published(&last),
            checked(&text),
            "seed {seed}, final text:\n{text}"
        );
        c.shutdown().await;
    });
}

#[test]
fn random_edits_requests_and_malformed_frames() {
    let var = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (steps, seeds) = (var("MIRDSL_FUZZ_STEPS", 150), var("MIRDSL_FUZZ_SEEDS", 8));
    let started = std::time::Instant::now();
    for seed in 1..=seeds as u64 {
        fuzz(seed, steps);
    }
    println!("{seeds} seeds × {steps} steps in {:?}", started.elapsed());
}
