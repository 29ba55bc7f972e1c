//! `checkpoint(f)` (spec §7; MindSpore's `recompute`, JAX's
//! `jax.checkpoint`): a graph that calls `f` and has a backward rule of its
//! own, which runs `vjp(f)` again on the saved arguments. A derivative of a
//! graph that calls `checkpoint(f)` keeps `f`'s arguments and output, not
//! its intermediates, and recomputes them in the backward pass.

use super::*;

impl Cx {
    pub(super) fn checkpoint(
        &mut self,
        item: &Item,
        args: Option<&[AbsVal]>,
    ) -> Result<Derived, AdError> {
        let body = self.world.bodies[item].clone();
        let root = body.graph(body.root()).clone();
        let pname = |i: usize| {
            body.node(root.params[i])
                .name
                .clone()
                .unwrap_or_else(|| format!("x{i}"))
        };
        let n = root.params.len();
        let target = Value::Global(item.to_string());
        // The rule: rule(x..., out, dout) = vjp(f)(x...)[1](dout).
        let rule = self.fresh(&format!("checkpoint_{item}_bprop"));
        let mut b = Body::default();
        let g = b.add_graph(rule.clone(), None, GraphOrigin::Generated);
        let xs: Vec<NodeId> = (0..n)
            .map(|i| {
                let p = b.add_param(g, pname(i), None);
                b.node_mut(p).annotation = body.node(root.params[i]).annotation.clone();
                p
            })
            .collect();
        let _out = b.add_param(g, "out", None);
        let dout = b.add_param(g, "dout", None);
        let vjp = b.add_const(Value::Meta(MetaFn::Vjp), None);
        let f = b.add_const(target.clone(), None);
        let vf = b.add_apply(g, vec![vjp, f], None);
        let r = call(&mut b, g, vf, &xs);
        let bp = tuple_get(&mut b, g, r, 1);
        let d = call(&mut b, g, bp, &[dout]);
        b.graph_mut(g).output = Some(d);
        self.add_item(&rule, b);
        let rule_item: Item = Arc::from(rule.as_str());
        let mut rule_args: Vec<AV> = self.param_values(item, args);
        rule_args.extend([AV::Any, AV::Any]);
        self.expand_all(&rule_item, &rule_args)?;
        // Emitted with its expansion (the vjp replaced by its graph),
        // cleaned up: the vjp's graph and its backpropagator inlined.
        let expanded = (*self.world.bodies[&rule_item]).clone();
        self.generated.retain(|(n, _)| *n != rule);
        let mut all = vec![(rule.clone(), expanded)];
        all.extend(self.generated.iter().cloned());
        passes::optimize(&mut all, &self.world, &rule, &rule_args, false);
        passes::finish(&mut all, &self.world, &rule);
        for (n, b) in all {
            self.world
                .insert(Arc::from(n.as_str()), Arc::new(b.clone()));
            self.generated.retain(|(g, _)| *g != n);
            self.generated.push((n, b));
        }
        // The entry: checkpoint_f(x...) = f(x...).
        let name = self.fresh(&format!("checkpoint_{item}"));
        let mut b = Body::default();
        let g = b.add_graph(name.clone(), None, GraphOrigin::Generated);
        let xs: Vec<NodeId> = (0..n)
            .map(|i| {
                let p = b.add_param(g, pname(i), None);
                b.node_mut(p).annotation = body.node(root.params[i]).annotation.clone();
                p
            })
            .collect();
        let f = b.add_const(target, None);
        let out = call(&mut b, g, f, &xs);
        b.graph_mut(g).output = Some(out);
        self.add_item(&name, b.clone());
        self.generated.retain(|(n, _)| *n != name);
        let entry: Item = Arc::from(name.as_str());
        self.own_rules.insert(entry, rule_item);
        Ok(Derived {
            entry: name.clone(),
            graphs: vec![(name, b)],
        })
    }
}
