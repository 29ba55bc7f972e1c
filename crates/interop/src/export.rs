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
}

#[derive(Debug, Clone)]
pub enum ExportError {
    /// The program does not check.
    Check(Vec<Diagnostic>),
    /// No such entry graph.
    NoEntry(String),
    /// A construct MindIR export does not handle (named).
    Unsupported(String),
    /// A weight's value could not be made.
    Weight(String),
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportError::Check(d) => write!(f, "the program has {} error(s)", d.len()),
            ExportError::NoEntry(e) => write!(f, "no graph `{e}` to export"),
            ExportError::Unsupported(m) => write!(f, "cannot export: {m}"),
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
    // Gradients are written as the graphs they denote.
    let expanded = crate::export_grad::expand(analysis, &entry)?;
    let expanded = crate::export_lower::lower(&expanded)?;
    let program = expanded.source.program();
    let mut ex = Exporter::new(&expanded, &program, &entry, opts)?;
    ex.run()
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
            for g in body.graph_ids() {
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

    /// The inferred value of a node in the entry's specialisation.
    fn values(&self, item: usize, n: NodeId) -> Vec<AbsVal> {
        if let NodeKind::Const(v) = &self.body(item).node(n).kind {
            return vec![ir::print_ms::const_abstract(v)];
        }
        let name = &self.items[item].0;
        let entry = &self.entry_result;
        let own = if item == 0 {
            entry.node_values.get(&n)
        } else {
            entry.other_values.get(name).and_then(|m| m.get(&n))
        };
        match own {
            Some(v) if !v.is_empty() => v.clone(),
            // A graph called through its declared signature: its own check.
            _ => self.analysis.values_of(name, n),
        }
    }

    /// The node's type when every specialisation agrees on it.
    fn abs(&self, item: usize, n: NodeId) -> Option<AbsVal> {
        let values = self.values(item, n);
        let first = values.first()?.widen();
        if values.iter().any(|v| v.widen() != first) {
            return None;
        }
        let mut it = values.iter();
        let first = it.next()?.clone();
        it.try_fold(first, |acc, v| acc.join(v))
    }

    /// The node's types joined over the specialisations (dtypes agree even
    /// when shapes differ).
    fn joined(&self, item: usize, n: NodeId) -> Option<AbsVal> {
        let values = self.values(item, n);
        let mut it = values.iter();
        let first = it.next()?.clone();
        it.try_fold(first, |acc, v| acc.join(v))
    }

    /// Whether graph `k` (or a graph nested in it) is used with different
    /// types: MindIR needs one graph per specialisation.
    fn ambiguous(&self, k: GKey) -> bool {
        let body = self.body(k.item);
        body.graph_ids()
            .filter(|&g| body.is_within(g, k.graph))
            .any(|g| {
                let graph = body.graph(g);
                graph
                    .params
                    .iter()
                    .chain(&graph.nodes)
                    .any(|&n| self.abs(k.item, n).is_none() && self.values(k.item, n).len() > 1)
            })
    }

    /// Whether graph `k` takes `none`, strings, dtypes or values of unknown
    /// type, which MindSpore cannot pass between graphs (its own front end
    /// folds them away): such calls are inlined.
    fn takes_non_values(&self, k: GKey) -> bool {
        fn plain(v: &AbsVal) -> bool {
            match v {
                AbsVal::Tensor { .. } | AbsVal::Scalar { .. } | AbsVal::Func(_) => true,
                AbsVal::Tuple(items) => items.iter().all(plain),
                AbsVal::None | AbsVal::Str(_) | AbsVal::Any | AbsVal::Monad => false,
            }
        }
        let body = self.body(k.item);
        body.graph(k.graph)
            .params
            .iter()
            .any(|&p| self.values(k.item, p).iter().any(|v| !plain(v)))
    }

    /// Whether graph `k` can reach itself through the graphs it uses.
    fn recursive(&self, k: GKey) -> bool {
        let mut seen = std::collections::HashSet::new();
        let mut work = vec![k];
        while let Some(x) = work.pop() {
            let body = self.body(x.item);
            for &n in &body.graph(x.graph).nodes {
                for &i in body.inputs(n) {
                    if let NodeKind::Const(c) = &body.node(i).kind {
                        if let Some(h) = self.graph_of(x.item, c) {
                            if h == k {
                                return true;
                            }
                            if seen.insert(h) {
                                work.push(h);
                            }
                        }
                    }
                }
            }
            // Nested graphs run as part of their parent.
            for child in body.children(x.graph) {
                let c = GKey {
                    item: x.item,
                    graph: child,
                };
                if seen.insert(c) {
                    work.push(c);
                }
            }
        }
        false
    }

    /// `h`'s body written into `g` in place of a call (`args` its arguments).
    fn inline(
        &mut self,
        g: &mut GraphBuilder,
        h: GKey,
        args: Vec<String>,
    ) -> Result<String, ExportError> {
        let body = self.body(h.item);
        let graph = body.graph(h.graph);
        if graph.params.len() != args.len() {
            return Err(ExportError::Unsupported(format!(
                "`{}` takes {} arguments but is given {}",
                self.names[&h],
                graph.params.len(),
                args.len()
            )));
        }
        let caller = g.key;
        g.key = h;
        for (&p, a) in graph.params.iter().zip(args) {
            g.names.insert(Val::Node(h.item, p), a);
        }
        let result = (|| {
            for &n in &graph.nodes {
                self.cnode(g, n)?;
            }
            match graph.output {
                Some(o) => self.operand(g, o, None),
                None => g.constant(self, &Value::None, None),
            }
        })();
        g.key = caller;
        result
    }

    fn refuse_ambiguous(&self, h: GKey) -> Result<(), ExportError> {
        if self.ambiguous(h) {
            return Err(ExportError::Unsupported(format!(
                "graph `{}` is used with different types (shapes); MindIR needs one graph per \
                 specialisation, and export only inlines direct calls of graphs that are not \
                 recursive",
                self.names[&h]
            )));
        }
        Ok(())
    }

    fn run(&mut self) -> Result<ModelProto, ExportError> {
        let mut graphs = Vec::new();
        for k in self.graphs.clone() {
            // Graphs nothing reaches are still written (MindSpore ignores them).
            graphs.push(self.graph(k)?);
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
        if let Some(v) = self.val(item, n) {
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
            let fvs = self.fvs.get(&h).cloned().unwrap_or_default();
            if fvs.is_empty() {
                return Ok(gname);
            }
            let mut inputs = vec![gname];
            for v in &fvs {
                inputs.push(g.names.get(v).cloned().ok_or_else(|| {
                    ExportError::Unsupported(format!(
                        "graph `{}` captures {v:?}, which `{}` does not have",
                        self.names[&h], g.name
                    ))
                })?);
            }
            let prim = self.prim("Partial", false, vec![int_attr("side_effect_propagate", 1)]);
            let label = format!("CNode_p{}", n.0);
            return Ok(g.node(self, &label, &format!("REF::{prim}"), inputs, None));
        }
        g.constant(self, c, like)
    }

    fn cnode(&mut self, g: &mut GraphBuilder, n: NodeId) -> Result<(), ExportError> {
        let item = g.key.item;
        let body = self.body(item);
        let inputs = body.inputs(n).to_vec();
        let (&callee, args) = inputs
            .split_first()
            .ok_or_else(|| ExportError::Unsupported("a CNode without inputs".into()))?;
        let label = match body.node(n).name.as_deref() {
            Some(l) if !l.starts_with('%') => l.to_string(),
            _ => format!("CNode_{}", n.0),
        };
        let ty = self.abs(item, n);
        let name = match &body.node(callee).kind {
            NodeKind::Const(Value::Prim(p)) => self.prim_call(g, p, args, &label, ty.as_ref())?,
            NodeKind::Const(c) if self.graph_of(item, c).is_some() => {
                let h = self.graph_of(item, c).unwrap();
                if (self.ambiguous(h) || self.takes_non_values(h)) && !self.recursive(h) {
                    let mut ins = Vec::new();
                    for &a in args {
                        ins.push(self.operand(g, a, None)?);
                    }
                    let out = self.inline(g, h, ins)?;
                    g.names.insert(Val::Node(item, n), out);
                    return Ok(());
                }
                self.refuse_ambiguous(h)?;
                let mut ins = Vec::new();
                for v in self.fvs.get(&h).cloned().unwrap_or_default() {
                    ins.push(g.names.get(&v).cloned().ok_or_else(|| {
                        ExportError::Unsupported(format!("`{}` lacks {v:?}", g.name))
                    })?);
                }
                for &a in args {
                    ins.push(self.operand(g, a, None)?);
                }
                let op = format!("REF::{}", self.names[&h]);
                g.node(self, &label, &op, ins, ty.as_ref())
            }
            NodeKind::Const(Value::Meta(m)) => {
                return Err(ExportError::Unsupported(format!(
                    "`{}`: exporting a gradient is not supported yet",
                    m.name()
                )))
            }
            NodeKind::Const(other) => {
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
            if let Some(v) = self.fold_scalar(item, def, args) {
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
                        .any(|a| matches!(a, ArgMap::Attr(n, _) if *n == q.name));
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
                            // MindSpore wants a tensor there: a constant number
                            // is written as a rank-0 tensor.
                            let wants_tensor = ms_args.get(k).is_some_and(|m| m.ty.is_tensor());
                            if wants_tensor && like.is_none() {
                                if let NodeKind::Const(Value::Scalar { value, dtype, .. }) =
                                    &self.body(item).node(n).kind
                                {
                                    let t = Tensor::scalar(*dtype, value.as_f64());
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
                    let mut attrs = old_style_attrs(def, mapping, &attr)?;
                    if ops::effect_of(def.name).is_some() {
                        attrs.push(bool_attr("side_effect_mem", true));
                    }
                    self.prim(mapping.ms, false, attrs)
                } else {
                    let attrs = if ops::effect_of(def.name).is_some() {
                        vec![bool_attr("side_effect_mem", true)]
                    } else {
                        Vec::new()
                    };
                    self.prim(mapping.ms, true, attrs)
                };
                Ok(g.node(self, label, &format!("REF::{prim}"), ins, ty))
            }
            (None, None | Some(ops::mindspore::MsKind::Primitive)) => {
                let mut ins = Vec::new();
                for &a in args {
                    ins.push(self.operand(g, a, like)?);
                }
                let mut attrs = old_style_attrs(def, mapping, &attr)?;
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

    /// An elementwise primitive on scalar constants, evaluated.
    fn fold_scalar(&self, item: usize, def: &ops::OpDef, args: &[NodeId]) -> Option<Value> {
        let body = self.body(item);
        let mut inputs = Vec::new();
        for &a in args {
            let NodeKind::Const(Value::Scalar { value, dtype, .. }) = &body.node(a).kind else {
                return None;
            };
            inputs.push(ops::KValue::Tensor(Tensor::scalar(*dtype, value.as_f64())));
        }
        let ops::KValue::Tensor(t) = ops::eager::call(def.name, &inputs, Vec::new()).ok()? else {
            return None;
        };
        let x = *t.to_f64_vec().first()?;
        let value = match t.dtype() {
            DType::Bool => ir::ScalarConst::Bool(x != 0.0),
            d if d.is_float() => ir::ScalarConst::Float(x),
            _ => ir::ScalarConst::Int(x as i64),
        };
        Some(Value::Scalar {
            value,
            dtype: t.dtype(),
            weak: false,
        })
    }

    /// The value of `Fill`/`Zeros`/`Ones` on constant arguments (small ones).
    fn fold_maker(
        &self,
        item: usize,
        def: &ops::OpDef,
        p: &PrimRef,
        args: &[NodeId],
    ) -> Option<Tensor> {
        if !matches!(def.name, "Fill" | "Zeros" | "Ones") {
            return None;
        }
        let body = self.body(item);
        let mut inputs = Vec::new();
        for &a in args {
            let NodeKind::Const(c) = &body.node(a).kind else {
                return None;
            };
            let t = match c {
                Value::Scalar { value, dtype, .. } => Tensor::scalar(*dtype, value.as_f64()),
                Value::Tensor(t) => (**t).clone(),
                _ => return None,
            };
            inputs.push(ops::KValue::Tensor(t));
        }
        let attrs: Vec<(&'static str, AttrValue)> = p
            .attrs
            .iter()
            .filter_map(|(k, v)| def.param(k).map(|q| (q.name, v.clone())))
            .collect();
        match ops::eager::call(def.name, &inputs, attrs) {
            Ok(ops::KValue::Tensor(t)) if t.numel() <= 4096 => Some(t),
            _ => None,
        }
    }

    /// Scalar arithmetic and comparisons: MindSpore's scalar primitives.
    fn scalar_call(
        &mut self,
        g: &mut GraphBuilder,
        name: &str,
        args: &[NodeId],
        label: &str,
        ty: Option<&AbsVal>,
    ) -> Result<String, ExportError> {
        let ms = match name {
            "Add" => "ScalarAdd",
            "Sub" => "ScalarSub",
            "Mul" => "ScalarMul",
            "RealDiv" => "ScalarDiv",
            "Less" => "ScalarLt",
            "LessEqual" => "ScalarLe",
            "Greater" => "ScalarGt",
            "GreaterEqual" => "ScalarGe",
            "Equal" => "ScalarEq",
            // MindSpore's own scalar primitives (the registry has them too),
            // when they take no attributes.
            other
                if other.starts_with("Scalar")
                    && ops::lookup(other).is_some_and(|d| d.attrs().next().is_none()) =>
            {
                other
            }
            other => {
                return Err(ExportError::Unsupported(format!(
                    "`{other}` on scalars (MindIR has no scalar form of it)"
                )))
            }
        };
        let mut ins = Vec::new();
        for &a in args {
            ins.push(self.operand(g, a, None)?);
        }
        let prim = self.prim(ms, false, Vec::new());
        Ok(g.node(self, label, &format!("REF::{prim}"), ins, ty))
    }
}

/// Nodes of one graph being written.
struct GraphBuilder {
    key: GKey,
    name: String,
    nodes: Vec<NodeProto>,
    names: HashMap<Val, String>,
    params: std::collections::HashSet<String>,
}

impl GraphBuilder {
    /// `graph:label`, unique among the graph's parameters.
    fn param_name(&mut self, label: &str) -> String {
        let mut name = format!("{}:{label}", self.name);
        let mut k = 1;
        while !self.params.insert(name.clone()) {
            name = format!("{}:{label}_{k}", self.name);
            k += 1;
        }
        name
    }

    fn node(
        &mut self,
        ex: &mut Exporter,
        label: &str,
        op_type: &str,
        inputs: Vec<String>,
        ty: Option<&AbsVal>,
    ) -> String {
        let uid = ex.next_uid();
        let label: String = label
            .chars()
            .map(|c| if c == ':' { '_' } else { c })
            .collect();
        let name = format!("{}:{label}:{uid}", self.name);
        let mut attribute = Vec::new();
        if let Some(t) = ty.and_then(|t| shape_attr(t, "shape")) {
            attribute.push(t);
        }
        self.nodes.push(NodeProto {
            input: inputs,
            output: vec![name.clone()],
            name: Some(name.clone()),
            op_type: Some(op_type.to_string()),
            attribute,
            domain: Some(String::new()),
            ..Default::default()
        });
        name
    }

    fn constant(
        &mut self,
        ex: &mut Exporter,
        v: &Value,
        like: Option<DType>,
    ) -> Result<String, ExportError> {
        let value = value_attr(v, like)?;
        let name = format!("ValueNode_{}", ex.next_uid());
        self.nodes.push(NodeProto {
            output: vec![name.clone()],
            name: Some(name.clone()),
            op_type: Some("Constant".into()),
            attribute: vec![AttributeProto {
                name: Some("value".into()),
                ..value
            }],
            domain: Some(String::new()),
            ..Default::default()
        });
        Ok(name)
    }
}

fn int_attr(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        i: Some(v),
        r#type: Some(AttributeType::Int64 as i32),
        ..Default::default()
    }
}

fn str_attr(name: &str, s: &str) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        s: Some(s.as_bytes().to_vec()),
        r#type: Some(AttributeType::String as i32),
        ..Default::default()
    }
}

fn bool_attr(name: &str, b: bool) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        i: Some(b as i64),
        r#type: Some(AttributeType::Bool as i32),
        ..Default::default()
    }
}

fn float_attr(name: &str, x: f32) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        f: Some(x),
        r#type: Some(AttributeType::Float as i32),
        ..Default::default()
    }
}

/// A tuple of ints as MindSpore writes attribute tuples: each element an
/// `Int64` attribute with its value in `ints`.
fn ints_attr(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Tuple as i32),
        values: v
            .iter()
            .map(|&x| AttributeProto {
                ints: vec![x],
                r#type: Some(AttributeType::Int64 as i32),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn strings_attr(name: &str, v: &[&str]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::List as i32),
        values: v
            .iter()
            .map(|s| AttributeProto {
                strings: vec![s.as_bytes().to_vec()],
                r#type: Some(AttributeType::String as i32),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// `n` or `(h, w)` as MindSpore's 4-element NCHW form `(1, 1, h, w)`.
fn nchw4(v: &AttrValue) -> Option<Vec<i64>> {
    let ints = v.as_ints()?;
    Some(match ints.as_slice() {
        [a] => vec![1, 1, *a, *a],
        [a, b] => vec![1, 1, *a, *b],
        [_, _, _, _] => ints,
        _ => return None,
    })
}

fn pair(v: &AttrValue) -> Option<Vec<i64>> {
    let ints = v.as_ints()?;
    Some(match ints.as_slice() {
        [a] => vec![*a, *a],
        [a, b] => vec![*a, *b],
        [1, 1, a, b] => vec![*a, *b],
        _ => return None,
    })
}

/// The attributes of an old-style primitive, as MindSpore 2.10 sets them.
fn old_style_attrs(
    def: &ops::OpDef,
    mapping: &ops::mindspore::Mapping,
    attr: &dyn Fn(&str) -> Option<AttrValue>,
) -> Result<Vec<AttributeProto>, ExportError> {
    let name = def.name;
    let bad = |what: &str| ExportError::Unsupported(format!("`{name}`'s `{what}` is not valid"));
    let get = |what: &'static str| attr(what).ok_or_else(|| bad(what));
    let string = |what: &'static str| -> Result<String, ExportError> {
        get(what)?
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| bad(what))
    };
    Ok(match name {
        "Conv2D" | "Conv2DTranspose" | "Conv2DBackpropInput" | "Conv2DBackpropFilter" => {
            // MindSpore's C++ reads these as it stores them: NCHW 4-tuples for
            // stride and dilation, 4 paddings, `format`, and (the backward
            // forms) `pad_list` and an upper-case `pad_mode`.
            let backward = name != "Conv2D";
            let pad_mode = if backward {
                string("pad_mode")?.to_ascii_uppercase()
            } else {
                string("pad_mode")?.to_ascii_lowercase()
            };
            let pad = get("pad")?.as_ints().ok_or_else(|| bad("pad"))?;
            let pad4 = match pad.as_slice() {
                [p] => vec![*p; 4],
                [a, b, c, d] => vec![*a, *b, *c, *d],
                _ => return Err(bad("pad")),
            };
            let group = get("group")?.as_int().ok_or_else(|| bad("group"))?;
            vec![
                ints_attr(
                    "kernel_size",
                    &pair(&get("kernel_size")?).ok_or_else(|| bad("kernel_size"))?,
                ),
                int_attr("mode", get("mode")?.as_int().ok_or_else(|| bad("mode"))?),
                int_attr(
                    "out_channel",
                    get("out_channel")?
                        .as_int()
                        .ok_or_else(|| bad("out_channel"))?,
                ),
                strings_attr(
                    "input_names",
                    match name {
                        "Conv2D" => &["x", "w"][..],
                        "Conv2DBackpropFilter" => &["out_backprop", "input", "filter_sizes"][..],
                        _ => &["out_backprop", "filter", "input_sizes"][..],
                    },
                ),
                ints_attr("pad", &pad4),
                str_attr("pad_mode", &pad_mode),
                str_attr("format", &string("data_format")?),
                int_attr("groups", group),
                ints_attr(
                    "stride",
                    &nchw4(&get("stride")?).ok_or_else(|| bad("stride"))?,
                ),
                int_attr("group", group),
                ints_attr(
                    "dilation",
                    &nchw4(&get("dilation")?).ok_or_else(|| bad("dilation"))?,
                ),
                strings_attr("output_names", &["output"]),
            ]
            .into_iter()
            .chain(backward.then(|| {
                let list = attr("pad_list")
                    .and_then(|v| v.as_ints())
                    .filter(|v| v.len() == 4)
                    .unwrap_or_else(|| pad4.clone());
                ints_attr("pad_list", &list)
            }))
            .collect()
        }
        "MaxPool" => vec![
            str_attr("pad_mode", &string("pad_mode")?.to_ascii_uppercase()),
            strings_attr("output_names", &["output"]),
            ints_attr(
                "kernel_size",
                &nchw4(&get("kernel_size")?).ok_or_else(|| bad("kernel_size"))?,
            ),
            str_attr("format", &string("data_format")?),
            ints_attr(
                "strides",
                &nchw4(&get("strides")?).ok_or_else(|| bad("strides"))?,
            ),
            strings_attr("input_names", &["x"]),
        ],
        "SparseSoftmaxCrossEntropyWithLogits" => vec![
            bool_attr(
                "is_grad",
                get("is_grad")?.as_bool().ok_or_else(|| bad("is_grad"))?,
            ),
            strings_attr("input_names", &["features", "labels"]),
            strings_attr("output_names", &["output"]),
            float_attr("sens", 1.0),
        ],
        "SoftmaxCrossEntropyWithLogits" => Vec::new(),
        // As MindSpore's constructor adds them: a fusion group and a mark
        // that keeps the collective from being optimised away.
        "AllReduce" => {
            let mut attrs = generic_old_style_attrs(def, mapping, attr)?;
            attrs.push(int_attr("fusion", 0));
            attrs.push(bool_attr("no_eliminate", true));
            attrs
        }
        _ => generic_old_style_attrs(def, mapping, attr)?,
    })
}

/// The attributes of an old-style primitive without a convention of its own:
/// each `__init__` argument under MindSpore's name, with the registry's value
/// (or MindSpore's default where the registry does not have it).
fn generic_old_style_attrs(
    def: &ops::OpDef,
    mapping: &ops::mindspore::Mapping,
    attr: &dyn Fn(&str) -> Option<AttrValue>,
) -> Result<Vec<AttributeProto>, ExportError> {
    let Some(schema) = mapping.schema.filter(|s| s.args.is_some()) else {
        return Err(ExportError::Unsupported(format!(
            "`{}`: MindSpore's `{}` has no signature to write it with",
            def.name, mapping.ms
        )));
    };
    let mut out = Vec::new();
    let inputs: Vec<&str> = schema.node_inputs().map(|a| a.name).collect();
    if !inputs.is_empty() {
        out.push(strings_attr("input_names", &inputs));
    }
    for a in schema.args() {
        if a.role != ops::mindspore::MsRole::Attr {
            continue;
        }
        let value = match mapping.attr(a.name) {
            Some(ours) => attr(ours),
            None => match a.default {
                Some(d) => fixed_value(&d).ok().map(|v| value_to_attr_value(&v)),
                None => None,
            },
        };
        let Some(value) = value else {
            return Err(ExportError::Unsupported(format!(
                "`{}`: MindSpore's `{}` needs `{}`, which the registry does not have",
                def.name, mapping.ms, a.name
            )));
        };
        if let Some(proto) = attribute_proto(a.name, &value) {
            out.push(proto);
        }
    }
    out.push(strings_attr("output_names", &["output"]));
    Ok(out)
}

/// An attribute value as an attribute of an old-style primitive.
fn attribute_proto(name: &str, v: &AttrValue) -> Option<AttributeProto> {
    Some(match v {
        AttrValue::Int(i) => int_attr(name, *i),
        AttrValue::Float(x) => float_attr(name, x.0 as f32),
        AttrValue::Bool(b) => bool_attr(name, *b),
        AttrValue::Str(s) => str_attr(name, s),
        AttrValue::DType(d) => int_attr(name, ms_ops::type_id(*d)),
        AttrValue::Tuple(_) => ints_attr(name, &v.as_ints()?),
        AttrValue::None => return None,
    })
}

/// The attribute value of a constant (for MindSpore defaults).
fn value_to_attr_value(v: &Value) -> AttrValue {
    match v {
        Value::Scalar { value, .. } => match value {
            ir::ScalarConst::Bool(b) => AttrValue::Bool(*b),
            ir::ScalarConst::Int(i) => AttrValue::Int(*i),
            ir::ScalarConst::Float(x) => AttrValue::float(*x),
        },
        Value::Str(s) => AttrValue::Str(s.clone()),
        Value::Tuple(items) => AttrValue::Tuple(items.iter().map(value_to_attr_value).collect()),
        _ => AttrValue::None,
    }
}

/// The value MindSpore's argument is fixed to, as a constant.
fn fixed_value(v: &ops::mindspore::MsValue) -> Result<Value, String> {
    use ops::mindspore::MsValue as V;
    Ok(match v {
        V::None => Value::None,
        V::Bool(b) => Value::bool(*b),
        V::Int(i) => Value::int(*i),
        V::Float(x) => Value::float(*x),
        V::Str(s) => Value::Str(s.to_string()),
        V::Ints(v) => Value::Tuple(v.iter().map(|&i| Value::int(i)).collect()),
        V::Floats(v) => Value::Tuple(v.iter().map(|&x| Value::float(x)).collect()),
        V::Bools(v) => Value::Tuple(v.iter().map(|&b| Value::bool(b)).collect()),
        V::DType(name) => Value::int(ms_ops::type_id(
            ms_ops::dtype_of_ms_name(name).ok_or_else(|| format!("unsupported dtype {name}"))?,
        )),
        V::Other(text) => return Err(format!("MindSpore's default `{text}` is not a constant")),
    })
}

/// A registry attribute's default, if it has one.
fn attr_default(p: &ops::ParamDef) -> Option<AttrValue> {
    match p.kind {
        ops::ParamKind::Attr {
            default: Some(d), ..
        } => Some(d.value()),
        _ => None,
    }
}

/// An attribute value as the constant MindSpore's primitive function takes.
fn attr_to_value(v: &AttrValue, conv: Conv) -> Result<Value, String> {
    Ok(match (conv, v) {
        (Conv::Enum(e), AttrValue::Str(s)) => Value::int(
            e.value(s)
                .ok_or_else(|| format!("{s:?} is no value of MindSpore's `{}`", e.name))?,
        ),
        (Conv::TypeId, AttrValue::DType(d)) => Value::int(ms_ops::type_id(*d)),
        (Conv::IntTuple, AttrValue::Int(i)) => Value::Tuple(vec![Value::int(*i)]),
        (Conv::Pair, v) if v.as_ints().is_some() => {
            let pair = pair(v).ok_or_else(|| format!("{v} is not a window (`k` or `(h, w)`)"))?;
            Value::Tuple(pair.into_iter().map(Value::int).collect())
        }
        (Conv::NoneIsEmpty, AttrValue::Tuple(items)) if items.is_empty() => Value::None,
        (_, v) => plain_value(v),
    })
}

fn plain_value(v: &AttrValue) -> Value {
    match v {
        AttrValue::Int(i) => Value::int(*i),
        AttrValue::Float(x) => Value::float(x.0),
        AttrValue::Bool(b) => Value::bool(*b),
        AttrValue::Str(s) => Value::Str(s.clone()),
        AttrValue::DType(d) => Value::int(ms_ops::type_id(*d)),
        AttrValue::Tuple(items) => Value::Tuple(items.iter().map(plain_value).collect()),
        AttrValue::None => Value::None,
    }
}

/// A constant as the `value` attribute of a `Constant` node. A scalar beside
/// a tensor (`like`) becomes a rank-0 tensor of that dtype.
fn value_attr(v: &Value, like: Option<DType>) -> Result<AttributeProto, ExportError> {
    Ok(match v {
        Value::Scalar { value, dtype, .. } => {
            if let Some(d) = like {
                return Ok(tensor_value(&Tensor::full(d, Vec::new(), value.as_f64())));
            }
            match value {
                ir::ScalarConst::Bool(b) => AttributeProto {
                    i: Some(*b as i64),
                    r#type: Some(AttributeType::Bool as i32),
                    ..Default::default()
                },
                ir::ScalarConst::Int(i) => AttributeProto {
                    i: Some(*i),
                    r#type: Some(int_type(*dtype) as i32),
                    ..Default::default()
                },
                ir::ScalarConst::Float(x) => match dtype {
                    DType::F64 => AttributeProto {
                        d: Some(*x),
                        r#type: Some(AttributeType::Double as i32),
                        ..Default::default()
                    },
                    _ => AttributeProto {
                        f: Some(*x as f32),
                        r#type: Some(AttributeType::Float as i32),
                        ..Default::default()
                    },
                },
            }
        }
        Value::Str(s) => AttributeProto {
            s: Some(s.as_bytes().to_vec()),
            r#type: Some(AttributeType::String as i32),
            ..Default::default()
        },
        Value::None => AttributeProto {
            r#type: Some(AttributeType::None as i32),
            ..Default::default()
        },
        Value::Tuple(items) => AttributeProto {
            r#type: Some(AttributeType::Tuple as i32),
            values: items.iter().map(tuple_element).collect::<Result<_, _>>()?,
            ..Default::default()
        },
        Value::Tensor(t) => tensor_value(t),
        // MindSpore's `U`: the state token of graphs that update weights.
        Value::Monad => AttributeProto {
            r#type: Some(AttributeType::Umonad as i32),
            ..Default::default()
        },
        Value::Type(ir::Ty::Scalar(d)) | Value::Type(ir::Ty::Tensor(d, _)) => AttributeProto {
            i: Some(ms_ops::type_id(*d)),
            r#type: Some(AttributeType::Int64 as i32),
            ..Default::default()
        },
        other => {
            return Err(ExportError::Unsupported(format!(
                "the constant {other:?} has no MindIR form here"
            )))
        }
    })
}

/// A tensor constant, as MindSpore writes one: `TENSORS` with one tensor.
fn tensor_value(t: &Tensor) -> AttributeProto {
    let mut proto = tensor_proto(t);
    proto.name = Some("value0".into());
    AttributeProto {
        tensors: vec![proto],
        r#type: Some(AttributeType::Tensors as i32),
        ..Default::default()
    }
}

/// A tuple element: scalars keep their value in the repeated fields, as
/// MindSpore's exporter writes them.
fn tuple_element(v: &Value) -> Result<AttributeProto, ExportError> {
    Ok(match v {
        Value::Scalar {
            value: ir::ScalarConst::Int(i),
            dtype,
            ..
        } => AttributeProto {
            ints: vec![*i],
            r#type: Some(int_type(*dtype) as i32),
            ..Default::default()
        },
        Value::Scalar {
            value: ir::ScalarConst::Float(x),
            ..
        } => AttributeProto {
            floats: vec![*x as f32],
            r#type: Some(AttributeType::Float as i32),
            ..Default::default()
        },
        Value::Scalar {
            value: ir::ScalarConst::Bool(b),
            ..
        } => AttributeProto {
            ints: vec![*b as i64],
            r#type: Some(AttributeType::Bool as i32),
            ..Default::default()
        },
        other => value_attr(other, None)?,
    })
}

fn int_type(d: DType) -> AttributeType {
    match d {
        DType::I8 => AttributeType::Int8,
        DType::I16 => AttributeType::Int16,
        DType::I32 => AttributeType::Int32,
        DType::U8 => AttributeType::Uint8,
        _ => AttributeType::Int64,
    }
}

/// A tensor with its data (little-endian `raw_data`).
pub fn tensor_proto(t: &Tensor) -> TensorProto {
    let mut raw = Vec::with_capacity(t.numel() * t.dtype().size_of());
    match (t.buffer(), t.dtype()) {
        (Buffer::F32(v), DType::F16) => v
            .iter()
            .for_each(|&x| raw.extend_from_slice(&f32_to_f16(x).to_le_bytes())),
        (Buffer::F32(v), DType::BF16) => v
            .iter()
            .for_each(|&x| raw.extend_from_slice(&((x.to_bits() >> 16) as u16).to_le_bytes())),
        (Buffer::F32(v), _) => v
            .iter()
            .for_each(|x| raw.extend_from_slice(&x.to_le_bytes())),
        (Buffer::F64(v), _) => v
            .iter()
            .for_each(|x| raw.extend_from_slice(&x.to_le_bytes())),
        (Buffer::I64(v), DType::I32) => v
            .iter()
            .for_each(|&x| raw.extend_from_slice(&(x as i32).to_le_bytes())),
        (Buffer::I64(v), DType::I16) => v
            .iter()
            .for_each(|&x| raw.extend_from_slice(&(x as i16).to_le_bytes())),
        (Buffer::I64(v), DType::I8 | DType::U8) => v.iter().for_each(|&x| raw.push(x as u8)),
        (Buffer::I64(v), _) => v
            .iter()
            .for_each(|x| raw.extend_from_slice(&x.to_le_bytes())),
        (Buffer::Bool(v), _) => v.iter().for_each(|&x| raw.push(x as u8)),
    }
    TensorProto {
        dims: t.shape().iter().map(|&d| d as i64).collect(),
        data_type: Some(ms_ops::data_type(t.dtype())),
        raw_data: Some(raw),
        ..Default::default()
    }
}

fn f32_to_f16(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let frac = bits & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if frac != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 31 {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = (frac | 0x80_0000) >> (1 - e + 13);
        return sign | m as u16;
    }
    let m = frac >> 13;
    let round = (frac >> 12) & 1;
    (sign | ((e as u16) << 10) | m as u16) + round as u16
}

/// A tensor type (no data): the `shape` attribute's and the inputs' form.
fn type_tensor(dtype: DType, shape: &Shape) -> TensorProto {
    let dims = match shape {
        Shape::Ranked(d) => d
            .iter()
            .map(|d| match d {
                Dim::Known(n) => *n,
                _ => -1,
            })
            .collect(),
        Shape::Unranked => vec![-2],
    };
    TensorProto {
        dims,
        data_type: Some(ms_ops::data_type(dtype)),
        ..Default::default()
    }
}

/// The inferred type of a node as MindSpore's `shape` attribute.
fn shape_attr(v: &AbsVal, name: &str) -> Option<AttributeProto> {
    let named = |mut a: AttributeProto| {
        if !name.is_empty() {
            a.name = Some(name.to_string());
        }
        a
    };
    Some(match v {
        AbsVal::Tensor { dtype, shape } => named(AttributeProto {
            tensors: vec![type_tensor(*dtype, shape)],
            r#type: Some(AttributeType::Tensors as i32),
            ..Default::default()
        }),
        // A number: MindSpore's SCALAR with the dtype in a shapeless tensor.
        AbsVal::Scalar { dtype, .. } => named(AttributeProto {
            tensors: vec![TensorProto {
                dims: vec![0],
                data_type: Some(ms_ops::data_type(*dtype)),
                ..Default::default()
            }],
            r#type: Some(AttributeType::Scalar as i32),
            ..Default::default()
        }),
        AbsVal::Tuple(items) => named(AttributeProto {
            values: items
                .iter()
                .map(|i| shape_attr(i, ""))
                .collect::<Option<_>>()?,
            r#type: Some(AttributeType::Tuple as i32),
            seq_info: Some(Box::new(SeqInfoProto {
                is_dyn_len: Some(false),
                tuple_elem_item: None,
            })),
            ..Default::default()
        }),
        _ => return None,
    })
}

fn value_info(name: &str, ty: Option<&AbsVal>) -> ValueInfoProto {
    let (tensor, attr_info) = match ty {
        Some(AbsVal::Tensor { dtype, shape }) => (vec![type_tensor(*dtype, shape)], None),
        Some(other) => (Vec::new(), shape_attr(other, "")),
        None => (Vec::new(), None),
    };
    ValueInfoProto {
        name: Some(name.to_string()),
        tensor,
        attr_info,
        ..Default::default()
    }
}

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
