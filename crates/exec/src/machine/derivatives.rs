//! Derivatives at run time: the graphs autodiff makes for `grad`, `vjp`,
//! `jvp` and the other metafunctions applied to run-time function values
//! (graphs, closures with their captures, primitives, partial applications),
//! cached per function and argument types.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use ir::{Body, GraphId, GraphOrigin, MetaFn, NodeId, PrimRef, Program, Value as IrValue};
use ops::AbsVal;

use super::{abstract_args, describe_fn, ir_constant, panic_message, Executor, GradKey, Scope};
use crate::error::{ErrorKind, RunError};
use crate::value::{Closure, Func, Value};

impl Executor {
    /// The graph that computes `meta(f)` and the extra arguments it takes
    /// after `f`'s (the values a closure captured).
    pub(super) fn differentiated(
        &mut self,
        meta: &MetaFn,
        f: &Value,
        nargs: usize,
        values: Option<Vec<AbsVal>>,
    ) -> Result<(Value, Vec<Value>), RunError> {
        let Value::Func(func) = f else {
            return Err(RunError::new(
                ErrorKind::Type,
                format!(
                    "`{}` differentiates a function, not {}",
                    meta.name(),
                    f.describe()
                ),
            ));
        };
        // How many arguments `f` itself takes (`jvp` and `hvp` take more).
        let primal = meta.primal_arity(nargs).ok_or_else(|| {
            RunError::new(
                ErrorKind::Type,
                format!(
                    "`{}(f)` is called with {nargs} arguments: {}",
                    meta.name(),
                    match meta {
                        MetaFn::Jvp => "`f`'s arguments, then a tangent for each",
                        _ => "`f`'s arguments, then the vector",
                    }
                ),
            )
        })?;
        match &**func {
            Func::Graph(c) => {
                // A closure's derivative takes the values it captured after
                // the arguments.
                let extra = self.captured_args(c)?;
                let values = values.and_then(|mut v| {
                    v.extend(abstract_args(&extra)?);
                    Some(v)
                });
                let key = GradKey::Graph(c.item, c.graph, meta.clone(), values.clone());
                let entry = match self.grad_cache.get(&key) {
                    Some(&e) => e,
                    None => {
                        let e = self.run_autodiff(c.item, c.graph, meta, &c.name, values, None)?;
                        self.grad_cache.insert(key, e);
                        e
                    }
                };
                self.check_entry_arity(entry, nargs + extra.len(), &c.name)?;
                Ok((self.item_value(entry), extra))
            }
            Func::Prim(p) => {
                let key = GradKey::Prim(p.prim.clone(), nargs, meta.clone());
                let entry = match self.grad_cache.get(&key) {
                    Some(&e) => e,
                    None => {
                        let wrapper = self.prim_wrapper(&p.prim, primal);
                        let e =
                            self.run_autodiff(wrapper, GraphId(0), meta, &p.prim.name, None, None)?;
                        self.grad_cache.insert(key, e);
                        e
                    }
                };
                Ok((self.item_value(entry), Vec::new()))
            }
            Func::Meta { meta: inner, f: g } => {
                // meta(inner(g)): differentiate the graph that computes
                // inner(g); what a closure captured is passed through.
                let inner_values = values.as_ref().map(|v| v[..primal.min(v.len())].to_vec());
                // `vmap(inner(g))`: `inner(g)` is called with one example.
                let inner_values = match meta {
                    MetaFn::Vmap { in_axes, .. } => {
                        inner_values.and_then(|v| ir::batching::example_values(&v, in_axes))
                    }
                    _ => inner_values,
                };
                let (entry, extra) = self.differentiated(inner, g, primal, inner_values)?;
                let Value::Func(ef) = &entry else {
                    return Err(RunError::internal("a derivative is not a graph"));
                };
                let Func::Graph(ec) = &**ef else {
                    return Err(RunError::internal("a derivative is not a graph"));
                };
                let values = values.and_then(|mut v| {
                    v.extend(abstract_args(&extra)?);
                    Some(v)
                });
                let key = GradKey::Graph(ec.item, ec.graph, meta.clone(), values.clone());
                let outer = match self.grad_cache.get(&key) {
                    Some(&e) => e,
                    None => {
                        let visible = (!extra.is_empty()).then_some(primal);
                        let e = self.run_autodiff(
                            ec.item,
                            ec.graph,
                            meta,
                            &describe_fn(f),
                            values,
                            visible,
                        )?;
                        self.grad_cache.insert(key, e);
                        e
                    }
                };
                self.check_entry_arity(outer, nargs + extra.len(), &describe_fn(f))?;
                Ok((self.item_value(outer), extra))
            }
            Func::Partial { .. } => {
                let entry = self.partial_wrapper(f, primal, meta)?;
                Ok((self.item_value(entry), Vec::new()))
            }
            Func::MetaOp(_) => Err(RunError::new(
                ErrorKind::Type,
                format!(
                    "`{}` differentiates a function applied to values, not `{}` itself",
                    meta.name(),
                    func.describe()
                ),
            )),
        }
    }

