//! Structure of a file for the editor: selection ranges (expand selection),
//! the call hierarchy of top-level graphs, linked editing of local names,
//! and formatting of the items a range touches.

use std::collections::BTreeMap;

use syntax::{AstNode, TextRange, TextSize};

use crate::sema::{Sema, Target};
use crate::{minimal_edit, Analysis, Edit};

/// The ranges around `offset`, innermost first, each strictly inside the
/// next: the token, then each syntax node that holds it.
pub(crate) fn selection_ranges(analysis: &Analysis, offset: TextSize) -> Vec<TextRange> {
    let sema = Sema::new(analysis);
    let Some(token) = sema.token_at(offset) else {
        return vec![TextRange::empty(offset)];
    };
    let mut out = vec![token.text_range()];
    for node in token.parent_ancestors() {
        let r = node.text_range();
        // Trivia at a node's edges are left out: the node's own text.
        let r = trimmed(&node).unwrap_or(r);
        if out
            .last()
            .is_some_and(|last| r != *last && r.contains_range(*last))
        {
            out.push(r);
        }
    }
    out
}

/// A node's range without the whitespace, newlines and comments at its ends.
fn trimmed(node: &syntax::SyntaxNode) -> Option<TextRange> {
    let mut tokens = node
        .descendants_with_tokens()
        .filter_map(|e| e.into_token())
        .filter(|t| !t.kind().is_trivia());
    let first = tokens.next()?;
    let last = tokens.last().unwrap_or_else(|| first.clone());
    Some(TextRange::new(
        first.text_range().start(),
        last.text_range().end(),
    ))
}

/// A top-level graph in the call hierarchy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallItem {
    pub name: String,
    /// `graph NAME(PARAMS) -> RET`, with inferred types where none are written.
    pub detail: Option<String>,
    pub range: TextRange,
    pub selection_range: TextRange,
}

/// Calls from (incoming) or to (outgoing) one graph: the other graph and
/// where the calls are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Calls {
    pub item: CallItem,
    pub ranges: Vec<TextRange>,
}

fn call_item(sema: &Sema, name: &str) -> Option<CallItem> {
    let info = sema.items.get(name)?;
    (info.kind == db::ItemKind::Graph).then(|| CallItem {
        name: name.to_string(),
        detail: crate::hover::graph_signature(sema, name),
        range: info.range,
        selection_range: info.name_range,
    })
}

/// The top-level graph named (or used) at `offset`.
pub(crate) fn prepare_call_hierarchy(analysis: &Analysis, offset: TextSize) -> Option<CallItem> {
    let sema = Sema::new(analysis);
    match sema.name_at(offset)?.target {
        Target::Graph(name) => call_item(&sema, &name),
        _ => None,
    }
}

/// The graphs that use graph `name` (calls and references), each with where.
pub(crate) fn incoming_calls(analysis: &Analysis, name: &str) -> Vec<Calls> {
    let sema = Sema::new(analysis);
    let target = Target::Graph(name.to_string());
    let mut by_caller: BTreeMap<TextSize, (String, Vec<TextRange>)> = BTreeMap::new();
    for g in sema.graphs_referring_to(name) {
        let ranges: Vec<TextRange> = g
            .names()
            .into_iter()
            .filter(|n| !n.is_def && n.target == target)
            .map(|n| n.range)
            .collect();
        if !ranges.is_empty() {
            by_caller.insert(g.info.range.start(), (g.name().to_string(), ranges));
        }
    }
    by_caller
        .into_values()
        .filter_map(|(caller, mut ranges)| {
            ranges.sort_by_key(|r| r.start());
            Some(Calls {
                item: call_item(&sema, &caller)?,
                ranges,
            })
        })
        .collect()
}

/// The graphs that graph `name` uses, each with where (in `name`'s body).
pub(crate) fn outgoing_calls(analysis: &Analysis, name: &str) -> Vec<Calls> {
    let sema = Sema::new(analysis);
    let Some(g) = sema.graph(name) else {
        return Vec::new();
    };
    let mut by_callee: BTreeMap<String, Vec<TextRange>> = BTreeMap::new();
    for n in g.names() {
        if let (false, Target::Graph(callee)) = (n.is_def, &n.target) {
            by_callee.entry(callee.clone()).or_default().push(n.range);
        }
    }
    let mut out: Vec<Calls> = by_callee
        .into_iter()
        .filter_map(|(callee, mut ranges)| {
            ranges.sort_by_key(|r| r.start());
            Some(Calls {
                item: call_item(&sema, &callee)?,
                ranges,
            })
        })
        .collect();
    out.sort_by_key(|c| c.ranges[0].start());
    out
}

/// The occurrences of the local name at `offset` (a parameter, a binding or
/// a nested graph), to edit together; `None` for other names (a top-level
/// name's uses may be far away: that is rename's job).
pub(crate) fn linked_editing_ranges(
    analysis: &Analysis,
    offset: TextSize,
) -> Option<Vec<TextRange>> {
    let sema = Sema::new(analysis);
    let name = sema.name_at(offset)?;
    if !matches!(name.target, Target::Local { .. } | Target::Nested { .. }) {
        return None;
    }
    let mut ranges: Vec<TextRange> = sema
        .occurrences(&name.target)
        .into_iter()
        .map(|n| n.range)
        .collect();
    ranges.sort_by_key(|r| r.start());
    // Every occurrence must spell the name as written (aliases do not).
    let text = &analysis.text()[name.range];
    ranges.retain(|r| &analysis.text()[*r] == text);
    Some(ranges)
}

/// The edits that format the top-level items `range` touches (the
/// formatter's layout is per file; a range is widened to whole items).
pub(crate) fn format_range(analysis: &Analysis, range: TextRange) -> Result<Vec<Edit>, String> {
    let text = analysis.text();
    let formatted = fmt::format(text).map_err(|errors| {
        format!(
            "the file has {} syntax error{}; fix {} before formatting",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" },
            if errors.len() == 1 { "it" } else { "them" }
        )
    })?;
    let old_items: Vec<TextRange> = db::parse(analysis.db, analysis.file)
        .tree()
        .items()
        .map(|i| i.range())
        .collect();
    let new_items: Vec<TextRange> = syntax::parse(&formatted)
        .tree()
        .items()
        .map(|i| i.range())
        .collect();
    if old_items.len() != new_items.len() {
        return Err("formatting changed the items (a bug in mirdsl fmt)".into());
    }
    let touches = |r: TextRange| r.intersect(range).is_some();
    let mut edits = Vec::new();
    for (old, new) in old_items.iter().zip(&new_items) {
        if !touches(*old) {
            continue;
        }
        let before = &text[*old];
        let after = &formatted[*new];
        if let Some(mut e) = minimal_edit(before, after) {
            e.range += old.start();
            edits.push(e);
        }
    }
    Ok(edits)
}
