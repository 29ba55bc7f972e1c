//! Before export: applications of `grad`, `value_and_grad` and `vjp` become
//! calls of the gradient graphs automatic differentiation makes, since a
//! `.mindir` holds graphs after differentiation (as MindSpore's own exporter
//! writes them). The result is checked again, so the exporter sees inferred
//! types for the new graphs too.

use std::collections::HashMap;
use std::sync::Arc;

use analysis::{FileAnalysis, FileSource, LoweredGraph, SourceMap};
use ir::{AbsVal, Body, GraphId, NodeId, NodeKind, Program, Value};

use crate::export::ExportError;

/// A metafunction applied to a function: the node, and what it differentiates.
struct MetaApply {
    item: String,
    node: NodeId,
    meta: ir::MetaFn,
    target: autodiff::GradTarget,
    /// The arguments the derivative is called with (`value_and_grad(f)(a, b)`:
    /// `a, b`), when it is called right there.
    args: Vec<NodeId>,
}

/// The first metafunction application in the graphs `entry` uses.
fn find(program: &Program, entry: &str) -> Option<MetaApply> {
    let mut order = vec![entry.to_string()];
    let mut i = 0;
    while i < order.len() {
        let body = program.graph(&order[i])?;
        for (k, node) in body.nodes.iter().enumerate() {
            if let NodeKind::Const(Value::Global(name)) = &node.kind {
                if !order.contains(name) {
                    order.push(name.clone());
                }
            }
            let NodeKind::Apply(inputs) = &node.kind else {
                continue;
            };
            let [m, f] = inputs.as_slice() else { continue };
            let NodeKind::Const(Value::Meta(meta)) = &body.node(*m).kind else {
                continue;
            };
            let target = match &body.node(*f).kind {
                NodeKind::Const(Value::Global(g)) => autodiff::GradTarget {
                    item: g.clone(),
                    graph: GraphId(0),
                },
                NodeKind::Const(Value::Graph(g)) => autodiff::GradTarget {
                    item: order[i].clone(),
                    graph: *g,
                },
                _ => continue,
            };
            let node = NodeId(k as u32);
            // The one call of the derivative (a derivative used otherwise, or
            // called twice, may take arguments of other types).
            let uses: Vec<&[NodeId]> = body
                .nodes
                .iter()
                .filter_map(|n| match &n.kind {
                    NodeKind::Apply(inputs) if inputs.contains(&node) => Some(inputs.as_slice()),
                    _ => None,
                })
                .collect();
            let args = match uses.as_slice() {
                [call] if call[0] == node && !call[1..].contains(&node) => call[1..].to_vec(),
                _ => Vec::new(),
            };
            return Some(MetaApply {
                item: order[i].clone(),
                node,
                meta: meta.clone(),
                target,
                args,
            });
        }
        i += 1;
    }
    None
}

