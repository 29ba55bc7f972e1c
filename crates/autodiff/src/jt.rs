//! The `J` transformation.
//!
//! Every graph `f` that the differentiated graph can reach gets a forward graph
//! `J(f)` with `f`'s parameters that returns `(output, bprop)`. The
//! backpropagator `bprop` is a closure nested in `J(f)` (so it sees the forward
//! values) that maps the output's sensitivity `dout` to
//!
//! ```text
//! (env, d_param_0, ..., d_param_n-1)
//! ```
//!
//! where `env` is the sensitivity of the function value `f` itself: a tuple
//! with one slot per value the closure captures and per differentiated weight
//! it touches, in the layout of `f`'s class (see [`crate::envs`]). Nested graphs
//! stay nested (`J` of a closure is a closure over the `J` values), a top-level
//! graph `g` becomes the top-level graph `J_g`, and function values map to
//! their `J` versions: graph constants to `J` graphs, primitives used as values
//! to generated `J_Prim` graphs, function parameters receive `J`'d functions.
//!
//! In the backpropagator, nodes are visited in reverse: a primitive call runs
//! the registry's gradient rule (MindSpore's bprop); a call of a function value
//! calls the backpropagator the forward call returned, and its `env` is the
//! sensitivity of the callee; `MakeTuple`/`TupleGetItem` build and index
//! sensitivity tuples; `Switch` routes to the branch taken; a closure constant
//! "opens" its environment, adding each slot to the captured value's
//! sensitivity. Sensitivities are symbolic while built ([`Sens`]): zeros are
//! not materialised unless a value must be returned, and tuples stay split.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use ir::{
    AbsVal, Body, GraphId, GraphOrigin, MetaFn, NodeId, NodeKind, PrimRef, Ty, Value, WrtItem,
};
use ops::{GNode, GradCall};

use crate::absint::{Analysis, FnRef, AV};
use crate::builder::{call, make_tuple, prim, tuple_get, IrGrad};
use crate::envs::{Envs, Kind, Slot};
use crate::world::{visible, Item, World};
use crate::AdError;

/// Primitives the transformation handles itself.
fn is_structural(name: &str) -> bool {
    matches!(
        name,
        "MakeTuple"
            | "TupleGetItem"
            | "Switch"
            | "Depend"
            | "StopGradient"
            | "Load"
            | "UpdateState"
    )
}

/// A sensitivity being built.
#[derive(Debug, Clone)]
enum Sens {
    Zero,
    Node(NodeId),
    Tuple(Vec<Sens>),
}

/// Where a forward value is, for building zeros like it.
#[derive(Debug, Clone)]
enum FwdRef {
    Node(NodeId),
    Item(Box<FwdRef>, usize),
    Weight(String),
}

/// Generates the `J` bodies of a program, and the entry.
pub struct Gen<'a> {
    world: &'a World,
    an: &'a Analysis,
    envs: &'a Envs,
    /// The differentiated weights (`wrt=`), in order.
    weights: Vec<String>,
    /// Top-level names in use.
    pub taken: HashSet<String>,
    /// How many of the entry target's parameters are its own (the rest are
    /// a lifted closure's captured values: passed through, not
    /// differentiated).
    pub visible: Option<usize>,
    /// Graphs of the program the generated code may call as they are.
    originals: HashSet<String>,
    j_names: HashMap<Item, String>,
    prim_names: Vec<(PrimRef, String)>,
    queue: VecDeque<Item>,
    pub out: Vec<(String, Body)>,
    /// The graphs with a backward rule of their own (a nested graph
    /// `bprop`, spec §7): the rule lifted to a top-level item, and the
    /// values it captures.
    pub custom: HashMap<Item, (Item, Vec<NodeId>)>,
}