    /// What the transforms chose so far (how each `vmap` was made: batched,
    /// with the primitives that ran per example, or per example and why).
    pub fn transform_notes(&self) -> &[String] {
        &self.transform_notes
    }

    fn check_entry_arity(&self, entry: u32, n: usize, name: &str) -> Result<(), RunError> {
        let params = self.items[entry as usize]
            .body
            .graph(GraphId(0))
            .params
            .len();
        if params != n {
            return Err(RunError::new(
                ErrorKind::Unsupported,
                format!(
                    "cannot differentiate `{name}`: its derivative takes {params} arguments, not {n}"
                ),
            ));
        }
        Ok(())
    }

    /// Differentiates a partial application `Partial(g, a...)`: a new
    /// top-level graph `(p...) -> g(a..., p...)` with the bound values as
    /// constants, so `wrt` counts the parameters left.
    fn partial_wrapper(&mut self, f: &Value, nargs: usize, meta: &MetaFn) -> Result<u32, RunError> {
        let unsupported = |what: String| {
            RunError::new(
                ErrorKind::Unsupported,
                format!(
                    "cannot take `{}` of `{}`: {what}",
                    meta.name(),
                    describe_fn(f)
                ),
            )
        };
        // Flatten nested partials.
        let mut bound: Vec<Value> = Vec::new();
        let mut g = f.clone();
        while let Value::Func(func) = &g {
            let Func::Partial { f: inner, args } = &**func else {
                break;
            };
            let mut all = args.clone();
            all.extend(bound);
            bound = all;
            g = inner.clone();
        }
        let (callee, scope) = match &g {
            Value::Func(func) => match &**func {
                Func::Prim(p) => (IrValue::Prim(p.prim.clone()), 0),
                Func::Graph(c) if c.graph == GraphId(0) && c.env.is_empty() => {
                    let it = &self.items[c.item as usize];
                    (IrValue::Global(it.name.to_string()), it.scope)
                }
                _ => {
                    return Err(unsupported(
                        "only a partial application of a top-level graph or a primitive can be differentiated".into(),
                    ))
                }
            },
            _ => return Err(unsupported("it applies a value that is not a function".into())),
        };
        let consts = bound
            .iter()
            .map(ir_constant)
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| unsupported("a bound argument is a function or a closure".into()))?;
        let mut k = self.items.len();
        let mut name = format!("__partial{k}");
        while self.resolve_global(scope, &name).is_some() {
            k += 1;
            name = format!("__partial{k}");
        }
        let mut body = Body::default();
        let root = body.add_graph(name.clone(), None, GraphOrigin::Generated);
        let params: Vec<NodeId> = (0..nargs)
            .map(|i| body.add_param(root, format!("x{i}"), None))
            .collect();
        let mut inputs = vec![body.add_const(callee, None)];
        for c in consts {
            inputs.push(body.add_const(c, None));
        }
        inputs.extend(params);
        let out = body.add_apply(root, inputs, None);
        body.graph_mut(root).output = Some(out);
        let item = self.add_item(&name, Arc::new(body), scope);
        self.run_autodiff(item, GraphId(0), meta, &describe_fn(f), None, None)
    }

    /// Values a differentiated closure's entry takes after the arguments: the
    /// closure's captured values, in `autodiff::captured_values` order (a
    /// value only a nested graph that is never made uses is `none`).
    fn captured_args(&mut self, c: &Closure) -> Result<Vec<Value>, RunError> {
        if c.env.is_empty() {
            return Ok(Vec::new());
        }
        let body = self.items[c.item as usize].body.clone();
        let info = self.info(c.item);
        Ok(autodiff::captured_values(&body, c.graph)
            .iter()
            .map(|u| {
                info.env_index[c.graph.0 as usize]
                    .get(u)
                    .map_or(Value::None, |&i| c.env[i as usize].clone())
            })
            .collect())
    }

    /// The item of a composite primitive's instance, made on first use.
    pub(super) fn composite_item(&mut self, prim: &PrimRef) -> Result<u32, RunError> {
        let key = ops::composite::instance_key(prim)
            .ok_or_else(|| RunError::internal("not a composite primitive"))?;
        if let Some(item) = self.resolve_global(0, &key) {
            return Ok(item);
        }
        let lowered = analysis::composite::instance(prim).ok_or_else(|| {
            RunError::internal(format!("no definition of composite `{}`", prim.name))
        })?;
        let error = lowered
            .diagnostics
            .iter()
            .find(|d| d.severity == analysis::Severity::Error);
        if let Some(e) = error {
            return Err(RunError::new(
                ErrorKind::Type,
                format!(
                    "`{}` cannot take these attributes: {}",
                    prim.name, e.message
                ),
            ));
        }
        Ok(self.add_item(&key, lowered.body.clone(), 0))
    }

    /// A top-level graph `(p0, ..., pn) -> prim(p0, ..., pn)`.
    fn prim_wrapper(&mut self, prim: &PrimRef, nargs: usize) -> u32 {
        let mut k = self.items.len();
        let mut name = format!("__{}_prim{k}", prim.name);
        while self.scopes[0].names.contains_key(&name) {
            k += 1;
            name = format!("__{}_prim{k}", prim.name);
        }
        let mut body = Body::default();
        let g = body.add_graph(name.clone(), None, GraphOrigin::Generated);
        let params: Vec<NodeId> = (0..nargs)
            .map(|i| body.add_param(g, format!("x{i}"), None))
            .collect();
        let out = body.add_prim_call(g, prim.clone(), &params, None);
        body.graph_mut(g).output = Some(out);
        self.add_item(&name, Arc::new(body), 0)
    }

    fn program_for(&self, scope: u32) -> Program {
        let mut graphs = Vec::new();
        let mut s = Some(scope);
        while let Some(id) = s {
            for it in self.items.iter().filter(|it| it.scope == id) {
                graphs.push((it.name.to_string(), it.body.clone()));
            }
            s = self.scopes[id as usize].parent;
        }
        Program {
            graphs,
            weights: self.weights.clone(),
        }
    }

    pub(super) fn run_autodiff(
        &mut self,
        item: u32,
        graph: GraphId,
        meta: &MetaFn,
        name: &str,
        param_values: Option<Vec<AbsVal>>,
        visible_params: Option<usize>,
    ) -> Result<u32, RunError> {
        let scope = self.items[item as usize].scope;
        let program = self.program_for(scope);
        let target = autodiff::GradTarget {
            item: self.items[item as usize].name.to_string(),
            graph,
        };
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
            let options = autodiff::Options {
                param_values,
                composites: Some(analysis::composite::instance_body),
                visible_params,
                ..Default::default()
            };
            autodiff::differentiate_with(&program, &target, meta, &options)
        }))
        .map_err(|p| {
            RunError::internal(format!(
                "autodiff panicked differentiating `{name}`: {}",
                panic_message(&p)
            ))
        })?
        .map_err(|e| {
            RunError::new(
                ErrorKind::Unsupported,
                format!("cannot take `{}` of `{name}`: {e}", meta.name()),
            )
        })?;
        for note in &result.notes {
            if !self.transform_notes.contains(note) {
                self.transform_notes.push(note.clone());
            }
        }
        let new_scope = self.scopes.len() as u32;
        self.scopes.push(Scope {
            names: HashMap::new(),
            parent: Some(scope),
        });
        for (n, body) in result.graphs {
            self.add_item(&n, body, new_scope);
        }
        self.scopes[new_scope as usize]
            .names
            .get(&result.entry)
            .copied()
            .ok_or_else(|| {
                RunError::internal(format!(
                    "autodiff's entry `{}` is not among the graphs it made",
                    result.entry
                ))
            })
    }
}
