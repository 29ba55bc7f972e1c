//! Writing a DSL program as a `.mindir` model that MindSpore 2.10 loads
//! (`mindspore.load`) and runs (`nn.GraphCell`).
//!
//! The entry graph is `ModelProto.graph`; every graph it uses (nested graphs,
//! `if` branches, lambdas, other top-level graphs) is one of `functions`.
//! MindIR graphs take everything they use as inputs, so free variables are
//! lifted: a graph that captures values (or uses weights, which belong to the
//! entry graph) gets them as extra leading parameters, and a use of it as a
//! value becomes `Partial(graph, captured...)`, as MindSpore's own exporter
//! writes `if` branches. Primitives are written as MindSpore 2.10 spells them
//! ([`crate::ms_ops`]): primitive functions with their attributes as constant
//! inputs, old-style ones with attributes on the primitive. A literal scalar
//! combined with a tensor becomes a rank-0 tensor of the tensor's dtype, as
//! MindSpore's front end converts it. Each node carries its inferred type
//! (the `shape` attribute).

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::path::PathBuf;

use analysis::{Diagnostic, FileAnalysis};
use ir::{AbsVal, AttrValue, Body, DType, Dim, GraphId, NodeId, NodeKind, PrimRef, Shape, Value};
use prost::Message;
use tensor::{Buffer, Tensor};

use ops::mindspore::{ArgMap, Conv};

use crate::ms_ops;
use crate::proto::{
    attribute_proto::{AttributeType, SeqInfoProto},
    AttributeProto, GraphProto, ModelProto, NodeProto, PrimitiveProto, TensorProto, ValueInfoProto,
};

/// What to export and where relative paths (`load("...")`) start.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// The graph to export: default `main`, else the last graph.
    pub entry: Option<String>,
    /// The directory of the `.mir` file.
    pub base_dir: PathBuf,
    /// Symbolic dimensions fixed to a size (`--dim B=32`): a static graph.
    pub dims: std::collections::HashMap<String, i64>,
}

#[derive(Debug, Clone)]
pub enum ExportError {
    /// The program does not check.
    Check(Vec<Diagnostic>),
    /// No such entry graph.
    NoEntry(String),
    /// A construct MindIR export does not handle (named).
    Unsupported(String),
    /// An operation export cannot write, at its place in the source (for a
    /// gradient's operation, the operation it differentiates): a range of
    /// the program the analysis was made of.
    UnsupportedAt(String, ir::TextRange),
    /// A weight's value could not be made.
    Weight(String),
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportError::Check(d) => write!(f, "the program has {} error(s)", d.len()),
            ExportError::NoEntry(e) => write!(f, "no graph `{e}` to export"),
            ExportError::Unsupported(m) | ExportError::UnsupportedAt(m, _) => {
                write!(f, "cannot export: {m}")
            }
            ExportError::Weight(m) => write!(f, "cannot export a weight: {m}"),
        }
    }
}

impl std::error::Error for ExportError {}

/// Checks `text` and writes its entry graph as `.mindir` bytes.
pub fn export(text: &str, opts: &ExportOptions) -> Result<Vec<u8>, ExportError> {
    let analysis = analysis::analyze(text);
    if analysis.has_errors() {
        return Err(ExportError::Check(
            analysis
                .diagnostics
                .into_iter()
                .filter(|d| d.severity == analysis::Severity::Error)
                .collect(),
        ));
    }
    export_analysis(&analysis, opts)
}

/// Writes the entry graph of a checked program (one file's, or several
/// files linked: `analysis::link`) as `.mindir` bytes.
pub fn export_analysis(
    analysis: &FileAnalysis,
    opts: &ExportOptions,
) -> Result<Vec<u8>, ExportError> {
    Ok(export_program(analysis, opts)?.encode_to_vec())
}

/// A checked program's entry graph as a `ModelProto`.
pub fn export_program(
    analysis: &FileAnalysis,
    opts: &ExportOptions,
) -> Result<ModelProto, ExportError> {
    let program = analysis.source.program();
    let entry = match &opts.entry {
        Some(e) => e.clone(),
        None => ir::print_ms::entry_name(&program)
            .ok_or_else(|| ExportError::NoEntry("main".into()))?
            .to_string(),
    };
    if program.graph(&entry).is_none() {
        return Err(ExportError::NoEntry(entry));
    }
    let fixed = crate::export_dims::fix_dims(analysis, &opts.dims)?;
    // Gradients are written as the graphs they denote.
    let expanded = crate::export_grad::expand(&fixed, &entry)?;
    let expanded = crate::export_lower::lower(&expanded)?;
    let program = expanded.source.program();
    let mut ex = Exporter::new(&expanded, &program, &entry, opts)?;
    ex.run()
}

