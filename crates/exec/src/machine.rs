//! The executor: an explicit-stack machine over plans.
//!
//! Each graph call is a heap-allocated [`Frame`] (its plan, a slot per
//! parameter and CNode, its captured environment, a program counter), so deep
//! recursion never touches the native stack; a call deeper than
//! [`ExecOptions::max_depth`] frames is a "recursion too deep" fault. A step
//! gathers its inputs, drops the slots whose last use it is, and applies its
//! callee: a primitive runs at once (structural ones in the executor, the rest
//! on the backend after their shape rule), a graph pushes a frame whose result
//! lands in the caller's slot when it returns.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use ir::{
    Body, GraphId, GraphOrigin, MetaFn, NodeId, NodeKind, PrimRef, Program, ScalarConst, TextRange,
    Value as IrValue, WeightDef,
};
use ops::{AbsVal, KArg, KValue, KernelCall};
use tensor::{Buffer, DType};

use crate::backend::{Backend, CpuBackend};
use crate::error::{ErrorKind, RunError, TraceEntry};
use crate::plan::{body_info, build_plan, BodyInfo, Operand, Plan};
use crate::value::{
    from_kvalue, scalar_tensor, Closure, Func, MemCounter, MemStats, PrimFn, TensorVal, Value,
};

/// Compiled plans for static regions (a child module: it reads the executor's state).
mod compile;
/// Derivatives of run-time function values (a child module, as `compile`).
mod derivatives;
/// The hook a debugger watches a run through (a child module, as `compile`).
pub mod observe;

/// The default limit on nested graph calls.
pub const DEFAULT_MAX_DEPTH: usize = 100_000;

/// How to run.
#[derive(Debug, Clone)]
pub struct ExecOptions {
    /// The directory `load("...")` paths are relative to (the `.mir` file's).
    pub base_dir: PathBuf,
    /// The most graph calls in progress at once.
    pub max_depth: usize,
    /// Fail at the first primitive whose result holds a NaN.
    pub check_nan: bool,
    /// The most bytes of tensors alive at once. A primitive, weight or
    /// argument that would go beyond is refused with an error naming it, its
    /// shape and its size, before its memory is allocated. The default is
    /// [`tensor::limits::default_max_memory`].
    pub max_memory: usize,
    /// Stops the run when set (Ctrl-C, a cancelled request): checked between
    /// nodes and in the outer loops of long kernels ([`ops::guard`]). The run
    /// ends with an [`ErrorKind::Interrupted`] error and its memory is freed.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Stops the run at this time, as `interrupt` does, with an
    /// [`ErrorKind::Timeout`] error.
    pub deadline: Option<Instant>,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            base_dir: PathBuf::from("."),
            max_depth: DEFAULT_MAX_DEPTH,
            check_nan: false,
            max_memory: tensor::limits::default_max_memory(),
            interrupt: None,
            deadline: None,
        }
    }
}

impl ExecOptions {
    fn stop(&self) -> ops::guard::Stop {
        ops::guard::Stop {
            flag: self.interrupt.clone(),
            deadline: self.deadline,
        }
    }
}

/// A top-level graph with its nested graphs.
struct Item {
    name: Arc<str>,
    body: Arc<Body>,
    scope: u32,
    info: Option<Arc<BodyInfo>>,
    plans: Vec<Option<Arc<Plan>>>,
}

/// Names of top-level graphs: the program's (scope 0), or those one
/// differentiation made, which see their parent scope's too.
struct Scope {
    names: HashMap<String, u32>,
    parent: Option<u32>,
}

struct Frame {
    item: u32,
    plan: Arc<Plan>,
    slots: Vec<Option<Value>>,
    env: Arc<[Value]>,
    pc: usize,
}

enum Outcome {
    Value(Value),
    Call(Frame),
}

#[derive(Clone, PartialEq, Eq, Hash)]
enum GradKey {
    /// With what is known of the arguments (dtypes, shapes), which autodiff
    /// uses (e.g. `Cast`'s gradient needs the input dtype).
    Graph(u32, GraphId, MetaFn, Option<Vec<AbsVal>>),
    Prim(PrimRef, usize, MetaFn),
}

