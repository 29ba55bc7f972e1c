//! Kernels for neural-network primitives over the last axes (Softmax,
//! LayerNorm and their gradients), computed as the registry's kernels compute
//! them (the same operations in the same order, in `f64`, or for Softmax the
//! registry's own `f32` row function), so the results are the same to the
//! bit, but in place in the arena, without index tables, and with rows split
//! over the threads.

use ops::{Family, RowNorm};
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

/// Whether `p`'s attribute `attr` (Softmax's `axis`, SoftmaxBackward's
/// `dim`) names exactly the last of `rank` axes.
fn last_axis_only(p: &PrimFn, attr: &str, rank: usize) -> bool {
    match ints(p, attr) {
        Some(axes) => axes.len() == 1 && rank > 0 && (axes[0] == -1 || axes[0] == rank as i64 - 1),
        None => false,
    }
}

/// This module's kernel for node `n`, if it has one.
pub(crate) fn select(n: &Node, p: &PrimFn, regs: &[RegInfo]) -> Option<Chosen> {
    let family = p.op?.traits.family;
    if let Family::RowNorm(RowNorm::Layer | RowNorm::LayerGrad) = family {
        return select_layer_norm(n, p, regs);
    }
    let ins = n.inputs();
    let f32_reg = |v: &SVal| reg(v).filter(|&r| regs[r as usize].dtype == DType::F32);
    let out = match n.out {
        OutTree::Reg(r) if regs[r as usize].dtype == DType::F32 => r,
        _ => return None,
    };
    // Softmax(x), or SoftmaxBackward(dout, out): the kernel takes (y, dy).
    let (grad, attr) = match family {
        Family::Softmax {
            log: false,
            grad: false,
        } if ins.len() == 1 => (false, "axis"),
        Family::Softmax {
            log: false,
            grad: true,
        } if ins.len() == 2 => (true, "dim"),
        _ => return None,
    };
    let x = f32_reg(&ins[usize::from(grad)])?;
    let shape = &regs[x as usize].shape;
    if !last_axis_only(p, attr, shape.len()) || regs[out as usize].shape != *shape {
        return None;
    }
    let mut inputs = vec![In::Reg(x)];
    if grad {
        let dy = f32_reg(&ins[0])?;
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
            let mut e = vec![0f32; cols];
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
                    // Through a row of its own: the output may be the input.
                    e.copy_from_slice(xr);
                    ops::defs::nn::softmax_row_f32(&e, std::slice::from_raw_parts_mut(o, cols));
                }
            }
        });
        Ok(())
    }
}

/// `LayerNorm` (`(y, mean, variance)`) or `LayerNormGrad` (`(dx, dgamma,
/// dbeta)`) of `f32` tensors normalised over their last axes, with `gamma`
/// and `beta` of those axes' shape (`begin_params_axis` equal to
/// `begin_norm_axis`, as `nn.LayerNorm` makes them).
fn select_layer_norm(n: &Node, p: &PrimFn, regs: &[RegInfo]) -> Option<Chosen> {
    let grad = p.op.map(|o| o.traits.family) == Some(Family::RowNorm(RowNorm::LayerGrad));
    let ins = n.inputs();
    let f32_reg = |v: &SVal| reg(v).filter(|&r| regs[r as usize].dtype == DType::F32);
    let inputs: Vec<u32> = ins.iter().map(f32_reg).collect::<Option<_>>()?;
    if inputs.len() != if grad { 5 } else { 3 } {
        return None;
    }
    let outs = match &n.out {
        OutTree::Tuple(items) if items.len() == 3 => items
            .iter()
            .map(|t| match t {
                OutTree::Reg(r) if regs[*r as usize].dtype == DType::F32 => Some(*r),
                _ => None,
            })
            .collect::<Option<Vec<u32>>>()?,
        _ => return None,
    };
    let shape = &regs[inputs[0] as usize].shape;
    let rank = shape.len() as i64;
    let axis = |name: &str| {
        let a = *ints(p, name)?.first()?;
        let a = if a < 0 { a + rank } else { a };
        (0..rank).contains(&a).then_some(a as usize)
    };
    let (bna, bpa) = (axis("begin_norm_axis")?, axis("begin_params_axis")?);
    let epsilon = match p.attrs.get("epsilon")? {
        ops::AttrValue::Float(f) => f.0,
        _ => return None,
    };
    if bna != bpa {
        return None;
    }
    let rows: usize = shape[..bna].iter().product();
    let cols: usize = shape[bna..].iter().product();
    let stat: Vec<usize> = shape[..bna]
        .iter()
        .copied()
        .chain(std::iter::repeat_n(1, shape.len() - bna))
        .collect();
    let params = &shape[bna..];
    let has = |r: u32, s: &[usize]| regs[r as usize].shape == s;
    let ok = if grad {
        // (x, dy, variance, mean, gamma) -> (dx, dgamma, dbeta)
        has(inputs[1], shape)
            && has(inputs[2], &stat)
            && has(inputs[3], &stat)
            && has(inputs[4], params)
            && has(outs[0], shape)
            && has(outs[1], params)
            && has(outs[2], params)
    } else {
        // (x, gamma, beta) -> (y, mean, variance)
        has(inputs[1], params)
            && has(inputs[2], params)
            && has(outs[0], shape)
            && has(outs[1], &stat)
            && has(outs[2], &stat)
    };
    if !ok || rows == 0 || cols == 0 {
        return None;
    }
    Some(Chosen {
        kernel: Box::new(LayerNormRows {
            rows,
            cols,
            epsilon,
            grad,
        }),
        ins: inputs.into_iter().map(In::Reg).collect(),
        outs,
        absorbs: vec![],
    })
}

