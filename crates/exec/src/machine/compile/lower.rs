//! Lowering a trace to a plan: kernel selection, fusion, storage and the
//! memory plan.
//!
//! 1. Identities are removed (`x * 1`, a cast to the same dtype, a reshape to
//!    the same shape).
//! 2. Patterns become single kernels: a GEMM takes a following scaling by a
//!    constant or an `Add` of a same-shaped tensor as its epilogue (`beta`,
//!    accumulation into the output); the loss and the gradient of softmax
//!    cross entropy on the same logits share one pass; reductions, softmax,
//!    layer and batch normalisation, convolutions and pooling get this
//!    module's kernels on `f32`.
//! 3. Elementwise primitives on one shape are grouped (XLA's loop fusion): a
//!    producer joins its consumer's group when the consumer is its only user,
//!    within one effect epoch. A group runs at its last member's place.
//! 4. Storage: what this module's kernels make lives in the arena unless a
//!    registry kernel or the caller needs it as a value; reshapes are views.
//! 5. The memory plan ([`super::memory`]) gives arena offsets.
//!
//! Everything else runs the registry's kernel, exactly as the interpreter.

use std::collections::HashMap;
use std::sync::Arc;

use ops::defs::elementwise::binary::DIV;
use ops::defs::elementwise::{MUL, REAL_DIV};
use ops::{AttrValue, Family, MatMulForm};
use tensor::DType;

use super::super::Executor;
use super::fused::{broadcast_strides, collapse, EOp, Fused, InputLayout};
use super::kernels::{Concurrent, FastKernel, Gemm};
use super::memory::{self, StepUse};
use super::ops_kernels as ok;
use super::run::{Compiled, Op, Step, Storage};
use super::trace::{Node, NodeKind, OutTree, RegInfo, SVal, Traced};
use crate::value::{Func, Value};

/// What a node became.
enum Low {
    Weight {
        weight: u32,
        out: u32,
    },
    Registry,
    /// `out` is `src`'s data with another shape.
    View {
        out: u32,
        src: u32,
    },
    /// A fusible elementwise operation.
    Elem(Elem),
    Kernel {
        kernel: Box<dyn FastKernel>,
        ins: Vec<u32>,
        outs: Vec<u32>,
    },
    /// Folded into another node's kernel, or an identity.
    Gone,
}

/// One elementwise operation: its output and what it computes from inputs.
struct Elem {
    out: u32,
    op: ElemOp,
    /// Register inputs with their broadcast strides over the output shape, or
    /// constants.
    args: Vec<Arg>,
}

#[derive(Clone)]
enum Arg {
    Reg(u32, Vec<usize>),
    Const(f32),
}

#[derive(Clone, Copy)]
enum ElemOp {
    /// An op's formula (from its record), with the op's name and attribute
    /// values.
    F(&'static ops::formula::Formula, &'static str, [f64; 2]),
    /// Non-zero to 1 (a cast to bool).
    Truth,
    Select,
    Identity,
}

struct Lowering<'a> {
    regs: Vec<RegInfo>,
    nodes: &'a [Node],
    low: Vec<Low>,
    /// Readers (node indices) of each register.
    users: Vec<Vec<usize>>,
    is_output: Vec<bool>,
    /// Constants given registers, bound when the plan starts.
    consts: Vec<(u32, Value)>,
    /// Nodes folded into an earlier node's kernel.
    absorbed: Vec<bool>,
}

fn scalar_const(v: &SVal) -> Option<f64> {
    match v {
        SVal::Const(Value::Tensor(t)) if t.tensor().numel() == 1 && t.dtype() != DType::Bool => {
            t.item_f64()
        }
        SVal::Const(Value::Tensor(t)) if t.tensor().numel() == 1 => t.item_f64(),
        _ => None,
    }
}

fn out_reg(n: &Node) -> Option<u32> {
    match n.out {
        OutTree::Reg(r) => Some(r),
        _ => None,
    }
}

fn reg_of(v: &SVal) -> Option<u32> {
    match v {
        SVal::Reg(r) => Some(*r),
        _ => None,
    }
}

