//! A small whole-program abstract interpretation used by the transformation and
//! the clean-up passes: for every node, what is known of its value (dtype and
//! shape through the registry's shape rules, tuple structure, and which graphs
//! or primitives a function value may be: a 0-CFA).
//!
//! It is monovariant: one value per node, joined over every call of its graph,
//! which is what the transformation needs (one `J` graph per graph). It starts
//! from one entry graph and its parameter values and reaches what that entry
//! can call.

use std::collections::{HashMap, HashSet, VecDeque};

use ir::{AbsVal, Body, GraphId, NodeId, NodeKind, PrimRef, ScalarConst, Value};

use crate::world::{Item, World};

/// A function value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FnRef {
    /// A graph (a closure when it captures values).
    Graph(Item, GraphId),
    /// A primitive used as a value.
    Prim(PrimRef),
    /// The result of a `Partial` node.
    Partial(Item, NodeId),
}

/// An abstract value.
#[derive(Debug, Clone, PartialEq)]
pub enum AV {
    /// Not (yet) known to take any value.
    Bot,
    /// A tensor, scalar, string or none (never `AbsVal::Tuple` or `AbsVal::Any`).
    Data(AbsVal),
    Tuple(Vec<AV>),
    /// One of these functions.
    Funcs(Vec<FnRef>),
    /// Anything.
    Any,
}

const MAX_DEPTH: usize = 12;

impl AV {
    pub fn from_absval(v: &AbsVal) -> AV {
        match v {
            AbsVal::Tuple(items) => AV::Tuple(items.iter().map(AV::from_absval).collect()),
            AbsVal::Any | AbsVal::Func(_) => AV::Any,
            other => AV::Data(other.clone()),
        }
    }

    /// As the registry's abstract value (functions become `Any`).
    pub fn to_absval(&self) -> AbsVal {
        match self {
            AV::Data(v) => v.clone(),
            AV::Tuple(items) => AbsVal::Tuple(items.iter().map(AV::to_absval).collect()),
            _ => AbsVal::Any,
        }
    }

    pub fn join(&self, other: &AV) -> AV {
        self.join_at(other, 0)
    }

    fn join_at(&self, other: &AV, depth: usize) -> AV {
        if depth > MAX_DEPTH {
            return AV::Any;
        }
        match (self, other) {
            (AV::Bot, x) | (x, AV::Bot) => x.clone(),
            (AV::Any, _) | (_, AV::Any) => AV::Any,
            (AV::Data(a), AV::Data(b)) => a.join(b).map_or(AV::Any, |v| AV::from_absval(&v)),
            (AV::Tuple(a), AV::Tuple(b)) if a.len() == b.len() => AV::Tuple(
                a.iter()
                    .zip(b)
                    .map(|(x, y)| x.join_at(y, depth + 1))
                    .collect(),
            ),
            (AV::Funcs(a), AV::Funcs(b)) => {
                let mut all = a.clone();
                for f in b {
                    if !all.contains(f) {
                        all.push(f.clone());
                    }
                }
                AV::Funcs(all)
            }
            _ => AV::Any,
        }
    }

    /// Every function this value may hold (in tuples too).
    pub fn functions(&self, out: &mut Vec<FnRef>) {
        match self {
            AV::Funcs(fs) => out.extend(fs.iter().cloned()),
            AV::Tuple(items) => items.iter().for_each(|i| i.functions(out)),
            _ => {}
        }
    }

    fn depth(&self) -> usize {
        match self {
            AV::Tuple(items) => 1 + items.iter().map(AV::depth).max().unwrap_or(0),
            _ => 0,
        }
    }

    /// A constant scalar's value.
    pub fn const_int(&self) -> Option<i64> {
        match self {
            AV::Data(v) => v.const_value().and_then(ScalarConst::as_i64),
            _ => None,
        }
    }
}

/// What the interpretation found.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    vals: HashMap<(Item, NodeId), AV>,
    rets: HashMap<(Item, GraphId), AV>,
    /// Graphs that are called, in the order first reached.
    pub reached: Vec<(Item, GraphId)>,
    weights: HashMap<String, AV>,
}

