//! The green walk of [`syntax::green`], for passes over every token of a
//! file that hold a database snapshot.

use rowan::GreenNodeData;

pub(crate) use syntax::green::{first_token_kind, last_token, Visit};

/// How many steps of a long pass run between two checks for a waiting edit
/// (a check reads an atomic; 4,096 tokens take some 0.1 ms).
pub(crate) const CHECK_EVERY: u32 = 4096;

/// [`syntax::green::walk`], asking `db` every few thousand visits whether an
/// edit is waiting (salsa then unwinds the request): an edit cannot apply
/// while a request holds a snapshot, so a walk over a large file must not
/// make it wait.
pub(crate) fn walk<'a>(
    db: &dyn salsa::Database,
    root: &'a GreenNodeData,
    mut f: impl FnMut(Visit<'a>) -> bool,
) {
    let mut visits = 0u32;
    syntax::green::walk(root, move |visit| {
        visits = visits.wrapping_add(1);
        if visits.is_multiple_of(CHECK_EVERY) {
            db.unwind_if_revision_cancelled();
        }
        f(visit)
    })
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use salsa::Cancelled;

    use super::walk;

    /// A walk over a large file holds a database snapshot, and an edit
    /// cannot apply until every snapshot is gone: the walk must notice the
    /// waiting edit and unwind, not run to its end.
    #[test]
    fn a_long_walk_gives_way_to_an_edit() {
        let mut db = db::RootDb::new();
        let text: String = (0..2000)
            .map(|i| format!("graph g{i}(x: f32[3]) {{\n  return Exp(x)\n}}\n"))
            .collect();
        let file = db.new_file(&text);
        let snapshot = db.clone();
        let (started, wait_started) = mpsc::channel();
        let worker = std::thread::spawn(move || {
            let result = Cancelled::catch(|| {
                let root = db::parse(&snapshot, file).syntax_node();
                let mut visits = 0usize;
                walk(&snapshot, root.green(), |_| {
                    if visits == 0 {
                        started.send(()).unwrap();
                        // The edit comes meanwhile.
                        std::thread::sleep(Duration::from_millis(100));
                    }
                    visits += 1;
                    true
                });
                visits
            });
            drop(snapshot);
            result
        });
        wait_started.recv().unwrap();
        // Blocks until the walk has unwound and dropped its snapshot.
        db.set_text(file, "graph small() { return 1 }\n");
        let result = worker.join().unwrap();
        assert!(
            matches!(result, Err(Cancelled::PendingWrite)),
            "the walk ran to its end: {result:?}"
        );
    }
}
