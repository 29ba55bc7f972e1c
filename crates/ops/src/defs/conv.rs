//! Convolution and pooling: Conv2D, MaxPool, AvgPool, and the kernels of
//! their gradients (MindSpore's `Conv2DBackpropInput`, `Conv2DBackpropFilter`,
//! `MaxPoolGrad`, `MaxPoolGradGrad`, `AvgPoolGrad`, registered in
//! `defs::backward`).
//!
//! Layout is NCHW, as MindSpore's CPU backend. Conv2D is im2col + GEMM over
//! chunks of the batch; its backward passes are the same GEMMs transposed, with
//! col2im scattering columns back into images.

pub mod conv3d;
pub(crate) mod conv3d_geometry;
pub(crate) mod gemm;
pub mod transpose;

use crate::schema::{why, Override, Schema};
use crate::Traits;
use crate::{ConvRole, Family, PoolReduce};
use std::ops::{Add, AddAssign, Div, Mul, Sub};

use ir::{AbsVal, AttrValue, DType, Dim};
use tensor::{Buffer, Tensor};

use crate::defs::shape::{dims_of, fmt_dims, fmt_ints, tensor_abs};
use crate::infer::InferCall;
use crate::kernel::{gemm_f32, gemm_f64, KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Attrs, Category, GradBuilder, GradCall, OpDef, OpError, OutputDef,
};

/// The float element types kernels are written for (f16/bf16 live in f32).
pub(crate) trait Real:
    Copy
    + Default
    + PartialOrd
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + AddAssign
{
    const NEG_INFINITY: Self;
    fn from_f64(x: f64) -> Self;
    /// `c = a · b` (row-major `c`; `a` and `b` given with row/column strides).
    #[allow(clippy::too_many_arguments)]
    fn gemm(
        m: usize,
        n: usize,
        k: usize,
        a: &[Self],
        a_row: isize,
        a_col: isize,
        b: &[Self],
        b_row: isize,
        b_col: isize,
        c: &mut [Self],
    );
}

impl Real for f32 {
    const NEG_INFINITY: f32 = f32::NEG_INFINITY;
    fn from_f64(x: f64) -> f32 {
        x as f32
    }
    fn gemm(
        m: usize,
        n: usize,
        k: usize,
        a: &[f32],
        a_row: isize,
        a_col: isize,
        b: &[f32],
        b_row: isize,
        b_col: isize,
        c: &mut [f32],
    ) {
        if m == 0 || n == 0 {
            return;
        }
        if k == 0 {
            c[..m * n].fill(0.0);
            return;
        }
        gemm_f32(m, n, k, a, a_row, a_col, b, b_row, b_col, c);
    }
}

impl Real for f64 {
    const NEG_INFINITY: f64 = f64::NEG_INFINITY;
    fn from_f64(x: f64) -> f64 {
        x
    }
    fn gemm(
        m: usize,
        n: usize,
        k: usize,
        a: &[f64],
        a_row: isize,
        a_col: isize,
        b: &[f64],
        b_row: isize,
        b_col: isize,
        c: &mut [f64],
    ) {
        if m == 0 || n == 0 {
            return;
        }
        if k == 0 {
            c[..m * n].fill(0.0);
            return;
        }
        gemm_f64(m, n, k, a, a_row, a_col, b, b_row, b_col, c);
    }
}

// ---------------------------------------------------------------------------
// Attributes.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PadMode {
    Valid,
    Same,
    Pad,
}

impl PadMode {
    fn parse(s: &str) -> PadMode {
        match s.to_ascii_lowercase().as_str() {
            "same" => PadMode::Same,
            "pad" => PadMode::Pad,
            _ => PadMode::Valid,
        }
    }
}