fn attr_bool(p: &crate::value::PrimFn, name: &str) -> bool {
    matches!(p.attrs.get(name), Some(AttrValue::Bool(true)))
}

pub(crate) fn lower(ex: &mut Executor, t: Traced) -> Compiled {
    let _ = ex;
    let Traced {
        regs,
        inputs,
        nodes,
        output,
        name,
    } = t;
    let n_regs = regs.len();
    // Identities first: their outputs are their inputs.
    let mut subst: Vec<u32> = (0..n_regs as u32).collect();
    for n in nodes.iter() {
        if let Some((out, src)) = identity(&regs, n) {
            subst[out as usize] = src;
        }
    }
    let resolve = |subst: &[u32], mut r: u32| {
        while subst[r as usize] != r {
            r = subst[r as usize];
        }
        r
    };
    let nodes: Vec<Node> = nodes
        .into_iter()
        .map(|n| {
            let kind = match n.kind {
                NodeKind::Prim {
                    func,
                    inputs,
                    writes,
                } => NodeKind::Prim {
                    func,
                    inputs: inputs
                        .iter()
                        .map(|v| substitute(v, &subst, &resolve))
                        .collect(),
                    writes,
                },
                k => k,
            };
            Node { kind, ..n }
        })
        .collect();
    let output = substitute(&output, &subst, &resolve);
    let mut l = Lowering {
        regs,
        nodes: &nodes,
        low: Vec::with_capacity(nodes.len()),
        users: vec![Vec::new(); n_regs],
        is_output: vec![false; n_regs],
        consts: Vec::new(),
        absorbed: vec![false; nodes.len()],
    };
    let mut outs = Vec::new();
    output.regs(&mut outs);
    for r in outs {
        l.is_output[r as usize] = true;
    }
    for (i, n) in nodes.iter().enumerate() {
        let mut rs = Vec::new();
        n.inputs().iter().for_each(|v| v.regs(&mut rs));
        rs.sort_unstable();
        rs.dedup();
        for r in rs {
            l.users[r as usize].push(i);
        }
    }
    for (i, n) in nodes.iter().enumerate() {
        let low = if subst_out(&subst, n) || l.absorbed[i] {
            Low::Gone
        } else {
            l.select(i, n)
        };
        l.low.push(low);
    }
    l.epilogues();
    l.pair_gemms();
    let groups = l.group();
    l.finish(groups, inputs, output, name)
}

