//! Sensitivities of function values ("environments").
//!
//! The sensitivity of a closure is the tuple of the sensitivities of what it
//! captures. Function values that may meet (flow into one node) form a *class*
//! (union-find over the [`FnRef`]s the abstract interpretation found together),
//! and every member of a class uses the class's layout: one slot per captured
//! value of any member that can carry a gradient (a float, or a closure whose
//! own layout is not empty), then one slot per differentiated weight the
//! members may touch (directly, through calls, or through closures they make).
//! A member fills the slots of values it does not capture with zeros (a weak
//! `0.0` placeholder for a value it cannot even see, which broadcasts when
//! added and is never read where it stands), so sensitivities of one class add
//! slot by slot whichever member ran, and a closure's maker reads back the
//! slots of what it captured.

use std::cell::RefCell;
use std::collections::HashMap;

use ir::{AbsVal, GraphId, NodeId, NodeKind, Value};

use crate::absint::{Analysis, FnRef, AV};
use crate::world::{closure_fvs, Item, World};

/// One slot of an environment.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Slot {
    /// A captured node of `item`'s body.
    Fv(Item, NodeId),
    /// A differentiated weight.
    Weight(String),
}

/// How a value's sensitivity is built.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A float tensor or scalar: sensitivities add with `Add`.
    Float,
    /// An integer or bool: no gradient; its zero is `ZerosLike`.
    Int,
    /// A string or none: no gradient; its zero is `none`.
    NoneLike,
    Tuple(Vec<Kind>),
    /// A function of this class: its sensitivity is the class's environment.
    Env(usize),
    /// Unknown: treated as a tensor.
    Unknown,
    /// Never computed (unreachable).
    Dead,
}

pub struct Envs {
    index: HashMap<FnRef, usize>,
    pub members: Vec<Vec<FnRef>>,
    layouts: Vec<Vec<Slot>>,
    fvs: RefCell<HashMap<(Item, GraphId), Vec<NodeId>>>,
}

