//! IDE features of the MindIR DSL, as plain data (no LSP types).
//!
//! Everything goes through [`Analysis`], a view of one file in a
//! [`db::RootDb`] snapshot: semantic questions are answered from the memoised
//! per-graph lowering and inference of the database, syntactic ones from the
//! file's (error-tolerant) syntax tree, so features keep working on the intact
//! parts of a file with syntax errors. Offsets are byte offsets into the file;
//! the language server converts them to the client's position encoding.

mod actions;
mod completion;
pub mod dump;
mod folding;
mod green;
mod hover;
mod imports;
mod inlay;
mod nav;
mod sema;
mod signature;
mod structure;
mod symbols;
mod tokens;

#[cfg(test)]
mod fixture;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use db::File;
use syntax::{TextRange, TextSize};

pub use actions::{CodeAction, CodeActionKind, CodeLens};
pub use analysis::{Code, Diagnostic, Severity};
pub use completion::{CompletionItem, CompletionKind, CompletionList, MAX_ITEMS};
pub use folding::{Fold, FoldKind};
pub use green::cancellation_check;
pub use hover::HoverResult;
pub use inlay::{InlayHint, InlayKind};
pub use nav::{FileOccurrence, Highlight, NavTarget};
pub use signature::SignatureHelp;
pub use structure::{CallItem, Calls};
pub use symbols::{Symbol, SymbolKind, WorkspaceSymbol};
pub use tokens::{SemanticToken, TokenKind, TokenModifier, TOKEN_KINDS, TOKEN_MODIFIERS};

/// One text replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub range: TextRange,
    pub new_text: String,
}

/// The features of one file of a database snapshot.
#[derive(Clone, Copy)]
pub struct Analysis<'a> {
    pub db: &'a dyn salsa::Database,
    pub file: File,
}

impl<'a> Analysis<'a> {
    pub fn new(db: &'a dyn salsa::Database, file: File) -> Analysis<'a> {
        Analysis { db, file }
    }

    pub fn text(&self) -> &'a str {
        self.file.text(self.db)
    }

