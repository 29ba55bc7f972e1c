//! Protocol tests that replay JSON-RPC transcripts, in the manner of MLIR's
//! lit tests for `mlir-lsp-server`: each `tests/transcripts/NAME.txt` drives an
//! in-process server and what the server answers is compared with
//! `tests/transcripts/NAME.expected` (`UPDATE_EXPECT=1` rewrites them).
//!
//! A transcript is a list of directives:
//!
//! ```text
//! # a comment
//! > METHOD [|FILTER] [JSON]   a request; the response (result or error) is printed
//! ! METHOD [JSON]             a notification
//! < METHOD [version=N]        waits for a notification and prints its params
//! open URI                    didOpen (version 1) with the text up to a line `.`
//! change URI VERSION          didChange; each line up to `.` is `L:C-L:C "new text"`
//! ```
//!
//! JSON may continue over the following lines. Filters shorten big answers:
//! `|labels` (completion items), `|tokens` (decoded semantic tokens), `|count`,
//! `|quiet` (only whether it succeeded), `|nodocs` (without documentation),
//! `|summary` (semantic tokens: the result id and the data's length or the edits). Positions print as `L:C`, ranges as `L:C-L:C`.

mod harness;

use std::collections::HashMap;

use expect_test::expect_file;
use harness::Client;
use serde_json::{json, Value as Json};

struct Runner {
    client: Client,
    out: String,
    docs: HashMap<String, String>,
    legend: (Vec<String>, Vec<String>),
    utf8: bool,
}

/// Pretty JSON with positions as `L:C` and ranges as `L:C-L:C`.
fn pretty(v: &Json) -> String {
    fn compact(v: &Json) -> Json {
        match v {
            Json::Object(m) => {
                let pos = |p: &Json| -> Option<String> {
                    let o = p.as_object()?;
                    (o.len() == 2).then_some(())?;
                    Some(format!(
                        "{}:{}",
                        o.get("line")?.as_u64()?,
                        o.get("character")?.as_u64()?
                    ))
                };
                if let Some(p) = pos(v) {
                    return Json::String(p);
                }
                if m.len() == 2 {
                    if let (Some(a), Some(b)) =
                        (m.get("start").and_then(pos), m.get("end").and_then(pos))
                    {
                        return Json::String(format!("{a}-{b}"));
                    }
                }
                Json::Object(m.iter().map(|(k, v)| (k.clone(), compact(v))).collect())
            }
            Json::Array(a) => Json::Array(a.iter().map(compact).collect()),
            // SVG drawings change with the layout engine: only say there is one.
            Json::String(s) if s.starts_with("<svg") => Json::String("<svg …>".into()),
            other => other.clone(),
        }
    }
    serde_json::to_string_pretty(&compact(v)).unwrap()
}

/// Splits off a JSON value that may continue on the following lines.
fn take_json(first: &str, lines: &mut std::iter::Peekable<std::str::Lines>) -> Json {
    let mut text = first.trim().to_string();
    if text.is_empty() {
        return Json::Null;
    }
    loop {
        if let Ok(v) = serde_json::from_str(&text) {
            return v;
        }
        match lines.next() {
            Some(l) => {
                text.push('\n');
                text.push_str(l);
            }
            None => panic!("bad JSON in transcript: {text}"),
        }
    }
}

fn take_block(lines: &mut std::iter::Peekable<std::str::Lines>) -> Vec<String> {
    let mut block = Vec::new();
    for l in lines.by_ref() {
        if l == "." {
            return block;
        }
        block.push(l.to_string());
    }
    panic!("a block without its closing `.`");
}

impl Runner {
    /// The byte offset of an LSP position in a tracked document.
    fn offset(&self, text: &str, line: usize, col: usize) -> usize {
        let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        let rest = &text[start..];
        let mut units = 0;
        for (i, c) in rest.char_indices() {
            if units >= col || c == '\n' {
                return start + i;
            }
            units += if self.utf8 {
                c.len_utf8()
            } else {
                c.len_utf16()
            };
        }
        text.len()
    }

