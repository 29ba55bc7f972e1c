//! Fused elementwise loops (XLA's loop fusion): a chain of elementwise
//! primitives over one shape runs as one pass over memory, chunk by chunk,
//! each intermediate living only in a chunk-sized buffer on the stack.
//!
//! A fusion is a small program ([`EOp`]) over chunk registers. Inputs are
//! read through broadcast strides (a bias along the channel axis, a scalar),
//! after the shape has been collapsed to an outer and an inner, contiguous,
//! dimension. Booleans (comparison results, `Select` conditions) are 0.0/1.0
//! inside. Each operation computes exactly what the registry's `f32` kernel
//! computes (the same expression in `f32`), so results match the
//! interpreter's bit for bit.

use ops::defs::backward::activation::silu_slope;
use ops::defs::elementwise::{erf_f32, tanh_f32};

use super::kernels::{par_ranges, FastKernel, Src, P};

/// Elements per chunk.
const CH: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Un {
    Neg,
    Abs,
    Square,
    Relu,
    Exp,
    Log,
    Sqrt,
    Rsqrt,
    Tanh,
    Sigmoid,
    Gelu,
    Sin,
    Cos,
    Erf,
    Reciprocal,
    Not,
    /// Non-zero to 1.0 (a cast to bool, read as a mask).
    Truth,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
    Gt,
    Ge,
    Lt,
    Le,
    Eq,
    Ne,
    And,
    Or,
    /// `ReluGrad(dy, y)`: `dy` where `y > 0`, else 0.
    ReluGrad,
    /// The activations' backward primitives, in MindSpore's argument order:
    /// `SigmoidGrad(y, dy)`, `TanhGrad(y, dy)`, `ReLU6Grad(dy, x)`,
    /// `SiLUGrad(dy, x)`; computed in f64 and rounded, as the registry's
    /// kernels.
    SigmoidGrad,
    TanhGrad,
    Relu6Grad,
    SiluGrad,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum EOp {
    Input(u16),
    Const(f32),
    Un(Un, u16),
    Bin(Bin, u16, u16),
    Select(u16, u16, u16),
}

/// How an input is read: strides over the collapsed outer dimensions and
/// along the inner one (0 or 1).
#[derive(Debug, Clone)]
pub(crate) struct InputLayout {
    pub outer: Vec<usize>,
    pub inner: usize,
}

#[derive(Debug)]
pub(crate) struct Fused {
    /// Sizes of the collapsed outer dimensions and the inner length.
    pub outer_dims: Vec<usize>,
    pub inner: usize,
    pub inputs: Vec<InputLayout>,
    pub prog: Vec<EOp>,
    /// The program values each output is.
    pub outputs: Vec<u16>,
    /// Which inputs have the output's own layout (may be overwritten in place).
    pub full: Vec<bool>,
    pub label: String,
}

/// Broadcast strides of `shape` seen from `out` (0 on broadcast dimensions).
pub(crate) fn broadcast_strides(shape: &[usize], out: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; out.len()];
    let offset = out.len() - shape.len();
    let mut stride = 1;
    for i in (0..shape.len()).rev() {
        strides[i + offset] = if shape[i] == 1 { 0 } else { stride };
        stride *= shape[i];
    }
    strides
}

/// Outer dimensions, inner length, per input (outer strides, inner stride).
pub(crate) type Collapsed = (Vec<usize>, usize, Vec<(Vec<usize>, usize)>);

