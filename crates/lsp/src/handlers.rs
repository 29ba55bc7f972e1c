//! Request handlers: LSP params in, LSP results out, through the `ide`
//! crate's features. Each runs on a snapshot in a worker thread.

use std::collections::HashMap;

use serde_json::Value as Json;

use crate::convert::{self, Snap};
use crate::dump;
use crate::lsp;
use crate::server::{failed, Result, Shared};

pub fn hover(s: &Snap, _: &Shared, p: lsp::HoverParams) -> Result<Option<lsp::Hover>> {
    if let Some(d) = dump::of(s) {
        return Ok(dump::hover(s, &d, p));
    }
    let offset = s.offset(p.text_document_position_params.position);
    Ok(s.analysis().hover(offset).map(|h| lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: h.markdown,
        }),
        range: Some(s.range(h.range)),
    }))
}

pub fn goto_definition(
    s: &Snap,
    _: &Shared,
    p: lsp::GotoDefinitionParams,
) -> Result<Option<lsp::GotoDefinitionResponse>> {
    if let Some(d) = dump::of(s) {
        return Ok(dump::definition(s, &d, p));
    }
    let offset = s.offset(p.text_document_position_params.position);
    let Some(nav) = s.analysis().goto_definition(offset) else {
        return Ok(None);
    };
    Ok(match nav.file {
        // An imported item: in the file that defines it.
        Some(file) if file != s.file => s
            .other(file)
            .map(|o| lsp::GotoDefinitionResponse::Scalar(o.location(nav.focus_range))),
        _ => Some(lsp::GotoDefinitionResponse::Scalar(
            s.location(nav.focus_range),
        )),
    })
}

pub fn references(
    s: &Snap,
    _: &Shared,
    p: lsp::ReferenceParams,
) -> Result<Option<Vec<lsp::Location>>> {
    if let Some(d) = dump::of(s) {
        return Ok(Some(dump::references(s, &d, p)));
    }
    let offset = s.offset(p.text_document_position.position);
    // A top-level item: in every file of the workspace that sees it.
    if s.file.path(&s.db).is_some() {
        let files: Vec<db::File> = s.db.files().into_iter().map(|(_, f)| f).collect();
        let across = s
            .analysis()
            .references_across(offset, p.context.include_declaration, &files);
        if let Some(found) = across {
            return Ok(Some(
                found
                    .into_iter()
                    .filter_map(|(file, r)| {
                        if file == s.file {
                            Some(s.location(r))
                        } else {
                            s.other(file).map(|o| o.location(r))
                        }
                    })
                    .collect(),
            ));
        }
    }
    let refs = s
        .analysis()
        .references(offset, p.context.include_declaration);
    Ok(Some(refs.into_iter().map(|r| s.location(r)).collect()))
}

pub fn document_highlight(
    s: &Snap,
    _: &Shared,
    p: lsp::DocumentHighlightParams,
) -> Result<Option<Vec<lsp::DocumentHighlight>>> {
    let offset = s.offset(p.text_document_position_params.position);
    Ok(Some(
        s.analysis()
            .highlight(offset)
            .into_iter()
            .map(|h| lsp::DocumentHighlight {
                range: s.range(h.range),
                kind: Some(if h.is_def {
                    lsp::DocumentHighlightKind::WRITE
                } else {
                    lsp::DocumentHighlightKind::READ
                }),
            })
            .collect(),
    ))
}

pub fn prepare_rename(
    s: &Snap,
    _: &Shared,
    p: lsp::TextDocumentPositionParams,
) -> Result<Option<lsp::PrepareRenameResponse>> {
    let offset = s.offset(p.position);
    match s.analysis().prepare_rename(offset) {
        Ok((range, text)) => Ok(Some(lsp::PrepareRenameResponse::RangeWithPlaceholder {
            range: s.range(range),
            placeholder: text,
        })),
        Err(message) => Err(failed(message)),
    }
}

