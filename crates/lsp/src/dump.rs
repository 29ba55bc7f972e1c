//! Requests on MindSpore compile dumps (`*.ir`, language `mindspore-ir`):
//! answered from `ide::dump` over the document's text, never from the DSL's
//! analysis (a dump is not DSL text), and without diagnostics.

use crate::convert::{self, Snap};
use crate::lsp;

/// The dump, when the snapshot's document is one.
pub fn of(s: &Snap) -> Option<ide::dump::Dump> {
    ide::dump::is_dump(s.uri.as_str()).then(|| ide::dump::parse_dump(s.text()))
}

/// Whether the snapshot's document is a dump (nothing parsed).
pub fn is(s: &Snap) -> bool {
    ide::dump::is_dump(s.uri.as_str())
}

pub fn hover(s: &Snap, d: &ide::dump::Dump, p: lsp::HoverParams) -> Option<lsp::Hover> {
    let offset = s.offset(p.text_document_position_params.position);
    let path = convert::uri_path(&s.uri);
    let dir = path.as_deref().and_then(|p| p.parent());
    ide::dump::dump_hover(d, offset, dir).map(|h| lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: h.markdown,
        }),
        range: Some(s.range(h.range)),
    })
}

pub fn definition(
    s: &Snap,
    d: &ide::dump::Dump,
    p: lsp::GotoDefinitionParams,
) -> Option<lsp::GotoDefinitionResponse> {
    let offset = s.offset(p.text_document_position_params.position);
    ide::dump::dump_definition(d, offset)
        .map(|r| lsp::GotoDefinitionResponse::Scalar(s.location(r)))
}

pub fn references(s: &Snap, d: &ide::dump::Dump, p: lsp::ReferenceParams) -> Vec<lsp::Location> {
    let offset = s.offset(p.text_document_position.position);
    ide::dump::dump_references(d, offset, p.context.include_declaration)
        .into_iter()
        .map(|r| s.location(r))
        .collect()
}

pub fn symbols(s: &Snap, d: &ide::dump::Dump) -> lsp::DocumentSymbolResponse {
    lsp::DocumentSymbolResponse::Nested(
        ide::dump::dump_symbols(d)
            .iter()
            .map(|x| convert::document_symbol(s, x))
            .collect(),
    )
}

pub fn folds(s: &Snap, d: &ide::dump::Dump) -> Vec<ide::Fold> {
    ide::dump::dump_folds(s.text(), d)
}
