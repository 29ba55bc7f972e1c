//! Conv3D's geometry and its im2col and col2im, for the GEMM drivers of
//! `conv/gemm.rs` (Conv3D's forward pass and both gradients).

use crate::defs::conv::gemm::{valid_range, ColumnGeom};
use crate::defs::conv::Real;

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

impl ColumnGeom for Geom3 {
    fn batch(&self) -> usize {
        self.n
    }
    fn channels(&self) -> usize {
        self.c
    }
    fn out_channels(&self) -> usize {
        self.oc
    }
    fn groups(&self) -> usize {
        self.group
    }
    fn kernel_cells(&self) -> usize {
        self.k.iter().product()
    }
    fn in_cells(&self) -> usize {
        self.sp.iter().product()
    }
    fn out_cells(&self) -> usize {
        self.o.iter().product()
    }
    fn im2col<T: Real>(&self, x: &[T], n0: usize, nb: usize, grp: usize, cols: &mut [T]) {
        for_each_run(self, n0, nb, grp, |dst, src, count, step| match src {
            None => cols[dst..dst + count].fill(T::default()),
            Some(s) => {
                for k in 0..count {
                    cols[dst + k] = x[s + k * step];
                }
            }
        });
    }
    fn col2im<T: Real>(&self, cols: &[T], n0: usize, nb: usize, grp: usize, dx: &mut [T]) {
        for_each_run(self, n0, nb, grp, |dst, src, count, step| {
            if let Some(s) = src {
                for k in 0..count {
                    dx[s + k * step] += cols[dst + k];
                }
            }
        });
    }
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
    let ov = g.out_cells();
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
