//! `mirdsl grad FILE --entry G [--wrt ...]`: prints the gradient program.

use std::path::Path;

use ir::{MetaFn, WrtItem};

use crate::{EXIT_FAILURE, EXIT_OK, EXIT_USAGE};

/// `--wrt` items: parameter names or positions, or weight names.
pub fn grad_command(file: &Path, entry: &str, wrt: &[String], vjp: bool) -> u8 {
    let (_text, analysis) = match crate::analyze_clean(file, "before differentiating") {
        Ok(ok) => ok,
        Err(code) => return code,
    };
    let Some(lowered) = analysis.source.graphs.get(entry) else {
        let names = analysis.source.order.join(", ");
        eprintln!(
            "error: no graph `{entry}` in {} (graphs: {names})",
            file.display()
        );
        return EXIT_USAGE;
    };
    let body = &lowered.body;
    let params: Vec<String> = body
        .graph(body.root())
        .params
        .iter()
        .map(|&p| body.node(p).name.clone().unwrap_or_default())
        .collect();
    let mut items = Vec::new();
    for w in wrt {
        if let Ok(i) = w.parse::<usize>() {
            if i >= params.len() {
                eprintln!(
                    "error: `{entry}` has {} parameters; --wrt {i} is out of range",
                    params.len()
                );
                return EXIT_USAGE;
            }
            items.push(WrtItem::Param(i));
        } else if let Some(i) = params.iter().position(|p| p == w) {
            items.push(WrtItem::Param(i));
        } else if analysis.source.weights.contains_key(w) {
            items.push(WrtItem::Weight(w.clone()));
        } else {
            eprintln!(
                "error: `{w}` is neither a parameter of `{entry}` ({}) nor a weight",
                params.join(", ")
            );
            return EXIT_USAGE;
        }
    }
    let meta = if vjp {
        MetaFn::Vjp
    } else if items.is_empty() {
        MetaFn::Grad { wrt: None }
    } else {
        MetaFn::Grad { wrt: Some(items) }
    };
    let program = analysis.source.program();
    let target = autodiff::GradTarget {
        item: entry.to_string(),
        graph: body.root(),
    };
    let options = autodiff::Options {
        composites: Some(analysis::composite::instance_body),
        ..Default::default()
    };
    match autodiff::gradient_program_text(&program, &target, &meta, &options) {
        Ok(text) => {
            print!("{text}");
            EXIT_OK
        }
        Err(e) => {
            eprintln!("error: cannot differentiate `{entry}`: {e}");
            EXIT_FAILURE
        }
    }
}
