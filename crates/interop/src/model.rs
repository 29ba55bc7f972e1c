//! A MindSpore graph as both importers read it (from a `.mindir` file or an
//! `.ir` dump), and its translation to DSL text.
//!
//! The translation keeps MindSpore's graph structure: one DSL graph per
//! FuncGraph (a graph that uses another's nodes is nested in it), one binding
//! per CNode that the result depends on, constants inline. MindSpore's
//! side-effect plumbing has no DSL counterpart and is removed: `Load(p, u)` is
//! `p`, `Depend(x, ...)` is `x`, `UpdateState` and monads disappear, except
//! that weight updates become statements in their order and reads of updated
//! weights are bound where they happen (see `model/effects.rs`). A `Switch`
//! on a constant condition is its chosen branch (MindSpore leaves such dead
//! branches in its dumps), `AddN` of a tuple is a chain of `Add`, and an
//! argument a graph ignores is passed as `none` when it cannot be written.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::Write;

use ir::{DType, Ty};
use tensor::{Buffer, Tensor};

use ops::mindspore::{ArgMap, Conv};

use crate::ms_ops;

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

mod text;
use text::*;

/// The name the importers give a MindSpore parameter in the DSL
/// (`layer2.down.0.weight` is `layer2.down._0.weight`): how a checkpoint
/// keyed by MindSpore's names finds an imported program's weights.
pub fn weight_name(mindspore: &str) -> String {
    identifier_or(&sanitize_weight(mindspore), "weight")
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
    /// The types MindSpore dumped for nodes (see [`to_dsl_typed`]).
    node_types: &'m HashMap<(usize, usize), Ty>,
    /// Set by the node just translated when it became an `Opaque` node: the
    /// attributes MindSpore gave its primitive, written beside it.
    opaque: Option<String>,
    /// The node being translated.
    current: Option<(usize, usize)>,
    /// Partial applications only ever called (see `effects.rs`).
    called_partials: HashSet<(usize, usize)>,
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
    to_dsl_typed(m, &HashMap::new(), opts, header)
}

/// As [`to_dsl`], knowing the type MindSpore gave some nodes (`(graph, node)`
/// indices; an `.ir` dump prints every node's): a node whose primitive mirdsl
/// does not implement becomes `Opaque(inputs..., name="...")` bound with that
/// type as its annotation, instead of an error.
pub fn to_dsl_typed(
    m: &Module,
    node_types: &HashMap<(usize, usize), Ty>,
    opts: &WeightOptions,
    header: &str,
) -> Result<Imported, ImportError> {
    let mut t = Translator {
        node_types,
        opaque: None,
        current: None,
        called_partials: HashSet::new(),
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
                // Apart from the top-level names: a nested graph must not
                // shadow a top-level graph its root's graphs call.
                names.taken.extend(top.taken.iter().cloned());
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
                self.current = Some((g, n));
                self.opaque = None;
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
                if let Some(attrs) = self.opaque.take() {
                    // An opaque node's type is the one MindSpore dumped.
                    let ty = self.node_types.get(&(g, n)).and_then(ty_text);
                    let ann = ty.map(|t| format!(": {t}")).unwrap_or_default();
                    let comment = if attrs.is_empty() {
                        String::new()
                    } else {
                        format!("  # {attrs}")
                    };
                    let _ = writeln!(text, "  {name}{ann} = {}{comment}", expr.text());
                } else if self.effects.roots[g].contains(&n) && !used.contains(&(g, n)) {
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
                        format!("constant({})", dtype_float_text(v, t.dtype()))
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
}

mod exprs;
use exprs::*;

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

    #[test]
    fn non_finite_tensor_literals_are_written_as_quotients() {
        let t = Tensor::from_f64(vec![2, 2], vec![0.5, f64::NEG_INFINITY, f64::NAN, 2.0])
            .unwrap()
            .cast(DType::F16);
        let text = text::tensor_literal(&t);
        assert_eq!(
            text,
            "Cast(RealDiv([[0.5, -1.0], [0.0, 2.0]], [[1.0, 0.0], [0.0, 1.0]]), f16)"
        );
        let a = analysis::analyze(&format!("graph main() {{\n  return {text}\n}}\n"));
        assert!(!a.has_errors(), "{:?}", a.diagnostics);
    }

    #[test]
    fn floats_print_in_their_dtype() {
        // An f32 (an attribute stored as one) in its own shortest form.
        assert_eq!(dtype_float_text(f64::from(1e-7f32), DType::F32), "1e-7");
        assert_eq!(dtype_float_text(f64::from(1e-5f32), DType::F32), "1e-5");
        assert_eq!(dtype_float_text(f64::from(0.1f32), DType::F16), "0.1");
        assert_eq!(dtype_float_text(2.0, DType::F32), "2.0");
        // An f64 keeps every digit it needs, whatever it was widened from.
        assert_eq!(
            dtype_float_text(f64::from(1e-7f32), DType::F64),
            "1.0000000116860974e-7"
        );
        assert_eq!(dtype_float_text(0.1, DType::F64), "0.1");
        // Not an f32 value: printed as the f64 it is.
        assert_eq!(
            dtype_float_text(0.7174987660822651, DType::F32),
            "0.7174987660822651"
        );
        let c = Const::Float(f64::from(1e-7f32), DType::F32);
        assert_eq!(const_text(&c).unwrap(), "1e-7");
        let c = Const::Float(f64::from(1e-7f32), DType::F16);
        assert_eq!(const_text(&c).unwrap(), "Cast(1e-7, f16)");
    }
}
