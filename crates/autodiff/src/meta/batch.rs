//! The batched form of `vmap`: `f`'s body rewritten primitive by primitive
//! by the batching rules of `ops::batch`, with every batched value's batch
//! dimension at axis 0. A primitive without a rule runs once per example
//! (its batched inputs `Unstack`ed, its outputs `Stack`ed) inside the
//! otherwise batched body; those primitives are listed in the entry's
//! notes (`mirdsl run --verbose` prints them).
//!
//! An `if` on a batched condition runs both sides on the batch and
//! selects per example (as JAX does). A call of another top-level graph
//! with batched arguments calls that graph's own batched form (its `vmap`,
//! made first; a graph calling itself while being batched is called per
//! example). Where the body holds what the rules do not cover (closures,
//! an `if` on a condition every example shares, side effects, values whose
//! rank is unknown), there is no batched form and `vmap` runs the whole of
//! `f` per example ([`super::vmap`]).

use ir::batching::normalize_axis;
use ir::{AttrValue, BatchAxes};
use ops::batch::{rule, BatchRule};

use super::vmap::Examples;
use super::*;

/// Whether a value of the batched body carries the batch (at axis 0).
#[derive(Debug, Clone, PartialEq)]
enum Bat {
    /// The same for every example.
    Un,
    /// Batched at axis 0 (every tensor of a tuple value).
    At0,
    /// A tuple whose items differ.
    Tuple(Vec<Bat>),
}

/// Why there is no batched form (the per-example form is used).
struct NoRule(String);

/// A call of another graph whose batched form is to be made first: the
/// graph, its arguments' batched values and their batch axes.
struct Need {
    key: String,
    item: Item,
    values: Vec<AbsVal>,
    axes: Vec<Option<i64>>,
}

struct Batcher<'a> {
    src: &'a Body,
    item: &'a Item,
    world: &'a World,
    an: &'a Analysis,
    b: Body,
    g: GraphId,
    size: i64,
    done: HashMap<NodeId, (NodeId, Bat)>,
    /// Primitives run per example.
    looped: Vec<String>,
    /// The batched forms of the graphs called, made so far (by [`Need::key`]).
    callees: &'a HashMap<String, String>,
    /// The call whose batched form is missing.
    need: Option<Need>,
}

/// Attribute `attr` of a call of `op`: as given, else its default.
fn attr_value(op: &ops::OpDef, p: &ir::PrimRef, attr: &str) -> Option<AttrValue> {
    match p.attr(attr) {
        Some(v) => Some(v.clone()),
        None => op.param(attr).and_then(|d| match d.kind {
            ops::ParamKind::Attr {
                default: Some(d), ..
            } => Some(d.value()),
            _ => None,
        }),
    }
}

fn attr_tuple(items: &[i64]) -> AttrValue {
    AttrValue::Tuple(items.iter().map(|&i| AttrValue::Int(i)).collect())
}

