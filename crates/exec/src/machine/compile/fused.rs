//! Fused elementwise loops (XLA's loop fusion): a chain of elementwise
//! primitives over one shape runs as one pass over memory, chunk by chunk,
//! each intermediate living only in a chunk-sized buffer on the stack.
//!
//! A fusion is a small program ([`EOp`]) over chunk registers. Inputs are
//! read through broadcast strides (a bias along the channel axis, a scalar),
//! after the shape has been collapsed to an outer and an inner, contiguous,
//! dimension. Booleans (comparison results, `Select` conditions) are 0.0/1.0
//! inside. An operation is an op's formula, found through its record
//! ([`ops::formula`]): it runs the formula's generated `f32` slice kernel,
//! the same expression the registry's kernel computes, so results match the
//! interpreter's bit for bit.

use ops::formula::Formula;

use super::kernels::{par_ranges, FastKernel, Src, P};

/// Elements per chunk.
const CH: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum EOp {
    Input(u16),
    Const(f32),
    /// An op's formula of `a` (and `b`; `b == a` for a unary one), with its
    /// attribute values.
    F(&'static Formula, u16, u16, [f64; 2]),
    /// Non-zero to 1.0 (a cast to bool, read as a mask).
    Truth(u16),
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

/// Rewrites `Select(a > 0, x, 0)` (how the gradient of `ReLU` reaches a
/// fusion) as `ReluGrad(x, a)`, the same values in one operation, then drops
/// operations no output needs; `outputs` are renumbered.
pub(crate) fn simplify(mut prog: Vec<EOp>, outputs: &mut [u16]) -> Vec<EOp> {
    use ops::defs::backward::RELU_GRAD;
    use ops::defs::elementwise::GREATER;
    let zero = |prog: &[EOp], v: u16| matches!(prog[v as usize], EOp::Const(c) if c == 0.0);
    for i in 0..prog.len() {
        if let EOp::Select(c, x, y) = prog[i] {
            if let EOp::F(f, a, k, _) = prog[c as usize] {
                if *f == GREATER && zero(&prog, k) && zero(&prog, y) {
                    prog[i] = EOp::F(&RELU_GRAD, x, a, [0.0; 2]);
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
            EOp::Truth(a) => live[a as usize] = true,
            EOp::F(_, a, b, _) => {
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
            EOp::Truth(a) => EOp::Truth(at(a)),
            EOp::F(f, x, y, p) => EOp::F(f, at(x), at(y), p),
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
                    EOp::F(f, x, y, p) => (f.kernels().f32)(
                        &done[x as usize][..len],
                        &done[y as usize][..len],
                        &p[..f.params.len()],
                        r,
                    ),
                    EOp::Truth(a) => {
                        for (o, &x) in r.iter_mut().zip(&done[a as usize][..len]) {
                            *o = if x != 0.0 { 1.0 } else { 0.0 };
                        }
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
        use ops::defs::backward::RELU_GRAD;
        use ops::defs::elementwise::{GREATER, NEG};
        // dy, a; 0; a > 0; Select(a > 0, dy, 0); and an unused Neg.
        let prog = vec![
            EOp::Input(0),
            EOp::Input(1),
            EOp::Const(0.0),
            EOp::F(&GREATER, 1, 2, [0.0; 2]),
            EOp::F(&NEG, 0, 0, [0.0; 2]),
            EOp::Select(3, 0, 2),
        ];
        let mut outputs = [5u16];
        let kept = simplify(prog, &mut outputs);
        assert_eq!(
            kept,
            vec![
                EOp::Input(0),
                EOp::Input(1),
                EOp::F(&RELU_GRAD, 0, 1, [0.0; 2])
            ]
        );
        assert_eq!(outputs, [2]);
        // A Select whose else-branch is not zero stays.
        let prog = vec![
            EOp::Input(0),
            EOp::Const(0.0),
            EOp::Const(1.0),
            EOp::F(&GREATER, 0, 1, [0.0; 2]),
            EOp::Select(3, 0, 2),
        ];
        let mut outputs = [4u16];
        assert_eq!(simplify(prog.clone(), &mut outputs), prog);
    }
}
