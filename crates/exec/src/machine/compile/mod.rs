//! Compiled plans: a graph call specialised to its argument types, compiled
//! once and reused (as XLA's `jit` or TVM's graph executor).
//!
//! When the executor calls a graph, it first asks this module for a plan for
//! `(graph, argument dtypes and shapes)`. Compiling traces the call
//! ([`trace`]): every graph it calls is inlined, closures, partial
//! applications, tuples, `Switch` on a condition known at compile time and
//! `grad`/`value_and_grad` are resolved, and each primitive's shape rule runs
//! once, so what is left is a flat list of primitive calls on tensors of
//! known shapes. That list is then lowered ([`lower`]): elementwise chains
//! are fused into single loops, GEMMs take scalings and accumulations as
//! epilogues, patterns such as softmax cross entropy with its gradient get
//! one kernel, and every intermediate tensor gets a place in one arena by a
//! static memory plan ([`memory`]: reuse by liveness, in place when an
//! elementwise input dies). The runtime ([`run`]) then only runs kernels.
//!
//! A call that cannot be traced falls back to the interpreter, cleanly: data
//! dependent `Switch`, recursion, closures or functions escaping as values,
//! shapes that depend on data. The graphs such a call makes are themselves
//! candidates, so the static regions of a dynamic program are compiled.
//!
//! Effects (weight updates: `Assign`, optimizers) keep their order: the
//! trace keeps the program's order of calls, a weight is read where the
//! interpreter reads it, and nothing is fused or moved across an effect.
//!
//! A plan that fails at run time (a kernel error) is never trusted again: the
//! weights it wrote are restored and the call reruns in the interpreter, which
//! reports the error with its full trace.

mod conv_kernels;
mod fused;
mod kernels;
mod lower;
mod memory;
mod nn_kernels;
mod ops_kernels;
mod run;
mod team;
mod trace;

use std::collections::{HashMap, HashSet};

use tensor::DType;

use super::Executor;
use crate::error::{ErrorKind, RunError};
use crate::value::{Closure, Value};

/// What is known of an argument when a plan is chosen.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Sig {
    Tensor {
        dtype: DType,
        shape: Box<[usize]>,
        scalar: bool,
        weak: bool,
    },
    Tuple(Box<[Sig]>),
    None,
    Str(Box<str>),
}

fn sig_of(v: &Value) -> Option<Sig> {
    Some(match v {
        Value::Tensor(t) => Sig::Tensor {
            dtype: t.dtype(),
            shape: t.tensor().shape().into(),
            scalar: t.scalar,
            weak: t.weak,
        },
        Value::Tuple(items) => Sig::Tuple(items.iter().map(sig_of).collect::<Option<_>>()?),
        Value::None => Sig::None,
        Value::Str(s) => Sig::Str(s.as_ref().into()),
        Value::Func(_) | Value::Type(_) => return None,
    })
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    item: u32,
    graph: u32,
    args: Box<[Sig]>,
}

enum Entry {
    Ready(Box<run::Compiled>),
    /// Being run (a plan never calls back into the interpreter, so this is
    /// only a guard).
    Running,
    Failed,
}

/// Compiled plans of one executor.
pub(crate) struct Cache {
    enabled: bool,
    plans: HashMap<Key, Entry>,
    /// Graphs whose calls are never compiled (data-dependent control flow,
    /// recursion): checked before a key is even built.
    never: HashSet<(u32, u32)>,
    debug: bool,
    stats: PlanStats,
}

impl Default for Cache {
    fn default() -> Self {
        Cache {
            enabled: std::env::var_os("MIRDSL_INTERPRET").is_none_or(|v| v.is_empty() || v == "0"),
            plans: HashMap::new(),
            never: HashSet::new(),
            debug: std::env::var_os("MIRDSL_PLAN_DEBUG").is_some_and(|v| !v.is_empty() && v != "0"),
            stats: PlanStats::default(),
        }
    }
}

/// How many calls ran compiled plans, and how many plans were made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanStats {
    /// Plans compiled.
    pub compiled: usize,
    /// Calls that could not be compiled (they ran in the interpreter).
    pub declined: usize,
    /// Calls that ran a compiled plan.
    pub runs: usize,
    /// Plans that failed at run time and were rerun in the interpreter.
    pub fallbacks: usize,
}

