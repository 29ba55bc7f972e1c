//! The main loop: one thread owns the database and the open documents and
//! takes messages in arrival order; requests run on the [`Pool`].
//!
//! * Notifications that change documents (`didOpen`, `didChange`, `didClose`)
//!   are applied at once, in order, so every later request sees them. A
//!   `didChange` whose version is not newer than the document's is refused
//!   (logged) rather than applied.
//! * A request runs on a snapshot taken when it arrives. A newer edit cancels
//!   it (salsa unwinds its queries): `ContentModified`. `$/cancelRequest`
//!   cancels it too (salsa's local cancellation): `RequestCancelled`. A panic
//!   is logged and answered with an internal error. Every request is answered
//!   exactly once.
//! * Diagnostics: pushed (`publishDiagnostics` with the version) after each
//!   change, unless the client pulls them (`textDocument/diagnostic`, when it
//!   says it can); both come from the same serialiser.

use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use db::salsa::{self, CancellationToken, Database};
use db::{File, RootDb};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value as Json};
use syntax::{ColumnUnit, TextRange};

use crate::capabilities::{capabilities, column_unit};
use crate::convert::{self, Snap};
use crate::handlers;
use crate::pool::{Pool, Task};
use crate::publish::DiagnosticsCache;
use crate::runner::Runner;
use crate::transport::{code, Incoming, Message, Outbox, RequestId};
use crate::{lsp, Options};

/// A request's failure: a JSON-RPC error code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, RpcError>;

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
        }
    }

    pub fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(code::INVALID_PARAMS, message)
    }
}

/// The LSP "request failed" error (a request that cannot be done as asked).
pub fn failed(message: impl Into<String>) -> RpcError {
    RpcError::new(code::REQUEST_FAILED, message)
}

pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".into()
    }
}

struct Doc {
    uri: lsp::Uri,
    file: File,
    version: i32,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Uninitialized,
    Running,
    ShuttingDown,
}

/// A request in flight.
pub(crate) struct Pending {
    token: Option<CancellationToken>,
    pub cancelled: bool,
}

/// What the main loop shares with the tasks.
pub(crate) struct Shared {
    pub outbox: Outbox,
    pending: Mutex<HashMap<RequestId, Pending>>,
    /// The version of each open document (diagnostics of another are dropped).
    versions: Mutex<HashMap<String, i32>>,
    pub diagnostics: DiagnosticsCache,
    /// The last semantic tokens sent for each document, for deltas.
    pub tokens: Mutex<HashMap<String, (String, Vec<u32>)>>,
    pub counter: AtomicU64,
    pub runner: Runner,
}

impl Shared {
    /// Answers a request (unless it was answered already): the result, or
    /// `RequestCancelled` if it was cancelled meanwhile.
    pub fn finish<T: Serialize>(&self, id: &RequestId, result: Result<T>) {
        let Some(pending) = self.pending.lock().unwrap().remove(id) else {
            return;
        };
        match result {
            _ if pending.cancelled => {
                self.outbox
                    .respond_error(Some(id.clone()), code::REQUEST_CANCELLED, "cancelled")
            }
            Ok(r) => self.outbox.respond(id, &r),
            Err(e) => self
                .outbox
                .respond_error(Some(id.clone()), e.code, &e.message),
        }
    }

    pub fn is_cancelled(&self, id: &RequestId) -> bool {
        self.pending
            .lock()
            .unwrap()
            .get(id)
            .is_none_or(|p| p.cancelled)
    }

    pub fn next_id(&self) -> u64 {
        self.counter.fetch_add(1, Ordering::Relaxed)
    }
}

/// Runs `f`, turning salsa's cancellation into `ContentModified` (a newer
/// edit) or `RequestCancelled` (`$/cancelRequest`), and any other panic into
/// an internal error (logged).
pub(crate) fn guarded<T>(outbox: &Outbox, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => match payload.downcast_ref::<salsa::Cancelled>() {
            Some(salsa::Cancelled::Local) => {
                Err(RpcError::new(code::REQUEST_CANCELLED, "cancelled"))
            }
            Some(_) => Err(RpcError::new(
                code::CONTENT_MODIFIED,
                "the document changed; ask again",
            )),
            None => {
                let message = panic_message(&*payload);
                outbox.log(1, &format!("mirdsl: a request panicked: {message}"));
                Err(RpcError::new(
                    code::INTERNAL_ERROR,
                    format!("internal error: {message}"),
                ))
            }
        },
    }
}

