//! `textDocument/publishDiagnostics`, serialised straight to JSON text.
//!
//! Each item's diagnostics are converted and serialised once and kept, keyed
//! by the item's diagnostics (salsa memoises them per item) and where the item
//! (and any item its related ranges point into) starts: an edit inside one
//! graph re-serialises that graph (and the graphs whose inference read it),
//! not the file.

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};

use crate::lsp;
use db::ItemDiagnostics;
use syntax::ColumnUnit;

use crate::convert::{self, Snap};

struct Cached {
    diagnostics: Arc<ItemDiagnostics>,
    line: u32,
    col: u32,
    /// Where the other items that related ranges point into start.
    foreign: Vec<(String, lsp::Position)>,
    /// The item's diagnostics as JSON objects separated by commas.
    json: Arc<[u8]>,
}

#[derive(Default)]
struct DocCache {
    unit: Option<ColumnUnit>,
    items: HashMap<String, Cached>,
}

/// The serialised diagnostics of each item of each document, and each
/// document's memo of item diagnostics (by stamp: see [`db::DiagnosticsMemo`]).
#[derive(Default)]
pub struct DiagnosticsCache(
    Mutex<HashMap<String, DocCache>>,
    Mutex<HashMap<String, Arc<Mutex<db::DiagnosticsMemo>>>>,
);

impl DiagnosticsCache {
    pub fn forget(&self, uri: &str) {
        self.0.lock().unwrap().remove(uri);
        self.1.lock().unwrap().remove(uri);
    }

    fn memo(&self, uri: &str) -> Arc<Mutex<db::DiagnosticsMemo>> {
        self.1
            .lock()
            .unwrap()
            .entry(uri.to_string())
            .or_default()
            .clone()
    }
}

fn push(out: &mut Vec<u8>, first: &mut bool, d: &lsp::Diagnostic) {
    if !*first {
        out.push(b',');
    }
    *first = false;
    serde_json::to_writer(&mut *out, d).expect("a diagnostic serialises");
}

fn push_json(out: &mut Vec<u8>, first: &mut bool, json: &[u8]) {
    if json.is_empty() {
        return;
    }
    if !*first {
        out.push(b',');
    }
    *first = false;
    out.extend_from_slice(json);
}

/// The whole `publishDiagnostics` message for the snapshot's document.
pub fn message(snap: &Snap, version: i32, cache: &DiagnosticsCache) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::with_capacity(1 << 16);
    out.extend_from_slice(
        br#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"#,
    );
    serde_json::to_writer(&mut out, snap.uri.as_str()).unwrap();
    out.extend_from_slice(br#","diagnostics":"#);
    array(snap, cache, &mut out);
    let _ = write!(out, r#","version":{version}}}}}"#);
    out
}

/// The document's diagnostics as a JSON array (what is published, and what
/// a pull request is answered with), appended to `out`.
pub fn array(snap: &Snap, cache: &DiagnosticsCache, out: &mut Vec<u8>) {
    // A MindSpore compile dump is MindSpore's truth: no diagnostics.
    if crate::dump::is(snap) {
        out.extend_from_slice(b"[]");
        return;
    }
    let uri = snap.uri.as_str().to_string();
    let mut previous = cache.0.lock().unwrap().remove(&uri).unwrap_or_default();
    if previous.unit != Some(snap.unit) {
        previous.items.clear();
    }
    let mut next = DocCache {
        unit: Some(snap.unit),
        items: HashMap::with_capacity(previous.items.len()),
    };
    let memo = cache.memo(&uri);
    let new = memo.lock().is_ok_and(|m| m.is_new());
    // The items' analyses in parallel: all of them the first time (opening),
    // then those an edit changed.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    if new {
        db::prefetch_item_diagnostics(&snap.db, snap.file, threads);
    } else {
        db::prefetch_changed_item_diagnostics(&snap.db, snap.file, &memo, threads);
    }
    let ds = db::file_diagnostics_memo(&snap.db, snap.file, &memo);
    let starts = ds.starts();
    let file_placed = ds.place_file_level(&starts);
    let key = |d: &ide::Diagnostic, shift: syntax::TextSize| {
        (d.range.start() + shift, d.range.end() + shift, d.code)
    };
    out.push(b'[');
    let mut first = true;
    let mut file_level = ds.file_level.iter().peekable();
    for (index, (name, start, _, item)) in ds.items.iter().enumerate() {
        let Some(head) = item.diagnostics.first() else {
            continue;
        };
        let last = item.diagnostics.last().unwrap();
        while let Some(fd) = file_level.next_if(|fd| key(fd, 0.into()) <= key(head, *start)) {
            push(
                out,
                &mut first,
                &convert::placed_diagnostic(snap, fd, &file_placed),
            );
        }
        let interleaved = file_level
            .peek()
            .is_some_and(|fd| key(fd, 0.into()) <= key(last, *start));
        if interleaved {
            // A file-level diagnostic falls among this item's: one at a time, in order.
            for (i, d) in item.diagnostics.iter().enumerate() {
                while let Some(fd) = file_level.next_if(|fd| key(fd, 0.into()) <= key(d, *start)) {
                    push(
                        out,
                        &mut first,
                        &convert::placed_diagnostic(snap, fd, &file_placed),
                    );
                }
                let placed = ds.place(&starts, index, i);
                push(
                    out,
                    &mut first,
                    &convert::placed_diagnostic(snap, d, &placed),
                );
            }
            continue;
        }
        let at = snap.position(*start);
        let mut foreign: Vec<(String, lsp::Position)> = Vec::new();
        for (_, _, other, _) in &item.foreign {
            if !foreign.iter().any(|(n, _)| n == other) {
                let p = starts.get(other.as_str()).map(|o| snap.position(o));
                foreign.push((other.clone(), p.unwrap_or_default()));
            }
        }
        let reusable = previous.items.remove(name.as_str()).filter(|c| {
            c.line == at.line
                && c.col == at.character
                && c.foreign == foreign
                && (Arc::ptr_eq(&c.diagnostics, item) || *c.diagnostics == **item)
        });
        let json = match reusable {
            Some(c) => c.json,
            None => {
                let mut fragment = Vec::new();
                let mut first_in_item = true;
                for (i, d) in item.diagnostics.iter().enumerate() {
                    let placed = ds.place(&starts, index, i);
                    push(
                        &mut fragment,
                        &mut first_in_item,
                        &convert::placed_diagnostic(snap, d, &placed),
                    );
                }
                Arc::from(fragment)
            }
        };
        push_json(out, &mut first, &json);
        next.items.insert(
            name.clone(),
            Cached {
                diagnostics: item.clone(),
                line: at.line,
                col: at.character,
                foreign,
                json,
            },
        );
    }
    for fd in file_level {
        push(
            out,
            &mut first,
            &convert::placed_diagnostic(snap, fd, &file_placed),
        );
    }
    // A graph the checker crashed on: say so where it is.
    for f in ds.failures() {
        let d = lsp::Diagnostic {
            range: snap.range(f.range),
            severity: Some(lsp::DiagnosticSeverity::WARNING),
            code: Some(lsp::NumberOrString::String("internal".into())),
            source: Some("mirdsl".into()),
            message: ide::failure_message(&f),
            ..Default::default()
        };
        push(out, &mut first, &d);
    }
    out.push(b']');
    cache.0.lock().unwrap().insert(uri, next);
}