/// An `int or tuple` attribute giving a height and a width: `k`, `(kh, kw)`,
/// or MindSpore's 4-tuple form `(1, 1, kh, kw)`. Entries must be positive.
fn hw_pair(op: &str, attrs: &Attrs, name: &'static str) -> Result<(usize, usize), OpError> {
    let v = attrs.ints(name).unwrap_or_default();
    let pair = match v.as_slice() {
        [a] => (*a, *a),
        [a, b] => (*a, *b),
        [1, 1, a, b] => (*a, *b),
        _ => {
            return Err(OpError::attr(
                name,
                format!(
                    "`{op}`: `{name}` must be an int or a tuple of 2 ints (height, width), got {}",
                    fmt_ints(&v)
                ),
            ))
        }
    };
    if pair.0 < 1 || pair.1 < 1 {
        return Err(OpError::attr(
            name,
            format!(
                "`{op}`: `{name}` must be positive, got {}",
                if v.len() == 1 {
                    v[0].to_string()
                } else {
                    fmt_ints(&v)
                }
            ),
        ));
    }
    Ok((pair.0 as usize, pair.1 as usize))
}

fn check_nchw(op: &str, attrs: &Attrs) -> Result<(), OpError> {
    let f = attrs.str("data_format");
    if !f.eq_ignore_ascii_case("NCHW") {
        return Err(OpError::attr(
            "data_format",
            format!("`{op}` supports data_format=\"NCHW\" only (as MindSpore's CPU backend), got \"{f}\""),
        ));
    }
    Ok(())
}

/// Conv2D's attributes, checked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConvAttrs {
    pub out_channel: usize,
    pub kernel: (usize, usize),
    pub stride: (usize, usize),
    pub dilation: (usize, usize),
    pub mode: PadMode,
    /// top, bottom, left, right (only for `pad_mode="pad"`).
    pub pad: [usize; 4],
    pub group: usize,
}

pub(crate) fn conv_attrs(op: &str, attrs: &Attrs) -> Result<ConvAttrs, OpError> {
    let out_channel = attrs.int("out_channel");
    if out_channel < 1 {
        return Err(OpError::attr(
            "out_channel",
            format!("`{op}`: `out_channel` must be positive, got {out_channel}"),
        ));
    }
    let kernel = hw_pair(op, attrs, "kernel_size")?;
    let stride = hw_pair(op, attrs, "stride")?;
    let dilation = hw_pair(op, attrs, "dilation")?;
    let mode = attrs.int("mode");
    if mode != 1 {
        return Err(OpError::attr(
            "mode",
            format!("`{op}`: `mode` must be 1 (the only mode MindSpore implements), got {mode}"),
        ));
    }
    let group = attrs.int("group");
    if group < 1 {
        return Err(OpError::attr(
            "group",
            format!("`{op}`: `group` must be positive, got {group}"),
        ));
    }
    let pad_mode = PadMode::parse(attrs.str("pad_mode"));
    let pad_v = attrs.ints("pad").unwrap_or_default();
    let pad = match pad_v.as_slice() {
        [p] => [*p; 4],
        [t, b, l, r] => [*t, *b, *l, *r],
        _ => {
            return Err(OpError::attr(
                "pad",
                format!(
                    "`{op}`: `pad` must be an int or a tuple of 4 ints (top, bottom, left, right), got {} with {} entries",
                    fmt_ints(&pad_v),
                    pad_v.len()
                ),
            ))
        }
    };
    if pad.iter().any(|&p| p < 0) {
        return Err(OpError::attr(
            "pad",
            format!(
                "`{op}`: `pad` must be non-negative, got {}",
                fmt_ints(&pad_v)
            ),
        ));
    }
    if pad_mode != PadMode::Pad && pad.iter().any(|&p| p != 0) {
        return Err(OpError::attr(
            "pad",
            format!(
                "`{op}`: `pad` {} is only allowed with pad_mode=\"pad\" (pad_mode is \"{}\")",
                fmt_ints(&pad_v),
                attrs.str("pad_mode")
            ),
        ));
    }
    check_nchw(op, attrs)?;
    Ok(ConvAttrs {
        out_channel: out_channel as usize,
        kernel,
        stride,
        dilation,
        mode: pad_mode,
        pad: pad.map(|p| p as usize),
        group: group as usize,
    })
}

/// Pooling attributes, checked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PoolAttrs {
    pub kernel: (usize, usize),
    pub stride: (usize, usize),
    pub mode: PadMode,
}

