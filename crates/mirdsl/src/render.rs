//! Diagnostics for people (codespan-reporting) and for machines (JSON, GitHub
//! workflow annotations, SARIF).

use std::path::Path;

use analysis::{Diagnostic, Severity};
use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFiles;
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

/// How a file that a diagnostic points into is shown: a standard library
/// file as `@std/...`, a file below the working folder relative to it.
pub fn display_path(path: &Path) -> String {
    if let Some(rel) = analysis::modules::std_root().and_then(|root| path.strip_prefix(root).ok()) {
        let rel: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        return format!("{}{}", analysis::modules::STD_PREFIX, rel.join("/"));
    }
    if let Some(rel) = std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(analysis::modules::normalize(&cwd)).ok())
    {
        return rel.display().to_string();
    }
    path.display().to_string()
}

/// The files diagnostics are shown in: each checked file, and the files
/// their related ranges point into (read when first needed).
struct SourceFiles {
    files: SimpleFiles<String, String>,
    ids: std::collections::HashMap<std::path::PathBuf, usize>,
}

impl SourceFiles {
    fn new() -> SourceFiles {
        SourceFiles {
            files: SimpleFiles::new(),
            ids: std::collections::HashMap::new(),
        }
    }

    fn add(&mut self, name: String, text: String) -> usize {
        self.files.add(name, text)
    }

    /// The id of an imported file, read from disk (or the embedded standard library).
    fn other(&mut self, path: &Path) -> Option<usize> {
        if let Some(id) = self.ids.get(path) {
            return Some(*id);
        }
        let text = analysis::modules::Loader::read(&analysis::modules::FsLoader, path).ok()?;
        let id = self.files.add(display_path(path), text.to_string());
        self.ids.insert(path.to_path_buf(), id);
        Some(id)
    }
}

/// `help:` lines: advice without an edit, then each fix's label (with the
/// text it writes, where that is more than the label says).
fn help_lines(d: &Diagnostic, source: &str) -> Vec<String> {
    let fix = |f: &analysis::Fix| {
        if f.wraps {
            format!("{}: `{}`", f.label, f.new_text(source))
        } else {
            f.label.clone()
        }
    };
    d.help
        .iter()
        .cloned()
        .chain(d.fixes.iter().map(fix))
        .collect()
}

fn to_codespan(
    d: &Diagnostic,
    file: usize,
    source: &str,
    files: &mut SourceFiles,
) -> CsDiagnostic<usize> {
    let base = match d.severity {
        Severity::Error => CsDiagnostic::error(),
        Severity::Warning => CsDiagnostic::warning(),
    };
    let range = |r: ir::TextRange| usize::from(r.start())..usize::from(r.end());
    let mut primary = Label::primary(file, range(d.range));
    if let Some(label) = &d.label {
        primary = primary.with_message(label);
    }
    let mut labels = vec![primary];
    for r in &d.related {
        let id = match &r.file {
            None => Some(file),
            Some(path) => files.other(path),
        };
        if let Some(id) = id {
            labels.push(Label::secondary(id, range(r.range)).with_message(&r.message));
        }
    }
    let mut notes: Vec<String> = d.notes.iter().map(|n| format!("note: {n}")).collect();
    notes.extend(help_lines(d, source).iter().map(|h| format!("help: {h}")));
    base.with_code(d.code.as_str())
        .with_message(&d.message)
        .with_labels(labels)
        .with_notes(notes)
}

pub fn human(checked: &[Checked]) {
    let writer = StandardStream::stderr(color());
    let config = term::Config::default();
    let mut files = SourceFiles::new();
    for f in checked {
        let id = files.add(f.path.clone(), f.text.clone());
        for d in &f.diagnostics {
            let d = to_codespan(d, id, &f.text, &mut files);
            let _ = term::emit_to_write_style(&mut writer.lock(), &config, &files.files, &d);
        }
    }
}

/// An error of a command (not of the checker: no code) at a place in a file.
pub fn error_at(
    path: &str,
    text: &str,
    range: ir::TextRange,
    message: &str,
    label: &str,
    notes: &[String],
) {
    let writer = StandardStream::stderr(color());
    let mut files = SimpleFiles::new();
    let id = files.add(path.to_string(), text.to_string());
    let range = usize::from(range.start())..usize::from(range.end());
    let d = CsDiagnostic::error()
        .with_message(message)
        .with_labels(vec![Label::primary(id, range).with_message(label)])
        .with_notes(notes.to_vec());
    let _ = term::emit_to_write_style(&mut writer.lock(), &term::Config::default(), &files, &d);
}

