//! Tracing: a graph call specialised to its arguments' dtypes and shapes,
//! flattened into primitive calls on registers.
//!
//! The tracer walks the executor's own per-graph plans, in their order, with
//! symbolic values ([`SVal`]): a register (a tensor whose dtype and shape are
//! known, whose data is not), a constant, a tuple, a closure whose captures
//! are symbolic, a partial application, or `grad(f)`. Graph calls are inlined,
//! structural primitives resolved, `Switch` must have a constant condition,
//! and `grad`/`value_and_grad` run autodiff at compile time with the same
//! abstract arguments the interpreter would give it. Each remaining primitive
//! runs its shape rule once; a call whose result is fully known (`Shape(x)`)
//! or whose inputs are all constants is folded. Anything else is a [`Bail`]:
//! the call then runs in the interpreter.

use std::collections::HashMap;
use std::sync::Arc;

use ir::{AbsVal, Dim, GraphId, MetaFn, ScalarConst, Shape, TextRange};
use tensor::DType;

use super::super::{condition, effect_writes, Executor};
use crate::plan::Operand;
use crate::value::{scalar_tensor, Closure, Func, PrimFn, TensorVal, Value};

/// Why a call cannot be compiled.
#[derive(Debug)]
pub(crate) struct Bail {
    pub why: String,
    /// The graph can never be compiled, whatever its arguments' types
    /// (recursion, a data-dependent `Switch`): not worth trying again.
    pub structural: bool,
}

fn bail<T>(why: impl Into<String>) -> Result<T, Bail> {
    Err(Bail {
        why: why.into(),
        structural: false,
    })
}

fn bail_structural<T>(why: impl Into<String>) -> Result<T, Bail> {
    Err(Bail {
        why: why.into(),
        structural: true,
    })
}

/// A register: a tensor of known dtype and shape.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RegInfo {
    pub dtype: DType,
    pub shape: Vec<usize>,
    /// A MindSpore scalar (rank 0, `scalar` set on the value).
    pub scalar: bool,
    pub weak: bool,
}

impl RegInfo {
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn abs(&self) -> AbsVal {
        if self.scalar {
            AbsVal::Scalar {
                dtype: self.dtype,
                value: None,
                weak: self.weak,
            }
        } else {
            AbsVal::tensor(
                self.dtype,
                &self.shape.iter().map(|&d| d as i64).collect::<Vec<_>>(),
            )
        }
    }

    pub fn of(t: &TensorVal) -> RegInfo {
        RegInfo {
            dtype: t.dtype(),
            shape: t.tensor().shape().to_vec(),
            scalar: t.scalar,
            weak: t.weak,
        }
    }

    /// Whether a run-time tensor has this register's type.
    pub fn matches(&self, t: &TensorVal) -> bool {
        t.dtype() == self.dtype
            && t.tensor().shape() == self.shape.as_slice()
            && t.scalar == self.scalar
            && t.weak == self.weak
    }
}

/// A symbolic value.
#[derive(Clone)]
pub(crate) enum SVal {
    Reg(u32),
    Const(Value),
    Tuple(Arc<[SVal]>),
    Closure {
        item: u32,
        graph: GraphId,
        env: Arc<[SVal]>,
        name: Arc<str>,
    },
    Partial {
        f: Box<SVal>,
        args: Vec<SVal>,
    },
    Meta {
        meta: MetaFn,
        f: Box<SVal>,
    },
}

impl SVal {
    /// Registers it reads, in order.
    pub fn regs(&self, out: &mut Vec<u32>) {
        match self {
            SVal::Reg(r) => out.push(*r),
            SVal::Tuple(items) => items.iter().for_each(|i| i.regs(out)),
            SVal::Closure { env, .. } => env.iter().for_each(|i| i.regs(out)),
            SVal::Partial { f, args } => {
                f.regs(out);
                args.iter().for_each(|i| i.regs(out));
            }
            SVal::Meta { f, .. } => f.regs(out),
            SVal::Const(_) => {}
        }
    }

    fn is_function(&self) -> bool {
        matches!(
            self,
            SVal::Closure { .. }
                | SVal::Partial { .. }
                | SVal::Meta { .. }
                | SVal::Const(Value::Func(_) | Value::Type(_))
        )
    }

