//! Printing IR in the text form of MindSpore's `.ir` dumps (`save_graphs=1`).
//!
//! The layout follows MindSpore 2.x: a header with the entry graph, the number
//! of subgraphs and the entry's parameters (weights included, as parameters with
//! a default), then one `subgraph @name(%para...) { ... }` block per FuncGraph
//! with each CNode as `%k(name) = Callee(args)` and its inferred types as
//! `: (input types) -> (output type)`, ending in `Return(...)`, and an
//! `# Order:` section listing each CNode's inputs. Types are MindSpore's
//! abstract values (`<Tensor[Float32], (3)>`, `<Int64, NoShape>`), with `-1`
//! for an unknown dimension, `-2` for an unknown rank, and the symbol for a
//! symbolic dimension (`(B, 784)`).
//!
//! Differences a MindSpore user will notice: primitives keep the DSL's names
//! (`Add`, not `PrimFunc_Add`), the entry graph lists its own parameters (there
//! is no parameterless wrapper graph), nested graphs keep their source names
//! (`if` branches are `✓f` and `✗f`, as MindSpore names them), and a CNode with
//! no source name is `CNode_<id>`, `<id>` being its IR node id.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use crate::abs::AbsVal;
use crate::graph::{Body, GraphId, GraphOrigin, NodeId, NodeKind, Program};
use crate::ty::{DType, Dim, Shape};
use crate::value::{AttrValue, MetaFn, ScalarConst, Value, WrtItem};

/// The program's entry graph: `main` if there is one, else the last graph.
pub fn entry_name(program: &Program) -> Option<&str> {
    program
        .graph("main")
        .map(|_| "main")
        .or_else(|| program.graphs.last().map(|(n, _)| n.as_str()))
}

/// The whole program as a MindSpore `.ir` dump. `types(item, node)` gives the
/// inferred abstract value of `node` in the top-level graph `item`'s body.
pub fn print_program(program: &Program, types: &dyn Fn(&str, NodeId) -> Option<AbsVal>) -> String {
    let Some(entry) = entry_name(program) else {
        return "# IR entry: (none)\n# Total subgraphs: 0\n".to_string();
    };
    let mut printer = MsPrinter::new(program, entry, types);
    printer.print()
}

/// The program as a MindSpore `.ir` dump whose entry is `entry` (a graph
/// of the program).
pub fn print_program_entry(
    program: &Program,
    entry: &str,
    types: &dyn Fn(&str, NodeId) -> Option<AbsVal>,
) -> String {
    if program.graph(entry).is_none() {
        return print_program(program, types);
    }
    MsPrinter::new(program, entry, types).print()
}

/// MindSpore's name for a dtype in abstract values (`Float32`).
pub fn ms_dtype(d: DType) -> &'static str {
    d.mindspore_name()
}

/// A shape as MindSpore prints it: `(2, 3)`, `()`, `(-1, 784)`, `(-2)`.
pub fn ms_shape(shape: &Shape) -> String {
    match shape {
        Shape::Unranked => "(-2)".into(),
        Shape::Ranked(dims) => {
            let dims: Vec<String> = dims
                .iter()
                .map(|d| match d {
                    Dim::Known(n) => n.to_string(),
                    Dim::Sym(s) => s.clone(),
                    Dim::Unknown => "-1".into(),
                })
                .collect();
            format!("({})", dims.join(", "))
        }
    }
}

fn type_name(v: &AbsVal) -> String {
    match v {
        AbsVal::Tensor { dtype, .. } => format!("Tensor[{}]", ms_dtype(*dtype)),
        AbsVal::Scalar { dtype, .. } => ms_dtype(*dtype).to_string(),
        AbsVal::Tuple(items) => {
            let names: Vec<String> = items.iter().map(type_name).collect();
            format!("Tuple[{}]", names.join(","))
        }
        AbsVal::Str(_) => "String".into(),
        AbsVal::None => "None".into(),
        AbsVal::Func(_) => "Func".into(),
        AbsVal::Any => "null".into(),
        AbsVal::Monad => "UMonad".into(),
    }
}

fn shape_text(v: &AbsVal) -> String {
    match v {
        AbsVal::Tensor { shape, .. } => ms_shape(shape),
        AbsVal::Tuple(items) => {
            let shapes: Vec<String> = items.iter().map(shape_text).collect();
            format!("TupleShape({})", shapes.join(", "))
        }
        _ => "NoShape".into(),
    }
}