    /// Every diagnostic: syntax, names, types and shapes; sorted by position.
    /// An undefined name that the standard library defines has the fix that
    /// imports it.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        self.diagnostics_seeing(&[])
    }

    /// [`Analysis::diagnostics`], where an undefined name that one of
    /// `others` (the workspace's files) defines names it, with the fix that
    /// imports it.
    pub fn diagnostics_seeing(&self, others: &[File]) -> Vec<Diagnostic> {
        let ds = db::file_diagnostics(self.db, self.file).to_vec();
        imports::advise(self, ds, others)
    }

    /// The diagnostics as the database keeps them (per item, not copied), and
    /// the graphs whose analysis panicked.
    pub fn file_diagnostics(&self) -> Arc<db::FileDiagnostics> {
        db::file_diagnostics(self.db, self.file).clone()
    }

    pub fn hover(&self, offset: TextSize) -> Option<HoverResult> {
        hover::hover(self, offset)
    }

    pub fn inlay_hints(&self, range: Option<TextRange>) -> Vec<InlayHint> {
        inlay::inlay_hints(self, range)
    }

    pub fn goto_definition(&self, offset: TextSize) -> Option<NavTarget> {
        nav::goto_definition(self, offset)
    }

    pub fn references(&self, offset: TextSize, include_declaration: bool) -> Vec<TextRange> {
        nav::references(self, offset, include_declaration)
    }

    /// References to the top-level item at `offset` in the files of
    /// `files` that import it and in its own file (`None`: not an item).
    pub fn references_across(
        &self,
        offset: TextSize,
        include_declaration: bool,
        files: &[File],
    ) -> Option<Vec<(File, TextRange)>> {
        let found = nav::item_occurrences(self, offset, files)?;
        Some(
            found
                .into_iter()
                .filter(|o| include_declaration || !o.is_def)
                .map(|o| (o.file, o.range))
                .collect(),
        )
    }

    /// Renames the top-level item at `offset` in every file that sees it
    /// (`None`: not an item).
    pub fn rename_across(
        &self,
        offset: TextSize,
        new_name: &str,
        files: &[File],
    ) -> Option<Result<Vec<(File, Edit)>, String>> {
        nav::rename_across(self, offset, new_name, files)
    }

    pub fn highlight(&self, offset: TextSize) -> Vec<Highlight> {
        nav::highlight(self, offset)
    }

    /// The range of the name to rename and its text, or why it cannot be renamed.
    pub fn prepare_rename(&self, offset: TextSize) -> Result<(TextRange, String), String> {
        nav::prepare_rename(self, offset)
    }

    pub fn rename(&self, offset: TextSize, new_name: &str) -> Result<Vec<Edit>, String> {
        nav::rename(self, offset, new_name)
    }

    /// The items offered at `offset`, best first, matching the name being
    /// typed (at most [`MAX_ITEMS`]).
    pub fn completions(&self, offset: TextSize) -> Vec<CompletionItem> {
        completion::completions(self, offset)
    }

    /// [`Analysis::completions`], and whether more items match than are listed.
    pub fn completion_list(&self, offset: TextSize) -> CompletionList {
        completion::completion_list(self, offset)
    }

    pub fn signature_help(&self, offset: TextSize) -> Option<SignatureHelp> {
        signature::signature_help(self, offset)
    }

    pub fn document_symbols(&self) -> Vec<Symbol> {
        symbols::document_symbols(self)
    }

    pub fn semantic_tokens(&self, range: Option<TextRange>) -> Vec<SemanticToken> {
        tokens::semantic_tokens(self, range)
    }

    pub fn folding_ranges(&self) -> Vec<Fold> {
        folding::folding_ranges(self)
    }

    /// The edits that format the file, or why it cannot be formatted.
    pub fn format(&self) -> Result<Vec<Edit>, String> {
        let text = self.text();
        let parse = db::parse(self.db, self.file);
        // A large file takes a while: an edit must not wait for it.
        match fmt::format_parse_checked(parse, &mut || self.db.unwind_if_revision_cancelled()) {
            Ok(formatted) => Ok(minimal_edit(text, &formatted).into_iter().collect()),
            Err(errors) => Err(format!(
                "the file has {} syntax error{}; fix {} before formatting",
                errors.len(),
                if errors.len() == 1 { "" } else { "s" },
                if errors.len() == 1 { "it" } else { "them" }
            )),
        }
    }

    /// The edits that format the top-level items `range` touches.
    pub fn format_range(&self, range: TextRange) -> Result<Vec<Edit>, String> {
        structure::format_range(self, range)
    }

    /// The ranges around `offset` for expanding a selection, innermost first.
    pub fn selection_ranges(&self, offset: TextSize) -> Vec<TextRange> {
        structure::selection_ranges(self, offset)
    }

    /// The top-level graph named or used at `offset`.
    pub fn prepare_call_hierarchy(&self, offset: TextSize) -> Option<CallItem> {
        structure::prepare_call_hierarchy(self, offset)
    }

    /// The graphs that use graph `name`.
    pub fn incoming_calls(&self, name: &str) -> Vec<Calls> {
        structure::incoming_calls(self, name)
    }

    /// The graphs that graph `name` uses.
    pub fn outgoing_calls(&self, name: &str) -> Vec<Calls> {
        structure::outgoing_calls(self, name)
    }

    /// The occurrences of the local name at `offset`, to edit together.
    pub fn linked_editing_ranges(&self, offset: TextSize) -> Option<Vec<TextRange>> {
        structure::linked_editing_ranges(self, offset)
    }

    /// Quick fixes and refactorings at `range`; `others` are the
    /// workspace's files (an undefined name one of them defines gets the
    /// import that makes it visible).
    pub fn code_actions(&self, range: TextRange, others: &[File]) -> Vec<CodeAction> {
        actions::code_actions(self, range, others)
    }

    pub fn code_lenses(&self) -> Vec<CodeLens> {
        actions::code_lenses(self)
    }
}

/// The diagnostics of a text, as `mirdsl check` prints them and the language
/// server publishes them: one pipeline (the database's), in position order;
/// and the graphs whose analysis panicked (checker bugs).
pub fn check_text(text: &str) -> (Vec<Diagnostic>, Vec<db::Failure>) {
    let mut db = db::RootDb::new();
    let file = db.new_file(text);
    // The items' analyses in parallel (salsa shares the results).
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    db::prefetch_item_diagnostics(&db, file, threads);
    let ds = db::file_diagnostics(&db, file);
    (ds.to_vec(), ds.failures())
}