pub(crate) fn pool_attrs(op: &str, attrs: &Attrs) -> Result<PoolAttrs, OpError> {
    let kernel = hw_pair(op, attrs, "kernel_size")?;
    let stride = hw_pair(op, attrs, "strides")?;
    check_nchw(op, attrs)?;
    Ok(PoolAttrs {
        kernel,
        stride,
        mode: PadMode::parse(attrs.str("pad_mode")),
    })
}

/// The output size and the padding before, along one spatial dimension
/// (MindSpore's formulas; SAME pads as TensorFlow, the odd cell at the end).
/// `None` when the (dilated) kernel does not fit.
pub(crate) fn out_size(
    mode: PadMode,
    size: usize,
    k: usize,
    s: usize,
    d: usize,
    pad: (usize, usize),
) -> Option<(usize, usize)> {
    let eff = (k - 1) * d + 1;
    match mode {
        PadMode::Valid => (size >= eff).then(|| ((size - eff) / s + 1, 0)),
        PadMode::Same => {
            let out = size.div_ceil(s);
            let total = ((out.max(1) - 1) * s + eff).saturating_sub(size);
            Some((out, total / 2))
        }
        PadMode::Pad => {
            let padded = size + pad.0 + pad.1;
            (padded >= eff).then(|| ((padded - eff) / s + 1, pad.0))
        }
    }
}

// ---------------------------------------------------------------------------
// Shape rules.

/// Whether `d` divides `n` exactly.
pub(crate) fn divides(d: usize, n: usize) -> bool {
    d != 0 && n / d * d == n
}

fn float_input(call: &InferCall, i: usize) -> Result<(DType, Option<Vec<Dim>>), OpError> {
    let (dtype, dims) = dims_of(call, i)?;
    if !dtype.is_float() {
        return Err(OpError::input(
            i,
            format!(
                "`{}` needs a float `{}`, got {dtype}",
                call.op.name,
                call.input_name(i)
            ),
        ));
    }
    Ok((dtype, dims))
}

fn check_rank4(call: &InferCall, i: usize, dims: &[Dim]) -> Result<(), OpError> {
    if dims.len() != 4 {
        return Err(OpError::input(
            i,
            format!(
                "`{}` needs a 4-D `{}` ({}), got {}",
                call.op.name,
                call.input_name(i),
                if i == 0 {
                    "N, C, H, W"
                } else {
                    "out_channel, C/group, kh, kw"
                },
                fmt_dims(dims)
            ),
        ));
    }
    Ok(())
}

/// One spatial output dimension of a shape rule.
#[allow(clippy::too_many_arguments)]
fn spatial(
    op: &str,
    which: &str,
    dim: &Dim,
    mode: PadMode,
    k: usize,
    s: usize,
    d: usize,
    pad: (usize, usize),
) -> Result<Dim, OpError> {
    let Dim::Known(n) = dim else {
        return Ok(Dim::Unknown);
    };
    match out_size(mode, *n as usize, k, s, d, pad) {
        Some((o, _)) if o > 0 || mode == PadMode::Same => Ok(Dim::Known(o as i64)),
        _ => Err(OpError::call(format!(
            "`{op}`: the {which} of the input, {n}{}, is smaller than the kernel ({k}{})",
            if pad.0 + pad.1 > 0 {
                format!(" plus padding {}", pad.0 + pad.1)
            } else {
                String::new()
            },
            if d > 1 {
                format!(" dilated by {d}: {}", (k - 1) * d + 1)
            } else {
                String::new()
            }
        ))),
    }
}

