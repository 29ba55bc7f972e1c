//! Semantic tokens of a dump: what each name is, as the dump resolves it
//! (subgraphs, the graph's nodes, inputs and weights), and the primitives.
//! The TextMate grammar colours the rest (types, comments, constants).

use syntax::{TextRange, TextSize};

use crate::{SemanticToken, TokenKind, TokenModifier};

use super::Dump;

const DECL: u32 = 1 << TokenModifier::Declaration as u32;
const STATIC: u32 = 1 << TokenModifier::Static as u32;
const LIB: u32 = 1 << TokenModifier::DefaultLibrary as u32;

fn token(r: &std::ops::Range<usize>, kind: TokenKind, modifiers: u32) -> SemanticToken {
    SemanticToken {
        range: TextRange::new(TextSize::from(r.start as u32), TextSize::from(r.end as u32)),
        kind,
        modifiers,
    }
}

/// A weight is a `Ref` parameter (`<Ref[Tensor[Float32]], ...>`).
fn param_class(d: &Dump, i: usize) -> (TokenKind, u32) {
    match d.params[i].ty.as_deref() {
        Some(t) if t.starts_with("<Ref[") => (TokenKind::Variable, STATIC),
        _ => (TokenKind::Parameter, 0),
    }
}

/// Every token in text order, within `range` when given.
pub fn dump_tokens(d: &Dump, range: Option<TextRange>) -> Vec<SemanticToken> {
    let mut out = Vec::new();
    for (i, p) in d.params.iter().enumerate() {
        let (kind, m) = param_class(d, i);
        out.push(token(&p.range, kind, m | DECL));
    }
    for g in &d.graphs {
        out.push(token(&g.name_range, TokenKind::Function, DECL));
        for (_, r) in &g.params {
            out.push(token(r, TokenKind::Parameter, DECL));
        }
        for n in &g.nodes {
            if n.id != "Return" {
                out.push(token(&n.id_range, TokenKind::Variable, DECL));
            }
            if let Some((_, r)) = &n.prim {
                out.push(token(r, TokenKind::Function, LIB));
            }
        }
    }
    // Names resolved by table, not by a search per use: a 100,000-line dump
    // has hundreds of thousands of uses.
    let mut global: std::collections::HashMap<&str, (TokenKind, u32)> = Default::default();
    for (gi, g) in d.graphs.iter().enumerate().rev() {
        global.insert(g.name.as_str(), (TokenKind::Function, 0));
        for (p, _) in d.graphs[gi].params.iter() {
            global.insert(p.as_str(), (TokenKind::Parameter, 0));
        }
    }
    for (i, p) in d.params.iter().enumerate() {
        global.insert(p.name.as_str(), param_class(d, i));
    }
    let nodes: Vec<std::collections::HashSet<&str>> = d
        .graphs
        .iter()
        .map(|g| g.nodes.iter().map(|n| n.id.as_str()).collect())
        .collect();
    for u in &d.uses {
        let class = if u.name.starts_with('%') && !u.name.starts_with("%para") {
            match u.graph {
                Some(g) if nodes[g].contains(u.name.as_str()) => (TokenKind::Variable, 0),
                _ => continue,
            }
        } else {
            match global.get(u.name.as_str()) {
                Some(&c) => c,
                None => continue,
            }
        };
        out.push(token(&u.range, class.0, class.1));
    }
    out.sort_by_key(|t| t.range.start());
    out.dedup_by_key(|t| t.range.start());
    if let Some(r) = range {
        out.retain(|t| t.range.end() > r.start() && t.range.start() < r.end());
    }
    out
}