fn substitute(v: &SVal, subst: &[u32], resolve: &impl Fn(&[u32], u32) -> u32) -> SVal {
    match v {
        SVal::Reg(r) => SVal::Reg(resolve(subst, *r)),
        SVal::Tuple(items) => SVal::Tuple(
            items
                .iter()
                .map(|i| substitute(i, subst, resolve))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Whether node `n`'s output was replaced by an input (an identity).
fn subst_out(subst: &[u32], n: &Node) -> bool {
    matches!(out_reg(n), Some(r) if subst[r as usize] != r)
}

/// A view the plans may alias: not a weight's `Load`, whose value the
/// effect order fixes.
fn is_view(op: &ops::OpDef) -> bool {
    op.category != ops::Category::State
}

/// `(output, input)` when a node computes its input unchanged.
fn identity(regs: &[RegInfo], n: &Node) -> Option<(u32, u32)> {
    let p = n.prim()?;
    let out = out_reg(n)?;
    let ins = n.inputs();
    let same = |r: u32| regs[r as usize] == regs[out as usize];
    let op = p.op?;
    let formula = op.traits.formula;
    match op.traits.family {
        // `x * 1` (`Mul`, `Muls`: one formula).
        _ if formula == Some(&MUL) && ins.len() == 2 => {
            for (a, b) in [(0, 1), (1, 0)] {
                if let (Some(r), Some(c)) = (reg_of(&ins[a]), scalar_const(&ins[b])) {
                    if c == 1.0 && same(r) && regs[r as usize].dtype == DType::F32 {
                        return Some((out, r));
                    }
                }
            }
            None
        }
        // `x / 1`.
        _ if (formula == Some(&REAL_DIV) || formula == Some(&DIV)) && ins.len() == 2 => {
            let r = reg_of(&ins[0])?;
            (scalar_const(&ins[1]) == Some(1.0) && same(r) && regs[r as usize].dtype == DType::F32)
                .then_some((out, r))
        }
        Family::Cast | Family::View if is_view(op) && !ins.is_empty() => {
            let r = reg_of(&ins[0])?;
            same(r).then_some((out, r))
        }
        _ => None,
    }
}

impl Lowering<'_> {
    fn info(&self, r: u32) -> &RegInfo {
        &self.regs[r as usize]
    }

    fn const_reg(&mut self, v: &Value) -> Option<u32> {
        let Value::Tensor(t) = v else { return None };
        self.regs.push(RegInfo::of(t));
        self.users.push(Vec::new());
        self.is_output.push(false);
        let r = (self.regs.len() - 1) as u32;
        self.consts.push((r, v.clone()));
        Some(r)
    }

    fn select(&mut self, i: usize, n: &Node) -> Low {
        let (p, writes) = match &n.kind {
            NodeKind::LoadWeight { weight } => {
                return Low::Weight {
                    weight: *weight,
                    out: out_reg(n).expect("a weight is one register"),
                }
            }
            NodeKind::Prim { func, writes, .. } => match &**func {
                Func::Prim(p) => (p, writes),
                _ => return Low::Registry,
            },
        };
        if !writes.is_empty() {
            return Low::Registry;
        }
        let ins = n.inputs();
        if let Some(e) = self.elementwise(n, p) {
            return Low::Elem(e);
        }
        match p.op.map(|op| op.traits.family) {
            Some(Family::View) if p.op.is_some_and(is_view) => {
                if let (Some(src), Some(out)) = (ins.first().and_then(reg_of), out_reg(n)) {
                    if self.info(src).dtype == DType::F32
                        && self.info(src).numel() == self.info(out).numel()
                    {
                        return Low::View { out, src };
                    }
                }
                Low::Registry
            }
            Some(Family::MatMul {
                form: MatMulForm::Transposes,
                batched,
            }) => self.gemm(n, p, batched),
            _ => match ok::select(self.nodes, i, n, p, &self.regs) {
                Some(c) => {
                    for a in c.absorbs {
                        self.absorbed[a] = true;
                    }
                    let ins = c
                        .ins
                        .into_iter()
                        .map(|a| match a {
                            ok::In::Reg(r) => Some(r),
                            ok::In::Const(v) => self.const_reg(&v),
                        })
                        .collect::<Option<Vec<_>>>();
                    match ins {
                        Some(ins) => Low::Kernel {
                            kernel: c.kernel,
                            ins,
                            outs: c.outs,
                        },
                        None => Low::Registry,
                    }
                }
                None => Low::Registry,
            },
        }
    }

    /// An argument of an elementwise operation producing `out`.
    fn arg(&mut self, v: &SVal, out: &[usize]) -> Option<Arg> {
        match v {
            SVal::Reg(r) => {
                let i = self.info(*r);
                if !matches!(i.dtype, DType::F32 | DType::Bool) {
                    return None;
                }
                if ops::kernel::broadcast_shape(&i.shape, out).as_deref() != Some(out) {
                    return None;
                }
                Some(Arg::Reg(*r, broadcast_strides(&i.shape, out)))
            }
            SVal::Const(Value::Tensor(t)) if t.tensor().numel() == 1 => {
                Some(Arg::Const(t.item_f64()? as f32))
            }
            SVal::Const(c @ Value::Tensor(t)) if t.dtype() == DType::F32 => {
                let shape = t.tensor().shape().to_vec();
                if ops::kernel::broadcast_shape(&shape, out).as_deref() != Some(out) {
                    return None;
                }
                let r = self.const_reg(c)?;
                Some(Arg::Reg(r, broadcast_strides(&shape, out)))
            }
            _ => None,
        }
    }

    fn elementwise(&mut self, n: &Node, p: &crate::value::PrimFn) -> Option<Elem> {
        let out = out_reg(n)?;
        let oi = self.info(out).clone();
        let ins = n.inputs();
        if let Some(f) = p.op.and_then(|o| o.traits.formula) {
            return self.formula_elem(n, p, f, out, &oi);
        }
        let family = p.op.map(|op| op.traits.family);
        let (op, want_out) = match (family, ins.len()) {
            (Some(Family::Cast), 1) if oi.dtype == DType::F32 => {
                (Some(ElemOp::Identity), DType::F32)
            }
            (Some(Family::Cast), 1) => (Some(ElemOp::Truth), DType::Bool),
            (Some(Family::Select), 3) => {
                let abs = |v: &SVal| match v {
                    SVal::Reg(r) => self.info(*r).abs(),
                    SVal::Const(c) => c.abs(),
                    _ => ir::AbsVal::Any,
                };
                if ops::infer::promote(&abs(&ins[1]), &abs(&ins[2])) != Some(DType::F32) {
                    return None;
                }
                (Some(ElemOp::Select), DType::F32)
            }
            (Some(Family::BiasAdd), 2) => {
                let (x, b) = (reg_of(&ins[0])?, &ins[1]);
                let xi = self.info(x);
                if xi.dtype != DType::F32 || xi.shape != oi.shape || oi.shape.len() < 2 {
                    return None;
                }
                let format = match p.attrs.get("data_format") {
                    Some(AttrValue::Str(s)) => s.clone(),
                    _ => "NCHW".to_string(),
                };
                let axis = if format == "NHWC" {
                    oi.shape.len() - 1
                } else {
                    1
                };
                let bias = match b {
                    SVal::Reg(r) => *r,
                    SVal::Const(c) => self.const_reg(c)?,
                    _ => return None,
                };
                let bi = self.info(bias);
                if bi.dtype != DType::F32 || bi.shape != [oi.shape[axis]] || oi.dtype != DType::F32
                {
                    return None;
                }
                let mut strides = vec![0; oi.shape.len()];
                if oi.shape[axis] != 1 {
                    strides[axis] = 1;
                }
                return Some(Elem {
                    out,
                    // `x + bias`, the bias broadcast along the channels.
                    op: ElemOp::F(&ops::defs::elementwise::ADD, "BiasAdd", [0.0; 2]),
                    args: vec![
                        Arg::Reg(x, broadcast_strides(&oi.shape, &oi.shape)),
                        Arg::Reg(bias, strides),
                    ],
                });
            }
            _ => return None,
        };
        let op = op?;
        if oi.dtype != want_out
            || oi.scalar && oi.shape.is_empty() && ins.iter().all(|v| !matches!(v, SVal::Reg(_)))
        {
            return None;
        }
        let shape = oi.shape.clone();
        let args = ins
            .iter()
            .map(|v| self.arg(v, &shape))
            .collect::<Option<Vec<_>>>()?;
        Some(Elem { out, op, args })
    }

    /// An op computed by its formula: on `f32` (bools read as 0 and 1 where
    /// the operands promote to `f32`, or where a test reads them), giving
    /// `f32`, or `bool` for a test.
    fn formula_elem(
        &mut self,
        n: &Node,
        p: &crate::value::PrimFn,
        f: &'static ops::formula::Formula,
        out: u32,
        oi: &RegInfo,
    ) -> Option<Elem> {
        let ins = n.inputs();
        if ins.len() < f.arity || f.float.is_none() {
            return None;
        }
        let want_out = if f.test { DType::Bool } else { DType::F32 };
        if oi.dtype != want_out
            || oi.scalar && oi.shape.is_empty() && ins.iter().all(|v| !matches!(v, SVal::Reg(_)))
        {
            return None;
        }
        // Inputs after the formula's only line up shapes (`GeLUGrad`'s `y`).
        let read = &ins[..f.arity];
        if ins[f.arity..]
            .iter()
            .any(|v| !matches!(v, SVal::Reg(r) if self.info(*r).shape == oi.shape))
        {
            return None;
        }
        let abs = |v: &SVal| match v {
            SVal::Reg(r) => self.info(*r).abs(),
            SVal::Const(c) => c.abs(),
            _ => ir::AbsVal::Any,
        };
        let promoted = match read {
            [a] => abs(a).dtype(),
            [a, b] => ops::infer::promote(&abs(a), &abs(b)),
            _ => None,
        };
        // A test compares bools as 0 and 1 as well as `f32`s; a value
        // formula computes `f32` only.
        let f32_or_bool = |d: DType| d == DType::F32 || f.test && d == DType::Bool;
        if !promoted.is_some_and(f32_or_bool) {
            return None;
        }
        if read.len() == 1 && !matches!(&read[0], SVal::Reg(r) if f32_or_bool(self.info(*r).dtype))
        {
            return None;
        }
        let mut params = [0.0; 2];
        for (slot, name) in params.iter_mut().zip(f.params) {
            *slot = p.attrs.get(name)?.as_f64()?;
        }
        let shape = oi.shape.clone();
        let args = read
            .iter()
            .map(|v| self.arg(v, &shape))
            .collect::<Option<Vec<_>>>()?;
        let name = p.op.map_or("?", |o| o.name);
        Some(Elem {
            out,
            op: ElemOp::F(f, name, params),
            args,
        })
    }

    /// The node that computes register `r` (not inputs, weights, constants).
    fn producers(&self) -> HashMap<u32, usize> {
        let mut m = HashMap::new();
        for (i, low) in self.low.iter().enumerate() {
            let outs: Vec<u32> = match low {
                Low::Weight { out, .. } | Low::View { out, .. } => vec![*out],
                Low::Elem(e) => vec![e.out],
                Low::Kernel { outs, .. } => outs.clone(),
                Low::Registry => {
                    let mut v = Vec::new();
                    self.nodes[i].out.regs(&mut v);
                    v
                }
                Low::Gone => Vec::new(),
            };
            for r in outs {
                m.insert(r, i);
            }
        }
        m
    }

    /// Groups elementwise nodes into fusions; returns each group's members.
    fn group(&mut self) -> Vec<Vec<usize>> {
        let n = self.low.len();
        let producers = self.producers();
        let mut gid: Vec<Option<usize>> = vec![None; n];
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for i in 0..n {
            let Low::Elem(e) = &self.low[i] else { continue };
            let g = groups.len();
            groups.push(vec![i]);
            gid[i] = Some(g);
            let out_shape = self.info(e.out).shape.clone();
            let mut regs: Vec<u32> = e
                .args
                .iter()
                .filter_map(|a| match a {
                    Arg::Reg(r, _) => Some(*r),
                    _ => None,
                })
                .collect();
            regs.dedup();
            for r in regs {
                let Some(&j) = producers.get(&r) else {
                    continue;
                };
                let Some(gj) = gid[j] else { continue };
                if gj == g
                    || self.users[r as usize] != [i]
                    || self.is_output[r as usize]
                    || self.nodes[j].epoch != self.nodes[i].epoch
                    || self.info(r).shape != out_shape
                {
                    continue;
                }
                // Every other user of the group's values must come after `i`,
                // where the merged group will run.
                let ok = groups[gj].iter().all(|&m| {
                    let Low::Elem(me) = &self.low[m] else {
                        return true;
                    };
                    self.users[me.out as usize]
                        .iter()
                        .all(|&u| gid[u] == Some(gj) || u == i || u > i)
                });
                if !ok {
                    continue;
                }
                let members = std::mem::take(&mut groups[gj]);
                for &m in &members {
                    gid[m] = Some(g);
                }
                groups[g].extend(members);
                groups[g].sort_unstable();
            }
        }
        // Booleans leave a group only as registry results: a group that
        // would output one is taken apart.
        let mut out = Vec::new();
        for members in groups.into_iter().filter(|m| !m.is_empty()) {
            let bool_out = members.iter().any(|&m| {
                let Low::Elem(e) = &self.low[m] else {
                    return false;
                };
                self.info(e.out).dtype == DType::Bool && self.escapes(e.out, &members)
            });
            if bool_out && members.len() > 1 {
                for m in members {
                    out.push(vec![m]);
                }
            } else {
                out.push(members);
            }
        }
        for members in &out {
            if members.len() == 1 {
                if let Low::Elem(e) = &self.low[members[0]] {
                    if self.info(e.out).dtype == DType::Bool {
                        self.low[members[0]] = Low::Registry;
                    }
                }
            }
        }
        out.retain(|m| matches!(self.low[m[0]], Low::Elem(_)));
        out
    }

    /// Whether register `r` is needed outside the nodes `members`.
    fn escapes(&self, r: u32, members: &[usize]) -> bool {
        self.is_output[r as usize]
            || self.users[r as usize]
                .iter()
                .any(|u| members.binary_search(u).is_err())
    }

    fn fused(&self, members: &[usize]) -> (Fused, Vec<u32>, Vec<u32>) {
        let Low::Elem(first) = &self.low[members[0]] else {
            unreachable!("a group of elementwise nodes")
        };
        let shape = self.info(first.out).shape.clone();
        let full = broadcast_strides(&shape, &shape);
        let mut prog: Vec<EOp> = Vec::new();
        let mut value_of: HashMap<u32, u16> = HashMap::new();
        let mut inputs: Vec<(u32, Vec<usize>)> = Vec::new();
        let mut loads: HashMap<usize, u16> = HashMap::new();
        let mut outs = Vec::new();
        let mut outputs = Vec::new();
        let mut label = Vec::new();
        for &m in members {
            let Low::Elem(e) = &self.low[m] else {
                unreachable!("a group of elementwise nodes")
            };
            let mut vals = Vec::new();
            for a in &e.args {
                let v = match a {
                    Arg::Reg(r, s) if s == &full && value_of.contains_key(r) => value_of[r],
                    Arg::Reg(r, s) => {
                        let k = match inputs.iter().position(|(x, y)| x == r && y == s) {
                            Some(k) => k,
                            None => {
                                inputs.push((*r, s.clone()));
                                inputs.len() - 1
                            }
                        };
                        *loads.entry(k).or_insert_with(|| {
                            prog.push(EOp::Input(k as u16));
                            (prog.len() - 1) as u16
                        })
                    }
                    Arg::Const(c) => {
                        prog.push(EOp::Const(*c));
                        (prog.len() - 1) as u16
                    }
                };
                vals.push(v);
            }
            let op = match e.op {
                ElemOp::F(f, _, p) => EOp::F(f, vals[0], *vals.get(1).unwrap_or(&vals[0]), p),
                ElemOp::Truth => EOp::Truth(vals[0]),
                ElemOp::Select => EOp::Select(vals[0], vals[1], vals[2]),
                ElemOp::Identity => {
                    value_of.insert(e.out, vals[0]);
                    if self.escapes(e.out, members) {
                        outs.push(e.out);
                        outputs.push(vals[0]);
                    }
                    label.push("id".to_string());
                    continue;
                }
            };
            label.push(match e.op {
                ElemOp::F(_, name, _) => name.to_string(),
                ElemOp::Truth => "Truth".into(),
                ElemOp::Select => "Select".into(),
                ElemOp::Identity => "id".into(),
            });
            prog.push(op);
            let v = (prog.len() - 1) as u16;
            value_of.insert(e.out, v);
            if self.escapes(e.out, members) {
                outs.push(e.out);
                outputs.push(v);
            }
        }
        let mut strides: Vec<Vec<usize>> = inputs.iter().map(|(_, s)| s.clone()).collect();
        strides.push(full.clone());
        let (outer_dims, inner, per) = collapse(&shape, &strides);
        let layouts = per[..inputs.len()]
            .iter()
            .map(|(outer, inner)| InputLayout {
                outer: outer.clone(),
                inner: *inner,
            })
            .collect();
        let full_in = inputs
            .iter()
            .map(|(r, s)| {
                // A group none of whose values escape has no outputs.
                s == &full
                    && outs
                        .first()
                        .is_some_and(|&o| self.info(*r).numel() == self.info(o).numel())
            })
            .collect();
        let prog = super::fused::simplify(prog, &mut outputs);
        let fused = Fused {
            outer_dims,
            inner,
            inputs: layouts,
            prog,
            outputs,
            full: full_in,
            label: format!("{} {:?}", label.join("+"), shape),
        };
        (fused, inputs.into_iter().map(|(r, _)| r).collect(), outs)
    }

    fn finish(
        mut self,
        groups: Vec<Vec<usize>>,
        inputs: Vec<u32>,
        output: SVal,
        name: Arc<str>,
    ) -> Compiled {
        let n_regs = self.regs.len();
        // Storage: views, arena for this module's kernels' results, values
        // where a registry kernel or the caller needs one.
        let mut storage = vec![Storage::Value; n_regs];
        let mut view_node: HashMap<u32, usize> = HashMap::new();
        for (i, low) in self.low.iter().enumerate() {
            match low {
                Low::View { out, src } => {
                    storage[*out as usize] = Storage::View(*src);
                    view_node.insert(*out, i);
                }
                Low::Kernel { outs, .. } => {
                    for &o in outs {
                        if self.info(o).dtype == DType::F32 {
                            storage[o as usize] = Storage::Arena(0);
                        }
                    }
                }
                Low::Elem(e) => storage[e.out as usize] = Storage::Arena(0),
                _ => {}
            }
        }
        let mut need: Vec<u32> = (0..n_regs as u32)
            .filter(|&r| self.is_output[r as usize])
            .collect();
        for (i, low) in self.low.iter().enumerate() {
            if matches!(low, Low::Registry) {
                self.nodes[i]
                    .inputs()
                    .iter()
                    .for_each(|v| v.regs(&mut need));
            }
        }
        while let Some(r) = need.pop() {
            match storage[r as usize] {
                Storage::View(src) => {
                    // A reshape whose value is needed runs the registry's kernel.
                    storage[r as usize] = Storage::Value;
                    if let Some(&i) = view_node.get(&r) {
                        self.low[i] = Low::Registry;
                    }
                    need.push(src);
                }
                Storage::Arena(_) => storage[r as usize] = Storage::Value,
                Storage::Value => {}
            }
        }
        // Fusions, built while the elementwise nodes are still there.
        let mut fusions: HashMap<usize, (Fused, Vec<u32>, Vec<u32>)> = HashMap::new();
        for members in &groups {
            let root = *members.last().expect("a member");
            fusions.insert(root, self.fused(members));
        }
        // Steps in order, with the registers each reads and writes.
        let mut steps: Vec<Step> = Vec::new();
        let mut reads: Vec<Vec<u32>> = Vec::new();
        let mut writes: Vec<Vec<u32>> = Vec::new();
        for i in 0..self.low.len() {
            let node = &self.nodes[i];
            let low = std::mem::replace(&mut self.low[i], Low::Gone);
            let (op, r, w) = match low {
                Low::Weight { weight, out } => (Op::LoadWeight { weight, out }, vec![], vec![out]),
                Low::Registry => {
                    let NodeKind::Prim {
                        func,
                        inputs,
                        writes,
                    } = &node.kind
                    else {
                        unreachable!("a weight is lowered as a weight")
                    };
                    let mut r = Vec::new();
                    inputs.iter().for_each(|v| v.regs(&mut r));
                    let mut w = Vec::new();
                    node.out.regs(&mut w);
                    (
                        Op::Registry {
                            func: func.clone(),
                            inputs: inputs.clone(),
                            out: node.out.clone(),
                            writes: writes.clone(),
                        },
                        r,
                        w,
                    )
                }
                Low::Kernel { kernel, ins, outs } => {
                    let (r, w) = (ins.clone(), outs.clone());
                    (
                        Op::Kernel {
                            kernel,
                            ins,
                            outs,
                            scratch: 0,
                        },
                        r,
                        w,
                    )
                }
                Low::Elem(_) => match fusions.remove(&i) {
                    Some((f, ins, outs)) => {
                        let (r, w) = (ins.clone(), outs.clone());
                        (
                            Op::Kernel {
                                kernel: Box::new(f),
                                ins,
                                outs,
                                scratch: 0,
                            },
                            r,
                            w,
                        )
                    }
                    None => continue,
                },
                Low::View { .. } | Low::Gone => continue,
            };
            steps.push(Step {
                op,
                free: Vec::new(),
                span: node.span,
            });
            reads.push(r);
            writes.push(w);
        }
        // Values fused loops keep to themselves are never stored.
        let mut written = vec![false; n_regs];
        for w in &writes {
            for &x in w {
                written[x as usize] = true;
            }
        }
        for (r, s) in storage.iter_mut().enumerate() {
            if matches!(s, Storage::Arena(_)) && !written[r] {
                *s = Storage::Value;
            }
        }
        let root = |mut r: u32| {
            while let Storage::View(b) = storage[r as usize] {
                r = b;
            }
            r
        };
        // Values are dropped after their last use (through views too).
        let mut last: Vec<Option<usize>> = vec![None; n_regs];
        for (i, (r, w)) in reads.iter().zip(&writes).enumerate() {
            for &x in w {
                if last[x as usize].is_none() {
                    last[x as usize] = Some(i);
                }
            }
            for &x in r {
                last[root(x) as usize] = Some(i);
            }
        }
        for (r, l) in last.iter().enumerate() {
            if let Some(i) = l {
                if storage[r] == Storage::Value && !self.is_output[r] {
                    steps[*i].free.push(r as u32);
                }
            }
        }
        // The memory plan of the arena registers.
        let is_arena = |r: u32| matches!(storage[r as usize], Storage::Arena(_));
        let uses: Vec<StepUse> = steps
            .iter()
            .zip(reads.iter().zip(&writes))
            .map(|(s, (r, w))| {
                let rs: Vec<u32> = r
                    .iter()
                    .map(|&x| root(x))
                    .filter(|&x| is_arena(x))
                    .collect();
                let ws: Vec<(u32, usize)> = w
                    .iter()
                    .filter(|&&x| is_arena(x))
                    .map(|&x| (x, self.info(x).numel()))
                    .collect();
                let (in_place, scratch) = match &s.op {
                    Op::Kernel {
                        kernel, ins, outs, ..
                    } => {
                        let pairs = kernel
                            .in_place()
                            .into_iter()
                            .filter_map(|(a, b)| {
                                let ra = root(ins[a]);
                                let pa = rs.iter().position(|&x| x == ra)?;
                                let pb = ws.iter().position(|&(x, _)| x == outs[b])?;
                                (self.info(ins[a]).numel() == self.info(outs[b]).numel())
                                    .then_some((pa, pb))
                            })
                            .collect();
                        (pairs, kernel.scratch())
                    }
                    _ => (Vec::new(), 0),
                };
                StepUse {
                    reads: rs,
                    writes: ws,
                    in_place,
                    scratch,
                }
            })
            .collect();
        let planned = memory::plan(n_regs, &uses);
        for (r, s) in storage.iter_mut().enumerate() {
            if let Storage::Arena(o) = s {
                *o = planned.offset[r].expect("every arena register is planned");
            }
        }
        for (i, s) in steps.iter_mut().enumerate() {
            if let Op::Kernel { scratch, .. } = &mut s.op {
                *scratch = planned.scratch[i];
            }
        }
        let n_steps = steps.len();
        let writes_weights = steps
            .iter()
            .any(|s| matches!(&s.op, Op::Registry { writes, .. } if !writes.is_empty()));
        Compiled {
            name,
            regs: self.regs,
            storage,
            inputs,
            consts: self.consts,
            steps,
            output,
            arena_len: planned.len,
            writes_weights,
            profile: std::env::var_os("MIRDSL_PLAN_PROFILE")
                .is_some_and(|v| !v.is_empty() && v != "0")
                .then(|| vec![std::time::Duration::ZERO; n_steps]),
            runs: 0,
            arena: Vec::new(),
            counted: None,
        }
    }
}

mod gemm;
