//! 3-D convolutions (NCDHW): `Conv3D` and `Conv3DTranspose` (what
//! `nn.Conv3d` and `nn.Conv3dTranspose` export), with a 3-D im2col + GEMM of
//! their own and the gradient helpers `_Conv3DBackpropInput`,
//! `_Conv3DBackpropFilter`, `_Conv3DTransposeInput` and
//! `_Conv3DTransposeFilter` (each with a gradient rule of its own, so second
//! derivatives work). A transposed convolution is the input gradient of the
//! convolution from its result to its input.

use crate::schema::{why, Override, Schema};
use crate::Traits;
use ir::{AbsVal, AttrValue, Dim};
use tensor::Tensor;

use crate::defs::conv::conv3d_geometry::Geom3;
use crate::defs::conv::gemm::{
    conv_backprop_filter, conv_backprop_input, conv_forward, ColumnGeom,
};
use crate::defs::conv::{divides, out_size, PadMode, P_MODE};
use crate::defs::nn::common::{all_attrs, float_input, real_dispatch, tensor_out};
use crate::defs::shape::{dims_of, fmt_dims, fmt_ints, tensor_abs};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Attrs, Category, GNode, GradBuilder, GradCall, OpDef, OpError,
    OutputDef, ParamDef,
};

fn check_dout(op: &str, dout: &Tensor, expected: &[usize]) -> Result<(), OpError> {
    if dout.shape() != expected {
        return Err(OpError::input(
            0,
            format!(
                "`{op}`: the output gradient has shape {:?}, but the convolution gives {expected:?}",
                dout.shape()
            ),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// 3-D convolution: attributes and geometry.

/// A 3-D `int or tuple` attribute: `k`, `(d, h, w)` or `(1, 1, d, h, w)`.
fn triple(op: &str, attrs: &Attrs, name: &'static str, min: i64) -> Result<[usize; 3], OpError> {
    let v = attrs.ints(name).unwrap_or_default();
    let t = match v.as_slice() {
        [a] => [*a; 3],
        [a, b, c] => [*a, *b, *c],
        [1, 1, a, b, c] => [*a, *b, *c],
        _ => {
            return Err(OpError::attr(
                name,
                format!(
                    "`{op}`: `{name}` must be an int or a tuple of 3 ints (depth, height, width), got {}",
                    fmt_ints(&v)
                ),
            ))
        }
    };
    if t.iter().any(|&x| x < min) {
        return Err(OpError::attr(
            name,
            format!(
                "`{op}`: `{name}` must be {}, got {}",
                if min > 0 { "positive" } else { "non-negative" },
                fmt_ints(&v)
            ),
        ));
    }
    Ok(t.map(|x| x as usize))
}

/// Conv3D's and Conv3DTranspose's attributes, checked.
#[derive(Debug, Clone, Copy)]
struct Conv3Attrs {
    out_channel: usize,
    kernel: [usize; 3],
    stride: [usize; 3],
    dilation: [usize; 3],
    mode: PadMode,
    /// (head, tail), (top, bottom), (left, right).
    pad: [(usize, usize); 3],
    group: usize,
}

fn conv3_attrs(op: &str, attrs: &Attrs) -> Result<Conv3Attrs, OpError> {
    let out_channel = attrs.int("out_channel");
    if out_channel < 1 {
        return Err(OpError::attr(
            "out_channel",
            format!("`{op}`: `out_channel` must be positive, got {out_channel}"),
        ));
    }
    let kernel = triple(op, attrs, "kernel_size", 1)?;
    let stride = triple(op, attrs, "stride", 1)?;
    let dilation = triple(op, attrs, "dilation", 1)?;
    let mode = attrs.int("mode");
    if mode != 1 {
        return Err(OpError::attr(
            "mode",
            format!("`{op}`: `mode` must be 1 (the only mode MindSpore implements), got {mode}"),
        ));
    }
    let group = attrs.int("group");
    if group < 1 || group > out_channel || out_channel % group != 0 {
        return Err(OpError::attr(
            "group",
            format!("`{op}`: `group` must lie in [1, out_channel] and divide `out_channel` {out_channel}, got {group}"),
        ));
    }
    let pad_mode = match attrs.str("pad_mode").to_ascii_lowercase().as_str() {
        "same" => PadMode::Same,
        "pad" => PadMode::Pad,
        _ => PadMode::Valid,
    };
    let pv = attrs.ints("pad").unwrap_or_default();
    let pad = match pv.as_slice() {
        [p] => [*p; 6],
        [a, b, c, d, e, f] => [*a, *b, *c, *d, *e, *f],
        _ => {
            return Err(OpError::attr(
                "pad",
                format!(
                    "`{op}`: `pad` must be an int or a tuple of 6 ints (head, tail, top, bottom, left, right), got {}",
                    fmt_ints(&pv)
                ),
            ))
        }
    };
    if pad.iter().any(|&p| p < 0) {
        return Err(OpError::attr(
            "pad",
            format!("`{op}`: `pad` must be non-negative, got {}", fmt_ints(&pv)),
        ));
    }
    if pad_mode != PadMode::Pad && pad.iter().any(|&p| p != 0) {
        return Err(OpError::attr(
            "pad",
            format!(
                "`{op}`: `pad` {} is only allowed with pad_mode=\"pad\"",
                fmt_ints(&pv)
            ),
        ));
    }
    let f = attrs.str("data_format");
    if !f.eq_ignore_ascii_case("NCDHW") {
        return Err(OpError::attr(
            "data_format",
            format!("`{op}` supports data_format=\"NCDHW\" only, got \"{f}\""),
        ));
    }
    let p = pad.map(|p| p as usize);
    Ok(Conv3Attrs {
        out_channel: out_channel as usize,
        kernel,
        stride,
        dilation,
        mode: pad_mode,
        pad: [(p[0], p[1]), (p[2], p[3]), (p[4], p[5])],
        group: group as usize,
    })
}

/// The Conv3D output size and padding before along each spatial dimension.
fn conv3_out(a: &Conv3Attrs, sp: [usize; 3]) -> Option<([usize; 3], [usize; 3])> {
    let mut o = [0; 3];
    let mut p = [0; 3];
    for j in 0..3 {
        let (oj, pj) = out_size(
            a.mode,
            sp[j],
            a.kernel[j],
            a.stride[j],
            a.dilation[j],
            a.pad[j],
        )?;
        if oj == 0 && a.mode != PadMode::Same {
            return None;
        }
        o[j] = oj;
        p[j] = pj;
    }
    Some((o, p))
}

fn geom3(op: &str, x: &[usize], w: &[usize], attrs: &Attrs) -> Result<Geom3, OpError> {
    let a = conv3_attrs(op, attrs)?;
    if x.len() != 5 || w.len() != 5 {
        return Err(OpError::call(format!(
            "`{op}` needs 5-D input and weight, got {x:?} and {w:?}"
        )));
    }
    let (c, g) = (x[1], a.group);
    if !divides(g, c) || w != [a.out_channel, c / g, a.kernel[0], a.kernel[1], a.kernel[2]] {
        return Err(OpError::call(format!(
            "`{op}`: weight {w:?} does not fit input {x:?} with out_channel={}, kernel_size={:?}, group={g}",
            a.out_channel, a.kernel
        )));
    }
    let sp = [x[2], x[3], x[4]];
    let (o, p) = conv3_out(&a, sp)
        .ok_or_else(|| OpError::call(format!("`{op}`: input {x:?} is smaller than the kernel")))?;
    Ok(Geom3 {
        n: x[0],
        c,
        oc: a.out_channel,
        group: g,
        sp,
        k: a.kernel,
        s: a.stride,
        d: a.dilation,
        p,
        o,
    })
}

// ---------------------------------------------------------------------------
// Conv3D / Conv3DTranspose shape rules and kernels.

fn dims_fit(dims: &[Dim], want: &[Dim]) -> bool {
    dims.len() == want.len()
        && dims.iter().zip(want).all(|(p, q)| match (p, q) {
            (Dim::Known(p), Dim::Known(q)) => p == q,
            _ => true,
        })
}

/// The output of a Conv3D of input dims `x` by weight dims `w`.
fn conv3_out_dims(
    call: &InferCall,
    a: &Conv3Attrs,
    x: &[Dim],
    w: Option<&[Dim]>,
    w_input: usize,
) -> Result<Vec<Dim>, OpError> {
    let op = call.op.name;
    if let Dim::Known(c) = x[1] {
        if !divides(a.group, c as usize) {
            return Err(OpError::attr(
                "group",
                format!(
                    "`{op}`: `group` {} does not divide the {c} channels of {}",
                    a.group,
                    fmt_dims(x)
                ),
            ));
        }
    }
    if let Some(w) = w {
        let mut want = vec![
            Dim::Known(a.out_channel as i64),
            match x[1] {
                Dim::Known(c) => Dim::Known(c / a.group as i64),
                _ => Dim::Unknown,
            },
        ];
        want.extend(a.kernel.iter().map(|&k| Dim::Known(k as i64)));
        if !dims_fit(w, &want) {
            return Err(OpError::input(
                w_input,
                format!(
                    "`{op}`: the weight {} does not fit: expected {} (out_channel, C/group, kernel_size)",
                    fmt_dims(w),
                    fmt_dims(&want)
                ),
            ));
        }
    }
    let mut out = vec![x[0].clone(), Dim::Known(a.out_channel as i64)];
    for j in 0..3 {
        out.push(match &x[2 + j] {
            Dim::Known(n) => {
                match out_size(
                    a.mode,
                    *n as usize,
                    a.kernel[j],
                    a.stride[j],
                    a.dilation[j],
                    a.pad[j],
                ) {
                    Some((o, _)) if o > 0 || a.mode == PadMode::Same => Dim::Known(o as i64),
                    _ => {
                        return Err(OpError::call(format!(
                        "`{op}`: the {} of the input, {n}, is smaller than the (dilated) kernel",
                        ["depth", "height", "width"][j]
                    )))
                    }
                }
            }
            _ => Dim::Unknown,
        });
    }
    Ok(out)
}

fn infer_conv3d(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xd) = float_input(call, 0)?;
    let (wdtype, wd) = dims_of(call, 1)?;
    if wdtype != dtype {
        return Err(OpError::input(
            1,
            format!("`{op}` needs `x` and `w` of one dtype, got {dtype} and {wdtype}"),
        ));
    }
    let a = conv3_attrs(op, call.attrs)?;
    let Some(xd) = xd else {
        let mut d = vec![Dim::Unknown; 5];
        d[1] = Dim::Known(a.out_channel as i64);
        return Ok(tensor_abs(dtype, d));
    };
    if xd.len() != 5 {
        return Err(OpError::input(
            0,
            format!(
                "`{op}` needs a 5-D `x` (N, C, D, H, W), got {}",
                fmt_dims(&xd)
            ),
        ));
    }
    Ok(tensor_abs(
        dtype,
        conv3_out_dims(call, &a, &xd, wd.as_deref(), 1)?,
    ))
}

fn kernel_conv3d(c: &KernelCall) -> Result<KValue, OpError> {
    let (x, w) = (c.tensor(0)?, c.tensor(1)?);
    let g = geom3("Conv3D", x.shape(), w.shape(), c.attrs)?;
    g.check_scratch("Conv3D", 8)?; // f64 at most
    let buffer = real_dispatch!("Conv3D", [x, w], |xv, wv| conv_forward(xv, wv, &g));
    tensor_out(x.dtype(), vec![g.n, g.oc, g.o[0], g.o[1], g.o[2]], buffer)
}

/// `_Conv3DBackpropInput(dout, weight, x_like)`.
fn kernel_conv3d_backprop_input(c: &KernelCall) -> Result<KValue, OpError> {
    let (dout, w, like) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let op = "_Conv3DBackpropInput";
    let g = geom3(op, like.shape(), w.shape(), c.attrs)?;
    g.check_scratch(op, 8)?; // f64 at most
    check_dout(op, dout, &[g.n, g.oc, g.o[0], g.o[1], g.o[2]])?;
    let buffer = real_dispatch!(op, [dout, w], |dv, wv| conv_backprop_input(dv, wv, &g));
    tensor_out(dout.dtype(), like.shape().to_vec(), buffer)
}

/// `_Conv3DBackpropFilter(dout, x, weight_like)`.
fn kernel_conv3d_backprop_filter(c: &KernelCall) -> Result<KValue, OpError> {
    let (dout, x, like) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let op = "_Conv3DBackpropFilter";
    let g = geom3(op, x.shape(), like.shape(), c.attrs)?;
    g.check_scratch(op, 8)?; // f64 at most
    check_dout(op, dout, &[g.n, g.oc, g.o[0], g.o[1], g.o[2]])?;
    let buffer = real_dispatch!(op, [dout, x], |dv, xv| conv_backprop_filter(dv, xv, &g));
    tensor_out(dout.dtype(), like.shape().to_vec(), buffer)
}

/// Conv3DTranspose's attributes: its convolution's (`out_channel` of that
/// convolution is `in_channel`), and `output_padding`.
fn conv3t_attrs(op: &str, attrs: &Attrs) -> Result<(Conv3Attrs, usize, [usize; 3]), OpError> {
    let in_channel = attrs.int("in_channel");
    if in_channel < 1 {
        return Err(OpError::attr(
            "in_channel",
            format!("`{op}`: `in_channel` must be positive, got {in_channel}"),
        ));
    }
    let a = conv3_attrs(op, attrs)?;
    if a.dilation[0] != 1 {
        return Err(OpError::attr(
            "dilation",
            format!(
                "`{op}`: the depth of `dilation` must be 1 (as MindSpore), got {}",
                a.dilation[0]
            ),
        ));
    }
    let op_pad = triple(op, attrs, "output_padding", 0)?;
    for j in 0..3 {
        if op_pad[j] >= a.stride[j].max(a.dilation[j]) {
            return Err(OpError::attr(
                "output_padding",
                format!(
                    "`{op}`: `output_padding` must be below max(stride, dilation) in each dimension, got {:?} with stride {:?} and dilation {:?}",
                    op_pad, a.stride, a.dilation
                ),
            ));
        }
    }
    if a.mode != PadMode::Pad && op_pad.iter().any(|&p| p != 0) {
        return Err(OpError::attr(
            "output_padding",
            format!("`{op}`: `output_padding` must be 0 unless pad_mode=\"pad\", got {op_pad:?}"),
        ));
    }
    Ok((a, in_channel as usize, op_pad))
}

/// The output size of a transposed convolution along one dimension.
fn transposed_size(a: &Conv3Attrs, j: usize, n: usize, op_pad: usize) -> Option<usize> {
    let eff = (a.kernel[j] - 1) * a.dilation[j] + 1;
    match a.mode {
        PadMode::Same => Some(n * a.stride[j]),
        PadMode::Valid => Some(n.saturating_sub(1) * a.stride[j] + eff),
        PadMode::Pad => {
            (n.saturating_sub(1) * a.stride[j] + eff + op_pad).checked_sub(a.pad[j].0 + a.pad[j].1)
        }
    }
}

fn infer_conv3d_transpose(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xd) = float_input(call, 0)?;
    let (wdtype, wd) = dims_of(call, 1)?;
    if wdtype != dtype {
        return Err(OpError::input(
            1,
            format!("`{op}` needs `dout` and `weight` of one dtype, got {dtype} and {wdtype}"),
        ));
    }
    let (a, in_channel, op_pad) = conv3t_attrs(op, call.attrs)?;
    let Some(xd) = xd else {
        let mut d = vec![Dim::Unknown; 5];
        d[1] = Dim::Known(a.out_channel as i64);
        return Ok(tensor_abs(dtype, d));
    };
    if xd.len() != 5 {
        return Err(OpError::input(
            0,
            format!(
                "`{op}` needs a 5-D `dout` (N, C, D, H, W), got {}",
                fmt_dims(&xd)
            ),
        ));
    }
    if let Dim::Known(c) = xd[1] {
        if c as usize != in_channel {
            return Err(OpError::attr(
                "in_channel",
                format!(
                    "`{op}`: `in_channel` is {in_channel} but `dout` {} has {c} channels",
                    fmt_dims(&xd)
                ),
            ));
        }
    }
    if !divides(a.group, in_channel) {
        return Err(OpError::attr(
            "group",
            format!(
                "`{op}`: `group` {} does not divide `in_channel` {in_channel}",
                a.group
            ),
        ));
    }
    if let Some(wd) = &wd {
        let mut want = vec![
            Dim::Known(in_channel as i64),
            Dim::Known((a.out_channel / a.group) as i64),
        ];
        want.extend(a.kernel.iter().map(|&k| Dim::Known(k as i64)));
        if !dims_fit(wd, &want) {
            return Err(OpError::input(
                1,
                format!(
                    "`{op}`: the weight {} does not fit: expected {} (in_channel, out_channel/group, kernel_size)",
                    fmt_dims(wd),
                    fmt_dims(&want)
                ),
            ));
        }
    }
    let mut out = vec![xd[0].clone(), Dim::Known(a.out_channel as i64)];
    for j in 0..3 {
        out.push(match &xd[2 + j] {
            Dim::Known(n) => match transposed_size(&a, j, *n as usize, op_pad[j]) {
                Some(o) if o > 0 => Dim::Known(o as i64),
                _ => {
                    return Err(OpError::attr(
                        "pad",
                        format!(
                            "`{op}`: the padding leaves no output along the {}",
                            ["depth", "height", "width"][j]
                        ),
                    ))
                }
            },
            _ => Dim::Unknown,
        });
    }
    Ok(tensor_abs(dtype, out))
}

/// The geometry of the convolution a Conv3DTranspose is the input gradient
/// of: its input is the transposed result, its output `dout`.
fn geom3_transpose(dout: &[usize], w: &[usize], attrs: &Attrs) -> Result<Geom3, OpError> {
    let op = "Conv3DTranspose";
    let (a, in_channel, op_pad) = conv3t_attrs(op, attrs)?;
    if dout.len() != 5 || w.len() != 5 {
        return Err(OpError::call(format!(
            "`{op}` needs 5-D dout and weight, got {dout:?} and {w:?}"
        )));
    }
    let g = a.group;
    if dout[1] != in_channel
        || !divides(g, in_channel)
        || w != [
            in_channel,
            a.out_channel / g,
            a.kernel[0],
            a.kernel[1],
            a.kernel[2],
        ]
    {
        return Err(OpError::call(format!(
            "`{op}`: weight {w:?} does not fit dout {dout:?} with in_channel={in_channel}, out_channel={}, group={g}",
            a.out_channel
        )));
    }
    let mut sp = [0; 3];
    let mut p = [0; 3];
    for j in 0..3 {
        sp[j] = transposed_size(&a, j, dout[2 + j], op_pad[j])
            .ok_or_else(|| OpError::attr("pad", format!("`{op}`: the padding leaves no output")))?;
        p[j] = match a.mode {
            PadMode::Valid => 0,
            PadMode::Pad => a.pad[j].0,
            PadMode::Same => {
                let eff = (a.kernel[j] - 1) * a.dilation[j] + 1;
                let total = ((dout[2 + j].max(1) - 1) * a.stride[j] + eff).saturating_sub(sp[j]);
                total / 2
            }
        };
    }
    Ok(Geom3 {
        n: dout[0],
        c: a.out_channel,
        oc: in_channel,
        group: g,
        sp,
        k: a.kernel,
        s: a.stride,
        d: a.dilation,
        p,
        o: [dout[2], dout[3], dout[4]],
    })
}

fn kernel_conv3d_transpose(c: &KernelCall) -> Result<KValue, OpError> {
    let (dout, w) = (c.tensor(0)?, c.tensor(1)?);
    let g = geom3_transpose(dout.shape(), w.shape(), c.attrs)?;
    g.check_scratch("Conv3DTranspose", 8)?; // f64 at most
    let buffer = real_dispatch!("Conv3DTranspose", [dout, w], |dv, wv| {
        conv_backprop_input(dv, wv, &g)
    });
    tensor_out(
        dout.dtype(),
        vec![g.n, g.c, g.sp[0], g.sp[1], g.sp[2]],
        buffer,
    )
}

/// `_Conv3DTransposeFilter(dout, x, weight_like)`: the weight gradient of a
/// Conv3DTranspose of `x` whose output gradient is `dout` (the filter gradient
/// of the convolution from `dout` to `x`).
fn kernel_conv3d_transpose_filter(c: &KernelCall) -> Result<KValue, OpError> {
    let (dout, x, like) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let g = geom3_transpose(x.shape(), like.shape(), c.attrs)?;
    g.check_scratch("_Conv3DTransposeFilter", 8)?; // f64 at most
    if dout.shape() != [g.n, g.c, g.sp[0], g.sp[1], g.sp[2]] {
        return Err(OpError::input(
            0,
            format!(
                "`_Conv3DTransposeFilter`: the output gradient has shape {:?}, expected {:?}",
                dout.shape(),
                [g.n, g.c, g.sp[0], g.sp[1], g.sp[2]]
            ),
        ));
    }
    let buffer = real_dispatch!("_Conv3DTransposeFilter", [x, dout], |xv, dv| {
        conv_backprop_filter(xv, dv, &g)
    });
    tensor_out(dout.dtype(), like.shape().to_vec(), buffer)
}

/// `_Conv3DTransposeInput(dout, weight, x_like)`: the input gradient of a
/// Conv3DTranspose (the forward convolution of `dout`).
fn kernel_conv3d_transpose_input(c: &KernelCall) -> Result<KValue, OpError> {
    let (dout, w, like) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let g = geom3_transpose(like.shape(), w.shape(), c.attrs)?;
    g.check_scratch("_Conv3DTransposeInput", 8)?; // f64 at most
    if dout.shape() != [g.n, g.c, g.sp[0], g.sp[1], g.sp[2]] {
        return Err(OpError::input(
            0,
            format!(
                "`_Conv3DTransposeInput`: the output gradient has shape {:?}, expected {:?}",
                dout.shape(),
                [g.n, g.c, g.sp[0], g.sp[1], g.sp[2]]
            ),
        ));
    }
    let buffer = real_dispatch!("_Conv3DTransposeInput", [dout, w], |dv, wv| {
        conv_forward(dv, wv, &g)
    });
    tensor_out(dout.dtype(), like.shape().to_vec(), buffer)
}

fn like(call: &InferCall, d: usize, s: usize) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let dtype = call.inputs[d]
        .dtype()
        .ok_or_else(|| OpError::input(d, format!("`{}` needs a tensor", call.op.name)))?;
    let shape = call.inputs[s].shape().unwrap_or(ir::Shape::Unranked);
    Ok(AbsVal::Tensor { dtype, shape })
}

fn grad_conv3d(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let (x, w) = (c.inputs[0], c.inputs[1]);
    let dx = b.prim("_Conv3DBackpropInput", &[c.dout, w, x], all_attrs(c));
    let dw = b.prim("_Conv3DBackpropFilter", &[c.dout, x, w], all_attrs(c));
    vec![Some(dx), Some(dw)]
}

/// MindSpore's Conv3DTranspose bprop: `dx = Conv3D(dout, w)`, `dw =
/// Conv3DBackpropFilter(dout, x)` (the convolution from the result to `x`).
fn grad_conv3d_transpose(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let (x, w) = (c.inputs[0], c.inputs[1]);
    let dx = b.prim("_Conv3DTransposeInput", &[c.dout, w, x], all_attrs(c));
    let dw = b.prim("_Conv3DTransposeFilter", &[c.dout, x, w], all_attrs(c));
    vec![Some(dx), Some(dw)]
}

const CONV3_DOC_PAD: &str = "Zero padding for pad_mode=\"pad\": an int for all sides, or `(head, tail, top, bottom, left, right)`. Default 0; must be 0 in the other modes.";

const P3_OUT_CHANNEL: ParamDef = ParamDef::attr(
    "out_channel",
    AttrType::Int,
    None,
    "The number of output channels; must equal the first dimension of the weight.",
);
const P3_KERNEL: ParamDef = ParamDef::attr(
    "kernel_size",
    AttrType::Ints,
    None,
    "The kernel's depth, height and width: an int for all three or `(kd, kh, kw)`.",
);
const P3_PAD_MODE: ParamDef = ParamDef::attr(
    "pad_mode",
    AttrType::Str(&["valid", "same", "pad"]),
    Some(AttrDefault::Str("valid")),
    "\"valid\" (default): no padding; \"same\": output `ceil(D/s)` per dimension, the padding split evenly with the extra cell at the end; \"pad\": pad explicitly by `pad`.",
);
const P3_PAD: ParamDef = ParamDef::attr(
    "pad",
    AttrType::Ints,
    Some(AttrDefault::Int(0)),
    CONV3_DOC_PAD,
);
const P3_STRIDE: ParamDef = ParamDef::attr(
    "stride",
    AttrType::Ints,
    Some(AttrDefault::Int(1)),
    "The step of the kernel: an int or `(sd, sh, sw)`. Default 1.",
);
const P3_DILATION: ParamDef = ParamDef::attr(
    "dilation",
    AttrType::Ints,
    Some(AttrDefault::Int(1)),
    "The spacing between kernel cells: an int or `(dd, dh, dw)`. Default 1.",
);
const P3_GROUP: ParamDef = ParamDef::attr(
    "group",
    AttrType::Int,
    Some(AttrDefault::Int(1)),
    "The number of channel groups; must divide the channel counts. Default 1.",
);
const P3_FORMAT: ParamDef = ParamDef::attr(
    "data_format",
    AttrType::Str(&["NCDHW"]),
    Some(AttrDefault::Str("NCDHW")),
    "The layout; only \"NCDHW\".",
);

const CONV3D_PARAMS: Schema = Schema::ms(
    &[
        Override::drop("offset_x", why::DROPPED),
        Override::attr("pad_mode", AttrType::Str(&["valid", "same", "pad"]), Some(AttrDefault::Str("valid")), why::STRINGS),
        Override::attr("data_format", AttrType::Str(&["NCDHW"]), Some(AttrDefault::Str("NCDHW")), why::STRINGS),
    ],
    &[
        ("x", "The input, `[N, C, D, H, W]`, float."),
        ("w", "The filters, `[out_channel, C/group, kd, kh, kw]`, of `x`'s dtype."),
        ("out_channel", "The number of output channels; must equal the first dimension of the weight."),
        ("kernel_size", "The kernel's depth, height and width: an int for all three or `(kd, kh, kw)`."),
        ("mode", "MindSpore's convolution mode; only 1 (the default) exists."),
        ("pad_mode", "\"valid\" (default): no padding; \"same\": output `ceil(D/s)` per dimension, the padding split evenly with the extra cell at the end; \"pad\": pad explicitly by `pad`."),
        ("pad", "Zero padding for pad_mode=\"pad\": an int for all sides, or `(head, tail, top, bottom, left, right)`. Default 0; must be 0 in the other modes."),
        ("stride", "The step of the kernel: an int or `(sd, sh, sw)`. Default 1."),
        ("dilation", "The spacing between kernel cells: an int or `(dd, dh, dw)`. Default 1."),
        ("group", "The number of channel groups; must divide the channel counts. Default 1."),
        ("data_format", "The layout; only \"NCDHW\"."),
    ],
);

const CONV3D_GRAD_PARAMS_INPUT: Schema = Schema::own(&[
    ParamDef::input("dout", "The gradient of the Conv3D result."),
    ParamDef::input("weight", "Conv3D's weight."),
    ParamDef::input("x_like", "Conv3D's input, for its shape."),
    P3_OUT_CHANNEL,
    P3_KERNEL,
    P_MODE,
    P3_PAD_MODE,
    P3_PAD,
    P3_STRIDE,
    P3_DILATION,
    P3_GROUP,
    P3_FORMAT,
]);

const CONV3D_GRAD_PARAMS_FILTER: Schema = Schema::own(&[
    ParamDef::input("dout", "The gradient of the Conv3D result."),
    ParamDef::input("x", "Conv3D's input."),
    ParamDef::input("weight_like", "Conv3D's weight, for its shape."),
    P3_OUT_CHANNEL,
    P3_KERNEL,
    P_MODE,
    P3_PAD_MODE,
    P3_PAD,
    P3_STRIDE,
    P3_DILATION,
    P3_GROUP,
    P3_FORMAT,
]);

const P3T_IN_CHANNEL: ParamDef = ParamDef::attr(
    "in_channel",
    AttrType::Int,
    None,
    "The channels of the input `dout` (the first dimension of the weight).",
);
const P3T_OUTPUT_PADDING: ParamDef = ParamDef::attr(
    "output_padding",
    AttrType::Ints,
    Some(AttrDefault::Int(0)),
    "Extra cells added at the end of each output dimension (pad_mode=\"pad\" only): an int or `(d, h, w)`, each below max(stride, dilation). Default 0.",
);

macro_rules! conv3t_params {
    ($($first:expr),*) => {
        &[
            $($first,)*
            P3T_IN_CHANNEL,
            ParamDef::attr(
                "out_channel",
                AttrType::Int,
                None,
                "The channels of the result; the weight holds `out_channel/group` per group.",
            ),
            P3_KERNEL,
            P_MODE,
            P3_PAD_MODE,
            P3_PAD,
            P3_STRIDE,
            ParamDef::attr(
                "dilation",
                AttrType::Ints,
                Some(AttrDefault::Int(1)),
                "The spacing between kernel cells: an int or `(1, dh, dw)` (the depth dilation must be 1, as MindSpore). Default 1.",
            ),
            P3_GROUP,
            P3T_OUTPUT_PADDING,
            P3_FORMAT,
        ]
    };
}

const CONV3DT_PARAMS: Schema = Schema::ms(
    &[
        Override::inputs(&["dout", "weight"], why::INPUT_NAMES),
        Override::attr("pad_mode", AttrType::Str(&["valid", "same", "pad"]), Some(AttrDefault::Str("valid")), why::STRINGS),
        Override::attr("data_format", AttrType::Str(&["NCDHW"]), Some(AttrDefault::Str("NCDHW")), why::STRINGS),
    ],
    &[
        ("dout", "The input, `[N, in_channel, D, H, W]`, float."),
        ("weight", "The filters, `[in_channel, out_channel/group, kd, kh, kw]`, of `dout`'s dtype."),
        ("in_channel", "The channels of the input `dout` (the first dimension of the weight)."),
        ("out_channel", "The channels of the result; the weight holds `out_channel/group` per group."),
        ("kernel_size", "The kernel's depth, height and width: an int for all three or `(kd, kh, kw)`."),
        ("mode", "MindSpore's convolution mode; only 1 (the default) exists."),
        ("pad_mode", "\"valid\" (default): no padding; \"same\": output `ceil(D/s)` per dimension, the padding split evenly with the extra cell at the end; \"pad\": pad explicitly by `pad`."),
        ("pad", "Zero padding for pad_mode=\"pad\": an int for all sides, or `(head, tail, top, bottom, left, right)`. Default 0; must be 0 in the other modes."),
        ("stride", "The step of the kernel: an int or `(sd, sh, sw)`. Default 1."),
        ("dilation", "The spacing between kernel cells: an int or `(1, dh, dw)` (the depth dilation must be 1, as MindSpore). Default 1."),
        ("group", "The number of channel groups; must divide the channel counts. Default 1."),
        ("output_padding", "Extra cells added at the end of each output dimension (pad_mode=\"pad\" only): an int or `(d, h, w)`, each below max(stride, dilation). Default 0."),
        ("data_format", "The layout; only \"NCDHW\"."),
    ],
);

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "Conv3D",
        category: Category::NeuralNetwork,
        doc: "3-D convolution (cross-correlation) of an NCDHW input `x` with `w`, optionally strided, dilated, padded and grouped; output `[N, out_channel, D_out, H_out, W_out]` (im2col and GEMM).",
        schema: CONV3D_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_conv3d,
        grad: Some(grad_conv3d),
        kernel: Some(kernel_conv3d),
        traits: Traits::NONE,
    },
    OpDef {
        name: "Conv3DTranspose",
        category: Category::NeuralNetwork,
        doc: "3-D transposed convolution (what `nn.Conv3dTranspose` exports): the input gradient of the Conv3D from a `[N, out_channel, ...]` tensor to `dout`. Output size per dimension: \"valid\" `(D-1)·s + (k-1)·d + 1`, \"same\" `D·s`, \"pad\" `(D-1)·s - pad_before - pad_after + (k-1)·d + 1 + output_padding`.",
        schema: CONV3DT_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_conv3d_transpose,
        grad: Some(grad_conv3d_transpose),
        kernel: Some(kernel_conv3d_transpose),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_Conv3DBackpropInput",
        category: Category::Internal,
        doc: "The gradient of Conv3D with respect to its input (MindSpore's Conv3DBackpropInput), via GEMM and col2im.",
        schema: CONV3D_GRAD_PARAMS_INPUT,
        variadic: false,
        output: OutputDef::Single,
        infer: |c| like(c, 0, 2),
        grad: Some(|b, c| {
            let (dy, w, x) = (c.inputs[0], c.inputs[1], c.inputs[2]);
            let ddy = b.prim("Conv3D", &[c.dout, w], all_attrs(c));
            let dw = b.prim("_Conv3DBackpropFilter", &[dy, c.dout, w], all_attrs(c));
            let _ = x;
            vec![Some(ddy), Some(dw), None]
        }),
        kernel: Some(kernel_conv3d_backprop_input),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_Conv3DBackpropFilter",
        category: Category::Internal,
        doc: "The gradient of Conv3D with respect to its weight (MindSpore's Conv3DBackpropFilter), via im2col and GEMM.",
        schema: CONV3D_GRAD_PARAMS_FILTER,
        variadic: false,
        output: OutputDef::Single,
        infer: |c| like(c, 0, 2),
        grad: Some(|b, c| {
            let (dy, x) = (c.inputs[0], c.inputs[1]);
            let ddy = b.prim("Conv3D", &[x, c.dout], all_attrs(c));
            let dx = b.prim("_Conv3DBackpropInput", &[dy, c.dout, x], all_attrs(c));
            vec![Some(ddy), Some(dx), None]
        }),
        kernel: Some(kernel_conv3d_backprop_filter),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_Conv3DTransposeInput",
        category: Category::Internal,
        doc: "The gradient of Conv3DTranspose with respect to `dout`: the forward convolution of the result's gradient by `weight`.",
        schema: Schema::own(conv3t_params!(
            ParamDef::input("dout", "The gradient of the Conv3DTranspose result."),
            ParamDef::input("weight", "Conv3DTranspose's weight."),
            ParamDef::input("x_like", "Conv3DTranspose's input, for its shape.")
        )),
        variadic: false,
        output: OutputDef::Single,
        infer: |c| like(c, 0, 2),
        grad: Some(|b, c| {
            let (dy, w, x) = (c.inputs[0], c.inputs[1], c.inputs[2]);
            let ddy = b.prim("Conv3DTranspose", &[c.dout, w], all_attrs(c));
            let dw = b.prim("_Conv3DTransposeFilter", &[dy, c.dout, w], all_attrs(c));
            let _ = x;
            vec![Some(ddy), Some(dw), None]
        }),
        kernel: Some(kernel_conv3d_transpose_input),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_Conv3DTransposeFilter",
        category: Category::Internal,
        doc: "The gradient of Conv3DTranspose with respect to its weight.",
        schema: Schema::own(conv3t_params!(
            ParamDef::input("dout", "The gradient of the Conv3DTranspose result."),
            ParamDef::input("x", "Conv3DTranspose's input."),
            ParamDef::input("weight_like", "Conv3DTranspose's weight, for its shape.")
        )),
        variadic: false,
        output: OutputDef::Single,
        infer: |c| like(c, 0, 2),
        grad: Some(|b, c| {
            let (dy, x) = (c.inputs[0], c.inputs[1]);
            let ddy = b.prim("Conv3DTranspose", &[x, c.dout], all_attrs(c));
            let dx = b.prim("_Conv3DTransposeInput", &[dy, c.dout, x], all_attrs(c));
            vec![Some(ddy), Some(dx), None]
        }),
        kernel: Some(kernel_conv3d_transpose_filter),
        traits: Traits::NONE,
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let i = AttrValue::Int;
    let s = |v: &str| AttrValue::Str(v.to_string());
    let t = |v: &[i64]| AttrValue::Tuple(v.iter().map(|&x| AttrValue::Int(x)).collect());
    let conv3 = |x: &[usize], w: &[usize], seed: u64| {
        Sample::new(
            "Conv3D",
            vec![
                random_f64(x, seed, -1.0, 1.0),
                random_f64(w, seed + 1, -1.0, 1.0),
            ],
        )
        .attr("out_channel", i(w[0] as i64))
        .attr(
            "kernel_size",
            t(&w[2..].iter().map(|&k| k as i64).collect::<Vec<_>>()),
        )
    };
    let conv3t = |x: &[usize], w: &[usize], oc: i64, seed: u64| {
        Sample::new(
            "Conv3DTranspose",
            vec![
                random_f64(x, seed, -1.0, 1.0),
                random_f64(w, seed + 1, -1.0, 1.0),
            ],
        )
        .attr("in_channel", i(w[0] as i64))
        .attr("out_channel", i(oc))
        .attr(
            "kernel_size",
            t(&w[2..].iter().map(|&k| k as i64).collect::<Vec<_>>()),
        )
    };
    let mut v = vec![
        conv3(&[2, 2, 3, 4, 3], &[3, 2, 2, 2, 2], 310),
        conv3(&[1, 4, 4, 3, 5], &[2, 2, 3, 2, 3], 312)
            .attr("group", i(2))
            .attr("pad_mode", s("same"))
            .attr("stride", t(&[2, 1, 2])),
        conv3(&[1, 2, 5, 4, 4], &[2, 2, 2, 2, 2], 314)
            .attr("pad_mode", s("pad"))
            .attr("pad", t(&[1, 0, 0, 1, 1, 1]))
            .attr("dilation", t(&[2, 1, 1])),
        conv3t(&[1, 2, 2, 3, 2], &[2, 3, 2, 2, 3], 3, 320),
        conv3t(&[1, 2, 2, 2, 3], &[2, 1, 3, 2, 2], 2, 322)
            .attr("group", i(2))
            .attr("pad_mode", s("same"))
            .attr("stride", i(2)),
        conv3t(&[1, 2, 2, 2, 2], &[2, 2, 2, 3, 2], 2, 324)
            .attr("pad_mode", s("pad"))
            .attr("pad", t(&[1, 0, 1, 1, 0, 1]))
            .attr("stride", i(2))
            .attr("output_padding", t(&[1, 0, 1])),
    ];
    // The gradient helpers' own gradients (second order).
    let c3 = |op: &'static str, a: &[usize], b2: &[usize], c: &[usize], seed: u64| {
        Sample::new(
            op,
            vec![
                random_f64(a, seed, -1.0, 1.0),
                random_f64(b2, seed + 1, -1.0, 1.0),
                random_f64(c, seed + 2, -1.0, 1.0),
            ],
        )
        .attr("out_channel", i(3))
        .attr("kernel_size", t(&[2, 2, 2]))
        .attr("stride", i(2))
    };
    v.push(c3(
        "_Conv3DBackpropInput",
        &[1, 3, 2, 1, 2],
        &[3, 2, 2, 2, 2],
        &[1, 2, 4, 3, 4],
        330,
    ));
    v.push(c3(
        "_Conv3DBackpropFilter",
        &[1, 3, 2, 1, 2],
        &[1, 2, 4, 3, 4],
        &[3, 2, 2, 2, 2],
        333,
    ));
    let c3t = |op: &'static str, a: &[usize], b2: &[usize], c: &[usize], seed: u64| {
        Sample::new(
            op,
            vec![
                random_f64(a, seed, -1.0, 1.0),
                random_f64(b2, seed + 1, -1.0, 1.0),
                random_f64(c, seed + 2, -1.0, 1.0),
            ],
        )
        .attr("in_channel", i(2))
        .attr("out_channel", i(3))
        .attr("kernel_size", t(&[2, 2, 2]))
        .attr("stride", i(2))
    };
    v.push(c3t(
        "_Conv3DTransposeInput",
        &[1, 3, 4, 4, 2],
        &[2, 3, 2, 2, 2],
        &[1, 2, 2, 2, 1],
        336,
    ));
    v.push(c3t(
        "_Conv3DTransposeFilter",
        &[1, 3, 4, 4, 2],
        &[1, 2, 2, 2, 1],
        &[2, 3, 2, 2, 2],
        339,
    ));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transposed_sizes() {
        let attrs = Attrs::new(vec![
            ("out_channel", AttrValue::Int(3)),
            ("kernel_size", AttrValue::Int(3)),
            ("mode", AttrValue::Int(1)),
            ("pad_mode", AttrValue::Str("pad".into())),
            ("pad", AttrValue::Int(1)),
            ("stride", AttrValue::Int(2)),
            ("dilation", AttrValue::Int(1)),
            ("group", AttrValue::Int(1)),
            ("data_format", AttrValue::Str("NCDHW".into())),
        ]);
        let a = conv3_attrs("Conv3D", &attrs).unwrap();
        assert_eq!(transposed_size(&a, 0, 3, 1), Some(6));
    }
}