/// LayerNorm over contiguous rows, or its gradient, in `f64` in the
/// registry's order. Rows split over the threads; the gradient's `dgamma`
/// and `dbeta` (sums over rows) split by columns instead, each summed over
/// the rows in order, so the bits do not depend on the threads.
#[derive(Debug)]
pub(crate) struct LayerNormRows {
    rows: usize,
    cols: usize,
    epsilon: f64,
    grad: bool,
}

impl FastKernel for LayerNormRows {
    fn name(&self) -> String {
        format!(
            "layer norm{} rows {}x{}",
            if self.grad { " grad" } else { "" },
            self.rows,
            self.cols
        )
    }

    unsafe fn run(&self, ins: &[Src], outs: &[*mut f32], _scratch: *mut f32) -> Result<(), String> {
        let (rows, m, eps) = (self.rows, self.cols, self.epsilon);
        let i: Vec<C<f32>> = ins.iter().map(|s| C(s.f32())).collect();
        let o: Vec<P<f32>> = outs.iter().map(|&p| P(p)).collect();
        let row = |k: usize, r: usize| std::slice::from_raw_parts(i[k].get().add(r * m), m);
        if !self.grad {
            let (gamma, beta) = (row(1, 0), row(2, 0));
            par_ranges(rows, rows * m * 8, |r0, r1| {
                for r in r0..r1 {
                    let x = row(0, r);
                    let mean = x.iter().map(|&v| v as f64).sum::<f64>() / m as f64;
                    let var = x
                        .iter()
                        .map(|&v| (v as f64 - mean) * (v as f64 - mean))
                        .sum::<f64>()
                        / m as f64;
                    let rstd = 1.0 / (var + eps).sqrt();
                    let y = o[0].get().add(r * m);
                    for k in 0..m {
                        let v = x[k] as f64;
                        *y.add(k) = ((v - mean) * rstd * gamma[k] as f64 + beta[k] as f64) as f32;
                    }
                    *o[1].get().add(r) = mean as f32;
                    *o[2].get().add(r) = var as f32;
                }
            });
            return Ok(());
        }
        // (x, dy, variance, mean, gamma) -> (dx, dgamma, dbeta)
        let gamma = row(4, 0);
        let stat = |k: usize, r: usize| *i[k].get().add(r) as f64;
        let rstd = |r: usize| 1.0 / (stat(2, r) + eps).sqrt();
        par_ranges(rows, rows * m * 10, |r0, r1| {
            for r in r0..r1 {
                let (x, dy, mean, rs) = (row(0, r), row(1, r), stat(3, r), rstd(r));
                let (mut sum_g, mut sum_gx) = (0.0, 0.0);
                for k in 0..m {
                    let xhat = (x[k] as f64 - mean) * rs;
                    let g = dy[k] as f64 * gamma[k] as f64;
                    sum_g += g;
                    sum_gx += g * xhat;
                }
                let (mean_g, mean_gx) = (sum_g / m as f64, sum_gx / m as f64);
                let dx = o[0].get().add(r * m);
                for k in 0..m {
                    let xhat = (x[k] as f64 - mean) * rs;
                    *dx.add(k) =
                        (rs * (dy[k] as f64 * gamma[k] as f64 - mean_g - xhat * mean_gx)) as f32;
                }
            }
        });
        par_ranges(m, rows * m * 6, |k0, k1| {
            let mut dgamma = vec![0f64; k1 - k0];
            let mut dbeta = vec![0f64; k1 - k0];
            for r in 0..rows {
                let (x, dy, mean, rs) = (row(0, r), row(1, r), stat(3, r), rstd(r));
                for k in k0..k1 {
                    let xhat = (x[k] as f64 - mean) * rs;
                    dgamma[k - k0] += dy[k] as f64 * xhat;
                    dbeta[k - k0] += dy[k] as f64;
                }
            }
            for k in k0..k1 {
                *o[1].get().add(k) = dgamma[k - k0] as f32;
                *o[2].get().add(k) = dbeta[k - k0] as f32;
            }
        });
        Ok(())
    }
}
