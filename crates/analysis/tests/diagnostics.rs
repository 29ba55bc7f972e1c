//! Diagnostic fixtures: each file in `test_data/diagnostics` marks the
//! diagnostics it must produce with caret comments under the offending line
//! (`#   ^^^ E0201`); the checker must report exactly those (code and range),
//! and nothing else. Every diagnostic code has a fixture.

use std::path::Path;

use syntax::{ColumnUnit, LineIndex};

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Clone)]
struct Expected {
    line: u32,
    start: u32,
    end: u32,
    code: String,
}

fn expectations(text: &str) -> Vec<Expected> {
    let mut out = Vec::new();
    let mut target: Option<u32> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let is_marker = trimmed.starts_with('#') && trimmed[1..].trim_start().starts_with('^');
        if !is_marker {
            target = Some(i as u32);
            continue;
        }
        let chars: Vec<char> = line.chars().collect();
        let start = chars.iter().position(|&c| c == '^').unwrap();
        let end = start + chars[start..].iter().take_while(|&&c| c == '^').count();
        let code = chars[end..].iter().collect::<String>().trim().to_string();
        out.push(Expected {
            line: target.expect("a marker needs a line above it"),
            start: start as u32,
            end: end as u32,
            code,
        });
    }
    out.sort();
    out
}

/// The diagnostics of the fixture at `path` (with the files it imports).
fn diagnostics(path: &Path, text: &str) -> Vec<analysis::Diagnostic> {
    let linked = analysis::link::link(
        path,
        Some(std::sync::Arc::from(text)),
        &analysis::modules::FsLoader,
    );
    linked.diagnostics[0].clone()
}

fn actual(path: &Path, text: &str) -> Vec<Expected> {
    let index = LineIndex::new(text);
    let mut out: Vec<Expected> = diagnostics(path, text)
        .iter()
        .map(|d| {
            let s = index.line_col(text, d.range.start(), ColumnUnit::Char);
            let e = index.line_col(text, d.range.end(), ColumnUnit::Char);
            let end = if e.line == s.line { e.col } else { s.col + 1 };
            Expected {
                line: s.line,
                start: s.col,
                end: end.max(s.col + 1),
                code: d.code.as_str().to_string(),
            }
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

fn fixtures() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/diagnostics");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn fixtures_report_exactly_their_marked_diagnostics() {
    let mut failures = Vec::new();
    for path in fixtures() {
        let text = std::fs::read_to_string(&path).unwrap();
        let expected = expectations(&text);
        let got = actual(&path, &text);
        if expected != got {
            let messages: Vec<String> = diagnostics(&path, &text)
                .iter()
                .map(|d| format!("{} {}", d.code.as_str(), d.message))
                .collect();
            failures.push(format!(
                "{}:\n  expected {:?}\n  got      {:?}\n  messages {:#?}",
                path.file_name().unwrap().to_string_lossy(),
                expected,
                got,
                messages
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_diagnostic_code_has_a_fixture() {
    let names: Vec<String> = fixtures()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let missing: Vec<&str> = analysis::Code::ALL
        .iter()
        .map(|c| c.as_str())
        .filter(|code| !names.iter().any(|n| n.starts_with(code)))
        .collect();
    assert!(missing.is_empty(), "codes without a fixture: {missing:?}");
}

fn first_error(text: &str) -> analysis::Diagnostic {
    analysis::analyze(text)
        .diagnostics
        .into_iter()
        .find(|d| d.severity == analysis::Severity::Error)
        .expect("an error")
}

/// A MindSpore primitive without registry support is named as such, with
/// MindSpore's signature; MindSpore's names for registry primitives and
/// misspellings get did-you-mean, supported names first.
#[test]
fn mindspore_primitives_without_support() {
    let d = first_error("graph f(x: f32[3]) { return FlashAttentionScore(x, x, x) }\n");
    assert_eq!(d.code, analysis::Code::UnsupportedPrimitive);
    assert_eq!(
        d.message,
        "`FlashAttentionScore` is a MindSpore 2.10 primitive that mirdsl does not support yet"
    );
    assert!(
        d.notes[0].starts_with("MindSpore 2.10: `FlashAttentionScore(query: Tensor, key: Tensor"),
        "{:?}",
        d.notes
    );
    assert!(d.notes[1].contains("primitive function"), "{:?}", d.notes);

    let d = first_error("graph f(x: f32[3]) { return Relu(x) }\n");
    assert_eq!(d.code, analysis::Code::UnknownPrimitive);
    assert_eq!(d.message, "unknown primitive `Relu`; did you mean `ReLU`?");
    assert_eq!(d.notes, ["MindSpore 2.10's `Relu` is mirdsl's `ReLU`"]);

    let d = first_error("graph f(x: f32[3]) { return Expp(x) }\n");
    assert_eq!(d.message, "unknown primitive `Expp`; did you mean `Exp`?");

    let d = first_error("graph f(x: f32[3]) { return FlashAttentionScor(x) }\n");
    assert_eq!(
        d.message,
        "unknown primitive `FlashAttentionScor`; did you mean `FlashAttentionScore` (a MindSpore \
         2.10 primitive mirdsl does not support yet)?"
    );

    // Used as a value rather than called.
    let d = first_error("graph f(x: f32[3]) { g = FlashAttentionScore\n return x }\n");
    assert_eq!(d.code, analysis::Code::UnsupportedPrimitive);
}