impl Batcher<'_> {
    /// The rank of one example of node `n` of the source.
    fn rank(&self, n: NodeId) -> Result<usize, NoRule> {
        match self.an.value(self.world, self.item, n) {
            AV::Data(v) => v
                .shape()
                .and_then(|s| s.rank())
                .ok_or_else(|| NoRule(format!("the rank of {v} is not known"))),
            other => Err(NoRule(format!("{other:?} is not a tensor"))),
        }
    }

    fn prim(&mut self, name: &str, attrs: &[(&str, AttrValue)], args: &[NodeId]) -> NodeId {
        let p = crate::builder::prim_ref(name, attrs);
        self.b.add_prim_call(self.g, p, args, None)
    }

    /// `x` (batched at 0, examples of rank `r`) with `k` singleton
    /// dimensions after the batch axis.
    fn pad(&mut self, mut x: NodeId, k: usize) -> NodeId {
        for _ in 0..k {
            x = self.prim("ExpandDims", &[("axis", AttrValue::Int(1))], &[x]);
        }
        x
    }

    /// `p` with attribute `attr` set to `value`.
    fn with_attr(&self, p: &ir::PrimRef, attr: &str, value: AttrValue) -> ir::PrimRef {
        let mut q = p.clone();
        match q.attrs.iter_mut().find(|(k, _)| k == attr) {
            Some(slot) => slot.1 = value,
            None => q.attrs.push((attr.to_string(), value)),
        }
        crate::builder::prim_ref(
            &q.name,
            &q.attrs
                .iter()
                .map(|(k, v)| (k.as_str(), v.clone()))
                .collect::<Vec<_>>(),
        )
    }

    fn visit(&mut self, n: NodeId) -> Result<(NodeId, Bat), NoRule> {
        if let Some(r) = self.done.get(&n) {
            return Ok(r.clone());
        }
        let r = self.visit_new(n)?;
        self.done.insert(n, r.clone());
        Ok(r)
    }

    fn visit_new(&mut self, n: NodeId) -> Result<(NodeId, Bat), NoRule> {
        let node = self.src.node(n);
        match &node.kind {
            NodeKind::Param { .. } => Err(NoRule("a parameter of a nested graph".into())),
            NodeKind::Weight(w) => Ok((self.b.add_weight(w.clone(), None), Bat::Un)),
            NodeKind::Const(v) => match v {
                Value::Graph(_) | Value::Meta(_) | Value::Global(_) | Value::Monad => {
                    Err(NoRule("a function value or a state token".into()))
                }
                v => Ok((self.b.add_const(v.clone(), None), Bat::Un)),
            },
            NodeKind::Apply(inputs) => {
                let inputs = inputs.clone();
                if let Some((c, t, e)) = self.branch_of(&inputs) {
                    return self.branch(n, c, t, e);
                }
                if let NodeKind::Const(Value::Global(h)) = &self.src.node(inputs[0]).kind {
                    if let Some((item, _)) = self.world.bodies.get_key_value(h.as_str()) {
                        return self.call_graph(item.clone(), &inputs[1..]);
                    }
                }
                let NodeKind::Const(Value::Prim(p)) = &self.src.node(inputs[0]).kind else {
                    return Err(NoRule("a call of a graph or a closure".into()));
                };
                let p = p.clone();
                let op = ops::lookup(&p.name)
                    .ok_or_else(|| NoRule(format!("unknown primitive `{}`", p.name)))?;
                if matches!(
                    op.category,
                    ops::Category::State | ops::Category::Communication
                ) || ops::is_ordered(&p.name)
                {
                    return Err(NoRule(format!("`{}` has side effects", p.name)));
                }
                let mut args = Vec::new();
                for &a in &inputs[1..] {
                    args.push(self.visit(a)?);
                }
                self.apply(n, op, &p, &inputs[1..], args)
            }
        }
    }

    /// A call of top-level graph `h`: as it is where no argument carries the
    /// batch, else a call of `h`'s own batched form (`vmap` of `h` with the
    /// batched arguments at axis 0 and its outputs there), made first.
    fn call_graph(&mut self, h: Item, args: &[NodeId]) -> Result<(NodeId, Bat), NoRule> {
        let mut given = Vec::new();
        for &a in args {
            given.push(self.visit(a)?);
        }
        let ids: Vec<NodeId> = given.iter().map(|(id, _)| *id).collect();
        if given.iter().all(|(_, bat)| *bat == Bat::Un) {
            let f = self.b.add_const(Value::Global(h.to_string()), None);
            return Ok((call(&mut self.b, self.g, f, &ids), Bat::Un));
        }
        let mut axes = Vec::new();
        let mut values = Vec::new();
        for (&a, (_, bat)) in args.iter().zip(&given) {
            let v = self.an.value(self.world, self.item, a).to_absval();
            match bat {
                Bat::Un => {
                    axes.push(None);
                    values.push(v);
                }
                Bat::At0 if matches!(v, AbsVal::Tensor { .. }) => {
                    axes.push(Some(0));
                    let batched = ir::batching::batch(&v, Some(0), &ir::Dim::Known(self.size))
                        .map_err(NoRule)?;
                    values.push(batched);
                }
                _ => {
                    return Err(NoRule(format!(
                        "a call of `{h}` with a batched value that is not a tensor"
                    )))
                }
            }
        }
        let key = format!("{h} {axes:?} {values:?}");
        match self.callees.get(&key) {
            Some(entry) => {
                let f = self.b.add_const(Value::Global(entry.clone()), None);
                Ok((call(&mut self.b, self.g, f, &ids), Bat::At0))
            }
            None => {
                self.need = Some(Need {
                    key,
                    item: h.clone(),
                    values,
                    axes,
                });
                Err(NoRule(format!("a call of `{h}`, not yet batched")))
            }
        }
    }

    /// `Switch(c, then, else)()`, an `if` whose sides take no parameters:
    /// the condition and the sides' graphs.
    fn branch_of(&self, inputs: &[NodeId]) -> Option<(NodeId, GraphId, GraphId)> {
        let [callee] = inputs else { return None };
        let NodeKind::Apply(sw) = &self.src.node(*callee).kind else {
            return None;
        };
        let [prim, c, t, e] = sw.as_slice() else {
            return None;
        };
        let NodeKind::Const(Value::Prim(p)) = &self.src.node(*prim).kind else {
            return None;
        };
        let graph = |n: &NodeId| match &self.src.node(*n).kind {
            NodeKind::Const(Value::Graph(g)) if self.src.graph(*g).params.is_empty() => Some(*g),
            _ => None,
        };
        (p.name == "Switch").then_some(())?;
        Some((*c, graph(t)?, graph(e)?))
    }

    /// An `if` on a batched condition runs both sides on the whole batch
    /// and selects, example by example (as JAX does).
    fn branch(
        &mut self,
        n: NodeId,
        c: NodeId,
        t: GraphId,
        e: GraphId,
    ) -> Result<(NodeId, Bat), NoRule> {
        let cond = self.visit(c)?;
        if cond.1 == Bat::Un {
            return Err(NoRule(
                "an `if` on a condition the same for every example".into(),
            ));
        }
        let (to, eo) = match (self.src.graph(t).output, self.src.graph(e).output) {
            (Some(to), Some(eo)) => (to, eo),
            _ => return Err(NoRule("an `if` side without an output".into())),
        };
        for o in [to, eo] {
            if !matches!(self.an.value(self.world, self.item, o), AV::Data(_)) {
                return Err(NoRule("an `if` whose sides are not tensors".into()));
            }
        }
        let (tv, ev) = (self.visit(to)?, self.visit(eo)?);
        let op = ops::lookup("Select").ok_or_else(|| NoRule("no `Select`".into()))?;
        self.apply(
            n,
            op,
            &ir::PrimRef::new("Select"),
            &[c, to, eo],
            vec![cond, tv, ev],
        )
    }

    fn apply(
        &mut self,
        n: NodeId,
        op: &'static ops::OpDef,
        p: &ir::PrimRef,
        srcs: &[NodeId],
        args: Vec<(NodeId, Bat)>,
    ) -> Result<(NodeId, Bat), NoRule> {
        let nodes: Vec<NodeId> = args.iter().map(|a| a.0).collect();
        let same = |b: &mut Body, g| b.add_prim_call(g, p.clone(), &nodes, None);
        if args.iter().all(|a| a.1 == Bat::Un) {
            return Ok((same(&mut self.b, self.g), Bat::Un));
        }
        match p.name.as_str() {
            "MakeTuple" => {
                let t = same(&mut self.b, self.g);
                return Ok((t, Bat::Tuple(args.into_iter().map(|a| a.1).collect())));
            }
            "TupleGetItem" => {
                let item = match (&args[0].1, self.src.node(srcs[1]).kind.clone()) {
                    (Bat::Tuple(items), NodeKind::Const(Value::Scalar { value, .. })) => {
                        let i = match value {
                            ir::ScalarConst::Int(i) => i,
                            _ => return Err(NoRule("a tuple index that is not an int".into())),
                        };
                        let len = items.len() as i64;
                        let i = if i < 0 { i + len } else { i };
                        items
                            .get(i as usize)
                            .cloned()
                            .ok_or_else(|| NoRule("a tuple index out of range".into()))?
                    }
                    (Bat::At0, _) => Bat::At0,
                    _ => return Err(NoRule("a tuple indexed by a batched value".into())),
                };
                return Ok((same(&mut self.b, self.g), item));
            }
            _ => {}
        }
        if args.iter().any(|a| matches!(a.1, Bat::Tuple(_))) {
            return Err(NoRule(format!("`{}` of a partly batched tuple", p.name)));
        }
        match rule(op) {
            Some(BatchRule::Broadcast) => {
                let ranks: Vec<usize> = srcs
                    .iter()
                    .map(|&s| self.rank(s))
                    .collect::<Result<_, _>>()?;
                let top = ranks.iter().copied().max().unwrap_or(0);
                let mut xs = Vec::new();
                for (a, r) in args.iter().zip(&ranks) {
                    xs.push(match a.1 {
                        Bat::At0 => self.pad(a.0, top - r),
                        _ => a.0,
                    });
                }
                Ok((self.b.add_prim_call(self.g, p.clone(), &xs, None), Bat::At0))
            }
            Some(BatchRule::MatMul) => {
                for &s in srcs {
                    if self.rank(s)? != 2 {
                        return Err(NoRule("`MatMul` of operands not of rank 2".into()));
                    }
                }
                let attrs: Vec<(&str, AttrValue)> = p
                    .attrs
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.clone()))
                    .collect();
                Ok((self.prim("BatchMatMul", &attrs, &nodes), Bat::At0))
            }
            // A scalar example's axes (`()`: none; `-1`: the scalar itself)
            // would name the batch's: such a call runs per example.
            // `()` that means "every axis of size 1" (`Squeeze`) would take
            // a batch of one too: such a call runs per example.
            Some(BatchRule::Axes { attr, empty_is_all })
                if args.len() == 1
                    && self.rank(srcs[0])? > 0
                    && (empty_is_all
                        || !matches!(attr_value(op, p, attr), Some(AttrValue::Tuple(t)) if t.is_empty())) =>
            {
                let r = self.rank(srcs[0])?;
                let value = attr_value(op, p, attr)
                    .ok_or_else(|| NoRule(format!("`{}` without `{attr}`", p.name)))?;
                let shift = |a: i64| if a >= 0 { a + 1 } else { a };
                let new = match value {
                    AttrValue::Int(a) => AttrValue::Int(shift(a)),
                    AttrValue::Tuple(items) if items.is_empty() && empty_is_all => {
                        attr_tuple(&(1..=r as i64).collect::<Vec<_>>())
                    }
                    AttrValue::Tuple(items) => AttrValue::Tuple(
                        items
                            .into_iter()
                            .map(|v| match v {
                                AttrValue::Int(a) => Ok(AttrValue::Int(shift(a))),
                                _ => Err(NoRule(format!("`{}`'s `{attr}` is not ints", p.name))),
                            })
                            .collect::<Result<_, _>>()?,
                    ),
                    _ => return Err(NoRule(format!("`{}`'s `{attr}` is not ints", p.name))),
                };
                let q = self.with_attr(p, attr, new);
                Ok((self.b.add_prim_call(self.g, q, &nodes, None), Bat::At0))
            }
            Some(BatchRule::Like { axes }) if args.len() == 2 && self.rank(srcs[1])? > 0 => {
                let r = self.rank(srcs[1])?;
                let mut xs = Vec::new();
                for (a, &s) in args.iter().zip(srcs) {
                    let v = self.an.value(self.world, self.item, s);
                    xs.push(self.batch_at(a.0, &v, &a.1, Some(0))?);
                }
                let Some(attr) = axes else {
                    return Ok((self.b.add_prim_call(self.g, p.clone(), &xs, None), Bat::At0));
                };
                let shift = |a: i64| AttrValue::Int(if a >= 0 { a + 1 } else { a });
                let new = match attr_value(op, p, attr) {
                    Some(AttrValue::Tuple(items)) if items.is_empty() => {
                        attr_tuple(&(1..=r as i64).collect::<Vec<_>>())
                    }
                    Some(AttrValue::Tuple(items)) => AttrValue::Tuple(
                        items
                            .into_iter()
                            .map(|v| match v {
                                AttrValue::Int(a) => Ok(shift(a)),
                                _ => Err(NoRule(format!("`{}`'s `{attr}` is not ints", p.name))),
                            })
                            .collect::<Result<_, _>>()?,
                    ),
                    Some(AttrValue::Int(a)) => shift(a),
                    _ => return Err(NoRule(format!("`{}`'s `{attr}` is not ints", p.name))),
                };
                let q = self.with_attr(p, attr, new);
                Ok((self.b.add_prim_call(self.g, q, &xs, None), Bat::At0))
            }
            Some(BatchRule::Shape { attr, broadcast }) if args.len() == 1 => {
                let Some(AttrValue::Tuple(dims)) = p.attr(attr).cloned() else {
                    return Err(NoRule(format!("`{}` without a tuple `{attr}`", p.name)));
                };
                let r = self.rank(srcs[0])?;
                let nodes = if broadcast && dims.len() > r {
                    vec![self.pad(nodes[0], dims.len() - r)]
                } else {
                    nodes
                };
                let mut new = vec![AttrValue::Int(self.size)];
                new.extend(dims);
                let q = self.with_attr(p, attr, AttrValue::Tuple(new));
                Ok((self.b.add_prim_call(self.g, q, &nodes, None), Bat::At0))
            }
            Some(BatchRule::Permutation { attr }) if args.len() == 1 => {
                let Some(AttrValue::Tuple(perm)) = p.attr(attr).cloned() else {
                    return Err(NoRule(format!("`{}` without a tuple `{attr}`", p.name)));
                };
                let r = perm.len();
                let mut new = vec![AttrValue::Int(0)];
                for v in perm {
                    let AttrValue::Int(a) = v else {
                        return Err(NoRule(format!("`{}`'s `{attr}` is not ints", p.name)));
                    };
                    let a = normalize_axis(a, r).ok_or_else(|| {
                        NoRule(format!("`{}`'s `{attr}` is out of range", p.name))
                    })?;
                    new.push(AttrValue::Int(a as i64 + 1));
                }
                let q = self.with_attr(p, attr, AttrValue::Tuple(new));
                Ok((self.b.add_prim_call(self.g, q, &nodes, None), Bat::At0))
            }
            _ => {
                // Per example: this primitive alone, in a loop.
                if !self.looped.contains(&p.name) {
                    self.looped.push(p.name.clone());
                }
                let size = self.size as usize;
                let mut parts: Vec<Option<NodeId>> = Vec::new();
                for a in &args {
                    parts.push(match a.1 {
                        Bat::At0 => {
                            Some(self.prim("Unstack", &[("axis", AttrValue::Int(0))], &[a.0]))
                        }
                        _ => None,
                    });
                }
                let mut ys = Vec::new();
                for e in 0..size {
                    let xs: Vec<NodeId> = args
                        .iter()
                        .zip(&parts)
                        .map(|(a, part)| match part {
                            Some(t) => tuple_get(&mut self.b, self.g, *t, e),
                            None => a.0,
                        })
                        .collect();
                    ys.push(self.b.add_prim_call(self.g, p.clone(), &xs, None));
                }
                let out = self.an.value(self.world, self.item, n);
                let y = super::vmap::stack_outputs(
                    &mut self.b,
                    self.g,
                    &ys,
                    &out,
                    &BatchAxes::All(Some(0)),
                )
                .map_err(|e| NoRule(e.0))?;
                Ok((y, Bat::At0))
            }
        }
    }

    /// `x` (like `v`, batched as `bat`) with its batch at `axis`, or the
    /// same for every example stacked there.
    fn batch_at(
        &mut self,
        x: NodeId,
        v: &AV,
        bat: &Bat,
        axis: Option<i64>,
    ) -> Result<NodeId, NoRule> {
        match (v, bat) {
            (AV::Tuple(items), _) => {
                let parts: Vec<NodeId> = (0..items.len())
                    .map(|i| {
                        let xi = tuple_get(&mut self.b, self.g, x, i);
                        let bi = match bat {
                            Bat::Tuple(bs) => bs[i].clone(),
                            other => other.clone(),
                        };
                        self.batch_at(xi, &items[i], &bi, axis)
                    })
                    .collect::<Result<_, _>>()?;
                Ok(make_tuple(&mut self.b, self.g, &parts))
            }
            (_, Bat::Un) => {
                let Some(axis) = axis else { return Ok(x) };
                let copies = vec![x; self.size as usize];
                let t = make_tuple(&mut self.b, self.g, &copies);
                Ok(self.prim("Stack", &[("axis", AttrValue::Int(axis))], &[t]))
            }
            (AV::Data(d), _) => {
                let Some(axis) = axis else {
                    return Err(NoRule(
                        "`out_axes=none` for an output that depends on the batch".into(),
                    ));
                };
                let r = d
                    .shape()
                    .and_then(|s| s.rank())
                    .ok_or_else(|| NoRule("an output of unknown rank".into()))?;
                let a = normalize_axis(axis, r + 1)
                    .ok_or_else(|| NoRule(format!("out_axes {axis} out of range")))?;
                if a == 0 {
                    return Ok(x);
                }
                let mut perm: Vec<i64> = (1..=a as i64).collect();
                perm.push(0);
                perm.extend(a as i64 + 1..=r as i64);
                Ok(self.prim("Transpose", &[("perm", attr_tuple(&perm))], &[x]))
            }
            _ => Err(NoRule("an output that is not a tensor".into())),
        }
    }
}