impl<'a> Gen<'a> {
    pub fn new(
        world: &'a World,
        an: &'a Analysis,
        envs: &'a Envs,
        weights: Vec<String>,
        taken: HashSet<String>,
        originals: HashSet<String>,
    ) -> Gen<'a> {
        Gen {
            world,
            an,
            envs,
            weights,
            taken,
            visible: None,
            originals,
            j_names: HashMap::new(),
            prim_names: Vec::new(),
            queue: VecDeque::new(),
            out: Vec::new(),
            custom: HashMap::new(),
        }
    }

    /// A top-level name not used yet, from `base`.
    pub fn fresh(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut k = 1;
        while self.taken.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        self.taken.insert(name.clone());
        name
    }

    /// The name of `J(item)`, queued for generation on first request.
    pub fn j_name(&mut self, item: &Item) -> String {
        if let Some(n) = self.j_names.get(item) {
            return n.clone();
        }
        let name = self.fresh(&format!("J_{item}"));
        self.j_names.insert(item.clone(), name.clone());
        self.queue.push_back(item.clone());
        name
    }

    fn jprim_name(&mut self, p: &PrimRef) -> Result<String, AdError> {
        if let Some((_, n)) = self.prim_names.iter().find(|(q, _)| q == p) {
            return Ok(n.clone());
        }
        let name = self.fresh(&format!("J_{}", p.name));
        self.prim_names.push((p.clone(), name.clone()));
        let body = self.jprim_body(p, &name)?;
        self.out.push((name.clone(), body));
        Ok(name)
    }

    /// Generates every queued `J` body.
    pub fn run(&mut self) -> Result<(), AdError> {
        while let Some(item) = self.queue.pop_front() {
            let name = self.j_names[&item].clone();
            let body = BodyJ::new(self, &item, &name)?.run()?;
            self.out.push((name, body));
        }
        Ok(())
    }

    fn kind_of(&self, item: &Item, node: NodeId) -> Kind {
        self.envs.kind(&self.an.value(self.world, item, node))
    }

    /// The kind of an environment slot.
    fn slot_kind(&self, slot: &Slot) -> Kind {
        match slot {
            Slot::Fv(it, v) => self.kind_of(it, *v),
            Slot::Weight(w) => self.weight_kind(w),
        }
    }

    fn world_kinds(&self) -> impl Fn(&Slot) -> (Kind, AV) + '_ {
        move |s| {
            let v = match s {
                Slot::Fv(it, v) => self.an.value(self.world, it, *v),
                Slot::Weight(w) => self
                    .world
                    .weights
                    .get(w)
                    .map_or(AV::Any, |ty| AV::from_absval(&AbsVal::from_ty(ty))),
            };
            (self.slot_kind(s), v)
        }
    }

    fn weight_kind(&self, w: &str) -> Kind {
        match self.world.weights.get(w) {
            Some(ty) => self.envs.kind(&AV::from_absval(&AbsVal::from_ty(ty))),
            None => Kind::Unknown,
        }
    }

    /// `J` of a primitive used as a value: a graph running it, with a
    /// backpropagator from its gradient rule.
    fn jprim_body(&mut self, p: &PrimRef, name: &str) -> Result<Body, AdError> {
        let op = ops::lookup(&p.name)
            .ok_or_else(|| AdError(format!("unknown primitive `{}`", p.name)))?;
        if op.variadic || is_structural(&p.name) || p.name == "Partial" {
            return Err(AdError(format!(
                "the primitive `{}` used as a function value cannot be differentiated",
                p.name
            )));
        }
        let mut b = Body::default();
        let g = b.add_graph(name, None, GraphOrigin::Generated);
        let xs: Vec<NodeId> = (0..op.input_count())
            .map(|i| b.add_param(g, format!("x{i}"), None))
            .collect();
        let out = b.add_prim_call(g, p.clone(), &xs, None);
        let bg = b.add_graph(format!("bprop_{}", p.name), Some(g), GraphOrigin::Generated);
        let dout = b.add_param(bg, "dout", None);
        let mut grads: Vec<Option<GNode>> = vec![None; xs.len()];
        if let Some(rule) = op.grad {
            let attrs = ops::resolve_attrs(op, &p.attrs);
            let gins: Vec<GNode> = xs.iter().map(|x| GNode(x.0)).collect();
            let values = vec![AbsVal::Any; xs.len()];
            let mut builder = IrGrad {
                body: &mut b,
                graph: bg,
                span: None,
            };
            grads = rule(
                &mut builder,
                &GradCall {
                    inputs: &gins,
                    out: GNode(out.0),
                    dout: GNode(dout.0),
                    attrs: &attrs,
                    input_values: &values,
                },
            );
        }
        let mut env = Vec::new();
        for slot in self.envs.layout_of(&FnRef::Prim(p.clone())).to_vec() {
            match slot {
                Slot::Weight(w) => {
                    let wn = b.add_weight(w, None);
                    env.push(prim(&mut b, bg, "ZerosLike", &[wn]));
                }
                Slot::Fv(it, v) => {
                    let k = self.kind_of(&it, v);
                    let a = self.an.value(self.world, &it, v);
                    env.push(placeholder(
                        &mut b,
                        bg,
                        self.envs,
                        &self.world_kinds(),
                        &k,
                        &a,
                        0,
                    )?);
                }
            }
        }
        let env = make_tuple(&mut b, bg, &env);
        let mut outs = vec![env];
        for (i, &x) in xs.iter().enumerate() {
            outs.push(match grads.get(i).copied().flatten() {
                Some(gn) => NodeId(gn.0),
                None => prim(&mut b, bg, "ZerosLike", &[x]),
            });
        }
        let ret = make_tuple(&mut b, bg, &outs);
        b.graph_mut(bg).output = Some(ret);
        let bc = b.add_const(Value::Graph(bg), None);
        let r = make_tuple(&mut b, g, &[out, bc]);
        b.graph_mut(g).output = Some(r);
        Ok(b)
    }

    /// The graph the metafunction asks for: it takes `item`'s parameters.
    pub fn entry(&mut self, meta: &MetaFn, item: &Item, name: &str) -> Result<Body, AdError> {
        let src = self.world.bodies[item].clone();
        let root = src.graph(src.root()).clone();
        let mut b = Body::default();
        let g = b.add_graph(name, None, GraphOrigin::Generated);
        let mut params = Vec::new();
        let mut kinds = Vec::new();
        let own = self
            .visible
            .unwrap_or(root.params.len())
            .min(root.params.len());
        for (i, &p) in root.params.iter().enumerate() {
            let n = src.node(p);
            let np = b.add_param(g, n.name.clone().unwrap_or_else(|| "x".into()), None);
            b.node_mut(np).annotation = n.annotation.clone();
            params.push(np);
            if i < own {
                kinds.push(self.kind_of(item, p));
            }
        }
        let jn = self.j_name(item);
        let f = b.add_const(Value::Global(jn), None);
        let r = call(&mut b, g, f, &params);
        let out = tuple_get(&mut b, g, r, 0);
        b.node_mut(out).name = Some("out".into());
        let bp = tuple_get(&mut b, g, r, 1);
        b.node_mut(bp).name = Some("bprop".into());
        let no_grad = |k: &Kind| matches!(k, Kind::Env(_) | Kind::NoneLike);
        let output = match meta {
            MetaFn::Jvp
            | MetaFn::Hvp
            | MetaFn::Vmap { .. }
            | MetaFn::Jacfwd { .. }
            | MetaFn::Jacrev { .. }
            | MetaFn::Hessian { .. }
            | MetaFn::Checkpoint => {
                return Err(AdError(format!(
                    "internal: `{}` is not a `J` entry",
                    meta.name()
                )))
            }
            MetaFn::Vjp => {
                let bg = b.add_graph("backprop", Some(g), GraphOrigin::Generated);
                let dout = b.add_param(bg, "dout", None);
                let d = call(&mut b, bg, bp, &[dout]);
                let mut items = Vec::new();
                for (i, k) in kinds.iter().enumerate() {
                    items.push(if no_grad(k) {
                        b.add_const(Value::None, None)
                    } else {
                        tuple_get(&mut b, bg, d, i + 1)
                    });
                }
                let t = make_tuple(&mut b, bg, &items);
                b.graph_mut(bg).output = Some(t);
                let bc = b.add_const(Value::Graph(bg), None);
                make_tuple(&mut b, g, &[out, bc])
            }
            MetaFn::Grad { wrt } | MetaFn::ValueAndGrad { wrt } => {
                let out_kind = self.envs.kind(&self.an.ret(item, src.root()));
                let ones = ones_like(&mut b, g, &out_kind, out)?;
                let d = call(&mut b, g, bp, &[ones]);
                let layout = self
                    .envs
                    .layout_of(&FnRef::Graph(item.clone(), src.root()))
                    .to_vec();
                let pick = |b: &mut Body, w: &WrtItem| -> Result<NodeId, AdError> {
                    match w {
                        WrtItem::Param(i) => {
                            let Some(k) = kinds.get(*i) else {
                                return Err(AdError(format!(
                                    "`wrt` names parameter {i}, but `{item}` takes {} parameters",
                                    kinds.len()
                                )));
                            };
                            Ok(if no_grad(k) {
                                b.add_const(Value::None, None)
                            } else {
                                tuple_get(b, g, d, i + 1)
                            })
                        }
                        WrtItem::Weight(name) => {
                            let slot = Slot::Weight(name.clone());
                            match layout.iter().position(|s| *s == slot) {
                                Some(j) => {
                                    let env = tuple_get(b, g, d, 0);
                                    Ok(tuple_get(b, g, env, j))
                                }
                                None => {
                                    let wn = b.add_weight(name.clone(), None);
                                    Ok(prim(b, g, "ZerosLike", &[wn]))
                                }
                            }
                        }
                    }
                };
                let grads = match wrt {
                    None => {
                        if kinds.is_empty() {
                            return Err(AdError(format!(
                                "`{}` needs a function with at least one parameter (or `wrt=` weights)",
                                meta.name()
                            )));
                        }
                        pick(&mut b, &WrtItem::Param(0))?
                    }
                    Some(items) => {
                        let mut nodes = Vec::new();
                        for w in items {
                            nodes.push(pick(&mut b, w)?);
                        }
                        make_tuple(&mut b, g, &nodes)
                    }
                };
                match meta {
                    MetaFn::ValueAndGrad { .. } => make_tuple(&mut b, g, &[out, grads]),
                    _ => grads,
                }
            }
        };
        b.graph_mut(g).output = Some(output);
        Ok(b)
    }
}

