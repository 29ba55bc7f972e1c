//! Navigation: go to definition, references, document highlight, rename.

use syntax::{TextRange, TextSize};

use crate::sema::{Sema, Target};
use crate::{is_valid_name, Analysis, Edit};

/// Where a definition is: its name, and the whole construct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NavTarget {
    /// The file of the definition, when it is another (an imported item).
    pub file: Option<db::File>,
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
    if let Some(nav) = import_at(analysis, offset) {
        return Some(nav);
    }
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
                file: None,
                focus_range: focus,
                full_range: full,
            })
        }
        Target::Graph(n) | Target::Weight(n) => match sema.items.get(n) {
            Some(info) => Some(NavTarget {
                file: None,
                focus_range: info.name_range,
                full_range: info.range,
            }),
            None => imported_item(analysis, n),
        },
        Target::Prim(_) | Target::Meta(_) | Target::DType(_) => None,
    }
}

/// The definition of an item an import makes visible as `name`.
pub(crate) fn imported_item(analysis: &Analysis, name: &str) -> Option<NavTarget> {
    let (db, file) = (analysis.db, analysis.file);
    if file.imports(db).is_empty() {
        return None;
    }
    let fs = db::scope(db, file);
    let v = fs
        .scope
        .items
        .iter()
        .find(|v| v.name == name && v.import.is_some())?;
    let (target, item) = fs.item(v);
    let info = db::items(db, target).get(item)?;
    Some(NavTarget {
        file: Some(target),
        focus_range: info.name_range,
        full_range: info.range,
    })
}

/// The file an `import` line at `offset` names (its start).
fn import_at(analysis: &Analysis, offset: TextSize) -> Option<NavTarget> {
    let (db, file) = (analysis.db, analysis.file);
    let decls = file.imports(db);
    let k = decls
        .iter()
        .position(|d| d.range.contains_inclusive(offset))?;
    let target = file.resolved(db).get(k)?.clone().ok()?;
    let start = TextRange::empty(TextSize::from(0));
    Some(NavTarget {
        file: Some(target),
        focus_range: start,
        full_range: start,
    })
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

/// An occurrence of a top-level item in some file of the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileOccurrence {
    pub file: db::File,
    pub range: TextRange,
    pub is_def: bool,
    /// The name it is written as there (`dense`, `nn.dense`).
    pub name: String,
    /// The item's own name.
    pub item: String,
}

/// Every occurrence, in `files` and the file defining it, of the top-level
/// item at `offset` (`None` when the name there is not a top-level item).
pub(crate) fn item_occurrences(
    analysis: &Analysis,
    offset: TextSize,
    files: &[db::File],
) -> Option<Vec<FileOccurrence>> {
    let db = analysis.db;
    let sema = Sema::new(analysis);
    let name = sema.name_at(offset)?;
    let (n, is_graph) = match &name.target {
        Target::Graph(n) => (n.clone(), true),
        Target::Weight(n) => (n.clone(), false),
        _ => return None,
    };
    let (def_file, item) = if sema.items.get(&n).is_some() {
        (analysis.file, n)
    } else {
        let nav = imported_item(analysis, &n)?;
        let file = nav.file?;
        let item = db::items(db, file)
            .items
            .iter()
            .find(|i| i.name_range == nav.focus_range)?
            .name
            .clone();
        (file, item)
    };
    let target = |name: &str| {
        if is_graph {
            Target::Graph(name.to_string())
        } else {
            Target::Weight(name.to_string())
        }
    };
    let mut out = Vec::new();
    let there = Analysis::new(db, def_file);
    for o in Sema::new(&there).occurrences(&target(&item)) {
        out.push(FileOccurrence {
            file: def_file,
            range: o.range,
            is_def: o.is_def,
            name: item.clone(),
            item: item.clone(),
        });
    }
    let mut seen = vec![def_file];
    for &f in files.iter().chain([&analysis.file]) {
        if seen.contains(&f) || f.imports(db).is_empty() {
            continue;
        }
        seen.push(f);
        let fs = db::scope(db, f);
        for v in fs.scope.items.iter().filter(|v| v.import.is_some()) {
            if fs.item(v) != (def_file, item.as_str()) {
                continue;
            }
            let a = Analysis::new(db, f);
            for o in Sema::new(&a).occurrences(&target(&v.name)) {
                if !o.is_def {
                    out.push(FileOccurrence {
                        file: f,
                        range: o.range,
                        is_def: false,
                        name: v.name.clone(),
                        item: item.clone(),
                    });
                }
            }
        }
    }
    Some(out)
}

/// Renames the top-level item at `offset` in every file of `files` that
/// sees it (an alias's prefix is kept: `nn.dense` → `nn.dense2`).
pub(crate) fn rename_across(
    analysis: &Analysis,
    offset: TextSize,
    new_name: &str,
    files: &[db::File],
) -> Option<Result<Vec<(db::File, Edit)>, String>> {
    let occurrences = item_occurrences(analysis, offset, files)?;
    let check = || -> Result<(), String> {
        if !is_valid_name(new_name) {
            return Err(format!("`{new_name}` is not a valid name"));
        }
        if let Some(why) = hides_a_built_in(new_name) {
            return Err(why);
        }
        if let Some(def) = occurrences.iter().find(|o| o.is_def) {
            if db::items(analysis.db, def.file).get(new_name).is_some() {
                return Err(format!("`{new_name}` is already defined at the top level"));
            }
        }
        Ok(())
    };
    if let Err(e) = check() {
        return Some(Err(e));
    }
    Some(Ok(occurrences
        .into_iter()
        .map(|o| {
            let prefix = &o.name[..o.name.len() - o.item.len()];
            (
                o.file,
                Edit {
                    range: o.range,
                    new_text: format!("{prefix}{new_name}"),
                },
            )
        })
        .collect()))
}
