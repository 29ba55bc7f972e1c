//! Metafunctions inside differentiated graphs, and the metafunctions made of
//! others (`jvp`, `hvp`).
//!
//! Differentiation is static: before `J`, every application `meta(f)` the
//! target can reach is *expanded*: `f` (known from the analysis) is
//! differentiated on its own, and the application is replaced by the graph
//! that computes `meta(f)`: a top-level graph, or, for a closure, a lambda
//! (nested where the application is) that passes the values the closure
//! captures to a derivative of its lifted copy. The outer `J` then
//! differentiates that graph like any other: its backpropagators are
//! ordinary closures, and the primitives it uses have gradient rules of
//! their own (those of the registry's internal helpers included). So
//! `grad(grad(f))`, a Hessian-vector product (`grad` of a graph that calls
//! `grad`) and the gradient of a loss taken after an inner gradient step
//! (MAML) are all first-order differentiation of generated code.
//!
//! `jvp` and `hvp` are built from `grad` and `vjp` the same way:
//! `jvp(f)(x, v)` is `(f(x), J·v)` where `J·v` is the gradient, with respect
//! to `u`, of `<vjp(f)(x).backprop(u), v>` (the backpropagator is linear in
//! `u`; differentiating it transposes it back), and `hvp(f)(x, v)` is the
//! gradient of `<grad(f)(x), v>`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use ir::{AbsVal, Body, GraphId, GraphOrigin, MetaFn, NodeId, NodeKind, Value, WrtItem};

use crate::absint::{self, Analysis, FnRef, AV};
use crate::builder::{call, make_tuple, prim, replace_all_uses, tuple_get};
use crate::envs::Envs;
use crate::jt::Gen;
use crate::world::{visible, Item, World};
use crate::{passes, prepare, AdError};

mod batch;
mod checkpoint;
mod jacobian;
mod vmap;

/// Metafunctions nested deeper than this (through expansions) are refused:
/// a graph that differentiates itself would expand without end.
const MAX_DEPTH: usize = 12;

/// What one differentiation made: the entry and the graphs it needs (the
/// entry first), not yet in the world.
pub struct Derived {
    pub entry: String,
    pub graphs: Vec<(String, Body)>,
}

/// The state of one `differentiate` call, shared by the expansions it does.
pub struct Cx {
    pub world: World,
    pub taken: HashSet<String>,
    /// Graphs of the program the generated code may call as they are.
    pub originals: HashSet<String>,
    /// Graphs made by expansions (already in `world`), to be emitted too.
    pub generated: Vec<(String, Body)>,
    /// Lifted closures, by where they were nested.
    lifts: HashMap<(Item, GraphId), (Item, Vec<NodeId>)>,
    depth: usize,
    /// Where the definitions inlined before differentiating come from.
    pub instances: Option<crate::composites::InstanceFn>,
    /// Unroll recursions of known depth in the gradients (`Options::unroll`).
    pub unroll: bool,
    /// How each `vmap` was made (batched, or per example and why).
    pub vmap_notes: Vec<String>,
    /// Generated graphs with a backward rule of their own, and the rule
    /// (`checkpoint(f)`'s, which recomputes `f`).
    own_rules: HashMap<Item, Item>,
    /// The graphs whose batched form is being made (a graph that calls
    /// itself is batched per example).
    vmapping: Vec<Item>,
}

impl Cx {
    pub fn new(world: World, taken: HashSet<String>, originals: HashSet<String>) -> Cx {
        Cx {
            world,
            taken,
            originals,
            generated: Vec::new(),
            lifts: HashMap::new(),
            depth: 0,
            instances: None,
            unroll: false,
            vmap_notes: Vec::new(),
            own_rules: HashMap::new(),
            vmapping: Vec::new(),
        }
    }

