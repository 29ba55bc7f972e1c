//! Document synchronisation: opening, changing and closing documents,
//! files changed on disk, and publishing each document's diagnostics for
//! its version (and those of the open documents that import it).

use super::*;

impl Server {
    /// Before every write: queued tasks let go of their snapshots.
    pub(super) fn before_write(&mut self) {
        self.pool.invalidate();
    }

    pub(super) fn did_open(&mut self, p: lsp::DidOpenTextDocumentParams) {
        let doc = p.text_document;
        let key = doc.uri.as_str().to_string();
        self.before_write();
        let file = match self.files.get(&key) {
            Some(&file) => {
                self.db.set_text(file, &doc.text);
                file
            }
            None => {
                // A file with a path joins the workspace (its imports are
                // read from disk, and files that import it find it).
                let file = match convert::uri_path(&doc.uri) {
                    Some(path) => self.db.open(&path, Some(&doc.text)),
                    None => self.db.new_file(&doc.text),
                };
                self.files.insert(key.clone(), file);
                file
            }
        };
        self.shared.tokens.lock().unwrap().remove(&key);
        self.docs.insert(
            key.clone(),
            Doc {
                uri: doc.uri,
                file,
                version: doc.version,
            },
        );
        self.changed(&key);
    }

    pub(super) fn did_change(&mut self, p: lsp::DidChangeTextDocumentParams) {
        let key = p.text_document.uri.as_str().to_string();
        let Some(doc) = self.docs.get(&key) else {
            return;
        };
        let version = p.text_document.version;
        if version <= doc.version {
            self.shared.outbox.log(
                2,
                &format!(
                    "mirdsl: ignored a change of {key} to version {version}: it has version {} already (versions only increase)",
                    doc.version
                ),
            );
            return;
        }
        let (file, unit) = (doc.file, self.unit);
        self.before_write();
        self.db.edit_file(
            file,
            p.content_changes,
            |text, index, change| match change.range {
                Some(range) => {
                    let start = convert::offset(text, index, range.start, unit);
                    let end = convert::offset(text, index, range.end, unit);
                    syntax::TextEdit {
                        delete: TextRange::new(start.min(end), start.max(end)),
                        insert: change.text,
                    }
                }
                None => db::diff_edit(text, &change.text),
            },
        );
        if let Some(doc) = self.docs.get_mut(&key) {
            doc.version = version;
        }
        self.changed(&key);
    }

    /// Files changed on disk: those not open in the editor are read again,
    /// imports are resolved again (files may have appeared or gone), and
    /// the open files that import them are checked again.
    pub(super) fn did_change_watched_files(&mut self, p: lsp::DidChangeWatchedFilesParams) {
        self.before_write();
        for event in &p.changes {
            if self.docs.contains_key(event.uri.as_str()) {
                continue;
            }
            if let Some(path) = convert::uri_path(&event.uri) {
                if event.typ == lsp::FileChangeType::DELETED {
                    self.db.forget(&path);
                    self.files.remove(event.uri.as_str());
                } else {
                    self.db.reload(&path);
                }
            }
        }
        self.db.resolve_all_imports();
        // Every open file that imports something: an import may now find
        // (or miss) a file, or read a file that changed.
        let keys: Vec<String> = self
            .docs
            .iter()
            .filter(|(_, d)| !d.file.imports(&self.db).is_empty())
            .map(|(k, _)| k.clone())
            .collect();
        if self.pull {
            if !keys.is_empty() {
                self.refresh_diagnostics();
            }
        } else {
            for k in keys {
                self.publish(&k);
            }
        }
    }

    pub(super) fn did_close(&mut self, p: lsp::DidCloseTextDocumentParams) {
        let key = p.text_document.uri.as_str().to_string();
        let Some(doc) = self.docs.remove(&key) else {
            return;
        };
        self.shared.tokens.lock().unwrap().remove(&key);
        self.shared.diagnostics.forget(&key);
        // Let go of the text and what was computed from it; a file on disk
        // goes back to its text there (files that import it read it).
        self.before_write();
        let on_disk = convert::uri_path(&doc.uri).and_then(|p| self.db.reload(&p));
        if on_disk.is_none() {
            self.db.set_text(doc.file, "");
        }
        self.publish_dependents(&[doc.file], None);
        let mut versions = self.shared.versions.lock().unwrap();
        versions.remove(&key);
        if !self.pull {
            self.shared.outbox.notify(
                "textDocument/publishDiagnostics",
                &lsp::PublishDiagnosticsParams {
                    uri: doc.uri,
                    diagnostics: Vec::new(),
                    version: None,
                },
            );
        }
    }

    /// After a document changed: its version is current, its diagnostics are
    /// computed and pushed (unless the client pulls them).
    pub(super) fn changed(&mut self, key: &str) {
        let doc = &self.docs[key];
        let version = doc.version;
        self.shared
            .versions
            .lock()
            .unwrap()
            .insert(key.to_string(), version);
        let file = doc.file;
        if !self.pull {
            self.publish(key);
        }
        // The open files that import this one, directly or not.
        self.publish_dependents(&[file], Some(key));
    }

    /// Pushes the diagnostics of the open documents other than `except`
    /// that import one of `files` (directly or not).
    pub(super) fn publish_dependents(&mut self, files: &[File], except: Option<&str>) {
        let mut keys: Vec<String> = self
            .docs
            .iter()
            .filter(|(k, d)| {
                Some(k.as_str()) != except
                    && !d.file.imports(&self.db).is_empty()
                    && db::closure(&self.db, d.file)
                        .iter()
                        .skip(1)
                        .any(|f| files.contains(f))
            })
            .map(|(k, _)| k.clone())
            .collect();
        keys.sort();
        if self.pull {
            // The client pulls: ask it to pull again.
            if !keys.is_empty() {
                self.refresh_diagnostics();
            }
            return;
        }
        for k in keys {
            self.publish(&k);
        }
    }

    /// `workspace/diagnostic/refresh`: a client that pulls diagnostics pulls
    /// them again (those of files whose imports changed).
    pub(super) fn refresh_diagnostics(&mut self) {
        let id = format!("mirdsl/refresh/{}", self.shared.next_id());
        self.shared
            .outbox
            .request(&id, "workspace/diagnostic/refresh", &Json::Null);
    }

    /// Computes and pushes a document's diagnostics (for its version).
    pub(super) fn publish(&mut self, key: &str) {
        let doc = &self.docs[key];
        let version = doc.version;
        let (file, doc_uri, unit) = (doc.file, doc.uri.clone(), self.unit);
        let shared = self.shared.clone();
        let uri = key.to_string();
        self.pool.submit(Task {
            diagnostics_of: Some(key.to_string()),
            snapshot: Some(self.db.clone()),
            work: Box::new(move |db| {
                let Some(db) = db else { return };
                let snap = Snap {
                    db,
                    file,
                    uri: doc_uri,
                    unit,
                };
                let message = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    crate::publish::message(&snap, version, &shared.diagnostics)
                }));
                drop(snap);
                match message {
                    Ok(body) => {
                        // Under the lock: a newer version's diagnostics are
                        // never overtaken by these.
                        let versions = shared.versions.lock().unwrap();
                        if versions.get(&uri) == Some(&version) {
                            shared.outbox.send_message(body);
                        }
                    }
                    Err(payload) if payload.is::<salsa::Cancelled>() => {}
                    Err(payload) => shared.outbox.log(
                        1,
                        &format!(
                            "mirdsl: computing diagnostics panicked: {}",
                            panic_message(&*payload)
                        ),
                    ),
                }
            }),
        });
    }
}
