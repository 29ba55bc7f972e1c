//! Matrix products on cuBLAS, bias addition, and convolution as im2col + GEMM.

use crate::libs::op;
use ops::{ConvRole, Family, KValue, KernelCall, MatMulForm, OpDef, PoolReduce};
use tensor::DType;

use super::{as_dtype, cast_buf, input, out_type, Held};
use crate::device::{tensor, Arg, Bc, DevBuf, DevResult, Device};
use crate::source::{self, Storage};

/// A row-major batched product `C[b] = op(A[b]) · op(B[b])` (`m×k` by `k×n`),
/// each operand with its batch stride in elements (0: shared).
struct Gemm {
    m: usize,
    n: usize,
    k: usize,
    ta: bool,
    tb: bool,
    batch: usize,
    stride_a: usize,
    stride_b: usize,
    /// Adds to `C` instead of overwriting it.
    accumulate: bool,
}

/// Runs `g` in `s` (f32 or f64): cuBLAS is column-major, so it computes
/// `Cᵀ = op(B)ᵀ · op(A)ᵀ`, which is `C` row-major.
fn gemm(dev: &Device, s: Storage, g: &Gemm, a: u64, b: u64, c: u64) -> DevResult<()> {
    if g.m == 0 || g.n == 0 || g.batch == 0 {
        return Ok(());
    }
    let too_big =
        |v: usize| i32::try_from(v).map_err(|_| format!("a GEMM dimension {v} is too large"));
    let (m, n, k) = (too_big(g.m)?, too_big(g.n)?, too_big(g.k)?);
    let lda = if g.ta { m } else { k };
    let ldb = if g.tb { k } else { n };
    let batch = too_big(g.batch)?;
    let (sa, sb, sc) = (g.stride_a as i64, g.stride_b as i64, (g.m * g.n) as i64);
    let blas = &dev.blas;
    // SAFETY: the pointers are live device blocks holding the operands with
    // the sizes and strides described by `g` (checked by the callers).
    let status = unsafe {
        match s {
            Storage::F32 => (blas.lib.sgemm_strided_batched)(
                blas.handle,
                op(g.tb),
                op(g.ta),
                n,
                m,
                k,
                &1.0f32,
                b as *const f32,
                ldb,
                sb,
                a as *const f32,
                lda,
                sa,
                &(if g.accumulate { 1.0f32 } else { 0.0 }),
                c as *mut f32,
                n,
                sc,
                batch,
            ),
            _ => (blas.lib.dgemm_strided_batched)(
                blas.handle,
                op(g.tb),
                op(g.ta),
                n,
                m,
                k,
                &1.0f64,
                b as *const f64,
                ldb,
                sb,
                a as *const f64,
                lda,
                sa,
                &(if g.accumulate { 1.0f64 } else { 0.0 }),
                c as *mut f64,
                n,
                sc,
                batch,
            ),
        }
    };
    let r: Result<(), String> = if status == 0 {
        Ok(())
    } else {
        Err(format!("cuBLAS status {status}"))
    };
    r.map_err(|e| {
        format!(
            "cuBLAS GEMM ({}x{}x{}, batch {}): {e}",
            g.m, g.n, g.k, g.batch
        )
    })
}

/// The float dtypes GEMMs run in (f16/bf16 compute in f32, then round).
fn gemm_dtype(d: DType) -> bool {
    d.is_float()
}

/// Rounds an f32 result to f16/bf16 when the dtype needs it.
fn finish(dev: &Device, out: DevBuf, od: DType, n: usize) -> DevResult<DevBuf> {
    if matches!(od, DType::F16 | DType::BF16) {
        cast_buf(dev, &out, DType::F32, od, n)
    } else {
        Ok(out)
    }
}