pub fn rename(s: &Snap, _: &Shared, p: lsp::RenameParams) -> Result<Option<lsp::WorkspaceEdit>> {
    let offset = s.offset(p.text_document_position.position);
    if s.file.path(&s.db).is_some() {
        let files: Vec<db::File> = s.db.files().into_iter().map(|(_, f)| f).collect();
        match s.analysis().rename_across(offset, &p.new_name, &files) {
            Some(Ok(edits)) => {
                let mut changes: HashMap<lsp::Uri, Vec<lsp::TextEdit>> = HashMap::new();
                for (file, e) in edits {
                    let (uri, edit) = if file == s.file {
                        (s.uri.clone(), s.edit(&e))
                    } else {
                        let Some(o) = s.other(file) else { continue };
                        (o.uri.clone(), o.edit(&e))
                    };
                    changes.entry(uri).or_default().push(edit);
                }
                return Ok(Some(lsp::WorkspaceEdit {
                    changes: Some(changes),
                    ..Default::default()
                }));
            }
            Some(Err(message)) => return Err(failed(message)),
            None => {}
        }
    }
    match s.analysis().rename(offset, &p.new_name) {
        Ok(edits) => {
            let mut changes = HashMap::new();
            changes.insert(s.uri.clone(), edits.iter().map(|e| s.edit(e)).collect());
            Ok(Some(lsp::WorkspaceEdit {
                changes: Some(changes),
                ..Default::default()
            }))
        }
        Err(message) => Err(failed(message)),
    }
}

pub fn completion(
    s: &Snap,
    _: &Shared,
    p: lsp::CompletionParams,
) -> Result<Option<lsp::CompletionResponse>> {
    if dump::is(s) {
        return Ok(None);
    }
    let offset = s.offset(p.text_document_position.position);
    let list = s.analysis().completion_list(offset);
    // Ranked already: the sort text keeps the order in the client.
    let items: Vec<lsp::CompletionItem> = list
        .items
        .iter()
        .enumerate()
        .map(|(i, c)| lsp::CompletionItem {
            sort_text: Some(format!("{i:04}")),
            ..convert::completion(s, c)
        })
        .collect();
    Ok(Some(lsp::CompletionResponse::List(lsp::CompletionList {
        is_incomplete: list.is_incomplete,
        items,
    })))
}

pub fn signature_help(
    s: &Snap,
    _: &Shared,
    p: lsp::SignatureHelpParams,
) -> Result<Option<lsp::SignatureHelp>> {
    let offset = s.offset(p.text_document_position_params.position);
    Ok(s.analysis().signature_help(offset).map(|h| {
        let label_utf16 = |byte: usize| h.label[..byte].encode_utf16().count() as u32;
        let parameters = h
            .parameters
            .iter()
            .map(|(r, doc)| lsp::ParameterInformation {
                label: lsp::ParameterLabel::LabelOffsets([
                    label_utf16(r.start),
                    label_utf16(r.end),
                ]),
                documentation: doc.clone().map(lsp::Documentation::String),
            })
            .collect();
        lsp::SignatureHelp {
            signatures: vec![lsp::SignatureInformation {
                label: h.label.clone(),
                documentation: h.documentation.clone().map(|d| {
                    lsp::Documentation::MarkupContent(lsp::MarkupContent {
                        kind: lsp::MarkupKind::Markdown,
                        value: d,
                    })
                }),
                parameters: Some(parameters),
                active_parameter: h.active_parameter.map(|a| a as u32),
            }],
            active_signature: Some(0),
            active_parameter: h.active_parameter.map(|a| a as u32),
        }
    }))
}

