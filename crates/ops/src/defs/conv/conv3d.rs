//! 3-D convolutions (NCDHW): `Conv3D` and `Conv3DTranspose` (what
//! `nn.Conv3d` and `nn.Conv3dTranspose` export), with a 3-D im2col + GEMM of
//! their own, and MindSpore's backward primitives `Conv3DBackpropInput(filter,
//! out_backprop, input_size)` and `Conv3DBackpropFilter(x, out_backprop,
//! filter_size)`, which the gradient rules emit as MindSpore's bprops do
//! (each with a gradient rule of its own, so second derivatives work). A
//! transposed convolution is the input gradient of the convolution from its
//! result to its input: its gradient is that convolution (`Conv3D` with
//! `pad_mode="pad"` and the transposed one's padding) and its filter gradient.

use crate::schema::{why, Override, Schema};
use crate::Traits;
use ir::{AbsVal, AttrValue, Dim};
use tensor::Tensor;

use crate::defs::backward::conv::{check_conv_out, dims_fit};
use crate::defs::backward::sizes::{layout_sizes, sizes_arg};
use crate::defs::conv::conv3d_geometry::Geom3;
use crate::defs::conv::gemm::{
    conv_backprop_filter, conv_backprop_input, conv_forward, ColumnGeom,
};
use crate::defs::conv::{divides, out_size, PadMode};
use crate::defs::nn::common::{float_input, real_dispatch, tensor_out};
use crate::defs::shape::{dims_of, fmt_dims, fmt_ints, tensor_abs};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Attrs, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef,
};