fn infer_conv2d(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xd) = float_input(call, 0)?;
    let (wdtype, wd) = dims_of(call, 1)?;
    if wdtype != dtype {
        return Err(OpError::input(
            1,
            format!("`{op}` needs `x` and `weight` of one dtype, got {dtype} and {wdtype}"),
        ));
    }
    let a = conv_attrs(op, call.attrs)?;
    let oc = Dim::Known(a.out_channel as i64);
    let (Some(xd), wd) = (xd, wd) else {
        return Ok(tensor_abs(
            dtype,
            vec![Dim::Unknown, oc, Dim::Unknown, Dim::Unknown],
        ));
    };
    check_rank4(call, 0, &xd)?;
    if !divides(a.group, a.out_channel) {
        return Err(OpError::attr(
            "group",
            format!(
                "`{op}`: `group` {} does not divide `out_channel` {}",
                a.group, a.out_channel
            ),
        ));
    }
    if let Dim::Known(c) = xd[1] {
        if !divides(a.group, c as usize) {
            return Err(OpError::attr(
                "group",
                format!(
                    "`{op}`: `group` {} does not divide the {c} channels of `x` {}",
                    a.group,
                    fmt_dims(&xd)
                ),
            ));
        }
    }
    if let Some(wd) = wd {
        check_rank4(call, 1, &wd)?;
        if let Dim::Known(o) = wd[0] {
            if o as usize != a.out_channel {
                return Err(OpError::attr(
                    "out_channel",
                    format!(
                        "`{op}`: `out_channel` is {} but `weight` {} has {o} output channels",
                        a.out_channel,
                        fmt_dims(&wd)
                    ),
                ));
            }
        }
        for (j, (dim, k)) in [(&wd[2], a.kernel.0), (&wd[3], a.kernel.1)]
            .into_iter()
            .enumerate()
        {
            if let Dim::Known(n) = dim {
                if *n as usize != k {
                    return Err(OpError::attr(
                        "kernel_size",
                        format!(
                            "`{op}`: `kernel_size` is ({}, {}) but `weight` {} has a {} of {n}",
                            a.kernel.0,
                            a.kernel.1,
                            fmt_dims(&wd),
                            if j == 0 { "height" } else { "width" }
                        ),
                    ));
                }
            }
        }
        if let (Dim::Known(c), Dim::Known(wc)) = (&xd[1], &wd[1]) {
            if (*c as usize) / a.group != *wc as usize {
                return Err(OpError::input(
                    1,
                    format!(
                        "`{op}`: `weight` {} has {wc} input channels, but `x` {} has {c} channels in {} group(s): {} per group",
                        fmt_dims(&wd),
                        fmt_dims(&xd),
                        a.group,
                        *c as usize / a.group
                    ),
                ));
            }
        }
    }
    let oh = spatial(
        op,
        "height",
        &xd[2],
        a.mode,
        a.kernel.0,
        a.stride.0,
        a.dilation.0,
        (a.pad[0], a.pad[1]),
    )?;
    let ow = spatial(
        op,
        "width",
        &xd[3],
        a.mode,
        a.kernel.1,
        a.stride.1,
        a.dilation.1,
        (a.pad[2], a.pad[3]),
    )?;
    Ok(tensor_abs(dtype, vec![xd[0].clone(), oc, oh, ow]))
}

pub(crate) fn infer_pool(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xd) = float_input(call, 0)?;
    let a = pool_attrs(op, call.attrs)?;
    let Some(xd) = xd else {
        return Ok(tensor_abs(dtype, vec![Dim::Unknown; 4]));
    };
    check_rank4(call, 0, &xd)?;
    let oh = spatial(
        op,
        "height",
        &xd[2],
        a.mode,
        a.kernel.0,
        a.stride.0,
        1,
        (0, 0),
    )?;
    let ow = spatial(
        op,
        "width",
        &xd[3],
        a.mode,
        a.kernel.1,
        a.stride.1,
        1,
        (0, 0),
    )?;
    Ok(tensor_abs(
        dtype,
        vec![xd[0].clone(), xd[1].clone(), oh, ow],
    ))
}

mod kernels;
pub use kernels::*;

// ---------------------------------------------------------------------------
// Pooling kernels.

/// The geometry of one pooling call.
#[derive(Debug, Clone, Copy)]
pub struct PoolGeom {
    pub planes: usize,
    pub h: usize,
    pub w: usize,
    pub kh: usize,
    pub kw: usize,
    pub sh: usize,
    pub sw: usize,
    pub oh: usize,
    pub ow: usize,
    pub pt: usize,
    pub pl: usize,
}