/// Kinds and values of the slots of environments, for building placeholders.
pub(crate) type SlotKinds<'k> = &'k dyn Fn(&Slot) -> (Kind, AV);

/// How deep zeros of environments are built. The environments of a
/// recursive graph's backpropagators (differentiated again) nest without
/// end (a backpropagator captures the one of the recursive call); their
/// zeros stop at this depth with `none`, which is only ever carried: a
/// slot is read only where its value is visible and set.
const ENV_ZERO_DEPTH: usize = 6;

/// A zero for an environment slot of a value the current graph cannot see:
/// zeros of its type where the analysis knows it (`Zeros(shape, dtype)`),
/// else a weak `0.0` (it broadcasts when added, and the slot is only ever
/// added to, or read where that value is visible and set); tuples of them
/// for tuples and environments.
fn placeholder(
    b: &mut Body,
    g: GraphId,
    envs: &Envs,
    slot_kind: SlotKinds,
    kind: &Kind,
    value: &AV,
    depth: usize,
) -> Result<NodeId, AdError> {
    if depth > ENV_ZERO_DEPTH {
        return Ok(b.add_const(Value::None, None));
    }
    Ok(match kind {
        Kind::NoneLike => b.add_const(Value::None, None),
        Kind::Tuple(items) => {
            let mut nodes = Vec::new();
            for (i, k) in items.iter().enumerate() {
                let v = match value {
                    AV::Tuple(vs) if vs.len() == items.len() => vs[i].clone(),
                    _ => AV::Any,
                };
                nodes.push(placeholder(b, g, envs, slot_kind, k, &v, depth + 1)?);
            }
            make_tuple(b, g, &nodes)
        }
        Kind::Env(c) => {
            let mut nodes = Vec::new();
            for slot in envs.layout(*c) {
                let (k, v) = slot_kind(slot);
                nodes.push(placeholder(b, g, envs, slot_kind, &k, &v, depth + 1)?);
            }
            make_tuple(b, g, &nodes)
        }
        _ => typed_zero(b, g, value),
    })
}

