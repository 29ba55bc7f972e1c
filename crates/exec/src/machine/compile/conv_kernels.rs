//! Conv2D, MaxPool and their gradients as plan kernels: im2col + GEMM per image, as the
//! registry's kernels, but with the images split over the threads (each its
//! own im2col block in the plan's scratch space, each GEMM single-threaded),
//! so small convolutions (few channels, where one GEMM cannot use two cores
//! well) run in parallel, and nothing is allocated.
//!
//! Sums are those of the registry's kernels, in a different grouping where
//! the filter's gradient adds up the images (per thread, then the threads in
//! order): results agree to rounding and are deterministic.

use ops::defs::conv::{col2im_f32, conv_geom, im2col_f32, pool_geom, ConvGeom, PoolGeom};
use ops::{ConvRole, Family, PoolReduce};
use tensor::DType;

use super::kernels::{par_parts, par_ranges, threads, FastKernel, Src, C, P};
use super::ops_kernels::{Chosen, In};
use super::trace::{Node, OutTree, RegInfo, SVal};
use crate::value::PrimFn;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Forward,
    /// `Conv2DBackpropInput(dout, weight, input_sizes)`.
    Input,
    /// `Conv2DBackpropFilter(dout, x, filter_sizes)`.
    Filter,
}

fn reg(v: &SVal) -> Option<u32> {
    match v {
        SVal::Reg(r) => Some(*r),
        _ => None,
    }
}

/// This module's kernel for node `n`, if it has one.
pub(crate) fn select(n: &Node, p: &PrimFn, regs: &[RegInfo]) -> Option<Chosen> {
    let which = match p.op?.traits.family {
        Family::Pool2D {
            reduce: PoolReduce::Max,
            grad,
        } => return select_pool(n, p, grad, regs),
        Family::Conv2D(ConvRole::Forward) => Which::Forward,
        Family::Conv2D(ConvRole::InputGrad) => Which::Input,
        Family::Conv2D(ConvRole::FilterGrad) => Which::Filter,
        _ => return None,
    };
    let ins = n.inputs();
    let want = if which == Which::Forward { 2 } else { 3 };
    if ins.len() != want {
        return None;
    }
    let f32_reg = |v: &SVal| reg(v).filter(|&r| regs[r as usize].dtype == DType::F32);
    let out = match n.out {
        OutTree::Reg(r) if regs[r as usize].dtype == DType::F32 => r,
        _ => return None,
    };
    let shape = |r: u32| regs[r as usize].shape.clone();
    let (a, b) = (f32_reg(&ins[0])?, f32_reg(&ins[1])?);
    // The geometry from the image's and the weight's shapes; a gradient's
    // sizes input (`input_sizes`, `filter_sizes`) is its result's shape.
    let (xs, ws) = match which {
        Which::Forward => (shape(a), shape(b)),
        Which::Input => (shape(out), shape(b)),
        Which::Filter => (shape(b), shape(out)),
    };
    let g = conv_geom(&xs, &ws, &p.attrs).ok()?;
    if g.group != 1 || g.n == 0 || g.oh * g.ow == 0 || g.c == 0 || g.oc == 0 {
        return None;
    }
    let expect_out = match which {
        Which::Forward => vec![g.n, g.oc, g.oh, g.ow],
        Which::Input => xs.clone(),
        Which::Filter => ws.clone(),
    };
    if regs[out as usize].shape != expect_out {
        return None;
    }
    if which != Which::Forward && shape(a) != [g.n, g.oc, g.oh, g.ow] {
        return None;
    }
    Some(Chosen {
        kernel: Box::new(Conv {
            g,
            which,
            threads: threads(),
        }),
        ins: vec![In::Reg(a), In::Reg(b)],
        outs: vec![out],
        absorbs: vec![],
    })
}

#[derive(Debug)]
pub(crate) struct Conv {
    g: ConvGeom,
    which: Which,
    /// Threads the scratch space is laid out for.
    threads: usize,
}