/// The graphs of `body` its root can reach through graph values: a branch
/// left dead (an `if` whose condition is known) is not written.
fn reachable_graphs(body: &Body) -> std::collections::HashSet<GraphId> {
    let mut seen = std::collections::HashSet::from([body.root()]);
    let mut work = vec![body.root()];
    while let Some(g) = work.pop() {
        let graph = body.graph(g);
        let uses = graph
            .nodes
            .iter()
            .flat_map(|&n| body.inputs(n).iter().copied())
            .chain(graph.output);
        for m in uses {
            if let NodeKind::Const(Value::Graph(h)) = &body.node(m).kind {
                if seen.insert(*h) {
                    work.push(*h);
                }
            }
        }
    }
    seen
}

/// A graph of the exported program: a graph of the body of a top-level graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct GKey {
    item: usize,
    graph: GraphId,
}

/// A value a graph may capture.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Val {
    Node(usize, NodeId),
    Weight(String),
}

struct Exporter<'a> {
    analysis: &'a FileAnalysis,
    entry: String,
    /// The entry inferred on its own (a fresh cache), so `other_values` holds
    /// exactly the specialisations this entry uses.
    entry_result: analysis::infer::EntryResult,
    opts: &'a ExportOptions,
    items: Vec<(String, &'a Body)>,
    graphs: Vec<GKey>,
    /// Each graph's lifted parameters, in order.
    fvs: HashMap<GKey, Vec<Val>>,
    names: HashMap<GKey, String>,
    prims: Vec<PrimitiveProto>,
    prim_ids: HashMap<String, String>,
    uid: usize,
    /// Weight names in declaration order.
    program_weights: Vec<String>,
    /// Graphs the graph being written refers to (see `run`).
    referenced: BTreeSet<GKey>,
}

impl<'a> Exporter<'a> {
    fn new(
        analysis: &'a FileAnalysis,
        program: &ir::Program,
        entry: &str,
        opts: &'a ExportOptions,
    ) -> Result<Self, ExportError> {
        // The top-level graphs the entry uses, entry first.
        let mut order = vec![entry.to_string()];
        let mut i = 0;
        while i < order.len() {
            let body = program.graph(&order[i]).expect("listed graphs exist");
            for n in &body.nodes {
                match &n.kind {
                    NodeKind::Const(Value::Global(name)) if !order.contains(name) => {
                        order.push(name.clone());
                    }
                    NodeKind::Const(Value::Meta(m)) => {
                        return Err(ExportError::Unsupported(format!(
                            "`{}` in graph `{}`: export the gradient of a graph is not supported \
                             yet (MindSpore's exporter writes graphs after differentiation)",
                            m.name(),
                            order[i]
                        )))
                    }
                    _ => {}
                }
            }
            i += 1;
        }
        let items: Vec<(String, &'a Body)> = order
            .iter()
            .map(|n| {
                let body: &'a Body = analysis
                    .source
                    .graphs
                    .get(n)
                    .map(|g| &*g.body)
                    .expect("listed graphs exist");
                (n.clone(), body)
            })
            .collect();
        let mut graphs = Vec::new();
        for (item, (_, body)) in items.iter().enumerate() {
            let live = reachable_graphs(body);
            for g in body.graph_ids().filter(|g| live.contains(g)) {
                graphs.push(GKey { item, graph: g });
            }
        }
        let mut ex = Exporter {
            analysis,
            entry: entry.to_string(),
            entry_result: analysis::infer::infer_entry(&analysis.source, entry),
            opts,
            items,
            graphs,
            fvs: HashMap::new(),
            names: HashMap::new(),
            prims: Vec::new(),
            prim_ids: HashMap::new(),
            uid: 0,
            program_weights: program.weights.iter().map(|w| w.name.clone()).collect(),
            referenced: BTreeSet::new(),
        };
        ex.name_graphs();
        ex.lift();
        Ok(ex)
    }

    fn body(&self, item: usize) -> &'a Body {
        self.items[item].1
    }

    fn name_graphs(&mut self) {
        let mut taken = std::collections::HashSet::new();
        for &k in &self.graphs {
            let body = self.body(k.item);
            let raw = if k.graph == body.root() {
                self.items[k.item].0.clone()
            } else {
                let own = body.graph(k.graph).name.clone();
                let clash = self.items.iter().any(|(n, _)| *n == own) || taken.contains(&own);
                if clash {
                    format!("{}.{own}", self.items[k.item].0)
                } else {
                    own
                }
            };
            let clean: String = raw
                .chars()
                .map(|c| {
                    if c == ':' || c.is_whitespace() {
                        '_'
                    } else {
                        c
                    }
                })
                .collect();
            let mut name = clean.clone();
            let mut n = 1;
            while !taken.insert(name.clone()) {
                name = format!("{clean}_{n}");
                n += 1;
            }
            self.names.insert(k, name);
        }
    }

