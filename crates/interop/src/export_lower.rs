//! Before export: the registry's internal gradient helpers are written with
//! MindSpore primitives. First, a helper MindSpore has no counterpart of
//! whose expansion the registry has (`ops/composite/gradient-helpers.mir`:
//! `_DenseGrad`, ...) is replaced by it; then the shape helpers
//! (`_SumToShapeOf`, `_BroadcastToShapeOf`, ...) are written using the shapes
//! inference knows, as MindSpore's own bprops do when they compute reduction
//! axes from static shapes; Gather's and GatherD's gradients (`_GatherGrad`,
//! `_GatherDGrad`), and Slice's, StridedSlice's and Tile's, become a
//! TensorScatterAdd; Concat's a StridedSlice. A helper left over is named by
//! export.

use std::collections::HashMap;
use std::sync::Arc;

use analysis::{FileAnalysis, LoweredGraph};
use ir::{AbsVal, AttrValue, Body, Dim, GraphId, NodeId, NodeKind, PrimRef, Value};

use crate::export::ExportError;

fn ints(v: &[i64]) -> AttrValue {
    AttrValue::Tuple(v.iter().map(|&i| AttrValue::Int(i)).collect())
}

/// The one ranked shape a node has in every specialisation (dimensions may be
/// symbolic: `B`).
fn ranked(values: &[AbsVal]) -> Option<Vec<Dim>> {
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
struct Emit<'b> {
    body: &'b mut Body,
    graph: GraphId,
    /// The helper call's span: the nodes that replace it keep its place.
    span: Option<ir::TextRange>,
}

impl Emit<'_> {
    fn prim(&mut self, name: &str, attrs: Vec<(&str, AttrValue)>, args: &[NodeId]) -> NodeId {
        let mut p = PrimRef::new(name);
        p.attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        self.body.add_prim_call(self.graph, p, args, self.span)
    }
}

/// `_SumToShapeOf(g, like)`: `g` summed over the axes `like` was broadcast
/// along: the leading ones, then those where `like` has size 1.
fn sum_to_shape(e: &mut Emit, g: NodeId, gs: &[Dim], like: &[Dim]) -> Option<NodeId> {
    let lead = gs.len().checked_sub(like.len())?;
    let mut out = g;
    if lead > 0 {
        let axes: Vec<i64> = (0..lead as i64).collect();
        out = e.prim(
            "ReduceSum",
            vec![("axis", ints(&axes)), ("keep_dims", AttrValue::Bool(false))],
            &[out],
        );
    }
    let mut axes = Vec::new();
    for (i, d) in like.iter().enumerate() {
        match (d, &gs[lead + i]) {
            (Dim::Known(1), Dim::Known(1)) => {}
            (Dim::Known(1), _) => axes.push(i as i64),
            (a, b) if a == b => {}
            (Dim::Known(_), Dim::Known(_)) => return None,
            // A size that may or may not be 1: not decidable statically.
            _ => return None,
        }
    }
    if !axes.is_empty() {
        out = e.prim(
            "ReduceSum",
            vec![("axis", ints(&axes)), ("keep_dims", AttrValue::Bool(true))],
            &[out],
        );
    }
    Some(out)
}

/// `_BroadcastToShapeOf(grad, like, axis, keep_dims, mean)`: the reduction's
/// gradient put back on `like`'s shape (the reduced axes restored, then
/// broadcast by adding `like`'s zeros, which works for symbolic sizes too).
fn broadcast_like(e: &mut Emit, grad: NodeId, like: NodeId, rank: usize, p: &PrimRef) -> NodeId {
    let r = rank as i64;
    let mut axes: Vec<i64> = match p.attr("axis").and_then(AttrValue::as_ints) {
        Some(a) if !a.is_empty() => a.iter().map(|&x| if x < 0 { x + r } else { x }).collect(),
        _ => (0..r).collect(),
    };
    axes.sort();
    axes.dedup();
    let keep = p
        .attr("keep_dims")
        .and_then(AttrValue::as_bool)
        .unwrap_or(false);
    let mut out = grad;
    if !keep {
        for &a in &axes {
            out = e.prim("ExpandDims", vec![("axis", AttrValue::Int(a))], &[out]);
        }
    }
    let zeros = e.prim("ZerosLike", Vec::new(), &[like]);
    out = e.prim("Add", Vec::new(), &[zeros, out]);
    if p.attr("mean").and_then(AttrValue::as_bool).unwrap_or(false) {
        let ones = e.prim("OnesLike", Vec::new(), &[like]);
        let count = e.prim(
            "ReduceSum",
            vec![("axis", ints(&axes)), ("keep_dims", AttrValue::Bool(true))],
            &[ones],
        );
        out = e.prim("RealDiv", Vec::new(), &[out, count]);
    }
    out
}

