//! The `LanguageServer` implementation.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use db::{File, RootDb};
use serde_json::Value as Json;
use syntax::{ColumnUnit, TextEdit as SyntaxEdit, TextRange};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types as lsp;
use tower_lsp_server::{Client, LanguageServer};

use crate::convert::{self, Snap};
use crate::outbox::Outbox;
use crate::publish::{self, DiagnosticsCache};

pub(crate) struct Doc {
    pub uri: lsp::Uri,
    pub file: File,
    pub version: i32,
}

pub(crate) struct State {
    pub db: RootDb,
    pub docs: HashMap<String, Doc>,
    pub unit: ColumnUnit,
}

/// The server: shared state, and the client to talk back to.
pub struct Backend {
    pub(crate) client: Client,
    pub(crate) state: Arc<Mutex<State>>,
    /// Serialises publishing, so a stale version is never sent after a newer one.
    published: Arc<tokio::sync::Mutex<HashMap<String, i32>>>,
    /// Set while a `mirdsl/run` is executing.
    pub(crate) running: Arc<AtomicBool>,
    /// Where pre-serialised messages (diagnostics) go.
    outbox: Outbox,
    cache: Arc<DiagnosticsCache>,
}

/// The LSP "request failed" code.
pub(crate) fn failed(message: impl Into<String>) -> Error {
    Error {
        code: ErrorCode::ServerError(-32803),
        message: message.into().into(),
        data: None,
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".into()
    }
}

impl Backend {
    pub fn new(client: Client, outbox: Outbox) -> Backend {
        Backend {
            client,
            state: Arc::new(Mutex::new(State {
                db: RootDb::new(),
                docs: HashMap::new(),
                unit: ColumnUnit::Utf16,
            })),
            published: Arc::new(tokio::sync::Mutex::new(HashMap::new())),
            running: Arc::new(AtomicBool::new(false)),
            outbox,
            cache: Arc::new(DiagnosticsCache::default()),
        }
    }

    pub(crate) fn snapshot(&self, uri: &lsp::Uri) -> Result<Snap> {
        let st = self.state.lock().unwrap();
        let doc = st
            .docs
            .get(uri.as_str())
            .ok_or_else(|| Error::invalid_params(format!("`{}` is not open", uri.as_str())))?;
        Ok(Snap {
            db: st.db.clone(),
            file: doc.file,
            uri: doc.uri.clone(),
            unit: st.unit,
        })
    }

    /// Runs `f` on a snapshot in a blocking thread: cancellation by a newer
    /// edit answers `ContentModified`; a panic is logged and answered with an
    /// internal error.
    pub(crate) async fn with_snapshot<T, F>(&self, uri: &lsp::Uri, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Snap) -> Result<T> + Send + 'static,
    {
        let snap = self.snapshot(uri)?;
        let joined = tokio::task::spawn_blocking(move || {
            let result = std::panic::catch_unwind(AssertUnwindSafe(|| f(&snap)));
            drop(snap);
            result
        })
        .await;
        match joined {
            Ok(Ok(result)) => result,
            Ok(Err(payload)) if payload.is::<salsa::Cancelled>() => Err(Error::content_modified()),
            Ok(Err(payload)) => {
                let message = panic_message(&*payload);
                self.client
                    .log_message(
                        lsp::MessageType::ERROR,
                        format!("mirdsl: a request panicked: {message}"),
                    )
                    .await;
                Err(Error {
                    code: ErrorCode::InternalError,
                    message: format!("internal error: {message}").into(),
                    data: None,
                })
            }
            Err(e) => Err(Error {
                code: ErrorCode::InternalError,
                message: format!("internal error: {e}").into(),
                data: None,
            }),
        }
    }

