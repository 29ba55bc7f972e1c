//! Before export: the registry's internal gradient helpers are written with
//! MindSpore primitives. First, a helper MindSpore has no counterpart of
//! whose expansion the registry has (`ops/composite/gradient-helpers.mir`:
//! `_DenseGrad`, ...) is replaced by it; then the helpers whose writing needs
//! the shapes inference knows, as MindSpore's own bprops compute reduction
//! axes from static shapes, are written by the lowerings in [`LOWERINGS`],
//! one module per kind: [`shapes`] (`_SumToShapeOf`, `_ReshapeLike`, ...),
//! [`scatter`] (gradients that add into the positions the forward took:
//! Gather's, the slices', Tile's, Embedding's), [`gather`] (helpers that read
//! elements: `_SegmentGather`, `_IndexGather`), [`slices`] (gradients that are
//! a box of the sensitivity: Concat's), [`padding`], [`linalg`]
//! (Trace's) and [`pool`] (the max poolings' second-order helpers). A
//! helper left over is named by export.

mod gather;
mod layout;
mod linalg;
mod padding;
mod pool;
mod scatter;
mod shapes;
mod slices;
mod take;

use std::collections::HashMap;
use std::sync::Arc;

use analysis::{FileAnalysis, LoweredGraph};
use ir::{AbsVal, AttrValue, Body, Dim, GraphId, NodeId, NodeKind, PrimRef, Value};

use crate::export::ExportError;

pub(super) fn ints(v: &[i64]) -> AttrValue {
    AttrValue::Tuple(v.iter().map(|&i| AttrValue::Int(i)).collect())
}

/// The one ranked shape a node has in every specialisation (dimensions may be
/// symbolic: `B`).
pub(super) fn ranked(values: &[AbsVal]) -> Option<Vec<Dim>> {
    let mut out: Option<Vec<Dim>> = None;
    for v in values {
        let dims = match v {
            AbsVal::Tensor { shape, .. } => shape.dims()?.to_vec(),
            AbsVal::Scalar { .. } => Vec::new(),
            // A constant scalar (see `lower_by_shape`).
            AbsVal::Tuple(t) if t.is_empty() => Vec::new(),
            // A graph without annotations inferred on its own (not at a
            // call): its calls' values say what it is given.
            AbsVal::Any => continue,
            _ => return None,
        };
        match &out {
            Some(o) if o.len() != dims.len() => return None,
            Some(o) => {
                // Differing sizes across specialisations are unknown here.
                let joined = o
                    .iter()
                    .zip(&dims)
                    .map(|(a, b)| if a == b { a.clone() } else { Dim::Unknown })
                    .collect();
                out = Some(joined);
            }
            None => out = Some(dims),
        }
    }
    out
}

/// Writes the nodes replacing one helper call; returns the result node.
pub(super) struct Emit<'b> {
    pub(super) body: &'b mut Body,
    graph: GraphId,
    /// The helper call's span: the nodes that replace it keep its place.
    span: Option<ir::TextRange>,
}

impl Emit<'_> {
    /// A rank-0 tensor constant (MindSpore's tensor primitives take no
    /// Python numbers beside a tensor).
    pub(super) fn number(&mut self, dtype: ir::DType, value: f64) -> NodeId {
        self.constant(tensor::Tensor::scalar(dtype, value))
    }

    pub(super) fn constant(&mut self, t: tensor::Tensor) -> NodeId {
        self.body.add_const(Value::Tensor(Arc::new(t)), self.span)
    }

    pub(super) fn prim(
        &mut self,
        name: &str,
        attrs: Vec<(&str, AttrValue)>,
        args: &[NodeId],
    ) -> NodeId {
        let mut p = PrimRef::new(name);
        p.attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        self.body.add_prim_call(self.graph, p, args, self.span)
    }
}

/// One helper call to write: its primitive, operands and what inference
/// knows of them.
pub(super) struct Call<'a> {
    pub(super) p: &'a PrimRef,
    pub(super) args: &'a [NodeId],
    /// Each operand's values, one per specialisation of the graph.
    values: Vec<Vec<AbsVal>>,
}

