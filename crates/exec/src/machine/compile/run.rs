//! Running a compiled plan.

use std::sync::Arc;

use ir::TextRange;
use tensor::{Buffer, DType, Tensor};

use super::super::Executor;
use super::kernels::{FastKernel, Src};
use super::trace::{OutTree, RegInfo, SVal};
use crate::error::RunError;
use crate::value::{Func, MemCounter, TensorVal, Value};

/// Where a register's data lives while a plan runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Storage {
    /// A value of its own (arguments, weights, constants, results of the
    /// registry's kernels, the plan's outputs).
    Value,
    /// `f32` data at this offset of the plan's arena.
    Arena(usize),
    /// The data of another register, with this register's shape (a reshape).
    View(u32),
}

pub(crate) enum Op {
    LoadWeight {
        weight: u32,
        out: u32,
    },
    /// A primitive run by the registry's kernel, as the interpreter runs it.
    Registry {
        func: Arc<Func>,
        inputs: Vec<SVal>,
        out: OutTree,
        writes: Vec<u32>,
    },
    /// A kernel of this module on `f32` registers.
    Kernel {
        kernel: Box<dyn FastKernel>,
        ins: Vec<u32>,
        outs: Vec<u32>,
        /// Arena offset of the kernel's scratch space.
        scratch: usize,
    },
}

pub(crate) struct Step {
    pub op: Op,
    /// Registers holding values whose last use this step is.
    pub free: Vec<u32>,
    pub span: Option<TextRange>,
}

pub(crate) struct Compiled {
    pub name: Arc<str>,
    pub regs: Vec<RegInfo>,
    pub storage: Vec<Storage>,
    pub inputs: Vec<u32>,
    /// Constants with registers, bound when a run starts.
    pub consts: Vec<(u32, Value)>,
    pub steps: Vec<Step>,
    pub output: SVal,
    /// `f32` elements of the arena.
    pub arena_len: usize,
    pub writes_weights: bool,
    pub arena: Vec<f32>,
    /// The counter the arena's bytes are charged to while the plan holds it.
    pub counted: Option<Arc<MemCounter>>,
    /// Time spent in each step over all runs (`MIRDSL_PLAN_PROFILE=1`),
    /// printed when the plan is dropped.
    pub profile: Option<Vec<std::time::Duration>>,
    pub runs: usize,
}

impl Drop for Compiled {
    fn drop(&mut self) {
        if let Some(c) = &self.counted {
            c.free(self.arena.len() * 4);
        }
        if let Some(p) = &self.profile {
            let total: f64 = p.iter().map(|d| d.as_secs_f64()).sum();
            let runs = self.runs.max(1) as f64;
            eprintln!(
                "[plan] profile of `{}`: {} runs, {:.3} ms per run",
                self.name,
                self.runs,
                total * 1e3 / runs
            );
            let mut order: Vec<usize> = (0..p.len()).collect();
            order.sort_by(|&a, &b| p[b].cmp(&p[a]));
            for i in order.into_iter().take(40) {
                let what = match &self.steps[i].op {
                    Op::LoadWeight { .. } => "weight".to_string(),
                    Op::Registry { func, .. } => func.describe(),
                    Op::Kernel { kernel, .. } => kernel.name(),
                };
                eprintln!(
                    "  {:4} {:8.1} us {:5.1}%  {what}",
                    i,
                    p[i].as_secs_f64() * 1e6 / runs,
                    100.0 * p[i].as_secs_f64() / total.max(1e-12)
                );
            }
        }
    }
}

fn mismatch(what: &str) -> RunError {
    RunError::internal(format!(
        "a compiled plan met {what} it was not compiled for"
    ))
}

