//! The backward half of a graph's J transformation: sensitivities flow
//! from the output back through each node's gradient rule (primitives,
//! calls of graphs and closures, `Switch`), summed where a value is used
//! more than once.

use super::*;

impl BodyJ<'_, '_> {
    pub(super) fn backward(&mut self, g: GraphId) -> Result<(), AdError> {
        let jg = self.gmap[g.0 as usize];
        let sg = self.src.graph(g).clone();
        let bg = self.dst.add_graph(
            format!("bprop_{}", self.dst.graph(jg).name.trim_start_matches("J_")),
            Some(jg),
            GraphOrigin::Generated,
        );
        let dout = self.dst.add_param(bg, "dout", None);
        let mut st = Back {
            g,
            bg,
            sens: HashMap::new(),
            wsens: HashMap::new(),
        };
        let out = sg
            .output
            .ok_or_else(|| AdError(format!("graph `{}` has no output", sg.name)))?;
        let custom = (g == self.src.root())
            .then(|| self.gen.custom.get(&self.item).cloned())
            .flatten();
        let own_rule = custom.is_some();
        let mut plain_out = None;
        if let Some((rule, caps)) = custom {
            // The graph's own backward rule: bprop(x..., out, dout, captured...)
            // returns the parameters' sensitivities.
            let mut args: Vec<NodeId> = sg.params.iter().map(|p| self.fwd[p]).collect();
            // The forward calls the graph itself: its `J` form's values
            // (what its backward would keep) are dead, and go.
            let me = self
                .dst
                .add_const(Value::Global(self.item.to_string()), None);
            let fo = call(&mut self.dst, jg, me, &args);
            plain_out = Some(fo);
            args.push(fo);
            args.push(dout);
            for c in &caps {
                args.push(self.fwd_input(*c)?);
            }
            let f = self.dst.add_const(Value::Global(rule.to_string()), None);
            let r = call(&mut self.dst, bg, f, &args);
            for (i, &p) in sg.params.iter().enumerate() {
                let d = tuple_get(&mut self.dst, bg, r, i);
                st.sens.insert(p, Sens::Node(d));
            }
        } else {
            self.contribute(&mut st, out, Sens::Node(dout))?;
        }
        // With its own rule, the body's primitives are not differentiated.
        let steps = if own_rule { Vec::new() } else { self.order(g) };
        for step in steps.into_iter().rev() {
            match step {
                Step::Node(n) => {
                    // The nodes a node's backward step adds carry its
                    // span (an error about one points at the operation).
                    let before = self.dst.nodes.len();
                    self.back_node(&mut st, n)?;
                    if let Some(span) = self.src.node(n).span {
                        for node in &mut self.dst.nodes[before..] {
                            if node.span.is_none() && matches!(node.kind, NodeKind::Apply(_)) {
                                node.span = Some(span);
                            }
                        }
                    }
                }
                Step::Const(c) => {
                    if let Some(s) = st.sens.remove(&c) {
                        let f = self.const_fn(c).expect("a function constant");
                        self.open(&mut st, &[f], &s)?;
                    }
                }
            }
        }
        // The result: (env, d_params...).
        let me = FnRef::Graph(self.item.clone(), g);
        let env = self.env_tuple(&mut st, &me)?;
        let mut outs = vec![env];
        for &p in &sg.params {
            let k = self.kind(p);
            let s = st.sens.remove(&p).unwrap_or(Sens::Zero);
            let fp = self.fwd[&p];
            outs.push(self.materialize(&mut st, &k, s, &FwdRef::Node(fp))?);
        }
        let ret = make_tuple(&mut self.dst, bg, &outs);
        self.dst.graph_mut(bg).output = Some(ret);
        let fo = match plain_out {
            Some(fo) => fo,
            None => self.fwd_input(out)?,
        };
        let bc = self.dst.add_const(Value::Graph(bg), None);
        let r = make_tuple(&mut self.dst, jg, &[fo, bc]);
        self.dst.graph_mut(jg).output = Some(r);
        Ok(())
    }