impl Call<'_> {
    pub(super) fn name(&self) -> &str {
        &self.p.name
    }

    pub(super) fn attr(&self, key: &str) -> Option<&AttrValue> {
        self.p.attr(key)
    }

    pub(super) fn values(&self, k: usize) -> &[AbsVal] {
        self.values.get(k).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Operand `k`'s one ranked shape (see [`ranked`]).
    pub(super) fn shape(&self, k: usize) -> Option<Vec<Dim>> {
        ranked(self.values(k))
    }

    /// Operand `k`'s one dtype in every specialisation.
    pub(super) fn dtype(&self, k: usize) -> Option<ir::DType> {
        let mut dtypes = self
            .values(k)
            .iter()
            .filter(|v| !matches!(v, AbsVal::Any))
            .map(AbsVal::dtype);
        let d = dtypes.next()??;
        dtypes.all(|o| o == Some(d)).then_some(d)
    }
}

/// A lowering writes the helpers it knows (`None` for the others, or where
/// what inference knows is not enough).
type Lowering = fn(&mut Emit, &Call) -> Option<NodeId>;

/// Every lowering, tried in turn.
const LOWERINGS: &[Lowering] = &[
    shapes::lower,
    gather::lower,
    scatter::lower,
    slices::lower,
    padding::lower,
    layout::lower,
    pool::lower,
    take::lower,
    linalg::lower,
];

/// `analysis` with the internal helpers of the graphs it holds written with
/// MindSpore primitives where it can be, checked again.
pub fn lower(analysis: &FileAnalysis) -> Result<FileAnalysis, ExportError> {
    let mut current = inline_unexportable(analysis)?;
    // A helper whose operand another helper makes has no inferred shape until
    // that one is written and the program inferred again: rounds until none
    // changes (a chain of helpers is short).
    for _ in 0..16 {
        match lower_by_shape(&current)? {
            Some(next) => current = next,
            None => break,
        }
    }
    Ok(current)
}

/// Whether export can write a call of `p` as it is.
fn exportable(p: &PrimRef) -> bool {
    ops::mindspore::export_mapping(&p.name).is_some()
}

/// Calls of primitives MindSpore has no counterpart of, replaced by their
/// expansions where the registry has one (re-inferred when any was).
fn inline_unexportable(analysis: &FileAnalysis) -> Result<FileAnalysis, ExportError> {
    let mut program = analysis.source.program();
    let mut changed = false;
    for (item, body) in program.graphs.iter_mut() {
        let (b, inlined) = autodiff::composites::expand_body_where(
            body,
            analysis::composite::instance_body,
            &|p| !exportable(p),
        )
        .map_err(|e| ExportError::Unsupported(format!("in `{item}`: {}", e.0)))?;
        if inlined {
            *body = Arc::new(b);
            changed = true;
        }
    }
    let inlined = if changed {
        reinfer(
            analysis,
            &program,
            "writing gradient helpers by their expansions",
        )?
    } else {
        analysis.clone()
    };
    // A branch's own `if`s are inferred once the branch is taken: rounds.
    // (The program's own `if`s on constants too: `if nesterov` called with
    // `false` for weights of two shapes needs no graph per shape.)
    let mut current = inlined;
    for _ in 0..8 {
        match fold_constant_switches(&current)? {
            Some(next) => current = next,
            None => break,
        }
    }
    Ok(current)
}

/// `if`s whose condition inference knows (an expansion's `Rank(weight) == 1`)
/// take their branch: the other is never run, and holds helpers no shape
/// was inferred for.
fn fold_constant_switches(analysis: &FileAnalysis) -> Result<Option<FileAnalysis>, ExportError> {
    let mut program = analysis.source.program();
    let mut changed = false;
    for (item, body) in program.graphs.iter_mut() {
        let mut replace: HashMap<NodeId, NodeId> = HashMap::new();
        for k in 0..body.nodes.len() {
            let n = NodeId(k as u32);
            if body.called_prim(n).is_none_or(|p| p.name != "Switch") {
                continue;
            }
            let [cond, on_true, on_false] = body.inputs(n)[1..] else {
                continue;
            };
            let known = |v: &AbsVal| match v {
                AbsVal::Scalar {
                    value: Some(ir::ScalarConst::Bool(b)),
                    ..
                } => Some(*b),
                _ => None,
            };
            // `Any`: the graph inferred on its own, without its callers'
            // values (see `ranked`); the specialisations decide.
            let values: Vec<AbsVal> = analysis
                .values_of(item, cond)
                .into_iter()
                .filter(|v| !matches!(v, AbsVal::Any))
                .collect();
            let Some(first) = values.first().and_then(known) else {
                continue;
            };
            if values.iter().all(|v| known(v) == Some(first)) {
                replace.insert(n, if first { on_true } else { on_false });
            }
        }
        if !replace.is_empty() {
            let mut b: Body = (**body).clone();
            autodiff::builder::replace_uses(&mut b, &replace);
            // The switches themselves are dead now (their other branch too).
            for g in b.graph_ids().collect::<Vec<_>>() {
                b.graph_mut(g).nodes.retain(|n| !replace.contains_key(n));
            }
            *body = Arc::new(b);
            changed = true;
        }
    }
    if !changed {
        return Ok(None);
    }
    reinfer(
        analysis,
        &program,
        "taking the known branches of expansions",
    )
    .map(Some)
}