/// Zeros of a value's static type, when the analysis knows it.
fn typed_zero(b: &mut Body, g: GraphId, value: &AV) -> NodeId {
    if let AV::Data(AbsVal::Scalar { dtype, weak, .. }) = value {
        if !(*weak && *dtype == ir::DType::F32) {
            let zero = if dtype.is_float() {
                ir::ScalarConst::Float(0.0)
            } else if dtype.is_bool() {
                ir::ScalarConst::Bool(false)
            } else {
                ir::ScalarConst::Int(0)
            };
            return b.add_const(
                Value::Scalar {
                    value: zero,
                    dtype: *dtype,
                    weak: *weak,
                },
                None,
            );
        }
    }
    if let AV::Data(AbsVal::Tensor { dtype, shape }) = value {
        let dims: Option<Vec<i64>> = shape.dims().and_then(|ds| {
            ds.iter()
                .map(|d| match d {
                    ir::Dim::Known(k) => Some(*k),
                    _ => None,
                })
                .collect()
        });
        if let Some(dims) = dims {
            let p = crate::builder::prim_ref(
                "Zeros",
                &[
                    (
                        "shape",
                        ir::AttrValue::Tuple(dims.into_iter().map(ir::AttrValue::Int).collect()),
                    ),
                    ("dtype", ir::AttrValue::DType(*dtype)),
                ],
            );
            return b.add_prim_call(g, p, &[], None);
        }
    }
    b.add_const(Value::float(0.0), None)
}