    /// The value, when nothing in it is a register.
    fn to_value(&self) -> Option<Value> {
        Some(match self {
            SVal::Reg(_) => return None,
            SVal::Const(v) => v.clone(),
            SVal::Tuple(items) => {
                Value::tuple(items.iter().map(SVal::to_value).collect::<Option<_>>()?)
            }
            SVal::Closure {
                item,
                graph,
                env,
                name,
            } => Value::func(Func::Graph(Closure {
                item: *item,
                graph: *graph,
                env: env.iter().map(SVal::to_value).collect::<Option<_>>()?,
                name: name.clone(),
            })),
            SVal::Partial { f, args } => Value::func(Func::Partial {
                f: f.to_value()?,
                args: args.iter().map(SVal::to_value).collect::<Option<_>>()?,
            }),
            SVal::Meta { meta, f } => Value::func(Func::Meta {
                meta: meta.clone(),
                f: f.to_value()?,
            }),
        })
    }
}

/// The structure of a primitive's result: registers in tuples.
#[derive(Debug, Clone)]
pub(crate) enum OutTree {
    Reg(u32),
    Tuple(Vec<OutTree>),
}

impl OutTree {
    pub fn regs(&self, out: &mut Vec<u32>) {
        match self {
            OutTree::Reg(r) => out.push(*r),
            OutTree::Tuple(items) => items.iter().for_each(|i| i.regs(out)),
        }
    }

    fn sval(&self) -> SVal {
        match self {
            OutTree::Reg(r) => SVal::Reg(*r),
            OutTree::Tuple(items) => SVal::Tuple(items.iter().map(OutTree::sval).collect()),
        }
    }
}

pub(crate) enum NodeKind {
    /// The value of a weight where the interpreter would read it.
    LoadWeight { weight: u32 },
    /// A primitive call; inputs are registers, constants and tuples of them.
    Prim {
        func: Arc<Func>,
        inputs: Vec<SVal>,
        /// Weights its kernel writes (an effect).
        writes: Vec<u32>,
    },
}

pub(crate) struct Node {
    pub kind: NodeKind,
    pub out: OutTree,
    pub span: Option<TextRange>,
    /// How many effects come before it: nothing moves across an effect.
    pub epoch: u32,
}

impl Node {
    pub fn prim(&self) -> Option<&PrimFn> {
        match &self.kind {
            NodeKind::Prim { func, .. } => match &**func {
                Func::Prim(p) => Some(p),
                _ => None,
            },
            NodeKind::LoadWeight { .. } => None,
        }
    }

    pub fn inputs(&self) -> &[SVal] {
        match &self.kind {
            NodeKind::Prim { inputs, .. } => inputs,
            NodeKind::LoadWeight { .. } => &[],
        }
    }
}

/// A traced call.
pub(crate) struct Traced {
    pub regs: Vec<RegInfo>,
    /// Registers of the arguments then the captured values, flattened
    /// (tuples depth first), in order.
    pub inputs: Vec<u32>,
    pub nodes: Vec<Node>,
    /// Registers, constants and tuples.
    pub output: SVal,
    pub name: Arc<str>,
}

/// Limits that keep compiling cheap and the native stack shallow.
const MAX_NODES: usize = 200_000;
const MAX_INLINE_DEPTH: usize = 200;

struct Tracer<'a> {
    ex: &'a mut Executor,
    regs: Vec<RegInfo>,
    nodes: Vec<Node>,
    stack: Vec<(u32, GraphId)>,
    epoch: u32,
    loaded: HashMap<(u32, u32), u32>,
}

pub(crate) fn trace(ex: &mut Executor, c: &Closure, args: &[Value]) -> Result<Traced, Bail> {
    let mut t = Tracer {
        ex,
        regs: Vec::new(),
        nodes: Vec::new(),
        stack: Vec::new(),
        epoch: 0,
        loaded: HashMap::new(),
    };
    let mut inputs = Vec::new();
    let args: Vec<SVal> = args.iter().map(|a| t.input(a, &mut inputs)).collect();
    let env: Vec<SVal> = c.env.iter().map(|a| t.input(a, &mut inputs)).collect();
    let output = t.call_graph(c.item, c.graph, env.into(), args)?;
    check_output(&output)?;
    Ok(Traced {
        regs: t.regs,
        inputs,
        nodes: t.nodes,
        output,
        name: c.name.clone(),
    })
}

