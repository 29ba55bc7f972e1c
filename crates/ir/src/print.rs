//! Printing IR as DSL text that parses, checks and runs again.
//!
//! Every CNode becomes one binding, ValueNodes are printed inline at their uses,
//! nested graphs are printed inside their parent just before its `return` (so
//! the names they capture are bound above them).

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use tensor::{Buffer, Tensor};

use crate::graph::{Body, GraphId, GraphOrigin, NodeId, NodeKind, Program, WeightInit};
use crate::ty::DType;
use crate::value::{MetaFn, Value, WrtItem};

/// The whole program: weights, then graphs, in source order.
pub fn print_program(program: &Program) -> String {
    let mut out = String::new();
    for w in &program.weights {
        let _ = writeln!(out, "param {}: {} = {}", w.name, w.ty, print_init(&w.init));
    }
    for (_, body) in &program.graphs {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&print_body(body));
    }
    out
}

/// A weight's initialiser as written after `=`.
pub fn print_init(init: &WeightInit) -> String {
    match init {
        WeightInit::Zeros => "zeros".into(),
        WeightInit::Ones => "ones".into(),
        WeightInit::Constant(c) => format!("constant({})", crate::value::ScalarConst::Float(*c)),
        WeightInit::Normal { mean, std, seed } => format!(
            "normal(mean={}, std={}, seed={seed})",
            crate::value::ScalarConst::Float(*mean),
            crate::value::ScalarConst::Float(*std)
        ),
        WeightInit::Uniform { low, high, seed } => format!(
            "uniform(low={}, high={}, seed={seed})",
            crate::value::ScalarConst::Float(*low),
            crate::value::ScalarConst::Float(*high)
        ),
        WeightInit::Tensor(t) => print_tensor(t),
        WeightInit::Load { path, key: None } => format!("load({path:?})"),
        WeightInit::Load { path, key: Some(k) } => format!("load({path:?}, {k:?})"),
    }
}

/// One top-level graph with its nested graphs.
pub fn print_body(body: &Body) -> String {
    print_body_with(body, &|_| None)
}

/// Like [`print_body`], with the number of inputs of each primitive (from the
/// registry), used when a primitive with bound attributes is a value.
pub fn print_body_with(body: &Body, prim_arity: &dyn Fn(&str) -> Option<usize>) -> String {
    print_body_signed(body, prim_arity, &|_| None)
}

/// A primitive's parameters in signature order: name, and whether it is an
/// input (else an attribute).
pub type Signature = Vec<(&'static str, bool)>;

/// Like [`print_body_with`], with each primitive's signature (from the
/// registry): an input that comes after an attribute in the signature is
/// written by keyword, so that the call binds as it should when read back
/// (`IndexSelect(x, dim=-1, index=i)`).
pub fn print_body_signed(
    body: &Body,
    prim_arity: &dyn Fn(&str) -> Option<usize>,
    signature: &dyn Fn(&str) -> Option<Signature>,
) -> String {
    let mut printer = Printer {
        body,
        prim_arity,
        signature,
        names: HashMap::new(),
        graph_names: HashMap::new(),
        taken: HashSet::new(),
        temp: 0,
        out: String::new(),
    };
    printer.name_graphs();
    printer.graph(body.root(), 0);
    printer.out
}

struct Printer<'a> {
    body: &'a Body,
    prim_arity: &'a dyn Fn(&str) -> Option<usize>,
    signature: &'a dyn Fn(&str) -> Option<Signature>,
    names: HashMap<NodeId, String>,
    graph_names: HashMap<GraphId, String>,
    taken: HashSet<String>,
    temp: usize,
    out: String,
}