    /// The graph that owns a value: weights belong to the entry's root.
    fn owner(&self, v: &Val) -> GKey {
        match v {
            Val::Node(item, n) => GKey {
                item: *item,
                graph: self.body(*item).node(*n).graph.unwrap_or(GraphId(0)),
            },
            Val::Weight(_) => GKey {
                item: 0,
                graph: GraphId(0),
            },
        }
    }

    /// The graph a graph-valued constant names.
    fn graph_of(&self, item: usize, v: &Value) -> Option<GKey> {
        match v {
            Value::Graph(g) => Some(GKey { item, graph: *g }),
            Value::Global(name) => self
                .items
                .iter()
                .position(|(n, _)| n == name)
                .map(|i| GKey {
                    item: i,
                    graph: GraphId(0),
                }),
            _ => None,
        }
    }

    /// Values a node of `item` refers to (`None` for constants).
    fn val(&self, item: usize, n: NodeId) -> Option<Val> {
        match &self.body(item).node(n).kind {
            NodeKind::Weight(w) => Some(Val::Weight(w.clone())),
            NodeKind::Const(_) => None,
            _ => Some(Val::Node(item, n)),
        }
    }

    /// Free variables of every graph, to a fixpoint (a graph captures what the
    /// graphs it uses as values capture, minus what it owns).
    fn lift(&mut self) {
        let mut fv: HashMap<GKey, BTreeSet<Val>> = HashMap::new();
        loop {
            let mut changed = false;
            for &k in &self.graphs {
                let body = self.body(k.item);
                let graph = body.graph(k.graph);
                let mut set = fv.get(&k).cloned().unwrap_or_default();
                let before = set.len();
                let uses = graph
                    .nodes
                    .iter()
                    .flat_map(|&n| body.inputs(n).iter().copied())
                    .chain(graph.output);
                for u in uses {
                    if let Some(v) = self.val(k.item, u) {
                        if self.owner(&v) != k {
                            set.insert(v);
                        }
                    } else if let NodeKind::Const(c) = &body.node(u).kind {
                        if let Some(h) = self.graph_of(k.item, c) {
                            if let Some(inner) = fv.get(&h) {
                                for v in inner.clone() {
                                    if self.owner(&v) != k {
                                        set.insert(v);
                                    }
                                }
                            }
                        }
                    }
                }
                if set.len() != before {
                    changed = true;
                }
                fv.insert(k, set);
            }
            if !changed {
                break;
            }
        }
        for (k, set) in fv {
            let mut list: Vec<Val> = set.into_iter().collect();
            list.sort_by_key(|v| match v {
                Val::Weight(w) => (0, self.program_weights.iter().position(|d| d == w), None),
                Val::Node(item, n) => (1, Some(*item), Some(*n)),
            });
            self.fvs.insert(k, list);
        }
    }

    fn next_uid(&mut self) -> usize {
        self.uid += 1;
        self.uid
    }

    fn run(&mut self) -> Result<ModelProto, ExportError> {
        // The entry, then each graph a written one refers to, once: a graph
        // used only inlined, or only in a branch known not to be taken, is
        // not written (alone it may have no single type).
        let mut graphs = Vec::new();
        let mut written = std::collections::HashSet::new();
        let mut work: Vec<GKey> = self.graphs.first().copied().into_iter().collect();
        while let Some(k) = work.pop() {
            if !written.insert(k) {
                continue;
            }
            graphs.push(self.graph(k)?);
            let mut used: Vec<GKey> = std::mem::take(&mut self.referenced).into_iter().collect();
            used.sort();
            used.reverse();
            work.extend(used.into_iter().filter(|h| !written.contains(h)));
        }
        let mut it = graphs.into_iter();
        let main = it.next();
        Ok(ModelProto {
            ir_version: Some("1.1".into()),
            producer_name: Some("MindSpore".into()),
            model_version: Some("2.10.0".into()),
            graph: main,
            functions: it.collect(),
            little_endian: Some(true),
            primitives: std::mem::take(&mut self.prims),
            mind_ir_version: Some(3),
            ..Default::default()
        })
    }