impl Conv {
    fn kg(&self) -> usize {
        self.g.c * self.g.kh * self.g.kw
    }
    fn ohw(&self) -> usize {
        self.g.oh * self.g.ow
    }
    /// Scratch per thread: a column block, and for the filter's gradient a
    /// partial sum.
    fn per_thread(&self) -> usize {
        let cols = self.kg() * self.ohw();
        match self.which {
            Which::Filter => cols + self.g.oc * self.kg(),
            _ => cols,
        }
    }
}

/// `dst[m×n] (+)= a·b` on one thread, row-major, with `a`/`b` given by row
/// and column strides.
#[allow(clippy::too_many_arguments)]
unsafe fn gemm1(
    m: usize,
    n: usize,
    k: usize,
    dst: *mut f32,
    accumulate: bool,
    a: *const f32,
    a_rs: isize,
    a_cs: isize,
    b: *const f32,
    b_rs: isize,
    b_cs: isize,
) {
    gemm::gemm(
        m,
        n,
        k,
        dst,
        1,
        n as isize,
        accumulate,
        a,
        a_cs,
        a_rs,
        b,
        b_cs,
        b_rs,
        1.0,
        1.0,
        false,
        false,
        false,
        gemm::Parallelism::None,
    );
}

impl FastKernel for Conv {
    fn name(&self) -> String {
        let g = &self.g;
        format!(
            "{} {}x{}x{}x{} by {}x{}x{}x{}",
            match self.which {
                Which::Forward => "conv2d",
                Which::Input => "conv2d grad input",
                Which::Filter => "conv2d grad filter",
            },
            g.n,
            g.c,
            g.h,
            g.w,
            g.oc,
            g.c,
            g.kh,
            g.kw
        )
    }

    fn scratch(&self) -> usize {
        self.per_thread() * self.threads
    }

