//! Which graphs are written once and which per call: a graph used with
//! different types (or given `none`, a primitive, a tuple with holes) is
//! inlined at each call, with the constants it is called with, so that its
//! `if`s on constants take their branch and its numbers are known.

use super::*;

impl Exporter<'_> {
    /// The inferred value of a node in the entry's specialisation.
    pub(super) fn values(&self, item: usize, n: NodeId) -> Vec<AbsVal> {
        if let NodeKind::Const(v) = &self.body(item).node(n).kind {
            return vec![ir::print_ms::const_abstract(v)];
        }
        let name = &self.items[item].0;
        let entry = &self.entry_result;
        let own = if item == 0 {
            entry.node_values.get(&n)
        } else {
            entry.other_values.get(name).and_then(|m| m.get(&n))
        };
        let mut values = match own {
            Some(v) if !v.is_empty() => v.clone(),
            // A graph called through its declared signature: its own check.
            _ => self.analysis.values_of(name, n),
        };
        // `Any` beside known values is a recursive graph's first guess, made
        // before its fixpoint knew better.
        if values.iter().any(|v| !matches!(v, AbsVal::Any)) {
            values.retain(|v| !matches!(v, AbsVal::Any));
        }
        values
    }

    /// The node's type when every specialisation agrees on it.
    pub(super) fn abs(&self, item: usize, n: NodeId) -> Option<AbsVal> {
        // Functions are one type in MindIR: the backpropagators a
        // recursive graph's gradient returns from its two branches are
        // different closures of one type.
        fn erased(v: &AbsVal) -> AbsVal {
            match v {
                AbsVal::Func(_) => AbsVal::Func(0),
                AbsVal::Tuple(items) => AbsVal::Tuple(items.iter().map(erased).collect()),
                other => other.widen(),
            }
        }
        let values = self.values(item, n);
        let first = erased(values.first()?);
        if values.iter().any(|v| erased(v) != first) {
            return None;
        }
        let mut it = values.iter();
        let head = it.next()?.clone();
        it.try_fold(head.clone(), |acc, v| acc.join(v))
            .or(Some(head))
    }

    /// The node's types joined over the specialisations (dtypes agree even
    /// when shapes differ).
    pub(super) fn joined(&self, item: usize, n: NodeId) -> Option<AbsVal> {
        let values = self.values(item, n);
        let mut it = values.iter();
        let first = it.next()?.clone();
        it.try_fold(first, |acc, v| acc.join(v))
    }

    /// Whether graph `k` (or a graph nested in it) is used with different
    /// types: MindIR needs one graph per specialisation.
    pub(super) fn ambiguous(&self, k: GKey) -> bool {
        let body = self.body(k.item);
        body.graph_ids()
            .filter(|&g| body.is_within(g, k.graph))
            .any(|g| {
                let graph = body.graph(g);
                graph
                    .params
                    .iter()
                    .chain(&graph.nodes)
                    .any(|&n| self.abs(k.item, n).is_none() && self.values(k.item, n).len() > 1)
            })
    }

    /// Whether graph `k` takes `none`, strings, dtypes or values of unknown
    /// type, which MindSpore cannot pass between graphs (its own front end
    /// folds them away): such calls are inlined.
    pub(super) fn takes_non_values(&self, k: GKey) -> bool {
        fn plain(v: &AbsVal) -> bool {
            match v {
                AbsVal::Tensor { .. } | AbsVal::Scalar { .. } | AbsVal::Func(_) => true,
                AbsVal::Tuple(items) => items.iter().all(plain),
                AbsVal::None | AbsVal::Str(_) | AbsVal::Any | AbsVal::Monad => false,
            }
        }
        let body = self.body(k.item);
        body.graph(k.graph)
            .params
            .iter()
            .any(|&p| self.values(k.item, p).iter().any(|v| !plain(v)))
    }

    /// Whether the value of call `n` is a tuple holding `none` or an empty
    /// tuple: MindSpore's backend cannot take such an output from a graph it
    /// calls (it flattens the tuple without them, then indexes past its end:
    /// "Parameters size:2 out of range"), so such calls are inlined. An
    /// expansion's branches return `()` for absent operands.
    pub(super) fn returns_holes(&self, item: usize, n: NodeId) -> bool {
        fn hole(v: &AbsVal) -> bool {
            match v {
                AbsVal::None => true,
                AbsVal::Tuple(items) => items.is_empty() || items.iter().any(hole),
                _ => false,
            }
        }
        self.values(item, n).iter().any(|v| match v {
            AbsVal::Tuple(items) => items.iter().any(hole),
            _ => false,
        })
    }

    /// Whether graph `k` can reach itself through the graphs it uses.
    pub(super) fn recursive(&self, k: GKey) -> bool {
        let mut seen = std::collections::HashSet::new();
        let mut work = vec![k];
        while let Some(x) = work.pop() {
            let body = self.body(x.item);
            for &n in &body.graph(x.graph).nodes {
                for &i in body.inputs(n) {
                    if let NodeKind::Const(c) = &body.node(i).kind {
                        if let Some(h) = self.graph_of(x.item, c) {
                            if h == k {
                                return true;
                            }
                            if seen.insert(h) {
                                work.push(h);
                            }
                        }
                    }
                }
            }
            // Nested graphs run as part of their parent.
            for child in body.children(x.graph) {
                let c = GKey {
                    item: x.item,
                    graph: child,
                };
                if seen.insert(c) {
                    work.push(c);
                }
            }
        }
        false
    }

    /// `h`'s body written into `g` in place of a call (`args` its arguments).
    pub(super) fn inline(
        &mut self,
        g: &mut GraphBuilder,
        h: GKey,
        args: Vec<String>,
        consts: Vec<Option<Value>>,
    ) -> Result<String, ExportError> {
        let body = self.body(h.item);
        let graph = body.graph(h.graph);
        if graph.params.len() != args.len() {
            return Err(ExportError::Unsupported(format!(
                "`{}` takes {} arguments but is given {}",
                self.names[&h],
                graph.params.len(),
                args.len()
            )));
        }
        let caller = g.key;
        g.key = h;
        for ((&p, a), c) in graph.params.iter().zip(args).zip(consts) {
            g.names.insert(Val::Node(h.item, p), a);
            match c {
                Some(c) => g.consts.insert(Val::Node(h.item, p), c),
                None => g.consts.remove(&Val::Node(h.item, p)),
            };
        }
        let result = (|| {
            for &n in &graph.nodes {
                self.cnode(g, n)?;
            }
            match graph.output {
                Some(o) => self.operand(g, o, None),
                None => g.constant(self, &Value::None, None),
            }
        })();
        g.key = caller;
        result
    }

    pub(super) fn refuse_ambiguous(&self, h: GKey) -> Result<(), ExportError> {
        if self.ambiguous(h) {
            return Err(ExportError::Unsupported(format!(
                "graph `{}` is used with different types (shapes); MindIR needs one graph per \
                 specialisation, and export only inlines direct calls of graphs that are not \
                 recursive",
                self.names[&h]
            )));
        }
        Ok(())
    }

    /// The constant number node `n` of `g`'s graph is: a literal, or a
    /// parameter of an inlined graph given one.
    pub(super) fn const_number(&self, g: &GraphBuilder, n: NodeId) -> Option<Value> {
        match &self.body(g.key.item).node(n).kind {
            NodeKind::Const(v @ Value::Scalar { .. }) => Some(v.clone()),
            _ => self
                .val(g.key.item, n)
                .and_then(|v| g.consts.get(&v).cloned()),
        }
    }

    /// The branch `Switch` node `n` takes when its condition is a constant
    /// here (`if nesterov` in a graph inlined with `nesterov` = `false`): the
    /// switch is not written, and a call of it calls the branch. Analysis
    /// widens the constants a graph is called with, so only the inlined
    /// graph knows them.
    pub(super) fn known_switch(&self, g: &GraphBuilder, n: NodeId) -> Option<NodeId> {
        let body = self.body(g.key.item);
        if body.called_prim(n).is_none_or(|p| p.name != "Switch") {
            return None;
        }
        let [cond, on_true, on_false] = body.inputs(n)[1..] else {
            return None;
        };
        match self.const_number(g, cond)? {
            Value::Scalar {
                value: ir::ScalarConst::Bool(b),
                ..
            } => Some(if b { on_true } else { on_false }),
            _ => None,
        }
    }

    /// The primitive node `n` of `g`'s graph is: a literal one (`ReLU`
    /// passed as a value), or a parameter of an inlined graph given one.
    pub(super) fn given_prim(&self, g: &GraphBuilder, n: NodeId) -> Option<Value> {
        match &self.body(g.key.item).node(n).kind {
            NodeKind::Const(v @ Value::Prim(_)) => Some(v.clone()),
            _ => self
                .val(g.key.item, n)
                .and_then(|v| g.consts.get(&v).cloned())
                .filter(|v| matches!(v, Value::Prim(_))),
        }
    }

    /// What `g` passes for a value a graph captures: its node, or the
    /// number it is known to be (see `write_cnode`); `None` if `g` has neither.
    pub(super) fn captured(
        &mut self,
        g: &mut GraphBuilder,
        v: &Val,
    ) -> Result<Option<String>, ExportError> {
        if let Some(name) = g.names.get(v) {
            return Ok(Some(name.clone()));
        }
        match g.consts.get(v).cloned() {
            Some(c) => g.constant(self, &c, None).map(Some),
            None => Ok(None),
        }
    }
}