impl Analysis {
    /// The value of any node of `item`'s body (constants and weights included).
    pub fn value(&self, world: &World, item: &Item, node: NodeId) -> AV {
        let Some(body) = world.body(item) else {
            return AV::Any;
        };
        // A node a pass made after the analysis ran (the zeros pass rewrites
        // as it asks): unknown.
        let Some(n) = body.nodes.get(node.0 as usize) else {
            return AV::Any;
        };
        match &n.kind {
            NodeKind::Param { .. } | NodeKind::Apply(_) => self
                .vals
                .get(&(item.clone(), node))
                .cloned()
                .unwrap_or(AV::Bot),
            NodeKind::Weight(name) => self.weights.get(name).cloned().unwrap_or(AV::Any),
            NodeKind::Const(v) => const_value(world, item, v),
        }
    }

    pub fn ret(&self, item: &Item, graph: GraphId) -> AV {
        self.rets
            .get(&(item.clone(), graph))
            .cloned()
            .unwrap_or(AV::Bot)
    }

    /// Every function value any node may hold.
    pub fn all_functions(&self) -> Vec<FnRef> {
        let mut out = Vec::new();
        let mut keys: Vec<&(Item, NodeId)> = self.vals.keys().collect();
        keys.sort_by(|a, b| (a.0.as_ref(), a.1).cmp(&(b.0.as_ref(), b.1)));
        for k in keys {
            self.vals[k].functions(&mut out);
        }
        let mut seen = HashSet::new();
        out.retain(|f| seen.insert(f.clone()));
        out
    }

    /// Every node value that holds functions, for grouping them into classes.
    pub fn function_sets(&self) -> Vec<Vec<FnRef>> {
        let mut out = Vec::new();
        for v in self.vals.values().chain(self.rets.values()) {
            collect_sets(v, &mut out);
        }
        out
    }
}

fn collect_sets(v: &AV, out: &mut Vec<Vec<FnRef>>) {
    match v {
        AV::Funcs(fs) if fs.len() > 1 => out.push(fs.clone()),
        AV::Tuple(items) => items.iter().for_each(|i| collect_sets(i, out)),
        _ => {}
    }
}

/// The abstract value of a constant.
pub fn const_value(world: &World, item: &Item, v: &Value) -> AV {
    match v {
        Value::Scalar { value, dtype, weak } => AV::Data(AbsVal::constant(*value, *dtype, *weak)),
        Value::Str(s) => AV::Data(AbsVal::Str(Some(s.clone()))),
        Value::None => AV::Data(AbsVal::None),
        Value::Tuple(items) => {
            AV::Tuple(items.iter().map(|i| const_value(world, item, i)).collect())
        }
        Value::Tensor(t) => AV::Data(AbsVal::tensor(
            t.dtype(),
            &t.shape().iter().map(|&d| d as i64).collect::<Vec<_>>(),
        )),
        Value::Prim(p) => AV::Funcs(vec![FnRef::Prim(p.clone())]),
        Value::Graph(g) => AV::Funcs(vec![FnRef::Graph(item.clone(), *g)]),
        Value::Global(name) => match world.item(name) {
            Some(it) => AV::Funcs(vec![FnRef::Graph(it, GraphId(0))]),
            None => AV::Any,
        },
        Value::Meta(_) | Value::Type(_) => AV::Any,
        Value::Monad => AV::Data(AbsVal::Monad),
    }
}

/// Interprets `world` from graph `graph` of `entry`, called with `params`.
pub fn analyze(world: &World, entry: &Item, graph: GraphId, params: &[AV]) -> Analysis {
    let mut engine = Engine::new(world, Analysis::default());
    for (name, ty) in &world.weights {
        engine
            .an
            .weights
            .insert(name.clone(), AV::from_absval(&AbsVal::from_ty(ty)));
    }
    engine.reach(entry, graph);
    if let Some(body) = world.body(entry) {
        for (i, &p) in body.graph(graph).params.iter().enumerate() {
            let v = params.get(i).cloned().unwrap_or(AV::Any);
            engine.update(entry, p, v);
        }
    }
    engine.fixpoint();
    engine.an
}

/// Like [`analyze`], for an entry returning `(output, backprop)` (a `vjp`):
/// the backpropagator is also called, with a sensitivity like the output.
pub fn analyze_vjp(world: &World, entry: &Item, params: &[AV]) -> Analysis {
    let an = analyze(world, entry, GraphId(0), params);
    let mut engine = Engine::new(world, an);
    engine.reached_set = engine.an.reached.iter().cloned().collect();
    if let AV::Tuple(items) = engine.an.ret(entry, GraphId(0)) {
        if let [out, AV::Funcs(fs)] = items.as_slice() {
            engine.current = Some((entry.clone(), GraphId(0)));
            for f in fs {
                engine.call(entry, NodeId(0), f, std::slice::from_ref(out));
            }
            engine.current = None;
            engine.fixpoint();
        }
    }
    engine.an
}