    /// A top-level name not used yet, from `base`.
    fn fresh(&mut self, base: &str) -> String {
        let base: String = base
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let mut name = base.clone();
        let mut k = 1;
        while self.taken.contains(&name) || self.world.body(&name).is_some() {
            name = format!("{base}_{k}");
            k += 1;
        }
        self.taken.insert(name.clone());
        name
    }

    /// What is known of `item`'s parameters: the given values, else the
    /// annotations.
    pub fn param_values(&self, item: &Item, given: Option<&[AbsVal]>) -> Vec<AV> {
        let body = &self.world.bodies[item];
        let root = body.graph(body.root());
        root.params
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                if let Some(v) = given.and_then(|vs| vs.get(i)) {
                    if *v != AbsVal::Any {
                        return AV::from_absval(v);
                    }
                }
                body.node(p)
                    .annotation
                    .as_ref()
                    .map_or(AV::Any, |(t, _)| AV::from_absval(&AbsVal::from_ty(t)))
            })
            .collect()
    }

    /// Differentiates top-level `item` (whose first `visible` parameters are
    /// its own, the rest captured values) as `meta` says. `args` is what is
    /// known of the entry's arguments (the metafunction's arguments, then
    /// the captured values).
    pub fn differentiate(
        &mut self,
        item: &Item,
        visible: usize,
        meta: &MetaFn,
        weights: &[String],
        args: Option<&[AbsVal]>,
        optimize: bool,
    ) -> Result<Derived, AdError> {
        if self.depth > MAX_DEPTH {
            return Err(AdError(format!(
                "metafunctions nested more than {MAX_DEPTH} deep (does `{item}` differentiate itself?)"
            )));
        }
        self.depth += 1;
        let r = match meta {
            MetaFn::Jvp | MetaFn::Hvp => self.composed(item, visible, meta, args, optimize),
            MetaFn::Vmap { in_axes, out_axes } => self.vmap(item, visible, in_axes, out_axes, args),
            MetaFn::Jacfwd { .. } | MetaFn::Jacrev { .. } | MetaFn::Hessian { .. } => {
                self.jacobian(item, visible, meta, args)
            }
            MetaFn::Checkpoint => self.checkpoint(item, args),
            _ => self.reverse(item, visible, meta, weights, args, optimize),
        };
        self.depth -= 1;
        r
    }

    /// `grad`, `value_and_grad` and `vjp`: the `J` transformation.
    fn reverse(
        &mut self,
        item: &Item,
        visible: usize,
        meta: &MetaFn,
        weights: &[String],
        args: Option<&[AbsVal]>,
        optimize: bool,
    ) -> Result<Derived, AdError> {
        let params = self.param_values(item, args);
        let an = self.expand_all(item, &params)?;
        let custom = self.lift_bprops(&an)?;
        let envs = Envs::build(&self.world, &an, weights);
        let taken = std::mem::take(&mut self.taken);
        let mut gen = Gen::new(
            &self.world,
            &an,
            &envs,
            weights.to_vec(),
            taken,
            self.originals.clone(),
        );
        gen.visible = Some(visible);
        gen.custom = custom;
        let entry = gen.fresh(&format!("{}_{}", meta.name(), item));
        let result = gen.entry(meta, item, &entry).and_then(|body| {
            gen.run()?;
            Ok(body)
        });
        let out = std::mem::take(&mut gen.out);
        self.taken = std::mem::take(&mut gen.taken);
        let entry_body = result?;
        let mut graphs = out;
        graphs.insert(0, (entry.clone(), entry_body));
        if optimize {
            let vjp = *meta == MetaFn::Vjp;
            if self.unroll {
                passes::unroll::run(&mut graphs, &self.world, &entry, &params, vjp);
            }
            passes::optimize(&mut graphs, &self.world, &entry, &params, vjp);
        }
        Ok(Derived { entry, graphs })
    }

    /// The reached top-level graphs that declare their own backward rule
    /// (a nested graph `bprop` taking the graph's parameters, its output and
    /// the output's sensitivity, as MindSpore's `Cell.bprop`), with the rule
    /// lifted to a top-level item (made once per graph) and the values it
    /// captures.
    fn lift_bprops(
        &mut self,
        an: &Analysis,
    ) -> Result<HashMap<Item, (Item, Vec<NodeId>)>, AdError> {
        let mut out = HashMap::new();
        let items: Vec<Item> = an.reached.iter().map(|(it, _)| it.clone()).collect();
        for item in items {
            if out.contains_key(&item) {
                continue;
            }
            if let Some(rule) = self.own_rules.get(&item) {
                out.insert(item, (rule.clone(), Vec::new()));
                continue;
            }
            let Some(h) = custom_bprop(&self.world.bodies[&item]) else {
                continue;
            };
            let key = (item.clone(), h);
            let lifted = match self.lifts.get(&key) {
                Some(l) => l.clone(),
                None => {
                    let l = prepare::lift(&mut self.world, &item, h, &mut self.taken)?;
                    self.generated
                        .push((l.0.to_string(), (*self.world.bodies[&l.0]).clone()));
                    self.lifts.insert(key, l.clone());
                    l
                }
            };
            out.insert(item, lifted);
        }
        Ok(out)
    }

    /// Analyses `item` called with `params`, converting `Partial`s and
    /// expanding metafunctions until none is left: the final analysis.
    pub fn expand_all(&mut self, item: &Item, params: &[AV]) -> Result<Analysis, AdError> {
        for _ in 0..256 {
            let an = absint::analyze(&self.world, item, GraphId(0), params);
            if prepare::convert_partials(&mut self.world, &an)? {
                continue;
            }
            if self.expand_metas(&an)? {
                continue;
            }
            // A derivative differentiated again: its calls of helpers without
            // a gradient rule become their expansions.
            let mut items: Vec<Item> = Vec::new();
            for (it, _) in &an.reached {
                if !items.contains(it) {
                    items.push(it.clone());
                }
            }
            if crate::composites::expand_items(&mut self.world, &items, self.instances)? {
                continue;
            }
            return Ok(an);
        }
        Err(AdError(
            "metafunctions that keep expanding into others".into(),
        ))
    }

    /// Expands the metafunction applications of the bodies the analysis
    /// reached whose function it knows. Whether anything changed.
    fn expand_metas(&mut self, an: &Analysis) -> Result<bool, AdError> {
        let mut items: Vec<Item> = Vec::new();
        for (it, _) in &an.reached {
            if !items.contains(it) {
                items.push(it.clone());
            }
        }
        let reached: HashSet<(Item, GraphId)> = an.reached.iter().cloned().collect();
        let mut changed = false;
        let mut pending: Option<String> = None;
        for item in items {
            let body = self.world.bodies[&item].clone();
            let sites: Vec<(GraphId, NodeId, MetaFn)> = body
                .graph_ids()
                .flat_map(|g| body.graph(g).nodes.iter().map(move |&n| (g, n)))
                .filter_map(|(g, n)| {
                    let callee = *body.inputs(n).first()?;
                    match &body.node(callee).kind {
                        NodeKind::Const(Value::Meta(m)) => Some((g, n, m.clone())),
                        _ => None,
                    }
                })
                .collect();
            if sites.is_empty() {
                continue;
            }
            let mut new = (*body).clone();
            let mut touched = false;
            for (g, n, m) in sites {
                let inputs = body.inputs(n).to_vec();
                if inputs.len() != 2 {
                    return Err(AdError(format!("`{}` takes one function", m.name())));
                }
                let f = inputs[1];
                if !reached.contains(&(item.clone(), g)) {
                    // Never runs (the analysis found no call of its graph):
                    // nothing to differentiate.
                    let none = new.add_const(Value::None, None);
                    replace_all_uses(&mut new, n, none);
                    new.graph_mut(g).nodes.retain(|&x| x != n);
                    touched = true;
                    continue;
                }
                let target = match an.value(&self.world, &item, f) {
                    AV::Funcs(fs) if fs.len() == 1 => fs[0].clone(),
                    AV::Funcs(fs) => {
                        return Err(AdError(format!(
                            "`{}` of a function that may be one of {} graphs, inside a differentiated graph, is not supported",
                            m.name(),
                            fs.len()
                        )))
                    }
                    AV::Data(d) => {
                        return Err(AdError(format!(
                            "`{}` differentiates a function, not {d}",
                            m.name()
                        )))
                    }
                    _ => {
                        // Known once the metafunctions it comes from are
                        // expanded (`grad(grad(f))`).
                        pending.get_or_insert_with(|| m.name().to_string());
                        continue;
                    }
                };
                let args = site_arguments(an, &self.world, &item, &body, n);
                let replacement = self.expansion(&item, &body, g, &target, &m, args, &mut new)?;
                replace_all_uses(&mut new, n, replacement);
                new.graph_mut(g).nodes.retain(|&x| x != n);
                touched = true;
            }
            if touched {
                self.world.insert(item.clone(), Arc::new(new));
                changed = true;
            }
        }
        if !changed {
            if let Some(m) = pending {
                return Err(AdError(format!(
                    "cannot tell which function `{m}` differentiates inside a differentiated graph"
                )));
            }
        }
        Ok(changed)
    }

    /// The value that replaces `meta(target)` in graph `g` of `item` (whose
    /// body is being rewritten into `new`).
    #[allow(clippy::too_many_arguments)]
    fn expansion(
        &mut self,
        item: &Item,
        body: &Body,
        g: GraphId,
        target: &FnRef,
        meta: &MetaFn,
        args: Option<Vec<AbsVal>>,
        new: &mut Body,
    ) -> Result<NodeId, AdError> {
        let weights = wrt_weights(meta);
        match target {
            FnRef::Graph(it, h) if *h == GraphId(0) => {
                let visible = self.world.bodies[it].graph(GraphId(0)).params.len();
                let d = self.differentiate(it, visible, meta, &weights, args.as_deref(), true)?;
                let entry = self.emit(d);
                Ok(new.add_const(Value::Global(entry), None))
            }
            FnRef::Graph(it, h) => {
                let key = (it.clone(), *h);
                let (lifted, caps) = match self.lifts.get(&key) {
                    Some(l) => l.clone(),
                    None => {
                        let l = prepare::lift(&mut self.world, it, *h, &mut self.taken)?;
                        // Generated code may call it as it is (`jvp`'s value).
                        self.generated
                            .push((l.0.to_string(), (*self.world.bodies[&l.0]).clone()));
                        self.lifts.insert(key, l.clone());
                        l
                    }
                };
                let src = &self.world.bodies[it];
                let own = src.graph(*h).params.len();
                let name = src.graph(*h).name.clone();
                if !caps.is_empty() && (it != item || caps.iter().any(|&c| !visible(body, c, g))) {
                    return Err(AdError(format!(
                        "`{}` of the closure `{name}` where the values it captures are not visible, inside a differentiated graph, is not supported: pass them as parameters",
                        meta.name()
                    )));
                }
                // The entry takes the metafunction's arguments, then the
                // captured values.
                let mut all = args;
                if let Some(a) = &mut all {
                    a.extend(caps.iter().map(|_| AbsVal::Any));
                }
                let d = self.differentiate(&lifted, own, meta, &weights, all.as_deref(), true)?;
                let entry = self.emit(d);
                if caps.is_empty() {
                    return Ok(new.add_const(Value::Global(entry), None));
                }
                let arity = self
                    .world
                    .body(&entry)
                    .map_or(0, |b| b.graph(GraphId(0)).params.len())
                    .saturating_sub(caps.len());
                let lam = new.add_graph(
                    format!("{}_{name}", meta.name()),
                    Some(g),
                    GraphOrigin::Lambda,
                );
                let mut inputs = vec![new.add_const(Value::Global(entry), None)];
                for i in 0..arity {
                    inputs.push(new.add_param(lam, format!("x{i}"), None));
                }
                inputs.extend(caps.iter().copied());
                let out = new.add_apply(lam, inputs, None);
                new.graph_mut(lam).output = Some(out);
                Ok(new.add_const(Value::Graph(lam), None))
            }
            FnRef::Prim(p) => {
                let op = ops::lookup(&p.name)
                    .ok_or_else(|| AdError(format!("unknown primitive `{}`", p.name)))?;
                if op.variadic {
                    return Err(AdError(format!(
                        "`{}` of the primitive `{}`, which takes any number of inputs, is not supported",
                        meta.name(),
                        p.name
                    )));
                }
                let name = self.fresh(&format!("{}_prim", p.name));
                let mut b = Body::default();
                let root = b.add_graph(name.clone(), None, GraphOrigin::Generated);
                let xs: Vec<NodeId> = (0..op.input_count())
                    .map(|i| b.add_param(root, format!("x{i}"), None))
                    .collect();
                let out = b.add_prim_call(root, p.clone(), &xs, None);
                b.graph_mut(root).output = Some(out);
                let wrapper: Item = Arc::from(name.as_str());
                self.world.insert(wrapper.clone(), Arc::new(b.clone()));
                self.generated.push((name, b));
                let d = self.differentiate(
                    &wrapper,
                    op.input_count(),
                    meta,
                    &weights,
                    args.as_deref(),
                    true,
                )?;
                let entry = self.emit(d);
                Ok(new.add_const(Value::Global(entry), None))
            }
            FnRef::Partial(..) => Err(AdError(
                "internal: a `Partial` was not converted before expanding metafunctions".into(),
            )),
        }
    }

    /// Adds a derivative's graphs to the world (and to what is emitted);
    /// returns its entry.
    fn emit(&mut self, mut d: Derived) -> String {
        passes::finish(&mut d.graphs, &self.world, &d.entry);
        for (name, body) in d.graphs {
            self.world
                .insert(Arc::from(name.as_str()), Arc::new(body.clone()));
            self.taken.insert(name.clone());
            self.generated.retain(|(n, _)| *n != name);
            self.generated.push((name, body));
        }
        d.entry
    }

    /// `jvp` and `hvp`: a graph that applies `grad`/`vjp` (expanded then).
    fn composed(
        &mut self,
        item: &Item,
        visible: usize,
        meta: &MetaFn,
        args: Option<&[AbsVal]>,
        optimize: bool,
    ) -> Result<Derived, AdError> {
        let body = self.world.bodies[item].clone();
        let root = body.graph(body.root()).clone();
        let k = visible.min(root.params.len());
        let caps = root.params.len() - k;
        // What is known of the target's parameters (and of its output).
        let target_args: Option<Vec<AbsVal>> = args.map(|a| match meta {
            MetaFn::Jvp => a[..k.min(a.len())]
                .iter()
                .chain(a.iter().skip(2 * k))
                .cloned()
                .collect(),
            _ => a[..k.min(a.len())]
                .iter()
                .chain(a.iter().skip(k + 1))
                .cloned()
                .collect(),
        });
        let tparams = self.param_values(item, target_args.as_deref());
        let an = absint::analyze(&self.world, item, GraphId(0), &tparams);
        let out_value = an.ret(item, GraphId(0));
        let annotation = |i: usize| body.node(root.params[i]).annotation.clone();
        let pname = |i: usize| {
            body.node(root.params[i])
                .name
                .clone()
                .unwrap_or_else(|| format!("x{i}"))
        };
        let target = Value::Global(item.to_string());
        let entry = match meta {
            MetaFn::Jvp => {
                if k == 0 {
                    return Err(AdError(format!(
                        "`jvp` needs a function with at least one parameter; `{item}` takes none"
                    )));
                }
                // lin(x..., v..., u, c...) = <vjp(f)(x..., c...)[1](u), v>
                let lin = self.fresh(&format!("jvp_linear_{item}"));
                let mut b = Body::default();
                let g = b.add_graph(lin.clone(), None, GraphOrigin::Generated);
                let xs: Vec<NodeId> = (0..k)
                    .map(|i| {
                        let p = b.add_param(g, pname(i), None);
                        b.node_mut(p).annotation = annotation(i);
                        p
                    })
                    .collect();
                let vs: Vec<NodeId> = (0..k)
                    .map(|i| {
                        let p = b.add_param(g, format!("{}_dot", pname(i)), None);
                        b.node_mut(p).annotation = annotation(i);
                        p
                    })
                    .collect();
                let u = b.add_param(g, "u", None);
                let cs: Vec<NodeId> = (0..caps)
                    .map(|j| b.add_param(g, pname(k + j), None))
                    .collect();
                let vjp = b.add_const(Value::Meta(MetaFn::Vjp), None);
                let f = b.add_const(target.clone(), None);
                let vf = b.add_apply(g, vec![vjp, f], None);
                let mut call_args = xs.clone();
                call_args.extend(&cs);
                let r = call(&mut b, g, vf, &call_args);
                let bp = tuple_get(&mut b, g, r, 1);
                let d = call(&mut b, g, bp, &[u]);
                let mut terms = Vec::new();
                for i in 0..k {
                    let di = tuple_get(&mut b, g, d, i);
                    if let Some(t) = dot(&mut b, g, di, vs[i], &tparams[i]) {
                        terms.push(t);
                    }
                }
                let s = sum(&mut b, g, &terms);
                b.graph_mut(g).output = Some(s);
                self.add_item(&lin, b);
                // jvp_f(x..., v..., c...) = (f(x..., c...), grad(lin, wrt=u)(x..., v..., 0, c...))
                let name = self.fresh(&format!("jvp_{item}"));
                let mut b = Body::default();
                let g = b.add_graph(name.clone(), None, GraphOrigin::Generated);
                let xs: Vec<NodeId> = (0..k)
                    .map(|i| {
                        let p = b.add_param(g, pname(i), None);
                        b.node_mut(p).annotation = annotation(i);
                        p
                    })
                    .collect();
                let vs: Vec<NodeId> = (0..k)
                    .map(|i| {
                        let p = b.add_param(g, format!("{}_dot", pname(i)), None);
                        b.node_mut(p).annotation = annotation(i);
                        p
                    })
                    .collect();
                let cs: Vec<NodeId> = (0..caps)
                    .map(|j| b.add_param(g, pname(k + j), None))
                    .collect();
                let f = b.add_const(target, None);
                let mut call_args = xs.clone();
                call_args.extend(&cs);
                let out = call(&mut b, g, f, &call_args);
                b.node_mut(out).name = Some("out".into());
                let z = zeros_like(&mut b, g, out, &out_value);
                let grad = b.add_const(
                    Value::Meta(MetaFn::Grad {
                        wrt: Some(vec![WrtItem::Param(2 * k)]),
                    }),
                    None,
                );
                let l = b.add_const(Value::Global(lin), None);
                let gl = b.add_apply(g, vec![grad, l], None);
                let mut lin_args = xs.clone();
                lin_args.extend(&vs);
                lin_args.push(z);
                lin_args.extend(&cs);
                let t = call(&mut b, g, gl, &lin_args);
                let t = tuple_get(&mut b, g, t, 0);
                b.node_mut(t).name = Some("tangent".into());
                let r = make_tuple(&mut b, g, &[out, t]);
                b.graph_mut(g).output = Some(r);
                self.add_item(&name, b);
                name
            }
            _ => {
                if k == 0 {
                    return Err(AdError(format!(
                        "`hvp` needs a function with at least one parameter; `{item}` takes none"
                    )));
                }
                // gdot(x..., v, c...) = <grad(f)(x..., c...), v>
                let gdot = self.fresh(&format!("hvp_dot_{item}"));
                let mut b = Body::default();
                let g = b.add_graph(gdot.clone(), None, GraphOrigin::Generated);
                let xs: Vec<NodeId> = (0..k)
                    .map(|i| {
                        let p = b.add_param(g, pname(i), None);
                        b.node_mut(p).annotation = annotation(i);
                        p
                    })
                    .collect();
                let v = b.add_param(g, "v", None);
                b.node_mut(v).annotation = annotation(0);
                let cs: Vec<NodeId> = (0..caps)
                    .map(|j| b.add_param(g, pname(k + j), None))
                    .collect();
                let grad = b.add_const(Value::Meta(MetaFn::Grad { wrt: None }), None);
                let f = b.add_const(target, None);
                let gf = b.add_apply(g, vec![grad, f], None);
                let mut call_args = xs.clone();
                call_args.extend(&cs);
                let d = call(&mut b, g, gf, &call_args);
                let t = dot(&mut b, g, d, v, &tparams[0]);
                let s = sum(&mut b, g, &t.into_iter().collect::<Vec<_>>());
                b.graph_mut(g).output = Some(s);
                self.add_item(&gdot, b);
                // hvp_f(x..., v, c...) = grad(gdot)(x..., v, c...)
                let name = self.fresh(&format!("hvp_{item}"));
                let mut b = Body::default();
                let g = b.add_graph(name.clone(), None, GraphOrigin::Generated);
                let mut all: Vec<NodeId> = (0..k)
                    .map(|i| {
                        let p = b.add_param(g, pname(i), None);
                        b.node_mut(p).annotation = annotation(i);
                        p
                    })
                    .collect();
                let v = b.add_param(g, "v", None);
                b.node_mut(v).annotation = annotation(0);
                all.push(v);
                all.extend((0..caps).map(|j| b.add_param(g, pname(k + j), None)));
                let grad = b.add_const(Value::Meta(MetaFn::Grad { wrt: None }), None);
                let f = b.add_const(Value::Global(gdot), None);
                let gf = b.add_apply(g, vec![grad, f], None);
                let r = call(&mut b, g, gf, &all);
                b.graph_mut(g).output = Some(r);
                self.add_item(&name, b);
                name
            }
        };
        let entry_item: Item = Arc::from(entry.as_str());
        let params = self.param_values(&entry_item, args);
        self.expand_all(&entry_item, &params)?;
        let mut graphs = vec![(entry.clone(), (*self.world.bodies[&entry_item]).clone())];
        self.generated.retain(|(n, _)| *n != entry);
        if optimize {
            // The expansions' graphs, so that they can be inlined.
            let mut all = graphs.clone();
            all.extend(self.generated.iter().cloned());
            passes::optimize(&mut all, &self.world, &entry, &params, false);
            passes::finish(&mut all, &self.world, &entry);
            graphs = all;
        }
        Ok(Derived { entry, graphs })
    }

    fn add_item(&mut self, name: &str, body: Body) {
        self.world.insert(Arc::from(name), Arc::new(body.clone()));
        self.generated.push((name.to_string(), body));
    }
}

