//! Diagnostics for people (codespan-reporting) and for machines (JSON, GitHub
//! workflow annotations, SARIF).

use std::path::Path;

use analysis::{Diagnostic, Severity};
use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{
    self,
    termcolor::{ColorChoice, StandardStream},
};
use serde_json::{json, Value};
use syntax::{ColumnUnit, LineIndex};

/// A checked file: its path, text and diagnostics.
pub struct Checked {
    pub path: String,
    pub text: String,
    pub diagnostics: Vec<Diagnostic>,
}

fn color() -> ColorChoice {
    if std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none()
    {
        ColorChoice::Auto
    } else {
        ColorChoice::Never
    }
}

fn to_codespan(d: &Diagnostic) -> CsDiagnostic<()> {
    let base = match d.severity {
        Severity::Error => CsDiagnostic::error(),
        Severity::Warning => CsDiagnostic::warning(),
    };
    let range = |r: ir::TextRange| usize::from(r.start())..usize::from(r.end());
    let mut labels = vec![Label::primary((), range(d.range))];
    labels.extend(
        d.related
            .iter()
            .map(|(r, m)| Label::secondary((), range(*r)).with_message(m)),
    );
    let mut notes = d.notes.clone();
    notes.extend(d.fixes.iter().map(|f| format!("help: {}", f.label)));
    base.with_code(d.code.as_str())
        .with_message(&d.message)
        .with_labels(labels)
        .with_notes(notes)
}

pub fn human(files: &[Checked]) {
    let writer = StandardStream::stderr(color());
    let config = term::Config::default();
    for f in files {
        let file = SimpleFile::new(f.path.as_str(), f.text.as_str());
        for d in &f.diagnostics {
            let _ = term::emit_to_write_style(&mut writer.lock(), &config, &file, &to_codespan(d));
        }
    }
}

/// Syntax errors only (for `fmt` and `parse`).
pub fn syntax_errors(path: &Path, text: &str, errors: &[syntax::SyntaxError]) {
    let diagnostics = errors
        .iter()
        .map(|e| Diagnostic::error(analysis::Code::Syntax, e.range, e.message.clone()))
        .collect();
    human(&[Checked {
        path: path.display().to_string(),
        text: text.to_string(),
        diagnostics,
    }]);
}

fn severity_name(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// 1-based line and column (in characters) of the start and end of a range.
fn positions(index: &LineIndex, text: &str, range: ir::TextRange) -> (u32, u32, u32, u32) {
    let s = index.line_col(text, range.start(), ColumnUnit::Char);
    let e = index.line_col(text, range.end(), ColumnUnit::Char);
    (s.line + 1, s.col + 1, e.line + 1, e.col + 1)
}

pub fn json(files: &[Checked]) -> Value {
    let mut out = Vec::new();
    for f in files {
        let index = LineIndex::new(&f.text);
        for d in &f.diagnostics {
            let (line, column, end_line, end_column) = positions(&index, &f.text, d.range);
            let related: Vec<Value> = d
                .related
                .iter()
                .map(|(r, m)| {
                    let (l, c, el, ec) = positions(&index, &f.text, *r);
                    json!({"message": m, "line": l, "column": c, "end_line": el, "end_column": ec})
                })
                .collect();
            out.push(json!({
                "file": f.path,
                "severity": severity_name(d.severity),
                "code": d.code.as_str(),
                "message": d.message,
                "line": line,
                "column": column,
                "end_line": end_line,
                "end_column": end_column,
                "related": related,
                "notes": d.notes,
            }));
        }
    }
    Value::Array(out)
}

/// GitHub Actions workflow commands (`::error file=...::message`).
pub fn github(files: &[Checked]) -> String {
    let escape_data = |s: &str| {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    };
    let escape_prop = |s: &str| escape_data(s).replace(':', "%3A").replace(',', "%2C");
    let mut out = String::new();
    for f in files {
        let index = LineIndex::new(&f.text);
        for d in &f.diagnostics {
            let (line, col, end_line, end_col) = positions(&index, &f.text, d.range);
            out.push_str(&format!(
                "::{} file={},line={line},col={col},endLine={end_line},endColumn={end_col},title={}::{}\n",
                severity_name(d.severity),
                escape_prop(&f.path),
                escape_prop(d.code.as_str()),
                escape_data(&d.message)
            ));
        }
    }
    out
}

/// SARIF 2.1.0, one run with a rule per diagnostic code.
pub fn sarif(files: &[Checked]) -> Value {
    let rules: Vec<Value> = analysis::Code::ALL
        .iter()
        .map(|c| {
            json!({
                "id": c.as_str(),
                "shortDescription": {"text": c.summary()},
                "defaultConfiguration": {"level": severity_name(c.severity())},
            })
        })
        .collect();
    let mut results = Vec::new();
    for f in files {
        let index = LineIndex::new(&f.text);
        for d in &f.diagnostics {
            let (line, col, end_line, end_col) = positions(&index, &f.text, d.range);
            let region = json!({"startLine": line, "startColumn": col, "endLine": end_line, "endColumn": end_col});
            let related: Vec<Value> = d
                .related
                .iter()
                .enumerate()
                .map(|(i, (r, m))| {
                    let (l, c, el, ec) = positions(&index, &f.text, *r);
                    json!({
                        "id": i,
                        "message": {"text": m},
                        "physicalLocation": {
                            "artifactLocation": {"uri": f.path},
                            "region": {"startLine": l, "startColumn": c, "endLine": el, "endColumn": ec},
                        },
                    })
                })
                .collect();
            results.push(json!({
                "ruleId": d.code.as_str(),
                "level": severity_name(d.severity),
                "message": {"text": d.message},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": f.path}, "region": region}}],
                "relatedLocations": related,
            }));
        }
    }
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "mirdsl",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/mirdsl/mirdsl",
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}