/// Evaluations of graphs before the interpretation gives up refining (values
/// stay sound only as far as they got; this is a safeguard, not a limit that
/// real programs reach).
const MAX_EVALUATIONS: usize = 2_000_000;

struct Engine<'a> {
    world: &'a World,
    an: Analysis,
    reached_set: HashSet<(Item, GraphId)>,
    /// Graphs to evaluate again, and which are queued.
    queue: VecDeque<(Item, GraphId)>,
    queued: HashSet<(Item, GraphId)>,
    /// For each graph, the graphs that call it (to revisit when its result grows).
    callers: HashMap<(Item, GraphId), HashSet<(Item, GraphId)>>,
    /// The graph being evaluated.
    current: Option<(Item, GraphId)>,
    /// Graphs being evaluated (callers of the current one included).
    stack: HashSet<(Item, GraphId)>,
    changed: bool,
    evaluations: usize,
}

impl<'a> Engine<'a> {
    fn new(world: &'a World, an: Analysis) -> Engine<'a> {
        Engine {
            world,
            an,
            reached_set: HashSet::new(),
            queue: VecDeque::new(),
            queued: HashSet::new(),
            callers: HashMap::new(),
            current: None,
            stack: HashSet::new(),
            changed: false,
            evaluations: 0,
        }
    }

    fn enqueue(&mut self, key: (Item, GraphId)) {
        if self.queued.insert(key.clone()) {
            self.queue.push_back(key);
        }
    }

    /// Evaluates queued graphs until none is left, then sweeps every reached
    /// graph once to catch any dependency the queue does not track.
    fn fixpoint(&mut self) {
        loop {
            while let Some(key) = self.queue.pop_front() {
                self.queued.remove(&key);
                if self.evaluations > MAX_EVALUATIONS {
                    return;
                }
                self.eval_graph(&key.0, key.1);
            }
            self.changed = false;
            let mut i = 0;
            while i < self.an.reached.len() {
                let (item, g) = self.an.reached[i].clone();
                self.eval_graph(&item, g);
                i += 1;
            }
            if (!self.changed && self.queue.is_empty()) || self.evaluations > MAX_EVALUATIONS {
                return;
            }
        }
    }

    fn reach(&mut self, item: &Item, g: GraphId) {
        if self.reached_set.insert((item.clone(), g)) {
            self.an.reached.push((item.clone(), g));
            self.changed = true;
            self.enqueue((item.clone(), g));
        }
    }

    /// Joins `v` into a node's value; whether it grew.
    fn update(&mut self, item: &Item, node: NodeId, v: AV) -> bool {
        let key = (item.clone(), node);
        let old = self.an.vals.get(&key).cloned().unwrap_or(AV::Bot);
        let mut new = old.join(&v);
        if new.depth() > MAX_DEPTH {
            new = AV::Any;
        }
        if new == old {
            return false;
        }
        self.an.vals.insert(key, new);
        self.changed = true;
        // A parameter: its graph must be evaluated again.
        if let Some(body) = self.world.body(item) {
            if let (NodeKind::Param { .. }, Some(g)) =
                (&body.node(node).kind, body.node(node).graph)
            {
                if self.reached_set.contains(&(item.clone(), g)) {
                    self.enqueue((item.clone(), g));
                }
            }
        }
        true
    }

    fn update_ret(&mut self, item: &Item, g: GraphId, v: AV) {
        let key = (item.clone(), g);
        let old = self.an.rets.get(&key).cloned().unwrap_or(AV::Bot);
        let new = old.join(&v);
        if new != old {
            self.an.rets.insert(key.clone(), new);
            self.changed = true;
            let callers: Vec<(Item, GraphId)> = self
                .callers
                .get(&key)
                .map(|c| c.iter().cloned().collect())
                .unwrap_or_default();
            for c in callers {
                self.enqueue(c);
            }
        }
    }

    fn value(&self, item: &Item, node: NodeId) -> AV {
        self.an.value(self.world, item, node)
    }

    fn eval_graph(&mut self, item: &Item, g: GraphId) {
        let Some(body) = self.world.body(item).cloned() else {
            return;
        };
        self.evaluations += 1;
        let saved = self.current.replace((item.clone(), g));
        let fresh = self.stack.insert((item.clone(), g));
        let graph = body.graph(g);
        let mut grew = false;
        for &n in &graph.nodes {
            let v = self.eval_apply(item, &body, n);
            grew |= self.update(item, n, v);
        }
        if let Some(out) = graph.output {
            let v = self.value(item, out);
            self.update_ret(item, g, v);
        }
        self.current = saved;
        if fresh {
            self.stack.remove(&(item.clone(), g));
        }
        if grew {
            // Closures nested in this graph read its values.
            let inner: Vec<GraphId> = body
                .graph_ids()
                .filter(|&h| h != g && body.is_within(h, g))
                .filter(|&h| self.reached_set.contains(&(item.clone(), h)))
                .collect();
            for h in inner {
                self.enqueue((item.clone(), h));
            }
        }
    }

    fn eval_apply(&mut self, item: &Item, body: &Body, n: NodeId) -> AV {
        let inputs = body.inputs(n);
        let Some((&callee, args)) = inputs.split_first() else {
            return AV::Any;
        };
        let args: Vec<AV> = args.iter().map(|&a| self.value(item, a)).collect();
        if let NodeKind::Const(Value::Prim(p)) = &body.node(callee).kind {
            return self.apply_prim(item, n, p, &args);
        }
        let f = self.value(item, callee);
        self.apply_value(item, n, &f, &args)
    }

    fn apply_value(&mut self, item: &Item, n: NodeId, f: &AV, args: &[AV]) -> AV {
        match f {
            AV::Funcs(fs) => {
                let mut result = AV::Bot;
                for f in fs.clone() {
                    let r = self.call(item, n, &f, args);
                    result = result.join(&r);
                }
                result
            }
            AV::Bot => AV::Bot,
            _ => AV::Any,
        }
    }

    fn call(&mut self, item: &Item, n: NodeId, f: &FnRef, args: &[AV]) -> AV {
        match f {
            FnRef::Prim(p) => self.apply_prim(item, n, p, args),
            FnRef::Graph(it, g) => {
                let Some(body) = self.world.body(it).cloned() else {
                    return AV::Any;
                };
                let params = body.graph(*g).params.clone();
                if params.len() != args.len() {
                    return AV::Any;
                }
                self.reach(it, *g);
                if let Some(c) = self.current.clone() {
                    self.callers.entry((it.clone(), *g)).or_default().insert(c);
                }
                for (p, a) in params.iter().zip(args) {
                    self.update(it, *p, a.clone());
                }
                // A callee with new arguments is evaluated right away (unless
                // it is being evaluated: recursion), so its caller sees its
                // result without waiting for another round.
                let key = (it.clone(), *g);
                if self.queued.contains(&key) && !self.stack.contains(&key) && self.stack.len() < 64
                {
                    self.queued.remove(&key);
                    self.eval_graph(it, *g);
                }
                self.an.ret(it, *g)
            }
            FnRef::Partial(it, pn) => {
                let Some(body) = self.world.body(it).cloned() else {
                    return AV::Any;
                };
                let inputs = body.inputs(*pn).to_vec();
                if inputs.len() < 2 {
                    return AV::Any;
                }
                let inner = self.value(it, inputs[1]);
                let mut all: Vec<AV> = inputs[2..].iter().map(|&a| self.value(it, a)).collect();
                all.extend(args.iter().cloned());
                self.apply_value(item, n, &inner, &all)
            }
        }
    }

    fn apply_prim(&mut self, item: &Item, n: NodeId, p: &PrimRef, args: &[AV]) -> AV {
        match p.name.as_str() {
            "MakeTuple" => return AV::Tuple(args.to_vec()),
            "TupleGetItem" => {
                let (Some(t), Some(i)) = (args.first(), args.get(1)) else {
                    return AV::Any;
                };
                return match (t, i.const_int()) {
                    (AV::Bot, _) => AV::Bot,
                    (AV::Tuple(items), Some(k)) => {
                        let len = items.len() as i64;
                        let k = if k < 0 { k + len } else { k };
                        if (0..len).contains(&k) {
                            items[k as usize].clone()
                        } else {
                            AV::Any
                        }
                    }
                    _ => AV::Any,
                };
            }
            "Switch" => {
                let (Some(a), Some(b)) = (args.get(1), args.get(2)) else {
                    return AV::Any;
                };
                return a.join(b);
            }
            "Partial" => return AV::Funcs(vec![FnRef::Partial(item.clone(), n)]),
            "Depend" | "StopGradient" | "Return" | "Load" => {
                return args.first().cloned().unwrap_or(AV::Any)
            }
            "UpdateState" => return AV::Data(AbsVal::Monad),
            _ => {}
        }
        let Some(op) = ops::lookup(&p.name) else {
            return AV::Any;
        };
        if args.contains(&AV::Bot) {
            return AV::Bot;
        }
        // An ordered call's last input is the state token.
        let args = if ops::is_ordered(op.name) && args.len() == op.input_count() + 1 {
            &args[..op.input_count()]
        } else {
            args
        };
        if args.len() != op.input_count() && !op.variadic {
            return AV::Any;
        }
        if args.iter().any(|a| matches!(a, AV::Funcs(_))) {
            return AV::Any;
        }
        let inputs: Vec<AbsVal> = args.iter().map(AV::to_absval).collect();
        let attrs = ops::resolve_attrs(op, &p.attrs);
        match (op.infer)(&ops::InferCall {
            op,
            inputs: &inputs,
            attrs: &attrs,
        }) {
            Ok(v) => AV::from_absval(&v),
            Err(_) => AV::Any,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::Arc;

    /// Lowers a program into a world.
    pub fn world(text: &str) -> World {
        let a = analysis::analyze(text);
        assert!(!a.has_errors(), "{:?}", a.diagnostics);
        World::from_program(&a.source.program())
    }

    pub fn run(w: &World, entry: &str) -> (Item, Analysis) {
        let item: Item = Arc::from(entry);
        let body = &w.bodies[&item];
        let params: Vec<AV> = body
            .graph(GraphId(0))
            .params
            .iter()
            .map(|&p| {
                body.node(p)
                    .annotation
                    .as_ref()
                    .map_or(AV::Any, |(t, _)| AV::from_absval(&AbsVal::from_ty(t)))
            })
            .collect();
        let an = analyze(w, &item, GraphId(0), &params);
        (item, an)
    }

    /// The value of the node bound to `name` in `item`'s body.
    pub fn named(w: &World, an: &Analysis, item: &str, name: &str) -> AV {
        let it: Item = Arc::from(item);
        let body = &w.bodies[&it];
        let n = (0..body.nodes.len() as u32)
            .map(NodeId)
            .find(|&n| body.node(n).name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no node `{name}`"));
        an.value(w, &it, n)
    }

    #[test]
    fn types_flow_through_calls_and_shape_rules() {
        let w = world(
            "graph func(x, y) { return x / y }\n\
             graph test_f(x: f32[3], y: f32[3]) {\n  a = x - 1\n  c = func(a, y) * a\n  return c\n}\n",
        );
        let (item, an) = run(&w, "test_f");
        assert_eq!(
            named(&w, &an, "test_f", "c").to_absval().to_string(),
            "f32[3]"
        );
        assert_eq!(an.ret(&item, GraphId(0)).to_absval().to_string(), "f32[3]");
        // `func` was reached and its parameters took the arguments' values.
        assert!(an.reached.iter().any(|(i, _)| &**i == "func"));
    }

    #[test]
    fn function_values_are_tracked() {
        let w = world(
            "graph hof(x: f32[2]) {\n  graph f(x) { return x + 3 }\n  graph g(function, x) { return function(x) }\n  return g(f, x)\n}\n\
             graph outer(a) {\n  graph inner(c) { return a + c }\n  return inner\n}\n\
             graph user(x: f32[2]) {\n  k = outer(x)\n  return k(x)\n}\n",
        );
        let (_, an) = run(&w, "hof");
        let function = named(&w, &an, "hof", "function");
        assert_eq!(
            function,
            AV::Funcs(vec![FnRef::Graph(Arc::from("hof"), GraphId(1))])
        );
        let (_, an) = run(&w, "user");
        assert_eq!(
            named(&w, &an, "user", "k"),
            AV::Funcs(vec![FnRef::Graph(Arc::from("outer"), GraphId(1))])
        );
    }

    #[test]
    fn recursion_reaches_a_fixpoint() {
        let w = world(
            "graph fib(n: i64) -> i64 {\n  r = if n < 1 { 0 } else { fib(n - 1) + fib(n - 2) }\n  return r\n}\n",
        );
        let (item, an) = run(&w, "fib");
        assert_eq!(an.ret(&item, GraphId(0)).to_absval().to_string(), "i64");
        // The `if` call may be either branch: their values are joined.
        let AV::Data(v) = named(&w, &an, "fib", "r") else {
            panic!("data")
        };
        assert_eq!(v.const_value(), None);
    }
}