impl PoolGeom {
    /// The input rows and columns of output cell `(oy, ox)`, clipped to the image.
    pub fn window(&self, oy: usize, ox: usize) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
        let clip = |o: usize, s: usize, k: usize, p: usize, size: usize| {
            let start = (o * s) as isize - p as isize;
            let lo = start.max(0) as usize;
            let hi = ((start + k as isize).max(0) as usize).min(size);
            lo..hi.max(lo)
        };
        (
            clip(oy, self.sh, self.kh, self.pt, self.h),
            clip(ox, self.sw, self.kw, self.pl, self.w),
        )
    }
}

pub fn pool_geom(op: &str, x: &[usize], attrs: &Attrs) -> Result<PoolGeom, OpError> {
    let a = pool_attrs(op, attrs)?;
    if x.len() != 4 {
        return Err(OpError::input(
            0,
            format!("`{op}` needs a 4-D input, got {x:?}"),
        ));
    }
    let too_small = || OpError::call(format!("`{op}`: input {x:?} is smaller than the kernel"));
    let (oh, pt) =
        out_size(a.mode, x[2], a.kernel.0, a.stride.0, 1, (0, 0)).ok_or_else(too_small)?;
    let (ow, pl) =
        out_size(a.mode, x[3], a.kernel.1, a.stride.1, 1, (0, 0)).ok_or_else(too_small)?;
    Ok(PoolGeom {
        planes: x[0] * x[1],
        h: x[2],
        w: x[3],
        kh: a.kernel.0,
        kw: a.kernel.1,
        sh: a.stride.0,
        sw: a.stride.1,
        oh,
        ow,
        pt,
        pl,
    })
}

/// The offset (within its plane) of the first maximum of each window.
fn argmax_plane<T: Real>(plane: &[T], g: &PoolGeom, oy: usize, ox: usize) -> Option<usize> {
    let (rows, cols) = g.window(oy, ox);
    let mut best: Option<(usize, T)> = None;
    for iy in rows {
        for ix in cols.clone() {
            let v = plane[iy * g.w + ix];
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((iy * g.w + ix, v));
            }
        }
    }
    best.map(|(i, _)| i)
}

pub(crate) fn max_pool<T: Real>(x: &[T], g: &PoolGeom) -> Vec<T> {
    let (hw, ohw) = (g.h * g.w, g.oh * g.ow);
    let mut out = vec![T::default(); g.planes * ohw];
    for p in 0..g.planes {
        let plane = &x[p * hw..][..hw];
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                let (rows, cols) = g.window(oy, ox);
                let mut m = T::NEG_INFINITY;
                for iy in rows {
                    for &v in &plane[iy * g.w + cols.start..iy * g.w + cols.end] {
                        if v > m {
                            m = v;
                        }
                    }
                }
                out[p * ohw + oy * g.ow + ox] = m;
            }
        }
    }
    out
}

/// MindSpore's MaxPoolGradGrad: `grad` (shaped like `x`) at each window's
/// (first) maximum, shaped like the pooled output.
pub(crate) fn max_pool_grad_grad<T: Real>(x: &[T], grad: &[T], g: &PoolGeom) -> Vec<T> {
    let (hw, ohw) = (g.h * g.w, g.oh * g.ow);
    let mut out = vec![T::default(); g.planes * ohw];
    for p in 0..g.planes {
        let plane = &x[p * hw..][..hw];
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                if let Some(i) = argmax_plane(plane, g, oy, ox) {
                    out[p * ohw + oy * g.ow + ox] = grad[p * hw + i];
                }
            }
        }
    }
    out
}

/// MindSpore's MaxPoolGrad: each output's gradient goes to its window's
/// (first) maximum.
pub(crate) fn max_pool_grad<T: Real>(x: &[T], dout: &[T], g: &PoolGeom) -> Vec<T> {
    let (hw, ohw) = (g.h * g.w, g.oh * g.ow);
    let mut dx = vec![T::default(); g.planes * hw];
    for p in 0..g.planes {
        let plane = &x[p * hw..][..hw];
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                if let Some(i) = argmax_plane(plane, g, oy, ox) {
                    dx[p * hw + i] += dout[p * ohw + oy * g.ow + ox];
                }
            }
        }
    }
    dx
}

