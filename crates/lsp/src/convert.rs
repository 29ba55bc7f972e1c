//! Offsets ↔ LSP positions in the negotiated encoding, and ide data → LSP types.

use crate::lsp;
use db::File;
use syntax::{ColumnUnit, LineCol, LineIndex, TextRange, TextSize};

/// A database snapshot with one document, for one request.
pub struct Snap {
    pub db: db::RootDb,
    pub file: File,
    pub uri: lsp::Uri,
    pub unit: ColumnUnit,
}

impl Snap {
    pub fn analysis(&self) -> ide::Analysis<'_> {
        ide::Analysis::new(&self.db, self.file)
    }

    pub fn text(&self) -> &str {
        self.file.text(&self.db)
    }

    pub fn index(&self) -> &LineIndex {
        db::line_index(&self.db, self.file)
    }

    pub fn offset(&self, p: lsp::Position) -> TextSize {
        offset(self.text(), self.index(), p, self.unit)
    }

    pub fn position(&self, o: TextSize) -> lsp::Position {
        position(self.text(), self.index(), o, self.unit)
    }

    pub fn range(&self, r: TextRange) -> lsp::Range {
        lsp::Range::new(self.position(r.start()), self.position(r.end()))
    }

    pub fn text_range(&self, r: lsp::Range) -> TextRange {
        let (a, b) = (self.offset(r.start), self.offset(r.end));
        TextRange::new(a.min(b), a.max(b))
    }

    /// The same snapshot on another file (`None`: it has no path, so no URI).
    pub fn other(&self, file: File) -> Option<Snap> {
        let uri = path_uri(file.path(&self.db).as_deref()?)?;
        Some(Snap {
            db: self.db.clone(),
            file,
            uri,
            unit: self.unit,
        })
    }

    pub fn location(&self, r: TextRange) -> lsp::Location {
        lsp::Location::new(self.uri.clone(), self.range(r))
    }

    pub fn edit(&self, e: &ide::Edit) -> lsp::TextEdit {
        lsp::TextEdit::new(self.range(e.range), e.new_text.clone())
    }
}

pub fn offset(text: &str, index: &LineIndex, p: lsp::Position, unit: ColumnUnit) -> TextSize {
    index.offset(
        text,
        LineCol {
            line: p.line,
            col: p.character,
        },
        unit,
    )
}

pub fn position(text: &str, index: &LineIndex, o: TextSize, unit: ColumnUnit) -> lsp::Position {
    let lc = index.line_col(text, o, unit);
    lsp::Position::new(lc.line, lc.col)
}

/// A diagnostic whose ranges are already in the file.
pub fn diagnostic(snap: &Snap, d: &ide::Diagnostic) -> lsp::Diagnostic {
    placed(snap, d, &|r| r, &|_, r| r)
}

/// A diagnostic of the database's per-item store.
pub fn placed_diagnostic(snap: &Snap, d: &ide::Diagnostic, p: &db::Placed) -> lsp::Diagnostic {
    placed(snap, d, &|r| p.range(r), &|i, r| p.related(i, r))
}