/// An abstract value as MindSpore prints it: `<Tensor[Float32], (3)>`,
/// `<Int64, NoShape>`, `<Tuple[Tensor[Float32],Int64], TupleShape((3), NoShape)>`.
pub fn ms_abstract(v: &AbsVal) -> String {
    match v {
        AbsVal::Any => "<null>".into(),
        _ => format!("<{}, {}>", type_name(v), shape_text(v)),
    }
}

/// The abstract value of a constant, for ValueNodes inference did not record.
pub fn const_abstract(v: &Value) -> AbsVal {
    match v {
        Value::Scalar { value, dtype, weak } => AbsVal::constant(*value, *dtype, *weak),
        Value::Str(s) => AbsVal::Str(Some(s.clone())),
        Value::None => AbsVal::None,
        Value::Monad => AbsVal::Monad,
        Value::Tuple(items) => AbsVal::Tuple(items.iter().map(const_abstract).collect()),
        Value::Tensor(t) => AbsVal::Tensor {
            dtype: t.dtype(),
            shape: Shape::known(&t.shape().iter().map(|&d| d as i64).collect::<Vec<_>>()),
        },
        Value::Prim(_) | Value::Graph(_) | Value::Global(_) | Value::Meta(_) => AbsVal::Func(0),
        Value::Type(_) => AbsVal::Any,
    }
}

fn scalar_text(value: ScalarConst, dtype: DType) -> String {
    match value {
        ScalarConst::Bool(b) => format!("Bool({})", b as u8),
        ScalarConst::Int(i) => format!("{}({i})", scalar_prefix(dtype)),
        ScalarConst::Float(x) => format!("{}({})", scalar_prefix(dtype), float_text(x)),
    }
}

fn scalar_prefix(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool => "Bool",
        DType::I8 => "I8",
        DType::I16 => "I16",
        DType::I32 => "I32",
        DType::I64 => "I64",
        DType::U8 => "U8",
        DType::F16 => "F16",
        DType::BF16 => "BF16",
        DType::F32 => "F32",
        DType::F64 => "F64",
    }
}

fn float_text(x: f64) -> String {
    if x.is_finite() && x == x.trunc() && x.abs() < 1e15 {
        format!("{x}")
    } else {
        format!("{x:?}")
    }
}

/// A tensor constant as MindSpore prints it (values cut after ten elements).
pub fn tensor_text(t: &tensor::Tensor) -> String {
    let shape: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
    let values = t.to_f64_vec();
    let items: Vec<String> = values
        .iter()
        .take(10)
        .map(|&x| {
            if t.dtype().is_bool() {
                (x != 0.0).to_string()
            } else {
                float_text(x)
            }
        })
        .collect();
    let value = if t.rank() == 0 {
        items.first().cloned().unwrap_or_default()
    } else if values.len() > 10 {
        format!("[{}, ...]", items.join(", "))
    } else {
        format!("[{}]", items.join(", "))
    };
    format!(
        "Tensor(shape=[{}], dtype={}, value={value})",
        shape.join(", "),
        ms_dtype(t.dtype())
    )
}

/// An attribute value as in MindSpore's `primitive_attrs: {...}`.
pub fn attr_text(v: &AttrValue) -> String {
    match v {
        AttrValue::Int(i) => format!("I64({i})"),
        AttrValue::Float(x) => format!("F32({})", float_text(x.0)),
        AttrValue::Bool(b) => format!("Bool({})", *b as u8),
        AttrValue::Str(s) => format!("{s:?}"),
        AttrValue::DType(d) => ms_dtype(*d).to_string(),
        AttrValue::None => "None".into(),
        AttrValue::Tuple(items) => {
            let items: Vec<String> = items.iter().map(attr_text).collect();
            format!("({})", items.join(", "))
        }
    }
}

fn meta_text(m: &MetaFn) -> String {
    let wrt = |w: &Option<Vec<WrtItem>>| match w {
        None => String::new(),
        Some(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|i| match i {
                    WrtItem::Param(p) => p.to_string(),
                    WrtItem::Weight(n) => n.clone(),
                })
                .collect();
            format!("[wrt=({})]", items.join(", "))
        }
    };
    match m {
        MetaFn::Grad { wrt: w } => format!("MetaFuncGraph::grad{}", wrt(w)),
        MetaFn::ValueAndGrad { wrt: w } => format!("MetaFuncGraph::value_and_grad{}", wrt(w)),
        MetaFn::Vjp => "MetaFuncGraph::vjp".into(),
        MetaFn::Jvp => "MetaFuncGraph::jvp".into(),
        MetaFn::Hvp => "MetaFuncGraph::hvp".into(),
        MetaFn::Vmap { in_axes, out_axes } => format!(
            "MetaFuncGraph::vmap[in_axes={}, out_axes={}]",
            in_axes.text(),
            out_axes.text()
        ),
        MetaFn::Jacfwd { wrt: w } => format!("MetaFuncGraph::jacfwd{}", wrt(w)),
        MetaFn::Jacrev { wrt: w } => format!("MetaFuncGraph::jacrev{}", wrt(w)),
        MetaFn::Hessian { wrt: w } => format!("MetaFuncGraph::hessian{}", wrt(w)),
        MetaFn::Checkpoint => "MetaFuncGraph::checkpoint".into(),
    }
}