/// Average pooling; padded cells (SAME) are not counted, as MindSpore and
/// TensorFlow.
pub(crate) fn avg_pool<T: Real>(x: &[T], g: &PoolGeom) -> Vec<T> {
    let (hw, ohw) = (g.h * g.w, g.oh * g.ow);
    let mut out = vec![T::default(); g.planes * ohw];
    for p in 0..g.planes {
        let plane = &x[p * hw..][..hw];
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                let (rows, cols) = g.window(oy, ox);
                let count = rows.len() * cols.len();
                let mut s = T::default();
                for iy in rows {
                    for &v in &plane[iy * g.w + cols.start..iy * g.w + cols.end] {
                        s += v;
                    }
                }
                if count > 0 {
                    out[p * ohw + oy * g.ow + ox] = s / T::from_f64(count as f64);
                }
            }
        }
    }
    out
}

pub(crate) fn avg_pool_grad<T: Real>(dout: &[T], g: &PoolGeom) -> Vec<T> {
    let (hw, ohw) = (g.h * g.w, g.oh * g.ow);
    let mut dx = vec![T::default(); g.planes * hw];
    for p in 0..g.planes {
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                let (rows, cols) = g.window(oy, ox);
                let count = rows.len() * cols.len();
                if count == 0 {
                    continue;
                }
                let v = dout[p * ohw + oy * g.ow + ox] / T::from_f64(count as f64);
                for iy in rows {
                    for d in &mut dx[p * hw + iy * g.w + cols.start..p * hw + iy * g.w + cols.end] {
                        *d += v;
                    }
                }
            }
        }
    }
    dx
}

// ---------------------------------------------------------------------------
// Kernel entry points (also used by the gradient helpers in `internal_nn`).

/// Runs `f` on the f32 or f64 data of same-dtype float tensors.
macro_rules! float_dispatch {
    ($op:expr, [$($t:expr),+], |$($v:ident),+| $body:expr) => {{
        let bufs = [$($t.buffer()),+];
        if bufs.iter().all(|b| matches!(b, Buffer::F32(_))) {
            let mut it = bufs.iter().map(|b| match b { Buffer::F32(v) => v.as_slice(), _ => unreachable!() });
            $(let $v: &[f32] = it.next().unwrap();)+
            Buffer::F32($body)
        } else if bufs.iter().all(|b| matches!(b, Buffer::F64(_))) {
            let mut it = bufs.iter().map(|b| match b { Buffer::F64(v) => v.as_slice(), _ => unreachable!() });
            $(let $v: &[f64] = it.next().unwrap();)+
            Buffer::F64($body)
        } else {
            return Err(OpError::call(format!(
                "`{}` needs float tensors of one dtype",
                $op
            )));
        }
    }};
}

fn tensor_out(dtype: DType, shape: Vec<usize>, buffer: Buffer) -> Result<KValue, OpError> {
    Ok(KValue::Tensor(
        Tensor::new(dtype, shape, buffer).map_err(|e| OpError::call(e.0))?,
    ))
}

fn kernel_conv2d(c: &KernelCall) -> Result<KValue, OpError> {
    let (x, w) = (c.tensor(0)?, c.tensor(1)?);
    let g = conv_geom(x.shape(), w.shape(), c.attrs)?;
    g.check_scratch("Conv2D", x.dtype().size_of())?;
    let buffer = float_dispatch!("Conv2D", [x, w], |xv, wv| conv_forward(xv, wv, &g));
    tensor_out(x.dtype(), vec![g.n, g.oc, g.oh, g.ow], buffer)
}

fn kernel_max_pool(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let g = pool_geom("MaxPool", x.shape(), c.attrs)?;
    let buffer = float_dispatch!("MaxPool", [x], |xv| max_pool(xv, &g));
    let s = x.shape();
    tensor_out(x.dtype(), vec![s[0], s[1], g.oh, g.ow], buffer)
}

fn kernel_avg_pool(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let g = pool_geom("AvgPool", x.shape(), c.attrs)?;
    let buffer = float_dispatch!("AvgPool", [x], |xv| avg_pool(xv, &g));
    let s = x.shape();
    tensor_out(x.dtype(), vec![s[0], s[1], g.oh, g.ow], buffer)
}