pub fn document_symbol(
    s: &Snap,
    _: &Shared,
    _: lsp::DocumentSymbolParams,
) -> Result<Option<lsp::DocumentSymbolResponse>> {
    if let Some(d) = dump::of(s) {
        return Ok(Some(dump::symbols(s, &d)));
    }
    let symbols = s.analysis().document_symbols();
    Ok(Some(lsp::DocumentSymbolResponse::Nested(
        symbols
            .iter()
            .map(|x| convert::document_symbol(s, x))
            .collect(),
    )))
}

#[allow(deprecated)]
pub fn workspace_symbol(
    snaps: &[(Snap, i32)],
    p: lsp::WorkspaceSymbolParams,
) -> Result<Option<lsp::WorkspaceSymbolResponse>> {
    let snaps: Vec<&Snap> = snaps.iter().map(|(s, _)| s).collect();
    let Some(first) = snaps.first() else {
        return Ok(Some(lsp::WorkspaceSymbolResponse::Flat(Vec::new())));
    };
    let files: Vec<db::File> = snaps.iter().map(|s| s.file).collect();
    let found = ide::workspace_symbols(&first.db, &files, &p.query);
    Ok(Some(lsp::WorkspaceSymbolResponse::Flat(
        found
            .into_iter()
            .filter_map(|sym| {
                let snap = snaps.iter().find(|s| s.file == sym.file)?;
                Some(lsp::SymbolInformation {
                    name: sym.name.clone(),
                    kind: convert::symbol_kind(sym.kind),
                    tags: None,
                    deprecated: None,
                    location: snap.location(sym.range),
                    container_name: sym.container.clone(),
                })
            })
            .collect(),
    )))
}

fn tokens_result(shared: &Shared, s: &Snap, data: Vec<lsp::SemanticToken>) -> lsp::SemanticTokens {
    let id = shared.next_id().to_string();
    let flat: Vec<u32> = data
        .iter()
        .flat_map(|t| {
            [
                t.delta_line,
                t.delta_start,
                t.length,
                t.token_type,
                t.token_modifiers_bitset,
            ]
        })
        .collect();
    shared
        .tokens
        .lock()
        .unwrap()
        .insert(s.uri.as_str().to_string(), (id.clone(), flat));
    lsp::SemanticTokens {
        result_id: Some(id),
        data,
    }
}

/// The document's semantic tokens (a dump's from the dump), within `range`.
fn tokens_of(s: &Snap, range: Option<syntax::TextRange>) -> Vec<ide::SemanticToken> {
    match dump::of(s) {
        Some(d) => ide::dump::dump_tokens(&d, range),
        None => s.analysis().semantic_tokens(range),
    }
}

pub fn semantic_tokens_full(
    s: &Snap,
    shared: &Shared,
    _: lsp::SemanticTokensParams,
) -> Result<Option<lsp::SemanticTokensResult>> {
    let tokens = tokens_of(s, None);
    let data = convert::semantic_tokens(s, &tokens);
    Ok(Some(lsp::SemanticTokensResult::Tokens(tokens_result(
        shared, s, data,
    ))))
}

pub fn semantic_tokens_range(
    s: &Snap,
    _: &Shared,
    p: lsp::SemanticTokensRangeParams,
) -> Result<Option<lsp::SemanticTokensRangeResult>> {
    let range = s.text_range(p.range);
    let tokens = tokens_of(s, Some(range));
    Ok(Some(lsp::SemanticTokensRangeResult::Tokens(
        lsp::SemanticTokens {
            result_id: None,
            data: convert::semantic_tokens(s, &tokens),
        },
    )))
}

pub fn inlay_hint(
    s: &Snap,
    _: &Shared,
    p: lsp::InlayHintParams,
) -> Result<Option<Vec<lsp::InlayHint>>> {
    if dump::is(s) {
        return Ok(None);
    }
    let range = s.text_range(p.range);
    Ok(Some(
        s.analysis()
            .inlay_hints(Some(range))
            .into_iter()
            .map(|h| lsp::InlayHint {
                position: s.position(h.offset),
                label: lsp::InlayHintLabel::String(h.label),
                kind: Some(lsp::InlayHintKind::TYPE),
                text_edits: None,
                tooltip: None,
                padding_left: None,
                padding_right: None,
                data: None,
            })
            .collect(),
    ))
}