/// `ValueNode<Int64Imm> 1`, as in the `# Order:` section.
fn value_node_text(v: &Value, graph_name: &dyn Fn(&Value) -> Option<String>) -> String {
    match v {
        Value::Scalar { value, dtype, .. } => {
            let kind = match value {
                ScalarConst::Bool(_) => "BoolImm".to_string(),
                ScalarConst::Int(_) => format!("{}Imm", ms_dtype(*dtype)),
                ScalarConst::Float(_) => match dtype {
                    DType::F64 => "FP64Imm".to_string(),
                    _ => "FP32Imm".to_string(),
                },
            };
            let text = match value {
                ScalarConst::Bool(b) => b.to_string(),
                ScalarConst::Int(i) => i.to_string(),
                ScalarConst::Float(x) => float_text(*x),
            };
            format!("ValueNode<{kind}> {text}")
        }
        Value::Str(s) => format!("ValueNode<StringImm> {s}"),
        Value::None => "ValueNode<None> None".into(),
        Value::Monad => "ValueNode<UMonad> U".into(),
        Value::Tuple(_) => format!("ValueNode<ValueTuple> {}", inline_value(v, graph_name)),
        Value::Tensor(t) => format!("ValueNode<Tensor> {}", tensor_text(t)),
        Value::Prim(p) => format!("ValueNode<Primitive> {}", p.name),
        Value::Graph(_) | Value::Global(_) => format!(
            "ValueNode<FuncGraph> {}",
            graph_name(v).unwrap_or_default().trim_start_matches('@')
        ),
        Value::Meta(m) => format!("ValueNode<MetaFuncGraph> {}", meta_text(m)),
        Value::Type(t) => format!("ValueNode<Type> {t}"),
    }
}

/// A constant printed inline as an argument.
fn inline_value(v: &Value, graph_name: &dyn Fn(&Value) -> Option<String>) -> String {
    match v {
        Value::Scalar { value, dtype, .. } => scalar_text(*value, *dtype),
        Value::Str(s) => format!("{s:?}"),
        Value::None => "None".into(),
        Value::Monad => "U".into(),
        Value::Tuple(items) => {
            let items: Vec<String> = items.iter().map(|i| inline_value(i, graph_name)).collect();
            format!("({})", items.join(", "))
        }
        Value::Tensor(t) => tensor_text(t),
        Value::Prim(p) => {
            if p.attrs.is_empty() {
                p.name.clone()
            } else {
                let attrs: Vec<String> = p
                    .attrs
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", attr_text(v)))
                    .collect();
                format!("{}[{}]", p.name, attrs.join(", "))
            }
        }
        Value::Graph(_) | Value::Global(_) => {
            graph_name(v).unwrap_or_else(|| "@<unknown>".to_string())
        }
        Value::Meta(m) => meta_text(m),
        Value::Type(t) => match t {
            crate::ty::Ty::Scalar(d) => ms_dtype(*d).to_string(),
            other => other.to_string(),
        },
    }
}

/// A printed graph: which body it is in and its id there.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct GKey<'a> {
    item: &'a str,
    graph: GraphId,
}

struct MsPrinter<'a> {
    program: &'a Program,
    entry: &'a str,
    types: &'a dyn Fn(&str, NodeId) -> Option<AbsVal>,
    /// Display names (`@` included) of every graph, unique in the dump.
    graph_names: HashMap<GKey<'a>, String>,
    /// Graphs in print order.
    order: Vec<GKey<'a>>,
    /// `%paraK_name` of each parameter, by body and node.
    params: HashMap<(&'a str, NodeId), String>,
    weights: HashMap<String, String>,
    out: String,
}

impl<'a> MsPrinter<'a> {
    fn new(
        program: &'a Program,
        entry: &'a str,
        types: &'a dyn Fn(&str, NodeId) -> Option<AbsVal>,
    ) -> Self {
        let mut p = MsPrinter {
            program,
            entry,
            types,
            graph_names: HashMap::new(),
            order: Vec::new(),
            params: HashMap::new(),
            weights: HashMap::new(),
            out: String::new(),
        };
        p.plan();
        p
    }