/// The default sensitivity: ones like the output (a tuple of them for a tuple).
fn ones_like(b: &mut Body, g: GraphId, kind: &Kind, x: NodeId) -> Result<NodeId, AdError> {
    match kind {
        Kind::Tuple(items) => {
            let mut parts = Vec::new();
            for (i, k) in items.iter().enumerate() {
                let xi = tuple_get(b, g, x, i);
                parts.push(ones_like(b, g, k, xi)?);
            }
            Ok(make_tuple(b, g, &parts))
        }
        Kind::Env(_) => Err(AdError(
            "cannot differentiate: the output is a function".into(),
        )),
        Kind::NoneLike => Ok(b.add_const(Value::None, None)),
        _ => Ok(prim(b, g, "OnesLike", &[x])),
    }
}

/// How a forward CNode was transformed.
#[derive(Debug, Clone)]
enum Info {
    Prim(PrimRef),
    Structural(String),
    /// A call of a function value: the backpropagator it returned.
    Call {
        bp: NodeId,
    },
    /// A call of an original graph whose result has no gradient.
    Inactive,
}

/// An item of the reverse sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Step {
    Node(NodeId),
    /// A function constant: open its environment.
    Const(NodeId),
}

/// The backward state of one graph.
struct Back {
    g: GraphId,
    bg: GraphId,
    sens: HashMap<NodeId, Sens>,
    wsens: HashMap<String, Sens>,
}

/// `J` of one top-level body.
struct BodyJ<'g, 'a> {
    gen: &'g mut Gen<'a>,
    item: Item,
    src: Arc<Body>,
    dst: Body,
    gmap: Vec<GraphId>,
    fwd: HashMap<NodeId, NodeId>,
    info: HashMap<NodeId, Info>,
    weight_nodes: HashMap<String, NodeId>,
}

impl<'g, 'a> BodyJ<'g, 'a> {
    fn new(gen: &'g mut Gen<'a>, item: &Item, name: &str) -> Result<BodyJ<'g, 'a>, AdError> {
        let src = gen
            .world
            .body(item)
            .cloned()
            .ok_or_else(|| AdError(format!("no graph `{item}`")))?;
        let mut dst = Body::default();
        let mut gmap = Vec::new();
        let mut fwd = HashMap::new();
        for g in src.graph_ids() {
            let sg = src.graph(g);
            let gname = if g == src.root() {
                name.to_string()
            } else {
                format!("J_{}", sg.name)
            };
            let parent = sg.parent.map(|p| gmap[p.0 as usize]);
            let jg = dst.add_graph(gname, parent, GraphOrigin::Generated);
            gmap.push(jg);
            for (i, &p) in sg.params.iter().enumerate() {
                let pn = src.node(p);
                let pname = pn.name.clone().unwrap_or_else(|| format!("x{i}"));
                let np = dst.add_param(jg, pname, None);
                if let Some((ty, range)) = &pn.annotation {
                    if is_data_type(ty) {
                        dst.node_mut(np).annotation = Some((ty.clone(), *range));
                    }
                }
                fwd.insert(p, np);
            }
        }
        Ok(BodyJ {
            gen,
            item: item.clone(),
            src,
            dst,
            gmap,
            fwd,
            info: HashMap::new(),
            weight_nodes: HashMap::new(),
        })
    }