/// Adds `bias` (`cols` elements) to every row of `y` (`rows×cols`), in place.
fn add_rows(
    dev: &Device,
    s: Storage,
    od: DType,
    y: u64,
    bias: u64,
    rows: usize,
    cols: usize,
) -> DevResult<()> {
    let n = rows * cols;
    if n == 0 {
        return Ok(());
    }
    let bc = Bc {
        rank: 2,
        same: 0,
        shape: pad([rows as i64, cols as i64]),
        sa: pad([cols as i64, 1]),
        sb: pad([0, 1]),
        ..Default::default()
    };
    let f = dev.function("ew_Add", &source::elementwise_kernel("Add", s))?;
    dev.launch(
        &f,
        Device::grid(n),
        &[
            Arg::P(y),
            Arg::P(bias),
            Arg::P(y),
            Arg::I(n as i64),
            Arg::I32(source::dtype_code(od)),
            Arg::F(0.0),
            Arg::F(0.0),
            Arg::Bc(bc),
        ],
    )
}

fn pad<const N: usize>(v: [i64; N]) -> [i64; 8] {
    let mut a = [0i64; 8];
    a[..N].copy_from_slice(&v);
    a
}

pub(super) fn matmul(
    dev: &Device,
    op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    let (Some(x), Some(y)) = (input(call, 0), input(call, 1)) else {
        return Ok(None);
    };
    let Some((od, oshape)) = out_type(op, call) else {
        return Ok(None);
    };
    if !gemm_dtype(od) {
        return Ok(None);
    }
    let flag = |name: &str| {
        call.attrs
            .get(name)
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
    };
    let Family::MatMul { form, .. } = op.traits.family else {
        return Ok(None);
    };
    let (ta, tb) = match form {
        MatMulForm::Transposes => (flag("transpose_a"), flag("transpose_b")),
        // MatMulExt's 1-D operands (vectors) fall back below: rank 2 or more here.
        MatMulForm::Dense => (false, true),
        MatMulForm::Plain => (false, false),
    };
    let (xs, ys) = (x.shape(), y.shape());
    let g = match form {
        MatMulForm::Dense => {
            let (Some(&k), [n, k2]) = (xs.last(), ys) else {
                return Ok(None);
            };
            if k != *k2 || xs.len() < 2 {
                return Ok(None);
            }
            Gemm {
                m: x.numel() / k.max(1),
                n: *n,
                k,
                ta,
                tb,
                batch: 1,
                stride_a: 0,
                stride_b: 0,
                accumulate: false,
            }
        }
        _ => {
            if xs.len() < 2 || ys.len() < 2 || oshape.len() < 2 {
                return Ok(None);
            }
            let (xr, xc) = (xs[xs.len() - 2], xs[xs.len() - 1]);
            let (yr, yc) = (ys[ys.len() - 2], ys[ys.len() - 1]);
            let (m, k) = if ta { (xc, xr) } else { (xr, xc) };
            let (k2, n) = if tb { (yc, yr) } else { (yr, yc) };
            let (bx, by) = (&xs[..xs.len() - 2], &ys[..ys.len() - 2]);
            let (nbx, nby): (usize, usize) = (bx.iter().product(), by.iter().product());
            let batch: usize = oshape[..oshape.len() - 2].iter().product();
            // Equal batch shapes, or one operand shared by every batch.
            let ok = k == k2
                && (bx == by || nbx == 1 || nby == 1)
                && batch == nbx.max(nby)
                && oshape[oshape.len() - 2..] == [m, n];
            if !ok {
                return Ok(None);
            }
            Gemm {
                m,
                n,
                k,
                ta,
                tb,
                batch,
                stride_a: if nbx == 1 { 0 } else { m * k },
                stride_b: if nby == 1 { 0 } else { k * n },
                accumulate: false,
            }
        }
    };
    let s = Storage::of(od);
    let (a, b) = (as_dtype(dev, x, od)?, as_dtype(dev, y, od)?);
    let n_out: usize = oshape.iter().product();
    if n_out != g.batch * g.m * g.n {
        return Ok(None);
    }
    let out = dev.alloc(s, n_out)?;
    gemm(dev, s, &g, a.ptr(), b.ptr(), out.ptr)?;
    if form == MatMulForm::Dense {
        if let Some(bias) = input(call, 2) {
            if bias.numel() != g.n {
                return Ok(None);
            }
            let bb = as_dtype(dev, bias, od)?;
            add_rows(dev, s, od, out.ptr, bb.ptr(), g.m, g.n)?;
        }
    }
    let out = finish(dev, out, od, n_out)?;
    Ok(Some(KValue::Tensor(tensor(od, oshape, out))))
}