/// `_GatherGrad(x, indices, grad, axis, batch_dims)` and
/// `_GatherDGrad(x, index, grad, dim)`: `grad` added into zeros shaped like
/// `x` at the gathered positions. MindSpore's bprops scatter with
/// UnsortedSegmentSum (after moving `axis` to the front) and GatherDGradV2,
/// which the registry does not have; here `x`'s flat positions (an exclusive
/// cumulative sum of ones) are gathered as `x` was, which gives every element
/// of `grad` its flat position in `x`, whatever the axis, `batch_dims` or
/// rank, and one TensorScatterAdd into the flattened zeros adds them up
/// (repeated positions accumulate). The helpers keep gradient rules of their
/// own, so they have no DSL expansion (the autodiff would never use it).
fn gather_grad(e: &mut Emit, args: &[NodeId], p: &PrimRef) -> Option<NodeId> {
    // `_IndexScatterAdd(indices, updates, like, axis)` (Sort's, TopK's and
    // the other pickers' gradients) is GatherD's along `axis`.
    let [x, indices, grad] = match (p.name.as_str(), args) {
        ("_IndexScatterAdd", &[indices, updates, like]) => [like, indices, updates],
        (_, &[x, indices, grad]) => [x, indices, grad],
        _ => return None,
    };
    let attr = |k: &str| p.attr(k).cloned();
    let (dim, axis) = (attr("dim"), attr("axis"));
    let batch = attr("batch_dims").unwrap_or(AttrValue::Int(0));
    scatter_at_positions(e, x, grad, |e, positions| {
        Some(if p.name == "_GatherDGrad" {
            e.prim("GatherD", vec![("dim", dim?)], &[positions, indices])
        } else if p.name == "_IndexScatterAdd" {
            e.prim("GatherD", vec![("dim", axis?)], &[positions, indices])
        } else if p.name == "_GatherNdGrad" {
            e.prim("GatherNd", Vec::new(), &[positions, indices])
        } else {
            e.prim(
                "Gather",
                vec![("axis", axis?), ("batch_dims", batch)],
                &[positions, indices],
            )
        })
    })
}

/// `grad` added into zeros shaped like `like`, each element at the flat
/// position `take` picks for it from `like`'s flat positions (an exclusive
/// cumulative sum of ones, shaped like `like`): one TensorScatterAdd, so
/// repeated positions accumulate. `None` when `take` cannot say.
fn scatter_at_positions(
    e: &mut Emit,
    like: NodeId,
    grad: NodeId,
    take: impl FnOnce(&mut Emit, NodeId) -> Option<NodeId>,
) -> Option<NodeId> {
    let zeros = e.prim("ZerosLike", Vec::new(), &[like]);
    let flat = e.prim("Reshape", vec![("shape", ints(&[-1]))], &[zeros]);
    let ones = e.prim("OnesLike", Vec::new(), &[flat]);
    let ones = e.prim(
        "Cast",
        vec![("dtype", AttrValue::DType(ir::DType::I32))],
        &[ones],
    );
    let positions = e.prim(
        "CumSum",
        vec![
            ("axis", AttrValue::Int(0)),
            ("exclusive", AttrValue::Bool(true)),
            ("reverse", AttrValue::Bool(false)),
        ],
        &[ones],
    );
    let positions = e.prim("_ReshapeLike", Vec::new(), &[positions, like]);
    let at = take(e, positions)?;
    let at = e.prim("Reshape", vec![("shape", ints(&[-1, 1]))], &[at]);
    let updates = e.prim("Reshape", vec![("shape", ints(&[-1]))], &[grad]);
    let sum = e.prim("TensorScatterAdd", Vec::new(), &[flat, at, updates]);
    Some(e.prim("_ReshapeLike", Vec::new(), &[sum, like]))
}

/// The gradients of the slicing and tiling primitives, `_SliceGrad`,
/// `_StridedSliceGrad`, `_NarrowGrad`, `_SliceExtGrad` and `_TileGrad`
/// (`grad`, `like` and the forward's attributes): `grad` added into zeros shaped like `like` where the forward
/// took each element from, found as `gather_grad` finds them: the forward
/// (`Slice`, `StridedSlice`, `Tile`) applied to `like`'s flat positions gives
/// every element of `grad` its position, and one TensorScatterAdd adds them
/// up (a tile's copies of one element accumulate).
fn scatter_by_forward(e: &mut Emit, args: &[NodeId], p: &PrimRef) -> Option<NodeId> {
    let [grad, like] = *args else {
        return None;
    };
    let forward = match p.name.as_str() {
        "_SliceGrad" => "Slice",
        "_StridedSliceGrad" => "StridedSlice",
        "_TileGrad" => "Tile",
        "_NarrowGrad" => "Narrow",
        "_SliceExtGrad" => "SliceExt",
        _ => return None,
    };
    let attrs: Vec<(&str, AttrValue)> = p
        .attrs
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    scatter_at_positions(e, like, grad, |e, positions| {
        Some(e.prim(forward, attrs, &[positions]))
    })
}

