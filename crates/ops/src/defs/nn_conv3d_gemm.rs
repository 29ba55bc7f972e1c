//! The 3-D im2col + GEMM kernels of `nn_conv3d`: Conv3D's forward pass and
//! its input and filter gradients, over chunks of the batch, per group.

use crate::defs::nn_conv::Real;

/// The geometry of a 3-D convolution of `x` `[n, c, sp]` by `w`
/// `[oc, c/group, k]` giving `[n, oc, o]`; `p` is the padding before.
#[derive(Debug, Clone, Copy)]
pub(super) struct Geom3 {
    pub(super) n: usize,
    pub(super) c: usize,
    pub(super) oc: usize,
    pub(super) group: usize,
    pub(super) sp: [usize; 3],
    pub(super) k: [usize; 3],
    pub(super) s: [usize; 3],
    pub(super) d: [usize; 3],
    pub(super) p: [usize; 3],
    pub(super) o: [usize; 3],
}

impl Geom3 {
    fn cg(&self) -> usize {
        self.c / self.group
    }
    fn ocg(&self) -> usize {
        self.oc / self.group
    }
    fn kvol(&self) -> usize {
        self.k.iter().product()
    }
    fn kg(&self) -> usize {
        self.cg() * self.kvol()
    }
    fn ovol(&self) -> usize {
        self.o.iter().product()
    }
    pub(super) fn svol(&self) -> usize {
        self.sp.iter().product()
    }
    fn chunk(&self) -> usize {
        const LIMIT: usize = 1 << 22;
        let per_image = (self.kg() * self.ovol()).max(1);
        (LIMIT / per_image).clamp(1, self.n.max(1))
    }
    /// Checks the working buffers of the kernels (im2col columns and a
    /// gathered gradient for one chunk of images, and a `ocg·kg` product)
    /// against the memory budget.
    pub(crate) fn check_scratch(&self, op: &str, elem_size: usize) -> Result<(), crate::OpError> {
        let elements = (self.kg() + self.ocg())
            .checked_mul(self.chunk())
            .and_then(|n| n.checked_mul(self.ovol()))
            .and_then(|n| n.checked_add(self.ocg().checked_mul(self.kg())?));
        crate::guard::scratch(op, "working buffer (im2col)", elements, elem_size)
    }
}

/// The outputs `o` in `0..count` with `0 <= o*s + off < size`, as a range.
fn valid_range(off: isize, s: usize, size: usize, count: usize) -> (usize, usize) {
    let lo = if off >= 0 {
        0
    } else {
        off.unsigned_abs().div_ceil(s)
    };
    let lim = size as isize - off;
    let hi = if lim <= 0 {
        0
    } else {
        (lim as usize).div_ceil(s)
    };
    let lo = lo.min(count);
    (lo, hi.clamp(lo, count))
}

