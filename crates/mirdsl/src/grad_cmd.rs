//! `mirdsl grad FILE --entry G [--wrt ...]`: prints the gradient program.

use std::path::Path;

use ir::{MetaFn, WrtItem};

use crate::{EXIT_FAILURE, EXIT_OK, EXIT_USAGE};

/// The dtype of a value or type, when it is a tensor or scalar.
fn ty_dtype(ty: &ir::Ty) -> Option<tensor::DType> {
    match ty {
        ir::Ty::Tensor(d, _) | ir::Ty::Scalar(d) => Some(*d),
        _ => None,
    }
}

/// The dtype of parameter `p` of `entry`: its annotation's, else the one
/// inference found at every call (none when it is not one dtype).
fn param_dtype(
    analysis: &analysis::FileAnalysis,
    entry: &str,
    body: &ir::Body,
    p: ir::NodeId,
) -> Option<tensor::DType> {
    if let Some((ty, _)) = &body.node(p).annotation {
        return ty_dtype(ty);
    }
    let values = analysis.values_of(entry, p);
    let first = values.first()?.dtype()?;
    values
        .iter()
        .all(|v| v.dtype() == Some(first))
        .then_some(first)
}

/// `--wrt` items: parameter names or positions, or weight names.
pub fn grad_command(file: &Path, entry: &str, wrt: &[String], vjp: bool) -> u8 {
    let linked = match crate::link_clean(file, "before differentiating") {
        Ok(l) => l,
        Err(code) => return code,
    };
    let analysis = &linked.analysis;
    if let Err(code) = crate::check_entry(file, &linked, entry) {
        return code;
    }
    let lowered = &analysis.source.graphs[entry];
    let body = &lowered.body;
    let param_nodes = body.graph(body.root()).params.clone();
    let params: Vec<String> = param_nodes
        .iter()
        .map(|&p| body.node(p).name.clone().unwrap_or_default())
        .collect();
    let param_list = if params.is_empty() {
        "it has none".to_string()
    } else {
        params
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // Parameters (by position) and weights that have no gradient: integers
    // and booleans are not differentiable (autodiff would give zeros).
    let dtype_of_param = |i: usize| param_dtype(analysis, entry, body, param_nodes[i]);
    let float_params: Vec<String> = (0..params.len())
        .filter(|&i| dtype_of_param(i).is_none_or(|d| d.is_float()))
        .map(|i| format!("`{}`", params[i]))
        .collect();
    // The float weights the entry uses, in declaration order.
    let float_weights: Vec<String> =
        crate::interop_cmd::entry_program(&analysis.source.program(), entry)
            .weights
            .iter()
            .filter(|w| ty_dtype(&w.ty).is_some_and(|d| d.is_float()))
            .map(|w| format!("`{}`", w.name))
            .collect();
    let no_gradient = |what: String, dtype: tensor::DType| {
        eprintln!(
            "error: {what} is {dtype}; {} has no gradient",
            if dtype.is_bool() {
                "a boolean"
            } else {
                "an integer"
            }
        );
        let weights = if float_weights.is_empty() {
            String::new()
        } else {
            format!("; the float weights it uses: {}", float_weights.join(", "))
        };
        if float_params.is_empty() {
            eprintln!("note: `{entry}` has no float parameter{weights}");
        } else {
            eprintln!(
                "note: its float parameters: {}{weights}",
                float_params.join(", ")
            );
        }
        eprintln!("help: choose what to differentiate with `--wrt NAME[,NAME...]`");
        EXIT_USAGE
    };
    let mut items = Vec::new();
    for w in wrt {
        // `weights`: every float weight the entry uses (unless something
        // of the program is called so).
        if w == "weights" && !params.contains(w) && !analysis.source.weights.contains_key(w) {
            let used = crate::interop_cmd::entry_program(&analysis.source.program(), entry);
            let all: Vec<WrtItem> = used
                .weights
                .iter()
                .filter(|d| ty_dtype(&d.ty).is_some_and(|t| t.is_float()))
                .map(|d| WrtItem::Weight(d.name.clone()))
                .collect();
            if all.is_empty() {
                eprintln!("error: `--wrt weights`: `{entry}` uses no float weight");
                return EXIT_USAGE;
            }
            items.extend(all);
            continue;
        }
        let index = if let Ok(i) = w.parse::<usize>() {
            if i >= params.len() {
                eprintln!(
                    "error: `{entry}` has {} parameter{}; --wrt {i} is out of range",
                    params.len(),
                    if params.len() == 1 { "" } else { "s" }
                );
                return EXIT_USAGE;
            }
            Some(i)
        } else {
            params.iter().position(|p| p == w)
        };
        if let Some(i) = index {
            if let Some(d) = dtype_of_param(i).filter(|d| !d.is_float()) {
                return no_gradient(
                    format!("`--wrt {w}`: parameter `{}` of `{entry}`", params[i]),
                    d,
                );
            }
            items.push(WrtItem::Param(i));
        } else if let Some(weight) = analysis.source.weights.get(w) {
            if let Some(d) = ty_dtype(&weight.ty).filter(|d| !d.is_float()) {
                return no_gradient(format!("`--wrt {w}`: weight `{w}`"), d);
            }
            items.push(WrtItem::Weight(w.clone()));
        } else {
            let candidates = params
                .iter()
                .map(String::as_str)
                .chain(analysis.source.weights.keys().map(String::as_str));
            eprintln!(
                "error: `--wrt {w}`: `{w}` is neither a parameter of `{entry}` nor a weight{}",
                crate::did_you_mean(w, candidates)
            );
            eprintln!("note: the parameters of `{entry}`: {param_list}");
            return EXIT_USAGE;
        }
    }
    // Without `--wrt`, the gradient is with respect to the first parameter.
    if items.is_empty() && !vjp && !params.is_empty() {
        if let Some(d) = dtype_of_param(0).filter(|d| !d.is_float()) {
            return no_gradient(
                format!(
                    "without `--wrt`, the gradient is with respect to the first parameter, but `{}`",
                    params[0]
                ),
                d,
            );
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
