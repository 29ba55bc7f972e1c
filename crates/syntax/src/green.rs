//! A walk over a green tree in document order, with offsets and the kinds of
//! each token's parent and grandparent: for passes over every token of a
//! large file or item, where a cursor per node and token (rowan's
//! `descendants_with_tokens`) costs most of the time.

use rowan::GreenNodeData;

use crate::{MirLanguage, NodeOrToken, SyntaxKind, TextRange, TextSize};

fn kind(raw: rowan::SyntaxKind) -> SyntaxKind {
    <MirLanguage as rowan::Language>::kind_from_raw(raw)
}

pub enum Visit<'a> {
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
/// tokens).
pub fn walk<'a>(root: &'a GreenNodeData, mut f: impl FnMut(Visit<'a>) -> bool) {
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
pub fn first_token_kind(node: &GreenNodeData) -> Option<SyntaxKind> {
    let mut node = node;
    loop {
        match node.children().next()? {
            NodeOrToken::Node(n) => node = n,
            NodeOrToken::Token(t) => return Some(kind(t.kind())),
        }
    }
}

/// The kind and length of a node's last token.
pub fn last_token(node: &GreenNodeData) -> Option<(SyntaxKind, TextSize)> {
    let mut node = node;
    loop {
        match node.children().last()? {
            NodeOrToken::Node(n) => node = n,
            NodeOrToken::Token(t) => return Some((kind(t.kind()), t.text_len())),
        }
    }
}