impl Compiled {
    pub fn describe(&self) -> String {
        let mut out = String::new();
        let reg = |r: u32| -> String {
            let i = &self.regs[r as usize];
            let place = match self.storage[r as usize] {
                Storage::Value => String::new(),
                Storage::Arena(o) => format!("@{o}"),
                Storage::View(b) => format!("=%{b}"),
            };
            format!("%{r}{place}:{}{:?}", i.dtype, i.shape)
        };
        for (i, s) in self.steps.iter().enumerate() {
            let line = match &s.op {
                Op::LoadWeight { weight, out } => format!("{} = weight {weight}", reg(*out)),
                Op::Registry {
                    func, inputs, out, ..
                } => {
                    let mut rs = Vec::new();
                    out.regs(&mut rs);
                    let mut ins = Vec::new();
                    inputs.iter().for_each(|x| x.regs(&mut ins));
                    format!(
                        "{} = {}({})",
                        rs.iter().map(|&r| reg(r)).collect::<Vec<_>>().join(", "),
                        func.describe(),
                        ins.iter()
                            .map(|r| format!("%{r}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
                Op::Kernel {
                    kernel, ins, outs, ..
                } => format!(
                    "{} = [{}]({})",
                    outs.iter().map(|&r| reg(r)).collect::<Vec<_>>().join(", "),
                    kernel.name(),
                    ins.iter()
                        .map(|r| format!("%{r}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            out.push_str(&format!("  {i:4} {line}\n"));
        }
        out.push_str(&format!(
            "  arena {:.1} KiB, {} steps\n",
            self.arena_len as f64 * 4.0 / 1024.0,
            self.steps.len()
        ));
        out
    }
}

struct State<'a> {
    regs: &'a [RegInfo],
    storage: &'a [Storage],
    vals: Vec<Option<Value>>,
    arena: *mut f32,
}

impl State<'_> {
    fn root(&self, mut r: u32) -> u32 {
        while let Storage::View(b) = self.storage[r as usize] {
            r = b;
        }
        r
    }

    fn src(&self, r: u32) -> Result<Src, RunError> {
        let root = self.root(r);
        match self.storage[root as usize] {
            Storage::Arena(off) => Ok(Src::F32(unsafe { self.arena.add(off) })),
            Storage::Value => match &self.vals[root as usize] {
                // A weight still in its memory-mapped file is read in place.
                Some(Value::Tensor(t)) if t.tensor().mapped_f32().is_some() => {
                    Ok(Src::F32(t.tensor().mapped_f32().expect("checked").as_ptr()))
                }
                Some(Value::Tensor(t)) => Ok(match t.tensor().buffer() {
                    Buffer::F32(v) => Src::F32(v.as_ptr()),
                    Buffer::F64(v) => Src::F64(v.as_ptr()),
                    Buffer::I64(v) => Src::I64(v.as_ptr()),
                    Buffer::Bool(v) => Src::Bool(v.as_ptr()),
                }),
                _ => Err(RunError::internal(
                    "a compiled plan read a register never written",
                )),
            },
            Storage::View(_) => unreachable!("resolved"),
        }
    }

    fn value(&self, v: &SVal) -> Result<Value, RunError> {
        Ok(match v {
            SVal::Reg(r) => match &self.vals[*r as usize] {
                Some(v) => v.clone(),
                None => {
                    return Err(RunError::internal(
                        "a compiled plan read a register never written",
                    ))
                }
            },
            SVal::Const(c) => c.clone(),
            SVal::Tuple(items) => Value::tuple(
                items
                    .iter()
                    .map(|i| self.value(i))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            _ => return Err(RunError::internal("a function in a compiled plan's data")),
        })
    }

    fn bind(&mut self, out: &OutTree, v: Value) -> Result<(), RunError> {
        match (out, v) {
            (OutTree::Reg(r), Value::Tensor(t)) => {
                if !self.regs[*r as usize].matches(&t) {
                    return Err(mismatch("a result"));
                }
                self.vals[*r as usize] = Some(Value::Tensor(t));
                Ok(())
            }
            (OutTree::Tuple(outs), Value::Tuple(items)) if outs.len() == items.len() => {
                for (o, i) in outs.iter().zip(items.iter()) {
                    self.bind(o, i.clone())?;
                }
                Ok(())
            }
            _ => Err(mismatch("a result")),
        }
    }
}

fn bind_input(
    vals: &mut [Option<Value>],
    regs: &[RegInfo],
    inputs: &[u32],
    k: &mut usize,
    v: &Value,
) -> Result<(), RunError> {
    match v {
        Value::Tensor(t) => {
            let r = *inputs.get(*k).ok_or_else(|| mismatch("an argument"))?;
            if !regs[r as usize].matches(t) {
                return Err(mismatch("an argument"));
            }
            vals[r as usize] = Some(v.clone());
            *k += 1;
        }
        Value::Tuple(items) => {
            for i in items.iter() {
                bind_input(vals, regs, inputs, k, i)?;
            }
        }
        _ => {}
    }
    Ok(())
}

pub(crate) fn run(
    ex: &mut Executor,
    plan: &mut Compiled,
    args: &[Value],
    env: &[Value],
) -> Result<Value, RunError> {
    // What the plan allocates beyond the registry's calls (which check the
    // budget themselves): its arena, when not yet held, and the kernels'
    // outputs outside it. Over the budget, the caller reruns the graph in the
    // interpreter, which names the op that does not fit.
    let arena_bytes = if plan.arena.len() < plan.arena_len {
        plan.arena_len.saturating_mul(4)
    } else {
        0
    };
    let owned_bytes = plan
        .steps
        .iter()
        .filter_map(|s| match &s.op {
            Op::Kernel { outs, .. } => Some(outs),
            _ => None,
        })
        .flatten()
        .filter(|&&r| !matches!(plan.storage[r as usize], Storage::Arena(_)))
        .fold(0usize, |acc, &r| {
            acc.saturating_add(plan.regs[r as usize].numel().saturating_mul(4))
        });
    ex.reserve(
        "a compiled plan's buffers",
        arena_bytes.saturating_add(owned_bytes),
    )?;
    if plan.arena.len() < plan.arena_len {
        if let Some(c) = &plan.counted {
            c.free(plan.arena.len() * 4);
        }
        plan.arena = vec![0.0; plan.arena_len];
        ex.memory.alloc(plan.arena_len * 4);
        plan.counted = Some(ex.memory.clone());
    }
    let mut st = State {
        regs: &plan.regs,
        storage: &plan.storage,
        vals: vec![None; plan.regs.len()],
        arena: plan.arena.as_mut_ptr(),
    };
    let mut k = 0;
    for v in args.iter().chain(env.iter()) {
        bind_input(&mut st.vals, &plan.regs, &plan.inputs, &mut k, v)?;
    }
    for (r, v) in &plan.consts {
        st.vals[*r as usize] = Some(v.clone());
    }
    let mut srcs: Vec<Src> = Vec::new();
    let mut dsts: Vec<*mut f32> = Vec::new();
    let mut owned: Vec<(u32, Vec<f32>)> = Vec::new();
    plan.runs += 1;
    for (k, step) in plan.steps.iter().enumerate() {
        // Ctrl-C, `--timeout` and a server's cancellation stop a plan between
        // its steps, as they stop the interpreter between nodes.
        ex.check_stop()?;
        let started = plan.profile.as_ref().map(|_| std::time::Instant::now());
        match &step.op {
            Op::LoadWeight { weight, out } => {
                let v = ex.weight(*weight)?;
                match &v {
                    Value::Tensor(t) if plan.regs[*out as usize].matches(t) => {}
                    _ => return Err(mismatch("a weight")),
                }
                st.vals[*out as usize] = Some(v);
            }
            Op::Registry {
                func,
                inputs,
                out,
                writes,
            } => {
                let Func::Prim(p) = &**func else {
                    return Err(RunError::internal("a compiled call of a non-primitive"));
                };
                let values = inputs
                    .iter()
                    .map(|i| st.value(i))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut v = ex.call_prim(p, values).map_err(|e| e.at(step.span))?;
                if !writes.is_empty() {
                    v = ex.store_writes(v, writes).map_err(|e| e.at(step.span))?;
                }
                st.bind(out, v)?;
            }
            Op::Kernel {
                kernel,
                ins,
                outs,
                scratch,
            } => {
                srcs.clear();
                for &r in ins {
                    srcs.push(st.src(r)?);
                }
                dsts.clear();
                owned.clear();
                for &r in outs {
                    match plan.storage[r as usize] {
                        Storage::Arena(off) => dsts.push(unsafe { st.arena.add(off) }),
                        _ => {
                            let n = plan.regs[r as usize].numel();
                            let mut v: Vec<f32> = Vec::with_capacity(n);
                            // SAFETY: kernels write every element of their outputs.
                            #[allow(clippy::uninit_vec)]
                            unsafe {
                                v.set_len(n)
                            };
                            dsts.push(v.as_mut_ptr());
                            owned.push((r, v));
                        }
                    }
                }
                // SAFETY: the memory plan gives outputs places that overlap no
                // input still to be read (or exactly the input an in-place
                // kernel declared), and every pointer covers its register.
                unsafe { kernel.run(&srcs, &dsts, st.arena.add(*scratch)) }.map_err(|m| {
                    RunError::internal(format!("`{}`: {m}", kernel.name())).at(step.span)
                })?;
                for (r, v) in owned.drain(..) {
                    let info = &plan.regs[r as usize];
                    let t = Tensor::new(DType::F32, info.shape.clone(), Buffer::F32(v))
                        .expect("the register's shape");
                    let mut tv = TensorVal::new(t, Some(&ex.memory));
                    tv.scalar = info.scalar;
                    tv.weak = info.weak;
                    st.vals[r as usize] = Some(Value::Tensor(tv));
                }
            }
        }
        for &r in &step.free {
            st.vals[r as usize] = None;
        }
        if let (Some(t), Some(p)) = (started, plan.profile.as_mut()) {
            p[k] += t.elapsed();
        }
    }
    let out = st.value(&plan.output)?;
    Ok(out)
}
