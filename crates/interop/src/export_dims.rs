//! `mirdsl export --dim B=32`: the program with a symbolic dimension fixed
//! to a size, for a static graph. Every annotation that names the symbol
//! (parameters, results, bindings) takes the size, and the program is
//! inferred again, so every shape the export writes is static.

use std::collections::HashMap;
use std::sync::Arc;

use analysis::{FileAnalysis, LoweredGraph};
use ir::{Dim, Shape, Ty};

use crate::export::ExportError;

fn fix(ty: &Ty, sizes: &HashMap<String, i64>) -> Ty {
    match ty {
        Ty::Tensor(d, Shape::Ranked(dims)) => Ty::Tensor(
            *d,
            Shape::Ranked(
                dims.iter()
                    .map(|dim| match dim {
                        Dim::Sym(s) => sizes
                            .get(s.as_str())
                            .map_or(dim.clone(), |&n| Dim::Known(n)),
                        other => other.clone(),
                    })
                    .collect(),
            ),
        ),
        Ty::Tuple(items) => Ty::Tuple(items.iter().map(|t| fix(t, sizes)).collect()),
        other => other.clone(),
    }
}

/// The symbols the annotations of `analysis` name.
pub fn symbols(analysis: &FileAnalysis) -> Vec<String> {
    fn walk(ty: &Ty, out: &mut Vec<String>) {
        match ty {
            Ty::Tensor(_, Shape::Ranked(dims)) => {
                for d in dims {
                    if let Dim::Sym(s) = d {
                        if !out.iter().any(|o| o == s.as_str()) {
                            out.push(s.to_string());
                        }
                    }
                }
            }
            Ty::Tuple(items) => items.iter().for_each(|t| walk(t, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for name in &analysis.source.order {
        let body = &analysis.source.graphs[name].body;
        for n in &body.nodes {
            if let Some((t, _)) = &n.annotation {
                walk(t, &mut out);
            }
        }
        for g in body.graph_ids() {
            if let Some((t, _)) = &body.graph(g).ret_annotation {
                walk(t, &mut out);
            }
        }
    }
    out
}

/// `analysis` with each symbol of `sizes` fixed, inferred again.
pub fn fix_dims(
    analysis: &FileAnalysis,
    sizes: &HashMap<String, i64>,
) -> Result<FileAnalysis, ExportError> {
    if sizes.is_empty() {
        return Ok(analysis.clone());
    }
    let mut source = analysis.source.clone();
    for lowered in source.graphs.values_mut() {
        let mut body = (*lowered.body).clone();
        for n in body.nodes.iter_mut() {
            if let Some((t, r)) = &n.annotation {
                n.annotation = Some((fix(t, sizes), *r));
            }
        }
        for g in body.graph_ids().collect::<Vec<_>>() {
            if let Some((t, r)) = body.graph(g).ret_annotation.clone() {
                body.graph_mut(g).ret_annotation = Some((fix(&t, sizes), r));
            }
        }
        let mut source_map = lowered.source_map.clone();
        for (_, t, _) in source_map.annotations.iter_mut() {
            *t = fix(t, sizes);
        }
        *lowered = Arc::new(LoweredGraph {
            name: lowered.name.clone(),
            body: Arc::new(body),
            source_map,
            diagnostics: Vec::new(),
        });
    }
    crate::export_lower::infer_source(
        analysis,
        source,
        "fixing the sizes given by --dim broke the program",
    )
}