/// The nested graph `bprop` of a top-level body that declares its own
/// backward rule: a child of the root taking the root's parameters, then
/// `out` and `dout` (spec §7).
pub fn custom_bprop(body: &Body) -> Option<GraphId> {
    let root = body.root();
    let n = body.graph(root).params.len();
    body.graph_ids().find(|&h| {
        let g = body.graph(h);
        g.parent == Some(root) && g.name == "bprop" && g.params.len() == n + 2
    })
}

/// The weights a metafunction differentiates (`wrt=`).
pub fn wrt_weights(meta: &MetaFn) -> Vec<String> {
    let mut weights = Vec::new();
    if let MetaFn::Grad { wrt: Some(items) } | MetaFn::ValueAndGrad { wrt: Some(items) } = meta {
        for w in items {
            if let WrtItem::Weight(name) = w {
                if !weights.contains(name) {
                    weights.push(name.clone());
                }
            }
        }
    }
    weights
}

/// What is known of the arguments `meta(f)` (node `n`) is called with, over
/// every call of it in its body.
fn site_arguments(
    an: &Analysis,
    world: &World,
    item: &Item,
    body: &Body,
    n: NodeId,
) -> Option<Vec<AbsVal>> {
    let mut joined: Option<Vec<AV>> = None;
    for g in body.graph_ids() {
        for &u in &body.graph(g).nodes {
            let inputs = body.inputs(u);
            let vals: Vec<AV> = if inputs.first() == Some(&n) {
                inputs[1..]
                    .iter()
                    .map(|&a| an.value(world, item, a))
                    .collect()
            } else if inputs.len() == 2 && inputs[1] == n {
                // `outer(meta(f))`: called with what `outer(...)` is called
                // with, less the tangents `jvp`/`hvp` add.
                let NodeKind::Const(Value::Meta(outer)) = &body.node(inputs[0]).kind else {
                    continue;
                };
                let Some(args) = site_arguments(an, world, item, body, u) else {
                    continue;
                };
                let Some(k) = outer.primal_arity(args.len()) else {
                    continue;
                };
                match outer {
                    MetaFn::Vmap { in_axes, .. } => {
                        match ir::batching::example_values(&args[..k], in_axes) {
                            Some(ex) => ex.iter().map(AV::from_absval).collect(),
                            None => continue,
                        }
                    }
                    _ => args[..k].iter().map(AV::from_absval).collect(),
                }
            } else {
                continue;
            };
            joined = Some(match joined {
                None => vals,
                Some(j) if j.len() == vals.len() => {
                    j.iter().zip(&vals).map(|(a, b)| a.join(b)).collect()
                }
                Some(_) => return None,
            });
        }
    }
    joined.map(|vs| vs.iter().map(AV::to_absval).collect())
}