pub fn folding_range(
    s: &Snap,
    _: &Shared,
    _: lsp::FoldingRangeParams,
) -> Result<Option<Vec<lsp::FoldingRange>>> {
    let folds = match dump::of(s) {
        Some(d) => dump::folds(s, &d),
        None => s.analysis().folding_ranges(),
    };
    Ok(Some(
        folds
            .into_iter()
            .map(|f| lsp::FoldingRange {
                start_line: f.start_line,
                end_line: f.end_line,
                kind: Some(match f.kind {
                    ide::FoldKind::Comment => lsp::FoldingRangeKind::Comment,
                    ide::FoldKind::Region => lsp::FoldingRangeKind::Region,
                }),
                ..Default::default()
            })
            .collect(),
    ))
}

pub fn formatting(
    s: &Snap,
    _: &Shared,
    _: lsp::DocumentFormattingParams,
) -> Result<Option<Vec<lsp::TextEdit>>> {
    match s.analysis().format() {
        Ok(edits) => Ok(Some(edits.iter().map(|e| s.edit(e)).collect())),
        Err(message) => Err(failed(message)),
    }
}

pub fn code_action(
    s: &Snap,
    _: &Shared,
    p: lsp::CodeActionParams,
) -> Result<Option<lsp::CodeActionResponse>> {
    let range = s.text_range(p.range);
    let workspace: Vec<db::File> = s.db.files().into_iter().map(|(_, f)| f).collect();
    Ok(Some(
        s.analysis()
            .code_actions(range, &workspace)
            .into_iter()
            .map(|a| {
                let mut changes = HashMap::new();
                changes.insert(s.uri.clone(), a.edits.iter().map(|e| s.edit(e)).collect());
                lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                    title: a.title,
                    kind: Some(match a.kind {
                        ide::CodeActionKind::QuickFix => lsp::CodeActionKind::QUICKFIX,
                        ide::CodeActionKind::RefactorRewrite => {
                            lsp::CodeActionKind::REFACTOR_REWRITE
                        }
                    }),
                    diagnostics: a.diagnostic.map(|d| vec![convert::diagnostic(s, &d)]),
                    edit: Some(lsp::WorkspaceEdit {
                        changes: Some(changes),
                        ..Default::default()
                    }),
                    is_preferred: a.is_preferred.then_some(true),
                    ..Default::default()
                })
            })
            .collect(),
    ))
}

pub fn code_lens(
    s: &Snap,
    _: &Shared,
    _: lsp::CodeLensParams,
) -> Result<Option<Vec<lsp::CodeLens>>> {
    if let Some(d) = dump::of(s) {
        return Ok(Some(dump::code_lenses(s, &d)));
    }
    Ok(Some(
        s.analysis()
            .code_lenses()
            .into_iter()
            .map(|l| lsp::CodeLens {
                range: s.range(l.range),
                command: Some(lsp::Command {
                    title: l.title,
                    command: l.command,
                    arguments: Some(vec![
                        Json::String(s.uri.as_str().to_string()),
                        Json::String(l.graph),
                    ]),
                }),
                data: None,
            })
            .collect(),
    ))
}