/// The helpers whose writing needs shapes (see the module docs), written
/// where their operands' shapes are known; `None` when none could be.
fn lower_by_shape(analysis: &FileAnalysis) -> Result<Option<FileAnalysis>, ExportError> {
    let mut program = analysis.source.program();
    let mut changed = false;
    for (item, body) in program.graphs.iter_mut() {
        let mut b: Body = (**body).clone();
        let mut replace: HashMap<NodeId, NodeId> = HashMap::new();
        for g in b.graph_ids().collect::<Vec<_>>() {
            let nodes = std::mem::take(&mut b.graph_mut(g).nodes);
            for n in nodes {
                let lowered = b.called_prim(n).cloned().and_then(|p| {
                    let args: Vec<NodeId> = b.inputs(n)[1..].to_vec();
                    // Inference records no values for constants and weights: their own.
                    let values = args
                        .iter()
                        .map(|&a| match &b.node(a).kind {
                            NodeKind::Const(Value::Scalar { .. }) => {
                                vec![AbsVal::Tuple(Vec::new())]
                            }
                            NodeKind::Const(Value::Tensor(t)) => {
                                let dims: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
                                vec![AbsVal::tensor(t.dtype(), &dims)]
                            }
                            NodeKind::Weight(w) => analysis
                                .source
                                .weights
                                .get(w)
                                .map(|d| vec![AbsVal::from_ty(&d.ty)])
                                .unwrap_or_default(),
                            _ => analysis.values_of(item, a),
                        })
                        .collect();
                    let call = Call {
                        p: &p,
                        args: &args,
                        values,
                    };
                    let span = b.node(n).span;
                    let mut e = Emit {
                        body: &mut b,
                        graph: g,
                        span,
                    };
                    LOWERINGS.iter().find_map(|lower| lower(&mut e, &call))
                });
                match lowered {
                    Some(out) => {
                        replace.insert(n, out);
                        changed = true;
                    }
                    None => b.graph_mut(g).nodes.push(n),
                }
            }
        }
        autodiff::builder::replace_uses(&mut b, &replace);
        *body = Arc::new(b);
    }
    if !changed {
        return Ok(None);
    }
    reinfer(
        analysis,
        &program,
        "writing gradient helpers with MindSpore primitives",
    )
    .map(Some)
}

/// `analysis` with the graphs of `program` in place of its own, inferred
/// again; an error then is one that `what` made.
fn reinfer(
    analysis: &FileAnalysis,
    program: &ir::Program,
    what: &str,
) -> Result<FileAnalysis, ExportError> {
    let mut source = analysis.source.clone();
    for (name, body) in &program.graphs {
        let old = &source.graphs[name];
        source.graphs.insert(
            name.clone(),
            Arc::new(LoweredGraph {
                name: name.clone(),
                body: body.clone(),
                source_map: old.source_map.clone(),
                diagnostics: Vec::new(),
            }),
        );
    }
    infer_source(analysis, source, &format!("{what} broke the program"))
}

/// `analysis` with `source` in place of its own, inferred; an error then is
/// `failed: the first error`.
pub(crate) fn infer_source(
    analysis: &FileAnalysis,
    source: analysis::FileSource,
    failed: &str,
) -> Result<FileAnalysis, ExportError> {
    let order = analysis::infer::callees_first(&source, &source.order);
    let entries = analysis::infer::infer_all(&source, &order);
    if let Some(d) = entries
        .values()
        .flat_map(|e| e.diagnostics.iter())
        .find(|d| d.severity == analysis::Severity::Error)
    {
        return Err(ExportError::Unsupported(format!("{failed}: {}", d.message)));
    }
    Ok(FileAnalysis {
        parse: analysis.parse.clone(),
        source,
        entries,
        diagnostics: Vec::new(),
    })
}