/// Runs the graphs of one program.
pub struct Executor {
    items: Vec<Item>,
    scopes: Vec<Scope>,
    weights: Vec<WeightDef>,
    weight_ids: HashMap<String, u32>,
    weight_values: Vec<Option<Value>>,
    grad_cache: HashMap<GradKey, u32>,
    backend: Box<dyn Backend>,
    options: ExecOptions,
    memory: Arc<MemCounter>,
    deepest: usize,
    stop: ops::guard::Stop,
    steps: u64,
    compiled: compile::Cache,
    observer: Option<Box<dyn observe::Observer>>,
    /// What the transforms chose (how each `vmap` was made), for `--verbose`.
    transform_notes: Vec<String>,
}

impl Executor {
    pub fn new(program: &Program, options: ExecOptions) -> Executor {
        Executor::with_backend(program, options, Box::new(CpuBackend))
    }

    pub fn with_backend(
        program: &Program,
        options: ExecOptions,
        backend: Box<dyn Backend>,
    ) -> Executor {
        let stop = options.stop();
        let mut ex = Executor {
            items: Vec::new(),
            scopes: vec![Scope {
                names: HashMap::new(),
                parent: None,
            }],
            weights: program.weights.clone(),
            weight_ids: program
                .weights
                .iter()
                .enumerate()
                .map(|(i, w)| (w.name.clone(), i as u32))
                .collect(),
            weight_values: vec![None; program.weights.len()],
            grad_cache: HashMap::new(),
            backend,
            options,
            memory: Arc::new(MemCounter::default()),
            deepest: 0,
            stop,
            steps: 0,
            compiled: compile::Cache::default(),
            observer: None,
            transform_notes: Vec::new(),
        };
        for (name, body) in &program.graphs {
            ex.add_item(name, body.clone(), 0);
        }
        ex
    }

    fn add_item(&mut self, name: &str, body: Arc<Body>, scope: u32) -> u32 {
        let id = self.items.len() as u32;
        let n = body.graphs.len();
        self.items.push(Item {
            name: Arc::from(name),
            body,
            scope,
            info: None,
            plans: vec![None; n],
        });
        self.scopes[scope as usize]
            .names
            .entry(name.to_string())
            .or_insert(id);
        id
    }

    fn flag_set(&self) -> bool {
        self.stop
            .flag
            .as_ref()
            .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// An error when the run has been asked to stop (interrupted, or past its
    /// deadline).
    pub(crate) fn check_stop(&self) -> Result<(), RunError> {
        if self.flag_set() {
            return Err(RunError::new(ErrorKind::Interrupted, "interrupted"));
        }
        if self.stop.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(RunError::new(
                ErrorKind::Timeout,
                "the run did not finish within its time limit",
            ));
        }
        Ok(())
    }

    /// An error unless `bytes` more fit in the memory budget; `what` names
    /// what would take them (`\`Mul\`'s result f32[2, 3]`).
    pub fn reserve(&self, what: &str, bytes: usize) -> Result<(), RunError> {
        let used = self.memory.stats().current_bytes;
        let budget = self.options.max_memory;
        if bytes > budget.saturating_sub(used) {
            use tensor::limits::format_bytes;
            let mut e = RunError::new(
                ErrorKind::Memory,
                format!(
                    "{what} needs {} ({bytes} bytes), more than the memory budget allows: {} in all, {} in use",
                    format_bytes(bytes),
                    format_bytes(budget),
                    format_bytes(used)
                ),
            );
            e.notes.push(
                "`mirdsl run --max-memory SIZE` sets the budget (default: half of the memory this process may use)"
                    .into(),
            );
            return Err(e);
        }
        Ok(())
    }