impl Envs {
    pub fn build(world: &World, an: &Analysis, weights: &[String]) -> Envs {
        // Every function value: those the analysis saw, and every constant one.
        let mut fns = an.all_functions();
        let mut items: Vec<Item> = Vec::new();
        for (it, _) in &an.reached {
            if !items.contains(it) {
                items.push(it.clone());
            }
        }
        for it in &items {
            let body = &world.bodies[it];
            for g in body.graph_ids() {
                let f = FnRef::Graph(it.clone(), g);
                if !fns.contains(&f) {
                    fns.push(f);
                }
            }
            for node in &body.nodes {
                if let NodeKind::Const(v @ (Value::Graph(_) | Value::Global(_) | Value::Prim(_))) =
                    &node.kind
                {
                    if let AV::Funcs(fs) = crate::absint::const_value(world, it, v) {
                        for f in fs {
                            if !fns.contains(&f) {
                                fns.push(f);
                            }
                        }
                    }
                }
            }
        }
        // Union-find.
        let mut parent: Vec<usize> = (0..fns.len()).collect();
        fn find(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        let pos: HashMap<FnRef, usize> = fns
            .iter()
            .enumerate()
            .map(|(i, f)| (f.clone(), i))
            .collect();
        for set in an.function_sets() {
            let ids: Vec<usize> = set.iter().filter_map(|f| pos.get(f).copied()).collect();
            for w in ids.windows(2) {
                let (a, b) = (find(&mut parent, w[0]), find(&mut parent, w[1]));
                if a != b {
                    parent[a.max(b)] = a.min(b);
                }
            }
        }
        let mut class_of_root: HashMap<usize, usize> = HashMap::new();
        let mut members: Vec<Vec<FnRef>> = Vec::new();
        let mut index = HashMap::new();
        for (i, f) in fns.iter().enumerate() {
            let r = find(&mut parent, i);
            let c = *class_of_root.entry(r).or_insert_with(|| {
                members.push(Vec::new());
                members.len() - 1
            });
            members[c].push(f.clone());
            index.insert(f.clone(), c);
        }
        let mut envs = Envs {
            index,
            layouts: vec![Vec::new(); members.len()],
            members,
            fvs: RefCell::new(HashMap::new()),
        };
        let touched = envs.touched_weights(world, an, weights);
        // Layouts: grow until stable (a closure slot carries a gradient once its
        // own class's layout is non-empty).
        loop {
            let mut changed = false;
            for (c, touched) in touched.iter().enumerate() {
                let mut slots: Vec<Slot> = Vec::new();
                for m in envs.members[c].clone() {
                    if let FnRef::Graph(it, g) = &m {
                        for v in envs.fvs(world, it, *g) {
                            let kind = envs.kind(&an.value(world, it, v));
                            let slot = Slot::Fv(it.clone(), v);
                            if envs.carries(&kind) && !slots.contains(&slot) {
                                slots.push(slot);
                            }
                        }
                    }
                }
                for w in weights {
                    if touched.contains(w) {
                        slots.push(Slot::Weight(w.clone()));
                    }
                }
                if slots != envs.layouts[c] {
                    envs.layouts[c] = slots;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        envs
    }

    /// The differentiated weights each class may touch.
    fn touched_weights(
        &self,
        world: &World,
        an: &Analysis,
        weights: &[String],
    ) -> Vec<Vec<String>> {
        let n = self.members.len();
        let mut touched: Vec<Vec<String>> = vec![Vec::new(); n];
        // Direct uses, and the classes each class's members call or make.
        let mut uses: Vec<Vec<usize>> = vec![Vec::new(); n];
        for c in 0..n {
            for m in &self.members[c] {
                let FnRef::Graph(it, g) = m else { continue };
                let Some(body) = world.body(it) else { continue };
                let graph = body.graph(*g);
                let mut inputs: Vec<NodeId> = graph
                    .nodes
                    .iter()
                    .flat_map(|&n| body.inputs(n).iter().copied())
                    .collect();
                inputs.extend(graph.output);
                for &node in &graph.nodes {
                    let Some(&callee) = body.inputs(node).first() else {
                        continue;
                    };
                    if !matches!(body.node(callee).kind, NodeKind::Const(Value::Prim(_))) {
                        let mut fs = Vec::new();
                        an.value(world, it, callee).functions(&mut fs);
                        for f in fs {
                            if let Some(&d) = self.index.get(&f) {
                                uses[c].push(d);
                            }
                        }
                    }
                }
                for i in inputs {
                    match &body.node(i).kind {
                        NodeKind::Weight(w) if weights.contains(w) && !touched[c].contains(w) => {
                            touched[c].push(w.clone());
                        }
                        NodeKind::Const(v @ (Value::Graph(_) | Value::Global(_))) => {
                            if let AV::Funcs(fs) = crate::absint::const_value(world, it, v) {
                                for f in fs {
                                    if let Some(&d) = self.index.get(&f) {
                                        uses[c].push(d);
                                    }
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        loop {
            let mut changed = false;
            for c in 0..n {
                for d in uses[c].clone() {
                    for w in touched[d].clone() {
                        if !touched[c].contains(&w) {
                            touched[c].push(w);
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        touched
    }

    /// Captured values of graph `g` of `item` (see [`closure_fvs`]), memoised.
    pub fn fvs(&self, world: &World, item: &Item, g: GraphId) -> Vec<NodeId> {
        let key = (item.clone(), g);
        if let Some(v) = self.fvs.borrow().get(&key) {
            return v.clone();
        }
        let v = world
            .body(item)
            .map(|b| closure_fvs(b, g))
            .unwrap_or_default();
        self.fvs.borrow_mut().insert(key, v.clone());
        v
    }

    pub fn class_of(&self, f: &FnRef) -> Option<usize> {
        self.index.get(f).copied()
    }

    pub fn layout(&self, class: usize) -> &[Slot] {
        &self.layouts[class]
    }

    /// The layout of a function's environment (empty for one never seen).
    pub fn layout_of(&self, f: &FnRef) -> &[Slot] {
        match self.class_of(f) {
            Some(c) => &self.layouts[c],
            None => &[],
        }
    }

    pub fn kind(&self, v: &AV) -> Kind {
        match v {
            AV::Bot => Kind::Dead,
            AV::Any => Kind::Unknown,
            AV::Data(AbsVal::Str(_) | AbsVal::None) => Kind::NoneLike,
            AV::Data(d) => match d.dtype() {
                Some(t) if t.is_float() => Kind::Float,
                Some(_) => Kind::Int,
                None => Kind::Unknown,
            },
            AV::Tuple(items) => Kind::Tuple(items.iter().map(|i| self.kind(i)).collect()),
            AV::Funcs(fs) => match fs.first().and_then(|f| self.class_of(f)) {
                Some(c) => Kind::Env(c),
                None => Kind::Unknown,
            },
        }
    }

    /// Whether a value of this kind can have a non-zero sensitivity.
    pub fn carries(&self, kind: &Kind) -> bool {
        match kind {
            Kind::Float | Kind::Unknown => true,
            Kind::Int | Kind::NoneLike | Kind::Dead => false,
            Kind::Tuple(items) => items.iter().any(|k| self.carries(k)),
            Kind::Env(c) => !self.layouts[*c].is_empty(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absint::tests::{run, world};
    use std::sync::Arc;

    fn names(w: &World, layout: &[Slot]) -> Vec<String> {
        layout
            .iter()
            .map(|s| match s {
                Slot::Fv(it, v) => w.bodies[it].node(*v).name.clone().unwrap_or_default(),
                Slot::Weight(n) => format!("weight {n}"),
            })
            .collect()
    }

    #[test]
    fn if_branches_share_one_layout() {
        let w = world(
            "graph f(x: f32[4]) {\n  m = ReduceMean(x, axis=(0,))\n  n = 3\n  \
             r = if m < 0.0 { Square(x) * Cast(n, f32) } else { x * m }\n  return r\n}\n",
        );
        let (item, an) = run(&w, "f");
        let envs = Envs::build(&w, &an, &[]);
        let then = FnRef::Graph(item.clone(), GraphId(1));
        let els = FnRef::Graph(item.clone(), GraphId(2));
        assert_eq!(envs.class_of(&then), envs.class_of(&els));
        // The integer `n` carries no gradient: no slot.
        assert_eq!(names(&w, envs.layout_of(&then)), ["x", "m"]);
        // A top-level graph captures nothing.
        assert!(envs.layout_of(&FnRef::Graph(item, GraphId(0))).is_empty());
    }

    #[test]
    fn weights_touched_through_calls_and_closures() {
        let w = world(
            "param w1: f32[3] = ones\nparam w2: f32[3] = ones\nparam w3: f32[3] = ones\n\
             graph inner(x) { return x * w2 }\n\
             graph outer(x: f32[3]) {\n  graph k(y) { return y * w1 }\n  return k(inner(x))\n}\n",
        );
        let (item, an) = run(&w, "outer");
        let weights = ["w3".to_string(), "w2".to_string(), "w1".to_string()];
        let envs = Envs::build(&w, &an, &weights);
        let outer = envs.layout_of(&FnRef::Graph(item.clone(), GraphId(0)));
        assert_eq!(names(&w, outer), ["weight w2", "weight w1"]);
        let k = envs.layout_of(&FnRef::Graph(item, GraphId(1)));
        assert_eq!(names(&w, k), ["weight w1"]);
        let inner = envs.layout_of(&FnRef::Graph(Arc::from("inner"), GraphId(0)));
        assert_eq!(names(&w, inner), ["weight w2"]);
    }

    #[test]
    fn kinds() {
        let w = world("graph f(x: f32[2], n: i64, s: str) { return ((x, n), s) }\n");
        let (item, an) = run(&w, "f");
        let envs = Envs::build(&w, &an, &[]);
        let k = envs.kind(&an.ret(&item, GraphId(0)));
        assert_eq!(
            k,
            Kind::Tuple(vec![
                Kind::Tuple(vec![Kind::Float, Kind::Int]),
                Kind::NoneLike
            ])
        );
        assert!(envs.carries(&k));
    }
}
