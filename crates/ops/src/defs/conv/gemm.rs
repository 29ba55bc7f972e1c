//! The im2col + GEMM drivers of convolution, for any number of spatial
//! dimensions: the forward pass and both gradients, over chunks of the batch,
//! per group. A geometry ([`ColumnGeom`]: `ConvGeom` for 2-D, `Geom3` for 3-D)
//! says how big things are and how a chunk's patches become columns.

use crate::defs::conv::Real;
use crate::OpError;

/// What the drivers need of a convolution of `x` `[n, c, in…]` by `w`
/// `[oc, c/group, k…]` giving `[n, oc, out…]`.
pub(crate) trait ColumnGeom {
    fn batch(&self) -> usize;
    fn channels(&self) -> usize;
    fn out_channels(&self) -> usize;
    fn groups(&self) -> usize;
    /// Cells of one channel's kernel window, input and output.
    fn kernel_cells(&self) -> usize;
    fn in_cells(&self) -> usize;
    fn out_cells(&self) -> usize;
    /// Fills `cols` (`[C/group · kernel_cells, nb · out_cells]`) with the
    /// patches of images `n0..n0+nb`, channels of group `grp`; cells outside
    /// the input are zero.
    fn im2col<T: Real>(&self, x: &[T], n0: usize, nb: usize, grp: usize, cols: &mut [T]);
    /// The adjoint of [`ColumnGeom::im2col`]: adds each column cell into the
    /// input cell it was taken from.
    fn col2im<T: Real>(&self, cols: &[T], n0: usize, nb: usize, grp: usize, dx: &mut [T]);

    fn cg(&self) -> usize {
        self.channels() / self.groups()
    }
    fn ocg(&self) -> usize {
        self.out_channels() / self.groups()
    }
    /// Rows of a group's column matrix.
    fn kg(&self) -> usize {
        self.cg() * self.kernel_cells()
    }
    /// How many images one column buffer holds (bounded to ~16 MiB of f32).
    fn chunk(&self) -> usize {
        const LIMIT: usize = 1 << 22;
        let per_image = (self.kg() * self.out_cells()).max(1);
        (LIMIT / per_image).clamp(1, self.batch().max(1))
    }
    /// Checks the drivers' working buffers (columns and a gathered gradient
    /// for one chunk of images, `(kg + ocg)·chunk·out_cells`, and a `ocg·kg`
    /// product) against the memory budget.
    fn check_scratch(&self, op: &str, elem_size: usize) -> Result<(), OpError> {
        let elements = (self.kg() + self.ocg())
            .checked_mul(self.chunk())
            .and_then(|n| n.checked_mul(self.out_cells()))
            .and_then(|n| n.checked_add(self.ocg().checked_mul(self.kg())?));
        crate::guard::scratch(op, "working buffer (im2col)", elements, elem_size)
    }
}

/// The outputs `o` in `0..count` with `0 <= o*s + off < size`, as a range.
pub(crate) fn valid_range(off: isize, s: usize, size: usize, count: usize) -> (usize, usize) {
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

/// Copies `dout`'s channels of group `grp` for images `n0..n0+nb` into a
/// `[oc/group, nb · out_cells]` matrix.
fn gather_dout<T: Real>(
    dout: &[T],
    g: &impl ColumnGeom,
    n0: usize,
    nb: usize,
    grp: usize,
    d: &mut [T],
) {
    let (ov, oc, ocg) = (g.out_cells(), g.out_channels(), g.ocg());
    let ncols = nb * ov;
    for o in 0..ocg {
        for b in 0..nb {
            d[o * ncols + b * ov..][..ov]
                .copy_from_slice(&dout[((n0 + b) * oc + grp * ocg + o) * ov..][..ov]);
        }
    }
}

/// The convolution: `out[n, o] = Σ w[o, c, k…] · x[n, c, …]` per group.
pub(crate) fn conv_forward<T: Real>(x: &[T], w: &[T], g: &impl ColumnGeom) -> Vec<T> {
    let (ov, oc) = (g.out_cells(), g.out_channels());
    let mut out = vec![T::default(); g.batch() * oc * ov];
    if out.is_empty() {
        return out;
    }
    let (kg, ocg) = (g.kg(), g.ocg());
    let chunk = g.chunk();
    let (mut cols, mut tmp) = (Vec::new(), Vec::new());
    let mut n0 = 0;
    while n0 < g.batch() {
        let nb = chunk.min(g.batch() - n0);
        let ncols = nb * ov;
        cols.resize(kg * ncols, T::default());
        for grp in 0..g.groups() {
            g.im2col(x, n0, nb, grp, &mut cols);
            let wg = &w[grp * ocg * kg..][..ocg * kg];
            // One image: the product is the output's block as it lies.
            let single = nb == 1;
            if !single {
                tmp.resize(ocg * ncols, T::default());
            }
            let dst = if single {
                &mut out[(n0 * oc + grp * ocg) * ov..][..ocg * ov]
            } else {
                &mut tmp[..]
            };
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
                dst,
            );
            if !single {
                for o in 0..ocg {
                    for b in 0..nb {
                        out[((n0 + b) * oc + grp * ocg + o) * ov..][..ov]
                            .copy_from_slice(&tmp[o * ncols + b * ov..][..ov]);
                    }
                }
            }
        }
        n0 += nb;
    }
    out
}

/// The gradient with respect to the weight: `[oc, C/group, k…]`.
pub(crate) fn conv_backprop_filter<T: Real>(dout: &[T], x: &[T], g: &impl ColumnGeom) -> Vec<T> {
    let (kg, ocg, ov) = (g.kg(), g.ocg(), g.out_cells());
    let mut dw = vec![T::default(); g.out_channels() * kg];
    if dw.is_empty() || g.batch() * ov == 0 {
        return dw;
    }
    let chunk = g.chunk();
    let (mut cols, mut d, mut tmp) = (Vec::new(), Vec::new(), vec![T::default(); ocg * kg]);
    let mut n0 = 0;
    while n0 < g.batch() {
        let nb = chunk.min(g.batch() - n0);
        let ncols = nb * ov;
        cols.resize(kg * ncols, T::default());
        d.resize(ocg * ncols, T::default());
        for grp in 0..g.groups() {
            g.im2col(x, n0, nb, grp, &mut cols);
            gather_dout(dout, g, n0, nb, grp, &mut d);
            // tmp[o, r] = Σ_j d[o, j] · cols[r, j]
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

/// The gradient with respect to the input: `[n, c, in…]`.
pub(crate) fn conv_backprop_input<T: Real>(dout: &[T], w: &[T], g: &impl ColumnGeom) -> Vec<T> {
    let (kg, ocg, ov) = (g.kg(), g.ocg(), g.out_cells());
    let mut dx = vec![T::default(); g.batch() * g.channels() * g.in_cells()];
    if dx.is_empty() || ov == 0 || kg == 0 {
        return dx;
    }
    let chunk = g.chunk();
    let (mut dcols, mut d) = (Vec::new(), Vec::new());
    let mut n0 = 0;
    while n0 < g.batch() {
        let nb = chunk.min(g.batch() - n0);
        let ncols = nb * ov;
        dcols.resize(kg * ncols, T::default());
        d.resize(ocg * ncols, T::default());
        for grp in 0..g.groups() {
            gather_dout(dout, g, n0, nb, grp, &mut d);
            let wg = &w[grp * ocg * kg..][..ocg * kg];
            // dcols[r, j] = Σ_o w[o, r] · d[o, j]
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
            g.col2im(&dcols, n0, nb, grp, &mut dx);
        }
        n0 += nb;
    }
    dx
}