pub(crate) struct Server {
    shared: Arc<Shared>,
    pool: Pool,
    db: RootDb,
    docs: HashMap<String, Doc>,
    /// Every file opened so far (reused when a document is opened again).
    files: HashMap<String, File>,
    unit: ColumnUnit,
    phase: Phase,
    /// The client pulls diagnostics (`textDocument/diagnostic`).
    pull: bool,
    /// Commands the client carries out itself (its code lenses' commands).
    client_commands: HashSet<String>,
    show_document: bool,
    /// The workspace folders (their `.mir` files join the database).
    folders: Vec<std::path::PathBuf>,
}

/// At most this many files of the workspace folders are read at start.
const MAX_WORKSPACE_FILES: usize = 5000;

/// The `.mir` files below `dir` (hidden folders, `target` and
/// `node_modules` left out), sorted.
fn collect_mir_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>, depth: usize) {
    if depth > 16 || out.len() >= MAX_WORKSPACE_FILES {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<std::path::PathBuf> =
        entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" && name != "node_modules" {
                collect_mir_files(&path, out, depth + 1);
            }
        } else if name.ends_with(".mir") {
            out.push(path);
        }
    }
}

/// The commands the server carries out (`workspace/executeCommand`), which
/// are also its code lenses' commands.
pub const COMMANDS: &[&str] = &["mirdsl.run", "mirdsl.showGraph", "mirdsl.showGradient"];