// ---------------------------------------------------------------------------
// The table.

pub(crate) fn attrs_of(c: &GradCall) -> Vec<(&'static str, AttrValue)> {
    c.attrs.iter().map(|(k, v)| (*k, v.clone())).collect()
}

pub(crate) const CONV_PARAMS: Schema = Schema::ms(
    &[
        Override::inputs(&["x", "weight"], why::INPUT_NAMES),
        Override::attr("pad_mode", AttrType::Str(&["valid", "same", "pad"]), Some(AttrDefault::Str("valid")), why::STRINGS),
        Override::attr("data_format", AttrType::Str(&["NCHW", "NHWC"]), Some(AttrDefault::Str("NCHW")), why::STRINGS),
    ],
    &[
        ("x", "The input, `[N, C, H, W]`, float."),
        ("weight", "The filters, `[out_channel, C/group, kh, kw]`, of `x`'s dtype."),
        ("out_channel", "The number of output channels; must equal the first dimension of `weight`."),
        ("kernel_size", "The kernel's height and width: an int for both, or `(kh, kw)`; must match `weight`'s last two dimensions."),
        ("mode", "MindSpore's convolution mode; only 1 (the default) exists."),
        ("pad_mode", "\"valid\" (default): no padding, output `floor((H - (kh-1)·d - 1)/s) + 1`; \"same\": output `ceil(H/s)`, padding split as evenly as possible with the extra cell at the bottom/right; \"pad\": pad explicitly by `pad`."),
        ("pad", "Zero padding for pad_mode=\"pad\": an int for all sides, or `(top, bottom, left, right)`. Default 0; must be 0 in the other modes."),
        ("stride", "The step of the kernel: an int for both directions or `(sh, sw)`. Default 1."),
        ("dilation", "The spacing between kernel cells: an int or `(dh, dw)`. Default 1 (no dilation)."),
        ("group", "The number of groups input and output channels are split into; must divide both. Default 1."),
        ("data_format", "The layout of `x` and the result. Default \"NCHW\", the only one MindSpore's CPU backend (and this one) supports."),
    ],
);

pub(crate) const POOL_PARAMS: Schema = Schema::ms(
    &[
        Override::attr("pad_mode", AttrType::Str(&["valid", "same"]), Some(AttrDefault::Str("valid")), why::STRINGS),
        Override::attr("data_format", AttrType::Str(&["NCHW", "NHWC"]), Some(AttrDefault::Str("NCHW")), why::STRINGS),
    ],
    &[
        ("x", "The input, `[N, C, H, W]`, float."),
        ("kernel_size", "The window's height and width: an int for both, or `(kh, kw)`. Default 1."),
        ("strides", "The step of the window: an int for both directions, or `(sh, sw)`. Default 1."),
        ("pad_mode", "\"valid\" (default): windows inside the input only, output `floor((H - kh)/s) + 1`; \"same\": output `ceil(H/s)`, padding split evenly with the extra cell at the bottom/right."),
        ("data_format", "The layout of `x` and the result. Default \"NCHW\", the only one MindSpore's CPU backend (and this one) supports."),
    ],
);