    fn prim(&mut self, ms_name: &str, prim_func: bool, attrs: Vec<AttributeProto>) -> String {
        let key = format!("{ms_name}|{prim_func}|{attrs:?}");
        if let Some(name) = self.prim_ids.get(&key) {
            return name.clone();
        }
        let uid = self.next_uid();
        let name = format!("{ms_name}:{uid}");
        self.prims.push(PrimitiveProto {
            name: Some(name.clone()),
            op_type: Some(ms_name.to_string()),
            attribute: attrs,
            instance_name: Some(String::new()),
            prim_type: Some(if prim_func { 2 } else { 1 }),
        });
        self.prim_ids.insert(key, name.clone());
        name
    }

    fn graph(&mut self, k: GKey) -> Result<GraphProto, ExportError> {
        let mut g = GraphBuilder {
            key: k,
            name: self.names[&k].clone(),
            nodes: Vec::new(),
            names: HashMap::new(),
            params: std::collections::HashSet::new(),
            consts: HashMap::new(),
        };
        let body = self.body(k.item);
        let graph = body.graph(k.graph);
        let mut inputs = Vec::new();
        let mut parameters = Vec::new();
        // Lifted parameters first: `Partial(graph, captured...)` binds them.
        for v in self.fvs.get(&k).cloned().unwrap_or_default() {
            let (label, ty) = match &v {
                Val::Weight(w) => (
                    w.replace('.', "_"),
                    self.weight_def(w).map(|d| AbsVal::from_ty(&d.ty)),
                ),
                Val::Node(item, n) => (
                    self.body(*item)
                        .node(*n)
                        .name
                        .clone()
                        .unwrap_or_else(|| format!("fv{}", n.0)),
                    self.abs(*item, *n),
                ),
            };
            let name = g.param_name(&label);
            inputs.push(value_info(&name, ty.as_ref()));
            g.names.insert(v, name);
        }
        for &p in &graph.params {
            let label = body
                .node(p)
                .name
                .clone()
                .unwrap_or_else(|| format!("p{}", p.0));
            let name = g.param_name(&label);
            // A parameter passed both literals and computed values (a loop
            // counter) has one type when its weakness is forgotten.
            let ty = self
                .abs(k.item, p)
                .or_else(|| self.joined(k.item, p))
                .or_else(|| {
                    body.node(p)
                        .annotation
                        .as_ref()
                        .map(|(t, _)| AbsVal::from_ty(t))
                });
            if k.item == 0 && k.graph == GraphId(0) {
                match &ty {
                    Some(AbsVal::Tensor { shape, .. }) if shape.rank().is_some() => {}
                    other => {
                        return Err(ExportError::Unsupported(format!(
                        "parameter `{label}` of `{}` is {}; a MindIR model's inputs are tensors \
                             of known rank (annotate it, e.g. `{label}: f32[3]`)",
                        self.entry,
                        other
                            .as_ref()
                            .map_or("not annotated".to_string(), |t| format!("a {t}"))
                    )))
                    }
                }
            }
            inputs.push(value_info(&name, ty.as_ref()));
            g.names.insert(Val::Node(k.item, p), name);
        }
        // Weights are the entry's parameters.
        if k.item == 0 && k.graph == GraphId(0) {
            let mut used: Vec<String> = Vec::new();
            for n in &body.nodes {
                if let NodeKind::Weight(w) = &n.kind {
                    if !used.contains(w) {
                        used.push(w.clone());
                    }
                }
            }
            for gk in &self.graphs {
                for v in self.fvs.get(gk).into_iter().flatten() {
                    if let Val::Weight(w) = v {
                        if !used.contains(w) {
                            used.push(w.clone());
                        }
                    }
                }
            }
            let declared: Vec<&String> = self.program_weights.iter().collect();
            used.sort_by_key(|w| declared.iter().position(|d| *d == w));
            for w in used {
                let def = self
                    .weight_def(&w)
                    .ok_or_else(|| ExportError::Weight(format!("`{w}` is not declared")))?;
                let (t, _) = exec::weights::init_weight(def, &self.opts.base_dir)
                    .map_err(|e| ExportError::Weight(format!("`{w}`: {e}")))?;
                let name = format!("{}:{w}", g.name);
                let mut proto = tensor_proto(&t);
                proto.name = Some(name.clone());
                proto.ref_key = Some(w.clone());
                proto.compression_type = Some(0);
                parameters.push(proto);
                g.names.insert(Val::Weight(w), name);
            }
        }
        for &n in &graph.nodes {
            self.cnode(&mut g, n)?;
        }
        let out = match graph.output {
            Some(o) => self.operand(&mut g, o, None)?,
            None => g.constant(self, &Value::None, None)?,
        };
        let out_ty = graph.output.and_then(|o| self.abs(k.item, o));
        Ok(GraphProto {
            node: g.nodes,
            name: Some(g.name.clone()),
            parameter: parameters,
            input: inputs,
            output: vec![value_info(&out, out_ty.as_ref())],
            ..Default::default()
        })
    }

