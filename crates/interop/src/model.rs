//! A MindSpore graph as both importers read it (from a `.mindir` file or an
//! `.ir` dump), and its translation to DSL text.
//!
//! The translation keeps MindSpore's graph structure: one DSL graph per
//! FuncGraph (a graph that uses another's nodes is nested in it), one binding
//! per CNode that the result depends on, constants inline. MindSpore's
//! side-effect plumbing has no DSL counterpart and is removed: `Load(p, u)` is
//! `p`, `Depend(x, ...)` is `x`, `UpdateState` and monads disappear, except
//! that weight updates become statements in their order and reads of updated
//! weights are bound where they happen (see `model_effects.rs`). A `Switch`
//! on a constant condition is its chosen branch (MindSpore leaves such dead
//! branches in its dumps), `AddN` of a tuple is a chain of `Add`, and an
//! argument a graph ignores is passed as `none` when it cannot be written.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::Write;

use ir::{DType, Ty};
use tensor::{Buffer, Tensor};

use ops::mindspore::{ArgMap, Conv};

use crate::ms_ops;

#[path = "model_effects.rs"]
mod effects;
use crate::ImportError;

/// A constant.
#[derive(Debug, Clone, PartialEq)]
pub enum Const {
    Int(i64, DType),
    Float(f64, DType),
    Bool(bool),
    Str(String),
    None,
    Tuple(Vec<Const>),
    Tensor(Tensor),
    /// A dtype used as a value (`Bool` in dumps).
    Type(DType),
    /// MindSpore's `UMonad`/`IOMonad` (side-effect tokens).
    Monad,
    /// Something the DSL cannot write, described for the error.
    Opaque(String),
}