    /// Computes and publishes the diagnostics of `uri` at `version`, unless a
    /// newer version supersedes it first.
    fn schedule_diagnostics(&self, uri: lsp::Uri) {
        // The snapshot and its version under one lock: an edit between them
        // would wait for this snapshot while holding the lock.
        let (snap, version) = {
            let st = self.state.lock().unwrap();
            let Some(doc) = st.docs.get(uri.as_str()) else {
                return;
            };
            let snap = Snap {
                db: st.db.clone(),
                file: doc.file,
                uri: doc.uri.clone(),
                unit: st.unit,
            };
            (snap, doc.version)
        };
        // The snapshot goes straight to a blocking thread: a database handle
        // must never wait in an async task queue, or an edit (which waits for
        // every other handle to go) could wait on a task that cannot run.
        let cache = self.cache.clone();
        let computing = tokio::task::spawn_blocking(move || {
            let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
                publish::message(&snap, version, &cache)
            }));
            drop(snap);
            result
        });
        let client = self.client.clone();
        let state = self.state.clone();
        let published = self.published.clone();
        let outbox = self.outbox.clone();
        tokio::spawn(async move {
            let message = match computing.await {
                Ok(Ok(message)) => message,
                Ok(Err(payload)) if payload.is::<salsa::Cancelled>() => return,
                Ok(Err(payload)) => {
                    client
                        .log_message(
                            lsp::MessageType::ERROR,
                            format!(
                                "mirdsl: computing diagnostics panicked: {}",
                                panic_message(&*payload)
                            ),
                        )
                        .await;
                    return;
                }
                Err(_) => return,
            };
            let mut last = published.lock().await;
            let current = state
                .lock()
                .unwrap()
                .docs
                .get(uri.as_str())
                .map(|d| d.version);
            if current != Some(version) {
                return;
            }
            last.insert(uri.as_str().to_string(), version);
            outbox.send_message(&message);
        });
    }

    /// `mirdsl/debug/panic`: panics inside a request (to test that the server survives).
    pub async fn panic_request(&self, params: Json) -> Result<Json> {
        let uri = uri_param(&params)?;
        self.with_snapshot(&uri, |_| -> Result<Json> {
            panic!("deliberate panic for testing")
        })
        .await
    }
}

pub(crate) fn uri_param(params: &Json) -> Result<lsp::Uri> {
    let s = params
        .get("uri")
        .and_then(Json::as_str)
        .ok_or_else(|| Error::invalid_params("missing `uri`"))?;
    s.parse()
        .map_err(|_| Error::invalid_params(format!("bad uri `{s}`")))
}