    fn filter(&self, uri: Option<&str>, name: &str, response: &Json) -> String {
        let result = &response["result"];
        if !response["error"].is_null() {
            return pretty(response);
        }
        match name {
            "count" => format!("{} items", result.as_array().map_or(0, Vec::len)),
            // Semantic tokens in short: the result id, and the data's length
            // or the edits (start, deleted, inserted numbers).
            "summary" => {
                let len = |v: &Json| v.as_array().map_or(0, Vec::len);
                match result.get("edits") {
                    Some(edits) => format!(
                        "resultId {} edits {:?}",
                        result["resultId"],
                        edits
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|e| (
                                e["start"].as_u64().unwrap(),
                                e["deleteCount"].as_u64().unwrap(),
                                len(&e["data"])
                            ))
                            .collect::<Vec<_>>()
                    ),
                    None => format!(
                        "resultId {} data of {}",
                        result["resultId"],
                        len(&result["data"])
                    ),
                }
            }
            "quiet" => "ok".to_string(),
            "nodocs" => {
                fn strip(v: &Json) -> Json {
                    match v {
                        Json::Object(m) => Json::Object(
                            m.iter()
                                .filter(|(k, _)| k.as_str() != "documentation")
                                .map(|(k, v)| (k.clone(), strip(v)))
                                .collect(),
                        ),
                        Json::Array(a) => Json::Array(a.iter().map(strip).collect()),
                        other => other.clone(),
                    }
                }
                pretty(&strip(response))
            }
            "labels" => {
                let items = result.as_array().or_else(|| result["items"].as_array());
                let mut out = String::new();
                let mut primitives = 0;
                for item in items.into_iter().flatten() {
                    // Primitives come from the registry, which grows: only count them.
                    if item["kind"] == 2 {
                        primitives += 1;
                        continue;
                    }
                    out.push_str(&format!(
                        "{} ({}){}\n",
                        item["label"].as_str().unwrap_or(""),
                        item["kind"],
                        item["detail"]
                            .as_str()
                            .map(|d| format!("  {d}"))
                            .unwrap_or_default()
                    ));
                }
                if primitives > 0 {
                    out.push_str("... and the primitives\n");
                }
                out.trim_end().to_string()
            }
            "tokens" => {
                let text = uri
                    .and_then(|u| self.docs.get(u))
                    .cloned()
                    .unwrap_or_default();
                let data: Vec<u64> = result["data"]
                    .as_array()
                    .map(|a| a.iter().filter_map(Json::as_u64).collect())
                    .unwrap_or_default();
                let (mut line, mut col) = (0usize, 0usize);
                let mut out = String::new();
                for t in data.chunks(5) {
                    if t[0] > 0 {
                        line += t[0] as usize;
                        col = t[1] as usize;
                    } else {
                        col += t[1] as usize;
                    }
                    let a = self.offset(&text, line, col);
                    let b = self.offset(&text, line, col + t[2] as usize);
                    let mods: Vec<&str> = (0..self.legend.1.len())
                        .filter(|i| t[4] & (1 << i) != 0)
                        .map(|i| self.legend.1[i].as_str())
                        .collect();
                    out.push_str(&format!(
                        "{line}:{col} {:?} {}{}\n",
                        &text[a..b],
                        self.legend.0[t[3] as usize],
                        if mods.is_empty() {
                            String::new()
                        } else {
                            format!(" +{}", mods.join(" +"))
                        }
                    ));
                }
                out.trim_end().to_string()
            }
            other => panic!("unknown filter `{other}`"),
        }
    }

    async fn run(&mut self, script: &str) {
        let mut lines = script.lines().peekable();
        while let Some(line) = lines.next() {
            let line = line.trim_end();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (head, rest) = line.split_once(' ').unwrap_or((line, ""));
            match head {
                ">" | "!" => {
                    let rest = rest.trim();
                    let (method, rest) = rest.split_once(' ').unwrap_or((rest, ""));
                    let (filter, rest) = match rest.trim_start().strip_prefix('|') {
                        Some(f) => {
                            let (name, rest) = f.split_once(' ').unwrap_or((f, ""));
                            (Some(name.to_string()), rest)
                        }
                        None => (None, rest),
                    };
                    let params = take_json(rest, &mut lines);
                    if head == "!" {
                        self.client.notify(method, params).await;
                        continue;
                    }
                    let uri = params["textDocument"]["uri"].as_str().map(str::to_string);
                    let response = self.client.request(method, params).await;
                    if method == "initialize" {
                        let caps = &response["result"]["capabilities"];
                        self.utf8 = caps["positionEncoding"] == "utf-8";
                        let legend = &caps["semanticTokensProvider"]["legend"];
                        let strings = |v: &Json| -> Vec<String> {
                            v.as_array()
                                .map(|a| {
                                    a.iter()
                                        .filter_map(|s| s.as_str().map(str::to_string))
                                        .collect()
                                })
                                .unwrap_or_default()
                        };
                        self.legend = (
                            strings(&legend["tokenTypes"]),
                            strings(&legend["tokenModifiers"]),
                        );
                    }
                    let shown = match &filter {
                        Some(f) => self.filter(uri.as_deref(), f, &response),
                        None => {
                            let mut r = response.clone();
                            r.as_object_mut().unwrap().remove("id");
                            r.as_object_mut().unwrap().remove("jsonrpc");
                            pretty(&r)
                        }
                    };
                    self.out.push_str(&format!(">>> {method}\n{shown}\n"));
                }
                "<" => {
                    let (method, cond) = rest.split_once(' ').unwrap_or((rest, ""));
                    let version: Option<i64> =
                        cond.strip_prefix("version=").map(|v| v.parse().unwrap());
                    let params = self
                        .client
                        .notification(method, |p| version.is_none_or(|v| p["version"] == v))
                        .await;
                    self.out
                        .push_str(&format!("<<< {method}\n{}\n", pretty(&params)));
                }
                "open" => {
                    let uri = rest.trim().to_string();
                    let mut text = take_block(&mut lines).join("\n");
                    text.push('\n');
                    self.client.open(&uri, &text).await;
                    self.docs.insert(uri, text);
                }
                "change" => {
                    let (uri, version) = rest.trim().split_once(' ').unwrap();
                    let mut changes = Vec::new();
                    for l in take_block(&mut lines) {
                        let (range, text) = l.split_once(' ').unwrap();
                        let new_text: String = serde_json::from_str(text).unwrap();
                        let (a, b) = range.split_once('-').unwrap();
                        let pos = |s: &str| {
                            let (l, c) = s.split_once(':').unwrap();
                            (l.parse::<usize>().unwrap(), c.parse::<usize>().unwrap())
                        };
                        let ((l1, c1), (l2, c2)) = (pos(a), pos(b));
                        let doc = self.docs.get(uri).cloned().unwrap_or_default();
                        let (s, e) = (self.offset(&doc, l1, c1), self.offset(&doc, l2, c2));
                        let mut doc2 = doc.clone();
                        doc2.replace_range(s..e, &new_text);
                        self.docs.insert(uri.to_string(), doc2);
                        changes.push(json!({
                            "range": {"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}},
                            "text": new_text,
                        }));
                    }
                    let version: i64 = version.parse().unwrap();
                    self.client
                        .notify(
                            "textDocument/didChange",
                            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}),
                        )
                        .await;
                }
                other => panic!("unknown transcript directive `{other}`"),
            }
        }
    }
}

fn replay(name: &str) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/transcripts");
    let script = std::fs::read_to_string(format!("{dir}/{name}.txt")).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(lsp::STACK_SIZE)
        .enable_all()
        .build()
        .unwrap();
    let out = runtime.block_on(async {
        let mut runner = Runner {
            client: Client::start(),
            out: String::new(),
            docs: HashMap::new(),
            legend: Default::default(),
            utf8: false,
        };
        runner.run(&script).await;
        runner.out
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    expect_file![format!("{dir}/{name}.expected")].assert_eq(&out);
}

macro_rules! transcripts {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                replay(stringify!($name));
            }
        )*
    };
}

transcripts!(
    initialize,
    navigation,
    editing,
    utf16,
    utf8,
    syntax_errors,
    features,
    custom,
    robustness,
    protocol_pieces,
    quick_fixes,
);