    fn run(mut self) -> Result<Body, AdError> {
        let graphs: Vec<GraphId> = self.src.graph_ids().collect();
        for &g in &graphs {
            self.forward(g)?;
        }
        for &g in &graphs {
            self.backward(g)?;
        }
        Ok(self.dst)
    }

    fn kind(&self, node: NodeId) -> Kind {
        self.gen.kind_of(&self.item, node)
    }

    fn value(&self, node: NodeId) -> AV {
        self.gen.an.value(self.gen.world, &self.item, node)
    }

    fn carries(&self, k: &Kind) -> bool {
        self.gen.envs.carries(k)
    }

    fn weight_node(&mut self, name: &str) -> NodeId {
        if let Some(&n) = self.weight_nodes.get(name) {
            return n;
        }
        let n = self.dst.add_weight(name.to_string(), None);
        self.weight_nodes.insert(name.to_string(), n);
        n
    }

    /// The forward (`J`) value of a node used as an input.
    fn fwd_input(&mut self, m: NodeId) -> Result<NodeId, AdError> {
        let node = self.src.node(m).clone();
        match &node.kind {
            NodeKind::Param { .. } | NodeKind::Apply(_) => self.fwd.get(&m).copied().ok_or_else(|| {
                AdError(format!(
                    "internal: `{}` is used before it is computed",
                    node.name.as_deref().unwrap_or("a value")
                ))
            }),
            NodeKind::Weight(name) => Ok(self.weight_node(name)),
            NodeKind::Const(v) => Ok(match v {
                Value::Graph(h) => self
                    .dst
                    .add_const(Value::Graph(self.gmap[h.0 as usize]), None),
                Value::Global(name) => {
                    let it = self
                        .gen
                        .world
                        .item(name)
                        .ok_or_else(|| AdError(format!("no graph `{name}`")))?;
                    let jn = self.gen.j_name(&it);
                    self.dst.add_const(Value::Global(jn), None)
                }
                Value::Prim(p) => {
                    let jn = self.gen.jprim_name(p)?;
                    self.dst.add_const(Value::Global(jn), None)
                }
                Value::Meta(m) => {
                    return Err(AdError(format!(
                        "`{}` is used as a value inside a differentiated graph: apply it to a function where it is written",
                        m.name()
                    )))
                }
                other => self.dst.add_const(other.clone(), None),
            }),
        }
    }