impl Printer<'_> {
    fn fresh(&mut self, wanted: &str) -> String {
        let mut name = wanted.to_string();
        let mut k = 1;
        while self.taken.contains(&name) || syntax_keyword(&name) {
            name = format!("{wanted}_{k}");
            k += 1;
        }
        self.taken.insert(name.clone());
        name
    }

    fn name_graphs(&mut self) {
        for g in self.body.graph_ids() {
            let graph = self.body.graph(g);
            let parent_name = graph
                .parent
                .and_then(|p| self.graph_names.get(&p).cloned())
                .unwrap_or_default();
            let wanted = match graph.origin {
                GraphOrigin::Then => format!("{parent_name}_then"),
                GraphOrigin::Else => format!("{parent_name}_else"),
                GraphOrigin::Lambda => format!("{parent_name}_lambda"),
                _ if is_identifier(&graph.name) => graph.name.clone(),
                _ => format!("{parent_name}_graph"),
            };
            let name = self.fresh(wanted.trim_start_matches('_'));
            self.graph_names.insert(g, name);
        }
    }

    fn node_name(&mut self, id: NodeId) -> String {
        if let Some(n) = self.names.get(&id) {
            return n.clone();
        }
        let name = match self.body.node(id).name.as_deref() {
            Some(n) if is_identifier(n) || n.starts_with('%') => self.fresh(n),
            _ => loop {
                let candidate = format!("%{}", self.temp);
                self.temp += 1;
                if !self.taken.contains(&candidate) {
                    self.taken.insert(candidate.clone());
                    break candidate;
                }
            },
        };
        self.names.insert(id, name.clone());
        name
    }

    fn graph(&mut self, g: GraphId, depth: usize) {
        let indent = "  ".repeat(depth);
        let graph = self.body.graph(g);
        let params: Vec<String> = graph
            .params
            .clone()
            .into_iter()
            .map(|p| {
                let name = self.node_name(p);
                match &self.body.node(p).annotation {
                    Some((ty, _)) => format!("{name}: {ty}"),
                    None => name,
                }
            })
            .collect();
        let name = self.graph_names[&g].clone();
        let _ = write!(self.out, "{indent}graph {name}({})", params.join(", "));
        if let Some((ty, _)) = &graph.ret_annotation {
            let _ = write!(self.out, " -> {ty}");
        }
        self.out.push_str(" {\n");
        for &n in &graph.nodes.clone() {
            let expr = self.apply_expr(n);
            let name = self.node_name(n);
            let annotation = match &self.body.node(n).annotation {
                Some((ty, _)) => format!(": {ty}"),
                None => String::new(),
            };
            let _ = writeln!(self.out, "{indent}  {name}{annotation} = {expr}");
        }
        for child in self.body.children(g) {
            self.graph(child, depth + 1);
        }
        let ret = match graph.output {
            Some(o) => self.operand(o),
            None => "none".to_string(),
        };
        let _ = writeln!(self.out, "{indent}  return {ret}");
        let _ = writeln!(self.out, "{indent}}}");
    }

    /// A node used as an argument or callee: a name, or an inline constant.
    fn operand(&mut self, id: NodeId) -> String {
        match &self.body.node(id).kind {
            NodeKind::Const(v) => self.value(v),
            NodeKind::Weight(name) => name.clone(),
            _ => self.node_name(id),
        }
    }

    fn value(&mut self, v: &Value) -> String {
        match v {
            Value::Scalar { value, dtype, weak } => {
                let literal = value.to_string();
                let literal_dtype = match value {
                    crate::value::ScalarConst::Int(_) => DType::I64,
                    crate::value::ScalarConst::Float(_) => DType::F32,
                    crate::value::ScalarConst::Bool(_) => DType::Bool,
                };
                if *weak || *dtype == literal_dtype {
                    literal
                } else {
                    format!("Cast({literal}, {dtype})")
                }
            }
            Value::Str(s) => format!("{s:?}"),
            Value::None => "none".into(),
            Value::Monad => "U".into(),
            Value::Tuple(items) => {
                let items: Vec<String> = items.iter().map(|i| self.value(i)).collect();
                tuple_text(&items)
            }
            Value::Tensor(t) => print_tensor(t),
            Value::Prim(p) if p.attrs.is_empty() => p.name.clone(),
            Value::Prim(p) => {
                // A primitive with bound attributes used as a value: a lambda that
                // calls it with them (the DSL binds attributes only in calls).
                let arity = (self.prim_arity)(&p.name).unwrap_or(1);
                let params: Vec<String> = (0..arity).map(|i| format!("x{i}")).collect();
                let mut args = params.clone();
                args.extend(p.attrs.iter().map(|(k, v)| format!("{k}={v}")));
                format!(
                    "fn({}) => {}({})",
                    params.join(", "),
                    p.name,
                    args.join(", ")
                )
            }
            Value::Graph(g) => self.graph_names[g].clone(),
            Value::Global(name) => name.clone(),
            Value::Meta(m) => m.name().to_string(),
            Value::Type(t) => t.to_string(),
        }
    }

    fn apply_expr(&mut self, id: NodeId) -> String {
        let inputs = self.body.inputs(id).to_vec();
        let Some((&callee, args)) = inputs.split_first() else {
            return "none".into();
        };
        let arg_texts: Vec<String> = args.iter().map(|&a| self.operand(a)).collect();
        match &self.body.node(callee).kind {
            NodeKind::Const(Value::Prim(p)) => match (p.name.as_str(), arg_texts.as_slice()) {
                ("MakeTuple", items) => tuple_text(items),
                ("TupleGetItem", [t, i]) => format!("{t}[{i}]"),
                _ => {
                    let mut all = arg_texts.clone();
                    all.extend(p.attrs.iter().map(|(k, v)| format!("{k}={v}")));
                    if let Some(sig) = (self.signature)(&p.name) {
                        let inputs = sig.iter().filter(|(_, i)| *i).count();
                        if inputs == arg_texts.len() {
                            // In signature order, by keyword after the first
                            // attribute.
                            all.clear();
                            let mut args = arg_texts.iter();
                            let mut keyword = false;
                            for (name, input) in &sig {
                                if *input {
                                    let a = args.next().expect("counted");
                                    all.push(if keyword {
                                        format!("{name}={a}")
                                    } else {
                                        a.clone()
                                    });
                                } else {
                                    keyword = true;
                                    if let Some((k, v)) = p.attrs.iter().find(|(k, _)| k == name) {
                                        all.push(format!("{k}={v}"));
                                    }
                                }
                            }
                        }
                    }
                    format!("{}({})", p.name, all.join(", "))
                }
            },
            NodeKind::Const(Value::Meta(m)) => {
                let mut all = arg_texts.clone();
                if let MetaFn::Vmap { in_axes, out_axes } = m {
                    if *in_axes != crate::value::BatchAxes::All(Some(0)) {
                        all.push(format!("in_axes={}", in_axes.text()));
                    }
                    if *out_axes != crate::value::BatchAxes::All(Some(0)) {
                        all.push(format!("out_axes={}", out_axes.text()));
                    }
                }
                if let Some(w) = m.wrt() {
                    let items: Vec<String> = w
                        .iter()
                        .map(|i| match i {
                            WrtItem::Param(p) => p.to_string(),
                            WrtItem::Weight(n) => n.clone(),
                        })
                        .collect();
                    all.push(format!("wrt={}", tuple_text(&items)));
                }
                format!("{}({})", m.name(), all.join(", "))
            }
            _ => {
                let callee = self.operand(callee);
                format!("{callee}({})", arg_texts.join(", "))
            }
        }
    }
}