impl Server {
    pub fn new(outbox: Outbox, options: &Options) -> Server {
        let threads = options.threads.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map_or(2, |n| n.get())
                .clamp(2, 4)
        });
        Server {
            shared: Arc::new(Shared {
                runner: Runner::new(
                    options.run_worker.clone(),
                    options
                        .max_memory
                        .unwrap_or_else(tensor::limits::default_max_memory),
                    outbox.clone(),
                ),
                outbox,
                pending: Mutex::new(HashMap::new()),
                versions: Mutex::new(HashMap::new()),
                diagnostics: DiagnosticsCache::default(),
                tokens: Mutex::new(HashMap::new()),
                counter: AtomicU64::new(1),
            }),
            pool: Pool::new(threads, crate::STACK_SIZE),
            db: RootDb::new(),
            docs: HashMap::new(),
            files: HashMap::new(),
            unit: ColumnUnit::Utf16,
            phase: Phase::Uninitialized,
            pull: false,
            client_commands: HashSet::new(),
            show_document: false,
            folders: Vec::new(),
        }
    }

    /// Handles one incoming frame; `Some(code)` ends the server with that exit code.
    pub fn handle(&mut self, incoming: Incoming) -> Option<i32> {
        let outbox = self.shared.outbox.clone();
        match incoming {
            Incoming::Invalid { id, code, message } => {
                outbox.respond_error(id, code, &message);
                None
            }
            Incoming::Message(Message::Response { .. }) => None,
            Incoming::Message(Message::Notification { method, params }) => {
                if method == "exit" {
                    return Some(if self.phase == Phase::ShuttingDown {
                        0
                    } else {
                        1
                    });
                }
                if self.phase == Phase::Running {
                    self.notification(&method, params);
                }
                None
            }
            Incoming::Message(Message::Request { id, method, params }) => {
                match (self.phase, method.as_str()) {
                    (Phase::Uninitialized, "initialize") => self.initialize(id, params),
                    (Phase::Uninitialized, _) => outbox.respond_error(
                        Some(id),
                        code::SERVER_NOT_INITIALIZED,
                        "the server is not initialized yet",
                    ),
                    (Phase::ShuttingDown, _) => outbox.respond_error(
                        Some(id),
                        code::INVALID_REQUEST,
                        "the server is shutting down",
                    ),
                    (Phase::Running, "initialize") => outbox.respond_error(
                        Some(id),
                        code::INVALID_REQUEST,
                        "the server is initialized already",
                    ),
                    (Phase::Running, "shutdown") => {
                        self.phase = Phase::ShuttingDown;
                        self.shared.runner.cancel_all();
                        outbox.respond(&id, &Json::Null);
                    }
                    (Phase::Running, _) => self.request(id, &method, params),
                }
                None
            }
        }
    }

    /// Stops the workers and the runs.
    pub fn stop(&self) {
        self.pool.close();
        self.shared.runner.cancel_all();
    }

    fn initialize(&mut self, id: RequestId, params: Json) {
        let params: lsp::InitializeParams = match serde_json::from_value(params) {
            Ok(p) => p,
            Err(e) => {
                self.shared.outbox.respond_error(
                    Some(id),
                    code::INVALID_PARAMS,
                    &format!("bad `initialize` params: {e}"),
                );
                return;
            }
        };
        self.unit = column_unit(&params);
        #[allow(deprecated)]
        let mut folders: Vec<std::path::PathBuf> = params
            .workspace_folders
            .iter()
            .flatten()
            .filter_map(|f| convert::uri_path(&f.uri))
            .collect();
        #[allow(deprecated)]
        if folders.is_empty() {
            folders.extend(params.root_uri.as_ref().and_then(convert::uri_path));
        }
        self.folders = folders;

        let options = params.initialization_options.clone().unwrap_or_default();
        // A client that pulls diagnostics pulls them when the server asks
        // it to (a file's diagnostics change when a file it imports does):
        // one that cannot be asked gets them pushed.
        let can_refresh = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.diagnostics.as_ref())
            .and_then(|d| d.refresh_support)
            .unwrap_or(false);
        let can_pull = can_refresh
            && params
                .capabilities
                .text_document
                .as_ref()
                .is_some_and(|t| t.diagnostic.is_some());
        self.pull = match options.get("diagnostics").and_then(Json::as_str) {
            Some("push") => false,
            Some("pull") => true,
            _ => can_pull,
        };
        self.client_commands = options
            .get("clientCommands")
            .and_then(Json::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|c| c.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        self.show_document = params
            .capabilities
            .window
            .as_ref()
            .and_then(|w| w.show_document.as_ref())
            .is_some_and(|s| s.support);
        let commands: Vec<String> = COMMANDS
            .iter()
            .filter(|c| !self.client_commands.contains(**c))
            .map(|c| c.to_string())
            .collect();
        let result = lsp::InitializeResult {
            capabilities: capabilities(self.unit, self.pull, commands),
            server_info: Some(lsp::ServerInfo {
                name: "mirdsl".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            offset_encoding: None,
        };
        self.phase = Phase::Running;
        self.shared.outbox.respond(&id, &result);
    }

    fn notification(&mut self, method: &str, params: Json) {
        use lsp::notification::{
            DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, Notification,
        };
        match method {
            DidOpenTextDocument::METHOD => {
                if let Some(p) = self.params::<lsp::DidOpenTextDocumentParams>(method, params) {
                    self.did_open(p);
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Some(p) = self.params::<lsp::DidChangeTextDocumentParams>(method, params) {
                    self.did_change(p);
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Some(p) = self.params::<lsp::DidCloseTextDocumentParams>(method, params) {
                    self.did_close(p);
                }
            }
            "initialized" => self.initialized(),
            "workspace/didChangeWatchedFiles" => {
                if let Some(p) = self.params::<lsp::DidChangeWatchedFilesParams>(method, params) {
                    self.did_change_watched_files(p);
                }
            }
            "$/cancelRequest" => {
                if let Some(id) = params.get("id").cloned() {
                    self.cancel(&RequestId(id));
                }
            }
            // Nothing to do for the rest (`initialized`, `didSave`, `$/setTrace`, ...).
            _ => {}
        }
    }

    fn params<P: DeserializeOwned>(&self, method: &str, params: Json) -> Option<P> {
        match serde_json::from_value(params) {
            Ok(p) => Some(p),
            Err(e) => {
                self.shared.outbox.log(
                    1,
                    &format!("mirdsl: ignored `{method}` with bad params: {e}"),
                );
                None
            }
        }
    }

    fn cancel(&self, id: &RequestId) {
        if let Some(p) = self.shared.pending.lock().unwrap().get_mut(id) {
            p.cancelled = true;
            if let Some(t) = &p.token {
                t.cancel();
            }
        }
        self.shared.runner.cancel(id);
    }

    /// After `initialized`: the `.mir` files of the workspace folders join
    /// the database (workspace symbols cover them, and files that import
    /// them find them).
    fn initialized(&mut self) {
        self.before_write();
        let mut files = Vec::new();
        for folder in self.folders.clone() {
            collect_mir_files(&folder, &mut files, 0);
        }
        files.truncate(MAX_WORKSPACE_FILES);
        for path in files {
            if self.db.file_at(&path).is_none() {
                self.db.open(&path, None);
            }
        }
        // No file watcher is registered with the client: a `**/*.mir`
        // watcher registered this way disturbed VS Code (its "Revert File"
        // no longer reverted, in the end-to-end test); clients that watch
        // files send `workspace/didChangeWatchedFiles` on their own.
    }

    /// Registers a request as in flight (with the token that cancels its
    /// snapshot's queries).
    fn pend(&self, id: &RequestId, token: Option<CancellationToken>) {
        self.shared.pending.lock().unwrap().insert(
            id.clone(),
            Pending {
                token,
                cancelled: false,
            },
        );
    }

    /// Runs a request about one document on the pool.
    fn on_document<P, R>(
        &mut self,
        id: RequestId,
        params: P,
        uri: &lsp::Uri,
        f: impl FnOnce(&Snap, &Shared, P) -> Result<R> + Send + 'static,
    ) where
        P: Send + 'static,
        R: Serialize + 'static,
    {
        let Some(doc) = self.docs.get(uri.as_str()) else {
            self.shared.outbox.respond_error(
                Some(id),
                code::INVALID_PARAMS,
                &format!("`{}` is not open", uri.as_str()),
            );
            return;
        };
        let (file, doc_uri, unit) = (doc.file, doc.uri.clone(), self.unit);
        // The token of the handle the task will use.
        let snapshot = self.db.clone();
        self.pend(&id, Some(snapshot.cancellation_token()));
        let shared = self.shared.clone();
        self.pool.submit(Task {
            diagnostics_of: None,
            snapshot: Some(snapshot),
            work: Box::new(move |db| {
                let result = match db {
                    None => Err(RpcError::new(
                        code::CONTENT_MODIFIED,
                        "the document changed; ask again",
                    )),
                    Some(_) if shared.is_cancelled(&id) => {
                        Err(RpcError::new(code::REQUEST_CANCELLED, "cancelled"))
                    }
                    Some(db) => {
                        let snap = Snap {
                            db,
                            file,
                            uri: doc_uri,
                            unit,
                        };
                        let r = guarded(&shared.outbox, || f(&snap, &shared, params));
                        drop(snap);
                        r
                    }
                };
                shared.finish(&id, result);
            }),
        });
    }

    /// Runs a request about every open document on the pool.
    /// Runs `f` on the open documents (and, with `all_files`, on every
    /// other file of the workspace: the `.mir` files of its folders and the
    /// files they import, with version 0).
    fn on_workspace<R>(
        &mut self,
        id: RequestId,
        all_files: bool,
        f: impl FnOnce(&[(Snap, i32)], &Shared, &RequestId) -> Result<R> + Send + 'static,
    ) where
        R: Serialize + 'static,
    {
        let docs: Vec<(File, lsp::Uri, i32)> = {
            let mut docs: Vec<&Doc> = self.docs.values().collect();
            docs.sort_by(|a, b| a.uri.as_str().cmp(b.uri.as_str()));
            let mut out: Vec<(File, lsp::Uri, i32)> = docs
                .into_iter()
                .map(|d| (d.file, d.uri.clone(), d.version))
                .collect();
            if all_files {
                let open: HashSet<File> = out.iter().map(|d| d.0).collect();
                for (path, file) in self.db.files() {
                    if open.contains(&file) {
                        continue;
                    }
                    if let Some(uri) = convert::path_uri(&path) {
                        out.push((file, uri, 0));
                    }
                }
            }
            out
        };
        let unit = self.unit;
        let db = self.db.clone();
        self.pend(&id, Some(db.cancellation_token()));
        let shared = self.shared.clone();
        self.pool.submit(Task {
            diagnostics_of: None,
            snapshot: Some(db),
            work: Box::new(move |db| {
                let result = match db {
                    None => Err(RpcError::new(
                        code::CONTENT_MODIFIED,
                        "a document changed; ask again",
                    )),
                    Some(_) if shared.is_cancelled(&id) => {
                        Err(RpcError::new(code::REQUEST_CANCELLED, "cancelled"))
                    }
                    Some(db) => {
                        // A handle per document (`$/cancelRequest` is checked
                        // between documents; a newer edit cancels them all).
                        let snaps: Vec<(Snap, i32)> = docs
                            .into_iter()
                            .map(|(file, uri, version)| {
                                let db = db.clone();
                                (
                                    Snap {
                                        db,
                                        file,
                                        uri,
                                        unit,
                                    },
                                    version,
                                )
                            })
                            .collect();
                        drop(db);
                        let r = guarded(&shared.outbox, || f(&snaps, &shared, &id));
                        drop(snaps);
                        r
                    }
                };
                shared.finish(&id, result);
            }),
        });
    }

    fn request(&mut self, id: RequestId, method: &str, params: Json) {
        use lsp::request::*;
        macro_rules! document {
            ($req:ty, $handler:path, |$p:ident| $uri:expr) => {{
                match serde_json::from_value::<<$req as Request>::Params>(params) {
                    Ok($p) => {
                        let uri = $uri.clone();
                        self.on_document(id, $p, &uri, |s, shared, p| $handler(s, shared, p))
                    }
                    Err(e) => self.shared.outbox.respond_error(
                        Some(id),
                        code::INVALID_PARAMS,
                        &format!("bad params for `{method}`: {e}"),
                    ),
                }
            }};
        }
        match method {
            HoverRequest::METHOD => document!(HoverRequest, handlers::hover, |p| p
                .text_document_position_params
                .text_document
                .uri),
            GotoDefinition::METHOD => {
                document!(GotoDefinition, handlers::goto_definition, |p| p
                    .text_document_position_params
                    .text_document
                    .uri)
            }
            References::METHOD => {
                document!(References, handlers::references, |p| p
                    .text_document_position
                    .text_document
                    .uri)
            }
            DocumentHighlightRequest::METHOD => {
                document!(
                    DocumentHighlightRequest,
                    handlers::document_highlight,
                    |p| p.text_document_position_params.text_document.uri
                )
            }
            PrepareRenameRequest::METHOD => {
                document!(PrepareRenameRequest, handlers::prepare_rename, |p| p
                    .text_document
                    .uri)
            }
            Rename::METHOD => document!(Rename, handlers::rename, |p| p
                .text_document_position
                .text_document
                .uri),
            Completion::METHOD => document!(Completion, handlers::completion, |p| p
                .text_document_position
                .text_document
                .uri),
            SignatureHelpRequest::METHOD => {
                document!(SignatureHelpRequest, handlers::signature_help, |p| p
                    .text_document_position_params
                    .text_document
                    .uri)
            }
            DocumentSymbolRequest::METHOD => {
                document!(DocumentSymbolRequest, handlers::document_symbol, |p| p
                    .text_document
                    .uri)
            }
            SemanticTokensFullRequest::METHOD => {
                document!(
                    SemanticTokensFullRequest,
                    handlers::semantic_tokens_full,
                    |p| p.text_document.uri
                )
            }
            SemanticTokensFullDeltaRequest::METHOD => {
                document!(
                    SemanticTokensFullDeltaRequest,
                    handlers::semantic_tokens_delta,
                    |p| p.text_document.uri
                )
            }
            SemanticTokensRangeRequest::METHOD => {
                document!(
                    SemanticTokensRangeRequest,
                    handlers::semantic_tokens_range,
                    |p| p.text_document.uri
                )
            }
            InlayHintRequest::METHOD => document!(InlayHintRequest, handlers::inlay_hint, |p| p
                .text_document
                .uri),
            FoldingRangeRequest::METHOD => {
                document!(FoldingRangeRequest, handlers::folding_range, |p| p
                    .text_document
                    .uri)
            }
            Formatting::METHOD => {
                document!(Formatting, handlers::formatting, |p| p.text_document.uri)
            }
            RangeFormatting::METHOD => {
                document!(RangeFormatting, handlers::range_formatting, |p| p
                    .text_document
                    .uri)
            }
            CodeActionRequest::METHOD => {
                document!(CodeActionRequest, handlers::code_action, |p| p
                    .text_document
                    .uri)
            }
            CodeLensRequest::METHOD => document!(CodeLensRequest, handlers::code_lens, |p| p
                .text_document
                .uri),
            SelectionRangeRequest::METHOD => {
                document!(SelectionRangeRequest, handlers::selection_range, |p| p
                    .text_document
                    .uri)
            }
            CallHierarchyPrepare::METHOD => {
                document!(
                    CallHierarchyPrepare,
                    handlers::prepare_call_hierarchy,
                    |p| p.text_document_position_params.text_document.uri
                )
            }
            CallHierarchyIncomingCalls::METHOD => {
                document!(CallHierarchyIncomingCalls, handlers::incoming_calls, |p| p
                    .item
                    .uri)
            }
            CallHierarchyOutgoingCalls::METHOD => {
                document!(CallHierarchyOutgoingCalls, handlers::outgoing_calls, |p| p
                    .item
                    .uri)
            }
            LinkedEditingRange::METHOD => {
                document!(LinkedEditingRange, handlers::linked_editing_range, |p| p
                    .text_document_position_params
                    .text_document
                    .uri)
            }
            DocumentDiagnosticRequest::METHOD => {
                document!(
                    DocumentDiagnosticRequest,
                    handlers::document_diagnostic,
                    |p| p.text_document.uri
                )
            }
            WorkspaceDiagnosticRequest::METHOD => {
                match serde_json::from_value::<lsp::WorkspaceDiagnosticParams>(params) {
                    Ok(p) => self.on_workspace(id, false, move |snaps, shared, id| {
                        handlers::workspace_diagnostic(snaps, shared, id, p)
                    }),
                    Err(e) => self.shared.outbox.respond_error(
                        Some(id),
                        code::INVALID_PARAMS,
                        &format!("bad params for `{method}`: {e}"),
                    ),
                }
            }
            WorkspaceSymbolRequest::METHOD => {
                match serde_json::from_value::<lsp::WorkspaceSymbolParams>(params) {
                    Ok(p) => self.on_workspace(id, true, move |snaps, _, _| {
                        handlers::workspace_symbol(snaps, p)
                    }),
                    Err(e) => self.shared.outbox.respond_error(
                        Some(id),
                        code::INVALID_PARAMS,
                        &format!("bad params for `{method}`: {e}"),
                    ),
                }
            }
            ExecuteCommand::METHOD => self.execute_command(id, params),
            "mirdsl/graph" => self.custom(id, params, crate::custom::graph),
            "mirdsl/ir" => self.custom(id, params, crate::custom::ir),
            "mirdsl/dump/compare" => self.custom(id, params, crate::dump::compare),
            "mirdsl/dump/follow" => self.custom(id, params, crate::dump::follow),
            "mirdsl/dump/source" => self.custom(id, params, crate::dump::source),
            "mirdsl/run" => self.run(id, params, false),
            "mirdsl/debug/panic" => self.custom(id, params, |_, _| -> Result<Json> {
                panic!("deliberate panic for testing")
            }),
            "mirdsl/debug/wait" => self.custom(id, params, crate::custom::wait),
            _ => self.shared.outbox.respond_error(
                Some(id),
                code::METHOD_NOT_FOUND,
                &format!("unknown method `{method}`"),
            ),
        }
    }

    /// A custom request `{uri, ...}` about one document.
    fn custom(&mut self, id: RequestId, params: Json, f: fn(&Snap, Json) -> Result<Json>) {
        match uri_param(&params) {
            Ok(uri) => self.on_document(id, params, &uri, move |s, _, p| f(s, p)),
            Err(e) => self
                .shared
                .outbox
                .respond_error(Some(id), e.code, &e.message),
        }
    }

    /// `mirdsl/run` (and the `mirdsl.run` command): the document's text goes
    /// to the runner; the run is answered by it.
    fn run(&mut self, id: RequestId, params: Json, command: bool) {
        let job = uri_param(&params).and_then(|uri| {
            let doc = self.docs.get(uri.as_str()).ok_or_else(|| {
                RpcError::invalid_params(format!("`{}` is not open", uri.as_str()))
            })?;
            let text = doc.file.text(&self.db).to_string();
            crate::runner::Job::new(&uri, text, &params, self.shared.runner.max_memory)
        });
        match job {
            Ok(job) => {
                self.pend(&id, None);
                self.shared
                    .runner
                    .submit(id, job, self.shared.clone(), command);
            }
            Err(e) => self
                .shared
                .outbox
                .respond_error(Some(id), e.code, &e.message),
        }
    }

    fn execute_command(&mut self, id: RequestId, params: Json) {
        let p: lsp::ExecuteCommandParams = match serde_json::from_value(params) {
            Ok(p) => p,
            Err(e) => {
                self.shared.outbox.respond_error(
                    Some(id),
                    code::INVALID_PARAMS,
                    &format!("bad params for `workspace/executeCommand`: {e}"),
                );
                return;
            }
        };
        let unknown = |command: &str| {
            format!(
                "unknown command `{command}` (the commands are {})",
                COMMANDS.join(", ")
            )
        };
        // The command is checked first: a client sending a command we do not
        // serve should hear that, not what our commands' arguments are.
        if !COMMANDS.contains(&p.command.as_str()) {
            let message = unknown(&p.command);
            self.shared
                .outbox
                .respond_error(Some(id), code::INVALID_PARAMS, &message);
            return;
        }
        let (uri, graph) = match p.arguments.as_slice() {
            [Json::String(uri), Json::String(graph), ..] => (uri.clone(), graph.clone()),
            _ => {
                self.shared.outbox.respond_error(
                    Some(id),
                    code::INVALID_PARAMS,
                    "the arguments are [document URI, graph name]",
                );
                return;
            }
        };
        let extra = p.arguments.get(2).cloned().unwrap_or(json!({}));
        let show = self.show_document;
        match p.command.as_str() {
            "mirdsl.run" => {
                let mut params = json!({"uri": uri, "graph": graph});
                if let Json::Object(m) = extra {
                    params.as_object_mut().unwrap().extend(m);
                }
                self.run(id, params, true)
            }
            "mirdsl.showGraph" | "mirdsl.showGradient" => {
                let gradient = p.command == "mirdsl.showGradient";
                let params = json!({"uri": uri, "graph": graph, "kind": "gradient"});
                let parsed: lsp::Uri = match uri.parse() {
                    Ok(u) => u,
                    Err(_) => {
                        self.shared.outbox.respond_error(
                            Some(id),
                            code::INVALID_PARAMS,
                            &format!("bad uri `{uri}`"),
                        );
                        return;
                    }
                };
                self.on_document(id, params, &parsed, move |s, shared, p| {
                    crate::custom::show(s, shared, p, gradient, show)
                })
            }
            other => {
                self.shared
                    .outbox
                    .respond_error(Some(id), code::INVALID_PARAMS, &unknown(other))
            }
        }
    }
}

pub(crate) fn uri_param(params: &Json) -> Result<lsp::Uri> {
    let s = params
        .get("uri")
        .and_then(Json::as_str)
        .ok_or_else(|| RpcError::invalid_params("missing `uri`"))?;
    s.parse()
        .map_err(|_| RpcError::invalid_params(format!("bad uri `{s}`")))
}

mod sync;