fn check_output(v: &SVal) -> Result<(), Bail> {
    match v {
        SVal::Reg(_) | SVal::Const(_) => Ok(()),
        SVal::Tuple(items) => items.iter().try_for_each(check_output),
        _ => bail("it returns a function"),
    }
}

impl Tracer<'_> {
    fn new_reg(&mut self, info: RegInfo) -> u32 {
        self.regs.push(info);
        (self.regs.len() - 1) as u32
    }

    fn input(&mut self, v: &Value, inputs: &mut Vec<u32>) -> SVal {
        match v {
            Value::Tensor(t) => {
                let r = self.new_reg(RegInfo::of(t));
                inputs.push(r);
                SVal::Reg(r)
            }
            Value::Tuple(items) => {
                SVal::Tuple(items.iter().map(|i| self.input(i, inputs)).collect())
            }
            other => SVal::Const(other.clone()),
        }
    }

    fn abs(&self, v: &SVal) -> AbsVal {
        match v {
            SVal::Reg(r) => self.regs[*r as usize].abs(),
            SVal::Const(v) => v.abs(),
            SVal::Tuple(items) => AbsVal::Tuple(items.iter().map(|i| self.abs(i)).collect()),
            _ => AbsVal::Any,
        }
    }

    fn push(&mut self, kind: NodeKind, out: OutTree, span: Option<TextRange>) -> Result<(), Bail> {
        if self.nodes.len() >= MAX_NODES {
            return bail_structural(format!("more than {MAX_NODES} primitive calls"));
        }
        self.nodes.push(Node {
            kind,
            out,
            span,
            epoch: self.epoch,
        });
        Ok(())
    }

    fn call_graph(
        &mut self,
        item: u32,
        graph: GraphId,
        env: Arc<[SVal]>,
        args: Vec<SVal>,
    ) -> Result<SVal, Bail> {
        if self.stack.contains(&(item, graph)) {
            return bail_structural("a recursive call");
        }
        if self.stack.len() >= MAX_INLINE_DEPTH {
            return bail_structural("graph calls nested too deep");
        }
        let plan = self.ex.plan(item, graph).map_err(|e| Bail {
            why: e.message,
            structural: true,
        })?;
        if args.len() != plan.n_params {
            return bail("a call with the wrong number of arguments");
        }
        self.stack.push((item, graph));
        let mut slots: Vec<Option<SVal>> = vec![None; plan.n_slots];
        for (i, a) in args.into_iter().enumerate() {
            slots[i] = Some(a);
        }
        for step in &plan.steps {
            let span = self.ex.node_span(item, step.node);
            if step.switch {
                let cond = self.operand(item, &slots, &env, &step.inputs[1])?;
                let SVal::Const(c) = cond else {
                    return bail_structural("`Switch` on a condition computed at run time");
                };
                let Ok(cond) = condition(&c) else {
                    return bail("a `Switch` condition that is not a boolean");
                };
                let v = self.operand(item, &slots, &env, &step.inputs[if cond { 2 } else { 3 }])?;
                slots[step.slot as usize] = Some(v);
                continue;
            }
            let callee = self.operand(item, &slots, &env, &step.inputs[0])?;
            let mut values = Vec::with_capacity(step.inputs.len() - 1);
            for op in step.inputs[1..].iter() {
                values.push(self.operand(item, &slots, &env, op)?);
            }
            // Weights a writing primitive updates (checked as the interpreter does).
            let writes = match &callee {
                SVal::Const(f) => match effect_writes(f, &step.inputs) {
                    Ok(w) => w,
                    Err(e) => return bail(e.message),
                },
                _ => Vec::new(),
            };
            let v = self.apply(callee, values, writes, span)?;
            slots[step.slot as usize] = Some(v);
        }
        let out = self.operand(item, &slots, &env, &plan.output)?;
        self.stack.pop();
        Ok(out)
    }

    fn operand(
        &mut self,
        item: u32,
        slots: &[Option<SVal>],
        env: &[SVal],
        op: &Operand,
    ) -> Result<SVal, Bail> {
        Ok(match op {
            Operand::Slot(s) => match &slots[*s as usize] {
                Some(v) => v.clone(),
                None => return bail("a value used before it is computed"),
            },
            Operand::Env(i) => env[*i as usize].clone(),
            Operand::Const(v) => SVal::Const(v.clone()),
            Operand::Weight(w) => {
                let key = (*w, self.epoch);
                if let Some(&r) = self.loaded.get(&key) {
                    return Ok(SVal::Reg(r));
                }
                // The weight's current value gives its type (initialising it
                // as the interpreter would here).
                let v = match self.ex.weight(*w) {
                    Ok(v) => v,
                    Err(e) => return bail(e.message),
                };
                let Value::Tensor(t) = &v else {
                    return bail("a weight that is not a tensor");
                };
                let r = self.new_reg(RegInfo::of(t));
                self.push(NodeKind::LoadWeight { weight: *w }, OutTree::Reg(r), None)?;
                self.loaded.insert(key, r);
                SVal::Reg(r)
            }
            Operand::Closure {
                graph,
                name,
                captures,
            } => {
                let env = captures
                    .iter()
                    .map(|c| self.operand(item, slots, env, c))
                    .collect::<Result<Vec<_>, _>>()?;
                SVal::Closure {
                    item,
                    graph: *graph,
                    env: env.into(),
                    name: name.clone(),
                }
            }
        })
    }

    fn apply(
        &mut self,
        callee: SVal,
        args: Vec<SVal>,
        writes: Vec<u32>,
        span: Option<TextRange>,
    ) -> Result<SVal, Bail> {
        match callee {
            SVal::Const(Value::Func(f)) => match &*f {
                Func::Prim(p) if ops::composite::composite(&p.prim.name).is_some() => {
                    let item = match self.ex.composite_item(&p.prim) {
                        Ok(i) => i,
                        Err(e) => return bail(e.message),
                    };
                    self.call_graph(item, GraphId(0), Arc::from(Vec::new()), args)
                }
                Func::Prim(p) => self.prim(&f, p, args, writes, span),
                Func::Graph(c) => {
                    let env: Arc<[SVal]> = c.env.iter().cloned().map(SVal::Const).collect();
                    self.call_graph(c.item, c.graph, env, args)
                }
                Func::Partial { f, args: bound } => {
                    let mut all: Vec<SVal> = bound.iter().cloned().map(SVal::Const).collect();
                    all.extend(args);
                    self.apply(SVal::Const(f.clone()), all, Vec::new(), span)
                }
                Func::MetaOp(meta) => {
                    if args.len() != 1 || !args[0].is_function() {
                        return bail("`grad` applied to something other than one function");
                    }
                    let f = args.into_iter().next().expect("one argument");
                    Ok(SVal::Meta {
                        meta: meta.clone(),
                        f: Box::new(f),
                    })
                }
                Func::Meta { meta, f } => {
                    self.apply_meta(meta.clone(), SVal::Const(f.clone()), args, span)
                }
            },
            SVal::Closure {
                item, graph, env, ..
            } => self.call_graph(item, graph, env, args),
            SVal::Partial { f, args: bound } => {
                let mut all = bound;
                all.extend(args);
                self.apply(*f, all, Vec::new(), span)
            }
            SVal::Meta { meta, f } => self.apply_meta(meta, *f, args, span),
            _ => bail("a call of a value that is not a function"),
        }
    }

    /// `meta(f)(args...)`: autodiff runs now, with the abstract arguments the
    /// interpreter would give it.
    fn apply_meta(
        &mut self,
        meta: MetaFn,
        f: SVal,
        args: Vec<SVal>,
        span: Option<TextRange>,
    ) -> Result<SVal, Bail> {
        let values: Option<Vec<AbsVal>> = if args.iter().any(SVal::is_function) {
            None
        } else {
            Some(args.iter().map(|a| self.abs(a).widen()).collect())
        };
        let nargs = args.len();
        if let Some(fv) = f.to_value() {
            let (entry, extra) = match self.ex.differentiated(&meta, &fv, nargs, values) {
                Ok(r) => r,
                Err(e) => return bail(e.message),
            };
            let mut all = args;
            all.extend(extra.into_iter().map(SVal::Const));
            return self.apply(SVal::Const(entry), all, Vec::new(), span);
        }
        // A closure whose captures are registers: its derivative takes them
        // after the arguments.
        let SVal::Closure {
            item,
            graph,
            env,
            name,
        } = f
        else {
            return bail("`grad` of a partial application of run-time values");
        };
        let key = super::super::GradKey::Graph(item, graph, meta.clone(), None);
        let entry = match self.ex.grad_cache.get(&key) {
            Some(&e) => e,
            None => {
                let e = match self.ex.run_autodiff(item, graph, &meta, &name, None, None) {
                    Ok(e) => e,
                    Err(e) => return bail(e.message),
                };
                self.ex.grad_cache.insert(key, e);
                e
            }
        };
        let entry_params = self.ex.items[entry as usize]
            .body
            .graph(GraphId(0))
            .params
            .len();
        let body = self.ex.items[item as usize].body.clone();
        let fvs = body.free_variables(graph);
        if entry_params != nargs + fvs.len() {
            return bail("a closure whose captures cannot be passed to its derivative");
        }
        let info = self.ex.info(item);
        let mut all = args;
        for u in &fvs {
            match info.env_index[graph.0 as usize].get(u) {
                Some(&i) => all.push(env[i as usize].clone()),
                None => return bail("a captured value is missing"),
            }
        }
        let entry_value = self.ex.item_value(entry);
        self.apply(SVal::Const(entry_value), all, Vec::new(), span)
    }

    fn prim(
        &mut self,
        func: &Arc<Func>,
        p: &PrimFn,
        mut args: Vec<SVal>,
        writes: Vec<u32>,
        span: Option<TextRange>,
    ) -> Result<SVal, Bail> {
        let name = p.prim.name.as_str();
        match name {
            "MakeTuple" => return Ok(SVal::Tuple(args.into())),
            "TupleGetItem" => {
                if args.len() != 2 {
                    return bail("`TupleGetItem` with the wrong number of inputs");
                }
                let index = match &args[1] {
                    SVal::Const(Value::Tensor(t))
                        if t.dtype().is_int() && t.tensor().numel() == 1 =>
                    {
                        t.item_f64().unwrap_or(0.0) as i64
                    }
                    _ => return bail("a tuple index computed at run time"),
                };
                let item = |items: &[SVal]| -> Result<SVal, Bail> {
                    let len = items.len() as i64;
                    let k = if index < 0 { index + len } else { index };
                    if k < 0 || k >= len {
                        return bail("a tuple index out of range");
                    }
                    Ok(items[k as usize].clone())
                };
                return match &args[0] {
                    SVal::Tuple(items) => item(items),
                    SVal::Const(Value::Tuple(items)) => {
                        let items: Vec<SVal> = items.iter().cloned().map(SVal::Const).collect();
                        item(&items)
                    }
                    _ => bail("`TupleGetItem` of something that is not a tuple"),
                };
            }
            "Switch" => {
                if args.len() != 3 {
                    return bail("`Switch` with the wrong number of inputs");
                }
                let SVal::Const(c) = &args[0] else {
                    return bail_structural("`Switch` on a condition computed at run time");
                };
                let Ok(cond) = condition(c) else {
                    return bail("a `Switch` condition that is not a boolean");
                };
                let b = args.pop().expect("3");
                let a = args.pop().expect("3");
                return Ok(if cond { a } else { b });
            }
            "Partial" => {
                if args.is_empty() {
                    return bail("`Partial` without a function");
                }
                let f = args.remove(0);
                return Ok(SVal::Partial {
                    f: Box::new(f),
                    args,
                });
            }
            "Depend" => {
                if args.len() != 2 {
                    return bail("`Depend` with the wrong number of inputs");
                }
                return Ok(args.swap_remove(0));
            }
            "UpdateState" => return Ok(SVal::Const(Value::None)),
            "StopGradient" | "Return" => {
                if args.len() != 1 {
                    return bail("a call with the wrong number of inputs");
                }
                return Ok(args.swap_remove(0));
            }
            _ => {}
        }
        let Some(op) = p.op else {
            return bail(format!("unknown primitive `{name}`"));
        };
        if ops::is_ordered(name) && args.len() == op.input_count() + 1 {
            args.pop();
        }
        if !op.variadic && args.len() != op.input_count() {
            return bail("a call with the wrong number of inputs");
        }
        if args.iter().any(SVal::is_function) {
            return bail("a function given to a primitive");
        }
        if !self.ex.backend.supports(op) {
            return bail(format!("`{name}` has no kernel"));
        }
        let abs: Vec<AbsVal> = args.iter().map(|a| self.abs(a)).collect();
        let inferred = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            (op.infer)(&ops::InferCall {
                op,
                inputs: &abs,
                attrs: &p.attrs,
            })
        })) {
            Ok(Ok(a)) => a,
            _ => {
                return bail(format!(
                    "the shape rule of `{name}` does not accept the inputs"
                ))
            }
        };
        if writes.is_empty() {
            // Fold calls on constants, and results the shape rule knows.
            if let Some(values) = args
                .iter()
                .map(SVal::to_value)
                .collect::<Option<Vec<Value>>>()
            {
                return match self.ex.call_prim(p, values) {
                    Ok(v) => Ok(SVal::Const(v)),
                    Err(e) => bail(e.message),
                };
            }
            if let Some(v) = self.known_value(&inferred) {
                return Ok(SVal::Const(v));
            }
        }
        let out = self.out_tree(&inferred, name)?;
        let result = out.sval();
        let effect = !writes.is_empty();
        self.push(
            NodeKind::Prim {
                func: func.clone(),
                inputs: args,
                writes,
            },
            out,
            span,
        )?;
        if effect {
            self.epoch += 1;
        }
        Ok(result)
    }

    /// A result the shape rule computed: integer and boolean scalars with
    /// known values, and tuples of them.
    fn known_value(&self, a: &AbsVal) -> Option<Value> {
        match a {
            AbsVal::Scalar {
                dtype,
                value: Some(c),
                weak,
            } if dtype.is_int() || *dtype == DType::Bool => {
                if !matches!(c, ScalarConst::Int(_) | ScalarConst::Bool(_)) {
                    return None;
                }
                Some(Value::Tensor(TensorVal::new_scalar(
                    scalar_tensor(*c, *dtype),
                    *weak,
                    Some(&self.ex.memory),
                )))
            }
            AbsVal::Tuple(items) if !items.is_empty() => Some(Value::tuple(
                items
                    .iter()
                    .map(|i| self.known_value(i))
                    .collect::<Option<_>>()?,
            )),
            _ => None,
        }
    }

    fn out_tree(&mut self, a: &AbsVal, name: &str) -> Result<OutTree, Bail> {
        match a {
            AbsVal::Tensor { dtype, shape } => {
                let Some(dims) = known_dims(shape) else {
                    return bail(format!("the shape of `{name}`'s result depends on data"));
                };
                Ok(OutTree::Reg(self.new_reg(RegInfo {
                    dtype: *dtype,
                    shape: dims,
                    scalar: false,
                    weak: false,
                })))
            }
            AbsVal::Scalar { dtype, weak, .. } => Ok(OutTree::Reg(self.new_reg(RegInfo {
                dtype: *dtype,
                shape: Vec::new(),
                scalar: true,
                weak: *weak,
            }))),
            AbsVal::Tuple(items) => Ok(OutTree::Tuple(
                items
                    .iter()
                    .map(|i| self.out_tree(i, name))
                    .collect::<Result<_, _>>()?,
            )),
            _ => bail(format!(
                "the result of `{name}` is not known before it runs"
            )),
        }
    }
}

fn known_dims(shape: &Shape) -> Option<Vec<usize>> {
    let dims = shape.dims()?;
    dims.iter()
        .map(|d| match d {
            Dim::Known(n) if *n >= 0 => Some(*n as usize),
            _ => None,
        })
        .collect()
}