/// Syntax errors only (for `fmt` and `parse`).
pub fn syntax_errors(path: &Path, text: &str, errors: &[syntax::SyntaxError]) {
    let diagnostics = errors.iter().map(Diagnostic::syntax).collect();
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

/// A related range, placed: its file (as shown) and 1-based positions.
struct Place {
    file: String,
    start: (u32, u32),
    end: (u32, u32),
}

/// Texts and line indexes of the files related ranges point into.
#[derive(Default)]
struct Indexes {
    other: std::collections::HashMap<std::path::PathBuf, Option<(String, String, LineIndex)>>,
}

impl Indexes {
    /// Where related range `r` of a diagnostic of `f` is.
    fn place(&mut self, f: &Checked, own: &LineIndex, r: &analysis::Related) -> Option<Place> {
        let (file, text, index) = match &r.file {
            None => (f.path.as_str(), f.text.as_str(), own),
            Some(path) => {
                let entry = self.other.entry(path.to_path_buf()).or_insert_with(|| {
                    let text =
                        analysis::modules::Loader::read(&analysis::modules::FsLoader, path).ok()?;
                    let index = LineIndex::new(&text);
                    Some((display_path(path), text.to_string(), index))
                });
                let (name, text, index) = entry.as_ref()?;
                (name.as_str(), text.as_str(), index)
            }
        };
        let (l, c, el, ec) = positions(index, text, r.range);
        Some(Place {
            file: file.to_string(),
            start: (l, c),
            end: (el, ec),
        })
    }
}

/// Advice of a diagnostic as JSON: each `help:` text, and the fixes as edits.
fn fixes_json(f: &Checked, index: &LineIndex, d: &Diagnostic) -> Value {
    d.fixes
        .iter()
        .map(|fix| {
            let (l, c, el, ec) = positions(index, &f.text, fix.range);
            json!({
                "message": fix.label,
                "line": l, "column": c, "end_line": el, "end_column": ec,
                "replacement": fix.new_text(&f.text),
            })
        })
        .collect()
}

pub fn json(files: &[Checked]) -> Value {
    let mut out = Vec::new();
    let mut indexes = Indexes::default();
    for f in files {
        let index = LineIndex::new(&f.text);
        for d in &f.diagnostics {
            let (line, column, end_line, end_column) = positions(&index, &f.text, d.range);
            let related: Vec<Value> = d
                .related
                .iter()
                .filter_map(|r| {
                    let p = indexes.place(f, &index, r)?;
                    Some(json!({
                        "file": p.file,
                        "message": r.message,
                        "line": p.start.0, "column": p.start.1,
                        "end_line": p.end.0, "end_column": p.end.1,
                    }))
                })
                .collect();
            out.push(json!({
                "file": f.path,
                "severity": severity_name(d.severity),
                "code": d.code.as_str(),
                "message": d.message,
                "label": d.label,
                "line": line,
                "column": column,
                "end_line": end_line,
                "end_column": end_column,
                "related": related,
                "notes": d.notes,
                "help": help_lines(d, &f.text),
                "fixes": fixes_json(f, &index, d),
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
    let mut indexes = Indexes::default();
    let region = |(l, c): (u32, u32), (el, ec): (u32, u32)| json!({"startLine": l, "startColumn": c, "endLine": el, "endColumn": ec});
    for f in files {
        let index = LineIndex::new(&f.text);
        for d in &f.diagnostics {
            let (line, col, end_line, end_col) = positions(&index, &f.text, d.range);
            let related: Vec<Value> = d
                .related
                .iter()
                .filter_map(|r| indexes.place(f, &index, r).map(|p| (r, p)))
                .enumerate()
                .map(|(i, (r, p))| {
                    json!({
                        "id": i,
                        "message": {"text": r.message},
                        "physicalLocation": {
                            "artifactLocation": {"uri": p.file},
                            "region": region(p.start, p.end),
                        },
                    })
                })
                .collect();
            // The message as a reader of the result sees it: notes and help included.
            let mut text = d.message.clone();
            for n in &d.notes {
                text.push_str(&format!("\nnote: {n}"));
            }
            for h in help_lines(d, &f.text) {
                text.push_str(&format!("\nhelp: {h}"));
            }
            let fixes: Vec<Value> = d
                .fixes
                .iter()
                .map(|fix| {
                    let (l, c, el, ec) = positions(&index, &f.text, fix.range);
                    json!({
                        "description": {"text": fix.label},
                        "artifactChanges": [{
                            "artifactLocation": {"uri": f.path},
                            "replacements": [{
                                "deletedRegion": region((l, c), (el, ec)),
                                "insertedContent": {"text": fix.new_text(&f.text)},
                            }],
                        }],
                    })
                })
                .collect();
            results.push(json!({
                "ruleId": d.code.as_str(),
                "level": severity_name(d.severity),
                "message": {"text": text},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": f.path},
                    "region": region((line, col), (end_line, end_col)),
                }}],
                "relatedLocations": related,
                "fixes": fixes,
                "properties": {"notes": d.notes, "help": help_lines(d, &f.text)},
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