/// `BiasAdd(x, bias)`: `bias` along axis 1 (NCHW) of `x`.
pub(super) fn bias_add(
    dev: &Device,
    op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    let (Some(x), Some(bias)) = (input(call, 0), input(call, 1)) else {
        return Ok(None);
    };
    let Some((od, oshape)) = out_type(op, call) else {
        return Ok(None);
    };
    let shape = x.shape();
    let nchw = call
        .attrs
        .get("data_format")
        .and_then(|v| v.as_str())
        .is_none_or(|f| f.to_ascii_uppercase().starts_with("NC"));
    if !nchw || shape.len() < 2 || oshape != shape || bias.numel() != shape[1] {
        return Ok(None);
    }
    let s = Storage::of(od);
    if !matches!(s, Storage::F32 | Storage::F64 | Storage::I64) {
        return Ok(None);
    }
    let (n, c) = (shape[0], shape[1]);
    let r: usize = shape[2..].iter().product();
    let total = n * c * r;
    let (xb, bb) = (as_dtype(dev, x, od)?, as_dtype(dev, bias, od)?);
    let out = dev.alloc(s, total)?;
    if total > 0 {
        let bc = Bc {
            rank: 3,
            same: 0,
            shape: pad([n as i64, c as i64, r as i64]),
            sa: pad([(c * r) as i64, r as i64, 1]),
            sb: pad([0, 1, 0]),
            ..Default::default()
        };
        let f = dev.function("ew_Add", &source::elementwise_kernel("Add", s))?;
        dev.launch(
            &f,
            Device::grid(total),
            &[
                Arg::P(xb.ptr()),
                Arg::P(bb.ptr()),
                Arg::P(out.ptr),
                Arg::I(total as i64),
                Arg::I32(source::dtype_code(od)),
                Arg::F(0.0),
                Arg::F(0.0),
                Arg::Bc(bc),
            ],
        )?;
    }
    Ok(Some(KValue::Tensor(tensor(od, oshape, out))))
}

/// Which of a Conv2D's three products a call computes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ConvKind {
    /// `Conv2D(x, w)`.
    Forward,
    /// The input gradient (`Conv2DBackpropInput`, `Conv2DTranspose`).
    Input,
    /// The filter gradient (`Conv2DBackpropFilter`).
    Filter,
}

/// The most elements one im2col buffer holds (256 MiB of f32).
const COL_LIMIT: usize = 1 << 26;

