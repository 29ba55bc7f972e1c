//! Kernels for neural-network primitives over the last axis (Softmax and
//! its gradient), computed as the registry's kernels compute them (in `f64`,
//! in the same order, so the results are the same to the bit), but in place
//! in the arena, without index tables, and with rows split over the threads.

use tensor::DType;

use super::kernels::{par_ranges, FastKernel, Src, C, P};
use super::ops_kernels::{ints, Chosen, In};
use super::trace::{Node, OutTree, RegInfo, SVal};
use crate::value::PrimFn;

fn reg(v: &SVal) -> Option<u32> {
    match v {
        SVal::Reg(r) => Some(*r),
        _ => None,
    }
}

/// Whether `p`'s `axis` attribute names exactly the last of `rank` axes.
fn last_axis_only(p: &PrimFn, rank: usize) -> bool {
    match ints(p, "axis") {
        Some(axes) => axes.len() == 1 && rank > 0 && (axes[0] == -1 || axes[0] == rank as i64 - 1),
        None => false,
    }
}

/// This module's kernel for node `n`, if it has one.
pub(crate) fn select(n: &Node, p: &PrimFn, regs: &[RegInfo]) -> Option<Chosen> {
    let ins = n.inputs();
    let f32_reg = |v: &SVal| reg(v).filter(|&r| regs[r as usize].dtype == DType::F32);
    let out = match n.out {
        OutTree::Reg(r) if regs[r as usize].dtype == DType::F32 => r,
        _ => return None,
    };
    let grad = match p.prim.name.as_str() {
        "Softmax" if ins.len() == 1 => false,
        "_SoftmaxGrad" if ins.len() == 2 => true,
        _ => return None,
    };
    let x = f32_reg(&ins[0])?;
    let shape = &regs[x as usize].shape;
    if !last_axis_only(p, shape.len()) || regs[out as usize].shape != *shape {
        return None;
    }
    let mut inputs = vec![In::Reg(x)];
    if grad {
        let dy = f32_reg(&ins[1])?;
        if regs[dy as usize].shape != *shape {
            return None;
        }
        inputs.push(In::Reg(dy));
    }
    let cols = *shape.last()?;
    let rows = shape.iter().product::<usize>() / cols.max(1);
    Some(Chosen {
        kernel: Box::new(SoftmaxRows { rows, cols, grad }),
        ins: inputs,
        outs: vec![out],
        absorbs: vec![],
    })
}

/// Softmax over contiguous rows, or its gradient `y · (dy − Σ dy·y)`.
#[derive(Debug)]
pub(crate) struct SoftmaxRows {
    rows: usize,
    cols: usize,
    grad: bool,
}

impl FastKernel for SoftmaxRows {
    fn name(&self) -> String {
        format!(
            "softmax{} rows {}x{}",
            if self.grad { " grad" } else { "" },
            self.rows,
            self.cols
        )
    }

    fn in_place(&self) -> Vec<(usize, usize)> {
        // Each row is read whole before it is written.
        if self.grad {
            vec![(0, 0), (1, 0)]
        } else {
            vec![(0, 0)]
        }
    }

    unsafe fn run(&self, ins: &[Src], outs: &[*mut f32], _scratch: *mut f32) -> Result<(), String> {
        let (rows, cols) = (self.rows, self.cols);
        if rows == 0 || cols == 0 {
            return Ok(());
        }
        let x = C(ins[0].f32());
        let dy = C(if self.grad {
            ins[1].f32()
        } else {
            ins[0].f32()
        });
        let out = P(outs[0]);
        let grad = self.grad;
        par_ranges(rows, rows * cols * 16, |r0, r1| {
            let mut e = vec![0f64; cols];
            for r in r0..r1 {
                let xr = std::slice::from_raw_parts(x.get().add(r * cols), cols);
                let o = out.get().add(r * cols);
                if grad {
                    // As the registry: s = Σ dy·y, then y · (dy − s), in f64.
                    let dr = std::slice::from_raw_parts(dy.get().add(r * cols), cols);
                    let s: f64 = dr.iter().zip(xr).map(|(&d, &y)| d as f64 * y as f64).sum();
                    for j in 0..cols {
                        let (y, d) = (xr[j] as f64, dr[j] as f64);
                        *o.add(j) = (y * (d - s)) as f32;
                    }
                } else {
                    let m = xr
                        .iter()
                        .map(|&v| v as f64)
                        .fold(f64::NEG_INFINITY, f64::max);
                    let m = if m.is_finite() { m } else { 0.0 };
                    let mut sum = 0f64;
                    for (ej, &v) in e.iter_mut().zip(xr) {
                        *ej = (v as f64 - m).exp();
                        sum += *ej;
                    }
                    for (j, &ej) in e.iter().enumerate() {
                        *o.add(j) = (ej / sum) as f32;
                    }
                }
            }
        });
        Ok(())
    }
}