fn check_dout(op: &str, i: usize, dout: &Tensor, expected: &[usize]) -> Result<(), OpError> {
    if dout.shape() != expected {
        return Err(OpError::input(
            i,
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

/// A 3-D `int or tuple` attribute: `k`, `(d, h, w)` or `(1, 1, d, h, w)`
/// (`(0, 0, d, h, w)` of a non-negative one: how MindSpore stores
/// `output_padding`).
fn triple(op: &str, attrs: &Attrs, name: &'static str, min: i64) -> Result<[usize; 3], OpError> {
    let v = attrs.ints(name).unwrap_or_default();
    let t = match v.as_slice() {
        [a] => [*a; 3],
        [a, b, c] => [*a, *b, *c],
        [1, 1, a, b, c] => [*a, *b, *c],
        [0, 0, a, b, c] if min == 0 => [*a, *b, *c],
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

/// Sizes of 5 dimensions `(N, C, D, H, W)`.
fn five(op: &str, sizes: Vec<usize>, what: &str) -> Result<Vec<usize>, OpError> {
    if sizes.len() != 5 {
        return Err(OpError::call(format!(
            "`{op}`: `{what}` must be 5 sizes (N, C, D, H, W), got {sizes:?}"
        )));
    }
    Ok(sizes)
}

/// `Conv3DBackpropInput(filter, out_backprop, input_size)`.
fn kernel_conv3d_backprop_input(c: &KernelCall) -> Result<KValue, OpError> {
    let op = "Conv3DBackpropInput";
    let (w, dout) = (c.tensor(0)?, c.tensor(1)?);
    let sizes = five(op, sizes_arg(c, 2, op)?, "input_size")?;
    let g = geom3(op, &sizes, w.shape(), c.attrs)?;
    g.check_scratch(op, 8)?; // f64 at most
    check_dout(op, 1, dout, &[g.n, g.oc, g.o[0], g.o[1], g.o[2]])?;
    let buffer = real_dispatch!(op, [dout, w], |dv, wv| conv_backprop_input(dv, wv, &g));
    tensor_out(dout.dtype(), sizes, buffer)
}

/// `Conv3DBackpropFilter(x, out_backprop, filter_size)`.
fn kernel_conv3d_backprop_filter(c: &KernelCall) -> Result<KValue, OpError> {
    let op = "Conv3DBackpropFilter";
    let (x, dout) = (c.tensor(0)?, c.tensor(1)?);
    let sizes = five(op, sizes_arg(c, 2, op)?, "filter_size")?;
    let g = geom3(op, x.shape(), &sizes, c.attrs)?;
    g.check_scratch(op, 8)?; // f64 at most
    check_dout(op, 1, dout, &[g.n, g.oc, g.o[0], g.o[1], g.o[2]])?;
    let buffer = real_dispatch!(op, [dout, x], |dv, xv| conv_backprop_filter(dv, xv, &g));
    tensor_out(dout.dtype(), sizes, buffer)
}

/// Sizes input `i`, `(N, C, D, H, W)`, as dimensions; a size unknown before run
/// time is `fallback`'s.
fn five_sizes(call: &InferCall, i: usize, fallback: [Option<Dim>; 5]) -> Result<Vec<Dim>, OpError> {
    layout_sizes(call, i, "N, C, D, H, W", &fallback)
}

/// `Conv3DBackpropInput(filter, out_backprop, input_size)`: the shape
/// `input_size` gives (the batch, where it does not know it, `out_backprop`'s).
fn infer_conv3d_backprop_input(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, dd) = float_input(call, 1)?;
    let (wdtype, wd) = dims_of(call, 0)?;
    if wdtype != dtype {
        return Err(OpError::input(
            0,
            format!(
                "`{op}` needs `filter` and `out_backprop` of one dtype, got {wdtype} and {dtype}"
            ),
        ));
    }
    let a = conv3_attrs(op, call.attrs)?;
    let batch = dd.as_ref().and_then(|d| d.first().cloned());
    let xd = five_sizes(call, 2, [batch, None, None, None, None])?;
    let want = conv3_out_dims(call, &a, &xd, wd.as_deref(), 0)?;
    if let Some(dd) = dd {
        check_conv_out(call, 1, &dd, &want)?;
    }
    Ok(tensor_abs(dtype, xd))
}

/// `Conv3DBackpropFilter(x, out_backprop, filter_size)`: the shape
/// `filter_size` gives (what the attributes say of it where it does not).
fn infer_conv3d_backprop_filter(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xd) = float_input(call, 0)?;
    let (ddtype, dd) = dims_of(call, 1)?;
    if ddtype != dtype {
        return Err(OpError::input(
            1,
            format!("`{op}` needs `x` and `out_backprop` of one dtype, got {dtype} and {ddtype}"),
        ));
    }
    let a = conv3_attrs(op, call.attrs)?;
    let known = |v: usize| Some(Dim::Known(v as i64));
    let cg = xd
        .as_ref()
        .and_then(|x| x.get(1).and_then(Dim::known))
        .map(|c| Dim::Known(c / a.group as i64));
    let fallback = [
        known(a.out_channel),
        cg,
        known(a.kernel[0]),
        known(a.kernel[1]),
        known(a.kernel[2]),
    ];
    let wd = five_sizes(call, 2, fallback)?;
    if let Some(xd) = xd {
        if xd.len() != 5 {
            return Err(OpError::input(
                0,
                format!(
                    "`{op}` needs a 5-D `x` (N, C, D, H, W), got {}",
                    fmt_dims(&xd)
                ),
            ));
        }
        let want = conv3_out_dims(call, &a, &xd, Some(&wd), 2)?;
        if let Some(dd) = dd {
            check_conv_out(call, 1, &dd, &want)?;
        }
    }
    Ok(tensor_abs(dtype, wd))
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

/// The attributes a `Conv3D` (and its backward primitives) take.
const CONV3D_ATTRS: &[&str] = &[
    "out_channel",
    "kernel_size",
    "mode",
    "pad_mode",
    "pad",
    "stride",
    "dilation",
    "group",
    "data_format",
];

/// The call's attributes that a `Conv3D` takes.
fn conv3d_attrs(c: &GradCall) -> Vec<(&'static str, AttrValue)> {
    c.attrs
        .iter()
        .filter(|(k, _)| CONV3D_ATTRS.contains(k))
        .map(|(k, v)| (*k, v.clone()))
        .collect()
}

/// MindSpore's Conv3D bprop: `Conv3DBackpropInput(w, dout, shape of x)`,
/// `Conv3DBackpropFilter(x, dout, shape of w)`, with Conv3D's attributes.
fn grad_conv3d(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let (x, w) = (c.inputs[0], c.inputs[1]);
    let attrs = conv3d_attrs(c);
    let xs = b.prim("Shape", &[x], vec![]);
    let ws = b.prim("Shape", &[w], vec![]);
    let dx = b.prim("Conv3DBackpropInput", &[w, c.dout, xs], attrs.clone());
    let dw = b.prim("Conv3DBackpropFilter", &[x, c.dout, ws], attrs);
    vec![Some(dx), Some(dw)]
}

/// An input gradient `Conv3DBackpropInput(w, dy, sizes)`: with sensitivity
/// `u` (shaped like the convolution's input), `d w =
/// Conv3DBackpropFilter(u, dy, shape of w)` and `d dy = Conv3D(u, w)`.
fn grad_conv3d_backprop_input(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let (w, dy) = (c.inputs[0], c.inputs[1]);
    let attrs = conv3d_attrs(c);
    let ddy = b.prim("Conv3D", &[c.dout, w], attrs.clone());
    let ws = b.prim("Shape", &[w], vec![]);
    let dw = b.prim("Conv3DBackpropFilter", &[c.dout, dy, ws], attrs);
    vec![Some(dw), Some(ddy), None]
}

/// A filter gradient `Conv3DBackpropFilter(x, dy, sizes)`: with sensitivity
/// `u` (shaped like the filter), `d x = Conv3DBackpropInput(u, dy, shape of
/// x)` and `d dy = Conv3D(x, u)`.
fn grad_conv3d_backprop_filter(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let (x, dy) = (c.inputs[0], c.inputs[1]);
    let attrs = conv3d_attrs(c);
    let ddy = b.prim("Conv3D", &[x, c.dout], attrs.clone());
    let xs = b.prim("Shape", &[x], vec![]);
    let dx = b.prim("Conv3DBackpropInput", &[c.dout, dy, xs], attrs);
    vec![Some(dx), Some(ddy), None]
}

/// The padding `(head, tail, top, bottom, left, right)` of a Conv3DTranspose,
/// as MindSpore's shape inference records it in `pad_list`: "same" pads
/// `max(0, (k-1)·d + 1 - s)` per dimension, half before (rounded down).
fn transpose_pad_list(a: &Conv3Attrs) -> [i64; 6] {
    let mut p = [0; 6];
    for j in 0..3 {
        let (before, after) = match a.mode {
            PadMode::Valid => (0, 0),
            PadMode::Pad => a.pad[j],
            PadMode::Same => {
                let eff = (a.kernel[j] - 1) * a.dilation[j] + 1;
                let total = eff.saturating_sub(a.stride[j]);
                (total / 2, total - total / 2)
            }
        };
        p[2 * j] = before as i64;
        p[2 * j + 1] = after as i64;
    }
    p
}

/// MindSpore's Conv3DTranspose bprop: `dx = Conv3D(dout, w)` and `dw =
/// Conv3DBackpropFilter(dout, x, shape of w)`, the convolution from the
/// result to `x` (`out_channel` the transposed one's `in_channel`,
/// `pad_mode="pad"` with its `pad_list`).
fn grad_conv3d_transpose(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let (x, w) = (c.inputs[0], c.inputs[1]);
    let mut attrs: Vec<(&'static str, AttrValue)> = conv3d_attrs(c)
        .into_iter()
        .filter(|(k, _)| !matches!(*k, "out_channel" | "pad_mode" | "pad"))
        .collect();
    let pad_list = conv3t_attrs("Conv3DTranspose", c.attrs)
        .map(|(a, _, _)| transpose_pad_list(&a))
        .unwrap_or([0; 6]);
    attrs.push((
        "out_channel",
        c.attrs
            .get("in_channel")
            .cloned()
            .unwrap_or(AttrValue::Int(1)),
    ));
    attrs.push(("pad_mode", AttrValue::Str("pad".into())));
    attrs.push((
        "pad",
        AttrValue::Tuple(pad_list.iter().map(|&p| AttrValue::Int(p)).collect()),
    ));
    let dx = b.prim("Conv3D", &[c.dout, w], attrs.clone());
    let ws = b.prim("Shape", &[w], vec![]);
    let dw = b.prim("Conv3DBackpropFilter", &[c.dout, x, ws], attrs);
    vec![Some(dx), Some(dw)]
}

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

const CONV3D_BPI_PARAMS: Schema = Schema::ms(
    &[
        Override::attr("pad_mode", AttrType::Str(&["valid", "same", "pad"]), Some(AttrDefault::Str("valid")), why::STRINGS),
        Override::attr("data_format", AttrType::Str(&["NCDHW"]), Some(AttrDefault::Str("NCDHW")), why::STRINGS),
    ],
    &[
        ("filter", "The Conv3D filters, `[out_channel, C/group, kd, kh, kw]`, of `out_backprop`'s dtype."),
        ("out_backprop", "The gradient of a Conv3D result, `[N, out_channel, D_out, H_out, W_out]`, float."),
        ("input_size", "The shape of the Conv3D input, `(N, C, D, H, W)`, the shape of the result: a tuple of ints (`Shape(x)`) or a 1-D integer tensor."),
        ("out_channel", "The output channels of the Conv3D; must equal the first dimension of the filter."),
        ("kernel_size", "The kernel's depth, height and width: an int for all three or `(kd, kh, kw)`."),
        ("mode", "MindSpore's convolution mode; only 1 (the default) exists."),
        ("pad_mode", "\"valid\" (default): no padding; \"same\": output `ceil(D/s)` per dimension, the padding split evenly with the extra cell at the end; \"pad\": pad explicitly by `pad`."),
        ("pad", "Zero padding for pad_mode=\"pad\": an int for all sides, or `(head, tail, top, bottom, left, right)`. Default 0; must be 0 in the other modes."),
        ("stride", "The step of the kernel: an int, `(sd, sh, sw)` or `(1, 1, sd, sh, sw)`. Default 1."),
        ("dilation", "The spacing between kernel cells: an int, `(dd, dh, dw)` or `(1, 1, dd, dh, dw)`. Default 1."),
        ("group", "The number of channel groups; must divide the channel counts. Default 1."),
        ("data_format", "The layout; only \"NCDHW\"."),
    ],
);

const CONV3D_BPF_PARAMS: Schema = Schema::ms(
    &[
        Override::attr("stride", AttrType::Ints, Some(AttrDefault::Int(1)), why::DEFAULT),
        Override::attr("dilation", AttrType::Ints, Some(AttrDefault::Int(1)), why::DEFAULT),
        Override::attr("pad_mode", AttrType::Str(&["valid", "same", "pad"]), Some(AttrDefault::Str("valid")), why::STRINGS),
        Override::attr("data_format", AttrType::Str(&["NCDHW"]), Some(AttrDefault::Str("NCDHW")), why::STRINGS),
    ],
    &[
        ("x", "The Conv3D input, `[N, C, D, H, W]`, float."),
        ("out_backprop", "The gradient of the Conv3D result, `[N, out_channel, D_out, H_out, W_out]`, of `x`'s dtype."),
        ("filter_size", "The shape of the filter, `(out_channel, C/group, kd, kh, kw)`, the shape of the result: a tuple of ints (`Shape(w)`) or a 1-D integer tensor."),
        ("out_channel", "The output channels of the Conv3D; must equal the first dimension of the filter."),
        ("kernel_size", "The kernel's depth, height and width: an int for all three or `(kd, kh, kw)`."),
        ("mode", "MindSpore's convolution mode; only 1 (the default) exists."),
        ("pad_mode", "\"valid\" (default): no padding; \"same\": output `ceil(D/s)` per dimension, the padding split evenly with the extra cell at the end; \"pad\": pad explicitly by `pad`."),
        ("pad", "Zero padding for pad_mode=\"pad\": an int for all sides, or `(head, tail, top, bottom, left, right)`. Default 0; must be 0 in the other modes."),
        ("stride", "The step of the kernel: an int, `(sd, sh, sw)` or `(1, 1, sd, sh, sw)`. Default 1."),
        ("dilation", "The spacing between kernel cells: an int, `(dd, dh, dw)` or `(1, 1, dd, dh, dw)`. Default 1."),
        ("group", "The number of channel groups; must divide the channel counts. Default 1."),
        ("data_format", "The layout; only \"NCDHW\"."),
    ],
);

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
        name: "Conv3DBackpropInput",
        category: Category::Backward,
        doc: "The gradient of a Conv3D with respect to its input (what Conv3D's gradient rule emits, as MindSpore's bprop): the input gradient of the `Conv3D(x, filter)` with `x` of shape `input_size` whose output gradient is `out_backprop` (GEMM and col2im). The attributes describe that Conv3D.",
        schema: CONV3D_BPI_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_conv3d_backprop_input,
        grad: Some(grad_conv3d_backprop_input),
        kernel: Some(kernel_conv3d_backprop_input),
        traits: Traits::NONE,
    },
    OpDef {
        name: "Conv3DBackpropFilter",
        category: Category::Backward,
        doc: "The gradient of a Conv3D with respect to its filter (what Conv3D's and Conv3DTranspose's gradient rules emit, as MindSpore's bprops): for `Conv3D(x, w)` with `w` of shape `filter_size` and output gradient `out_backprop`, the gradient of `w` (im2col and GEMM).",
        schema: CONV3D_BPF_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_conv3d_backprop_filter,
        grad: Some(grad_conv3d_backprop_filter),
        kernel: Some(kernel_conv3d_backprop_filter),
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
    // MindSpore's backward primitives, by the shapes of the Conv3D of `x`
    // by `w` (their gradient rules give second derivatives).
    let sizes = |v: &[usize]| {
        KValue::Tuple(
            v.iter()
                .map(|&d| crate::eager::ints(tensor::DType::I64, &[], &[d as i64]))
                .collect(),
        )
    };
    let bp = |op: &'static str, a: &[usize], dout: &[usize], size: &[usize], seed: u64| {
        Sample::new(
            op,
            vec![
                random_f64(a, seed, -1.0, 1.0),
                random_f64(dout, seed + 1, -1.0, 1.0),
                sizes(size),
            ],
        )
        .attr("out_channel", i(3))
        .attr("kernel_size", t(&[2, 2, 2]))
        .attr("stride", i(2))
    };
    v.push(bp(
        "Conv3DBackpropInput",
        &[3, 2, 2, 2, 2],
        &[1, 3, 2, 1, 2],
        &[1, 2, 4, 3, 4],
        330,
    ));
    v.push(bp(
        "Conv3DBackpropFilter",
        &[1, 2, 4, 3, 4],
        &[1, 3, 2, 1, 2],
        &[3, 2, 2, 2, 2],
        333,
    ));
    v.push(
        bp(
            "Conv3DBackpropInput",
            &[3, 1, 2, 2, 2],
            &[1, 3, 2, 2, 3],
            &[1, 3, 3, 4, 5],
            336,
        )
        .attr("group", i(3))
        .attr("pad_mode", s("same")),
    );
    v.push(
        bp(
            "Conv3DBackpropFilter",
            &[1, 2, 3, 4, 4],
            &[1, 3, 2, 3, 2],
            &[3, 2, 2, 2, 2],
            339,
        )
        .attr("pad_mode", s("pad"))
        .attr("pad", t(&[1, 0, 1, 1, 0, 1])),
    );
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