fn placed(
    snap: &Snap,
    d: &ide::Diagnostic,
    range: &dyn Fn(TextRange) -> TextRange,
    related_range: &dyn Fn(usize, TextRange) -> TextRange,
) -> lsp::Diagnostic {
    let mut message = d.message.clone();
    for note in &d.notes {
        message.push_str("\nnote: ");
        message.push_str(note);
    }
    for help in &d.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    // The primary range's label (`this is i32[4]`) has no place of its own
    // in LSP: it goes first among the related places, at that range.
    let label = d.label.as_ref().map(|l| lsp::DiagnosticRelatedInformation {
        location: snap.location(range(d.range)),
        message: l.clone(),
    });
    let related: Vec<lsp::DiagnosticRelatedInformation> = label
        .into_iter()
        .chain(d.related.iter().enumerate().filter_map(|(i, r)| {
            let location = match &r.file {
                None => snap.location(related_range(i, r.range)),
                // In an imported file: that file's positions and URI.
                Some(path) => snap.other(snap.db.file_at(path)?)?.location(r.range),
            };
            Some(lsp::DiagnosticRelatedInformation {
                location,
                message: r.message.clone(),
            })
        }))
        .collect();
    let unused = d.code == ide::Code::UnusedBinding || d.code == ide::Code::UnreachableGraph;
    lsp::Diagnostic {
        range: snap.range(range(d.range)),
        severity: Some(match d.severity {
            ide::Severity::Error => lsp::DiagnosticSeverity::ERROR,
            ide::Severity::Warning => lsp::DiagnosticSeverity::WARNING,
        }),
        code: Some(lsp::NumberOrString::String(d.code.as_str().to_string())),
        code_description: None,
        source: Some("mirdsl".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        tags: unused.then(|| vec![lsp::DiagnosticTag::UNNECESSARY]),
        data: None,
    }
}

pub fn completion_kind(k: ide::CompletionKind) -> lsp::CompletionItemKind {
    use ide::CompletionKind as K;
    match k {
        K::Local => lsp::CompletionItemKind::VARIABLE,
        K::NestedGraph | K::Graph => lsp::CompletionItemKind::FUNCTION,
        K::Weight => lsp::CompletionItemKind::FIELD,
        K::Primitive | K::Metafunction => lsp::CompletionItemKind::METHOD,
        K::Attribute => lsp::CompletionItemKind::PROPERTY,
        K::DType => lsp::CompletionItemKind::TYPE_PARAMETER,
        K::Keyword => lsp::CompletionItemKind::KEYWORD,
        K::Initializer => lsp::CompletionItemKind::CONSTRUCTOR,
    }
}

pub fn completion(snap: &Snap, c: &ide::CompletionItem) -> lsp::CompletionItem {
    lsp::CompletionItem {
        label: c.label.clone(),
        kind: Some(completion_kind(c.kind)),
        detail: c.detail.clone(),
        documentation: c.documentation.clone().map(|d| {
            lsp::Documentation::MarkupContent(lsp::MarkupContent {
                kind: lsp::MarkupKind::Markdown,
                value: d,
            })
        }),
        sort_text: Some(format!("{}{}", c.sort, c.label)),
        filter_text: Some(c.label.clone()),
        insert_text_format: Some(if c.is_snippet {
            lsp::InsertTextFormat::SNIPPET
        } else {
            lsp::InsertTextFormat::PLAIN_TEXT
        }),
        text_edit: Some(lsp::CompletionTextEdit::Edit(lsp::TextEdit::new(
            snap.range(c.replace),
            c.insert_text.clone(),
        ))),
        ..Default::default()
    }
}

pub fn symbol_kind(k: ide::SymbolKind) -> lsp::SymbolKind {
    match k {
        ide::SymbolKind::Graph | ide::SymbolKind::NestedGraph => lsp::SymbolKind::FUNCTION,
        ide::SymbolKind::Weight => lsp::SymbolKind::FIELD,
        ide::SymbolKind::Section => lsp::SymbolKind::NAMESPACE,
        ide::SymbolKind::Actor => lsp::SymbolKind::OBJECT,
    }
}

#[allow(deprecated)]
pub fn document_symbol(snap: &Snap, s: &ide::Symbol) -> lsp::DocumentSymbol {
    lsp::DocumentSymbol {
        name: s.name.clone(),
        detail: s.detail.clone(),
        kind: symbol_kind(s.kind),
        tags: None,
        deprecated: None,
        range: snap.range(s.range),
        selection_range: snap.range(s.selection_range),
        children: (!s.children.is_empty()).then(|| {
            s.children
                .iter()
                .map(|c| document_symbol(snap, c))
                .collect()
        }),
    }
}

/// Semantic tokens, delta-encoded, with columns in the negotiated encoding.
pub fn semantic_tokens(snap: &Snap, tokens: &[ide::SemanticToken]) -> Vec<lsp::SemanticToken> {
    let mut out = Vec::with_capacity(tokens.len());
    let (mut last_line, mut last_col) = (0u32, 0u32);
    // Tokens come in order: positions by stepping, not a search each.
    let mut cursor = snap.index().cursor(snap.text(), snap.unit);
    // Hundreds of thousands in a large file: an edit must not wait.
    let mut check = ide::cancellation_check(&snap.db);
    for t in tokens {
        check();
        let start = cursor.line_col(t.range.start());
        let end = cursor.line_col(t.range.end());
        let start = lsp::Position::new(start.line, start.col);
        let end = lsp::Position::new(end.line, end.col);
        let length = if end.line == start.line {
            end.character - start.character
        } else {
            // Tokens never span lines, but be safe: to the end of the first line.
            let line_end = snap
                .text()
                .get(usize::from(t.range.start())..)
                .and_then(|s| s.find('\n'))
                .map_or(t.range.end(), |i| {
                    t.range.start() + TextSize::from(i as u32)
                });
            snap.position(line_end).character - start.character
        };
        let delta_line = start.line - last_line;
        let delta_start = if delta_line == 0 {
            start.character - last_col
        } else {
            start.character
        };
        out.push(lsp::SemanticToken {
            delta_line,
            delta_start,
            length,
            token_type: t.kind as u32,
            token_modifiers_bitset: t.modifiers,
        });
        last_line = start.line;
        last_col = start.character;
    }
    out
}

pub fn legend() -> lsp::SemanticTokensLegend {
    lsp::SemanticTokensLegend {
        token_types: ide::TOKEN_KINDS
            .iter()
            .map(|k| lsp::SemanticTokenType::new(k))
            .collect(),
        token_modifiers: ide::TOKEN_MODIFIERS
            .iter()
            .map(|m| lsp::SemanticTokenModifier::new(m))
            .collect(),
    }
}

/// The path of a `file:` URI.
pub fn uri_path(uri: &lsp::Uri) -> Option<std::path::PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
            if let Ok(b) = u8::from_str_radix(hex, 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    let path = String::from_utf8(out).ok()?;
    // `file:///c:/...` on Windows.
    let path = match path.as_bytes() {
        [b'/', _, b':', ..] if cfg!(windows) => path[1..].to_string(),
        _ => path,
    };
    Some(std::path::PathBuf::from(path))
}

/// The `file:` URI of a path.
pub fn path_uri(path: &std::path::Path) -> Option<lsp::Uri> {
    let text = path.to_str()?;
    let mut out = String::from("file://");
    if !text.starts_with('/') {
        out.push('/');
    }
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' | b':' => {
                out.push(b as char)
            }
            b'\\' => out.push('/'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out.parse().ok()
}