/// `_PadGrad(grad, like, paddings, mode)` of a constant padding: the
/// unpadded box of `grad`, a `StridedSlice` (ends counted from the end, so
/// sizes may be symbolic). Other modes (mirrored positions summed) are left.
fn pad_grad(e: &mut Emit, grad: NodeId, rank: usize, p: &PrimRef) -> Option<NodeId> {
    let mode = p
        .attr("mode")
        .and_then(AttrValue::as_str)
        .unwrap_or("constant");
    let pads = p.attr("paddings")?.as_ints()?;
    if mode != "constant"
        || pads.len() % 2 != 0
        || pads.len() / 2 > rank
        || pads.iter().any(|&v| v < 0)
    {
        return None;
    }
    let rank = rank as i64;
    let (mut begin, mut end) = (vec![0; rank as usize], vec![0; rank as usize]);
    let (mut begin_mask, mut end_mask) = ((1i64 << rank) - 1, (1i64 << rank) - 1);
    // `(before, after)` pairs, the last dimension first.
    for (i, pair) in pads.chunks(2).enumerate() {
        let d = rank - 1 - i as i64;
        let (before, after) = (pair[0], pair[1]);
        if before > 0 {
            begin[d as usize] = before;
            begin_mask &= !(1 << d);
        }
        if after > 0 {
            end[d as usize] = -after;
            end_mask &= !(1 << d);
        }
    }
    Some(e.prim(
        "StridedSlice",
        vec![
            ("begin", ints(&begin)),
            ("end", ints(&end)),
            ("strides", ints(&vec![1; rank as usize])),
            ("begin_mask", AttrValue::Int(begin_mask)),
            ("end_mask", AttrValue::Int(end_mask)),
        ],
        &[grad],
    ))
}