/// MindSpore's bprop: `Conv2DBackpropInput(dout, w, shape of x)` and
/// `Conv2DBackpropFilter(dout, x, shape of w)` (`defs::backward::conv`).
fn grad_conv2d(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<crate::GNode>> {
    let (dx, dw) = crate::defs::backward::conv::conv2d_backprops(b, c, c.inputs[0], c.inputs[1]);
    vec![Some(dx), Some(dw)]
}

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "Conv2D",
        category: Category::NeuralNetwork,
        doc: "2-D convolution (cross-correlation, as MindSpore) of an NCHW input `x` with `weight`, optionally strided, dilated, padded and grouped; output `[N, out_channel, H_out, W_out]`.",
        schema: CONV_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_conv2d,
        grad: Some(grad_conv2d),
        kernel: Some(kernel_conv2d),
        traits: Traits::of(Family::Conv2D(ConvRole::Forward)),
    },
    OpDef {
        name: "MaxPool",
        category: Category::NeuralNetwork,
        doc: "2-D max pooling of an NCHW input: the maximum of each `kernel_size` window, stepping by `strides`.",
        schema: POOL_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_pool,
        grad: Some(|b, c| {
            // MindSpore's bprop: `MaxPoolGrad(kernel_size, strides, pad_mode,
            // data_format)(x, out, dout)`.
            vec![Some(b.prim(
                "MaxPoolGrad",
                &[c.inputs[0], c.out, c.dout],
                attrs_of(c),
            ))]
        }),
        kernel: Some(kernel_max_pool),
        traits: Traits::of(Family::Pool2D { reduce: PoolReduce::Max, grad: false }),
    },
    OpDef {
        name: "AvgPool",
        category: Category::NeuralNetwork,
        doc: "2-D average pooling of an NCHW input: the mean of each `kernel_size` window, stepping by `strides`; with pad_mode=\"same\" padded cells are left out of the mean (as MindSpore and TensorFlow).",
        schema: POOL_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_pool,
        grad: Some(|b, c| {
            vec![Some(b.prim(
                "AvgPoolGrad",
                &[c.inputs[0], c.out, c.dout],
                attrs_of(c),
            ))]
        }),
        kernel: Some(kernel_avg_pool),
        traits: Traits::of(Family::Pool2D { reduce: PoolReduce::Avg, grad: false }),
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let i = AttrValue::Int;
    let s = |v: &str| AttrValue::Str(v.to_string());
    let t = |v: &[i64]| AttrValue::Tuple(v.iter().map(|&x| AttrValue::Int(x)).collect());
    let conv = |x: &[usize], w: &[usize], seed: u64| {
        Sample::new(
            "Conv2D",
            vec![
                random_f64(x, seed, -1.0, 1.0),
                random_f64(w, seed + 1, -1.0, 1.0),
            ],
        )
        .attr("out_channel", i(w[0] as i64))
        .attr("kernel_size", t(&[w[2] as i64, w[3] as i64]))
    };
    vec![
        conv(&[2, 3, 6, 5], &[4, 3, 3, 2], 50),
        conv(&[1, 2, 5, 6], &[3, 2, 3, 3], 52).attr("pad_mode", s("SAME")),
        conv(&[1, 2, 6, 6], &[2, 2, 3, 3], 54)
            .attr("pad_mode", s("same"))
            .attr("stride", i(2)),
        conv(&[2, 2, 5, 4], &[2, 2, 2, 3], 56)
            .attr("pad_mode", s("pad"))
            .attr("pad", t(&[1, 0, 2, 1]))
            .attr("stride", t(&[2, 1])),
        conv(&[1, 2, 7, 7], &[2, 2, 3, 3], 58)
            .attr("dilation", i(2))
            .attr("pad_mode", s("pad"))
            .attr("pad", i(1)),
        conv(&[2, 4, 5, 5], &[6, 2, 3, 3], 60)
            .attr("group", i(2))
            .attr("pad_mode", s("same")),
        // Depthwise (a group per input channel, two outputs each), strided.
        conv(&[2, 3, 6, 6], &[6, 1, 3, 3], 66)
            .attr("group", i(3))
            .attr("pad_mode", s("pad"))
            .attr("pad", i(1))
            .attr("stride", i(2)),
        Sample::new("MaxPool", vec![random_f64(&[2, 2, 5, 6], 62, -1.0, 1.0)])
            .attr("kernel_size", i(2))
            .attr("strides", i(2)),
        Sample::new("MaxPool", vec![random_f64(&[1, 2, 5, 5], 63, -1.0, 1.0)])
            .attr("kernel_size", t(&[3, 2]))
            .attr("strides", i(2))
            .attr("pad_mode", s("same")),
        Sample::new("AvgPool", vec![random_f64(&[2, 2, 5, 6], 64, -1.0, 1.0)])
            .attr("kernel_size", i(2))
            .attr("strides", t(&[2, 1])),
        Sample::new("AvgPool", vec![random_f64(&[1, 2, 5, 5], 65, -1.0, 1.0)])
            .attr("kernel_size", i(3))
            .attr("strides", i(2))
            .attr("pad_mode", s("same")),
    ]
}