    /// Sets (or clears) the time the run must stop at (`--timeout`).
    pub fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.options.deadline = deadline;
        self.stop = self.options.stop();
    }

    /// Bytes the memory budget still allows.
    pub fn available_memory(&self) -> usize {
        self.options
            .max_memory
            .saturating_sub(self.memory.stats().current_bytes)
    }

    /// Bytes of live tensors now and at most so far.
    pub fn memory(&self) -> MemStats {
        self.memory.stats()
    }

    pub fn memory_counter(&self) -> &Arc<MemCounter> {
        &self.memory
    }

    /// The deepest graph-call nesting seen.
    pub fn deepest_call(&self) -> usize {
        self.deepest
    }

    pub fn options(&self) -> &ExecOptions {
        &self.options
    }

    /// A tensor counted by this executor's memory counter.
    pub fn tensor(&self, t: tensor::Tensor) -> Value {
        Value::Tensor(TensorVal::new(t, Some(&self.memory)))
    }

    /// A scalar counted by this executor's memory counter.
    pub fn scalar(&self, t: tensor::Tensor) -> Value {
        Value::Tensor(TensorVal::new_scalar(t, false, Some(&self.memory)))
    }

    /// The top-level graph `name` as a function value.
    pub fn graph_value(&self, name: &str) -> Option<Value> {
        let item = *self.scopes[0].names.get(name)?;
        Some(self.item_value(item))
    }

    fn item_value(&self, item: u32) -> Value {
        let it = &self.items[item as usize];
        Value::func(Func::Graph(Closure {
            item,
            graph: GraphId(0),
            env: Arc::from(Vec::new()),
            name: Arc::from(it.body.graph(GraphId(0)).name.as_str()),
        }))
    }

    /// Runs top-level graph `entry` on `args`.
    pub fn call(&mut self, entry: &str, args: Vec<Value>) -> Result<Value, RunError> {
        let f = self
            .graph_value(entry)
            .ok_or_else(|| RunError::new(ErrorKind::Input, format!("no graph `{entry}`")))?;
        self.call_value(f, args)
    }

    /// Applies a function value to `args`.
    pub fn call_value(&mut self, f: Value, args: Vec<Value>) -> Result<Value, RunError> {
        let mut stack: Vec<Frame> = Vec::new();
        let first = self.apply(f, args);
        match first {
            Ok(Outcome::Value(v)) => return Ok(v),
            Ok(Outcome::Call(frame)) => {
                stack.push(frame);
                self.deepest = self.deepest.max(1);
            }
            Err(e) => return Err(e),
        }
        match self.run(&mut stack) {
            Ok(v) => Ok(v),
            Err(e) => {
                let e = self.with_trace(e, &stack);
                if self.observer.is_some() && e.kind != ErrorKind::Interrupted {
                    self.observe_fault(&stack, &e);
                }
                Err(e)
            }
        }
    }

    fn node_span(&self, item: u32, node: NodeId) -> Option<TextRange> {
        self.items[item as usize].body.node(node).span
    }

    /// Adds the call stack to an error, and a span from the nearest call site
    /// when the failing node has none (generated graphs).
    fn with_trace(&self, mut e: RunError, stack: &[Frame]) -> RunError {
        let mut trace = Vec::new();
        for i in (1..stack.len()).rev() {
            let parent = &stack[i - 1];
            let site = parent
                .pc
                .checked_sub(1)
                .and_then(|pc| parent.plan.steps.get(pc))
                .and_then(|s| self.node_span(parent.item, s.node));
            trace.push(TraceEntry {
                graph: stack[i].plan.name.to_string(),
                call_site: site,
            });
        }
        if e.span.is_none() {
            if let Some((k, t)) = trace
                .iter()
                .enumerate()
                .find(|(_, t)| t.call_site.is_some())
            {
                e.span = t.call_site;
                if k > 0 || stack.last().is_some_and(|f| self.is_generated(f)) {
                    e.notes.push(format!(
                        "raised inside `{}`, a generated graph",
                        trace[0].graph
                    ));
                }
            }
        }
        // Keep the trace short: the innermost calls, then the outermost one.
        if trace.len() > 12 {
            let last = trace.last().cloned();
            let skipped = trace.len() - 11;
            trace.truncate(10);
            e.notes.push(format!("... {skipped} more calls ..."));
            trace.extend(last);
        }
        e.trace = trace;
        e
    }

    fn is_generated(&self, f: &Frame) -> bool {
        self.items[f.item as usize].body.graph(f.plan.graph).origin == GraphOrigin::Generated
    }

    fn run(&mut self, stack: &mut Vec<Frame>) -> Result<Value, RunError> {
        loop {
            let frame = stack.last_mut().expect("a frame");
            let plan = frame.plan.clone();
            if frame.pc == plan.steps.len() {
                if self.observer.is_some() {
                    self.observe_before(stack, true)?;
                }
                let frame = stack.last_mut().expect("a frame");
                let v = match &plan.output {
                    Operand::Slot(s) => frame.slots[*s as usize]
                        .take()
                        .ok_or_else(|| RunError::internal("the output was never computed"))?,
                    op => self.operand(frame.item, &frame.slots, &frame.env, op)?,
                };
                stack.pop();
                match stack.last_mut() {
                    None => return Ok(v),
                    Some(parent) => {
                        let slot = parent.plan.steps[parent.pc - 1].slot;
                        parent.slots[slot as usize] = Some(v);
                    }
                }
                continue;
            }
            let step = &plan.steps[frame.pc];
            frame.pc += 1;
            let span = self.node_span(frame.item, step.node);
            self.steps += 1;
            // The flag costs a load; the clock is read every 256 steps.
            if self.stop.is_set() && (self.steps & 255 == 0 || self.flag_set()) {
                self.check_stop().map_err(|e| e.at(span))?;
            }
            let observed = self.observer.is_some();
            if observed {
                self.observe_before(stack, false).map_err(|e| e.at(span))?;
            }
            let frame = stack.last_mut().expect("a frame");
            if step.switch {
                // Only the chosen branch's closure is made.
                let cond = self
                    .operand(frame.item, &frame.slots, &frame.env, &step.inputs[1])
                    .and_then(|c| condition(&c))
                    .map_err(|e| e.at(span))?;
                let chosen = &step.inputs[if cond { 2 } else { 3 }];
                let v = self
                    .operand(frame.item, &frame.slots, &frame.env, chosen)
                    .map_err(|e| e.at(span))?;
                if !observed {
                    for &s in step.free.iter() {
                        frame.slots[s as usize] = None;
                    }
                }
                frame.slots[step.slot as usize] = Some(v);
                if observed {
                    self.observe_after(stack, &[]).map_err(|e| e.at(span))?;
                }
                continue;
            }
            let callee = self
                .operand(frame.item, &frame.slots, &frame.env, &step.inputs[0])
                .map_err(|e| e.at(span))?;
            let mut values = Vec::with_capacity(step.inputs.len() - 1);
            for op in step.inputs[1..].iter() {
                let v = self
                    .operand(frame.item, &frame.slots, &frame.env, op)
                    .map_err(|e| e.at(span))?;
                values.push(v);
            }
            if !observed {
                for &s in step.free.iter() {
                    frame.slots[s as usize] = None;
                }
            }
            let writes = effect_writes(&callee, &step.inputs).map_err(|e| e.at(span))?;
            match self.apply(callee, values).map_err(|e| e.at(span))? {
                Outcome::Value(v) if !writes.is_empty() => {
                    let v = self.store_writes(v, &writes).map_err(|e| e.at(span))?;
                    frame.slots[step.slot as usize] = Some(v);
                    if observed {
                        self.observe_after(stack, &writes).map_err(|e| e.at(span))?;
                    }
                }
                Outcome::Value(v) => {
                    frame.slots[step.slot as usize] = Some(v);
                    if observed {
                        self.observe_after(stack, &[]).map_err(|e| e.at(span))?;
                    }
                }
                Outcome::Call(f) => {
                    if stack.len() >= self.options.max_depth {
                        return Err(RunError::new(
                            ErrorKind::Recursion,
                            format!(
                                "recursion too deep: more than {} graph calls in progress (calling `{}`)",
                                self.options.max_depth, f.plan.name
                            ),
                        )
                        .at(span)
                        .with_note("a recursion that never reaches its base case, or one deeper than the limit (`--max-depth`)"));
                    }
                    stack.push(f);
                    self.deepest = self.deepest.max(stack.len());
                }
            }
        }
    }

    fn operand(
        &mut self,
        item: u32,
        slots: &[Option<Value>],
        env: &Arc<[Value]>,
        op: &Operand,
    ) -> Result<Value, RunError> {
        match op {
            Operand::Slot(s) => slots[*s as usize].clone().ok_or_else(|| {
                RunError::new(
                    ErrorKind::Unsupported,
                    "a nested graph uses a value before it is computed",
                )
            }),
            Operand::Env(i) => Ok(env[*i as usize].clone()),
            Operand::Const(v) => Ok(v.clone()),
            Operand::Weight(w) => self.weight(*w),
            Operand::Closure {
                graph,
                name,
                captures,
            } => {
                let mut values = Vec::with_capacity(captures.len());
                for c in captures.iter() {
                    values.push(self.operand(item, slots, env, c)?);
                }
                Ok(Value::func(Func::Graph(Closure {
                    item,
                    graph: *graph,
                    env: values.into(),
                    name: name.clone(),
                })))
            }
        }
    }

    /// Stores the new values a writing primitive returned (`(output, new...)`)
    /// into its weights; returns its output.
    fn store_writes(&mut self, v: Value, writes: &[u32]) -> Result<Value, RunError> {
        let Value::Tuple(items) = v else {
            return Err(RunError::internal("a writing primitive returned no tuple"));
        };
        if items.len() != writes.len() + 1 {
            return Err(RunError::internal(
                "a writing primitive returned too few values",
            ));
        }
        for (&w, new) in writes.iter().zip(items[1..].iter()) {
            self.weight_values[w as usize] = Some(new.clone());
        }
        Ok(items[0].clone())
    }

    /// Replaces the values of weights (`--load-weights`, a checkpoint).
    pub fn set_weight(&mut self, name: &str, value: Value) -> Result<(), RunError> {
        let w = *self
            .weight_ids
            .get(name)
            .ok_or_else(|| RunError::new(ErrorKind::Input, format!("no weight `{name}`")))?;
        self.weight_values[w as usize] = Some(value);
        Ok(())
    }

    /// Every weight's name and current value (initialising those not yet used).
    pub fn weights(&mut self) -> Result<Vec<(String, Value)>, RunError> {
        (0..self.weights.len() as u32)
            .map(|w| Ok((self.weights[w as usize].name.clone(), self.weight(w)?)))
            .collect()
    }

    fn weight(&mut self, w: u32) -> Result<Value, RunError> {
        if let Some(v) = &self.weight_values[w as usize] {
            return Ok(v.clone());
        }
        let def = &self.weights[w as usize];
        let budget = self.available_memory();
        let (t, scalar) = crate::weights::init_weight_within(def, &self.options.base_dir, budget)
            .map_err(|m| {
            RunError::new(
                ErrorKind::Weight,
                format!("cannot initialise weight `{}`: {m}", def.name),
            )
            .at(def.span)
        })?;
        let v = if scalar {
            self.scalar(t)
        } else {
            self.tensor(t)
        };
        self.weight_values[w as usize] = Some(v.clone());
        Ok(v)
    }

    /// The value of a weight, initialising it if needed.
    pub fn weight_value(&mut self, name: &str) -> Result<Value, RunError> {
        let w = *self
            .weight_ids
            .get(name)
            .ok_or_else(|| RunError::new(ErrorKind::Input, format!("no weight `{name}`")))?;
        self.weight(w)
    }

    fn resolve_global(&self, scope: u32, name: &str) -> Option<u32> {
        let mut s = Some(scope);
        while let Some(id) = s {
            if let Some(&item) = self.scopes[id as usize].names.get(name) {
                return Some(item);
            }
            s = self.scopes[id as usize].parent;
        }
        None
    }

    fn info(&mut self, item: u32) -> Arc<BodyInfo> {
        let it = &mut self.items[item as usize];
        if let Some(i) = &it.info {
            return i.clone();
        }
        let info = Arc::new(body_info(&it.body));
        it.info = Some(info.clone());
        info
    }

    fn plan(&mut self, item: u32, graph: GraphId) -> Result<Arc<Plan>, RunError> {
        if let Some(p) = self.items[item as usize]
            .plans
            .get(graph.0 as usize)
            .and_then(|p| p.as_ref())
        {
            return Ok(p.clone());
        }
        let info = self.info(item);
        let body = self.items[item as usize].body.clone();
        let scope = self.items[item as usize].scope;
        let env_index = &info.env_index[graph.0 as usize];
        let mut operand =
            |n: NodeId, slot_of: &HashMap<NodeId, u32>| -> Result<Operand, RunError> {
                self.node_operand(&body, &info, (item, scope), graph, env_index, slot_of, n)
            };
        let plan = Arc::new(build_plan(&body, graph, &mut operand)?);
        self.items[item as usize].plans[graph.0 as usize] = Some(plan.clone());
        Ok(plan)
    }

    #[allow(clippy::too_many_arguments)]
    fn node_operand(
        &self,
        body: &Body,
        info: &BodyInfo,
        (item, scope): (u32, u32),
        graph: GraphId,
        env_index: &HashMap<NodeId, u32>,
        slot_of: &HashMap<NodeId, u32>,
        n: NodeId,
    ) -> Result<Operand, RunError> {
        let node = body.node(n);
        match &node.kind {
            NodeKind::Param { .. } | NodeKind::Apply(_) => {
                if node.graph == Some(graph) {
                    slot_of
                        .get(&n)
                        .map(|&s| Operand::Slot(s))
                        .ok_or_else(|| RunError::internal("a node missing from its graph"))
                } else {
                    env_index.get(&n).map(|&i| Operand::Env(i)).ok_or_else(|| {
                        RunError::internal(format!(
                            "graph `{}` uses a value it did not capture",
                            body.graph(graph).name
                        ))
                    })
                }
            }
            NodeKind::Weight(name) => self
                .weight_ids
                .get(name)
                .map(|&w| Operand::Weight(w))
                .ok_or_else(|| {
                    RunError::new(ErrorKind::Weight, format!("no weight `{name}`")).at(node.span)
                }),
            NodeKind::Const(v) => match v {
                IrValue::Graph(h) => {
                    let name: Arc<str> = Arc::from(body.graph(*h).name.as_str());
                    let fvs = &info.env[h.0 as usize];
                    let captures = fvs
                        .iter()
                        .map(|&u| {
                            self.node_operand(
                                body,
                                info,
                                (item, scope),
                                graph,
                                env_index,
                                slot_of,
                                u,
                            )
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    if captures.is_empty() {
                        // Not a closure: make the function value once.
                        return Ok(Operand::Const(Value::func(Func::Graph(Closure {
                            item,
                            graph: *h,
                            env: Arc::from(Vec::new()),
                            name,
                        }))));
                    }
                    Ok(Operand::Closure {
                        graph: *h,
                        name,
                        captures: captures.into_boxed_slice(),
                    })
                }
                IrValue::Global(name) => match self.resolve_global(scope, name) {
                    Some(item) => Ok(Operand::Const(self.item_value(item))),
                    None => Err(RunError::new(
                        ErrorKind::Type,
                        format!("no top-level graph `{name}`"),
                    )
                    .at(node.span)),
                },
                other => Ok(Operand::Const(
                    self.constant(other).map_err(|e| e.at(node.span))?,
                )),
            },
        }
    }

    /// A constant's run-time value.
    pub fn constant(&self, v: &IrValue) -> Result<Value, RunError> {
        Ok(match v {
            IrValue::Scalar { value, dtype, weak } => Value::Tensor(TensorVal::new_scalar(
                scalar_tensor(*value, *dtype),
                *weak,
                Some(&self.memory),
            )),
            IrValue::Str(s) => Value::Str(Arc::from(s.as_str())),
            IrValue::None => Value::None,
            IrValue::Tuple(items) => Value::tuple(
                items
                    .iter()
                    .map(|i| self.constant(i))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            IrValue::Tensor(t) => self.tensor((**t).clone()),
            IrValue::Prim(p) => Value::func(Func::Prim(
                PrimFn::new(p.clone()).map_err(|m| RunError::new(ErrorKind::Type, m))?,
            )),
            IrValue::Meta(m) => Value::func(Func::MetaOp(m.clone())),
            IrValue::Type(t) => Value::Type(Arc::new(t.clone())),
            IrValue::Graph(_) | IrValue::Global(_) => {
                return Err(RunError::internal("a graph constant outside a graph"))
            }
            // The state token orders effects in the IR; at run time the plan's
            // source order already does, so it carries nothing.
            IrValue::Monad => Value::None,
        })
    }

    fn apply(&mut self, callee: Value, args: Vec<Value>) -> Result<Outcome, RunError> {
        let mut callee = callee;
        let mut args = args;
        loop {
            let Value::Func(f) = &callee else {
                return Err(RunError::new(
                    ErrorKind::Type,
                    format!(
                        "{} is not a function; it cannot be called",
                        callee.describe()
                    ),
                ));
            };
            let f = f.clone();
            match &*f {
                Func::Prim(p) if ops::composite::composite(&p.prim.name).is_some() => {
                    // A composite primitive runs its instance graph.
                    let item = self.composite_item(&p.prim)?;
                    let Value::Func(f) = self.item_value(item) else {
                        unreachable!("an item's value is a function")
                    };
                    let Func::Graph(c) = &*f else {
                        unreachable!("an item's value is a graph")
                    };
                    return self.enter(c, args).map(Outcome::Call);
                }
                Func::Prim(p) => return self.call_prim(p, args).map(Outcome::Value),
                Func::Graph(c) => {
                    if let Some(v) = self.try_compiled(c, &args) {
                        return v.map(Outcome::Value);
                    }
                    return self.enter(c, args).map(Outcome::Call);
                }
                Func::Partial { f, args: bound } => {
                    let mut all = bound.clone();
                    all.extend(args);
                    args = all;
                    callee = f.clone();
                }
                Func::MetaOp(meta) => {
                    if args.len() != 1 {
                        return Err(RunError::new(
                            ErrorKind::Type,
                            format!(
                                "`{}` takes one function, not {} arguments",
                                meta.name(),
                                args.len()
                            ),
                        ));
                    }
                    let f = args.pop().expect("one argument");
                    if !matches!(f, Value::Func(_)) {
                        return Err(RunError::new(
                            ErrorKind::Type,
                            format!(
                                "`{}` differentiates a function, not {}",
                                meta.name(),
                                f.describe()
                            ),
                        ));
                    }
                    return Ok(Outcome::Value(Value::func(Func::Meta {
                        meta: meta.clone(),
                        f,
                    })));
                }
                Func::Meta { meta, f } => {
                    let values = abstract_args(&args);
                    let (entry, extra) = self.differentiated(meta, f, args.len(), values)?;
                    args.extend(extra);
                    callee = entry;
                }
            }
        }
    }

    /// A frame for calling closure `c`.
    fn enter(&mut self, c: &Closure, args: Vec<Value>) -> Result<Frame, RunError> {
        let plan = self.plan(c.item, c.graph)?;
        if args.len() != plan.n_params {
            return Err(RunError::new(
                ErrorKind::Type,
                format!(
                    "`{}` takes {} argument{} but is given {}",
                    plan.name,
                    plan.n_params,
                    if plan.n_params == 1 { "" } else { "s" },
                    args.len()
                ),
            ));
        }
        let mut slots: Vec<Option<Value>> = Vec::with_capacity(plan.n_slots);
        slots.extend(args.into_iter().map(Some));
        slots.resize(plan.n_slots, None);
        if self.observer.is_none() {
            for &p in plan.unused_params.iter() {
                slots[p as usize] = None;
            }
        }
        Ok(Frame {
            item: c.item,
            plan,
            slots,
            env: c.env.clone(),
            pc: 0,
        })
    }
}

mod prims;
pub(crate) use prims::*;