/// What a node input refers to.
#[derive(Debug, Clone, PartialEq)]
pub enum Ref {
    Node(usize, usize),
    Param(usize, usize),
    Weight(usize),
    Graph(usize),
    Const(Const),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Callee {
    /// A primitive by MindSpore name, with the attributes on it (old-style
    /// primitives' attributes, `primitive_attrs` in dumps).
    Prim {
        name: String,
        attrs: Vec<(String, Const)>,
    },
    Value(Ref),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The name MindSpore gave it (a hint for the binding's name).
    pub name: String,
    pub callee: Callee,
    pub args: Vec<Ref>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    pub ty: Option<Ty>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Graph {
    pub name: String,
    /// The graph whose nodes this one uses (it is printed nested in it).
    pub parent: Option<usize>,
    pub params: Vec<Param>,
    pub nodes: Vec<Node>,
    pub output: Ref,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Weight {
    pub name: String,
    pub ty: Ty,
    /// `None` when the file does not hold the value (`.ir` dumps).
    pub value: Option<Tensor>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Module {
    pub graphs: Vec<Graph>,
    pub weights: Vec<Weight>,
    pub entry: usize,
}

/// How weights are written.
#[derive(Debug, Clone)]
pub struct WeightOptions {
    /// The `.safetensors` path `load(...)` names (relative to the `.mir` file).
    pub file: String,
    /// Weights with at most this many elements are written as tensor literals.
    pub inline_max: usize,
}

impl Default for WeightOptions {
    fn default() -> Self {
        WeightOptions {
            file: "weights.safetensors".into(),
            inline_max: 16,
        }
    }
}

/// The DSL text and the weights it loads.
#[derive(Debug, Clone)]
pub struct Imported {
    pub text: String,
    /// The weights `text` loads from [`WeightOptions::file`] (by key), to write
    /// there with `tensor::safetensors::write`. Empty when none is loaded.
    pub weights: Vec<(String, Tensor)>,
}

impl Imported {
    /// The bytes of the `.safetensors` file, when there are weights to write.
    pub fn safetensors(&self) -> Option<Vec<u8>> {
        if self.weights.is_empty() {
            return None;
        }
        let items: Vec<(&str, &Tensor)> =
            self.weights.iter().map(|(n, t)| (n.as_str(), t)).collect();
        Some(tensor::safetensors::write(&items))
    }
}

// ---------------------------------------------------------------------------
// Names.

/// Keywords, and names that read as types or metafunctions.
const KEYWORDS: &[&str] = &[
    "graph",
    "param",
    "return",
    "if",
    "else",
    "true",
    "false",
    "none",
    "fn",
    "and",
    "or",
    "not",
    "bool",
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "f16",
    "bf16",
    "f32",
    "f64",
    "str",
    "grad",
    "value_and_grad",
    "vjp",
    "zeros",
    "ones",
    "load",
];

/// A MindSpore graph name as a DSL identifier: `141_115_✓__main___CF_construct_78`
/// is `then_main_CF_construct`.
pub fn clean_graph_name(raw: &str) -> String {
    let mut s = raw.trim_start_matches('@');
    // Leading unique ids (`141_115_`).
    loop {
        let digits = s.chars().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 && s[digits..].starts_with('_') {
            s = &s[digits + 1..];
        } else {
            break;
        }
    }
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '✓' => out.push_str("then_"),
            '✗' => out.push_str("else_"),
            '↓' => out.push_str("after_"),
            '↻' => out.push_str("loop_"),
            '◂' => out.push_str("bprop_"),
            '▸' => out.push_str("fprop_"),
            'ф' => out.push_str("phi_"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            _ => out.push('_'),
        }
    }
    // A trailing unique id.
    if let Some(pos) = out.rfind('_') {
        if pos > 0 && out[pos + 1..].chars().all(|c| c.is_ascii_digit()) && pos + 1 < out.len() {
            out.truncate(pos);
        }
    }
    let mut collapsed = String::new();
    for c in out.chars() {
        if c == '_' && collapsed.ends_with('_') {
            continue;
        }
        collapsed.push(c);
    }
    let s = collapsed.trim_matches('_').to_string();
    identifier_or(&s, "graph")
}

/// A variable name from a MindSpore node or parameter name (`None` when it is
/// one MindSpore made up, like `CNode_75`).
pub fn clean_var_name(raw: &str) -> Option<String> {
    let mut out = String::new();
    for c in raw.chars() {
        match c {
            'ф' => out.push_str("phi_"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            '.' => out.push('.'),
            _ => out.push('_'),
        }
    }
    let generated = ["CNode", "ValueNode", "Parameter_", "equiv_", "_CNode_"];
    if out.is_empty()
        || generated.iter().any(|g| out.starts_with(g))
        || out.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return None;
    }
    let s = out.trim_matches('_');
    if s.is_empty() {
        return None;
    }
    Some(identifier_or(s, "v"))
}

/// `s` if it is a DSL identifier (dotted segments allowed), else a repaired one.
fn identifier_or(s: &str, prefix: &str) -> String {
    let segments: Vec<String> = s
        .split('.')
        .filter(|seg| !seg.is_empty())
        .map(|seg| {
            if seg.starts_with(|c: char| c.is_ascii_digit()) {
                format!("_{seg}")
            } else {
                seg.to_string()
            }
        })
        .collect();
    let joined = segments.join(".");
    if joined.is_empty() {
        return prefix.to_string();
    }
    if KEYWORDS.contains(&joined.as_str()) {
        return format!("{joined}_");
    }
    joined
}

/// Hands out names unique in a scope.
#[derive(Default)]
struct Names {
    taken: HashSet<String>,
    temp: usize,
}

impl Names {
    fn named(&mut self, wanted: &str) -> String {
        let mut name = wanted.to_string();
        let mut k = 1;
        while self.taken.contains(&name) || KEYWORDS.contains(&name.as_str()) {
            name = format!("{wanted}_{k}");
            k += 1;
        }
        self.taken.insert(name.clone());
        name
    }

    fn temp(&mut self) -> String {
        loop {
            let name = format!("%{}", self.temp);
            self.temp += 1;
            if self.taken.insert(name.clone()) {
                return name;
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Constants as DSL text.

fn float_text(x: f64) -> String {
    if x.is_nan() {
        return "(0.0 / 0.0)".into();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "(1.0 / 0.0)"
        } else {
            "(-1.0 / 0.0)"
        }
        .into();
    }
    let s = if x == x.trunc() && x.abs() < 1e15 {
        format!("{x:.1}")
    } else {
        format!("{x:?}")
    };
    s
}

/// An `f32` in the fewest digits that read back as the same `f32`.
fn f32_text(x: f32) -> String {
    if x.is_finite() && x == x.trunc() && x.abs() < 1e7 {
        format!("{x:.1}")
    } else if x.is_finite() {
        format!("{x:?}")
    } else {
        float_text(x as f64)
    }
}

fn tensor_literal(t: &Tensor) -> String {
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
    let (mut items, natural): (Box<dyn Iterator<Item = String>>, DType) = match t.buffer() {
        Buffer::F32(v) => (Box::new(v.iter().map(|&x| f32_text(x))), DType::F32),
        Buffer::F64(v) => (Box::new(v.iter().map(|&x| float_text(x))), DType::F32),
        Buffer::I64(v) => (Box::new(v.iter().map(|x| x.to_string())), DType::I64),
        Buffer::Bool(v) => (Box::new(v.iter().map(|x| x.to_string())), DType::Bool),
    };
    if t.rank() == 0 {
        let v = items.next().unwrap_or_default();
        return format!("Fill({}, (), {v})", t.dtype());
    }
    if t.numel() == 0 {
        let shape: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
        return format!("Zeros(({},), {})", shape.join(", "), t.dtype());
    }
    let mut literal = String::new();
    nest(&mut literal, t.shape(), &mut items);
    if t.dtype() == natural {
        literal
    } else {
        format!("Cast({literal}, {})", t.dtype())
    }
}

fn tuple_text(items: &[String]) -> String {
    match items {
        [one] => format!("({one},)"),
        _ => format!("({})", items.join(", ")),
    }
}

/// A constant as a DSL expression.
fn const_text(c: &Const) -> Result<String, String> {
    Ok(match c {
        Const::Int(i, d) => {
            if *d == DType::I64 {
                i.to_string()
            } else {
                format!("Cast({i}, {d})")
            }
        }
        Const::Float(x, d) => {
            if *d == DType::F32 {
                float_text(*x)
            } else {
                format!("Cast({}, {d})", float_text(*x))
            }
        }
        Const::Bool(b) => b.to_string(),
        Const::Str(s) => format!("{s:?}"),
        Const::None => "none".into(),
        Const::Tuple(items) => {
            let items: Vec<String> = items.iter().map(const_text).collect::<Result<_, _>>()?;
            tuple_text(&items)
        }
        Const::Tensor(t) => tensor_literal(t),
        Const::Type(d) => d.to_string(),
        Const::Monad => return Err("a monad (MindSpore's side-effect token)".into()),
        Const::Opaque(what) => return Err(what.clone()),
    })
}

/// A constant as the registry attribute `name` of `def` (`data_format=0`
/// becomes `"NCHW"`, ...).
/// The inputs of a call of `def` as arguments: positional while the signature
/// has only inputs before them, by keyword after its first attribute (so
/// `OneHot(indices, depth=5, on_value=a, off_value=b)` binds as meant).
fn keyword_late_inputs(def: &ops::OpDef, inputs: Vec<String>) -> Vec<String> {
    let first_attr = def.params.iter().position(|p| !p.is_input());
    let mut out = Vec::with_capacity(inputs.len());
    let mut values = inputs.into_iter();
    for (i, p) in def.params.iter().enumerate() {
        if !p.is_input() {
            continue;
        }
        let Some(v) = values.next() else { break };
        if first_attr.is_some_and(|a| a < i) {
            out.push(format!("{}={v}", p.name));
        } else {
            out.push(v);
        }
    }
    out.extend(values);
    out
}

/// A MindSpore dtype name (`"int64"`, `"Float32"`) as a dtype.
fn dtype_of_name(s: &str) -> Option<DType> {
    let lower = s.to_ascii_lowercase();
    DType::ALL
        .into_iter()
        .find(|d| d.mindspore_name().eq_ignore_ascii_case(&lower) || d.name() == lower)
}

fn attr_text(c: &Const, conv: Conv, def: &ops::OpDef, name: &str) -> Result<String, String> {
    // The registry's attribute type decides between MindSpore's spellings.
    match (def.param(name).map(|p| p.kind), c) {
        (
            Some(ops::ParamKind::Attr {
                ty: ops::AttrType::IntTuple,
                ..
            }),
            Const::Int(v, _),
        ) => {
            return Ok(format!("({v},)"));
        }
        (
            Some(ops::ParamKind::Attr {
                ty: ops::AttrType::IntTuple,
                ..
            }),
            Const::Tuple(_),
        ) => {
            return const_text(c);
        }
        (
            Some(ops::ParamKind::Attr {
                ty: ops::AttrType::IntTuple,
                ..
            }),
            Const::Tensor(t),
        ) if t.rank() == 0 && !t.dtype().is_float() => {
            return Ok(format!("({},)", t.to_f64_vec()[0] as i64));
        }
        (
            Some(ops::ParamKind::Attr {
                ty: ops::AttrType::DType,
                ..
            }),
            Const::Str(s),
        ) => {
            return dtype_of_name(s)
                .map(|d| d.to_string())
                .ok_or_else(|| format!("`{name}` names no dtype: {s:?}"));
        }
        (
            Some(ops::ParamKind::Attr {
                ty: ops::AttrType::DType,
                ..
            }),
            Const::Int(v, _),
        ) if conv == Conv::Plain => {
            return ms_ops::dtype_of_type_id(*v)
                .map(|d| d.to_string())
                .ok_or_else(|| format!("unsupported dtype (TypeId {v})"));
        }
        _ => {}
    }
    // A string attribute that MindSpore holds as an enum number.
    let allowed = match def.param(name).map(|p| p.kind) {
        Some(ops::ParamKind::Attr {
            ty: ops::AttrType::Str(allowed),
            ..
        }) => Some(allowed),
        _ => None,
    };
    let conv = match (conv, c) {
        (Conv::Plain, Const::Int(..)) if allowed.is_some() => {
            ops::mindspore::enum_of_arg(name).map_or(Conv::Plain, Conv::Enum)
        }
        _ => conv,
    };
    match (conv, c) {
        (Conv::Enum(e), Const::Int(v, _)) => {
            let s = e
                .name_of(*v)
                .ok_or_else(|| format!("`{name}` {v} is no value of MindSpore's `{}`", e.name))?;
            // The registry's spelling of it.
            let s = allowed
                .and_then(|a| a.iter().find(|x| x.eq_ignore_ascii_case(s)))
                .copied()
                .unwrap_or(s);
            Ok(format!("{s:?}"))
        }
        (Conv::TypeId, Const::Int(v, _)) => ms_ops::dtype_of_type_id(*v)
            .map(|d| d.to_string())
            .ok_or_else(|| format!("unsupported dtype (TypeId {v})")),
        (Conv::NoneIsEmpty, Const::None) => Ok("()".into()),
        (_, Const::Tensor(t)) if t.rank() <= 1 && !t.dtype().is_float() => {
            // Shapes and axes sometimes arrive as int tensors.
            let v: Vec<String> = t
                .to_f64_vec()
                .iter()
                .map(|x| (*x as i64).to_string())
                .collect();
            Ok(if t.rank() == 0 {
                v[0].clone()
            } else {
                tuple_text(&v)
            })
        }
        _ => const_text(c),
    }
}

// ---------------------------------------------------------------------------
// Translation.

/// `Switch(cond, a, b)(args)` with graph (or partially applied graph) branches.
struct SwitchCall {
    cond: Ref,
    then: (usize, Vec<Ref>),
    els: (usize, Vec<Ref>),
}

/// Graph-level expressions before printing.
#[derive(Debug, Clone)]
enum Expr {
    Name(String),
    Text(String),
}

impl Expr {
    fn text(&self) -> &str {
        match self {
            Expr::Name(s) | Expr::Text(s) => s,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum VarKey {
    Node(usize, usize),
    Param(usize, usize),
}

/// What a reference resolves to after removing MindSpore's plumbing.
#[derive(Debug, Clone, PartialEq)]
enum Resolved {
    Node(usize, usize),
    Param(usize, usize),
    Weight(usize),
    Graph(usize),
    Const(Const),
}

struct Translator<'m> {
    m: &'m Module,
    /// Variable names of nodes and parameters.
    var: HashMap<VarKey, String>,
    graph_names: Vec<String>,
    weight_names: Vec<String>,
    unknown_ops: BTreeSet<String>,
    /// MindSpore primitives the registry lacks, and the nodes that use them.
    unsupported_ops: BTreeMap<String, Vec<String>>,
    problems: Vec<String>,
    /// Parameters some node of their graph (or a nested one) uses.
    used_params: HashSet<(usize, usize)>,
    /// Parameters every caller binds to the same weight (how export passes
    /// weights to graphs): the weight is used directly.
    weight_params: HashMap<(usize, usize), usize>,
    /// Weight updates and the graphs that make them.
    effects: effects::Effects,
    /// `Load`s that stay statements (reads of weights that are updated).
    snapshots: HashSet<(usize, usize)>,
    /// Parameters that only receive the state token (loops pass it along):
    /// implicit in the DSL, so dropped.
    monad_params: HashSet<(usize, usize)>,
}

/// Translates a module to DSL text: the entry graph becomes `main`.
pub fn to_dsl(m: &Module, opts: &WeightOptions, header: &str) -> Result<Imported, ImportError> {
    let mut t = Translator {
        m,
        var: HashMap::new(),
        graph_names: Vec::new(),
        weight_names: Vec::new(),
        unknown_ops: BTreeSet::new(),
        unsupported_ops: BTreeMap::new(),
        problems: Vec::new(),
        used_params: HashSet::new(),
        weight_params: HashMap::new(),
        effects: effects::Effects::default(),
        snapshots: HashSet::new(),
        monad_params: HashSet::new(),
    };
    t.run(opts, header)
}

impl<'m> Translator<'m> {
    fn resolve(&self, r: &Ref) -> Resolved {
        let mut seen = 0;
        let mut r = r.clone();
        loop {
            seen += 1;
            if seen > 10_000 {
                return Resolved::Const(Const::Opaque("a cycle of aliases".into()));
            }
            match r {
                Ref::Node(g, n) => {
                    let node = &self.m.graphs[g].nodes[n];
                    match &node.callee {
                        Callee::Prim { name, .. } => {
                            let name = name.strip_prefix("PrimFunc_").unwrap_or(name);
                            match (name, node.args.as_slice()) {
                                ("Load", _) if self.snapshots.contains(&(g, n)) => {
                                    return Resolved::Node(g, n)
                                }
                                ("Load", [p, ..]) | ("Depend" | "depend", [p, ..]) => {
                                    r = p.clone();
                                    continue;
                                }
                                ("UpdateState", _) => return Resolved::Const(Const::Monad),
                                ("Switch" | "switch", [c, a, b]) => match self.resolve(c) {
                                    Resolved::Const(Const::Bool(v)) => {
                                        r = if v { a.clone() } else { b.clone() };
                                        continue;
                                    }
                                    Resolved::Const(Const::Tensor(t)) if t.numel() == 1 => {
                                        r = if t.to_f64_vec()[0] != 0.0 {
                                            a.clone()
                                        } else {
                                            b.clone()
                                        };
                                        continue;
                                    }
                                    _ => return Resolved::Node(g, n),
                                },
                                _ => return Resolved::Node(g, n),
                            }
                        }
                        Callee::Value(_) => return Resolved::Node(g, n),
                    }
                }
                Ref::Param(g, p) => {
                    if self.monad_params.contains(&(g, p)) {
                        return Resolved::Const(Const::Monad);
                    }
                    return match self.weight_params.get(&(g, p)) {
                        Some(&w) => Resolved::Weight(w),
                        None => Resolved::Param(g, p),
                    };
                }
                Ref::Weight(w) => return Resolved::Weight(w),
                Ref::Graph(g) => match self.forwards_to(g) {
                    Some(h) if h != g => {
                        r = Ref::Graph(h);
                        continue;
                    }
                    _ => return Resolved::Graph(g),
                },
                Ref::Const(c) => return Resolved::Const(c),
            }
        }
    }

    /// `h` when graph `g` only passes its parameters on to `h`
    /// (`graph g(a, b) { return h(a, b) }`), as exported `if` branches do.
    fn forwards_to(&self, g: usize) -> Option<usize> {
        let graph = &self.m.graphs[g];
        let [node] = graph.nodes.as_slice() else {
            return None;
        };
        if graph.output != Ref::Node(g, 0) {
            return None;
        }
        let Callee::Value(Ref::Graph(h)) = &node.callee else {
            return None;
        };
        let passes_params = node.args.len() == graph.params.len()
            && node
                .args
                .iter()
                .enumerate()
                .all(|(i, a)| *a == Ref::Param(g, i));
        (passes_params && *h != g).then_some(*h)
    }

    /// The nodes each graph needs, and the graphs the entry needs.
    fn live(&mut self) -> (Vec<BTreeSet<usize>>, BTreeSet<usize>) {
        let m = self.m;
        let mut nodes: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); m.graphs.len()];
        let mut graphs = BTreeSet::new();
        let mut work: Vec<Resolved> = vec![Resolved::Graph(m.entry)];
        while let Some(r) = work.pop() {
            match r {
                Resolved::Graph(g) => {
                    if graphs.insert(g) {
                        work.push(self.resolve(&m.graphs[g].output));
                        // Updates run whether or not a value uses them.
                        for &k in &self.effects.roots[g] {
                            work.push(Resolved::Node(g, k));
                        }
                        if let Some(p) = m.graphs[g].parent {
                            work.push(Resolved::Graph(p));
                        }
                    }
                }
                Resolved::Node(g, n) => {
                    if nodes[g].insert(n) {
                        graphs.insert(g);
                        let node = &m.graphs[g].nodes[n];
                        if let Some(sc) = self.switch_call(g, n) {
                            // `if`: the condition and each branch's call.
                            work.push(self.resolve(&sc.cond));
                            for (h, bound) in [&sc.then, &sc.els] {
                                work.push(Resolved::Graph(*h));
                                work.extend(bound.iter().map(|b| self.resolve(b)));
                            }
                        } else if let Callee::Value(c) = &node.callee {
                            work.push(self.resolve(c));
                        }
                        match self.addn_items(g, n) {
                            // `AddN((a, b))` is `Add(a, b)`: the tuple is not needed.
                            Some(items) => work.extend(items.iter().map(|a| self.resolve(a))),
                            None => work.extend(node.args.iter().map(|a| self.resolve(a))),
                        }
                    }
                }
                Resolved::Param(g, p) => {
                    self.used_params.insert((g, p));
                }
                Resolved::Const(Const::Tuple(_)) | Resolved::Weight(_) | Resolved::Const(_) => {}
            }
        }
        // Graph references inside constants do not occur; graph values are refs.
        (nodes, graphs)
    }

    /// Finds the parameters every use of their graph binds to one weight.
    fn find_weight_params(&mut self, live_nodes: &[BTreeSet<usize>]) {
        let m = self.m;
        // Per graph: the arguments of each call or partial application
        // (`None` past a partial's bound ones).
        let mut sites: HashMap<usize, Vec<Vec<Option<Resolved>>>> = HashMap::new();
        let mut site = |h: usize, args: Vec<Option<Resolved>>| {
            sites.entry(h).or_default().push(args);
        };
        let mut escaping: HashSet<usize> = HashSet::new();
        for (g, nodes) in live_nodes.iter().enumerate() {
            for &n in nodes {
                let node = &m.graphs[g].nodes[n];
                let mut args_are_values = true;
                if let Some(sc) = self.switch_call(g, n) {
                    for (h, bound) in [&sc.then, &sc.els] {
                        let all = bound.iter().chain(&node.args);
                        site(*h, all.map(|a| Some(self.resolve(a))).collect());
                    }
                } else {
                    match &node.callee {
                        Callee::Value(c) => {
                            if let Resolved::Graph(h) = self.resolve(c) {
                                site(h, node.args.iter().map(|a| Some(self.resolve(a))).collect());
                            }
                        }
                        Callee::Prim { name, .. }
                            if name.trim_start_matches("PrimFunc_") == "Partial" =>
                        {
                            if let Some((f, bound)) = node.args.split_first() {
                                if let Resolved::Graph(h) = self.resolve(f) {
                                    let mut args: Vec<Option<Resolved>> =
                                        bound.iter().map(|a| Some(self.resolve(a))).collect();
                                    args.resize(m.graphs[h].params.len().max(args.len()), None);
                                    site(h, args);
                                    for a in bound {
                                        if let Resolved::Graph(x) = self.resolve(a) {
                                            escaping.insert(x);
                                        }
                                    }
                                    args_are_values = false;
                                }
                            }
                        }
                        _ => {}
                    }
                }
                if args_are_values {
                    for a in &node.args {
                        if let Resolved::Graph(x) = self.resolve(a) {
                            escaping.insert(x);
                        }
                    }
                }
            }
            if let Resolved::Graph(x) = self.resolve(&m.graphs[g].output) {
                escaping.insert(x);
            }
        }
        for (h, list) in sites {
            if h == m.entry || escaping.contains(&h) {
                continue;
            }
            for i in 0..m.graphs[h].params.len() {
                let mut weight = None;
                let same = list.iter().all(|args| match args.get(i) {
                    Some(Some(Resolved::Weight(w))) => *weight.get_or_insert(*w) == *w,
                    _ => false,
                });
                if same {
                    if let Some(w) = weight {
                        self.weight_params.insert((h, i), w);
                    }
                }
            }
        }
    }

    /// Whether argument `i` of a use of graph `h` is dropped (its parameter
    /// is a weight).
    fn dropped(&self, h: Option<usize>, i: usize) -> bool {
        h.is_some_and(|h| {
            self.weight_params.contains_key(&(h, i)) || self.monad_params.contains(&(h, i))
        })
    }

    fn run(&mut self, opts: &WeightOptions, header: &str) -> Result<Imported, ImportError> {
        let m = self.m;
        self.effects = self.find_effects();
        for g in 0..m.graphs.len() {
            for n in 0..m.graphs[g].nodes.len() {
                if self.is_snapshot_load(&self.effects, g, n) {
                    self.snapshots.insert((g, n));
                }
            }
        }
        let (live_nodes, live_graphs) = self.live();
        // Updates whose value nothing uses are statements of their own.
        let mut used: HashSet<(usize, usize)> = HashSet::new();
        for (g, nodes) in live_nodes.iter().enumerate() {
            let graph = &m.graphs[g];
            let mut refs: Vec<Resolved> = vec![self.resolve(&graph.output)];
            for &n in nodes {
                let node = &graph.nodes[n];
                if let Callee::Value(c) = &node.callee {
                    refs.push(self.resolve(c));
                }
                refs.extend(node.args.iter().map(|a| self.resolve(a)));
            }
            for r in refs {
                if let Resolved::Node(h, k) = r {
                    used.insert((h, k));
                }
            }
        }
        self.find_weight_params(&live_nodes);
        self.find_monad_params(&live_nodes);
        // A graph that uses another graph's nodes or parameters is nested in it.
        let mut parent: Vec<Option<usize>> = m.graphs.iter().map(|g| g.parent).collect();
        for &g in &live_graphs {
            if parent[g].is_some() {
                continue;
            }
            for &n in &live_nodes[g] {
                let node = &m.graphs[g].nodes[n];
                let callee = match &node.callee {
                    Callee::Value(c) => Some(c),
                    _ => None,
                };
                for a in node.args.iter().chain(callee) {
                    match self.resolve(a) {
                        Resolved::Node(o, _) | Resolved::Param(o, _) if o != g => {
                            parent[g] = Some(o);
                        }
                        _ => {}
                    }
                }
            }
            if let Resolved::Node(o, _) | Resolved::Param(o, _) = self.resolve(&m.graphs[g].output)
            {
                if o != g && parent[g].is_none() {
                    parent[g] = Some(o);
                }
            }
        }
        // A cycle of parents cannot be printed.
        for &g in &live_graphs {
            let mut seen = HashSet::new();
            let mut p = Some(g);
            while let Some(x) = p {
                if !seen.insert(x) {
                    return Err(ImportError::Unsupported(format!(
                        "graph `{}` and the graphs whose values it uses capture each other",
                        m.graphs[g].name
                    )));
                }
                p = parent[x];
            }
        }
        let root_of = |mut g: usize| {
            while let Some(p) = parent[g] {
                g = p;
            }
            g
        };
        // Names: top-level graphs are unique in the file; `main` is the entry.
        let mut top = Names::default();
        for w in &m.weights {
            let name = top.named(&identifier_or(&sanitize_weight(&w.name), "weight"));
            self.weight_names.push(name);
        }
        self.graph_names = vec![String::new(); m.graphs.len()];
        self.graph_names[m.entry] = top.named("main");
        let mut scope: HashMap<usize, Names> = HashMap::new();
        for &g in &live_graphs {
            if g == m.entry {
                continue;
            }
            let name = clean_graph_name(&m.graphs[g].name);
            // Nested graph names share their root's scope.
            self.graph_names[g] = if parent[g].is_none() {
                top.named(&name)
            } else {
                name
            };
        }
        for &g in &live_graphs {
            if parent[g].is_some() {
                let names = scope.entry(root_of(g)).or_default();
                let name = names.named(&self.graph_names[g]);
                self.graph_names[g] = name;
            }
        }
        // Variable names, unique within a top-level graph and its nested graphs
        // (a nested graph must not shadow a name it captures) and apart from
        // the top-level names.
        for &g in &live_graphs {
            let names = scope.entry(root_of(g)).or_default();
            for t in &top.taken {
                names.taken.insert(t.clone());
            }
            for (i, p) in m.graphs[g].params.iter().enumerate() {
                let wanted = clean_var_name(&p.name).unwrap_or_else(|| format!("arg{i}"));
                let name = names.named(&wanted);
                self.var.insert(VarKey::Param(g, i), name);
            }
        }
        for &g in &live_graphs {
            let names = scope.entry(root_of(g)).or_default();
            for &n in &live_nodes[g] {
                let node = &m.graphs[g].nodes[n];
                let name = match clean_var_name(&node.name) {
                    Some(wanted) => names.named(&wanted),
                    None => names.temp(),
                };
                self.var.insert(VarKey::Node(g, n), name);
            }
        }

        // Bodies.
        let mut bodies: HashMap<usize, String> = HashMap::new();
        let mut order: Vec<usize> = live_graphs.iter().copied().collect();
        // Children first, so a parent can splice them in.
        order.sort_by_key(|&g| std::cmp::Reverse(depth(&parent, g)));
        for &g in &order {
            let mut text = String::new();
            let graph = &m.graphs[g];
            let params: Vec<String> = graph
                .params
                .iter()
                .enumerate()
                .filter(|(i, _)| !self.dropped(Some(g), *i))
                .map(|(i, p)| {
                    let name = self.var[&VarKey::Param(g, i)].clone();
                    match p.ty.as_ref().and_then(ty_text) {
                        Some(t) => format!("{name}: {t}"),
                        None => name,
                    }
                })
                .collect();
            let _ = writeln!(
                text,
                "graph {}({}) {{",
                self.graph_names[g],
                params.join(", ")
            );
            for &n in &live_nodes[g] {
                let expr = match self.node_expr(g, n) {
                    Ok(e) => e,
                    Err(e) => {
                        self.problems.push(format!(
                            "node `{}` of graph `{}`: {e}",
                            graph.nodes[n].name, graph.name
                        ));
                        continue;
                    }
                };
                let name = &self.var[&VarKey::Node(g, n)];
                if self.effects.roots[g].contains(&n) && !used.contains(&(g, n)) {
                    let _ = writeln!(text, "  {}", expr.text());
                } else {
                    let _ = writeln!(text, "  {name} = {}", expr.text());
                }
            }
            let mut children: Vec<usize> = live_graphs
                .iter()
                .copied()
                .filter(|&c| parent[c] == Some(g))
                .collect();
            children.sort();
            for c in children {
                for line in bodies[&c].lines() {
                    let _ = writeln!(text, "  {line}");
                }
            }
            let ret = match self.operand(g, &graph.output) {
                Ok(e) => e,
                Err(e) => {
                    self.problems
                        .push(format!("the output of graph `{}`: {e}", graph.name));
                    Expr::Text("none".into())
                }
            };
            let _ = writeln!(text, "  return {}", ret.text());
            text.push_str("}\n");
            bodies.insert(g, text);
        }
        if !self.unsupported_ops.is_empty() {
            return Err(ImportError::UnsupportedOps {
                ops: std::mem::take(&mut self.unsupported_ops)
                    .into_iter()
                    .collect(),
                unknown: self.unknown_ops.iter().cloned().collect(),
            });
        }
        if !self.unknown_ops.is_empty() {
            let ops: Vec<String> = self.unknown_ops.iter().cloned().collect();
            return Err(ImportError::UnknownOps(ops));
        }
        if !self.problems.is_empty() {
            return Err(ImportError::Unsupported(self.problems.join("\n")));
        }

        // Weights.
        let mut out = String::new();
        out.push_str(header);
        let mut loaded = Vec::new();
        for (i, w) in m.weights.iter().enumerate() {
            let name = &self.weight_names[i];
            let ty = ty_text(&w.ty).unwrap_or_else(|| w.ty.to_string());
            let init = match &w.value {
                Some(t) if uniform(t).is_some() => {
                    let v = uniform(t).unwrap();
                    if v == 0.0 {
                        "zeros".to_string()
                    } else if v == 1.0 {
                        "ones".to_string()
                    } else {
                        format!("constant({})", float_text(v))
                    }
                }
                Some(t)
                    if t.numel() <= opts.inline_max
                        && t.rank() > 0
                        && t.dtype() == natural_dtype(t) =>
                {
                    tensor_literal(t)
                }
                Some(t) => {
                    loaded.push((w.name.clone(), t.clone()));
                    format!("load({:?}, {:?})", opts.file, w.name)
                }
                None => "zeros  # the dump does not hold its value".into(),
            };
            let _ = writeln!(out, "param {name}: {ty} = {init}");
        }
        if !m.weights.is_empty() {
            out.push('\n');
        }
        // The entry first, then the other top-level graphs in the order the
        // graphs refer to them.
        let mut tops: Vec<usize> = vec![m.entry];
        let mut queue = std::collections::VecDeque::from([m.entry]);
        let mut seen: HashSet<usize> = HashSet::from([m.entry]);
        while let Some(g) = queue.pop_front() {
            let mut refs = Vec::new();
            for &n in &live_nodes[g] {
                let node = &m.graphs[g].nodes[n];
                if let Some(sc) = self.switch_call(g, n) {
                    refs.push(Resolved::Graph(sc.then.0));
                    refs.push(Resolved::Graph(sc.els.0));
                } else if let Callee::Value(c) = &node.callee {
                    refs.push(self.resolve(c));
                }
                refs.extend(node.args.iter().map(|a| self.resolve(a)));
            }
            refs.push(self.resolve(&m.graphs[g].output));
            for r in refs {
                if let Resolved::Graph(h) = r {
                    if live_graphs.contains(&h) && seen.insert(h) {
                        queue.push_back(h);
                        if parent[h].is_none() {
                            tops.push(h);
                        }
                    }
                }
            }
            // Graphs nested in `g` refer to others too.
            for &c in &live_graphs {
                if parent[c] == Some(g) && seen.insert(c) {
                    queue.push_back(c);
                }
            }
        }
        for &g in &live_graphs {
            if parent[g].is_none() && !tops.contains(&g) {
                tops.push(g);
            }
        }
        for (i, g) in tops.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&bodies[g]);
        }
        Ok(Imported {
            text: out,
            weights: loaded,
        })
    }

    /// How graph `g` refers to `r`.
    fn operand(&self, g: usize, r: &Ref) -> Result<Expr, String> {
        self.resolved_operand(g, &self.resolve(r))
    }

    fn resolved_operand(&self, _g: usize, r: &Resolved) -> Result<Expr, String> {
        match r {
            Resolved::Node(o, k) | Resolved::Param(o, k) => self
                .var
                .get(&match r {
                    Resolved::Node(..) => VarKey::Node(*o, *k),
                    _ => VarKey::Param(*o, *k),
                })
                .cloned()
                .map(Expr::Name)
                .ok_or_else(|| "uses a value that is not computed".to_string()),
            Resolved::Weight(w) => Ok(Expr::Name(self.weight_names[*w].clone())),
            Resolved::Graph(h) => Ok(Expr::Name(self.graph_names[*h].clone())),
            Resolved::Const(c) => const_text(c)
                .map(Expr::Text)
                .map_err(|e| format!("uses {e}, which the DSL cannot write")),
        }
    }

    /// A call of `Switch(cond, a, b)` whose branches are graphs or partial
    /// applications of graphs: an `if`.
    fn switch_call(&self, g: usize, n: usize) -> Option<SwitchCall> {
        let Callee::Value(c) = &self.m.graphs[g].nodes[n].callee else {
            return None;
        };
        let Resolved::Node(h, k) = self.resolve(c) else {
            return None;
        };
        let sw = &self.m.graphs[h].nodes[k];
        let Callee::Prim { name, .. } = &sw.callee else {
            return None;
        };
        if !matches!(name.trim_start_matches("PrimFunc_"), "Switch" | "switch") {
            return None;
        }
        let [cond, a, b] = sw.args.as_slice() else {
            return None;
        };
        let branch = |r: &Ref| -> Option<(usize, Vec<Ref>)> {
            match self.resolve(r) {
                Resolved::Graph(x) => Some((x, Vec::new())),
                Resolved::Node(h2, k2) => {
                    let p = &self.m.graphs[h2].nodes[k2];
                    match &p.callee {
                        Callee::Prim { name, .. }
                            if name.trim_start_matches("PrimFunc_") == "Partial" =>
                        {
                            let (f, bound) = p.args.split_first()?;
                            match self.resolve(f) {
                                Resolved::Graph(x) => Some((x, bound.to_vec())),
                                _ => None,
                            }
                        }
                        _ => None,
                    }
                }
                _ => None,
            }
        };
        Some(SwitchCall {
            cond: cond.clone(),
            then: branch(a)?,
            els: branch(b)?,
        })
    }

    /// The summands of `AddN(MakeTuple(a, b, ...))`.
    fn addn_items(&self, g: usize, n: usize) -> Option<Vec<Ref>> {
        let node = &self.m.graphs[g].nodes[n];
        let Callee::Prim { name, .. } = &node.callee else {
            return None;
        };
        if name.trim_start_matches("PrimFunc_") != "AddN" {
            return None;
        }
        self.addn_items_of(g, &node.args)
    }

    fn addn_items_of(&self, _g: usize, args: &[Ref]) -> Option<Vec<Ref>> {
        let [one] = args else {
            return Some(args.to_vec());
        };
        let Resolved::Node(h, k) = self.resolve(one) else {
            return None;
        };
        let t = &self.m.graphs[h].nodes[k];
        match &t.callee {
            Callee::Prim { name, .. } if name.trim_start_matches("PrimFunc_") == "MakeTuple" => {
                Some(t.args.clone())
            }
            _ => None,
        }
    }

    /// Whether graph `h` ignores its parameter `i`.
    fn unused_param(&self, h: usize, i: usize) -> bool {
        !self.used_params.contains(&(h, i))
    }

    fn node_expr(&mut self, g: usize, n: usize) -> Result<Expr, String> {
        let node = &self.m.graphs[g].nodes[n];
        if let Some(sc) = self.switch_call(g, n) {
            let cond = self.operand(g, &sc.cond)?;
            let mut calls = Vec::new();
            for (h, bound) in [&sc.then, &sc.els] {
                let mut args = Vec::new();
                for (i, a) in bound.iter().chain(&node.args).enumerate() {
                    if self.dropped(Some(*h), i) {
                        continue;
                    }
                    args.push(self.operand(g, a)?.text().to_string());
                }
                calls.push(format!("{}({})", self.graph_names[*h], args.join(", ")));
            }
            return Ok(Expr::Text(format!(
                "if {} {{ {} }} else {{ {} }}",
                cond.text(),
                calls[0],
                calls[1]
            )));
        }
        // The callee.
        match &node.callee {
            Callee::Value(c) => {
                let callee = self.resolve(c);
                let target = match &callee {
                    Resolved::Graph(h) => Some(*h),
                    _ => None,
                };
                let mut args = Vec::new();
                for (i, a) in node.args.iter().enumerate() {
                    if self.dropped(target, i) {
                        continue;
                    }
                    let e = match self.operand(g, a) {
                        Ok(e) => e,
                        Err(_) if target.is_some_and(|h| self.unused_param(h, i)) => {
                            Expr::Text("none".into())
                        }
                        Err(e) => return Err(e),
                    };
                    args.push(e.text().to_string());
                }
                let callee_text = self.resolved_operand(g, &callee)?;
                let call = format!("{}({})", callee_text.text(), args.join(", "));
                // A backpropagator of `J`: MindSpore's returns the free
                // variables' environment first, the DSL's `vjp` does not.
                if let Some(n) = self.j_backprop_arity(c) {
                    let items: Vec<String> = (0..n).map(|i| format!("r[{i}]")).collect();
                    return Ok(Expr::Text(format!(
                        "(fn(r) => (none, {}))({call})",
                        items.join(", ")
                    )));
                }
                Ok(Expr::Text(call))
            }
            Callee::Prim { name, attrs } => self.prim_expr(g, name, &node.name, attrs, &node.args),
        }
    }

    fn prim_expr(
        &mut self,
        g: usize,
        name: &str,
        node_name: &str,
        attrs: &[(String, Const)],
        args: &[Ref],
    ) -> Result<Expr, String> {
        let bare = name.strip_prefix("PrimFunc_").unwrap_or(name);
        // The state token is implicit in the DSL.
        let args = self.without_monad(args);
        let operands = |t: &Self| -> Result<Vec<String>, String> {
            args.iter()
                .map(|a| t.operand(g, a).map(|e| e.text().to_string()))
                .collect()
        };
        match bare {
            "MakeTuple" | "make_tuple" => {
                return Ok(Expr::Text(tuple_text(&operands(self)?)));
            }
            "Load" => {
                let w = args.first().ok_or("`Load` without its weight")?;
                return Ok(Expr::Text(format!("Load({})", self.operand(g, w)?.text())));
            }
            "TupleGetItem" | "tuple_getitem" => {
                let [t, i] = args else {
                    return Err("TupleGetItem needs two inputs".into());
                };
                let i = match self.resolve(i) {
                    Resolved::Const(Const::Int(i, _)) => i,
                    _ => return Err("TupleGetItem with a computed index".into()),
                };
                let t = self.operand(g, t)?;
                return Ok(Expr::Text(format!("{}[{i}]", t.text())));
            }
            "Partial" => {
                if let Some((f, bound)) = args.split_first() {
                    if let Resolved::Graph(h) = self.resolve(f) {
                        let mut parts = vec![self.graph_names[h].clone()];
                        for (i, a) in bound.iter().enumerate() {
                            if !self.dropped(Some(h), i) {
                                parts.push(self.operand(g, a)?.text().to_string());
                            }
                        }
                        return Ok(Expr::Text(if parts.len() == 1 {
                            parts.remove(0)
                        } else {
                            format!("Partial({})", parts.join(", "))
                        }));
                    }
                }
            }
            "AddN" => {
                // AddN((a, b, c)) is ((a + b) + c).
                let Some(items) = self.addn_items_of(g, args) else {
                    return Err("`AddN` of a tuple computed elsewhere".into());
                };
                let items: Vec<String> = items
                    .iter()
                    .map(|a| self.operand(g, a).map(|e| e.text().to_string()))
                    .collect::<Result<_, _>>()?;
                let mut it = items.into_iter();
                let first = it.next().ok_or("AddN of nothing")?;
                return Ok(Expr::Text(
                    it.fold(first, |acc, x| format!("Add({acc}, {x})")),
                ));
            }
            "J" => {
                // MindSpore's `J` is the DSL's `vjp` (its backpropagator's
                // extra environment output is added where it is called).
                let [f] = args else {
                    return Err("`J` takes one function".into());
                };
                if !matches!(self.resolve(f), Resolved::Graph(_)) {
                    return Err("`J` of a computed function value".into());
                }
                return Ok(Expr::Text(format!("vjp({})", self.operand(g, f)?.text())));
            }
            "resolve" => {
                return Err(
                    "`resolve` (a Python name MindSpore has not resolved yet): this dump is from \
                     before type inference; import a `type_inference` or later dump"
                        .into(),
                )
            }
            _ => {}
        }
        let mapping = match ops::mindspore::mapping(bare) {
            Some(Ok(m)) => m,
            Some(Err(why)) => {
                return Err(format!(
                    "`{bare}` does not line up with the registry's `{}`: {why}",
                    ops::mindspore::registry_name(bare)
                ))
            }
            None => {
                // Not a MindSpore primitive the registry supports: a registry
                // primitive of this name (an internal one) still imports, with
                // positional inputs and the attributes by name.
                if let Some(def) = ops::lookup(bare) {
                    return self.generic_call(g, def, None, attrs, args);
                }
                if ops::mindspore::schema(bare).is_some() {
                    let nodes = self.unsupported_ops.entry(bare.to_string()).or_default();
                    nodes.push(node_name.to_string());
                    return Err(format!(
                        "`{bare}` is a MindSpore {} primitive mirdsl does not support yet",
                        ops::mindspore::SERIES
                    ));
                }
                self.unknown_ops.insert(bare.to_string());
                return Err(format!("unknown primitive `{bare}`"));
            }
        };
        let def = mapping.def;
        let Some(spec) = &mapping.args else {
            return self.generic_call(g, def, Some(mapping), attrs, args);
        };
        // An old-style primitive with more node inputs than MindSpore's
        // definition names: attributes given as inputs, in the registry's order.
        let old_style = mapping
            .schema
            .is_some_and(|p| p.kind == ops::mindspore::MsKind::Primitive);
        if old_style && args.len() > spec.len() {
            return self.generic_call(g, def, Some(mapping), attrs, args);
        }
        let mut inputs = Vec::new();
        let mut kwargs = Vec::new();
        for (i, a) in spec.iter().enumerate() {
            let given = args.get(i);
            match a {
                ArgMap::Input => {
                    let r = given.ok_or_else(|| format!("`{bare}` lacks input {i}"))?;
                    let e = self.operand(g, r)?;
                    inputs.push(self.literal_input(def, e, r));
                }
                ArgMap::Attr(name, conv) => {
                    let Some(r) = given else { continue };
                    let value = match self.resolve(r) {
                        Resolved::Const(c) => c,
                        _ => {
                            return Err(format!(
                            "`{bare}`'s `{name}` is computed at run time; the DSL needs a constant"
                        ))
                        }
                    };
                    // MindSpore's `None` where its default is `None` is the
                    // registry's default.
                    let ms_default_none = mapping
                        .schema
                        .and_then(|p| p.node_inputs().nth(i))
                        .is_some_and(|a| a.default == Some(ops::mindspore::MsValue::None));
                    if value == Const::None && ms_default_none && *conv != Conv::NoneIsEmpty {
                        continue;
                    }
                    kwargs.push(format!("{name}={}", attr_text(&value, *conv, def, name)?));
                }
                ArgMap::Fixed(f) => {
                    let Some(r) = given else { continue };
                    if !fixed_matches(&self.resolve(r), f) {
                        let arg = mapping
                            .schema
                            .and_then(|p| p.node_inputs().nth(i))
                            .map_or_else(|| format!("argument {i}"), |a| format!("`{}`", a.name));
                        return Err(format!(
                            "`{bare}`'s {arg} is not {f}, which the registry's `{}` cannot express",
                            def.name
                        ));
                    }
                }
            }
        }
        if args.len() > spec.len() {
            return Err(format!(
                "`{bare}` has {} inputs, MindSpore {}'s has {}",
                args.len(),
                ops::mindspore::SERIES,
                spec.len()
            ));
        }
        // Attributes on the primitive itself (`primitive_attrs`) that the
        // registry knows.
        for (k, v) in attrs {
            if let Some(k) = mapping.attr(k) {
                if !kwargs.iter().any(|a| a.starts_with(&format!("{k}="))) {
                    kwargs.push(format!("{k}={}", attr_text(v, Conv::Plain, def, k)?));
                }
            }
        }
        let mut inputs = keyword_late_inputs(def, inputs);
        inputs.extend(drop_defaults(def, kwargs));
        Ok(Expr::Text(format!("{}({})", def.name, inputs.join(", "))))
    }

    /// A rank-0 tensor constant next to a computed operand of an elementwise
    /// primitive reads better as a plain literal (`x - 1.0`), which it equals
    /// there.
    fn literal_input(&self, def: &ops::OpDef, e: Expr, r: &Ref) -> String {
        if def.category == ops::Category::Elementwise && def.input_count() >= 2 {
            if let Resolved::Const(Const::Tensor(t)) = self.resolve(r) {
                if t.rank() == 0 && t.dtype() == DType::F32 {
                    return float_text(t.to_f64_vec()[0]);
                }
            }
        }
        e.text().to_string()
    }

    /// A call whose node inputs are the registry's inputs in order, then (for
    /// old-style primitives that take attributes as inputs) its attributes;
    /// the primitive's own attributes by name.
    fn generic_call(
        &mut self,
        g: usize,
        def: &ops::OpDef,
        mapping: Option<&ops::mindspore::Mapping>,
        attrs: &[(String, Const)],
        args: &[Ref],
    ) -> Result<Expr, String> {
        let n_inputs = if def.variadic {
            args.len()
        } else {
            def.input_count()
        };
        if args.len() < n_inputs {
            return Err(format!(
                "`{}` needs {n_inputs} inputs, the file gives {}",
                def.name,
                args.len()
            ));
        }
        let mut parts: Vec<String> = Vec::new();
        for a in &args[..n_inputs] {
            let e = self.operand(g, a)?;
            parts.push(self.literal_input(def, e, a));
        }
        // The registry attribute a MindSpore attribute name is.
        let attr_name = |k: &str| -> Option<&'static str> {
            match mapping {
                Some(m) => m.attr(k),
                None => {
                    let k = ops::mindspore::STORED_ATTR_NAMES
                        .iter()
                        .find(|(ms, _)| *ms == k)
                        .map_or(k, |(_, ours)| ours);
                    def.param(k).filter(|p| !p.is_input()).map(|p| p.name)
                }
            }
        };
        // Extra inputs are attributes: the one of MindSpore's name for that
        // input, else the registry's next.
        let ms_inputs: Vec<&str> = mapping
            .and_then(|m| m.schema)
            .map(|p| p.node_inputs().map(|a| a.name).collect())
            .unwrap_or_default();
        let mut attr_defs = def.attrs().map(|p| p.name);
        for (i, a) in args[n_inputs..].iter().enumerate() {
            let name = ms_inputs
                .get(n_inputs + i)
                .and_then(|n| attr_name(n))
                .or_else(|| attr_defs.next())
                .ok_or_else(|| {
                    format!(
                        "`{}` has {} inputs, more than the registry's",
                        def.name,
                        args.len()
                    )
                })?;
            match self.resolve(a) {
                Resolved::Const(c) => {
                    parts.push(format!("{name}={}", attr_text(&c, Conv::Plain, def, name)?))
                }
                _ => return Err(format!("`{}`'s `{name}` is computed at run time", def.name)),
            }
        }
        for (k, v) in attrs {
            let Some(k) = attr_name(k) else { continue };
            if parts.iter().any(|a| a.starts_with(&format!("{k}="))) {
                continue;
            }
            parts.push(format!("{k}={}", attr_text(v, Conv::Plain, def, k)?));
        }
        let inputs: Vec<String> = parts.drain(..n_inputs).collect();
        let mut all = if def.variadic {
            inputs
        } else {
            keyword_late_inputs(def, inputs)
        };
        all.extend(drop_defaults(def, parts));
        Ok(Expr::Text(format!("{}({})", def.name, all.join(", "))))
    }
}

/// Whether a node input holds the value MindSpore's argument is fixed to.
fn fixed_matches(r: &Resolved, f: &ops::mindspore::MsValue) -> bool {
    use ops::mindspore::MsValue as V;
    let Resolved::Const(c) = r else {
        return false;
    };
    match (c, f) {
        (Const::None, V::None) => true,
        (Const::Bool(b), V::Bool(x)) => b == x,
        (Const::Int(v, _), V::Int(x)) => v == x,
        (Const::Int(v, _), V::Bool(x)) => *v == i64::from(*x),
        (Const::Float(v, _), V::Float(x)) => v == x,
        (Const::Float(v, _), V::Int(x)) => *v == *x as f64,
        (Const::Str(s), V::Str(x)) => s.eq_ignore_ascii_case(x),
        (Const::Tuple(items), V::Ints(x)) => {
            items.len() == x.len()
                && items
                    .iter()
                    .zip(x.iter())
                    .all(|(c, x)| matches!(c, Const::Int(v, _) if v == x))
        }
        (Const::Int(v, _), V::DType(name)) => {
            ms_ops::dtype_of_ms_name(name).is_some_and(|d| ms_ops::type_id(d) == *v)
        }
        (Const::Type(d), V::DType(name)) => ms_ops::dtype_of_ms_name(name) == Some(*d),
        _ => false,
    }
}

/// Keyword arguments (`name=value`) minus those that give the registry's
/// default, in the registry's order.
fn drop_defaults(def: &ops::OpDef, kwargs: Vec<String>) -> Vec<String> {
    let mut kept: Vec<(usize, String)> = kwargs
        .into_iter()
        .filter_map(|kw| {
            let (name, value) = kw.split_once('=')?;
            let pos = def.params.iter().position(|p| p.name == name)?;
            let default = match def.params[pos].kind {
                ops::ParamKind::Attr {
                    default: Some(d), ..
                } => Some(d.value().to_string()),
                _ => None,
            };
            let is_default = default.as_deref().is_some_and(|d| {
                d == value || d.eq_ignore_ascii_case(value) || same_ints(d, value)
            });
            (!is_default).then_some((pos, kw))
        })
        .collect();
    kept.sort_by_key(|(p, _)| *p);
    kept.into_iter()
        .map(|(p, k)| match def.params[p].kind {
            // Only where the registry takes an int for a window, too.
            ops::ParamKind::Attr {
                ty: ops::AttrType::Ints,
                ..
            } => simplify_window(&k),
            _ => k,
        })
        .collect()
}

/// MindSpore's NCHW windows `(1, 1, h, w)` as `(h, w)`, and `(k, k)` as `k`.
fn simplify_window(kw: &str) -> String {
    let Some((name, value)) = kw.split_once('=') else {
        return kw.to_string();
    };
    if !matches!(
        name,
        "kernel_size" | "strides" | "stride" | "dilation" | "pad"
    ) {
        return kw.to_string();
    }
    let inner = value.strip_prefix('(').and_then(|v| v.strip_suffix(')'));
    let Some(ints) = inner.and_then(|v| {
        v.split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(|x| x.parse::<i64>().ok())
            .collect::<Option<Vec<i64>>>()
    }) else {
        return kw.to_string();
    };
    let hw = match (name, ints.as_slice()) {
        ("pad", [a, b, c, d]) if a == b && b == c && c == d => vec![*a],
        ("pad", _) => ints.clone(),
        (_, [1, 1, h, w]) => vec![*h, *w],
        _ => ints.clone(),
    };
    match hw.as_slice() {
        [a, b] if a == b => format!("{name}={a}"),
        [a] => format!("{name}={a}"),
        _ => format!(
            "{name}=({})",
            hw.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `1` and `(1, 1, 1, 1)`, or `(0,)` and `0`: an int and a tuple of copies of it.
fn same_ints(a: &str, b: &str) -> bool {
    let ints = |s: &str| -> Option<Vec<i64>> {
        let s = s.trim();
        let inner = s
            .strip_prefix('(')
            .and_then(|s| s.strip_suffix(')'))
            .unwrap_or(s);
        inner
            .split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(|x| x.parse().ok())
            .collect()
    };
    match (ints(a), ints(b)) {
        (Some(x), Some(y)) if !x.is_empty() && !y.is_empty() => {
            let first = x[0];
            x.iter().chain(&y).all(|&v| v == first)
        }
        _ => false,
    }
}

/// The value every element of a (non-empty) tensor has, if they agree.
fn uniform(t: &Tensor) -> Option<f64> {
    let values = t.to_f64_vec();
    let first = *values.first()?;
    values
        .iter()
        .all(|&v| v.to_bits() == first.to_bits())
        .then_some(first)
}

fn depth(parent: &[Option<usize>], mut g: usize) -> usize {
    let mut d = 0;
    while let Some(p) = parent[g] {
        d += 1;
        g = p;
    }
    d
}

fn natural_dtype(t: &Tensor) -> DType {
    match t.buffer() {
        Buffer::F32(_) | Buffer::F64(_) => DType::F32,
        Buffer::I64(_) => DType::I64,
        Buffer::Bool(_) => DType::Bool,
    }
}

/// Weight names keep their dots; other characters become `_`.
fn sanitize_weight(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A type as a DSL annotation; `None` when it has parts the DSL cannot write.
pub fn ty_text(t: &Ty) -> Option<String> {
    fn ok(t: &Ty) -> bool {
        match t {
            Ty::Unknown | Ty::Func(_) => false,
            Ty::Tuple(items) => items.iter().all(ok),
            _ => true,
        }
    }
    ok(t).then(|| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graph_names() {
        assert_eq!(
            clean_graph_name("141_115_✓__main___CF_construct_78"),
            "then_main_CF_construct"
        );
        assert_eq!(clean_graph_name("@3__mul_tensor_20"), "mul_tensor");
        assert_eq!(clean_graph_name("6_func_19"), "func");
        assert_eq!(clean_graph_name("11_↓test_if_99"), "after_test_if");
        assert_eq!(clean_graph_name("12"), "_12");
    }

    #[test]
    fn var_names() {
        assert_eq!(clean_var_name("CNode_75"), None);
        assert_eq!(clean_var_name("x"), Some("x".into()));
        assert_eq!(clean_var_name("фz"), Some("phi_z".into()));
        assert_eq!(clean_var_name("fc1.weight"), Some("fc1.weight".into()));
        assert_eq!(clean_var_name("if"), Some("if_".into()));
    }
}
