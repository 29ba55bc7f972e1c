//! Side effects in imported graphs (spec §11): MindIR orders weight updates
//! with `UpdateState` chains, which the value-following translation would
//! skip. Here they are found, so that every update becomes a statement of the
//! DSL (in the chain's order, which is the node order MindSpore writes) and
//! reads of a weight that is updated are bound where MindSpore reads it
//! (`w0 = Load(w)`), never dropped or moved past an update.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::{Callee, Const, Ref, Resolved, Translator};

/// Primitives that only carry the effect order, or data, and are never roots.
const PLUMBING: &[&str] = &[
    "Load",
    "UpdateState",
    "MakeTuple",
    "make_tuple",
    "Depend",
    "depend",
    "TupleGetItem",
    "tuple_getitem",
];

/// What the effect analysis found.
#[derive(Debug, Default, Clone)]
pub(super) struct Effects {
    /// Graphs that update weights, directly or through the graphs they call.
    pub graphs: HashSet<usize>,
    /// Per graph: the nodes that are updates (or calls of graphs with them),
    /// which must run even though no value uses them.
    pub roots: Vec<BTreeSet<usize>>,
    /// Weights some update writes.
    pub written: HashSet<usize>,
}

/// The registry's name of MindSpore primitive `bare`.
fn registry_name(bare: &str) -> &str {
    ops::mindspore::registry_name(bare)
}