impl Executor {
    /// Whether graph calls run compiled plans where they can (the default;
    /// `MIRDSL_INTERPRET=1` in the environment turns them off). With `false`
    /// every call runs in the interpreter.
    pub fn set_compile(&mut self, on: bool) {
        self.compiled.enabled = on;
    }

    /// Counters of the compiled-plan cache.
    pub fn plan_stats(&self) -> PlanStats {
        self.compiled.stats
    }

    /// The names of the kernels the ready plans run (in no fixed order
    /// between plans), as `MIRDSL_PLAN_PROFILE` prints them: what a test
    /// asserts to know which kernel a pattern chose.
    pub fn plan_kernels(&self) -> Vec<String> {
        let mut out = Vec::new();
        for entry in self.compiled.plans.values() {
            if let Entry::Ready(plan) = entry {
                for step in &plan.steps {
                    if let run::Op::Kernel { kernel, .. } = &step.op {
                        out.push(kernel.name());
                    }
                }
            }
        }
        out
    }

    /// A compiled run of closure `c` on `args`, or `None` when the call must
    /// run in the interpreter.
    pub(super) fn try_compiled(
        &mut self,
        c: &Closure,
        args: &[Value],
    ) -> Option<Result<Value, RunError>> {
        // Plans run the CPU's own kernels: on a device backend every
        // primitive goes to the backend, one call at a time.
        if !self.compiled.enabled
            || self.backend.device() != crate::backend::Device::Cpu
            || self.options.check_nan
            || self.observer.is_some()
            || self.compiled.never.contains(&(c.item, c.graph.0))
        {
            return None;
        }
        let sigs = args
            .iter()
            .chain(c.env.iter())
            .map(sig_of)
            .collect::<Option<Box<[Sig]>>>()?;
        let key = Key {
            item: c.item,
            graph: c.graph.0,
            args: sigs,
        };
        let mut plan = match self.compiled.plans.get_mut(&key) {
            Some(e @ Entry::Ready(_)) => match std::mem::replace(e, Entry::Running) {
                Entry::Ready(p) => p,
                _ => unreachable!(),
            },
            Some(_) => return None,
            None => match trace::trace(self, c, args) {
                Ok(graph) => {
                    let plan = lower::lower(self, graph);
                    if self.compiled.debug {
                        eprintln!("[plan] compiled `{}`:\n{}", c.name, plan.describe());
                    }
                    self.compiled.stats.compiled += 1;
                    Box::new(plan)
                }
                Err(bail) => {
                    if self.compiled.debug {
                        eprintln!("[plan] `{}` runs in the interpreter: {}", c.name, bail.why);
                    }
                    self.compiled.stats.declined += 1;
                    if bail.structural {
                        self.compiled.never.insert((c.item, c.graph.0));
                    }
                    self.compiled.plans.insert(key, Entry::Failed);
                    return None;
                }
            },
        };
        let snapshot = plan.writes_weights.then(|| self.weight_values.clone());
        // The plan runs on a thread of rayon's pool, so its kernels' parallel
        // parts are spawned locally: the thread that spawned a part runs it
        // itself when the other threads are busy, instead of waiting to be
        // woken (which, on a loaded machine, costs more than the part).
        let env = &c.env;
        let result = if rayon::current_thread_index().is_some() {
            run::run(self, &mut plan, args, env)
        } else {
            let (ex, plan) = (&mut *self, &mut plan);
            rayon::scope(move |_| run::run(ex, plan, args, env))
        };
        match result {
            Ok(v) => {
                self.compiled.stats.runs += 1;
                self.compiled.plans.insert(key, Entry::Ready(plan));
                Some(Ok(v))
            }
            Err(e) => {
                if self.compiled.debug {
                    eprintln!(
                        "[plan] `{}` failed at run time ({}); rerunning in the interpreter",
                        c.name, e.message
                    );
                }
                if let Some(w) = snapshot {
                    self.weight_values = w;
                }
                if matches!(e.kind, ErrorKind::Interrupted | ErrorKind::Timeout) {
                    // Asked to stop: the plan stays usable, nothing reruns.
                    self.compiled.plans.insert(key, Entry::Ready(plan));
                    return Some(Err(e));
                }
                self.compiled.stats.fallbacks += 1;
                self.compiled.plans.insert(key, Entry::Failed);
                None
            }
        }
    }
}