pub fn semantic_tokens_delta(
    s: &Snap,
    shared: &Shared,
    p: lsp::SemanticTokensDeltaParams,
) -> Result<Option<lsp::SemanticTokensFullDeltaResult>> {
    let tokens = tokens_of(s, None);
    let data = convert::semantic_tokens(s, &tokens);
    let previous = shared
        .tokens
        .lock()
        .unwrap()
        .get(s.uri.as_str())
        .filter(|(id, _)| *id == p.previous_result_id)
        .map(|(_, old)| old.clone());
    let result = tokens_result(shared, s, data);
    let Some(old) = previous else {
        return Ok(Some(lsp::SemanticTokensFullDeltaResult::Tokens(result)));
    };
    // One edit: the tokens between the common prefix and suffix.
    let new = &result.data;
    let old_n = old.len() / 5;
    let same = |a: usize, b: &lsp::SemanticToken| {
        old[a * 5..a * 5 + 5]
            == [
                b.delta_line,
                b.delta_start,
                b.length,
                b.token_type,
                b.token_modifiers_bitset,
            ]
    };
    let prefix = (0..old_n.min(new.len()))
        .take_while(|&i| same(i, &new[i]))
        .count();
    let suffix = (0..(old_n - prefix).min(new.len() - prefix))
        .take_while(|&i| same(old_n - 1 - i, &new[new.len() - 1 - i]))
        .count();
    let edits = if prefix == old_n && prefix == new.len() {
        Vec::new()
    } else {
        vec![lsp::SemanticTokensEdit {
            start: (prefix * 5) as u32,
            delete_count: ((old_n - prefix - suffix) * 5) as u32,
            data: Some(new[prefix..new.len() - suffix].to_vec()),
        }]
    };
    Ok(Some(lsp::SemanticTokensFullDeltaResult::TokensDelta(
        lsp::SemanticTokensDelta {
            result_id: result.result_id,
            edits,
        },
    )))
}

pub fn range_formatting(
    s: &Snap,
    _: &Shared,
    p: lsp::DocumentRangeFormattingParams,
) -> Result<Option<Vec<lsp::TextEdit>>> {
    let range = s.text_range(p.range);
    match s.analysis().format_range(range) {
        Ok(edits) => Ok(Some(edits.iter().map(|e| s.edit(e)).collect())),
        Err(message) => Err(failed(message)),
    }
}

pub fn selection_range(
    s: &Snap,
    _: &Shared,
    p: lsp::SelectionRangeParams,
) -> Result<Option<Vec<lsp::SelectionRange>>> {
    Ok(Some(
        p.positions
            .iter()
            .map(|&position| {
                let ranges = s.analysis().selection_ranges(s.offset(position));
                let mut out: Option<lsp::SelectionRange> = None;
                for r in ranges.iter().rev() {
                    out = Some(lsp::SelectionRange {
                        range: s.range(*r),
                        parent: out.map(Box::new),
                    });
                }
                out.unwrap_or(lsp::SelectionRange {
                    range: lsp::Range::new(position, position),
                    parent: None,
                })
            })
            .collect(),
    ))
}

fn call_item(s: &Snap, item: &ide::CallItem) -> lsp::CallHierarchyItem {
    lsp::CallHierarchyItem {
        name: item.name.clone(),
        kind: lsp::SymbolKind::FUNCTION,
        tags: None,
        detail: item.detail.clone(),
        uri: s.uri.clone(),
        range: s.range(item.range),
        selection_range: s.range(item.selection_range),
        data: Some(Json::String(item.name.clone())),
    }
}

pub fn prepare_call_hierarchy(
    s: &Snap,
    _: &Shared,
    p: lsp::CallHierarchyPrepareParams,
) -> Result<Option<Vec<lsp::CallHierarchyItem>>> {
    let offset = s.offset(p.text_document_position_params.position);
    Ok(s.analysis()
        .prepare_call_hierarchy(offset)
        .map(|item| vec![call_item(s, &item)]))
}

pub fn incoming_calls(
    s: &Snap,
    _: &Shared,
    p: lsp::CallHierarchyIncomingCallsParams,
) -> Result<Option<Vec<lsp::CallHierarchyIncomingCall>>> {
    Ok(Some(
        s.analysis()
            .incoming_calls(&p.item.name)
            .iter()
            .map(|c| lsp::CallHierarchyIncomingCall {
                from: call_item(s, &c.item),
                from_ranges: c.ranges.iter().map(|r| s.range(*r)).collect(),
            })
            .collect(),
    ))
}