    fn bodies(&self) -> impl Iterator<Item = (&'a str, &'a Body)> {
        let program = self.program;
        program.graphs.iter().map(|(n, b)| (n.as_str(), &**b))
    }

    fn body(&self, item: &str) -> &'a Body {
        let program = self.program;
        program.graph(item).expect("printed items exist")
    }

    /// Names every graph, chooses the print order (the entry's root last, as
    /// MindSpore prints it) and numbers the parameters.
    fn plan(&mut self) {
        let mut taken: HashSet<String> = HashSet::new();
        let mut fresh = |wanted: String| {
            let mut name = wanted.clone();
            let mut k = 1;
            while !taken.insert(name.clone()) {
                name = format!("{wanted}_{k}");
                k += 1;
            }
            name
        };
        // Top-level graphs keep their names.
        for (item, _) in self.bodies() {
            let name = fresh(item.to_string());
            self.graph_names.insert(
                GKey {
                    item,
                    graph: GraphId(0),
                },
                format!("@{name}"),
            );
        }
        let bodies: Vec<(&'a str, &'a Body)> = self.bodies().collect();
        for &(item, body) in &bodies {
            for g in body.graph_ids().skip(1) {
                let graph = body.graph(g);
                let parent = graph
                    .parent
                    .and_then(|p| self.graph_names.get(&GKey { item, graph: p }).cloned())
                    .unwrap_or_default();
                let parent = parent.trim_start_matches('@');
                let wanted = match graph.origin {
                    GraphOrigin::Then => format!("✓{parent}"),
                    GraphOrigin::Else => format!("✗{parent}"),
                    GraphOrigin::Lambda => format!("λ{parent}"),
                    _ if graph.name.is_empty() => format!("{parent}_graph"),
                    _ => graph.name.clone(),
                };
                let name = fresh(wanted);
                self.graph_names
                    .insert(GKey { item, graph: g }, format!("@{name}"));
            }
        }
        // Print order: other items first, the entry's body last; in a body,
        // nested graphs before their root.
        for &(item, body) in bodies
            .iter()
            .filter(|(i, _)| *i != self.entry)
            .chain(bodies.iter().filter(|(i, _)| *i == self.entry))
        {
            for g in body.graph_ids().skip(1) {
                self.order.push(GKey { item, graph: g });
            }
            self.order.push(GKey {
                item,
                graph: body.root(),
            });
        }
        // Parameters: the entry's first, then the weights, then the rest in
        // print order.
        let mut k = 0;
        let entry_body = self.body(self.entry);
        for &p in &entry_body.graph(entry_body.root()).params {
            k += 1;
            let name = param_label(entry_body, p);
            self.params
                .insert((self.entry, p), format!("%para{k}_{name}"));
        }
        for w in &self.program.weights {
            k += 1;
            self.weights
                .insert(w.name.clone(), format!("%para{k}_{}", w.name));
        }
        for key in self.order.clone() {
            let body = self.body(key.item);
            for &p in &body.graph(key.graph).params {
                if self.params.contains_key(&(key.item, p)) {
                    continue;
                }
                k += 1;
                let name = param_label(body, p);
                self.params
                    .insert((key.item, p), format!("%para{k}_{name}"));
            }
        }
    }

    fn ty(&self, item: &str, id: NodeId) -> AbsVal {
        if let Some(v) = (self.types)(item, id) {
            return v;
        }
        let body = self.body(item);
        match &body.node(id).kind {
            NodeKind::Const(v) => const_abstract(v),
            NodeKind::Weight(name) => self
                .program
                .weight(name)
                .map_or(AbsVal::Any, |w| AbsVal::from_ty(&w.ty)),
            _ => body
                .node(id)
                .annotation
                .as_ref()
                .map_or(AbsVal::Any, |(t, _)| AbsVal::from_ty(t)),
        }
    }

    fn graph_ref(&self, item: &'a str, v: &Value) -> Option<String> {
        match v {
            Value::Graph(g) => self.graph_names.get(&GKey { item, graph: *g }).cloned(),
            Value::Global(name) => self
                .program
                .graphs
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(n, _)| {
                    self.graph_names
                        .get(&GKey {
                            item: n.as_str(),
                            graph: GraphId(0),
                        })
                        .cloned()
                })
                .or_else(|| Some(format!("@{name}"))),
            _ => None,
        }
    }

    fn print(&mut self) -> String {
        let entry_body = self.body(self.entry);
        let total_graphs: usize = self.bodies().map(|(_, b)| b.graphs.len()).sum();
        let _ = writeln!(self.out, "# IR entry: @{}", self.entry);
        let _ = writeln!(self.out, "# Total subgraphs: {total_graphs}");
        self.out.push('\n');
        let entry_params = &entry_body.graph(entry_body.root()).params;
        let _ = writeln!(
            self.out,
            "# Total params: {}",
            entry_params.len() + self.program.weights.len()
        );
        self.out.push_str("# Params:\n");
        for &p in entry_params {
            let v = self.ty(self.entry, p);
            let name = self.params[&(self.entry, p)].clone();
            let _ = writeln!(self.out, "{name}: {}{}", ms_abstract(&v), shape_suffix(&v));
        }
        for w in &self.program.weights {
            let v = AbsVal::from_ty(&w.ty);
            let _ = writeln!(
                self.out,
                "{}: <Ref[{}], {}, ref_key={}> : has_default",
                self.weights[&w.name],
                type_name(&v),
                shape_text(&v),
                w.name
            );
        }
        let (nodes, cnodes) = self.bodies().fold((0, 0), |(n, c), (_, b)| {
            let applies: usize = b.graphs.iter().map(|g| g.nodes.len()).sum();
            (
                n + b.nodes.len() + b.graphs.len(),
                c + applies + b.graphs.len(),
            )
        });
        self.out.push_str("\nNode counting information:\n");
        let _ = writeln!(self.out, "Total number of nodes: {nodes}");
        let _ = writeln!(self.out, "Total number of cnodes: {cnodes}");
        for key in self.order.clone() {
            self.out.push('\n');
            self.graph(key);
            self.out.push('\n');
        }
        std::mem::take(&mut self.out)
    }

    /// How a node is referred to from graph `from`.
    fn operand(&self, item: &'a str, from: GraphId, id: NodeId) -> String {
        let body = self.body(item);
        let node = body.node(id);
        match &node.kind {
            NodeKind::Const(v) => inline_value(v, &|v| self.graph_ref(item, v)),
            NodeKind::Weight(name) => self
                .weights
                .get(name)
                .cloned()
                .unwrap_or_else(|| format!("%para_{name}")),
            NodeKind::Param { .. } => {
                let name = self.params.get(&(item, id)).cloned().unwrap_or_default();
                match node.graph {
                    Some(owner) if owner != from => {
                        format!(
                            "$({}:{})",
                            self.graph_names[&GKey { item, graph: owner }],
                            name.trim_start_matches('%')
                        )
                    }
                    _ => name,
                }
            }
            NodeKind::Apply(_) => {
                let owner = node.graph.unwrap_or(from);
                if owner == from {
                    let index = body
                        .graph(owner)
                        .nodes
                        .iter()
                        .position(|&n| n == id)
                        .unwrap_or(0);
                    format!("%{index}")
                } else {
                    format!(
                        "$({}:{})",
                        self.graph_names[&GKey { item, graph: owner }],
                        cnode_label(body, id)
                    )
                }
            }
        }
    }

    /// How a node is named in the `# Order:` section.
    fn order_operand(&self, item: &'a str, id: NodeId) -> String {
        let body = self.body(item);
        match &body.node(id).kind {
            NodeKind::Const(v) => value_node_text(v, &|v| self.graph_ref(item, v)),
            NodeKind::Weight(name) => format!("param_{name}"),
            NodeKind::Param { .. } => format!("param_{}", param_label(body, id)),
            NodeKind::Apply(_) => cnode_label(body, id),
        }
    }

    fn graph(&mut self, key: GKey<'a>) {
        let item = key.item;
        let body = self.body(item);
        let graph = body.graph(key.graph);
        let name = self.graph_names[&key].clone();
        let param_types: Vec<String> = graph
            .params
            .iter()
            .map(|&p| ms_abstract(&self.ty(item, p)))
            .collect();
        let _ = writeln!(
            self.out,
            "# Parameters: {}, ({})",
            graph.params.len(),
            param_types.join(", ")
        );
        let params: Vec<String> = graph
            .params
            .iter()
            .map(|&p| self.params[&(item, p)].clone())
            .collect();
        let parent = match graph.parent {
            Some(p) => format!(
                " parent: [subgraph {}]",
                self.graph_names[&GKey { item, graph: p }]
            ),
            None => String::new(),
        };
        let _ = writeln!(
            self.out,
            "subgraph {name}{parent}({}) {{",
            params.join(", ")
        );
        let mut order = Vec::new();
        for (index, &n) in graph.nodes.iter().enumerate() {
            let inputs = body.inputs(n);
            let Some((&callee, args)) = inputs.split_first() else {
                continue;
            };
            let arg_texts: Vec<String> = args
                .iter()
                .map(|&a| self.operand(item, key.graph, a))
                .collect();
            let mut attrs = String::new();
            let call = match &body.node(callee).kind {
                NodeKind::Const(Value::Prim(p)) => {
                    if !p.attrs.is_empty() {
                        let items: Vec<String> = p
                            .attrs
                            .iter()
                            .map(|(k, v)| format!("{k}: {}", attr_text(v)))
                            .collect();
                        attrs = format!(" primitive_attrs: {{{}}}", items.join(", "));
                    }
                    format!("{}({})", p.name, arg_texts.join(", "))
                }
                NodeKind::Const(v @ (Value::Graph(_) | Value::Global(_))) => format!(
                    "call {}({})",
                    self.graph_ref(item, v).unwrap_or_default(),
                    arg_texts.join(", ")
                ),
                _ => format!(
                    "{}({})",
                    self.operand(item, key.graph, callee),
                    arg_texts.join(", ")
                ),
            };
            let in_types: Vec<String> = args
                .iter()
                .map(|&a| ms_abstract(&self.ty(item, a)))
                .collect();
            let out_type = ms_abstract(&self.ty(item, n));
            let _ = writeln!(
                self.out,
                "  %{index}({}) = {call}{attrs}",
                cnode_label(body, n)
            );
            let _ = writeln!(
                self.out,
                "      : ({}) -> ({out_type})",
                in_types.join(", ")
            );
            let order_inputs: Vec<String> = inputs
                .iter()
                .enumerate()
                .map(|(i, &x)| format!("[{i}]: {}", self.order_operand(item, x)))
                .collect();
            order.push(format!(
                "{name}:{}{{{}}}",
                cnode_label(body, n),
                order_inputs.join(", ")
            ));
        }
        match graph.output {
            Some(o) => {
                let _ = writeln!(self.out, "  Return({})", self.operand(item, key.graph, o));
                let _ = writeln!(self.out, "      : ({})", ms_abstract(&self.ty(item, o)));
                order.push(format!(
                    "{name}:return{{[0]: ValueNode<Primitive> Return, [1]: {}}}",
                    self.order_operand(item, o)
                ));
            }
            None => {
                let _ = writeln!(self.out, "  Return(None)\n      : (<None, NoShape>)");
            }
        }
        self.out.push_str("}\n# Order:\n");
        for (i, line) in order.iter().enumerate() {
            let _ = writeln!(self.out, "#   {}: {line}", i + 1);
        }
    }
}