    pub(super) fn const_fn(&self, c: NodeId) -> Option<FnRef> {
        match &self.src.node(c).kind {
            NodeKind::Const(v @ (Value::Graph(_) | Value::Global(_) | Value::Prim(_))) => {
                match crate::absint::const_value(self.gen.world, &self.item, v) {
                    AV::Funcs(fs) => fs.into_iter().next(),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The environment of graph `me` in its class's layout, from the
    /// sensitivities accumulated for what it captures and the weights.
    pub(super) fn env_tuple(&mut self, st: &mut Back, me: &FnRef) -> Result<NodeId, AdError> {
        let layout = self.gen.envs.layout_of(me).to_vec();
        let mut items = Vec::new();
        for slot in layout {
            let node = match slot {
                Slot::Fv(it, v) => {
                    if it != self.item || !visible(&self.src, v, st.g) {
                        // A value another member of the class captures, which
                        // this graph cannot see (and never contributes to).
                        let k = self.gen.kind_of(&it, v);
                        let a = self.gen.an.value(self.gen.world, &it, v);
                        let kinds = self.gen.world_kinds();
                        items.push(placeholder(
                            &mut self.dst,
                            st.bg,
                            self.gen.envs,
                            &kinds,
                            &k,
                            &a,
                            0,
                        )?);
                        continue;
                    }
                    let k = self.kind(v);
                    let s = st.sens.remove(&v).unwrap_or(Sens::Zero);
                    let fv = self.fwd[&v];
                    self.materialize(st, &k, s, &FwdRef::Node(fv))?
                }
                Slot::Weight(w) => {
                    let k = self.gen.weight_kind(&w);
                    let s = st.wsens.remove(&w).unwrap_or(Sens::Zero);
                    self.materialize(st, &k, s, &FwdRef::Weight(w))?
                }
            };
            items.push(node);
        }
        Ok(make_tuple(&mut self.dst, st.bg, &items))
    }

    pub(super) fn fwd_ref(&mut self, st: &Back, r: &FwdRef) -> NodeId {
        match r {
            FwdRef::Node(n) => *n,
            FwdRef::Item(t, i) => {
                let t = self.fwd_ref(st, t);
                tuple_get(&mut self.dst, st.bg, t, *i)
            }
            FwdRef::Weight(w) => self.weight_node(w),
        }
    }

    /// A sensitivity as one node (zeros built like the forward value).
    pub(super) fn materialize(
        &mut self,
        st: &mut Back,
        kind: &Kind,
        s: Sens,
        fwd: &FwdRef,
    ) -> Result<NodeId, AdError> {
        match s {
            Sens::Node(n) => Ok(n),
            Sens::Zero => self.zero(st, kind, fwd),
            Sens::Tuple(items) => {
                let kinds = self.item_kinds(kind, items.len());
                let mut nodes = Vec::new();
                for (i, (s, k)) in items.into_iter().zip(kinds).enumerate() {
                    let r = FwdRef::Item(Box::new(fwd.clone()), i);
                    nodes.push(self.materialize(st, &k, s, &r)?);
                }
                Ok(make_tuple(&mut self.dst, st.bg, &nodes))
            }
        }
    }

    pub(super) fn zero(
        &mut self,
        st: &mut Back,
        kind: &Kind,
        fwd: &FwdRef,
    ) -> Result<NodeId, AdError> {
        self.zero_at(st, kind, fwd, 0)
    }

    pub(super) fn zero_at(
        &mut self,
        st: &mut Back,
        kind: &Kind,
        fwd: &FwdRef,
        depth: usize,
    ) -> Result<NodeId, AdError> {
        if depth > ENV_ZERO_DEPTH {
            // See `ENV_ZERO_DEPTH`: a recursive environment's zero.
            return Ok(self.dst.add_const(Value::None, None));
        }
        match kind {
            Kind::NoneLike => Ok(self.dst.add_const(Value::None, None)),
            Kind::Tuple(items) => {
                let mut nodes = Vec::new();
                for (i, k) in items.iter().enumerate() {
                    let r = FwdRef::Item(Box::new(fwd.clone()), i);
                    nodes.push(self.zero_at(st, k, &r, depth + 1)?);
                }
                Ok(make_tuple(&mut self.dst, st.bg, &nodes))
            }
            Kind::Env(c) => {
                let layout = self.gen.envs.layout(*c).to_vec();
                let mut nodes = Vec::new();
                for slot in layout {
                    nodes.push(match slot {
                        Slot::Fv(it, v) => {
                            if it != self.item || !visible(&self.src, v, st.g) {
                                let k = self.gen.kind_of(&it, v);
                                let a = self.gen.an.value(self.gen.world, &it, v);
                                let kinds = self.gen.world_kinds();
                                placeholder(
                                    &mut self.dst,
                                    st.bg,
                                    self.gen.envs,
                                    &kinds,
                                    &k,
                                    &a,
                                    depth + 1,
                                )?
                            } else {
                                let k = self.kind(v);
                                let fv = self.fwd[&v];
                                self.zero_at(st, &k, &FwdRef::Node(fv), depth + 1)?
                            }
                        }
                        Slot::Weight(w) => {
                            let wn = self.weight_node(&w);
                            prim(&mut self.dst, st.bg, "ZerosLike", &[wn])
                        }
                    });
                }
                Ok(make_tuple(&mut self.dst, st.bg, &nodes))
            }
            _ => {
                let x = self.fwd_ref(st, fwd);
                Ok(prim(&mut self.dst, st.bg, "ZerosLike", &[x]))
            }
        }
    }

    /// The kinds of the items of a tuple-like sensitivity.
    pub(super) fn item_kinds(&self, kind: &Kind, n: usize) -> Vec<Kind> {
        match kind {
            Kind::Tuple(items) if items.len() == n => items.clone(),
            Kind::Env(c) => self
                .gen
                .envs
                .layout(*c)
                .iter()
                .map(|s| match s {
                    Slot::Fv(it, v) => self.gen.kind_of(it, *v),
                    Slot::Weight(w) => self.gen.weight_kind(w),
                })
                .collect(),
            _ => vec![Kind::Unknown; n],
        }
    }

    pub(super) fn width(&self, kind: &Kind) -> Option<usize> {
        match kind {
            Kind::Tuple(items) => Some(items.len()),
            Kind::Env(c) => Some(self.gen.envs.layout(*c).len()),
            _ => None,
        }
    }

    /// Item `i` of a sensitivity.
    pub(super) fn item_of(&mut self, st: &Back, s: &Sens, i: usize) -> Sens {
        match s {
            Sens::Zero => Sens::Zero,
            Sens::Tuple(items) => items.get(i).cloned().unwrap_or(Sens::Zero),
            Sens::Node(n) => Sens::Node(tuple_get(&mut self.dst, st.bg, *n, i)),
        }
    }

    /// The sum of two sensitivities of a value of this kind.
    pub(super) fn add(
        &mut self,
        st: &Back,
        kind: &Kind,
        a: Sens,
        b: Sens,
    ) -> Result<Sens, AdError> {
        Ok(match (a, b) {
            (Sens::Zero, x) | (x, Sens::Zero) => x,
            (Sens::Node(x), Sens::Node(y)) => match self.width(kind) {
                Some(n) => {
                    let a = Sens::Tuple(
                        (0..n)
                            .map(|i| self.item_of(st, &Sens::Node(x), i))
                            .collect(),
                    );
                    let b = Sens::Tuple(
                        (0..n)
                            .map(|i| self.item_of(st, &Sens::Node(y), i))
                            .collect(),
                    );
                    self.add(st, kind, a, b)?
                }
                None => Sens::Node(prim(&mut self.dst, st.bg, "Add", &[x, y])),
            },
            (Sens::Tuple(xs), Sens::Tuple(ys)) => {
                if xs.len() != ys.len() {
                    return Err(AdError(
                        "internal: adding sensitivities of tuples of different lengths".into(),
                    ));
                }
                let kinds = self.item_kinds(kind, xs.len());
                let mut out = Vec::new();
                for ((x, y), k) in xs.into_iter().zip(ys).zip(kinds) {
                    out.push(self.add(st, &k, x, y)?);
                }
                Sens::Tuple(out)
            }
            (Sens::Node(x), Sens::Tuple(ys)) | (Sens::Tuple(ys), Sens::Node(x)) => {
                let xs = Sens::Tuple(
                    (0..ys.len())
                        .map(|i| self.item_of(st, &Sens::Node(x), i))
                        .collect(),
                );
                self.add(st, kind, xs, Sens::Tuple(ys))?
            }
        })
    }

    /// Whether a sensitivity for input `m` would be kept.
    pub(super) fn wants(&self, m: NodeId) -> bool {
        match &self.src.node(m).kind {
            NodeKind::Const(Value::Graph(_) | Value::Global(_) | Value::Prim(_)) => {
                self.carries(&self.kind(m))
            }
            NodeKind::Const(_) => false,
            NodeKind::Weight(w) => self.gen.weights.contains(w),
            _ => self.carries(&self.kind(m)),
        }
    }

    /// Adds `s` to the sensitivity of `m`.
    pub(super) fn contribute(&mut self, st: &mut Back, m: NodeId, s: Sens) -> Result<(), AdError> {
        if matches!(s, Sens::Zero) || !self.wants(m) {
            return Ok(());
        }
        if let NodeKind::Weight(w) = &self.src.node(m).kind {
            let w = w.clone();
            let k = self.gen.weight_kind(&w);
            let old = st.wsens.remove(&w).unwrap_or(Sens::Zero);
            let new = self.add(st, &k, old, s)?;
            st.wsens.insert(w, new);
            return Ok(());
        }
        let k = self.kind(m);
        let old = st.sens.remove(&m).unwrap_or(Sens::Zero);
        let new = self.add(st, &k, old, s)?;
        st.sens.insert(m, new);
        Ok(())
    }

    pub(super) fn contribute_weight(
        &mut self,
        st: &mut Back,
        w: &str,
        s: Sens,
    ) -> Result<(), AdError> {
        if matches!(s, Sens::Zero) || !self.gen.weights.iter().any(|x| x == w) {
            return Ok(());
        }
        let k = self.gen.weight_kind(w);
        let old = st.wsens.remove(w).unwrap_or(Sens::Zero);
        let new = self.add(st, &k, old, s)?;
        st.wsens.insert(w.to_string(), new);
        Ok(())
    }

    /// Adds an environment (of the functions `fs`' class) to the sensitivities
    /// of the values those functions capture, and of the weights.
    pub(super) fn open(&mut self, st: &mut Back, fs: &[FnRef], s: &Sens) -> Result<(), AdError> {
        let layout = self.gen.envs.layout_of(&fs[0]).to_vec();
        let mut captured: Vec<NodeId> = Vec::new();
        for f in fs {
            if let FnRef::Graph(it, h) = f {
                if *it == self.item {
                    captured.extend(self.gen.envs.fvs(self.gen.world, it, *h));
                }
            }
        }
        for (j, slot) in layout.iter().enumerate() {
            match slot {
                Slot::Fv(it, v) if *it == self.item && captured.contains(v) && self.wants(*v) => {
                    let x = self.item_of(st, s, j);
                    self.contribute(st, *v, x)?;
                }
                Slot::Weight(w) => {
                    let x = self.item_of(st, s, j);
                    self.contribute_weight(st, w, x)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    pub(super) fn back_node(&mut self, st: &mut Back, n: NodeId) -> Result<(), AdError> {
        let Some(s) = st.sens.remove(&n) else {
            return Ok(());
        };
        let inputs = self.src.inputs(n).to_vec();
        let args = &inputs[1..];
        let info = self.info[&n].clone();
        match info {
            Info::Inactive => {}
            Info::Structural(name) => match name.as_str() {
                "MakeTuple" => {
                    for (i, &a) in args.iter().enumerate() {
                        if self.wants(a) {
                            let x = self.item_of(st, &s, i);
                            self.contribute(st, a, x)?;
                        }
                    }
                }
                "TupleGetItem" => {
                    let t = args[0];
                    let len = match self.value(t) {
                        AV::Tuple(items) => items.len(),
                        _ => {
                            return Err(AdError(
                                "cannot differentiate indexing a tuple whose length is unknown"
                                    .into(),
                            ))
                        }
                    };
                    let k = self
                        .value(args[1])
                        .const_int()
                        .ok_or_else(|| AdError("a tuple index must be a constant".into()))?;
                    let k = if k < 0 { k + len as i64 } else { k };
                    if !(0..len as i64).contains(&k) {
                        return Err(AdError("a tuple index is out of range".into()));
                    }
                    let mut items = vec![Sens::Zero; len];
                    items[k as usize] = s;
                    self.contribute(st, t, Sens::Tuple(items))?;
                }
                "Depend" | "Load" => self.contribute(st, args[0], s)?,
                "UpdateState" => {}
                "StopGradient" => {}
                "Switch" => self.back_switch(st, n, args, s)?,
                _ => {}
            },
            Info::Prim(p) => self.back_prim(st, n, &p, args, s)?,
            Info::Call { bp } => {
                let k = self.kind(n);
                let fwd = FwdRef::Node(self.fwd[&n]);
                let dout = self.materialize(st, &k, s, &fwd)?;
                let d = call(&mut self.dst, st.bg, bp, &[dout]);
                if self.wants(inputs[0]) {
                    let x = tuple_get(&mut self.dst, st.bg, d, 0);
                    self.contribute(st, inputs[0], Sens::Node(x))?;
                }
                for (i, &a) in args.iter().enumerate() {
                    if self.wants(a) {
                        let x = tuple_get(&mut self.dst, st.bg, d, i + 1);
                        self.contribute(st, a, Sens::Node(x))?;
                    }
                }
            }
        }
        Ok(())
    }

    pub(super) fn back_switch(
        &mut self,
        st: &mut Back,
        n: NodeId,
        args: &[NodeId],
        s: Sens,
    ) -> Result<(), AdError> {
        let (c, a, b) = (args[0], args[1], args[2]);
        let k = self.kind(n);
        if let (Kind::Env(_), Some(fa), Some(fb)) = (&k, self.const_fn(a), self.const_fn(b)) {
            // Both branches are known functions: the environment (of the branch
            // that ran; zeros in the other's slots) opens once over both.
            return self.open(st, &[fa, fb], &s);
        }
        let cond = self.fwd_input(c)?;
        let fwd = FwdRef::Node(self.fwd[&n]);
        let sm = self.materialize(st, &k, s, &fwd)?;
        for (branch, taken) in [(a, true), (b, false)] {
            if !self.wants(branch) {
                continue;
            }
            let kb = self.kind(branch);
            let fb = self.fwd_input(branch)?;
            let z = self.zero(st, &kb, &FwdRef::Node(fb))?;
            let (t, f) = if taken { (sm, z) } else { (z, sm) };
            let sw = prim(&mut self.dst, st.bg, "Switch", &[cond, t, f]);
            self.contribute(st, branch, Sens::Node(sw))?;
        }
        Ok(())
    }

    pub(super) fn back_prim(
        &mut self,
        st: &mut Back,
        n: NodeId,
        p: &PrimRef,
        args: &[NodeId],
        s: Sens,
    ) -> Result<(), AdError> {
        let op = ops::lookup(&p.name)
            .ok_or_else(|| AdError(format!("unknown primitive `{}`", p.name)))?;
        if !args.iter().any(|&a| self.wants(a)) {
            return Ok(());
        }
        let Some(rule) = op.grad else {
            if matches!(
                op.category,
                ops::Category::Internal | ops::Category::Backward
            ) {
                // A helper or backward primitive of gradient rules:
                // differentiating a gradient again.
                return Err(AdError(format!(
                    "`{}` has no gradient rule: differentiating a gradient (higher order) \
                     through it is not supported",
                    p.name
                )));
            }
            return Ok(());
        };
        let mut fin = Vec::new();
        for &a in args {
            fin.push(self.fwd_input(a)?);
        }
        let out = self.fwd[&n];
        let k = self.kind(n);
        let dout = self.materialize(st, &k, s, &FwdRef::Node(out))?;
        let attrs = ops::resolve_attrs(op, &p.attrs);
        let values: Vec<AbsVal> = args.iter().map(|&a| self.value(a).to_absval()).collect();
        let gins: Vec<GNode> = fin.iter().map(|x| GNode(x.0)).collect();
        let grads = {
            let mut b = IrGrad {
                body: &mut self.dst,
                graph: st.bg,
                span: self.src.node(n).span,
            };
            rule(
                &mut b,
                &GradCall {
                    inputs: &gins,
                    out: GNode(out.0),
                    dout: GNode(dout.0),
                    attrs: &attrs,
                    input_values: &values,
                },
            )
        };
        for (i, gn) in grads.into_iter().enumerate() {
            if let (Some(gn), Some(&a)) = (gn, args.get(i)) {
                self.contribute(st, a, Sens::Node(NodeId(gn.0)))?;
            }
        }
        Ok(())
    }
}
