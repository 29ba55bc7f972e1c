//! GEMMs in a plan: choosing the kernel for `MatMul`/`BatchMatMul`, folding
//! a scaling or an addition into it (epilogues), and running two independent
//! ones at once.

use super::*;
use ops::defs::elementwise::{ADD, MUL, RELU};

impl Lowering<'_> {
    pub(super) fn gemm(&self, n: &Node, p: &crate::value::PrimFn, batched: bool) -> Low {
        let ins = n.inputs();
        let (Some(x), Some(y), Some(out)) = (reg_of(&ins[0]), reg_of(&ins[1]), out_reg(n)) else {
            return Low::Registry;
        };
        let (xi, yi, oi) = (self.info(x), self.info(y), self.info(out));
        if xi.dtype != DType::F32 || yi.dtype != DType::F32 || oi.dtype != DType::F32 {
            return Low::Registry;
        }
        let (ta, tb) = (attr_bool(p, "transpose_a"), attr_bool(p, "transpose_b"));
        let (xs, ys) = (&xi.shape, &yi.shape);
        if xs.len() < 2 || ys.len() < 2 || (!batched && (xs.len() != 2 || ys.len() != 2)) {
            return Low::Registry;
        }
        let (xr, xc) = (xs[xs.len() - 2], xs[xs.len() - 1]);
        let (yr, yc) = (ys[ys.len() - 2], ys[ys.len() - 1]);
        let (m, k) = if ta { (xc, xr) } else { (xr, xc) };
        let (k2, nn) = if tb { (yc, yr) } else { (yr, yc) };
        if k != k2 || oi.shape.len() < 2 || oi.shape[oi.shape.len() - 2..] != [m, nn] {
            return Low::Registry;
        }
        let (a_rs, a_cs) = if ta {
            (1, xc as isize)
        } else {
            (xc as isize, 1)
        };
        let (b_rs, b_cs) = if tb {
            (1, yc as isize)
        } else {
            (yc as isize, 1)
        };
        // Batch offsets, broadcasting the batch dimensions.
        let bx = &xs[..xs.len() - 2];
        let by = &ys[..ys.len() - 2];
        let bo = &oi.shape[..oi.shape.len() - 2];
        if bx.len() > bo.len() || by.len() > bo.len() {
            return Low::Registry;
        }
        let (sx, sy) = (broadcast_strides(bx, bo), broadcast_strides(by, bo));
        let nb: usize = bo.iter().product();
        let mut batches = Vec::with_capacity(nb);
        let mut idx = vec![0usize; bo.len()];
        for _ in 0..nb {
            let ox: usize = idx.iter().zip(&sx).map(|(i, s)| i * s).sum();
            let oy: usize = idx.iter().zip(&sy).map(|(i, s)| i * s).sum();
            batches.push((ox * xr * xc, oy * yr * yc));
            for d in (0..bo.len()).rev() {
                idx[d] += 1;
                if idx[d] < bo[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        Low::Kernel {
            kernel: Box::new(Gemm {
                m,
                n: nn,
                k,
                a_rs,
                a_cs,
                b_rs,
                b_cs,
                batches,
                beta: 1.0,
                accumulate: false,
                bias: false,
                relu: false,
            }),
            ins: vec![x, y],
            outs: vec![out],
        }
    }

    /// GEMM epilogues: `MatMul(...) * c` scales the product (`beta`), and
    /// `MatMul(...) + y` accumulates into a copy of `y` (in place when `y`
    /// dies there).
    pub(super) fn epilogues(&mut self) {
        for i in 0..self.low.len() {
            let Low::Elem(e) = &self.low[i] else { continue };
            let (op, args, out) = (e.op, e.args.clone(), e.out);
            let shape = self.info(out).shape.clone();
            let full = broadcast_strides(&shape, &shape);
            let producers = self.producers();
            let gemm_of = |l: &Self, a: &Arg| -> Option<(u32, usize)> {
                let Arg::Reg(r, s) = a else { return None };
                if *s != full || l.is_output[*r as usize] || l.users[*r as usize] != [i] {
                    return None;
                }
                let j = *producers.get(r)?;
                if l.nodes[j].epoch != l.nodes[i].epoch || l.info(*r).shape != shape {
                    return None;
                }
                match &l.low[j] {
                    Low::Kernel { kernel, .. } if kernel.name().starts_with("gemm") => {
                        Some((*r, j))
                    }
                    _ => None,
                }
            };
            // Each epilogue moves the GEMM to the elementwise node it absorbs
            // (whose other inputs are read by then: a bias weight may load
            // after the MatMul); nothing between uses the product.
            match (op, args.as_slice()) {
                (ElemOp::F(f, ..), [a, b]) if *f == MUL => {
                    let (g, c) = match (gemm_of(self, a), b, gemm_of(self, b), a) {
                        (Some(g), Arg::Const(c), _, _) => (g, *c),
                        (_, _, Some(g), Arg::Const(c)) => (g, *c),
                        _ => continue,
                    };
                    self.fold_epilogue(g.1, i, out, None, |gm| {
                        let plain = !gm.accumulate && gm.beta == 1.0 && !gm.bias && !gm.relu;
                        if plain {
                            gm.beta = c;
                        }
                        plain
                    });
                }
                (ElemOp::F(f, ..), [a, b]) if *f == ADD => {
                    // A row added to every row (`BiasAdd`): the bias epilogue.
                    let row = shape.len() == 2 && {
                        let bias_strides = vec![0, 1];
                        matches!((a, b), (_, Arg::Reg(_, s)) if *s == bias_strides)
                    };
                    if let (true, Some(g), Arg::Reg(bias, _)) = (row, gemm_of(self, a), b) {
                        if self.info(*bias).dtype == DType::F32 {
                            self.fold_epilogue(g.1, i, out, Some(*bias), |gm| {
                                let plain =
                                    !gm.accumulate && !gm.bias && !gm.relu && gm.batches.len() == 1;
                                gm.bias |= plain;
                                plain
                            });
                        }
                        continue;
                    }
                    let (g, y) = match (gemm_of(self, a), b, gemm_of(self, b), a) {
                        (Some(g), Arg::Reg(y, s), _, _) if *s == full => (g, *y),
                        (_, _, Some(g), Arg::Reg(y, s)) if *s == full => (g, *y),
                        _ => continue,
                    };
                    if y == g.0 || self.info(y).dtype != DType::F32 {
                        continue;
                    }
                    self.fold_epilogue(g.1, i, out, Some(y), |gm| {
                        let plain = !gm.accumulate && !gm.bias && !gm.relu;
                        gm.accumulate |= plain;
                        plain
                    });
                }
                (ElemOp::F(f, ..), [a]) if *f == RELU => {
                    let Some(g) = gemm_of(self, a) else { continue };
                    self.fold_epilogue(g.1, i, out, None, |gm| {
                        let plain = !gm.relu && !gm.accumulate;
                        gm.relu |= plain;
                        plain
                    });
                }
                _ => {}
            }
        }
    }

    /// Moves the GEMM of node `j` to node `i`, writing `out` and reading
    /// `extra` last, when `apply` takes the epilogue; else leaves it.
    fn fold_epilogue(
        &mut self,
        j: usize,
        i: usize,
        out: u32,
        extra: Option<u32>,
        apply: impl FnOnce(&mut Gemm) -> bool,
    ) {
        let Low::Kernel {
            mut kernel,
            mut ins,
            outs,
        } = std::mem::replace(&mut self.low[j], Low::Gone)
        else {
            unreachable!("a GEMM kernel")
        };
        if as_gemm(&mut kernel).is_some_and(apply) {
            ins.extend(extra);
            self.low[i] = Low::Kernel {
                kernel,
                ins,
                outs: vec![out],
            };
        } else {
            self.low[j] = Low::Kernel { kernel, ins, outs };
        }
    }

    /// Runs each GEMM with the next step when that is an independent GEMM
    /// (a layer's weight and input gradients): one [`Concurrent`] kernel,
    /// so the memory plan sees both at once.
    pub(super) fn pair_gemms(&mut self) {
        let plain_gemm = |low: &mut Low| match low {
            Low::Kernel { kernel, .. } => kernel
                .as_gemm()
                // Big enough that waking the other thread pays, small
                // enough that each would otherwise be split.
                .is_some_and(|g| {
                    let work = g.m * g.n * g.k * g.batches.len();
                    !g.accumulate && (1 << 22..1 << 27).contains(&work)
                }),
            _ => false,
        };
        let mut i = 0;
        while i < self.low.len() {
            let Some(j) = (i + 1..self.low.len()).find(|&j| !matches!(self.low[j], Low::Gone))
            else {
                break;
            };
            if !plain_gemm(&mut self.low[i])
                || !plain_gemm(&mut self.low[j])
                || self.nodes[i].epoch != self.nodes[j].epoch
            {
                i += 1;
                continue;
            }
            let reads_first = match (&self.low[i], &self.low[j]) {
                (Low::Kernel { outs, .. }, Low::Kernel { ins, .. }) => {
                    ins.iter().any(|r| outs.contains(r))
                }
                _ => true,
            };
            if reads_first {
                i += 1;
                continue;
            }
            let (
                Low::Kernel {
                    kernel: a,
                    mut ins,
                    mut outs,
                },
                Low::Kernel {
                    kernel: b,
                    ins: b_ins,
                    outs: b_outs,
                },
            ) = (
                std::mem::replace(&mut self.low[i], Low::Gone),
                std::mem::replace(&mut self.low[j], Low::Gone),
            )
            else {
                unreachable!("two kernels")
            };
            let (a_ins, a_outs) = (ins.len(), outs.len());
            ins.extend(b_ins);
            outs.extend(b_outs);
            self.low[i] = Low::Kernel {
                kernel: Box::new(Concurrent {
                    a,
                    b,
                    a_ins,
                    a_outs,
                }),
                ins,
                outs,
            };
            i = j + 1;
        }
    }
}

pub(super) fn as_gemm(k: &mut Box<dyn FastKernel>) -> Option<&mut Gemm> {
    k.as_gemm()
}