impl Translator<'_> {
    /// The registry primitive a node calls, if it calls one by name.
    fn prim_name(&self, g: usize, n: usize) -> Option<&str> {
        match &self.m.graphs[g].nodes[n].callee {
            Callee::Prim { name, .. } => Some(name.strip_prefix("PrimFunc_").unwrap_or(name)),
            Callee::Value(_) => None,
        }
    }

    /// The graphs a node calls (a graph value, or either branch of an `if`).
    fn callees(&self, g: usize, n: usize) -> Vec<usize> {
        if let Some(sc) = self.switch_call(g, n) {
            return vec![sc.then.0, sc.els.0];
        }
        match &self.m.graphs[g].nodes[n].callee {
            Callee::Value(c) => match self.resolve(c) {
                Resolved::Graph(h) => vec![h],
                _ => Vec::new(),
            },
            Callee::Prim { .. } => Vec::new(),
        }
    }

    /// Whether node `n` of graph `g` updates weights itself.
    fn is_update(&self, g: usize, n: usize) -> bool {
        self.prim_name(g, n)
            .is_some_and(|b| ops::effect_of(registry_name(b)).is_some())
    }

    /// The nodes an `UpdateState` of graph `g` orders (its inputs after the
    /// token, through tuples), which are not plumbing and not a registry
    /// primitive without effects: updates the registry lacks are kept, so
    /// that translating them fails loudly rather than dropping them.
    fn ordered_unknowns(&self, g: usize) -> Vec<usize> {
        let graph = &self.m.graphs[g];
        let mut out = Vec::new();
        for (n, node) in graph.nodes.iter().enumerate() {
            if self.prim_name(g, n) != Some("UpdateState") {
                continue;
            }
            let mut work: Vec<Ref> = node.args.iter().skip(1).cloned().collect();
            while let Some(r) = work.pop() {
                let Ref::Node(h, k) = r else { continue };
                if h != g {
                    continue;
                }
                match self.prim_name(h, k) {
                    Some("MakeTuple" | "make_tuple") => {
                        work.extend(self.m.graphs[h].nodes[k].args.iter().cloned())
                    }
                    Some(p) if PLUMBING.contains(&p) => {}
                    Some(p) if ops::lookup(registry_name(p)).is_none() => out.push(k),
                    _ => {}
                }
            }
        }
        out
    }

    /// Finds the updates of the module and the graphs that make them.
    pub(super) fn find_effects(&self) -> Effects {
        let m = self.m;
        let mut fx = Effects {
            roots: vec![BTreeSet::new(); m.graphs.len()],
            ..Effects::default()
        };
        for g in 0..m.graphs.len() {
            for n in 0..m.graphs[g].nodes.len() {
                if self.is_update(g, n) {
                    fx.graphs.insert(g);
                    fx.roots[g].insert(n);
                    let name = registry_name(self.prim_name(g, n).unwrap_or_default());
                    let writes = ops::effect_of(name).map_or(&[][..], |e| e.writes);
                    for &i in writes {
                        if let Some(Resolved::Weight(w)) =
                            m.graphs[g].nodes[n].args.get(i).map(|a| self.resolve(a))
                        {
                            fx.written.insert(w);
                        }
                    }
                }
            }
            for k in self.ordered_unknowns(g) {
                fx.roots[g].insert(k);
            }
        }
        // Calls of graphs with effects have effects.
        loop {
            let mut changed = false;
            for g in 0..m.graphs.len() {
                for n in 0..m.graphs[g].nodes.len() {
                    if fx.roots[g].contains(&n) {
                        continue;
                    }
                    if self.callees(g, n).iter().any(|h| fx.graphs.contains(h)) {
                        fx.roots[g].insert(n);
                        fx.graphs.insert(g);
                        changed = true;
                    }
                }
            }
            if !changed {
                return fx;
            }
        }
    }

    /// Whether node `n` of graph `g` is a `Load` of a weight that some update
    /// writes, in a graph with effects: it is then a statement of its own.
    pub(super) fn is_snapshot_load(&self, fx: &Effects, g: usize, n: usize) -> bool {
        if !fx.graphs.contains(&g) || self.prim_name(g, n) != Some("Load") {
            return false;
        }
        match self.m.graphs[g].nodes[n]
            .args
            .first()
            .map(|a| self.resolve(a))
        {
            Some(Resolved::Weight(w)) => fx.written.contains(&w),
            _ => false,
        }
    }

    /// Drops a trailing state token from a primitive's arguments.
    pub(super) fn without_monad<'a>(&self, args: &'a [Ref]) -> &'a [Ref] {
        match args.split_last() {
            Some((last, rest)) if self.resolve(last) == Resolved::Const(Const::Monad) => rest,
            _ => args,
        }
    }

    /// Finds the graph parameters that only ever receive the state token
    /// (MindSpore passes `u` into loop graphs that read weights): the largest
    /// set such that every call, `if` and partial application passes them a
    /// token or another such parameter.
    pub(super) fn find_monad_params(&mut self, live_nodes: &[BTreeSet<usize>]) {
        let m = self.m;
        self.find_called_partials(live_nodes);
        let mut sites: HashMap<usize, Vec<Vec<Option<Ref>>>> = HashMap::new();
        for (g, nodes) in live_nodes.iter().enumerate() {
            for &n in nodes {
                let node = &m.graphs[g].nodes[n];
                if let Some(sc) = self.switch_call(g, n) {
                    for (h, bound) in [&sc.then, &sc.els] {
                        let all = bound.iter().chain(&node.args).cloned().map(Some);
                        sites.entry(*h).or_default().push(all.collect());
                    }
                    continue;
                }
                match &node.callee {
                    Callee::Value(c) => {
                        if let Resolved::Graph(h) = self.resolve(c) {
                            let args = node.args.iter().cloned().map(Some).collect();
                            sites.entry(h).or_default().push(args);
                        } else if let Some((h, bound)) = self.called_partial(c) {
                            // A call of a partial application: the graph gets
                            // the bound arguments, then the call's.
                            let args = bound.iter().chain(&node.args).cloned().map(Some);
                            sites.entry(h).or_default().push(args.collect());
                        }
                    }
                    Callee::Prim { name, .. }
                        if name.trim_start_matches("PrimFunc_") == "Partial"
                            && self.called_partials.contains(&(g, n)) =>
                    {
                        // Only called: its calls above are its sites.
                    }
                    Callee::Prim { name, .. }
                        if name.trim_start_matches("PrimFunc_") == "Partial" =>
                    {
                        if let Some((f, bound)) = node.args.split_first() {
                            if let Resolved::Graph(h) = self.resolve(f) {
                                let mut args: Vec<Option<Ref>> =
                                    bound.iter().cloned().map(Some).collect();
                                args.resize(m.graphs[h].params.len().max(args.len()), None);
                                sites.entry(h).or_default().push(args);
                            }
                        }
                    }
                    Callee::Prim { .. } => {}
                }
            }
        }
        let mut candidates: HashSet<(usize, usize)> = HashSet::new();
        for (&h, list) in &sites {
            if h == m.entry {
                continue;
            }
            for i in 0..m.graphs[h].params.len() {
                if list.iter().all(|args| matches!(args.get(i), Some(Some(_)))) {
                    candidates.insert((h, i));
                }
            }
        }
        loop {
            self.monad_params = candidates.clone();
            let before = candidates.len();
            candidates.retain(|&(h, i)| {
                sites[&h].iter().all(|args| match args.get(i) {
                    Some(Some(r)) => self.resolve(r) == Resolved::Const(Const::Monad),
                    _ => false,
                })
            });
            if candidates.len() == before {
                self.monad_params = candidates;
                return;
            }
        }
    }

    /// The partial applications of a graph (`Partial(@g, a, ...)`) that are
    /// only ever called (never passed on, returned or captured): their calls
    /// are all the places the graph's parameters get values.
    fn find_called_partials(&mut self, live_nodes: &[BTreeSet<usize>]) {
        let m = self.m;
        let mut called = HashSet::new();
        let mut escaping = HashSet::new();
        for (g, nodes) in live_nodes.iter().enumerate() {
            for &n in nodes {
                let node = &m.graphs[g].nodes[n];
                if let Callee::Value(c) = &node.callee {
                    if let Resolved::Node(h, k) = self.resolve(c) {
                        called.insert((h, k));
                    }
                }
                for a in &node.args {
                    if let Resolved::Node(h, k) = self.resolve(a) {
                        escaping.insert((h, k));
                    }
                }
            }
            if let Resolved::Node(h, k) = self.resolve(&m.graphs[g].output) {
                escaping.insert((h, k));
            }
        }
        self.called_partials = called
            .into_iter()
            .filter(|&(g, n)| {
                !escaping.contains(&(g, n))
                    && self.prim_name(g, n) == Some("Partial")
                    && m.graphs[g].nodes[n]
                        .args
                        .first()
                        .is_some_and(|f| matches!(self.resolve(f), Resolved::Graph(_)))
            })
            .collect();
    }

    /// When `callee` is a partial application that is only called: its graph
    /// and bound arguments.
    pub(super) fn called_partial(&self, callee: &Ref) -> Option<(usize, &[Ref])> {
        let Resolved::Node(g, n) = self.resolve(callee) else {
            return None;
        };
        if !self.called_partials.contains(&(g, n)) {
            return None;
        }
        let (f, bound) = self.m.graphs[g].nodes[n].args.split_first()?;
        match self.resolve(f) {
            Resolved::Graph(h) => Some((h, bound)),
            _ => None,
        }
    }

    /// When `callee` is the backpropagator `J(f)(args)[1]`: the number of
    /// `f`'s parameters (the gradients it returns after the environment).
    pub(super) fn j_backprop_arity(&self, callee: &Ref) -> Option<usize> {
        let Resolved::Node(h, k) = self.resolve(callee) else {
            return None;
        };
        let get = &self.m.graphs[h].nodes[k];
        if !matches!(self.prim_name(h, k), Some("TupleGetItem" | "tuple_getitem")) {
            return None;
        }
        let [t, i] = get.args.as_slice() else {
            return None;
        };
        if !matches!(self.resolve(i), Resolved::Const(Const::Int(1, _))) {
            return None;
        }
        let Resolved::Node(h2, k2) = self.resolve(t) else {
            return None;
        };
        let Callee::Value(jc) = &self.m.graphs[h2].nodes[k2].callee else {
            return None;
        };
        let Resolved::Node(h3, k3) = self.resolve(jc) else {
            return None;
        };
        if self.prim_name(h3, k3) != Some("J") {
            return None;
        }
        let f = self.m.graphs[h3].nodes[k3].args.first()?;
        match self.resolve(f) {
            Resolved::Graph(fg) => Some(self.m.graphs[fg].params.len()),
            _ => None,
        }
    }
}