fn tuple_text(items: &[String]) -> String {
    match items {
        [one] => format!("({one},)"),
        _ => format!("({})", items.join(", ")),
    }
}

fn is_identifier(name: &str) -> bool {
    let mut segments = name.split('.');
    segments.all(|s| {
        let mut chars = s.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    }) && !syntax_keyword(name)
}

fn syntax_keyword(name: &str) -> bool {
    matches!(
        name,
        "graph"
            | "param"
            | "return"
            | "if"
            | "else"
            | "true"
            | "false"
            | "none"
            | "fn"
            | "and"
            | "or"
            | "not"
    )
}

/// A tensor as a literal; dtypes without literal syntax go through `Cast`.
pub fn print_tensor(t: &Tensor) -> String {
    fn nest(out: &mut String, shape: &[usize], items: &mut dyn Iterator<Item = String>) {
        match shape.split_first() {
            None => out.push_str(&items.next().unwrap_or_default()),
            Some((&n, rest)) => {
                out.push('[');
                for i in 0..n {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    nest(out, rest, items);
                }
                out.push(']');
            }
        }
    }
    let mut items: Box<dyn Iterator<Item = String>> = match t.buffer() {
        Buffer::F32(v) => Box::new(
            v.iter()
                .map(|&x| crate::value::ScalarConst::Float(x as f64).to_string()),
        ),
        Buffer::F64(v) => Box::new(
            v.iter()
                .map(|&x| crate::value::ScalarConst::Float(x).to_string()),
        ),
        Buffer::I64(v) => Box::new(v.iter().map(|x| x.to_string())),
        Buffer::Bool(v) => Box::new(v.iter().map(|x| x.to_string())),
    };
    let mut literal = String::new();
    nest(&mut literal, t.shape(), &mut items);
    let natural = match t.buffer() {
        Buffer::F32(_) | Buffer::F64(_) => DType::F32,
        Buffer::I64(_) => DType::I64,
        Buffer::Bool(_) => DType::Bool,
    };
    if t.dtype() == natural {
        literal
    } else {
        format!("Cast({literal}, {})", t.dtype())
    }
}
