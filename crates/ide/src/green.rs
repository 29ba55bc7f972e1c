//! The green walk of [`syntax::green`], for passes over every token of a
//! file that hold a database snapshot.

use rowan::GreenNodeData;

pub(crate) use syntax::green::{first_token_kind, last_token, Visit};

/// A step counter for long passes that hold a database snapshot: every
/// 4,096 steps (some 0.1 ms of work; a check reads an atomic) it asks `db`
/// whether an edit is waiting, and salsa then unwinds the pass. An edit
/// cannot apply while a snapshot is held, so a pass over a large file must
/// not make it wait.
pub fn cancellation_check(db: &dyn salsa::Database) -> impl FnMut() + '_ {
    let mut steps = 0u32;
    move || {
        steps = steps.wrapping_add(1);
        if steps.is_multiple_of(4096) {
            db.unwind_if_revision_cancelled();
        }
    }
}

/// [`syntax::green::walk`], with a [`cancellation_check`] per visit.
pub(crate) fn walk<'a>(
    db: &dyn salsa::Database,
    root: &'a GreenNodeData,
    mut f: impl FnMut(Visit<'a>) -> bool,
) {
    let mut check = cancellation_check(db);
    syntax::green::walk(root, move |visit| {
        check();
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