/// `analysis` with every metafunction application `entry` reaches replaced by
/// the gradient graph it denotes; the original when there is none.
pub fn expand(analysis: &FileAnalysis, entry: &str) -> Result<FileAnalysis, ExportError> {
    let mut program = analysis.source.program();
    let mut changed: Vec<String> = Vec::new();
    let mut generated: Vec<String> = Vec::new();
    for _round in 0..256 {
        let Some(app) = find(&program, entry) else {
            break;
        };
        let values = param_values(analysis, &app);
        let options = autodiff::Options {
            param_values: values.clone(),
            composites: Some(analysis::composite::instance_body),
            // MindSpore cannot run a loaded loop's gradient: unroll it.
            unroll: true,
            ..Default::default()
        };
        let result = autodiff::differentiate_with(&program, &app.target, &app.meta, &options)
            .map_err(|e| {
                ExportError::Unsupported(format!(
                    "`{}` of `{}`: {e}",
                    app.meta.name(),
                    app.target.item
                ))
            })?;
        if let Some(span) = autodiff::remaining_recursion(&result) {
            let message = format!(
                "the gradient of `{}` recurses to a depth export cannot know (a loop over a \
                 symbolic length, or one run in a branch of an `if` on a value): MindSpore \
                 2.10 cannot run the gradient of a loop loaded from MindIR (its own export of \
                 a `while` loop's gradient does not run either), so export unrolls loops \
                 whose length is known; fix the length with `--dim NAME=N`",
                app.target.item
            );
            let span =
                span.or_else(|| program.graph(&app.item).and_then(|b| b.node(app.node).span));
            return Err(match span {
                Some(span) => ExportError::UnsupportedAt(message, span),
                None => ExportError::Unsupported(message),
            });
        }
        for (name, mut body) in result.graphs {
            if name == result.entry {
                if let Some(values) = &values {
                    annotate(&mut body, values);
                }
            }
            generated.push(name.clone());
            program.graphs.push((name, body));
        }
        let slot = program
            .graphs
            .iter_mut()
            .find(|(n, _)| *n == app.item)
            .expect("the item found");
        let mut body: Body = (*slot.1).clone();
        retarget(&mut body, app.node, &result.entry);
        slot.1 = Arc::new(body);
        if !changed.contains(&app.item) {
            changed.push(app.item.clone());
        }
    }
    if changed.is_empty() {
        return Ok(analysis.clone());
    }
    let mut source = FileSource {
        graphs: HashMap::new(),
        weights: analysis.source.weights.clone(),
        order: Vec::new(),
    };
    for (name, body) in &program.graphs {
        let original = analysis.source.graphs.get(name);
        let lowered = LoweredGraph {
            name: name.clone(),
            body: body.clone(),
            source_map: original.map_or_else(SourceMap::default, |g| g.source_map.clone()),
            diagnostics: Vec::new(),
        };
        source.order.push(name.clone());
        source.graphs.insert(name.clone(), Arc::new(lowered));
    }
    crate::export_lower::infer_source(
        analysis,
        source,
        "the differentiated program does not check",
    )
}

/// What inference knows of the arguments the derivative is called with: an
/// unannotated target (the standard library's layers) is otherwise
/// differentiated knowing nothing of its parameters, and its tuples (a
/// `Split`'s pieces, an LSTM cell's state) have no known length. An argument
/// whose specialisations disagree is `Any` (the target's annotation, if any).
fn param_values(analysis: &FileAnalysis, app: &MetaApply) -> Option<Vec<AbsVal>> {
    if app.args.is_empty() {
        return None;
    }
    let one = |n: NodeId| -> AbsVal {
        let known: Vec<AbsVal> = analysis
            .values_of(&app.item, n)
            .into_iter()
            .filter(|v| *v != AbsVal::Any)
            .collect();
        match known.split_first() {
            Some((v, rest)) if rest.iter().all(|o| o == v) => v.clone(),
            _ => AbsVal::Any,
        }
    };
    Some(app.args.iter().map(|&a| one(a)).collect())
}

/// The gradient graph's parameters annotated with the tensor types it is
/// called with: inference of the graph on its own (besides at its call) then
/// knows them too. Without, an expansion's `if bias == none { () } else
/// { ... }` joins `()` with the unknown other branch, and a `Concat` of such
/// pieces (a `Split`'s gradient) is an error.
fn annotate(body: &mut Arc<Body>, values: &[AbsVal]) {
    let params = body.graph(body.root()).params.clone();
    let b = Arc::make_mut(body);
    for (&p, v) in params.iter().zip(values) {
        let node = b.node_mut(p);
        if node.annotation.is_none() && matches!(v, AbsVal::Tensor { .. }) {
            node.annotation = Some((v.to_ty(&|_| None), ir::TextRange::default()));
        }
    }
}

/// Node `n` (a metafunction applied to a function) becomes the gradient
/// graph `entry` as a value.
fn retarget(body: &mut Body, n: NodeId, entry: &str) {
    // The metafunction's own constant is no longer used by anything.
    if let Some(&m) = body.inputs(n).first() {
        body.node_mut(m).kind = NodeKind::Const(Value::None);
    }
    if let Some(g) = body.node(n).graph {
        body.graph_mut(g).nodes.retain(|&m| m != n);
    }
    let node = body.node_mut(n);
    node.kind = NodeKind::Const(Value::Global(entry.to_string()));
    node.graph = None;
}