fn column_unit(params: &lsp::InitializeParams) -> ColumnUnit {
    let offered = params
        .capabilities
        .general
        .as_ref()
        .and_then(|g| g.position_encodings.as_ref());
    match offered {
        Some(list) if list.contains(&lsp::PositionEncodingKind::UTF8) => ColumnUnit::Utf8,
        _ => ColumnUnit::Utf16,
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: lsp::InitializeParams) -> Result<lsp::InitializeResult> {
        let unit = column_unit(&params);
        self.state.lock().unwrap().unit = unit;
        let encoding = match unit {
            ColumnUnit::Utf8 => lsp::PositionEncodingKind::UTF8,
            _ => lsp::PositionEncodingKind::UTF16,
        };
        let capabilities = lsp::ServerCapabilities {
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
                        full: Some(lsp::SemanticTokensFullOptions::Bool(true)),
                        ..Default::default()
                    },
                ),
            ),
            folding_range_provider: Some(lsp::FoldingRangeProviderCapability::Simple(true)),
            document_formatting_provider: Some(lsp::OneOf::Left(true)),
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
            ..Default::default()
        };
        Ok(lsp::InitializeResult {
            capabilities,
            server_info: Some(lsp::ServerInfo {
                name: "mirdsl".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            offset_encoding: None,
        })
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: lsp::DidOpenTextDocumentParams) {
        let doc = params.text_document;
        {
            let mut st = self.state.lock().unwrap();
            let key = doc.uri.as_str().to_string();
            let file = match st.docs.get(&key) {
                Some(d) => {
                    let file = d.file;
                    st.db.set_text(file, &doc.text);
                    file
                }
                None => st.db.new_file(&doc.text),
            };
            st.docs.insert(
                key,
                Doc {
                    uri: doc.uri.clone(),
                    file,
                    version: doc.version,
                },
            );
        }
        self.schedule_diagnostics(doc.uri);
    }

    async fn did_change(&self, params: lsp::DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        {
            let mut st = self.state.lock().unwrap();
            let unit = st.unit;
            let Some(doc) = st.docs.get(uri.as_str()) else {
                return;
            };
            let file = doc.file;
            st.db.edit_file(file, params.content_changes, |text, index, change| {
                match change.range {
                    Some(range) => {
                        let start = convert::offset(text, index, range.start, unit);
                        let end = convert::offset(text, index, range.end, unit);
                        SyntaxEdit {
                            delete: TextRange::new(start.min(end), start.max(end)),
                            insert: change.text,
                        }
                    }
                    None => db::diff_edit(text, &change.text),
                }
            });
            if let Some(doc) = st.docs.get_mut(uri.as_str()) {
                doc.version = params.text_document.version;
            }
        }
        self.schedule_diagnostics(uri);
    }

    async fn did_close(&self, params: lsp::DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        self.state.lock().unwrap().docs.remove(uri.as_str());
        self.cache.forget(uri.as_str());
        let _guard = self.published.lock().await;
        self.client.publish_diagnostics(uri, Vec::new(), None).await;
    }

    async fn hover(&self, params: lsp::HoverParams) -> Result<Option<lsp::Hover>> {
        let pos = params.text_document_position_params;
        self.with_snapshot(&pos.text_document.uri, move |s| {
            let offset = s.offset(pos.position);
            Ok(s.analysis().hover(offset).map(|h| lsp::Hover {
                contents: lsp::HoverContents::Markup(lsp::MarkupContent {
                    kind: lsp::MarkupKind::Markdown,
                    value: h.markdown,
                }),
                range: Some(s.range(h.range)),
            }))
        })
        .await
    }

    async fn goto_definition(
        &self,
        params: lsp::GotoDefinitionParams,
    ) -> Result<Option<lsp::GotoDefinitionResponse>> {
        let pos = params.text_document_position_params;
        self.with_snapshot(&pos.text_document.uri, move |s| {
            let offset = s.offset(pos.position);
            Ok(s.analysis()
                .goto_definition(offset)
                .map(|nav| lsp::GotoDefinitionResponse::Scalar(s.location(nav.focus_range))))
        })
        .await
    }

    async fn references(&self, params: lsp::ReferenceParams) -> Result<Option<Vec<lsp::Location>>> {
        let pos = params.text_document_position;
        let include = params.context.include_declaration;
        self.with_snapshot(&pos.text_document.uri, move |s| {
            let offset = s.offset(pos.position);
            let refs = s.analysis().references(offset, include);
            Ok(Some(refs.into_iter().map(|r| s.location(r)).collect()))
        })
        .await
    }

    async fn document_highlight(
        &self,
        params: lsp::DocumentHighlightParams,
    ) -> Result<Option<Vec<lsp::DocumentHighlight>>> {
        let pos = params.text_document_position_params;
        self.with_snapshot(&pos.text_document.uri, move |s| {
            let offset = s.offset(pos.position);
            let hs = s.analysis().highlight(offset);
            Ok(Some(
                hs.into_iter()
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
        })
        .await
    }

    async fn prepare_rename(
        &self,
        params: lsp::TextDocumentPositionParams,
    ) -> Result<Option<lsp::PrepareRenameResponse>> {
        self.with_snapshot(&params.text_document.uri, move |s| {
            let offset = s.offset(params.position);
            match s.analysis().prepare_rename(offset) {
                Ok((range, text)) => Ok(Some(lsp::PrepareRenameResponse::RangeWithPlaceholder {
                    range: s.range(range),
                    placeholder: text,
                })),
                Err(message) => Err(failed(message)),
            }
        })
        .await
    }

    async fn rename(&self, params: lsp::RenameParams) -> Result<Option<lsp::WorkspaceEdit>> {
        let pos = params.text_document_position;
        let new_name = params.new_name;
        self.with_snapshot(&pos.text_document.uri, move |s| {
            let offset = s.offset(pos.position);
            match s.analysis().rename(offset, &new_name) {
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
        })
        .await
    }

    async fn completion(
        &self,
        params: lsp::CompletionParams,
    ) -> Result<Option<lsp::CompletionResponse>> {
        let pos = params.text_document_position;
        self.with_snapshot(&pos.text_document.uri, move |s| {
            let offset = s.offset(pos.position);
            let items: Vec<lsp::CompletionItem> = s
                .analysis()
                .completions(offset)
                .iter()
                .map(|c| convert::completion(s, c))
                .collect();
            Ok(Some(lsp::CompletionResponse::Array(items)))
        })
        .await
    }

    async fn signature_help(
        &self,
        params: lsp::SignatureHelpParams,
    ) -> Result<Option<lsp::SignatureHelp>> {
        let pos = params.text_document_position_params;
        self.with_snapshot(&pos.text_document.uri, move |s| {
            let offset = s.offset(pos.position);
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
        })
        .await
    }

    async fn document_symbol(
        &self,
        params: lsp::DocumentSymbolParams,
    ) -> Result<Option<lsp::DocumentSymbolResponse>> {
        self.with_snapshot(&params.text_document.uri, move |s| {
            let symbols = s.analysis().document_symbols();
            Ok(Some(lsp::DocumentSymbolResponse::Nested(
                symbols
                    .iter()
                    .map(|x| convert::document_symbol(s, x))
                    .collect(),
            )))
        })
        .await
    }

    #[allow(deprecated)]
    async fn symbol(
        &self,
        params: lsp::WorkspaceSymbolParams,
    ) -> Result<Option<lsp::WorkspaceSymbolResponse>> {
        let (db, docs, unit) = {
            let st = self.state.lock().unwrap();
            let docs: Vec<(lsp::Uri, File)> =
                st.docs.values().map(|d| (d.uri.clone(), d.file)).collect();
            (st.db.clone(), docs, st.unit)
        };
        let query = params.query;
        let joined = tokio::task::spawn_blocking(move || {
            let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
                let files: Vec<File> = docs.iter().map(|(_, f)| *f).collect();
                let found = ide::workspace_symbols(&db, &files, &query);
                found
                    .into_iter()
                    .filter_map(|sym| {
                        let (uri, file) = docs.iter().find(|(_, f)| *f == sym.file)?;
                        let snap = Snap {
                            db: db.clone(),
                            file: *file,
                            uri: uri.clone(),
                            unit,
                        };
                        Some(lsp::SymbolInformation {
                            name: sym.name.clone(),
                            kind: convert::symbol_kind(sym.kind),
                            tags: None,
                            deprecated: None,
                            location: snap.location(sym.range),
                            container_name: sym.container.clone(),
                        })
                    })
                    .collect::<Vec<_>>()
            }));
            drop(db);
            result
        })
        .await;
        match joined {
            Ok(Ok(list)) => Ok(Some(lsp::WorkspaceSymbolResponse::Flat(list))),
            Ok(Err(p)) if p.is::<salsa::Cancelled>() => Err(Error::content_modified()),
            _ => Err(Error::internal_error()),
        }
    }

    async fn semantic_tokens_full(
        &self,
        params: lsp::SemanticTokensParams,
    ) -> Result<Option<lsp::SemanticTokensResult>> {
        self.with_snapshot(&params.text_document.uri, move |s| {
            let tokens = s.analysis().semantic_tokens(None);
            Ok(Some(lsp::SemanticTokensResult::Tokens(
                lsp::SemanticTokens {
                    result_id: None,
                    data: convert::semantic_tokens(s, &tokens),
                },
            )))
        })
        .await
    }

    async fn semantic_tokens_range(
        &self,
        params: lsp::SemanticTokensRangeParams,
    ) -> Result<Option<lsp::SemanticTokensRangeResult>> {
        self.with_snapshot(&params.text_document.uri, move |s| {
            let range = s.text_range(params.range);
            let tokens = s.analysis().semantic_tokens(Some(range));
            Ok(Some(lsp::SemanticTokensRangeResult::Tokens(
                lsp::SemanticTokens {
                    result_id: None,
                    data: convert::semantic_tokens(s, &tokens),
                },
            )))
        })
        .await
    }

    async fn inlay_hint(
        &self,
        params: lsp::InlayHintParams,
    ) -> Result<Option<Vec<lsp::InlayHint>>> {
        self.with_snapshot(&params.text_document.uri, move |s| {
            let range = s.text_range(params.range);
            let hints = s.analysis().inlay_hints(Some(range));
            Ok(Some(
                hints
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
        })
        .await
    }

    async fn folding_range(
        &self,
        params: lsp::FoldingRangeParams,
    ) -> Result<Option<Vec<lsp::FoldingRange>>> {
        self.with_snapshot(&params.text_document.uri, move |s| {
            Ok(Some(
                s.analysis()
                    .folding_ranges()
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
        })
        .await
    }

    async fn formatting(
        &self,
        params: lsp::DocumentFormattingParams,
    ) -> Result<Option<Vec<lsp::TextEdit>>> {
        self.with_snapshot(&params.text_document.uri, move |s| {
            match s.analysis().format() {
                Ok(edits) => Ok(Some(edits.iter().map(|e| s.edit(e)).collect())),
                Err(message) => Err(failed(message)),
            }
        })
        .await
    }

    async fn code_action(
        &self,
        params: lsp::CodeActionParams,
    ) -> Result<Option<lsp::CodeActionResponse>> {
        self.with_snapshot(&params.text_document.uri, move |s| {
            let range = s.text_range(params.range);
            let actions = s.analysis().code_actions(range);
            Ok(Some(
                actions
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
        })
        .await
    }

    async fn code_lens(&self, params: lsp::CodeLensParams) -> Result<Option<Vec<lsp::CodeLens>>> {
        self.with_snapshot(&params.text_document.uri, move |s| {
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
        })
        .await
    }
}
