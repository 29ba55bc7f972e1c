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

use ir::{AbsVal, Body, GraphId, MetaFn, NodeId, NodeKind, PrimRef, ScalarConst, Value, WrtItem};

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
///
/// It answers for every node of every body, whatever happened after it ran:
/// the bodies it analysed are kept, so a node, graph or body it never saw
/// (created by a later rewrite, or of a body added to the world since) is
/// simply unknown ([`AV::Any`]), never a panic or a stale answer. Nodes of
/// graphs it saw but never reached are [`AV::Bot`] (dead code).
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// The bodies as they were when analysed (node ids index these).
    bodies: HashMap<Item, std::sync::Arc<Body>>,
    vals: HashMap<(Item, NodeId), AV>,
    rets: HashMap<(Item, GraphId), AV>,
    /// Graphs that are called, in the order first reached.
    pub reached: Vec<(Item, GraphId)>,
    weights: HashMap<String, AV>,
}

impl Analysis {
    /// The value of any node of `item`'s body (constants and weights
    /// included). Total: a node the analysis never saw (created after it ran,
    /// or of a body it did not know) is [`AV::Any`]; constants and weights are
    /// known wherever they are.
    pub fn value(&self, world: &World, item: &Item, node: NodeId) -> AV {
        let seen = self.bodies.get(item);
        let Some(body) = seen.or_else(|| world.body(item)) else {
            return AV::Any;
        };
        let Some(n) = body.nodes.get(node.0 as usize) else {
            // Created after the analysis ran: look at the world's body for
            // what kind of node it is (a constant is still known).
            return match world.body(item).and_then(|b| b.nodes.get(node.0 as usize)) {
                Some(ir::Node {
                    kind: NodeKind::Const(v),
                    ..
                }) => const_value(world, item, v),
                Some(ir::Node {
                    kind: NodeKind::Weight(name),
                    ..
                }) => self.weights.get(name).cloned().unwrap_or(AV::Any),
                _ => AV::Any,
            };
        };
        match &n.kind {
            NodeKind::Param { .. } | NodeKind::Apply(_) if seen.is_none() => AV::Any,
            NodeKind::Param { .. } | NodeKind::Apply(_) => self
                .vals
                .get(&(item.clone(), node))
                .cloned()
                .unwrap_or(AV::Bot),
            NodeKind::Weight(name) => self.weights.get(name).cloned().unwrap_or(AV::Any),
            NodeKind::Const(v) => const_value(world, item, v),
        }
    }

    /// What graph `graph` of `item` returns: [`AV::Bot`] when it was seen but
    /// never returned (not reached, or every path recurses), [`AV::Any`] for a
    /// graph the analysis never saw.
    pub fn ret(&self, item: &Item, graph: GraphId) -> AV {
        match self.bodies.get(item) {
            Some(b) if (graph.0 as usize) < b.graphs.len() => self
                .rets
                .get(&(item.clone(), graph))
                .cloned()
                .unwrap_or(AV::Bot),
            _ => AV::Any,
        }
    }