pub fn outgoing_calls(
    s: &Snap,
    _: &Shared,
    p: lsp::CallHierarchyOutgoingCallsParams,
) -> Result<Option<Vec<lsp::CallHierarchyOutgoingCall>>> {
    Ok(Some(
        s.analysis()
            .outgoing_calls(&p.item.name)
            .iter()
            .map(|c| lsp::CallHierarchyOutgoingCall {
                to: call_item(s, &c.item),
                from_ranges: c.ranges.iter().map(|r| s.range(*r)).collect(),
            })
            .collect(),
    ))
}

pub fn linked_editing_range(
    s: &Snap,
    _: &Shared,
    p: lsp::LinkedEditingRangeParams,
) -> Result<Option<lsp::LinkedEditingRanges>> {
    let offset = s.offset(p.text_document_position_params.position);
    Ok(s.analysis()
        .linked_editing_ranges(offset)
        .map(|ranges| lsp::LinkedEditingRanges {
            ranges: ranges.iter().map(|r| s.range(*r)).collect(),
            word_pattern: Some(r"[A-Za-z_%][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*".into()),
        }))
}

/// A document's diagnostics as a pull answer: the same JSON as is
/// published, and an id that is the hash of it (equal ids, equal items).
fn pulled(s: &Snap, shared: &Shared) -> (String, Box<serde_json::value::RawValue>) {
    use std::hash::{Hash, Hasher};
    let mut items = Vec::with_capacity(1 << 12);
    crate::publish::array(s, &shared.diagnostics, &mut items);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    items.hash(&mut h);
    let id = format!("{:016x}", h.finish());
    let raw = serde_json::value::RawValue::from_string(String::from_utf8(items).unwrap())
        .expect("the diagnostics are JSON");
    (id, raw)
}

#[derive(serde::Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Report {
    #[serde(rename_all = "camelCase")]
    Full {
        result_id: String,
        items: Box<serde_json::value::RawValue>,
    },
    #[serde(rename_all = "camelCase")]
    Unchanged { result_id: String },
}

fn report(s: &Snap, shared: &Shared, previous: Option<&str>) -> Report {
    let (result_id, items) = pulled(s, shared);
    if previous == Some(result_id.as_str()) {
        Report::Unchanged { result_id }
    } else {
        Report::Full { result_id, items }
    }
}

pub fn document_diagnostic(
    s: &Snap,
    shared: &Shared,
    p: lsp::DocumentDiagnosticParams,
) -> Result<Report> {
    Ok(report(s, shared, p.previous_result_id.as_deref()))
}

#[derive(serde::Serialize)]
pub struct WorkspaceReport {
    items: Vec<WorkspaceItem>,
}

#[derive(serde::Serialize)]
struct WorkspaceItem {
    uri: String,
    version: Option<i32>,
    #[serde(flatten)]
    report: Report,
}

pub fn workspace_diagnostic(
    snaps: &[(Snap, i32)],
    shared: &Shared,
    id: &crate::transport::RequestId,
    p: lsp::WorkspaceDiagnosticParams,
) -> Result<WorkspaceReport> {
    let previous: HashMap<String, String> = p
        .previous_result_ids
        .into_iter()
        .map(|r| (r.uri.as_str().to_string(), r.value))
        .collect();
    let mut items = Vec::new();
    for (s, version) in snaps {
        if shared.is_cancelled(id) {
            return Err(crate::server::RpcError::new(
                crate::transport::code::REQUEST_CANCELLED,
                "cancelled",
            ));
        }
        let uri = s.uri.as_str().to_string();
        let report = report(s, shared, previous.get(&uri).map(String::as_str));
        items.push(WorkspaceItem {
            uri,
            version: Some(*version),
            report,
        });
    }
    Ok(WorkspaceReport { items })
}