/// Zeros shaped like `x` (a value like `v`): a tuple of them for a tuple,
/// `none` for `none` and strings.
fn zeros_like(b: &mut Body, g: GraphId, x: NodeId, v: &AV) -> NodeId {
    match v {
        AV::Tuple(items) => {
            let parts: Vec<NodeId> = items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let xi = tuple_get(b, g, x, i);
                    zeros_like(b, g, xi, item)
                })
                .collect();
            make_tuple(b, g, &parts)
        }
        AV::Data(AbsVal::None | AbsVal::Str(_)) => b.add_const(Value::None, None),
        _ => prim(b, g, "ZerosLike", &[x]),
    }
}

/// The inner product of `d` and `v` (values like `like`), summed over every
/// float element; `None` where nothing is a float.
fn dot(b: &mut Body, g: GraphId, d: NodeId, v: NodeId, like: &AV) -> Option<NodeId> {
    match like {
        AV::Tuple(items) => {
            let terms: Vec<NodeId> = items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| {
                    let di = tuple_get(b, g, d, i);
                    let vi = tuple_get(b, g, v, i);
                    dot(b, g, di, vi, item)
                })
                .collect();
            (!terms.is_empty()).then(|| sum(b, g, &terms))
        }
        AV::Data(a) => match a {
            AbsVal::Tensor { dtype, .. } if dtype.is_float() => {
                let m = prim(b, g, "Mul", &[d, v]);
                Some(prim(b, g, "ReduceSum", &[m]))
            }
            AbsVal::Scalar { dtype, .. } if dtype.is_float() => Some(prim(b, g, "Mul", &[d, v])),
            _ => None,
        },
        _ => {
            let m = prim(b, g, "Mul", &[d, v]);
            Some(prim(b, g, "ReduceSum", &[m]))
        }
    }
}

fn sum(b: &mut Body, g: GraphId, terms: &[NodeId]) -> NodeId {
    match terms.split_first() {
        None => b.add_const(Value::float(0.0), None),
        Some((&first, rest)) => rest
            .iter()
            .fold(first, |acc, &t| prim(b, g, "Add", &[acc, t])),
    }
}