/// `Conv2D` (NCHW, one group) and its two gradients, by im2col/col2im and
/// cuBLAS, a chunk of images at a time:
/// - `Conv2D(x, w)`: `out[n] = W · im2col(x[n])`;
/// - `Conv2DBackpropInput(dout, w, input_sizes)` (and `Conv2DTranspose`,
///   `input_sizes` an attribute): `dx[n] = col2im(Wᵀ · dout[n])`;
/// - `Conv2DBackpropFilter(dout, x, filter_sizes)`:
///   `dW = Σ_n dout[n] · im2col(x[n])ᵀ`;
/// - grouped `Conv2D`s directly, a thread per output cell.
pub(super) fn conv2d(
    dev: &Device,
    op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    let (Some(a), Some(b)) = (input(call, 0), input(call, 1)) else {
        return Ok(None);
    };
    let kind = match op.traits.family {
        Family::Conv2D(ConvRole::Forward) => ConvKind::Forward,
        Family::Conv2D(ConvRole::InputGrad) => ConvKind::Input,
        Family::Conv2D(ConvRole::FilterGrad) => ConvKind::Filter,
        _ => return Ok(None),
    };
    // The gradients take the other shape as an input (a tuple of ints or a
    // 1-D integer tensor), `Conv2DTranspose` as an attribute (`input_sizes`).
    let other_shape = |attr: &str| -> Option<Vec<usize>> {
        match call.attrs.ints(attr) {
            Some(v) => v.iter().map(|&d| usize::try_from(d).ok()).collect(),
            None => ops::defs::backward::sizes::sizes_arg(call, 2, op.name).ok(),
        }
    };
    // The shapes of Conv2D's input and weight, and the result's dtype and shape.
    let (x_shape, w_shape, od, oshape) = match kind {
        ConvKind::Forward => {
            let Some((od, oshape)) = out_type(op, call) else {
                return Ok(None);
            };
            (a.shape().to_vec(), b.shape().to_vec(), od, oshape)
        }
        ConvKind::Input => {
            let Some(x) = other_shape("input_sizes") else {
                return Ok(None);
            };
            (x.clone(), b.shape().to_vec(), a.dtype(), x)
        }
        ConvKind::Filter => {
            let Some(w) = other_shape("filter_sizes") else {
                return Ok(None);
            };
            (b.shape().to_vec(), w.clone(), a.dtype(), w)
        }
    };
    if !matches!(od, DType::F32 | DType::F64) || a.dtype() != od || b.dtype() != od {
        return Ok(None);
    }
    let Ok(g) = ops::defs::conv::conv_geom(&x_shape, &w_shape, call.attrs) else {
        return Ok(None);
    };
    let dout_shape = [g.n, g.oc, g.oh, g.ow];
    let fits = match kind {
        ConvKind::Forward => oshape == dout_shape,
        _ => a.shape() == dout_shape,
    };
    if !fits {
        return Ok(None);
    }
    if g.group != 1 {
        return match kind {
            ConvKind::Forward => grouped_conv2d(dev, a, b, &g, od, oshape),
            _ => Ok(None),
        };
    }
    let s = Storage::of(od);
    let (ab, bb): (Held, Held) = (Held::Ref(dev.on_device(a)?), Held::Ref(dev.on_device(b)?));
    let k = g.c * g.kh * g.kw;
    let l = g.oh * g.ow;
    let image = g.c * g.h * g.w;
    let n_out: usize = oshape.iter().product();
    let out = dev.alloc(s, n_out)?;
    if g.n * g.oc * l == 0 || k == 0 {
        if n_out > 0 {
            return Ok(None);
        }
        return Ok(Some(KValue::Tensor(tensor(od, oshape, out))));
    }
    // The filter gradient also keeps one oc×k partial product per image.
    let per_image = match kind {
        ConvKind::Filter => (k * l).max(g.oc * k),
        _ => k * l,
    };
    let chunk = (COL_LIMIT / per_image.max(1)).clamp(1, g.n);
    let col = dev.alloc(s, chunk * k * l)?;
    let (unit_im2col, unit_col2im) = (
        dev.function("conv", &source::im2col_kernel(s))?,
        dev.function("conv", &source::col2im_kernel(s))?,
    );
    let at = |base: u64, elems: usize| base + (elems * s.size()) as u64;
    let mut n0 = 0;
    while n0 < g.n {
        let nb = chunk.min(g.n - n0);
        let mut cv = crate::device::Cv::default();
        let geom = [
            nb, g.c, g.h, g.w, g.kh, g.kw, g.sh, g.sw, g.pt, g.pl, g.dh, g.dw, g.oh, g.ow,
        ];
        for (i, v) in geom.iter().enumerate() {
            cv.v[i] = *v as i64;
        }
        match kind {
            ConvKind::Forward => {
                let elems = nb * k * l;
                dev.launch(
                    &unit_im2col,
                    Device::grid(elems),
                    &[
                        Arg::P(at(ab.ptr(), n0 * image)),
                        Arg::P(col.ptr),
                        Arg::I(elems as i64),
                        Arg::Cv(cv),
                    ],
                )?;
                let gm = Gemm {
                    m: g.oc,
                    n: l,
                    k,
                    ta: false,
                    tb: false,
                    batch: nb,
                    stride_a: 0,
                    stride_b: k * l,
                    accumulate: false,
                };
                gemm(dev, s, &gm, bb.ptr(), col.ptr, at(out.ptr, n0 * g.oc * l))?;
            }
            ConvKind::Input => {
                // col[n] = Wᵀ · dout[n], then scattered back.
                let gm = Gemm {
                    m: k,
                    n: l,
                    k: g.oc,
                    ta: true,
                    tb: false,
                    batch: nb,
                    stride_a: 0,
                    stride_b: g.oc * l,
                    accumulate: false,
                };
                gemm(dev, s, &gm, bb.ptr(), at(ab.ptr(), n0 * g.oc * l), col.ptr)?;
                let elems = nb * image;
                dev.launch(
                    &unit_col2im,
                    Device::grid(elems),
                    &[
                        Arg::P(col.ptr),
                        Arg::P(at(out.ptr, n0 * image)),
                        Arg::I(elems as i64),
                        Arg::Cv(cv),
                    ],
                )?;
            }
            ConvKind::Filter => {
                let elems = nb * k * l;
                dev.launch(
                    &unit_im2col,
                    Device::grid(elems),
                    &[
                        Arg::P(at(bb.ptr(), n0 * image)),
                        Arg::P(col.ptr),
                        Arg::I(elems as i64),
                        Arg::Cv(cv),
                    ],
                )?;
                // Each image's dout[n] · col[n]ᵀ in one batched GEMM, then
                // their sum as ones[1, nb] · partial[nb, oc·k] (sixteen small
                // GEMMs in a row cost several times the two).
                let partial = dev.alloc(s, nb * g.oc * k)?;
                let gm = Gemm {
                    m: g.oc,
                    n: k,
                    k: l,
                    ta: false,
                    tb: true,
                    batch: nb,
                    stride_a: g.oc * l,
                    stride_b: k * l,
                    accumulate: false,
                };
                gemm(
                    dev,
                    s,
                    &gm,
                    at(ab.ptr(), n0 * g.oc * l),
                    col.ptr,
                    partial.ptr,
                )?;
                let ones = dev.ones(s, nb)?;
                let sum = Gemm {
                    m: 1,
                    n: g.oc * k,
                    k: nb,
                    ta: false,
                    tb: false,
                    batch: 1,
                    stride_a: 0,
                    stride_b: 0,
                    accumulate: n0 > 0,
                };
                gemm(dev, s, &sum, ones.ptr, partial.ptr, out.ptr)?;
            }
        }
        n0 += nb;
    }
    Ok(Some(KValue::Tensor(tensor(od, oshape, out))))
}