    fn weight_def(&self, name: &str) -> Option<&'a ir::WeightDef> {
        self.analysis.source.weights.get(name)
    }

    /// The name of the value node `n` is, in graph `g` (emitting a constant,
    /// or a `Partial` for a graph that captures values, when needed).
    /// `like` is the dtype a scalar constant takes (a tensor's, beside it).
    fn operand(
        &mut self,
        g: &mut GraphBuilder,
        n: NodeId,
        like: Option<DType>,
    ) -> Result<String, ExportError> {
        let item = g.key.item;
        let body = self.body(item);
        if let Some(branch) = self.known_switch(g, n) {
            return self.operand(g, branch, like);
        }
        if let Some(v) = self.val(item, n) {
            if let Some(c) = g.consts.get(&v).cloned() {
                return g.constant(self, &c, like);
            }
            return g.names.get(&v).cloned().ok_or_else(|| {
                ExportError::Unsupported(format!(
                    "graph `{}` uses {:?} before it is computed",
                    g.name, v
                ))
            });
        }
        let NodeKind::Const(c) = &body.node(n).kind else {
            unreachable!("values are handled above")
        };
        if let Some(h) = self.graph_of(item, c) {
            self.refuse_ambiguous(h)?;
            let gname = self.names[&h].clone();
            self.referenced.insert(h);
            let fvs = self.fvs.get(&h).cloned().unwrap_or_default();
            if fvs.is_empty() {
                return Ok(gname);
            }
            let mut inputs = vec![gname];
            for v in &fvs {
                let captured = self.captured(g, v)?.ok_or_else(|| {
                    ExportError::Unsupported(format!(
                        "graph `{}` captures {v:?}, which `{}` does not have",
                        self.names[&h], g.name
                    ))
                })?;
                inputs.push(captured);
            }
            let prim = self.prim("Partial", false, vec![int_attr("side_effect_propagate", 1)]);
            let label = format!("CNode_p{}", n.0);
            return Ok(g.node(self, &label, &format!("REF::{prim}"), inputs, None));
        }
        g.constant(self, c, like)
    }

    /// [`Exporter::write_cnode`], an error placed at the node's source.
    fn cnode(&mut self, g: &mut GraphBuilder, n: NodeId) -> Result<(), ExportError> {
        self.write_cnode(g, n).map_err(|e| match e {
            ExportError::Unsupported(m) => match self.span_of(g.key.item, n) {
                Some(span) => ExportError::UnsupportedAt(m, span),
                None => ExportError::Unsupported(m),
            },
            other => other,
        })
    }

    /// Where node `n` of `item` is in the source: its span, or for a copy a
    /// transformation made without one (a gradient's forward pass), that of
    /// the program's call of the same primitive with the same attributes.
    fn span_of(&self, item: usize, n: NodeId) -> Option<ir::TextRange> {
        let body = self.body(item);
        if let Some(span) = body.node(n).span {
            return Some(span);
        }
        let p = body.called_prim(n)?;
        self.analysis.source.graphs.values().find_map(|g| {
            let b = &g.body;
            b.graph_ids().find_map(|h| {
                b.graph(h).nodes.iter().find_map(|&m| {
                    b.node(m)
                        .span
                        .filter(|_| b.called_prim(m).is_some_and(|q| q == p))
                })
            })
        })
    }

    fn write_cnode(&mut self, g: &mut GraphBuilder, n: NodeId) -> Result<(), ExportError> {
        let item = g.key.item;
        let body = self.body(item);
        let inputs = body.inputs(n).to_vec();
        if self.known_switch(g, n).is_some() {
            // Written where it is used (see `known_switch`).
            return Ok(());
        }
        // A number inference knows (`Shape(q)[2]` of a tensor with a symbolic
        // batch) is written as that number, as MindSpore's front end folds
        // it: its backend gives a dynamic shape's items as tensors, which
        // `Range` and other scalar inputs refuse.
        if let Some(AbsVal::Scalar {
            value: Some(value),
            dtype,
            ..
        }) = self.abs(item, n)
        {
            // (`Depend` orders side effects: it stays.)
            let pure = body.called_prim(n).is_some_and(|p| {
                p.name != "Depend"
                    && ops::lookup(&p.name).is_some_and(|d| d.category != ops::Category::State)
            });
            if pure {
                // Written where it is used, as a literal would be.
                let v = Value::Scalar {
                    value,
                    dtype,
                    weak: false,
                };
                g.consts.insert(Val::Node(item, n), v);
                return Ok(());
            }
        }
        // Arithmetic on known numbers (`Sqrt(8.0)`) is a number too, written
        // where it is used: beside a tensor as a rank-0 tensor of its dtype,
        // which MindSpore's tensor primitives want.
        if let Some(def) = body.called_prim(n).and_then(|p| ops::lookup(&p.name)) {
            if def.category == ops::Category::Elementwise
                && def.attrs().next().is_none()
                && inputs.len() > 1
            {
                if let Some(v) = self.fold_scalar(g, def, &inputs[1..]) {
                    g.consts.insert(Val::Node(item, n), v);
                    return Ok(());
                }
            }
        }
        let (&callee, args) = inputs
            .split_first()
            .ok_or_else(|| ExportError::Unsupported("a CNode without inputs".into()))?;
        let mut callee = callee;
        while let Some(branch) = self.known_switch(g, callee) {
            callee = branch;
        }
        let label = match body.node(n).name.as_deref() {
            Some(l) if !l.starts_with('%') => l.to_string(),
            _ => format!("CNode_{}", n.0),
        };
        let ty = self.abs(item, n);
        // A primitive, or a parameter of an inlined graph given one
        // (`dense_act(ReLU, ...)` calling `act(...)`), is called as that primitive.
        let name = match (self.given_prim(g, callee), &body.node(callee).kind) {
            (Some(Value::Prim(p)), _) => self.prim_call(g, &p, args, &label, ty.as_ref())?,
            (_, NodeKind::Const(c)) if self.graph_of(item, c).is_some() => {
                let h = self.graph_of(item, c).unwrap();
                // MindIR has no primitive values: a graph given one is
                // written where it is called, the primitive with it.
                let given_prims = args.iter().any(|&a| self.given_prim(g, a).is_some());
                if (self.ambiguous(h)
                    || self.takes_non_values(h)
                    || self.returns_holes(item, n)
                    || given_prims)
                    && !self.recursive(h)
                {
                    let mut ins = Vec::new();
                    let mut consts = Vec::new();
                    for &a in args {
                        // A primitive has no node: calls of it are written
                        // from `consts` (see `given_prim`).
                        let prim = self.given_prim(g, a);
                        ins.push(match prim {
                            Some(_) => String::new(),
                            None => self.operand(g, a, None)?,
                        });
                        consts.push(prim.or_else(|| self.const_number(g, a)));
                    }
                    let out = self.inline(g, h, ins, consts)?;
                    g.names.insert(Val::Node(item, n), out);
                    return Ok(());
                }
                self.refuse_ambiguous(h)?;
                let mut ins = Vec::new();
                for v in self.fvs.get(&h).cloned().unwrap_or_default() {
                    let captured = self.captured(g, &v)?.ok_or_else(|| {
                        ExportError::Unsupported(format!("`{}` lacks {v:?}", g.name))
                    })?;
                    ins.push(captured);
                }
                for &a in args {
                    ins.push(self.operand(g, a, None)?);
                }
                let op = format!("REF::{}", self.names[&h]);
                self.referenced.insert(h);
                g.node(self, &label, &op, ins, ty.as_ref())
            }
            (_, NodeKind::Const(Value::Meta(m))) => {
                return Err(ExportError::Unsupported(format!(
                    "`{}`: exporting a gradient is not supported yet",
                    m.name()
                )))
            }
            (_, NodeKind::Const(other)) => {
                return Err(ExportError::Unsupported(format!(
                    "calling the constant {other:?}"
                )))
            }
            _ => {
                let f = self.operand(g, callee, None)?;
                let mut ins = Vec::new();
                for &a in args {
                    ins.push(self.operand(g, a, None)?);
                }
                g.node(self, &label, &format!("REF::{f}"), ins, ty.as_ref())
            }
        };
        g.names.insert(Val::Node(item, n), name);
        Ok(())
    }

    fn prim_call(
        &mut self,
        g: &mut GraphBuilder,
        p: &PrimRef,
        args: &[NodeId],
        label: &str,
        ty: Option<&AbsVal>,
    ) -> Result<String, ExportError> {
        let item = g.key.item;
        let def = ops::lookup(&p.name)
            .ok_or_else(|| ExportError::Unsupported(format!("unknown primitive `{}`", p.name)))?;
        // The dtype scalars beside tensors take.
        let tensor_dtype = args.iter().find_map(|&a| match self.joined(item, a) {
            Some(AbsVal::Tensor { dtype, .. }) => Some(dtype),
            _ => None,
        });
        let all_scalar = args
            .iter()
            .all(|&a| matches!(self.joined(item, a), Some(AbsVal::Scalar { .. })));
        let elementwise = def.category == ops::Category::Elementwise;
        // Attribute-free arithmetic on numbers: MindSpore's scalar primitives.
        if elementwise && all_scalar && !args.is_empty() && def.attrs().next().is_none() {
            // Arithmetic on literals (`-1.0 / 0.0`, how import writes -inf) is a constant.
            if let Some(v) = self.fold_scalar(g, def, args) {
                return g.constant(self, &v, None);
            }
            return self.scalar_call(g, def.name, args, label, ty);
        }
        let like = if elementwise { tensor_dtype } else { None };
        // A maker of constants (`Fill(f32, (), 1.5)`: how import writes a
        // rank-0 tensor) is a constant in MindIR, as MindSpore folds it.
        if let Some(folded) = self.fold_maker(item, def, p, args) {
            return g.constant(self, &Value::Tensor(std::sync::Arc::new(folded)), None);
        }
        let structural = matches!(
            def.name,
            "MakeTuple"
                | "TupleGetItem"
                | "Switch"
                | "Partial"
                | "Depend"
                | "StopGradient"
                | "Load"
                | "UpdateState"
        );
        if structural {
            let mut ins = Vec::new();
            for &a in args {
                ins.push(self.operand(g, a, None)?);
            }
            let attrs = match def.name {
                "Depend" | "Partial" => vec![int_attr("side_effect_propagate", 1)],
                _ => Vec::new(),
            };
            let prim = self.prim(def.name, false, attrs);
            return Ok(g.node(self, label, &format!("REF::{prim}"), ins, ty));
        }
        let mapping = match ops::mindspore::export_mapping(def.name) {
            Some(Ok(m)) => m,
            Some(Err(e)) => return Err(ExportError::Unsupported(e.clone())),
            None => {
                return Err(ExportError::Unsupported(format!(
                    "`{}` has no MindSpore {} counterpart",
                    def.name,
                    ops::mindspore::SERIES
                )))
            }
        };
        let attr = |name: &str| -> Option<AttrValue> {
            p.attr(name)
                .cloned()
                .or_else(|| match def.param(name)?.kind {
                    ops::ParamKind::Attr {
                        default: Some(d), ..
                    } => Some(d.value()),
                    _ => None,
                })
        };
        // The sizes of the first input (a tensor's known shape, or a tuple of
        // known ints): the 3-D pools' "same" padding depends on them.
        let dims0: Option<Vec<Option<i64>>> =
            args.first().and_then(|&a| match self.joined(item, a)? {
                AbsVal::Tensor { shape, .. } => {
                    Some(shape.dims()?.iter().map(Dim::known).collect())
                }
                AbsVal::Tuple(items) => Some(
                    items
                        .iter()
                        .map(|v| match v {
                            AbsVal::Scalar {
                                value: Some(ir::ScalarConst::Int(i)),
                                ..
                            } => Some(*i),
                            _ => None,
                        })
                        .collect(),
                ),
                _ => None,
            });
        let kind = mapping.schema.map(|s| s.kind);
        match (&mapping.args, kind) {
            (Some(spec), kind) => {
                let old_style = kind == Some(ops::mindspore::MsKind::Primitive);
                // Attributes MindSpore's primitive function does not have can
                // only keep their defaults (an old-style primitive's are on
                // the primitive).
                for q in def.attrs().filter(|_| !old_style) {
                    let written = spec
                        .iter()
                        .any(|a| matches!(a, ArgMap::Attr(n, _) if *n == q.name))
                        || mapping.prim_attrs().contains(&q.name);
                    if !written
                        && p.attr(q.name)
                            .is_some_and(|v| Some(v) != attr_default(q).as_ref())
                    {
                        return Err(ExportError::Unsupported(format!(
                            "`{}`'s `{}`: MindSpore's `{}` has no such argument",
                            def.name, q.name, mapping.ms
                        )));
                    }
                }
                let mut ins = Vec::new();
                let mut next_input = 0;
                let ms_args: Vec<_> = mapping
                    .schema
                    .map(|s| s.node_inputs().collect())
                    .unwrap_or_default();
                for (k, a) in spec.iter().enumerate() {
                    match a {
                        ArgMap::Input => {
                            let &n = args.get(next_input).ok_or_else(|| {
                                ExportError::Unsupported(format!("`{}` lacks an input", def.name))
                            })?;
                            next_input += 1;
                            if pad_v3_unused_constant(mapping.ms, k, &attr) {
                                continue;
                            }
                            // MindSpore wants a tensor there: a constant number
                            // is written as a rank-0 tensor. (Where a number may
                            // stand, it stays one: `Range` wants its three
                            // inputs of one kind, and a dynamic-shape graph
                            // does not fold tensors into numbers for it.)
                            let wants_tensor = ms_args
                                .get(k)
                                .is_some_and(|m| matches!(m.ty, ops::mindspore::MsTy::Tensor));
                            if wants_tensor && like.is_none() {
                                if let Some(Value::Scalar { value, dtype, .. }) =
                                    self.const_number(g, n)
                                {
                                    let t = Tensor::scalar(dtype, value.as_f64());
                                    ins.push(g.constant(
                                        self,
                                        &Value::Tensor(std::sync::Arc::new(t)),
                                        None,
                                    )?);
                                    continue;
                                }
                            }
                            ins.push(self.operand(g, n, like)?);
                        }
                        ArgMap::Attr(name, conv) => {
                            let v = attr(name).ok_or_else(|| {
                                ExportError::Unsupported(format!(
                                    "`{}` needs its `{name}` attribute",
                                    def.name
                                ))
                            })?;
                            if old_style && matches!(v, AttrValue::DType(_)) {
                                // MindSpore wants a type object there (old-style `Fill`).
                                return Err(ExportError::Unsupported(format!(
                                    "`{}`: MindSpore's old-style `{}` takes `{name}` as a node \
                                     input dtype; not exported yet",
                                    def.name, mapping.ms
                                )));
                            }
                            let value = attr_to_value(&v, *conv).map_err(|e| {
                                ExportError::Unsupported(format!("`{}`'s `{name}`: {e}", def.name))
                            })?;
                            ins.push(g.constant(self, &value, None)?);
                        }
                        ArgMap::Fixed(f) => {
                            let value = fixed_value(f).map_err(|e| {
                                ExportError::Unsupported(format!("`{}`: {e}", mapping.ms))
                            })?;
                            ins.push(g.constant(self, &value, None)?);
                        }
                    }
                }
                // An update takes the state token last (spec §11).
                if let Some(&u) = args.get(next_input).filter(|_| ops::is_ordered(def.name)) {
                    ins.push(self.operand(g, u, None)?);
                }
                let prim = if old_style {
                    let mut attrs = old_style_attrs(def, mapping, &attr, dims0.as_deref())?;
                    if ops::effect_of(def.name).is_some() {
                        attrs.push(bool_attr("side_effect_mem", true));
                    }
                    self.prim(mapping.ms, false, attrs)
                } else {
                    // Registry attributes MindSpore keeps on the primitive
                    // (`ALIASES`: LayerNormGrad's `epsilon`).
                    let mut attrs = Vec::new();
                    for &name in mapping.prim_attrs() {
                        let v = attr(name).ok_or_else(|| {
                            ExportError::Unsupported(format!(
                                "`{}` needs its `{name}` attribute",
                                def.name
                            ))
                        })?;
                        attrs.extend(attribute_proto(name, &v));
                    }
                    if ops::effect_of(def.name).is_some() {
                        attrs.push(bool_attr("side_effect_mem", true));
                    }
                    self.prim(mapping.ms, true, attrs)
                };
                Ok(g.node(self, label, &format!("REF::{prim}"), ins, ty))
            }
            (None, None | Some(ops::mindspore::MsKind::Primitive)) => {
                let mut ins = Vec::new();
                for &a in args {
                    ins.push(self.operand(g, a, like)?);
                }
                let mut attrs = old_style_attrs(def, mapping, &attr, dims0.as_deref())?;
                if ops::effect_of(def.name).is_some() {
                    attrs.push(bool_attr("side_effect_mem", true));
                }
                let prim = self.prim(mapping.ms, false, attrs);
                Ok(g.node(self, label, &format!("REF::{prim}"), ins, ty))
            }
            (None, Some(ops::mindspore::MsKind::Function)) => {
                Err(ExportError::Unsupported(format!(
                    "`{}`: MindSpore's `{}` has no signature to write it with",
                    def.name, mapping.ms
                )))
            }
        }
    }
}

/// Whether MindSpore argument `k` of `ms` is PadV3's `constant_value` outside
/// its constant mode, which MindSpore's kernels refuse ("DO NOT set it") and
/// its own graphs leave out: the mode ignores the registry's input.
fn pad_v3_unused_constant(ms: &str, k: usize, attr: &dyn Fn(&str) -> Option<AttrValue>) -> bool {
    ms == "PadV3"
        && k == 2
        && attr("mode").is_some_and(|m| m.as_str().is_some_and(|m| m != "constant"))
}

mod proto;
mod scalars;
mod specialise;
mod windows;
use proto::*;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_float_encoding() {
        assert_eq!(f32_to_f16(1.0), 0x3c00);
        assert_eq!(f32_to_f16(-2.0), 0xc000);
        assert_eq!(f32_to_f16(0.0), 0);
        assert_eq!(f32_to_f16(f32::INFINITY), 0x7c00);
    }
}
