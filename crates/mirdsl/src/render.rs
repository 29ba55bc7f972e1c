//! Human-readable diagnostics, with source snippets (codespan-reporting).

use std::path::Path;

use codespan_reporting::diagnostic::{Diagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{
    self,
    termcolor::{ColorChoice, StandardStream},
};

pub fn syntax_errors(path: &Path, text: &str, errors: &[syntax::SyntaxError]) {
    let file = SimpleFile::new(path.display().to_string(), text);
    let color = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        ColorChoice::Auto
    } else {
        ColorChoice::Never
    };
    let writer = StandardStream::stderr(color);
    let config = term::Config::default();
    for error in errors {
        let range = usize::from(error.range.start())..usize::from(error.range.end());
        let diagnostic = Diagnostic::error()
            .with_code("E0001")
            .with_message(&error.message)
            .with_labels(vec![Label::primary((), range)]);
        let _ = term::emit_to_write_style(&mut writer.lock(), &config, &file, &diagnostic);
    }
}