/// Collapses `out` and every input's strides into outer dimensions and one
/// inner dimension: returns `(outer_dims, inner, per input (outer strides,
/// inner stride))`.
pub(crate) fn collapse(out: &[usize], strides: &[Vec<usize>]) -> Collapsed {
    // Drop dimensions of size 1.
    let keep: Vec<usize> = (0..out.len()).filter(|&d| out[d] != 1).collect();
    let mut dims: Vec<usize> = keep.iter().map(|&d| out[d]).collect();
    let mut ss: Vec<Vec<usize>> = strides
        .iter()
        .map(|s| keep.iter().map(|&d| s[d]).collect())
        .collect();
    // Merge dimension d into d+1 when every input walks them as one.
    let mut d = 0;
    while d + 1 < dims.len() {
        let mergeable = ss.iter().all(|s| s[d] == s[d + 1] * dims[d + 1]);
        if mergeable {
            dims[d + 1] *= dims[d];
            dims.remove(d);
            for s in ss.iter_mut() {
                s.remove(d);
            }
        } else {
            d += 1;
        }
    }
    if dims.is_empty() {
        dims.push(1);
        for s in ss.iter_mut() {
            s.push(0);
        }
    }
    let inner = *dims.last().expect("one dimension");
    let outer_dims = dims[..dims.len() - 1].to_vec();
    let per = ss
        .into_iter()
        .map(|mut s| {
            let i = s.pop().expect("one dimension");
            (s, i)
        })
        .collect();
    (outer_dims, inner, per)
}

#[inline(always)]
fn un(op: Un, a: &[f32], r: &mut [f32]) {
    macro_rules! map {
        (|$x:ident| $e:expr) => {
            for (o, &$x) in r.iter_mut().zip(a) {
                *o = $e;
            }
        };
    }
    match op {
        Un::Neg => map!(|x| -x),
        Un::Abs => map!(|x| x.abs()),
        Un::Square => map!(|x| x * x),
        Un::Relu => map!(|x| if x > 0.0 { x } else { 0.0 }),
        Un::Exp => map!(|x| x.exp()),
        Un::Log => map!(|x| x.ln()),
        Un::Sqrt => map!(|x| x.sqrt()),
        Un::Rsqrt => map!(|x| 1.0 / x.sqrt()),
        Un::Tanh => map!(|x| tanh_f32(x)),
        Un::Sigmoid => map!(|x| {
            let e = (-x.abs()).exp();
            let num = if x >= 0.0 { 1.0 } else { e };
            num / (1.0 + e)
        }),
        Un::Gelu => map!(|x| {
            let u = GELU_C * (x + GELU_A * x * x * x);
            0.5 * x * (1.0 + tanh_f32(u))
        }),
        Un::Sin => map!(|x| x.sin()),
        Un::Cos => map!(|x| x.cos()),
        Un::Erf => map!(|x| erf_f32(x)),
        Un::Reciprocal => map!(|x| 1.0 / x),
        Un::Not => map!(|x| if x != 0.0 { 0.0 } else { 1.0 }),
        Un::Truth => map!(|x| if x != 0.0 { 1.0 } else { 0.0 }),
    }
}

/// MindSpore's GeLU constants, as the registry's `f32` kernel rounds them.
const GELU_C: f32 = 0.797_884_560_8_f64 as f32;
const GELU_A: f32 = 0.044715_f64 as f32;

#[inline(always)]
fn bin(op: Bin, a: &[f32], b: &[f32], r: &mut [f32]) {
    macro_rules! map {
        (|$x:ident, $y:ident| $e:expr) => {
            for ((o, &$x), &$y) in r.iter_mut().zip(a).zip(b) {
                *o = $e;
            }
        };
    }
    let t = |c: bool| if c { 1.0 } else { 0.0 };
    match op {
        Bin::Add => map!(|x, y| x + y),
        Bin::Sub => map!(|x, y| x - y),
        Bin::Mul => map!(|x, y| x * y),
        Bin::Div => map!(|x, y| x / y),
        Bin::Max => map!(|x, y| if x > y { x } else { y }),
        Bin::Min => map!(|x, y| if x < y { x } else { y }),
        Bin::Gt => map!(|x, y| t(x > y)),
        Bin::Ge => map!(|x, y| t(x >= y)),
        Bin::Lt => map!(|x, y| t(x < y)),
        Bin::Le => map!(|x, y| t(x <= y)),
        Bin::Eq => map!(|x, y| t(x == y)),
        Bin::Ne => map!(|x, y| t(x != y)),
        Bin::And => map!(|x, y| t(x != 0.0 && y != 0.0)),
        Bin::Or => map!(|x, y| t(x != 0.0 || y != 0.0)),
        Bin::ReluGrad => map!(|x, y| if y > 0.0 { x } else { 0.0 }),
        Bin::SigmoidGrad => map!(|y, d| {
            let (y, d) = (y as f64, d as f64);
            (d * y * (1.0 - y)) as f32
        }),
        Bin::TanhGrad => map!(|y, d| {
            let (y, d) = (y as f64, d as f64);
            (d * (1.0 - y * y)) as f32
        }),
        Bin::Relu6Grad => map!(|d, x| if x > 0.0 && x <= 6.0 { d } else { 0.0 }),
        Bin::SiluGrad => map!(|d, x| (d as f64 * silu_slope(x as f64)) as f32),
    }
}

