//! Advice for undefined names that another file defines: which file, and
//! the `import` that makes the name visible, as a fix at the top of the file.
//!
//! The checker knows the standard library (`Diagnostic::missing_import`); the
//! other files of the workspace are known here, where the database is.

use std::path::{Component, Path, PathBuf};

use analysis::{Code, Diagnostic};
use db::File;
use syntax::ast::AstNode;
use syntax::{TextRange, TextSize};

use crate::Analysis;

/// `diagnostics` of `analysis`'s file with import advice: an undefined name
/// that a file of `others` defines names that file, and every undefined name
/// with an import to add gets the fix that adds it.
pub(crate) fn advise(
    analysis: &Analysis,
    mut diagnostics: Vec<Diagnostic>,
    others: &[File],
) -> Vec<Diagnostic> {
    let text = analysis.text();
    for d in &mut diagnostics {
        if d.code != Code::UndefinedName {
            continue;
        }
        // The workspace's own definition first, the standard library's next.
        let mut imports: Vec<String> = d.missing_import.iter().cloned().collect();
        let name = &text[d.range];
        // The message stays what the checker says (the editor shows it too,
        // without the workspace): the file that defines the name is a note.
        if let Some((path, import)) = defining_file(analysis, name, others) {
            d.notes.push(format!("`{path}` defines `{name}`"));
            imports.insert(0, import);
        }
        for (i, import) in imports.iter().enumerate() {
            let (at, new_text) = insertion(analysis, import);
            let label = analysis::Diagnostic::import_help(import);
            // The advice becomes the fix that follows it.
            d.help.retain(|h| *h != label);
            d.fixes.insert(
                i,
                analysis::Fix {
                    label,
                    range: TextRange::empty(at),
                    replacement: new_text,
                    wraps: false,
                },
            );
        }
        d.missing_import = imports.into_iter().next();
    }
    diagnostics
}

/// A file of `others` (not this one) whose top-level items include `name`
/// (or, for `alias.item`, `item`): its path as shown, and the import line.
fn defining_file(analysis: &Analysis, name: &str, others: &[File]) -> Option<(String, String)> {
    let db = analysis.db;
    let here = analysis.file.path(db).clone()?;
    let (alias, item) = match name.split_once('.') {
        Some((alias, item)) => (Some(alias), item),
        None => (None, name),
    };
    // The standard library's files (read for imports) are not the
    // workspace's: the checker names them as `@std/...` imports.
    let std_root = analysis::modules::std_root();
    let mut found: Vec<PathBuf> = others
        .iter()
        .filter(|f| **f != analysis.file)
        .filter(|f| db::items(db, **f).get(item).is_some())
        .filter_map(|f| f.path(db).as_deref().map(Path::to_path_buf))
        .filter(|p| std_root.is_none_or(|root| !p.starts_with(root)))
        .collect();
    found.sort();
    let target = found.first()?;
    let spec = relative(here.parent().unwrap_or(Path::new("")), target);
    let import = match alias {
        Some(alias) => format!("import \"{spec}\" as {alias}"),
        None => format!("import \"{spec}\""),
    };
    Some((spec, import))
}

/// `to` as a path relative to the folder `from`, with `/` separators.
fn relative(from: &Path, to: &Path) -> String {
    let from: Vec<Component> = from.components().collect();
    let to_parts: Vec<Component> = to.components().collect();
    let common = from
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut parts: Vec<String> = vec!["..".to_string(); from.len() - common];
    parts.extend(
        to_parts[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

/// Where an import goes and the text inserted there: after the file's last
/// `import`, else before its first item (above the comments attached to it).
fn insertion(analysis: &Analysis, import: &str) -> (TextSize, String) {
    let text = analysis.text();
    let file = db::parse(analysis.db, analysis.file).tree();
    let line_end = |at: TextSize| -> TextSize {
        let at = usize::from(at);
        let end = text[at..].find('\n').map_or(text.len(), |i| at + i + 1);
        TextSize::from(end as u32)
    };
    if let Some(last) = file.imports().last() {
        let at = line_end(last.syntax().text_range().end());
        let newline = if usize::from(at) == text.len() && !text.ends_with('\n') {
            "\n"
        } else {
            ""
        };
        return (at, format!("{newline}{import}\n"));
    }
    let Some(first) = file.items().next() else {
        return (TextSize::from(text.len() as u32), format!("{import}\n"));
    };
    // Up over the comment lines right above the item (its doc comment).
    let mut start = usize::from(first.syntax().text_range().start());
    start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    while start > 0 {
        let prev = text[..start - 1].rfind('\n').map_or(0, |i| i + 1);
        if text[prev..start].trim_start().starts_with('#') {
            start = prev;
        } else {
            break;
        }
    }
    (TextSize::from(start as u32), format!("{import}\n\n"))
}