fn shape_suffix(v: &AbsVal) -> String {
    match v {
        AbsVal::Tensor {
            shape: Shape::Ranked(dims),
            ..
        } => {
            let dims: Vec<String> = dims
                .iter()
                .map(|d| match d {
                    Dim::Known(n) => n.to_string(),
                    Dim::Sym(s) => s.clone(),
                    Dim::Unknown => "-1".into(),
                })
                .collect();
            format!(" : [{}]", dims.join(", "))
        }
        _ => String::new(),
    }
}

fn sanitize(name: &str) -> String {
    name.trim_start_matches('%')
        .chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect()
}

fn param_label(body: &Body, id: NodeId) -> String {
    match body.node(id).name.as_deref() {
        Some(n) if !n.is_empty() => sanitize(n),
        _ => format!("Parameter_{}", id.0),
    }
}

/// A CNode's name in the dump: its source name, or `CNode_<node id>`.
fn cnode_label(body: &Body, id: NodeId) -> String {
    match body.node(id).name.as_deref() {
        Some(n) if !n.is_empty() && !n.starts_with('%') => sanitize(n),
        _ => format!("CNode_{}", id.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Body, Program, WeightDef, WeightInit};
    use crate::ty::Ty;
    use crate::value::PrimRef;
    use std::sync::Arc;

    /// `graph test_f(x: f32[3], y: f32[3]) { a = x - 1; b = a + y; return b * func(a, b) }`
    fn test_f() -> Program {
        let mut b = Body::default();
        let g = b.add_graph("test_f", None, GraphOrigin::Named);
        let x = b.add_param(g, "x", None);
        let y = b.add_param(g, "y", None);
        let t3 = Ty::Tensor(DType::F32, Shape::known(&[3]));
        b.node_mut(x).annotation = Some((t3.clone(), Default::default()));
        b.node_mut(y).annotation = Some((t3, Default::default()));
        let one = b.add_const(Value::int(1), None);
        let a = b.add_prim_call(g, PrimRef::new("Sub"), &[x, one], None);
        b.node_mut(a).name = Some("a".into());
        let s = b.add_prim_call(g, PrimRef::new("Add"), &[a, y], None);
        b.node_mut(s).name = Some("b".into());
        let f = b.add_const(Value::Global("func".into()), None);
        let call = b.add_apply(g, vec![f, a, s], None);
        let c = b.add_prim_call(g, PrimRef::new("Mul"), &[s, call], None);
        b.graph_mut(g).output = Some(c);

        let mut fb = Body::default();
        let fg = fb.add_graph("func", None, GraphOrigin::Named);
        let fx = fb.add_param(fg, "x", None);
        let fy = fb.add_param(fg, "y", None);
        let r = fb.add_prim_call(fg, PrimRef::new("RealDiv"), &[fx, fy], None);
        fb.node_mut(r).name = Some("ret".into());
        fb.graph_mut(fg).output = Some(r);
        Program {
            graphs: vec![
                ("func".into(), Arc::new(fb)),
                ("test_f".into(), Arc::new(b)),
            ],
            weights: vec![],
        }
    }

    fn f32_3(_: &str, _: NodeId) -> Option<AbsVal> {
        Some(AbsVal::tensor(DType::F32, &[3]))
    }

    #[test]
    fn abstracts() {
        assert_eq!(
            ms_abstract(&AbsVal::tensor(DType::F32, &[3])),
            "<Tensor[Float32], (3)>"
        );
        assert_eq!(ms_abstract(&AbsVal::scalar(DType::I64)), "<Int64, NoShape>");
        let t = AbsVal::Tuple(vec![
            AbsVal::tensor(DType::F32, &[2, 3]),
            AbsVal::scalar(DType::Bool),
        ]);
        assert_eq!(
            ms_abstract(&t),
            "<Tuple[Tensor[Float32],Bool], TupleShape((2, 3), NoShape)>"
        );
        let dynamic = AbsVal::Tensor {
            dtype: DType::F32,
            shape: Shape::Ranked(vec![Dim::Sym("B".into()), Dim::Unknown, Dim::Known(4)]),
        };
        assert_eq!(ms_abstract(&dynamic), "<Tensor[Float32], (B, -1, 4)>");
    }

    #[test]
    fn prints_test_f() {
        let program = test_f();
        let text = print_program(&program, &f32_3);
        expect_test::expect![[r#"
            # IR entry: @test_f
            # Total subgraphs: 2

            # Total params: 2
            # Params:
            %para1_x: <Tensor[Float32], (3)> : [3]
            %para2_y: <Tensor[Float32], (3)> : [3]

            Node counting information:
            Total number of nodes: 17
            Total number of cnodes: 7

            # Parameters: 2, (<Tensor[Float32], (3)>, <Tensor[Float32], (3)>)
            subgraph @func(%para3_x, %para4_y) {
              %0(ret) = RealDiv(%para3_x, %para4_y)
                  : (<Tensor[Float32], (3)>, <Tensor[Float32], (3)>) -> (<Tensor[Float32], (3)>)
              Return(%0)
                  : (<Tensor[Float32], (3)>)
            }
            # Order:
            #   1: @func:ret{[0]: ValueNode<Primitive> RealDiv, [1]: param_x, [2]: param_y}
            #   2: @func:return{[0]: ValueNode<Primitive> Return, [1]: ret}


            # Parameters: 2, (<Tensor[Float32], (3)>, <Tensor[Float32], (3)>)
            subgraph @test_f(%para1_x, %para2_y) {
              %0(a) = Sub(%para1_x, I64(1))
                  : (<Tensor[Float32], (3)>, <Tensor[Float32], (3)>) -> (<Tensor[Float32], (3)>)
              %1(b) = Add(%0, %para2_y)
                  : (<Tensor[Float32], (3)>, <Tensor[Float32], (3)>) -> (<Tensor[Float32], (3)>)
              %2(CNode_8) = call @func(%0, %1)
                  : (<Tensor[Float32], (3)>, <Tensor[Float32], (3)>) -> (<Tensor[Float32], (3)>)
              %3(CNode_10) = Mul(%1, %2)
                  : (<Tensor[Float32], (3)>, <Tensor[Float32], (3)>) -> (<Tensor[Float32], (3)>)
              Return(%3)
                  : (<Tensor[Float32], (3)>)
            }
            # Order:
            #   1: @test_f:a{[0]: ValueNode<Primitive> Sub, [1]: param_x, [2]: ValueNode<Int64Imm> 1}
            #   2: @test_f:b{[0]: ValueNode<Primitive> Add, [1]: a, [2]: param_y}
            #   3: @test_f:CNode_8{[0]: ValueNode<FuncGraph> func, [1]: a, [2]: b}
            #   4: @test_f:CNode_10{[0]: ValueNode<Primitive> Mul, [1]: b, [2]: CNode_8}
            #   5: @test_f:return{[0]: ValueNode<Primitive> Return, [1]: CNode_10}

        "#]]
        .assert_eq(&text);
    }

    #[test]
    fn nested_graphs_weights_and_free_variables() {
        let mut b = Body::default();
        let g = b.add_graph("f", None, GraphOrigin::Named);
        let x = b.add_param(g, "x", None);
        let w = b.add_weight("fc.w", None);
        let m = b.add_prim_call(
            g,
            PrimRef {
                name: "MatMul".into(),
                attrs: vec![("transpose_b".into(), AttrValue::Bool(true))],
            },
            &[x, w],
            None,
        );
        b.node_mut(m).name = Some("h".into());
        let then = b.add_graph("f_then", Some(g), GraphOrigin::Then);
        let sq = b.add_prim_call(then, PrimRef::new("Square"), &[m], None);
        b.graph_mut(then).output = Some(sq);
        let els = b.add_graph("f_else", Some(g), GraphOrigin::Else);
        b.graph_mut(els).output = Some(x);
        let cond = b.add_const(Value::bool(true), None);
        let tv = b.add_const(Value::Graph(then), None);
        let ev = b.add_const(Value::Graph(els), None);
        let sw = b.add_prim_call(g, PrimRef::new("Switch"), &[cond, tv, ev], None);
        let r = b.add_apply(g, vec![sw], None);
        b.graph_mut(g).output = Some(r);
        let program = Program {
            graphs: vec![("f".into(), Arc::new(b))],
            weights: vec![WeightDef {
                name: "fc.w".into(),
                ty: Ty::Tensor(DType::F32, Shape::known(&[4, 4])),
                init: WeightInit::Zeros,
                span: None,
                name_span: None,
            }],
        };
        let text = print_program(&program, &|_, _| None);
        expect_test::expect![[r#"
            # IR entry: @f
            # Total subgraphs: 3

            # Total params: 2
            # Params:
            %para1_x: <null>
            %para2_fc.w: <Ref[Tensor[Float32]], (4, 4), ref_key=fc.w> : has_default

            Node counting information:
            Total number of nodes: 15
            Total number of cnodes: 7

            # Parameters: 0, ()
            subgraph @✓f parent: [subgraph @f]() {
              %0(CNode_5) = Square($(@f:h))
                  : (<null>) -> (<null>)
              Return(%0)
                  : (<null>)
            }
            # Order:
            #   1: @✓f:CNode_5{[0]: ValueNode<Primitive> Square, [1]: h}
            #   2: @✓f:return{[0]: ValueNode<Primitive> Return, [1]: CNode_5}


            # Parameters: 0, ()
            subgraph @✗f parent: [subgraph @f]() {
              Return($(@f:para1_x))
                  : (<null>)
            }
            # Order:
            #   1: @✗f:return{[0]: ValueNode<Primitive> Return, [1]: param_x}


            # Parameters: 1, (<null>)
            subgraph @f(%para1_x) {
              %0(h) = MatMul(%para1_x, %para2_fc.w) primitive_attrs: {transpose_b: Bool(1)}
                  : (<null>, <Tensor[Float32], (4, 4)>) -> (<null>)
              %1(CNode_10) = Switch(Bool(1), @✓f, @✗f)
                  : (<Bool, NoShape>, <Func, NoShape>, <Func, NoShape>) -> (<null>)
              %2(CNode_11) = %1()
                  : () -> (<null>)
              Return(%2)
                  : (<null>)
            }
            # Order:
            #   1: @f:h{[0]: ValueNode<Primitive> MatMul, [1]: param_x, [2]: param_fc.w}
            #   2: @f:CNode_10{[0]: ValueNode<Primitive> Switch, [1]: ValueNode<BoolImm> true, [2]: ValueNode<FuncGraph> ✓f, [3]: ValueNode<FuncGraph> ✗f}
            #   3: @f:CNode_11{[0]: CNode_10}
            #   4: @f:return{[0]: ValueNode<Primitive> Return, [1]: CNode_11}

        "#]]
        .assert_eq(&text);
    }
}
