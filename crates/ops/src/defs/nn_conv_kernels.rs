//! Convolution kernels: direct loops and the GEMM (im2col) drivers, for
//! the forward pass and both gradients (the table is in `nn_conv.rs`).

use super::*;

// ---------------------------------------------------------------------------
// Convolution kernels.

/// The geometry of one Conv2D call, in elements.
#[derive(Debug, Clone, Copy)]
pub struct ConvGeom {
    pub n: usize,
    pub c: usize,
    pub h: usize,
    pub w: usize,
    pub oc: usize,
    pub kh: usize,
    pub kw: usize,
    pub oh: usize,
    pub ow: usize,
    pub sh: usize,
    pub sw: usize,
    pub dh: usize,
    pub dw: usize,
    pub pt: usize,
    pub pl: usize,
    pub group: usize,
}

impl ConvGeom {
    fn cg(&self) -> usize {
        self.c / self.group
    }
    fn ocg(&self) -> usize {
        self.oc / self.group
    }
    /// Rows of a group's column matrix: `C/group · kh · kw`.
    fn kg(&self) -> usize {
        self.cg() * self.kh * self.kw
    }
    fn ohw(&self) -> usize {
        self.oh * self.ow
    }
    /// How many images one im2col buffer holds (bounded to ~16 MiB of f32).
    fn chunk(&self) -> usize {
        const LIMIT: usize = 1 << 22;
        let per_image = (self.kg() * self.ohw()).max(1);
        (LIMIT / per_image).clamp(1, self.n.max(1))
    }
    /// Checks the working buffers of the forward and backward kernels
    /// (im2col columns and a gathered gradient for one chunk of images,
    /// `(kg + ocg)·chunk·oh·ow`, and a `ocg·kg` product) against the budget.
    pub(crate) fn check_scratch(&self, op: &str, elem_size: usize) -> Result<(), OpError> {
        let elements = (self.kg() + self.ocg())
            .checked_mul(self.chunk())
            .and_then(|n| n.checked_mul(self.oh))
            .and_then(|n| n.checked_mul(self.ow))
            .and_then(|n| n.checked_add(self.ocg().checked_mul(self.kg())?));
        crate::guard::scratch(op, "working buffer (im2col)", elements, elem_size)
    }
}

/// The geometry of a Conv2D of `x` (NCHW) by a weight of shape `w` (also used by
/// the GPU backend, so both pad alike).
pub fn conv_geom(x: &[usize], w: &[usize], attrs: &Attrs) -> Result<ConvGeom, OpError> {
    let a = conv_attrs("Conv2D", attrs)?;
    if x.len() != 4 || w.len() != 4 {
        return Err(OpError::call(format!(
            "`Conv2D` needs 4-D `x` and `weight`, got {x:?} and {w:?}"
        )));
    }
    let (c, g) = (x[1], a.group);
    if !divides(g, c)
        || !divides(g, a.out_channel)
        || w != [a.out_channel, c / g, a.kernel.0, a.kernel.1]
    {
        return Err(OpError::call(format!(
            "`Conv2D`: weight {w:?} does not fit x {x:?} with out_channel={}, kernel_size={:?}, group={g}",
            a.out_channel, a.kernel
        )));
    }
    let too_small = || OpError::call(format!("`Conv2D`: input {x:?} is smaller than the kernel"));
    let (oh, pt) = out_size(
        a.mode,
        x[2],
        a.kernel.0,
        a.stride.0,
        a.dilation.0,
        (a.pad[0], a.pad[1]),
    )
    .ok_or_else(too_small)?;
    let (ow, pl) = out_size(
        a.mode,
        x[3],
        a.kernel.1,
        a.stride.1,
        a.dilation.1,
        (a.pad[2], a.pad[3]),
    )
    .ok_or_else(too_small)?;
    Ok(ConvGeom {
        n: x[0],
        c,
        h: x[2],
        w: x[3],
        oc: a.out_channel,
        kh: a.kernel.0,
        kw: a.kernel.1,
        oh,
        ow,
        sh: a.stride.0,
        sw: a.stride.1,
        dh: a.dilation.0,
        dw: a.dilation.1,
        pt,
        pl,
        group: g,
    })
}