/// The batched entry of `vmap(f)`, or `None` where the per-example form
/// must be used. The graphs `f` calls with batched arguments are batched
/// too (their own `vmap`, batched or per example, made first); a graph
/// being batched that calls itself is called per example.
#[allow(clippy::too_many_arguments)]
pub(super) fn batched(
    cx: &mut Cx,
    item: &Item,
    k: usize,
    in_axes: &BatchAxes,
    out_axes: &BatchAxes,
    ex: &Examples,
    an: &Analysis,
    out: &AV,
) -> Result<Option<Derived>, AdError> {
    if cx.vmapping.contains(item) {
        cx.vmap_notes.push(format!(
            "vmap of `{item}`: per example (no batched form: it calls itself)"
        ));
        return Ok(None);
    }
    cx.vmapping.push(item.clone());
    let mut callees = HashMap::new();
    let mut graphs = Vec::new();
    let r = loop {
        match attempt(cx, item, k, in_axes, out_axes, ex, an, out, &callees) {
            Ok(Ok(Some(mut d))) => {
                d.graphs.extend(std::mem::take(&mut graphs));
                break Ok(Some(d));
            }
            Ok(Ok(None)) => break Ok(None),
            Err(e) => break Err(e),
            Ok(Err(need)) => {
                let made = cx.vmap(
                    &need.item,
                    need.values.len(),
                    &BatchAxes::Each(need.axes),
                    &BatchAxes::All(Some(0)),
                    Some(&need.values),
                );
                match made {
                    Ok(d) => {
                        callees.insert(need.key, d.entry.clone());
                        graphs.extend(d.graphs);
                    }
                    Err(AdError(why)) => {
                        cx.vmap_notes.push(format!(
                            "vmap of `{item}`: per example (no batched form of `{}`: {why})",
                            need.item
                        ));
                        break Ok(None);
                    }
                }
            }
        }
    };
    cx.vmapping.pop();
    r
}