/// Calls `f(col_offset, x_offset_or_none)` for every cell of the column
/// matrix of images `n0..n0+nb`, group `grp`; rows are `(ci, kd, kh, kw)`.
/// `f` gets runs: `(dst_start, src_start, count, src_step)`; cells outside the
/// input are reported as `src_start = None`.
fn for_each_run(
    g: &Geom3,
    n0: usize,
    nb: usize,
    grp: usize,
    mut f: impl FnMut(usize, Option<usize>, usize, usize),
) {
    let ov = g.ovol();
    let ncols = nb * ov;
    let cg = g.cg();
    let [od, oh, ow] = g.o;
    let [id, ih, iw] = g.sp;
    for ci in 0..cg {
        let c = grp * cg + ci;
        for a in 0..g.k[0] {
            for bb in 0..g.k[1] {
                for e in 0..g.k[2] {
                    let r = ((ci * g.k[0] + a) * g.k[1] + bb) * g.k[2] + e;
                    let off_w = (e * g.d[2]) as isize - g.p[2] as isize;
                    let (lo, hi) = valid_range(off_w, g.s[2], iw, ow);
                    for b in 0..nb {
                        let plane = ((n0 + b) * g.c + c) * id * ih * iw;
                        for z in 0..od {
                            let iz = (z * g.s[0] + a * g.d[0]) as isize - g.p[0] as isize;
                            for y in 0..oh {
                                let dst = r * ncols + b * ov + (z * oh + y) * ow;
                                let iy = (y * g.s[1] + bb * g.d[1]) as isize - g.p[1] as isize;
                                if iz < 0 || iz >= id as isize || iy < 0 || iy >= ih as isize {
                                    f(dst, None, ow, 0);
                                    continue;
                                }
                                let row = plane + (iz as usize * ih + iy as usize) * iw;
                                if lo > 0 {
                                    f(dst, None, lo, 0);
                                }
                                if hi > lo {
                                    let start = ((lo * g.s[2]) as isize + off_w) as usize;
                                    f(dst + lo, Some(row + start), hi - lo, g.s[2]);
                                }
                                if hi < ow {
                                    f(dst + hi, None, ow - hi, 0);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn im2col3<T: Real>(x: &[T], g: &Geom3, n0: usize, nb: usize, grp: usize, cols: &mut [T]) {
    for_each_run(g, n0, nb, grp, |dst, src, count, step| match src {
        None => cols[dst..dst + count].fill(T::default()),
        Some(s) => {
            for k in 0..count {
                cols[dst + k] = x[s + k * step];
            }
        }
    });
}

fn col2im3<T: Real>(cols: &[T], g: &Geom3, n0: usize, nb: usize, grp: usize, dx: &mut [T]) {
    for_each_run(g, n0, nb, grp, |dst, src, count, step| {
        if let Some(s) = src {
            for k in 0..count {
                dx[s + k * step] += cols[dst + k];
            }
        }
    });
}

fn gather_dout3<T: Real>(dout: &[T], g: &Geom3, n0: usize, nb: usize, grp: usize, d: &mut [T]) {
    let ov = g.ovol();
    let ncols = nb * ov;
    for o in 0..g.ocg() {
        for b in 0..nb {
            d[o * ncols + b * ov..][..ov]
                .copy_from_slice(&dout[((n0 + b) * g.oc + grp * g.ocg() + o) * ov..][..ov]);
        }
    }
}

pub(super) fn conv3d_forward<T: Real>(x: &[T], w: &[T], g: &Geom3) -> Vec<T> {
    let ov = g.ovol();
    let mut out = vec![T::default(); g.n * g.oc * ov];
    if out.is_empty() {
        return out;
    }
    let (kg, ocg) = (g.kg(), g.ocg());
    let chunk = g.chunk();
    let (mut cols, mut tmp) = (Vec::new(), Vec::new());
    let mut n0 = 0;
    while n0 < g.n {
        let nb = chunk.min(g.n - n0);
        let ncols = nb * ov;
        cols.resize(kg * ncols, T::default());
        tmp.resize(ocg * ncols, T::default());
        for grp in 0..g.group {
            im2col3(x, g, n0, nb, grp, &mut cols);
            let wg = &w[grp * ocg * kg..][..ocg * kg];
            T::gemm(
                ocg,
                ncols,
                kg,
                wg,
                kg as isize,
                1,
                &cols,
                ncols as isize,
                1,
                &mut tmp,
            );
            for o in 0..ocg {
                for b in 0..nb {
                    out[((n0 + b) * g.oc + grp * ocg + o) * ov..][..ov]
                        .copy_from_slice(&tmp[o * ncols + b * ov..][..ov]);
                }
            }
        }
        n0 += nb;
    }
    out
}

pub(super) fn conv3d_backprop_filter<T: Real>(dout: &[T], x: &[T], g: &Geom3) -> Vec<T> {
    let (kg, ocg, ov) = (g.kg(), g.ocg(), g.ovol());
    let mut dw = vec![T::default(); g.oc * kg];
    if dw.is_empty() || g.n * ov == 0 {
        return dw;
    }
    let chunk = g.chunk();
    let (mut cols, mut d, mut tmp) = (Vec::new(), Vec::new(), vec![T::default(); ocg * kg]);
    let mut n0 = 0;
    while n0 < g.n {
        let nb = chunk.min(g.n - n0);
        let ncols = nb * ov;
        cols.resize(kg * ncols, T::default());
        d.resize(ocg * ncols, T::default());
        for grp in 0..g.group {
            im2col3(x, g, n0, nb, grp, &mut cols);
            gather_dout3(dout, g, n0, nb, grp, &mut d);
            T::gemm(
                ocg,
                kg,
                ncols,
                &d,
                ncols as isize,
                1,
                &cols,
                1,
                ncols as isize,
                &mut tmp,
            );
            for (acc, &v) in dw[grp * ocg * kg..][..ocg * kg].iter_mut().zip(&tmp) {
                *acc += v;
            }
        }
        n0 += nb;
    }
    dw
}

pub(super) fn conv3d_backprop_input<T: Real>(dout: &[T], w: &[T], g: &Geom3) -> Vec<T> {
    let (kg, ocg, ov) = (g.kg(), g.ocg(), g.ovol());
    let mut dx = vec![T::default(); g.n * g.c * g.svol()];
    if dx.is_empty() || ov == 0 || kg == 0 {
        return dx;
    }
    let chunk = g.chunk();
    let (mut dcols, mut d) = (Vec::new(), Vec::new());
    let mut n0 = 0;
    while n0 < g.n {
        let nb = chunk.min(g.n - n0);
        let ncols = nb * ov;
        dcols.resize(kg * ncols, T::default());
        d.resize(ocg * ncols, T::default());
        for grp in 0..g.group {
            gather_dout3(dout, g, n0, nb, grp, &mut d);
            let wg = &w[grp * ocg * kg..][..ocg * kg];
            T::gemm(
                kg,
                ncols,
                ocg,
                wg,
                1,
                kg as isize,
                &d,
                ncols as isize,
                1,
                &mut dcols,
            );
            col2im3(&dcols, g, n0, nb, grp, &mut dx);
        }
        n0 += nb;
    }
    dx
}
