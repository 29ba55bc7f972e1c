//! Kernels for the non-elementwise primitives the plans run themselves, and
//! the patterns that choose them.

use ops::{AttrValue, Family, ReduceAxes, ReduceKind, Strided};
use tensor::DType;

use super::kernels::{par_ranges, FastKernel, Src, C, P};
use super::trace::{Node, OutTree, RegInfo, SVal};
use crate::value::{PrimFn, Value};

/// A kernel input: a register or a constant (given a register).
pub(crate) enum In {
    Reg(u32),
    #[allow(dead_code)]
    Const(Value),
}

pub(crate) struct Chosen {
    pub kernel: Box<dyn FastKernel>,
    pub ins: Vec<In>,
    pub outs: Vec<u32>,
    /// Later nodes this kernel computes too.
    pub absorbs: Vec<usize>,
}

fn reg(v: &SVal) -> Option<u32> {
    match v {
        SVal::Reg(r) => Some(*r),
        _ => None,
    }
}

fn out1(n: &Node) -> Option<u32> {
    match n.out {
        OutTree::Reg(r) => Some(r),
        _ => None,
    }
}

pub(crate) fn ints(p: &PrimFn, name: &str) -> Option<Vec<i64>> {
    match p.attrs.get(name)? {
        AttrValue::Int(i) => Some(vec![*i]),
        AttrValue::Tuple(items) => items
            .iter()
            .map(|v| match v {
                AttrValue::Int(i) => Some(*i),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

fn flag(p: &PrimFn, name: &str) -> bool {
    matches!(p.attrs.get(name), Some(AttrValue::Bool(true)))
}

/// This module's kernel for node `i`, if it has one.
pub(crate) fn select(
    nodes: &[Node],
    i: usize,
    n: &Node,
    p: &PrimFn,
    regs: &[RegInfo],
) -> Option<Chosen> {
    let ins = n.inputs();
    let f32_reg = |v: &SVal| reg(v).filter(|&r| regs[r as usize].dtype == DType::F32);
    match p.op?.traits.family {
        Family::SparseCrossEntropy => {
            let (x, labels, out) = (f32_reg(&ins[0])?, reg(&ins[1])?, out1(n)?);
            let (xs, ls) = (&regs[x as usize].shape, &regs[labels as usize]);
            if xs.len() != 2 || !ls.dtype.is_int() || ls.shape != [xs[0]] {
                return None;
            }
            if regs[out as usize].dtype != DType::F32 {
                return None;
            }
            let grad = flag(p, "is_grad");
            // The other half on the same logits, later in the same epoch.
            let partner = nodes.iter().enumerate().skip(i + 1).find_map(|(j, m)| {
                let q = m.prim()?;
                (q.prim.name == p.prim.name
                    && m.epoch == n.epoch
                    && flag(q, "is_grad") != grad
                    && reg(&m.inputs()[0]) == Some(x)
                    && reg(&m.inputs()[1]) == Some(labels))
                .then_some((j, out1(m)?))
            });
            let (loss, dlogits, absorbs) = match (grad, partner) {
                (false, Some((j, o))) => (Some(out), Some(o), vec![j]),
                (true, Some((j, o))) => (Some(o), Some(out), vec![j]),
                (false, None) => (Some(out), None, vec![]),
                (true, None) => (None, Some(out), vec![]),
            };
            if let Some(o) = dlogits {
                if regs[o as usize].dtype != DType::F32 {
                    return None;
                }
            }
            let outs: Vec<u32> = loss.into_iter().chain(dlogits).collect();
            Some(Chosen {
                kernel: Box::new(SparseCe {
                    n: xs[0],
                    c: xs[1],
                    loss: loss.is_some(),
                    grad: dlogits.is_some(),
                }),
                ins: vec![In::Reg(x), In::Reg(labels)],
                outs,
                absorbs,
            })
        }
        Family::Reduce {
            kind: kind @ (ReduceKind::Sum | ReduceKind::Mean),
            axes: ReduceAxes::Axis,
        } => {
            let (x, out) = (f32_reg(&ins[0])?, out1(n)?);
            if regs[out as usize].dtype != DType::F32 {
                return None;
            }
            let shape = &regs[x as usize].shape;
            let axes = ints(p, "axis").unwrap_or_default();
            let rank = shape.len();
            let mut mask = vec![axes.is_empty(); rank];
            for a in axes {
                let a = if a < 0 { a + rank as i64 } else { a };
                if a < 0 || a as usize >= rank.max(1) {
                    return None;
                }
                if rank > 0 {
                    mask[a as usize] = true;
                }
            }
            let count: usize = shape
                .iter()
                .zip(&mask)
                .filter(|(_, &m)| m)
                .map(|(&d, _)| d)
                .product();
            let mean = kind == ReduceKind::Mean;
            Some(Chosen {
                kernel: Box::new(Reduce::new(shape, &mask, mean.then_some(count as f64))),
                ins: vec![In::Reg(x)],
                outs: vec![out],
                absorbs: vec![],
            })
        }
        Family::Strided(Strided::Transpose) => {
            let (x, out) = (f32_reg(&ins[0])?, out1(n)?);
            let shape = regs[x as usize].shape.clone();
            let rank = shape.len() as i64;
            let perm: Vec<usize> = ints(p, "perm")?
                .into_iter()
                .map(|a| {
                    let a = if a < 0 { a + rank } else { a };
                    (0..rank).contains(&a).then_some(a as usize)
                })
                .collect::<Option<_>>()?;
            let mut seen = vec![false; shape.len()];
            if perm.len() != shape.len()
                || perm.iter().any(|&a| std::mem::replace(&mut seen[a], true))
            {
                return None;
            }
            let out_shape: Vec<usize> = perm.iter().map(|&a| shape[a]).collect();
            if regs[out as usize].shape != out_shape || regs[out as usize].dtype != DType::F32 {
                return None;
            }
            Some(Chosen {
                kernel: Box::new(Transpose::new(&shape, &perm)),
                ins: vec![In::Reg(x)],
                outs: vec![out],
                absorbs: vec![],
            })
        }
        _ => super::nn_kernels::select(n, p, regs)
            .or_else(|| super::conv_kernels::select(n, p, regs)),
    }
}

// ---------------------------------------------------------------------------
// Softmax cross entropy with sparse labels, loss and gradient in one pass.

/// Through the registry's own row function (`ops::defs::nn::sparse_ce_row_f32`),
/// so the results are the same to the bit.
#[derive(Debug)]
pub(crate) struct SparseCe {
    n: usize,
    c: usize,
    loss: bool,
    grad: bool,
}

impl FastKernel for SparseCe {
    fn name(&self) -> String {
        format!(
            "sparse softmax cross entropy {}x{}{}{}",
            self.n,
            self.c,
            if self.loss { " loss" } else { "" },
            if self.grad { " grad" } else { "" }
        )
    }

    unsafe fn run(&self, ins: &[Src], outs: &[*mut f32], _scratch: *mut f32) -> Result<(), String> {
        let (n, c) = (self.n, self.c);
        let x = std::slice::from_raw_parts(ins[0].f32(), n * c);
        let labels = std::slice::from_raw_parts(ins[1].i64(), n);
        for &l in labels {
            if l < 0 || l as usize >= c {
                return Err(format!("label {l} is out of range for {c} classes"));
            }
        }
        let mut total = 0f64;
        let grad = self.grad.then(|| outs[self.loss as usize]);
        for r in 0..n {
            let row = &x[r * c..(r + 1) * c];
            let g = grad.map(|g| std::slice::from_raw_parts_mut(g.add(r * c), c));
            total += ops::defs::nn::sparse_ce_row_f32(row, labels[r] as usize, n, g);
        }
        if self.loss {
            // The registry sums the rows' losses in order, then divides.
            *outs[0] = (total / n as f64) as f32;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Sum and mean over axes.

/// A reduction over the dimensions of a row-major tensor, summing each
/// output's elements in row-major order in `f64` as the registry's kernel
/// does (the same result to the bit); threads split the outputs.
#[derive(Debug)]
pub(crate) struct Reduce {
    /// Coalesced dimensions: (size, input stride, reduced).
    dims: Vec<(usize, usize, bool)>,
    out_n: usize,
    in_n: usize,
    mean: Option<f64>,
}

impl Reduce {
    pub fn new(shape: &[usize], mask: &[bool], mean: Option<f64>) -> Reduce {
        let in_n: usize = shape.iter().product();
        let mut dims: Vec<(usize, bool)> = Vec::new();
        for (&d, &m) in shape.iter().zip(mask) {
            if d == 1 {
                continue;
            }
            match dims.last_mut() {
                Some(last) if last.1 == m => last.0 *= d,
                _ => dims.push((d, m)),
            }
        }
        let mut stride = 1;
        let mut out = vec![(0, 0, false); dims.len()];
        for (k, &(d, m)) in dims.iter().enumerate().rev() {
            out[k] = (d, stride, m);
            stride *= d;
        }
        let out_n = dims.iter().filter(|d| !d.1).map(|d| d.0).product();
        Reduce {
            dims: out,
            out_n,
            in_n,
            mean,
        }
    }
}

impl FastKernel for Reduce {
    fn name(&self) -> String {
        format!(
            "{} {:?}",
            if self.mean.is_some() { "mean" } else { "sum" },
            self.dims
        )
    }

    unsafe fn run(&self, ins: &[Src], outs: &[*mut f32], _scratch: *mut f32) -> Result<(), String> {
        let (x, out) = (C(ins[0].f32()), P(outs[0]));
        let k = self.mean.unwrap_or(1.0);
        if self.in_n == 0 || self.dims.is_empty() {
            let v = if self.in_n == 0 { 0.0 } else { *x.get() as f64 };
            for o in 0..self.out_n {
                *out.get().add(o) = (v / k) as f32;
            }
            return Ok(());
        }
        let kept: Vec<(usize, usize)> = self
            .dims
            .iter()
            .filter(|d| !d.2)
            .map(|d| (d.0, d.1))
            .collect();
        let red: Vec<(usize, usize)> = self
            .dims
            .iter()
            .filter(|d| d.2)
            .map(|d| (d.0, d.1))
            .collect();
        let inner_kept = matches!(self.dims.last(), Some(d) if !d.2);
        let (inner_len, inner_stride) = match self.dims.last() {
            Some(&(d, s, _)) => (d, s),
            None => (1, 1),
        };
        debug_assert_eq!(inner_stride, 1);
        let n_red: usize = red.iter().map(|r| r.0).product();
        par_ranges(self.out_n, self.in_n, |o0, o1| {
            let (x, out) = (x.get(), out.get());
            // The input offset of output `o` (its kept multi-index).
            let base = |o: usize| -> usize {
                let mut rest = o;
                let mut off = 0;
                for &(d, s) in kept.iter().rev() {
                    off += (rest % d) * s;
                    rest /= d;
                }
                off
            };
            let red_off = |mut r: usize, dims: &[(usize, usize)]| -> usize {
                let mut off = 0;
                for &(d, s) in dims.iter().rev() {
                    off += (r % d) * s;
                    r /= d;
                }
                off
            };
            if inner_kept {
                // Runs of outputs along the inner kept dimension, summed
                // elementwise over the reduced offsets in order.
                let mut acc = vec![0f64; inner_len.min(o1 - o0)];
                let mut o = o0;
                while o < o1 {
                    let within = o % inner_len;
                    let len = (inner_len - within).min(o1 - o);
                    let b = base(o);
                    let acc = &mut acc[..len];
                    acc.fill(0.0);
                    for r in 0..n_red {
                        let p = x.add(b + red_off(r, &red));
                        for (j, a) in acc.iter_mut().enumerate() {
                            *a += *p.add(j) as f64;
                        }
                    }
                    for (j, a) in acc.iter().enumerate() {
                        *out.add(o + j) = (*a / k) as f32;
                    }
                    o += len;
                }
            } else {
                // The inner dimension is reduced: contiguous runs.
                let outer_red = &red[..red.len() - 1];
                let n_outer: usize = outer_red.iter().map(|r| r.0).product();
                for o in o0..o1 {
                    let b = base(o);
                    let mut a = 0f64;
                    for r in 0..n_outer {
                        let p = x.add(b + red_off(r, outer_red));
                        for j in 0..inner_len {
                            a += *p.add(j) as f64;
                        }
                    }
                    *out.add(o) = (a / k) as f32;
                }
            }
        });
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Transpose: a strided copy, rows of the result split over the threads.

#[derive(Debug)]
pub(crate) struct Transpose {
    /// The result's dimensions but the last, and the input's strides along them.
    outer: Vec<(usize, usize)>,
    /// The result's last dimension and the input's stride along it (1: rows
    /// are copied whole).
    inner: (usize, usize),
    label: String,
}

impl Transpose {
    fn new(shape: &[usize], perm: &[usize]) -> Transpose {
        let mut strides = vec![1usize; shape.len()];
        for d in (0..shape.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * shape[d + 1];
        }
        let dims: Vec<(usize, usize)> = perm.iter().map(|&a| (shape[a], strides[a])).collect();
        let (inner, outer) = match dims.split_last() {
            Some((last, rest)) => (*last, rest.to_vec()),
            None => ((1, 1), Vec::new()),
        };
        Transpose {
            outer,
            inner,
            label: format!("{shape:?} by {perm:?}"),
        }
    }
}

impl FastKernel for Transpose {
    fn name(&self) -> String {
        format!("transpose {}", self.label)
    }

    unsafe fn run(&self, ins: &[Src], outs: &[*mut f32], _scratch: *mut f32) -> Result<(), String> {
        let (x, out) = (C(ins[0].f32()), P(outs[0]));
        let rows: usize = self.outer.iter().map(|d| d.0).product();
        let (len, step) = self.inner;
        if rows == 0 || len == 0 {
            return Ok(());
        }
        par_ranges(rows, rows * len, |r0, r1| {
            for r in r0..r1 {
                // The input offset of row `r`'s first element.
                let (mut rest, mut at) = (r, 0);
                for &(n, stride) in self.outer.iter().rev() {
                    at += (rest % n) * stride;
                    rest /= n;
                }
                let (src, dst) = (x.get().add(at), out.get().add(r * len));
                if step == 1 {
                    std::ptr::copy_nonoverlapping(src, dst, len);
                } else {
                    for j in 0..len {
                        *dst.add(j) = *src.add(j * step);
                    }
                }
            }
        });
        Ok(())
    }
}