/// `_ConcatGrad(grad, tensors, axis, index)`: element `index`'s part of
/// `grad`, a `StridedSlice` along `axis` (every other axis whole, by the
/// masks, so other sizes may be symbolic) at the offset the sizes of the
/// elements before it give; those sizes along `axis` must be known.
fn concat_grad(e: &mut Emit, grad: NodeId, parts: &[Vec<Dim>], p: &PrimRef) -> Option<NodeId> {
    let index = usize::try_from(p.attr("index")?.as_int()?).ok()?;
    let rank = parts.first()?.len() as i64;
    let axis = p.attr("axis").and_then(AttrValue::as_int).unwrap_or(0);
    let axis = if axis < 0 { axis + rank } else { axis };
    if !(0..rank).contains(&axis) || index >= parts.len() {
        return None;
    }
    let size = |k: usize| parts[k].get(axis as usize).and_then(Dim::known);
    let mut offset = 0;
    for k in 0..index {
        offset += size(k)?;
    }
    let end = offset + size(index)?;
    let at_axis =
        |v: i64| -> Vec<i64> { (0..rank).map(|i| if i == axis { v } else { 0 }).collect() };
    let whole = ((1i64 << rank) - 1) & !(1i64 << axis);
    Some(e.prim(
        "StridedSlice",
        vec![
            ("begin", ints(&at_axis(offset))),
            ("end", ints(&at_axis(end))),
            ("strides", ints(&vec![1; rank as usize])),
            ("begin_mask", AttrValue::Int(whole)),
            ("end_mask", AttrValue::Int(whole)),
        ],
        &[grad],
    ))
}

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
                    let values = |k: usize| match &b.node(args[k]).kind {
                        NodeKind::Const(Value::Scalar { .. }) => vec![AbsVal::Tuple(Vec::new())],
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
                        _ => analysis.values_of(item, args[k]),
                    };
                    let shapes: Vec<Option<Vec<Dim>>> =
                        (0..args.len()).map(|k| ranked(&values(k))).collect();
                    let shape = |k: usize| shapes.get(k).cloned().flatten();
                    let span = b.node(n).span;
                    let mut e = Emit {
                        body: &mut b,
                        graph: g,
                        span,
                    };
                    match p.name.as_str() {
                        "_SumToShapeOf" => {
                            let (gs, ls) = (shape(0)?, shape(1)?);
                            sum_to_shape(&mut e, args[0], &gs, &ls)
                        }
                        "_BroadcastToShapeOf" => {
                            let ls = shape(1)?;
                            Some(broadcast_like(&mut e, args[0], args[1], ls.len(), &p))
                        }
                        "_CastLike" => {
                            // The gradient of a cast whose input's dtype the
                            // transformation did not know: inference knows it.
                            let mut dtypes = analysis
                                .values_of(item, args[1])
                                .into_iter()
                                .map(|v| v.dtype());
                            let d = dtypes.next()??;
                            if !d.is_float() || dtypes.any(|o| o != Some(d)) {
                                return None;
                            }
                            Some(e.prim("Cast", vec![("dtype", AttrValue::DType(d))], &[args[0]]))
                        }
                        "_ReshapeLike" => {
                            // One size not known statically (a batch `B`)
                            // is MindSpore's -1: one program for every size.
                            let dims = shape(1)?;
                            if dims.iter().filter(|d| d.known().is_none()).count() > 1 {
                                return None;
                            }
                            let sizes: Vec<i64> =
                                dims.iter().map(|d| d.known().unwrap_or(-1)).collect();
                            Some(e.prim("Reshape", vec![("shape", ints(&sizes))], &[args[0]]))
                        }
                        "_GatherGrad" | "_GatherDGrad" | "_GatherNdGrad" | "_IndexScatterAdd" => {
                            gather_grad(&mut e, &args, &p)
                        }
                        "_SliceGrad" | "_StridedSliceGrad" | "_TileGrad" | "_NarrowGrad"
                        | "_SliceExtGrad" => scatter_by_forward(&mut e, &args, &p),
                        "_PadGrad" => pad_grad(&mut e, args[0], shape(1)?.len(), &p),
                        "_EmbeddingGrad" => {
                            // `Embedding`'s table gradient is `Gather`'s along
                            // axis 0 (without a padding row, frequency scaling
                            // or `EmbeddingLookup`'s offset, which zeroes rows
                            // out of range).
                            let plain = p.attr("offset").is_none()
                                && matches!(p.attr("padding_idx"), None | Some(AttrValue::None))
                                && !matches!(
                                    p.attr("scale_grad_by_freq"),
                                    Some(AttrValue::Bool(true))
                                );
                            if !plain {
                                return None;
                            }
                            let mut gather = PrimRef::new("_GatherGrad");
                            gather.attrs = vec![("axis".to_string(), AttrValue::Int(0))];
                            gather_grad(&mut e, &[args[2], args[1], args[0]], &gather)
                        }
                        "_TraceGrad" => {
                            // `grad` on the diagonal: `Eye(n, m) · grad`.
                            let like = shape(1)?;
                            let [n, m] = like.as_slice() else {
                                return None;
                            };
                            let (n, m) = (n.known()?, m.known()?);
                            let dtype = analysis.values_of(item, args[0]).first()?.dtype()?;
                            let eye = e.prim(
                                "Eye",
                                vec![
                                    ("n", AttrValue::Int(n)),
                                    ("m", AttrValue::Int(m)),
                                    ("dtype", AttrValue::DType(dtype)),
                                ],
                                &[],
                            );
                            Some(e.prim("Mul", Vec::new(), &[eye, args[0]]))
                        }
                        "_ConcatGrad" => {
                            let parts: Vec<Vec<Dim>> =
                                match analysis.values_of(item, args[1]).as_slice() {
                                    [AbsVal::Tuple(items)] => items
                                        .iter()
                                        .map(|v| ranked(std::slice::from_ref(v)))
                                        .collect::<Option<_>>()?,
                                    _ => return None,
                                };
                            concat_grad(&mut e, args[0], &parts, &p)
                        }
                        _ => None,
                    }
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
    infer_source(analysis, source, what)
}

/// `analysis` with `source` in place of its own, inferred; an error then is
/// one that `what` made.
pub(crate) fn infer_source(
    analysis: &FileAnalysis,
    source: analysis::FileSource,
    what: &str,
) -> Result<FileAnalysis, ExportError> {
    let order = analysis::infer::callees_first(&source, &source.order);
    let entries = analysis::infer::infer_all(&source, &order);
    if let Some(d) = entries
        .values()
        .flat_map(|e| e.diagnostics.iter())
        .find(|d| d.severity == analysis::Severity::Error)
    {
        return Err(ExportError::Unsupported(format!(
            "{what} broke the program: {}",
            d.message
        )));
    }
    Ok(FileAnalysis {
        parse: analysis.parse.clone(),
        source,
        entries,
        diagnostics: Vec::new(),
    })
}