/// The outputs `o` in `0..count` with `0 <= o*s + off < size`, as a range.
pub(super) fn valid_range(off: isize, s: usize, size: usize, count: usize) -> (usize, usize) {
    let lo = if off >= 0 {
        0
    } else {
        (off.unsigned_abs()).div_ceil(s)
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

/// Fills `cols` (`[C/group·kh·kw, nb·oh·ow]`) with the patches of images
/// `n0..n0+nb`, channels of group `grp`. Out-of-image cells are zero.
pub(super) fn im2col<T: Real>(
    x: &[T],
    g: &ConvGeom,
    n0: usize,
    nb: usize,
    grp: usize,
    cols: &mut [T],
) {
    let ohw = g.ohw();
    let ncols = nb * ohw;
    let cg = g.cg();
    let zero = T::default();
    for ci in 0..cg {
        let c = grp * cg + ci;
        for ki in 0..g.kh {
            for kj in 0..g.kw {
                let r = (ci * g.kh + ki) * g.kw + kj;
                let row = &mut cols[r * ncols..(r + 1) * ncols];
                let off_x = (kj * g.dw) as isize - g.pl as isize;
                let (lo, hi) = valid_range(off_x, g.sw, g.w, g.ow);
                for b in 0..nb {
                    let plane = &x[((n0 + b) * g.c + c) * g.h * g.w..][..g.h * g.w];
                    for oy in 0..g.oh {
                        let dst = &mut row[b * ohw + oy * g.ow..][..g.ow];
                        let iy = (oy * g.sh + ki * g.dh) as isize - g.pt as isize;
                        if iy < 0 || iy >= g.h as isize {
                            dst.fill(zero);
                            continue;
                        }
                        let src = &plane[iy as usize * g.w..][..g.w];
                        dst[..lo].fill(zero);
                        dst[hi..].fill(zero);
                        if hi > lo {
                            let start = (lo * g.sw) as isize + off_x;
                            if g.sw == 1 {
                                dst[lo..hi].copy_from_slice(
                                    &src[start as usize..start as usize + (hi - lo)],
                                );
                            } else {
                                for (k, d) in dst[lo..hi].iter_mut().enumerate() {
                                    *d = src[start as usize + k * g.sw];
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The adjoint of [`im2col`]: adds each column cell into the image cell it
/// was taken from.
pub(super) fn col2im<T: Real>(
    cols: &[T],
    g: &ConvGeom,
    n0: usize,
    nb: usize,
    grp: usize,
    dx: &mut [T],
) {
    let ohw = g.ohw();
    let ncols = nb * ohw;
    let cg = g.cg();
    for ci in 0..cg {
        let c = grp * cg + ci;
        for ki in 0..g.kh {
            for kj in 0..g.kw {
                let r = (ci * g.kh + ki) * g.kw + kj;
                let row = &cols[r * ncols..(r + 1) * ncols];
                let off_x = (kj * g.dw) as isize - g.pl as isize;
                let (lo, hi) = valid_range(off_x, g.sw, g.w, g.ow);
                if hi <= lo {
                    continue;
                }
                for b in 0..nb {
                    let plane = &mut dx[((n0 + b) * g.c + c) * g.h * g.w..][..g.h * g.w];
                    for oy in 0..g.oh {
                        let iy = (oy * g.sh + ki * g.dh) as isize - g.pt as isize;
                        if iy < 0 || iy >= g.h as isize {
                            continue;
                        }
                        let src = &row[b * ohw + oy * g.ow..][..g.ow];
                        let dst = &mut plane[iy as usize * g.w..][..g.w];
                        let start = ((lo * g.sw) as isize + off_x) as usize;
                        for (k, &v) in src[lo..hi].iter().enumerate() {
                            dst[start + k * g.sw] += v;
                        }
                    }
                }
            }
        }
    }
}

/// Copies `dout`'s channels of group `grp` for images `n0..n0+nb` into a
/// `[oc/group, nb·oh·ow]` matrix.
pub(super) fn gather_dout<T: Real>(
    dout: &[T],
    g: &ConvGeom,
    n0: usize,
    nb: usize,
    grp: usize,
    d: &mut [T],
) {
    let ohw = g.ohw();
    let ncols = nb * ohw;
    for o in 0..g.ocg() {
        for b in 0..nb {
            d[o * ncols + b * ohw..][..ohw]
                .copy_from_slice(&dout[((n0 + b) * g.oc + grp * g.ocg() + o) * ohw..][..ohw]);
        }
    }
}

/// [`im2col`] of image `n` (group 0) on `f32`, for compiled plans: `cols` is
/// `[C·kh·kw, oh·ow]`.
pub fn im2col_f32(x: &[f32], g: &ConvGeom, n: usize, cols: &mut [f32]) {
    im2col(x, g, n, 1, 0, cols)
}

/// [`col2im`] of image `n` (group 0) on `f32`, for compiled plans: adds
/// `cols` into the images `dx`.
pub fn col2im_f32(cols: &[f32], g: &ConvGeom, n: usize, dx: &mut [f32]) {
    col2im(cols, g, n, 1, 0, dx)
}

/// Conv2D: `out[n, o] = Σ_c,ki,kj w[o, c, ki, kj] · x[n, c, ...]` per group.
pub(crate) fn conv2d_forward<T: Real>(x: &[T], w: &[T], g: &ConvGeom) -> Vec<T> {
    let ohw = g.ohw();
    let mut out = vec![T::default(); g.n * g.oc * ohw];
    if out.is_empty() {
        return out;
    }
    let (kg, ocg) = (g.kg(), g.ocg());
    let chunk = g.chunk();
    let mut cols = Vec::new();
    let mut tmp = Vec::new();
    let mut n0 = 0;
    while n0 < g.n {
        let nb = chunk.min(g.n - n0);
        let ncols = nb * ohw;
        cols.resize(kg * ncols, T::default());
        for grp in 0..g.group {
            im2col(x, g, n0, nb, grp, &mut cols);
            let wg = &w[grp * ocg * kg..][..ocg * kg];
            if nb == 1 {
                let dst = &mut out[(n0 * g.oc + grp * ocg) * ohw..][..ocg * ohw];
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
            } else {
                tmp.resize(ocg * ncols, T::default());
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
                        out[((n0 + b) * g.oc + grp * ocg + o) * ohw..][..ohw]
                            .copy_from_slice(&tmp[o * ncols + b * ohw..][..ohw]);
                    }
                }
            }
        }
        n0 += nb;
    }
    out
}

/// The gradient of Conv2D with respect to its weight: `[oc, C/group, kh, kw]`.
pub(crate) fn conv2d_backprop_filter<T: Real>(dout: &[T], x: &[T], g: &ConvGeom) -> Vec<T> {
    let (kg, ocg, ohw) = (g.kg(), g.ocg(), g.ohw());
    let mut dw = vec![T::default(); g.oc * kg];
    if dw.is_empty() || g.n * ohw == 0 {
        return dw;
    }
    let chunk = g.chunk();
    let (mut cols, mut d, mut tmp) = (Vec::new(), Vec::new(), vec![T::default(); ocg * kg]);
    let mut n0 = 0;
    while n0 < g.n {
        let nb = chunk.min(g.n - n0);
        let ncols = nb * ohw;
        cols.resize(kg * ncols, T::default());
        d.resize(ocg * ncols, T::default());
        for grp in 0..g.group {
            im2col(x, g, n0, nb, grp, &mut cols);
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

/// The gradient of Conv2D with respect to its input: `[n, c, h, w]`.
pub(crate) fn conv2d_backprop_input<T: Real>(dout: &[T], w: &[T], g: &ConvGeom) -> Vec<T> {
    let (kg, ocg, ohw) = (g.kg(), g.ocg(), g.ohw());
    let mut dx = vec![T::default(); g.n * g.c * g.h * g.w];
    if dx.is_empty() || ohw == 0 || kg == 0 {
        return dx;
    }
    let chunk = g.chunk();
    let (mut dcols, mut d) = (Vec::new(), Vec::new());
    let mut n0 = 0;
    while n0 < g.n {
        let nb = chunk.min(g.n - n0);
        let ncols = nb * ohw;
        dcols.resize(kg * ncols, T::default());
        d.resize(ocg * ncols, T::default());
        for grp in 0..g.group {
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
            col2im(&dcols, g, n0, nb, grp, &mut dx);
        }
        n0 += nb;
    }
    dx
}