    unsafe fn run(&self, ins: &[Src], outs: &[*mut f32], scratch: *mut f32) -> Result<(), String> {
        let g = self.g;
        let (kg, ohw, oc) = (self.kg(), self.ohw(), g.oc);
        let (a, b, out, scratch) = (C(ins[0].f32()), C(ins[1].f32()), P(outs[0]), P(scratch));
        let img = g.c * g.h * g.w;
        let per = self.per_thread();
        let work = g.n * oc * kg * ohw;
        let which = self.which;
        let used = par_parts(g.n, self.threads, work, |slot, n0, n1| {
            let cols = scratch.get().add(slot * per);
            let cols_s = std::slice::from_raw_parts_mut(cols, kg * ohw);
            match which {
                Which::Forward => {
                    let x = std::slice::from_raw_parts(a.get(), g.n * img);
                    for n in n0..n1 {
                        im2col_f32(x, &g, n, cols_s);
                        let dst = out.get().add(n * oc * ohw);
                        gemm1(
                            oc,
                            ohw,
                            kg,
                            dst,
                            false,
                            b.get(),
                            kg as isize,
                            1,
                            cols,
                            ohw as isize,
                            1,
                        );
                    }
                }
                Which::Input => {
                    let dx = std::slice::from_raw_parts_mut(out.get(), g.n * img);
                    for n in n0..n1 {
                        // dcols[r, j] = Σ_o w[o, r] · dout[n, o, j]
                        gemm1(
                            kg,
                            ohw,
                            oc,
                            cols,
                            false,
                            b.get(),
                            1,
                            kg as isize,
                            a.get().add(n * oc * ohw),
                            ohw as isize,
                            1,
                        );
                        dx[n * img..(n + 1) * img].fill(0.0);
                        col2im_f32(cols_s, &g, n, dx);
                    }
                }
                Which::Filter => {
                    let x = std::slice::from_raw_parts(b.get(), g.n * img);
                    let acc = cols.add(kg * ohw);
                    for n in n0..n1 {
                        im2col_f32(x, &g, n, cols_s);
                        // acc[o, r] += Σ_j dout[n, o, j] · cols[r, j]
                        gemm1(
                            oc,
                            kg,
                            ohw,
                            acc,
                            n > n0,
                            a.get().add(n * oc * ohw),
                            ohw as isize,
                            1,
                            cols,
                            1,
                            ohw as isize,
                        );
                    }
                }
            }
        });
        if which == Which::Filter {
            // The threads' partial sums, in order.
            let dw = std::slice::from_raw_parts_mut(out.get(), oc * kg);
            for t in 0..used {
                let part =
                    std::slice::from_raw_parts(scratch.get().add(t * per + kg * ohw), oc * kg);
                if t == 0 {
                    dw.copy_from_slice(part);
                } else {
                    for (d, &v) in dw.iter_mut().zip(part) {
                        *d += v;
                    }
                }
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Max pooling.

fn select_pool(n: &Node, p: &PrimFn, grad: bool, regs: &[RegInfo]) -> Option<Chosen> {
    let ins = n.inputs();
    if ins.len() != if grad { 3 } else { 1 } {
        return None;
    }
    let f32_reg = |v: &SVal| reg(v).filter(|&r| regs[r as usize].dtype == DType::F32);
    let out = match n.out {
        OutTree::Reg(r) if regs[r as usize].dtype == DType::F32 => r,
        _ => return None,
    };
    let x = f32_reg(&ins[0])?;
    let xs = regs[x as usize].shape.clone();
    let g = pool_geom(p.prim.name.as_str(), &xs, &p.attrs).ok()?;
    let pooled = vec![xs[0], xs[1], g.oh, g.ow];
    let mut inputs = vec![In::Reg(x)];
    if grad {
        let dout = f32_reg(&ins[2])?;
        if regs[dout as usize].shape != pooled || regs[out as usize].shape != xs {
            return None;
        }
        inputs.push(In::Reg(dout));
    } else if regs[out as usize].shape != pooled {
        return None;
    }
    Some(Chosen {
        kernel: Box::new(MaxPool { g, grad }),
        ins: inputs,
        outs: vec![out],
        absorbs: vec![],
    })
}

/// MaxPool, or its gradient (each output's gradient to its window's first
/// maximum), as the registry's kernels compute them; planes split over the
/// threads.
#[derive(Debug)]
pub(crate) struct MaxPool {
    g: PoolGeom,
    grad: bool,
}

impl FastKernel for MaxPool {
    fn name(&self) -> String {
        format!(
            "maxpool{} {}x{}x{}",
            if self.grad { " grad" } else { "" },
            self.g.planes,
            self.g.h,
            self.g.w
        )
    }

    unsafe fn run(&self, ins: &[Src], outs: &[*mut f32], _scratch: *mut f32) -> Result<(), String> {
        let g = self.g;
        let (hw, ohw) = (g.h * g.w, g.oh * g.ow);
        let x = C(ins[0].f32());
        let dout = C(if self.grad {
            ins[1].f32()
        } else {
            ins[0].f32()
        });
        let out = P(outs[0]);
        let grad = self.grad;
        par_ranges(g.planes, g.planes * hw * 2, |p0, p1| {
            for p in p0..p1 {
                let plane = std::slice::from_raw_parts(x.get().add(p * hw), hw);
                if grad {
                    let d = std::slice::from_raw_parts(dout.get().add(p * ohw), ohw);
                    let dx = std::slice::from_raw_parts_mut(out.get().add(p * hw), hw);
                    dx.fill(0.0);
                    for oy in 0..g.oh {
                        for ox in 0..g.ow {
                            let (rows, cols) = g.window(oy, ox);
                            let mut best: Option<(usize, f32)> = None;
                            for iy in rows {
                                for ix in cols.clone() {
                                    let v = plane[iy * g.w + ix];
                                    if best.is_none_or(|(_, b)| v > b) {
                                        best = Some((iy * g.w + ix, v));
                                    }
                                }
                            }
                            if let Some((i, _)) = best {
                                dx[i] += d[oy * g.ow + ox];
                            }
                        }
                    }
                } else {
                    let o = std::slice::from_raw_parts_mut(out.get().add(p * ohw), ohw);
                    for oy in 0..g.oh {
                        for ox in 0..g.ow {
                            let (rows, cols) = g.window(oy, ox);
                            let mut m = f32::NEG_INFINITY;
                            for iy in rows {
                                for &v in &plane[iy * g.w + cols.start..iy * g.w + cols.end] {
                                    if v > m {
                                        m = v;
                                    }
                                }
                            }
                            o[oy * g.ow + ox] = m;
                        }
                    }
                }
            }
        });
        Ok(())
    }
}
