//! What the server tells the client it can do (`initialize`'s answer), and
//! the position encoding it picks from what the client offers.

use syntax::ColumnUnit;

use crate::{convert, lsp};

/// UTF-8 if the client offers it, else UTF-32 if it offers that, else UTF-16.
pub(crate) fn column_unit(params: &lsp::InitializeParams) -> ColumnUnit {
    let offered = params
        .capabilities
        .general
        .as_ref()
        .and_then(|g| g.position_encodings.as_ref());
    match offered {
        Some(list) if list.contains(&lsp::PositionEncodingKind::UTF8) => ColumnUnit::Utf8,
        Some(list) if list.contains(&lsp::PositionEncodingKind::UTF32) => ColumnUnit::Char,
        _ => ColumnUnit::Utf16,
    }
}

pub(crate) fn capabilities(
    unit: ColumnUnit,
    pull: bool,
    commands: Vec<String>,
) -> lsp::ServerCapabilities {
    let encoding = match unit {
        ColumnUnit::Utf8 => lsp::PositionEncodingKind::UTF8,
        ColumnUnit::Char => lsp::PositionEncodingKind::UTF32,
        ColumnUnit::Utf16 => lsp::PositionEncodingKind::UTF16,
    };
    lsp::ServerCapabilities {
        position_encoding: Some(encoding),
        text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(
            lsp::TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(lsp::TextDocumentSyncKind::INCREMENTAL),
                ..Default::default()
            },
        )),
        hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
        completion_provider: Some(lsp::CompletionOptions {
            trigger_characters: Some(vec!["(".into(), ",".into(), ":".into(), ".".into()]),
            ..Default::default()
        }),
        signature_help_provider: Some(lsp::SignatureHelpOptions {
            trigger_characters: Some(vec!["(".into(), ",".into()]),
            retrigger_characters: Some(vec!["=".into()]),
            ..Default::default()
        }),
        definition_provider: Some(lsp::OneOf::Left(true)),
        references_provider: Some(lsp::OneOf::Left(true)),
        document_highlight_provider: Some(lsp::OneOf::Left(true)),
        rename_provider: Some(lsp::OneOf::Right(lsp::RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        document_symbol_provider: Some(lsp::OneOf::Left(true)),
        workspace_symbol_provider: Some(lsp::OneOf::Left(true)),
        semantic_tokens_provider: Some(
            lsp::SemanticTokensServerCapabilities::SemanticTokensOptions(
                lsp::SemanticTokensOptions {
                    legend: convert::legend(),
                    range: Some(true),
                    full: Some(lsp::SemanticTokensFullOptions::Delta { delta: Some(true) }),
                    ..Default::default()
                },
            ),
        ),
        folding_range_provider: Some(lsp::FoldingRangeProviderCapability::Simple(true)),
        document_formatting_provider: Some(lsp::OneOf::Left(true)),
        document_range_formatting_provider: Some(lsp::OneOf::Left(true)),
        code_action_provider: Some(lsp::CodeActionProviderCapability::Options(
            lsp::CodeActionOptions {
                code_action_kinds: Some(vec![
                    lsp::CodeActionKind::QUICKFIX,
                    lsp::CodeActionKind::REFACTOR_REWRITE,
                ]),
                ..Default::default()
            },
        )),
        code_lens_provider: Some(lsp::CodeLensOptions {
            resolve_provider: Some(false),
        }),
        inlay_hint_provider: Some(lsp::OneOf::Left(true)),
        selection_range_provider: Some(lsp::SelectionRangeProviderCapability::Simple(true)),
        call_hierarchy_provider: Some(lsp::CallHierarchyServerCapability::Simple(true)),
        linked_editing_range_provider: Some(lsp::LinkedEditingRangeServerCapabilities::Simple(
            true,
        )),
        execute_command_provider: Some(lsp::ExecuteCommandOptions {
            commands,
            work_done_progress_options: Default::default(),
        }),
        diagnostic_provider: pull.then(|| {
            lsp::DiagnosticServerCapabilities::Options(lsp::DiagnosticOptions {
                identifier: Some("mirdsl".into()),
                // `import`: an edit of one file changes the diagnostics of the
                // files that import it.
                inter_file_dependencies: true,
                workspace_diagnostics: true,
                work_done_progress_options: Default::default(),
            })
        }),
        ..Default::default()
    }
}
