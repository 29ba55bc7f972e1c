//! Navigation: go to definition, references, document highlight, rename.

use syntax::{TextRange, TextSize};

use crate::sema::{Sema, Target};
use crate::{is_valid_name, Analysis, Edit};

/// Where a definition is: its name, and the whole construct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NavTarget {
    pub focus_range: TextRange,
    pub full_range: TextRange,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Highlight {
    pub range: TextRange,
    /// A definition (a write) rather than a use.
    pub is_def: bool,
}

pub(crate) fn goto_definition(analysis: &Analysis, offset: TextSize) -> Option<NavTarget> {
    let sema = Sema::new(analysis);
    let name = sema.name_at(offset)?;
    match &name.target {
        Target::Local { item, .. } | Target::Nested { item, .. } => {
            let g = sema.graph(item)?;
            let focus = g.def_range(&name.target)?;
            let full = match &name.target {
                Target::Nested { graph, .. } => g
                    .lowered
                    .body
                    .graph(*graph)
                    .span
                    .map_or(focus, |s| g.mapper.range(s)),
                _ => statement_range(&sema, focus).unwrap_or(focus),
            };
            Some(NavTarget {
                focus_range: focus,
                full_range: full,
            })
        }
        Target::Graph(n) | Target::Weight(n) => {
            let info = sema.items.get(n)?;
            Some(NavTarget {
                focus_range: info.name_range,
                full_range: info.range,
            })
        }
        Target::Prim(_) | Target::Meta(_) | Target::DType(_) => None,
    }
}

/// The statement or parameter that defines the name at `focus`.
fn statement_range(sema: &Sema, focus: TextRange) -> Option<TextRange> {
    use syntax::SyntaxKind::*;
    let token = sema.token_at(focus.start())?;
    token
        .parent_ancestors()
        .find(|n| matches!(n.kind(), LET_STMT | PARAM))
        .map(|n| n.text_range())
}

pub(crate) fn references(
    analysis: &Analysis,
    offset: TextSize,
    include_declaration: bool,
) -> Vec<TextRange> {
    let sema = Sema::new(analysis);
    let Some(name) = sema.name_at(offset) else {
        return Vec::new();
    };
    sema.occurrences(&name.target)
        .into_iter()
        .filter(|n| include_declaration || !n.is_def)
        .map(|n| n.range)
        .collect()
}

pub(crate) fn highlight(analysis: &Analysis, offset: TextSize) -> Vec<Highlight> {
    let sema = Sema::new(analysis);
    let Some(name) = sema.name_at(offset) else {
        return Vec::new();
    };
    let mut out: Vec<Highlight> = sema
        .occurrences(&name.target)
        .into_iter()
        .map(|n| Highlight {
            range: n.range,
            is_def: n.is_def,
        })
        .collect();
    out.sort_by_key(|h| h.range.start());
    out
}

pub(crate) fn prepare_rename(
    analysis: &Analysis,
    offset: TextSize,
) -> Result<(TextRange, String), String> {
    let sema = Sema::new(analysis);
    let Some(name) = sema.name_at(offset) else {
        if let Some(t) = sema.token_at(offset) {
            if t.kind().is_keyword() {
                return Err(format!("`{}` is a keyword; it cannot be renamed", t.text()));
            }
            if t.text().parse::<ir::DType>().is_ok() {
                return Err(format!("`{}` is a dtype; it cannot be renamed", t.text()));
            }
        }
        return Err("no name to rename here".to_string());
    };
    match &name.target {
        Target::Prim(p) => Err(format!("`{p}` is a primitive; it cannot be renamed")),
        Target::Meta(m) => Err(format!("`{m}` is a metafunction; it cannot be renamed")),
        Target::DType(d) => Err(format!("`{d}` is a dtype; it cannot be renamed")),
        _ => Ok((name.range, analysis.text()[name.range].to_string())),
    }
}

/// Why a name cannot be bound by the user without hiding something built
/// in: graphs, weights and locals are looked up before primitives (internal
/// ones too), metafunctions and dtypes, so such a name would rebind them at
/// every use.
pub(crate) fn hides_a_built_in(name: &str) -> Option<String> {
    let what = if crate::completion::META.contains(&name) {
        "a metafunction"
    } else if ops::lookup(name).is_some() {
        "a primitive"
    } else if name.parse::<ir::DType>().is_ok() {
        "a dtype"
    } else {
        return None;
    };
    Some(format!("`{name}` is {what}; the new name would hide it"))
}

pub(crate) fn rename(
    analysis: &Analysis,
    offset: TextSize,
    new_name: &str,
) -> Result<Vec<Edit>, String> {
    let (_, old) = prepare_rename(analysis, offset)?;
    if !is_valid_name(new_name) {
        return Err(if syntax::SyntaxKind::from_keyword(new_name).is_some() {
            format!("`{new_name}` is a keyword")
        } else {
            format!("`{new_name}` is not a valid name")
        });
    }
    if let Some(why) = hides_a_built_in(new_name) {
        return Err(why);
    }
    let sema = Sema::new(analysis);
    let name = sema.name_at(offset).unwrap();
    if new_name == old {
        return Ok(Vec::new());
    }
    match &name.target {
        Target::Graph(_) | Target::Weight(_) if sema.items.get(new_name).is_some() => {
            return Err(format!("`{new_name}` is already defined at the top level"));
        }
        Target::Local { item, .. } | Target::Nested { item, .. } => {
            let g = sema.graph(item).ok_or("the graph is gone")?;
            let taken = g
                .names()
                .iter()
                .any(|n| n.is_def && &analysis.text()[n.range] == new_name);
            if taken {
                return Err(format!("`{new_name}` is already bound in `{item}`"));
            }
        }
        _ => {}
    }

    Ok(sema
        .occurrences(&name.target)
        .into_iter()
        .map(|n| Edit {
            range: n.range,
            new_text: new_name.to_string(),
        })
        .collect())
}