/// Rewrites `Select(a > 0, x, 0)` (how the gradient of `ReLU` reaches a
/// fusion) as `ReluGrad(x, a)`, the same values in one operation, then drops
/// operations no output needs; `outputs` are renumbered.
pub(crate) fn simplify(mut prog: Vec<EOp>, outputs: &mut [u16]) -> Vec<EOp> {
    let zero = |prog: &[EOp], v: u16| matches!(prog[v as usize], EOp::Const(c) if c == 0.0);
    for i in 0..prog.len() {
        if let EOp::Select(c, x, y) = prog[i] {
            if let EOp::Bin(Bin::Gt, a, k) = prog[c as usize] {
                if zero(&prog, k) && zero(&prog, y) {
                    prog[i] = EOp::Bin(Bin::ReluGrad, x, a);
                }
            }
        }
    }
    let mut live = vec![false; prog.len()];
    for &o in outputs.iter() {
        live[o as usize] = true;
    }
    for i in (0..prog.len()).rev() {
        if !live[i] {
            continue;
        }
        match prog[i] {
            EOp::Input(_) | EOp::Const(_) => {}
            EOp::Un(_, a) => live[a as usize] = true,
            EOp::Bin(_, a, b) => {
                live[a as usize] = true;
                live[b as usize] = true;
            }
            EOp::Select(c, x, y) => {
                for v in [c, x, y] {
                    live[v as usize] = true;
                }
            }
        }
    }
    let mut new_index = vec![0u16; prog.len()];
    let mut kept = Vec::new();
    for (i, op) in prog.into_iter().enumerate() {
        if !live[i] {
            continue;
        }
        let at = |v: u16| new_index[v as usize];
        kept.push(match op {
            EOp::Un(u, a) => EOp::Un(u, at(a)),
            EOp::Bin(b, x, y) => EOp::Bin(b, at(x), at(y)),
            EOp::Select(c, x, y) => EOp::Select(at(c), at(x), at(y)),
            other => other,
        });
        new_index[i] = (kept.len() - 1) as u16;
    }
    for o in outputs.iter_mut() {
        *o = new_index[*o as usize];
    }
    kept
}

impl Fused {
    fn rows(&self) -> usize {
        self.outer_dims.iter().product()
    }