/// What is said of a graph whose analysis panicked.
/// One file checked by [`check_paths`].
#[derive(Debug, Clone)]
pub struct CheckedFile {
    pub path: std::path::PathBuf,
    pub text: String,
    pub diagnostics: Vec<Diagnostic>,
    pub failures: Vec<db::Failure>,
}

/// Checks files as one workspace (`mirdsl check FILE/DIR...`): each of
/// `paths` (read from disk), then each file they import that has errors.
pub fn check_paths(paths: &[std::path::PathBuf]) -> Vec<CheckedFile> {
    let mut db = db::RootDb::new();
    let files: Vec<File> = paths.iter().map(|p| db.open(p, None)).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let mut out = Vec::new();
    let check = |file: File, path: std::path::PathBuf| {
        db::prefetch_item_diagnostics(&db, file, threads);
        let ds = db::file_diagnostics(&db, file);
        let seen: Vec<File> = db.files().into_iter().map(|(_, f)| f).collect();
        CheckedFile {
            path,
            text: file.text(&db).to_string(),
            diagnostics: imports::advise(&Analysis::new(&db, file), ds.to_vec(), &seen),
            failures: ds.failures(),
        }
    };
    for (path, file) in paths.iter().zip(&files) {
        out.push(check(*file, path.clone()));
    }
    let mut imported: Vec<(std::path::PathBuf, File)> = db
        .files()
        .into_iter()
        .filter(|(_, f)| !files.contains(f))
        .collect();
    imported.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, file) in imported {
        let c = check(file, path);
        if c.diagnostics.iter().any(|d| d.severity == Severity::Error) || !c.failures.is_empty() {
            out.push(c);
        }
    }
    out
}

pub fn failure_message(f: &db::Failure) -> String {
    format!(
        "internal error: checking `{}` failed ({}); this is a bug in mirdsl",
        f.item, f.message
    )
}

/// Symbols of every file whose name matches `query` (a case-insensitive subsequence).
pub fn workspace_symbols(
    db: &dyn salsa::Database,
    files: &[File],
    query: &str,
) -> Vec<WorkspaceSymbol> {
    symbols::workspace_symbols(db, files, query)
}

/// One edit turning `old` into `new`: the differing middle, after the common
/// prefix and suffix (so the client keeps cursors and folds where it can).
pub fn minimal_edit(old: &str, new: &str) -> Option<Edit> {
    if old == new {
        return None;
    }
    let prefix = old
        .char_indices()
        .zip(new.chars())
        .find(|((_, a), b)| a != b)
        .map_or(old.len().min(new.len()), |((i, _), _)| i);
    let max_suffix = (old.len() - prefix).min(new.len() - prefix);
    let mut suffix = 0;
    let (ob, nb) = (old.as_bytes(), new.as_bytes());
    while suffix < max_suffix && ob[old.len() - 1 - suffix] == nb[new.len() - 1 - suffix] {
        suffix += 1;
    }
    while !old.is_char_boundary(old.len() - suffix) || !new.is_char_boundary(new.len() - suffix) {
        suffix -= 1;
    }
    Some(Edit {
        range: TextRange::new(
            TextSize::from(prefix as u32),
            TextSize::from((old.len() - suffix) as u32),
        ),
        new_text: new[prefix..new.len() - suffix].to_string(),
    })
}

/// Whether `name` may be bound: an identifier (with dotted segments) or a
/// temporary, and not a keyword.
pub fn is_valid_name(name: &str) -> bool {
    if syntax::SyntaxKind::from_keyword(name).is_some() {
        return false;
    }
    if let Some(rest) = name.strip_prefix('%') {
        return !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    }
    let segment = |s: &str| {
        let mut chars = s.chars();
        matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    !name.is_empty()
        && name.split('.').all(segment)
        && name
            .split('.')
            .all(|s| syntax::SyntaxKind::from_keyword(s).is_none())
}
