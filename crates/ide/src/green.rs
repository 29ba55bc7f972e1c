//! A walk over a file's green tree in document order, with offsets and the
//! kinds of each token's parent and grandparent: for passes over every token
//! of a large file, where a cursor per node and token (rowan's
//! `descendants_with_tokens`) costs most of the time.

use rowan::GreenNodeData;
use syntax::{MirLanguage, NodeOrToken, SyntaxKind, TextRange, TextSize};

/// How many steps of a long pass run between two checks for a waiting edit
/// (a check reads an atomic; 4,096 tokens take some 0.1 ms).
pub(crate) const CHECK_EVERY: u32 = 4096;

fn kind(raw: rowan::SyntaxKind) -> SyntaxKind {
    <MirLanguage as rowan::Language>::kind_from_raw(raw)
}

pub(crate) enum Visit<'a> {
    Node {
        node: &'a GreenNodeData,
        kind: SyntaxKind,
        range: TextRange,
    },
    Token {
        kind: SyntaxKind,
        text: &'a str,
        range: TextRange,
        parent: SyntaxKind,
        grandparent: SyntaxKind,
    },
}

/// Visits the nodes and tokens below `root` in order; a node's children are
/// visited when `f` returns true for it (the return value is ignored for
/// tokens). Every few thousand visits it asks `db` whether an edit is waiting
/// (salsa then unwinds the request): an edit cannot apply while a request
/// holds a snapshot, so a walk over a large file must not make it wait.
pub(crate) fn walk<'a>(
    db: &dyn salsa::Database,
    root: &'a GreenNodeData,
    mut f: impl FnMut(Visit<'a>) -> bool,
) {
    let mut visits = 0u32;
    let mut f = move |visit| {
        visits = visits.wrapping_add(1);
        if visits.is_multiple_of(CHECK_EVERY) {
            db.unwind_if_revision_cancelled();
        }
        f(visit)
    };
    let root_kind = kind(root.kind());
    // (children left, the node's kind, its parent's kind); offsets run on.
    let mut stack = vec![(root.children(), root_kind, root_kind)];
    let mut offset = TextSize::from(0);
    while let Some((children, parent, grandparent)) = stack.last_mut() {
        let Some(child) = children.next() else {
            stack.pop();
            continue;
        };
        let (parent, grandparent) = (*parent, *grandparent);
        let range = TextRange::at(offset, child.text_len());
        match child {
            NodeOrToken::Node(node) => {
                let k = kind(node.kind());
                if f(Visit::Node {
                    node,
                    kind: k,
                    range,
                }) {
                    stack.push((node.children(), k, parent));
                } else {
                    offset += child.text_len();
                }
            }
            NodeOrToken::Token(t) => {
                offset += child.text_len();
                f(Visit::Token {
                    kind: kind(t.kind()),
                    text: t.text(),
                    range,
                    parent,
                    grandparent,
                });
            }
        }
    }
}

/// The kind of a node's first token.
pub(crate) fn first_token_kind(node: &GreenNodeData) -> Option<SyntaxKind> {
    let mut node = node;
    loop {
        match node.children().next()? {
            NodeOrToken::Node(n) => node = n,
            NodeOrToken::Token(t) => return Some(kind(t.kind())),
        }
    }
}

/// The kind and length of a node's last token.
pub(crate) fn last_token(node: &GreenNodeData) -> Option<(SyntaxKind, TextSize)> {
    let mut node = node;
    loop {
        match node.children().last()? {
            NodeOrToken::Node(n) => node = n,
            NodeOrToken::Token(t) => return Some((kind(t.kind()), t.text_len())),
        }
    }
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