/// One try at the batched entry: `Err(need)` where a graph it calls must
/// be batched first.
#[allow(clippy::too_many_arguments)]
fn attempt(
    cx: &mut Cx,
    item: &Item,
    k: usize,
    in_axes: &BatchAxes,
    out_axes: &BatchAxes,
    ex: &Examples,
    an: &Analysis,
    out: &AV,
    callees: &HashMap<String, String>,
) -> Result<Result<Option<Derived>, Need>, AdError> {
    let src = cx.world.bodies[item].clone();
    let root = src.graph(src.root()).clone();
    let Some(output) = root.output else {
        return Ok(Ok(None));
    };
    let name = cx.fresh(&format!("vmap_{item}"));
    let mut b = Body::default();
    let g = b.add_graph(name.clone(), None, GraphOrigin::Generated);
    let mut bt = Batcher {
        src: &src,
        item,
        world: &cx.world,
        an,
        b: Body::default(),
        g,
        size: ex.size,
        done: HashMap::new(),
        looped: Vec::new(),
        callees,
        need: None,
    };
    std::mem::swap(&mut bt.b, &mut b);
    let made = (|| -> Result<NodeId, NoRule> {
        for (i, &p) in root.params.iter().enumerate() {
            let pname = src.node(p).name.clone().unwrap_or_else(|| format!("x{i}"));
            let x = bt.b.add_param(g, pname, None);
            let axis = if i < k { in_axes.get(i) } else { None };
            let v = match axis {
                None => (x, Bat::Un),
                Some(axis) => {
                    let AV::Data(d) = &ex.values[i] else {
                        return Err(NoRule("a mapped argument that is not a tensor".into()));
                    };
                    let r = d
                        .shape()
                        .and_then(|s| s.rank())
                        .ok_or_else(|| NoRule("unknown rank".into()))?;
                    let a = normalize_axis(axis, r + 1)
                        .ok_or_else(|| NoRule("axis out of range".into()))?;
                    let moved = if a == 0 {
                        x
                    } else {
                        let mut perm: Vec<i64> = vec![a as i64];
                        perm.extend((0..=r as i64).filter(|&d| d != a as i64));
                        bt.prim("Transpose", &[("perm", attr_tuple(&perm))], &[x])
                    };
                    (moved, Bat::At0)
                }
            };
            bt.done.insert(p, v);
        }
        let (y, bat) = bt.visit(output)?;
        match (out, out_axes) {
            (AV::Tuple(items), BatchAxes::Each(axes)) if axes.len() == items.len() => {
                let parts: Vec<NodeId> = (0..items.len())
                    .map(|i| {
                        let yi = tuple_get(&mut bt.b, g, y, i);
                        let bi = match &bat {
                            Bat::Tuple(bs) => bs[i].clone(),
                            other => other.clone(),
                        };
                        bt.batch_at(yi, &items[i], &bi, axes[i])
                    })
                    .collect::<Result<_, _>>()?;
                Ok(make_tuple(&mut bt.b, g, &parts))
            }
            (_, BatchAxes::Each(_)) => Err(NoRule("`out_axes` does not fit the output".into())),
            _ => bt.batch_at(y, out, &bat, out_axes.get(0)),
        }
    })();
    let r = match made {
        Ok(r) => r,
        Err(NoRule(why)) => {
            cx.taken.remove(&name);
            if let Some(need) = bt.need.take() {
                return Ok(Err(need));
            }
            cx.vmap_notes.push(format!(
                "vmap of `{item}`: per example (no batched form: {why})"
            ));
            return Ok(Ok(None));
        }
    };
    let looped = std::mem::take(&mut bt.looped);
    let mut b = std::mem::take(&mut bt.b);
    b.graph_mut(g).output = Some(r);
    cx.vmap_notes.push(if looped.is_empty() {
        format!("vmap of `{item}`: batched")
    } else {
        format!(
            "vmap of `{item}`: batched; per example (no batching rule): {}",
            looped.join(", ")
        )
    });
    cx.add_item(&name, b.clone());
    cx.generated.retain(|(n, _)| *n != name);
    Ok(Ok(Some(Derived {
        entry: name.clone(),
        graphs: vec![(name, b)],
    })))
}