    /// Whether the analysis saw this body (as it is in `world` now).
    pub fn saw(&self, world: &World, item: &Item) -> bool {
        match (self.bodies.get(item), world.body(item)) {
            (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b),
            _ => false,
        }
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

/// A value shaped like the gradient of one taking the value `v`.
fn grad_like(v: &AV) -> AV {
    match v {
        AV::Data(AbsVal::Scalar { dtype, weak, .. }) => AV::Data(AbsVal::Scalar {
            dtype: *dtype,
            value: None,
            weak: *weak,
        }),
        AV::Data(t @ AbsVal::Tensor { .. }) => AV::Data(t.clone()),
        AV::Tuple(items) => AV::Tuple(items.iter().map(grad_like).collect()),
        _ => AV::Any,
    }
}

impl Engine<'_> {
    /// The value of `vmap(f)(args...)` and of the Jacobians of `f` at
    /// `args`: `f` applied to one example (to `args`), batched (the
    /// Jacobian's shape). `None` for the other metafunctions.
    fn transform_result(
        &mut self,
        item: &Item,
        n: NodeId,
        meta: &MetaFn,
        f: NodeId,
        args: &[AV],
    ) -> Option<AV> {
        use ir::batching::{batch, jacobian_tree, unbatch};
        match meta {
            MetaFn::Vmap { in_axes, out_axes } => {
                let mut size = ir::Dim::Unknown;
                let mut examples = Vec::new();
                for (i, a) in args.iter().enumerate() {
                    match in_axes.get(i) {
                        None => examples.push(a.clone()),
                        Some(axis) => match unbatch(&a.to_absval(), axis) {
                            Ok((x, d)) => {
                                if size == ir::Dim::Unknown {
                                    size = d;
                                }
                                examples.push(AV::from_absval(&x));
                            }
                            Err(_) => return Some(AV::Any),
                        },
                    }
                }
                let fv = self.value(item, f);
                let out = self.apply_value(item, n, &fv, &examples);
                if out == AV::Bot {
                    return Some(AV::Bot);
                }
                let out = out.to_absval();
                let r = match (&out, out_axes) {
                    (AbsVal::Tuple(items), ir::BatchAxes::Each(_)) => items
                        .iter()
                        .enumerate()
                        .map(|(i, x)| batch(x, out_axes.get(i), &size))
                        .collect::<Result<Vec<_>, _>>()
                        .map(AbsVal::Tuple),
                    _ => batch(&out, out_axes.get(0), &size),
                };
                Some(r.map_or(AV::Any, |v| AV::from_absval(&v)))
            }
            MetaFn::Checkpoint => {
                let fv = self.value(item, f);
                Some(self.apply_value(item, n, &fv, args))
            }
            MetaFn::Jacfwd { wrt } | MetaFn::Jacrev { wrt } | MetaFn::Hessian { wrt } => {
                let fv = self.value(item, f);
                let out = self.apply_value(item, n, &fv, args);
                if out == AV::Bot {
                    return Some(AV::Bot);
                }
                let out = out.to_absval();
                let all: Vec<AbsVal> = args.iter().map(AV::to_absval).collect();
                let xs: Vec<&AbsVal> = match wrt {
                    None => all.first().into_iter().collect(),
                    Some(items) => items
                        .iter()
                        .map(|w| match w {
                            WrtItem::Param(i) => all.get(*i).unwrap_or(&AbsVal::Any),
                            WrtItem::Weight(_) => &AbsVal::Any,
                        })
                        .collect(),
                };
                let tuple = wrt.is_some();
                let j = match meta {
                    MetaFn::Hessian { .. } => {
                        jacobian_tree(&jacobian_tree(&out, &xs, tuple), &xs, tuple)
                    }
                    _ => jacobian_tree(&out, &xs, tuple),
                };
                Some(AV::from_absval(&j))
            }
            _ => None,
        }
    }
}

/// The value of `meta(f)(args...)`, as far as it is known without `f`.
fn meta_result(meta: &MetaFn, args: &[AV]) -> AV {
    let grads = |wrt: &Option<Vec<WrtItem>>| match wrt {
        None => args.first().map_or(AV::Any, grad_like),
        Some(items) => AV::Tuple(
            items
                .iter()
                .map(|w| match w {
                    WrtItem::Param(i) => args.get(*i).map_or(AV::Any, grad_like),
                    WrtItem::Weight(_) => AV::Any,
                })
                .collect(),
        ),
    };
    match meta {
        MetaFn::Grad { wrt } => grads(wrt),
        MetaFn::ValueAndGrad { wrt } => AV::Tuple(vec![AV::Any, grads(wrt)]),
        MetaFn::Hvp => args.first().map_or(AV::Any, grad_like),
        MetaFn::Jvp | MetaFn::Vjp => AV::Tuple(vec![AV::Any, AV::Any]),
        MetaFn::Vmap { .. }
        | MetaFn::Jacfwd { .. }
        | MetaFn::Jacrev { .. }
        | MetaFn::Hessian { .. }
        | MetaFn::Checkpoint => AV::Any,
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
    let an = Analysis {
        bodies: world.bodies.clone(),
        ..Analysis::default()
    };
    let mut engine = Engine::new(world, an);
    for (name, ty) in &world.weights {
        engine
            .an
            .weights
            .insert(name.clone(), AV::from_absval(&AbsVal::from_ty(ty)));
    }
    engine.reach(entry, graph);
    if let Some(g) = world
        .body(entry)
        .and_then(|b| b.graphs.get(graph.0 as usize))
    {
        for (i, &p) in g.params.iter().enumerate() {
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
        let Some(graph) = body.graphs.get(g.0 as usize) else {
            return;
        };
        self.evaluations += 1;
        let saved = self.current.replace((item.clone(), g));
        let fresh = self.stack.insert((item.clone(), g));
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
        // `meta(f)(args...)`: what is known of a gradient without expanding
        // it (a gradient is like the value it is taken at).
        if let NodeKind::Apply(_) = &body.node(callee).kind {
            let ci = body.inputs(callee);
            if let [m, f] = ci {
                if let NodeKind::Const(Value::Meta(meta)) = &body.node(*m).kind {
                    if args.contains(&AV::Bot) {
                        return AV::Bot;
                    }
                    let (meta, f) = (meta.clone(), *f);
                    if let Some(r) = self.transform_result(item, n, &meta, f, &args) {
                        return r;
                    }
                    let mut r = meta_result(&meta, &args);
                    // `f`'s output, where the metafunction returns it.
                    if let (
                        MetaFn::ValueAndGrad { .. } | MetaFn::Vjp | MetaFn::Jvp,
                        AV::Tuple(items),
                    ) = (&meta, &mut r)
                    {
                        if let Some(k) = meta.primal_arity(args.len()) {
                            let fv = self.value(item, f);
                            items[0] = self.apply_value(item, n, &fv, &args[..k]);
                            if let MetaFn::Jvp = meta {
                                // The tangent is like the output.
                                items[1] = grad_like(&items[0]);
                            }
                        }
                    }
                    return r;
                }
            }
        }
        // `vjp(f)(xs...)[1](dout)`: the backpropagator returns gradients like
        // the arguments `vjp(f)` was applied to.
        if let Some(xs) = self.vjp_backprop_args(item, body, callee) {
            if xs.contains(&AV::Bot) {
                return AV::Bot;
            }
            return AV::Tuple(xs.iter().map(grad_like).collect());
        }
        let f = self.value(item, callee);
        self.apply_value(item, n, &f, &args)
    }

    /// The values `vjp(f)` was applied to, when `callee` is the
    /// backpropagator of that application (`vjp(f)(xs...)[1]`).
    fn vjp_backprop_args(&mut self, item: &Item, body: &Body, callee: NodeId) -> Option<Vec<AV>> {
        let NodeKind::Apply(_) = &body.node(callee).kind else {
            return None;
        };
        let [get, t, k] = body.inputs(callee) else {
            return None;
        };
        let NodeKind::Const(Value::Prim(p)) = &body.node(*get).kind else {
            return None;
        };
        if p.name != "TupleGetItem" || self.value(item, *k).const_int() != Some(1) {
            return None;
        }
        let NodeKind::Apply(_) = &body.node(*t).kind else {
            return None;
        };
        let (&inner, xs) = body.inputs(*t).split_first()?;
        let NodeKind::Apply(_) = &body.node(inner).kind else {
            return None;
        };
        let [m, _] = body.inputs(inner) else {
            return None;
        };
        let NodeKind::Const(Value::Meta(MetaFn::Vjp)) = &body.node(*m).kind else {
            return None;
        };
        let xs = xs.to_vec();
        Some(xs.iter().map(|&x| self.value(item, x)).collect())
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
                let Some(graph) = body.graphs.get(g.0 as usize) else {
                    return AV::Any;
                };
                let params = graph.params.clone();
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
        // A shape rule that panics (a bug of its own) says nothing.
        let inferred = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            (op.infer)(&ops::InferCall {
                op,
                inputs: &inputs,
                attrs: &attrs,
            })
        }));
        let v = match inferred {
            Ok(Ok(v)) => AV::from_absval(&v),
            _ => AV::Any,
        };
        // A primitive with a tuple result gives a tuple, whatever else is
        // unknown (its elements can then be told apart).
        match (v, op.output) {
            (AV::Any, ops::OutputDef::Tuple(names)) => AV::Tuple(vec![AV::Any; names.len()]),
            (v, _) => v,
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

#[cfg(test)]
mod totality {
    use super::tests::{run, world};
    use super::*;
    use std::sync::Arc;

    #[test]
    fn answers_for_nodes_graphs_and_bodies_it_never_saw() {
        let w = world("graph f(x: f32[3]) { return Exp(x) }\n");
        let (item, an) = run(&w, "f");
        let n = w.bodies[&item].nodes.len() as u32;
        // A node created after the analysis ran.
        assert_eq!(an.value(&w, &item, NodeId(n + 5)), AV::Any);
        // A graph it never saw.
        assert_eq!(an.ret(&item, GraphId(7)), AV::Any);
        // A body added to the world afterwards.
        let mut w2 = w.clone();
        let mut b = (*w.bodies[&item]).clone();
        let g = b.root();
        let c = b.add_const(Value::float(1.0), None);
        let m = b.add_prim_call(g, PrimRef::new("Neg"), &[c], None);
        let other: Item = Arc::from("g");
        w2.insert(other.clone(), Arc::new(b));
        assert_eq!(an.value(&w2, &other, m), AV::Any);
        assert!(matches!(an.value(&w2, &other, c), AV::Data(_)));
        // A constant created after the analysis, in a body it saw.
        assert!(matches!(an.value(&w2, &item, c), AV::Any | AV::Data(_)));
    }
}