/// `Conv2D` with groups (a depthwise convolution, say): one thread per
/// output cell (the gradients of grouped convolutions run on the CPU).
fn grouped_conv2d(
    dev: &Device,
    x: &tensor::Tensor,
    w: &tensor::Tensor,
    g: &ops::defs::conv::ConvGeom,
    od: DType,
    oshape: Vec<usize>,
) -> DevResult<Option<KValue>> {
    let s = Storage::of(od);
    let (xb, wb) = (dev.on_device(x)?, dev.on_device(w)?);
    let n: usize = oshape.iter().product();
    let out = dev.alloc(s, n)?;
    if n > 0 {
        let mut cv = crate::device::Cv::default();
        let geom = [
            g.n, g.c, g.h, g.w, g.kh, g.kw, g.sh, g.sw, g.pt, g.pl, g.dh, g.dw, g.oh, g.ow, g.oc,
            g.group,
        ];
        for (i, v) in geom.iter().enumerate() {
            cv.v[i] = *v as i64;
        }
        let f = dev.function("conv", &source::grouped_conv_kernel(s))?;
        dev.launch(
            &f,
            Device::grid(n),
            &[
                Arg::P(xb.ptr),
                Arg::P(wb.ptr),
                Arg::P(out.ptr),
                Arg::I(n as i64),
                Arg::Cv(cv),
            ],
        )?;
    }
    Ok(Some(KValue::Tensor(tensor(od, oshape, out))))
}

/// A pooling window's geometry as the `pool_`/`poolgrad_` kernels read it.
fn pool_cv(g: &ops::defs::conv::PoolGeom) -> crate::device::Cv {
    let mut cv = crate::device::Cv::default();
    let geom = [
        g.planes, g.h, g.w, g.kh, g.kw, g.sh, g.sw, g.oh, g.ow, g.pt, g.pl,
    ];
    for (i, v) in geom.iter().enumerate() {
        cv.v[i] = *v as i64;
    }
    cv
}