    fn forward(&mut self, g: GraphId) -> Result<(), AdError> {
        let jg = self.gmap[g.0 as usize];
        let nodes = self.src.graph(g).nodes.clone();
        for n in nodes {
            let inputs = self.src.inputs(n).to_vec();
            let Some((&callee, args)) = inputs.split_first() else {
                return Err(AdError("internal: a CNode without inputs".into()));
            };
            let name = self.src.node(n).name.clone();
            let callee_kind = self.src.node(callee).kind.clone();
            let (node, info) = match &callee_kind {
                NodeKind::Const(Value::Prim(p)) => {
                    if p.name == "Partial" || p.name == "Return" {
                        return Err(AdError(format!(
                            "internal: `{}` should have been removed before `J`",
                            p.name
                        )));
                    }
                    if ops::effect_of(&p.name).is_some() {
                        return Err(AdError(format!(
                            "`{}` updates a weight: a graph with side effects cannot be differentiated",
                            p.name
                        )));
                    }
                    let mut fargs = Vec::new();
                    for &a in args {
                        fargs.push(self.fwd_input(a)?);
                    }
                    let node = self.dst.add_prim_call(jg, p.clone(), &fargs, None);
                    let info = if is_structural(&p.name) {
                        Info::Structural(p.name.clone())
                    } else {
                        Info::Prim(p.clone())
                    };
                    (node, info)
                }
                NodeKind::Const(Value::Meta(m)) => {
                    return Err(AdError(format!(
                        "internal: `{}` inside a differentiated graph was not expanded",
                        m.name()
                    )))
                }
                _ => {
                    // A call whose result has no gradient and that passes and
                    // returns no functions (`J` would change those) can call
                    // the original graph.
                    let plain = |v: AV| {
                        let mut fs = Vec::new();
                        v.functions(&mut fs);
                        fs.is_empty() && v != AV::Any
                    };
                    let inactive = match &callee_kind {
                        NodeKind::Const(Value::Global(gname)) => {
                            self.gen.originals.contains(gname)
                                && !self.carries(&self.kind(n))
                                && plain(self.value(n))
                                && args.iter().all(|&a| plain(self.value(a)))
                        }
                        _ => false,
                    };
                    let mut fargs = Vec::new();
                    for &a in args {
                        fargs.push(self.fwd_input(a)?);
                    }
                    if inactive {
                        let NodeKind::Const(v) = callee_kind else {
                            unreachable!()
                        };
                        let f = self.dst.add_const(v, None);
                        (call(&mut self.dst, jg, f, &fargs), Info::Inactive)
                    } else {
                        let f = self.fwd_input(callee)?;
                        let r = call(&mut self.dst, jg, f, &fargs);
                        let v = tuple_get(&mut self.dst, jg, r, 0);
                        let bp = tuple_get(&mut self.dst, jg, r, 1);
                        if let Some(nm) = &name {
                            self.dst.node_mut(bp).name = Some(format!("bprop_{nm}"));
                        }
                        (v, Info::Call { bp })
                    }
                }
            };
            self.dst.node_mut(node).name = name;
            self.fwd.insert(n, node);
            self.info.insert(n, info);
        }
        Ok(())
    }

    /// The order of the reverse sweep (reversed): a topological order of the
    /// graph's CNodes and the function constants they use, where a closure
    /// constant comes after the nodes of this graph it captures.
    fn order(&self, g: GraphId) -> Vec<Step> {
        let graph = self.src.graph(g);
        let own: HashSet<NodeId> = graph.nodes.iter().copied().collect();
        let is_fn_const = |m: NodeId| {
            matches!(
                self.src.node(m).kind,
                NodeKind::Const(Value::Graph(_) | Value::Global(_) | Value::Prim(_))
            )
        };
        let deps = |s: Step| -> Vec<Step> {
            match s {
                Step::Node(n) => self
                    .src
                    .inputs(n)
                    .iter()
                    .filter_map(|&m| {
                        if own.contains(&m) {
                            Some(Step::Node(m))
                        } else if is_fn_const(m) {
                            Some(Step::Const(m))
                        } else {
                            None
                        }
                    })
                    .collect(),
                Step::Const(c) => match &self.src.node(c).kind {
                    NodeKind::Const(Value::Graph(h)) => self
                        .gen
                        .envs
                        .fvs(self.gen.world, &self.item, *h)
                        .into_iter()
                        .filter(|v| own.contains(v))
                        .map(Step::Node)
                        .collect(),
                    _ => Vec::new(),
                },
            }
        };
        let mut roots: Vec<Step> = graph.nodes.iter().map(|&n| Step::Node(n)).collect();
        if let Some(o) = graph.output {
            if is_fn_const(o) {
                roots.push(Step::Const(o));
            }
        }
        let mut done: HashSet<Step> = HashSet::new();
        let mut started: HashSet<Step> = HashSet::new();
        let mut order = Vec::new();
        for r in roots {
            let mut stack = vec![(r, false)];
            while let Some((s, expanded)) = stack.pop() {
                if done.contains(&s) {
                    continue;
                }
                if expanded {
                    done.insert(s);
                    order.push(s);
                    continue;
                }
                if !started.insert(s) {
                    continue; // a cycle (invalid program); keep going
                }
                stack.push((s, true));
                for d in deps(s).into_iter().rev() {
                    if !done.contains(&d) && !started.contains(&d) {
                        stack.push((d, false));
                    }
                }
            }
        }
        order
    }
}

mod back;

/// Whether a parameter annotation still holds in `J` (not a function type).
fn is_data_type(ty: &Ty) -> bool {
    match ty {
        Ty::Func(_) | Ty::Unknown => false,
        Ty::Tuple(items) => items.iter().all(is_data_type),
        _ => true,
    }
}