    /// Runs tiles `[t0, t1)`; a tile is one chunk of one row. Compiled
    /// twice: for the baseline x86-64 (SSE2: 4 lanes) and for AVX2 (8 lanes),
    /// chosen when it runs. No FMA contraction either way (Rust never
    /// contracts), so both give the same bits.
    unsafe fn tiles(&self, ins: &[Src], outs: &[*mut f32], t0: usize, t1: usize) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            return self.tiles_avx2(ins, outs, t0, t1);
        }
        self.tiles_any(ins, outs, t0, t1)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn tiles_avx2(&self, ins: &[Src], outs: &[*mut f32], t0: usize, t1: usize) {
        self.tiles_any(ins, outs, t0, t1)
    }

    #[inline(always)]
    unsafe fn tiles_any(&self, ins: &[Src], outs: &[*mut f32], t0: usize, t1: usize) {
        let chunks = self.inner.div_ceil(CH);
        let nregs = self.prog.len();
        let mut regs = vec![[0f32; CH]; nregs];
        let mut offs = vec![0usize; self.inputs.len()];
        let mut idx = vec![0usize; self.outer_dims.len()];
        let mut row = usize::MAX;
        for t in t0..t1 {
            let (o, c) = (t / chunks, t % chunks);
            if o != row {
                row = o;
                // Multi-index of the row, then each input's offset.
                let mut rest = o;
                for d in (0..idx.len()).rev() {
                    idx[d] = rest % self.outer_dims[d];
                    rest /= self.outer_dims[d];
                }
                for (k, inp) in self.inputs.iter().enumerate() {
                    offs[k] = idx.iter().zip(&inp.outer).map(|(i, s)| i * s).sum();
                }
            }
            let start = c * CH;
            let len = CH.min(self.inner - start);
            for (i, op) in self.prog.iter().enumerate() {
                let (done, rest) = regs.split_at_mut(i);
                let r = &mut rest[0][..len];
                match *op {
                    EOp::Input(k) => {
                        let inp = &self.inputs[k as usize];
                        let base = offs[k as usize] + start * inp.inner;
                        match (ins[k as usize], inp.inner) {
                            (Src::F32(p), 1) => {
                                std::ptr::copy_nonoverlapping(p.add(base), r.as_mut_ptr(), len)
                            }
                            (Src::F32(p), _) => r.fill(*p.add(base)),
                            (Src::Bool(p), 1) => {
                                for (j, o) in r.iter_mut().enumerate() {
                                    *o = if *p.add(base + j) { 1.0 } else { 0.0 };
                                }
                            }
                            (Src::Bool(p), _) => r.fill(if *p.add(base) { 1.0 } else { 0.0 }),
                            (other, _) => panic!("a fused loop cannot read {other:?}"),
                        }
                    }
                    EOp::Const(v) => r.fill(v),
                    EOp::Un(u, a) => un(u, &done[a as usize][..len], r),
                    EOp::Bin(b, x, y) => {
                        bin(b, &done[x as usize][..len], &done[y as usize][..len], r)
                    }
                    EOp::Select(c, x, y) => {
                        let (c, x, y) = (&done[c as usize], &done[x as usize], &done[y as usize]);
                        for (((o, &c), &x), &y) in r.iter_mut().zip(c).zip(x).zip(y) {
                            *o = if c != 0.0 { x } else { y };
                        }
                    }
                }
            }
            let base = o * self.inner + start;
            for (j, &v) in self.outputs.iter().enumerate() {
                std::ptr::copy_nonoverlapping(regs[v as usize].as_ptr(), outs[j].add(base), len);
            }
        }
    }
}

impl FastKernel for Fused {
    fn name(&self) -> String {
        format!("fused {}", self.label)
    }

    fn in_place(&self) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        for (i, &f) in self.full.iter().enumerate() {
            if f {
                for j in 0..self.outputs.len() {
                    v.push((i, j));
                }
            }
        }
        v
    }

    unsafe fn run(&self, ins: &[Src], outs: &[*mut f32], _scratch: *mut f32) -> Result<(), String> {
        let chunks = self.inner.div_ceil(CH);
        let tiles = self.rows() * chunks;
        let work = self.rows() * self.inner * self.prog.len();
        let outs: Vec<P<f32>> = outs.iter().map(|&p| P(p)).collect();
        par_ranges(tiles, work, |a, b| {
            let dsts: Vec<*mut f32> = outs.iter().map(|p| p.get()).collect();
            self.tiles(ins, &dsts, a, b);
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relu_gradient_select_becomes_one_operation() {
        // dy, a; 0; a > 0; Select(a > 0, dy, 0); and an unused Neg.
        let prog = vec![
            EOp::Input(0),
            EOp::Input(1),
            EOp::Const(0.0),
            EOp::Bin(Bin::Gt, 1, 2),
            EOp::Un(Un::Neg, 0),
            EOp::Select(3, 0, 2),
        ];
        let mut outputs = [5u16];
        let kept = simplify(prog, &mut outputs);
        assert_eq!(
            kept,
            vec![EOp::Input(0), EOp::Input(1), EOp::Bin(Bin::ReluGrad, 0, 1)]
        );
        assert_eq!(outputs, [2]);
        // A Select whose else-branch is not zero stays.
        let prog = vec![
            EOp::Input(0),
            EOp::Const(0.0),
            EOp::Const(1.0),
            EOp::Bin(Bin::Gt, 0, 1),
            EOp::Select(3, 0, 2),
        ];
        let mut outputs = [4u16];
        assert_eq!(simplify(prog.clone(), &mut outputs), prog);
    }
}