/// `MaxPool` and `AvgPool` over NCHW windows, as the CPU kernels clip them.
pub(super) fn pool(
    dev: &Device,
    op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    let Some(x) = input(call, 0) else {
        return Ok(None);
    };
    let Family::Pool2D {
        reduce,
        grad: false,
    } = op.traits.family
    else {
        return Ok(None);
    };
    let avg = reduce == PoolReduce::Avg;
    let dt = x.dtype();
    let Ok(g) = ops::defs::conv::pool_geom(op.name, x.shape(), call.attrs) else {
        return Ok(None);
    };
    let Some((od, oshape)) = out_type(op, call) else {
        return Ok(None);
    };
    let shape = x.shape();
    if !dt.is_float() || od != dt || oshape != [shape[0], shape[1], g.oh, g.ow] {
        return Ok(None);
    }
    let s = Storage::of(dt);
    let n = g.planes * g.oh * g.ow;
    let xb = dev.on_device(x)?;
    let out = dev.alloc(s, n)?;
    if n > 0 {
        let cv = pool_cv(&g);
        let f = dev.function("conv", &source::pool_kernel(s))?;
        dev.launch(
            &f,
            Device::grid(n),
            &[
                Arg::P(xb.ptr),
                Arg::P(out.ptr),
                Arg::I(n as i64),
                Arg::Cv(cv),
                Arg::I32(i32::from(avg)),
                Arg::I32(source::dtype_code(dt)),
            ],
        )?;
    }
    Ok(Some(KValue::Tensor(tensor(od, oshape, out))))
}

/// `MaxPoolGrad(x, out, dout)` and `AvgPoolGrad(x, out, dout)` over NCHW
/// windows, as the CPU kernels: the maximum's gradient to the window's first
/// maximum, the mean's spread evenly over the cells it counted.
pub(super) fn pool_grad(
    dev: &Device,
    op: &'static OpDef,
    call: &KernelCall,
) -> DevResult<Option<KValue>> {
    let (Some(x), Some(dout)) = (input(call, 0), input(call, 2)) else {
        return Ok(None);
    };
    let Family::Pool2D { reduce, grad: true } = op.traits.family else {
        return Ok(None);
    };
    let avg = reduce == PoolReduce::Avg;
    let Ok(g) = ops::defs::conv::pool_geom(op.name, x.shape(), call.attrs) else {
        return Ok(None);
    };
    let Some((od, oshape)) = out_type(op, call) else {
        return Ok(None);
    };
    let shape = x.shape();
    // The max gradient computes in x's dtype (dout is cast to it), the mean's
    // in dout's.
    let dt = if avg { dout.dtype() } else { x.dtype() };
    if !dt.is_float()
        || !x.dtype().is_float()
        || od != dt
        || oshape != shape
        || shape.len() != 4
        || dout.shape() != [shape[0], shape[1], g.oh, g.ow]
    {
        return Ok(None);
    }
    let s = Storage::of(dt);
    let n: usize = shape.iter().product();
    // The mean's gradient reads x for its shape only.
    let xb = if avg {
        None
    } else {
        Some(as_dtype(dev, x, dt)?)
    };
    let db = as_dtype(dev, dout, dt)?;
    let out = dev.alloc(s, n)?;
    if n > 0 {
        let cv = pool_cv(&g);
        let f = dev.function("conv", &source::pool_grad_kernel(s))?;
        dev.launch(
            &f,
            Device::grid(n),
            &[
                Arg::P(xb.as_ref().map_or(db.ptr(), |x| x.ptr())),
                Arg::P(db.ptr()),
                Arg::P(out.ptr),
                Arg::I(n as i64),
                Arg::Cv(cv),
                Arg::I32(i32::from(avg)),
                Arg::I32(source::dtype_code(dt)),
            ],
        )?;
    }
    Ok(Some(KValue::Tensor(tensor(od, oshape, out))))
}
