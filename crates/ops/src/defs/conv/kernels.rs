//! Conv2D's geometry and its im2col and col2im; the GEMM drivers shared with
//! Conv3D are in `conv/gemm.rs`, the table in `conv.rs`.

use super::*;
pub(crate) use crate::defs::conv::gemm::{
    conv_backprop_filter, conv_backprop_input, conv_forward, valid_range, ColumnGeom,
};

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
    fn ohw(&self) -> usize {
        self.oh * self.ow
    }
}

impl ColumnGeom for ConvGeom {
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
        self.kh * self.kw
    }
    fn in_cells(&self) -> usize {
        self.h * self.w
    }
    fn out_cells(&self) -> usize {
        self.ohw()
    }
    fn im2col<T: Real>(&self, x: &[T], n0: usize, nb: usize, grp: usize, cols: &mut [T]) {
        im2col(x, self, n0, nb, grp, cols)
    }
    fn col2im<T: Real>(&self, cols: &[T], n0: usize, nb: usize, grp: usize, dx: &mut [T]) {
        col2im(cols, self, n0, nb, grp, dx)
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
