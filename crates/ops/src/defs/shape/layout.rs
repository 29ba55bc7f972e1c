//! Block layout primitives of the `shape` family: SpaceToDepth,
//! DepthToSpace, PixelShuffle (with `_PixelShuffleGrad`, its inverse), and
//! SpaceToBatchND, BatchToSpaceND with their 4-D forerunners SpaceToBatch,
//! BatchToSpace. Each is a fixed rearrangement (plus zero padding or
//! cropping), computed as a list of source offsets; each one's gradient is
//! its inverse, as in MindSpore.

use crate::schema::{why, Override, Schema};
use crate::Traits;
use ir::{AbsVal, AttrValue, Dim};

use crate::defs::elementwise::is_float_input;
use crate::defs::shape::pad::{nested_pairs, take_fill, FILL};
use crate::defs::shape::split_stack::{attrs_of, int_tuple, out, Grads};
use crate::defs::shape::{dims_of, fmt_dims, fmt_ints, scatter_add, take, tensor_abs, unranked};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Attrs, Category, GradBuilder, GradCall, OpDef, OpError, OutputDef,
    ParamDef,
};

// ---------------------------------------------------------------------------
// SpaceToDepth, DepthToSpace, PixelShuffle

/// The block size attribute, checked (`min` is 2 for the depth primitives).
fn block_attr(op: &str, attrs: &Attrs, name: &'static str, min: i64) -> Result<usize, OpError> {
    let b = attrs.int(name);
    if b < min {
        return Err(OpError::attr(
            name,
            format!("`{op}`: `{name}` must be at least {min}, got {b}"),
        ));
    }
    Ok(b as usize)
}

/// Checks that dimension `d` (`what`) of known size is divisible by `k`.
fn divisible(op: &str, dims: &[Dim], d: usize, k: i64, what: &str) -> Result<(), OpError> {
    if let Dim::Known(n) = dims[d] {
        if n % k != 0 {
            return Err(OpError::input(
                0,
                format!(
                    "`{op}`: the {what} (dimension {d}, size {n}) of the input {} is not divisible by {k}",
                    fmt_dims(dims)
                ),
            ));
        }
    }
    Ok(())
}

fn div_dim(d: &Dim, k: i64) -> Dim {
    match d {
        Dim::Known(n) => Dim::Known(n / k),
        _ => Dim::Unknown,
    }
}

fn mul_dim(d: &Dim, k: i64) -> Dim {
    match d {
        Dim::Known(n) => Dim::Known(n * k),
        _ if k == 1 => d.clone(),
        _ => Dim::Unknown,
    }
}

fn infer_depth(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let b = block_attr(op, call.attrs, "block_size", 2)? as i64;
    let (dtype, dims) = dims_of(call, 0)?;
    let Some(dims) = dims else {
        return Ok(tensor_abs(dtype, vec![Dim::Unknown; 4]));
    };
    if dims.len() != 4 {
        return Err(OpError::input(
            0,
            format!("`{op}` needs a 4-D input (NCHW), got {}", fmt_dims(&dims)),
        ));
    }
    let out = if op == "SpaceToDepth" {
        divisible(op, &dims, 2, b, "height")?;
        divisible(op, &dims, 3, b, "width")?;
        vec![
            dims[0].clone(),
            mul_dim(&dims[1], b * b),
            div_dim(&dims[2], b),
            div_dim(&dims[3], b),
        ]
    } else {
        divisible(op, &dims, 1, b * b, "channel count")?;
        vec![
            dims[0].clone(),
            div_dim(&dims[1], b * b),
            mul_dim(&dims[2], b),
            mul_dim(&dims[3], b),
        ]
    };
    Ok(tensor_abs(dtype, out))
}

/// The result shape of SpaceToDepth (`to_depth`) or DepthToSpace of `shape`
/// and the source offset of each result element.
fn depth_offsets(
    op: &str,
    shape: &[usize],
    b: usize,
    to_depth: bool,
) -> Result<(Vec<usize>, Vec<usize>), OpError> {
    if shape.len() != 4 {
        return Err(OpError::input(0, format!("`{op}` needs a 4-D input")));
    }
    let (n, c, h, w) = (shape[0], shape[1], shape[2], shape[3]);
    let mut offsets = Vec::with_capacity(n * c * h * w);
    if to_depth {
        if h % b != 0 || w % b != 0 {
            return Err(OpError::input(
                0,
                format!("`{op}`: height and width {h}, {w} must be divisible by {b}"),
            ));
        }
        let (oh, ow) = (h / b, w / b);
        for i in 0..n {
            for oc in 0..c * b * b {
                let (blk, ch) = (oc / c, oc % c);
                let (bh, bw) = (blk / b, blk % b);
                for y in 0..oh {
                    for x in 0..ow {
                        offsets.push(((i * c + ch) * h + y * b + bh) * w + x * b + bw);
                    }
                }
            }
        }
        Ok((vec![n, c * b * b, oh, ow], offsets))
    } else {
        if c % (b * b) != 0 {
            return Err(OpError::input(
                0,
                format!(
                    "`{op}`: the channel count {c} must be divisible by {}",
                    b * b
                ),
            ));
        }
        let oc = c / (b * b);
        for i in 0..n {
            for ch in 0..oc {
                for y in 0..h * b {
                    for x in 0..w * b {
                        let src_c = ((y % b) * b + x % b) * oc + ch;
                        offsets.push(((i * c + src_c) * h + y / b) * w + x / b);
                    }
                }
            }
        }
        Ok((vec![n, oc, h * b, w * b], offsets))
    }
}

fn kernel_depth(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let b = block_attr(op, c.attrs, "block_size", 2)?;
    let (shape, offsets) = depth_offsets(op, x.shape(), b, op == "SpaceToDepth")?;
    out(take(x, shape, &offsets))
}

fn infer_pixel_shuffle(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let r = block_attr(op, call.attrs, "upscale_factor", 1)? as i64;
    let (dtype, dims) = dims_of(call, 0)?;
    let Some(mut dims) = dims else {
        return Ok(unranked(dtype));
    };
    let k = dims.len();
    if k < 3 {
        return Err(OpError::input(
            0,
            format!(
                "`{op}` needs an input of rank at least 3, (*, C, H, W), got {}",
                fmt_dims(&dims)
            ),
        ));
    }
    if op == "PixelShuffle" {
        divisible(op, &dims, k - 3, r * r, "channel count")?;
        dims[k - 3] = div_dim(&dims[k - 3], r * r);
        dims[k - 2] = mul_dim(&dims[k - 2], r);
        dims[k - 1] = mul_dim(&dims[k - 1], r);
    } else {
        divisible(op, &dims, k - 2, r, "height")?;
        divisible(op, &dims, k - 1, r, "width")?;
        dims[k - 3] = mul_dim(&dims[k - 3], r * r);
        dims[k - 2] = div_dim(&dims[k - 2], r);
        dims[k - 1] = div_dim(&dims[k - 1], r);
    }
    Ok(tensor_abs(dtype, dims))
}

/// The result shape of PixelShuffle of `shape` by `r` and the source offset of
/// each result element: `out[..., c, h·r+i, w·r+j] = x[..., c·r²+i·r+j, h, w]`.
fn shuffle_offsets(shape: &[usize], r: usize) -> Result<(Vec<usize>, Vec<usize>), OpError> {
    let k = shape.len();
    if k < 3 {
        return Err(OpError::input(0, "`PixelShuffle` needs rank at least 3"));
    }
    let (c, h, w) = (shape[k - 3], shape[k - 2], shape[k - 1]);
    if c % (r * r) != 0 {
        return Err(OpError::input(
            0,
            format!(
                "`PixelShuffle`: the channel count {c} must be divisible by {}",
                r * r
            ),
        ));
    }
    let batch: usize = shape[..k - 3].iter().product();
    let oc = c / (r * r);
    let mut offsets = Vec::with_capacity(batch * c * h * w);
    for n in 0..batch {
        for ch in 0..oc {
            for y in 0..h * r {
                for x in 0..w * r {
                    let src_c = ch * r * r + (y % r) * r + x % r;
                    offsets.push(((n * c + src_c) * h + y / r) * w + x / r);
                }
            }
        }
    }
    let mut out_shape = shape.to_vec();
    out_shape[k - 3] = oc;
    out_shape[k - 2] = h * r;
    out_shape[k - 1] = w * r;
    Ok((out_shape, offsets))
}

fn kernel_pixel_shuffle(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let r = block_attr("PixelShuffle", c.attrs, "upscale_factor", 1)?;
    let (shape, offsets) = shuffle_offsets(x.shape(), r)?;
    out(take(x, shape, &offsets))
}

/// The inverse of PixelShuffle (its gradient): a permutation, so the shuffle's
/// offsets scattered.
fn kernel_pixel_unshuffle(c: &KernelCall) -> Result<KValue, OpError> {
    let g = c.tensor(0)?;
    let r = block_attr("_PixelShuffleGrad", c.attrs, "upscale_factor", 1)?;
    let s = g.shape();
    let k = s.len();
    if k < 3 || s[k - 2] % r != 0 || s[k - 1] % r != 0 {
        return Err(OpError::input(
            0,
            format!("`_PixelShuffleGrad`: a gradient of shape {s:?} does not unshuffle by {r}"),
        ));
    }
    let mut like = s.to_vec();
    like[k - 3] *= r * r;
    like[k - 2] /= r;
    like[k - 1] /= r;
    let (_, offsets) = shuffle_offsets(&like, r)?;
    out(scatter_add(g, like, &offsets))
}

// ---------------------------------------------------------------------------
// SpaceToBatchND, BatchToSpaceND, SpaceToBatch, BatchToSpace

/// The attribute names of a block primitive: (block, paddings or crops).
fn block_names(op: &str) -> (&'static str, &'static str) {
    match op {
        "SpaceToBatchND" => ("block_shape", "paddings"),
        "BatchToSpaceND" => ("block_shape", "crops"),
        "SpaceToBatch" => ("block_size", "paddings"),
        _ => ("block_size", "crops"),
    }
}

/// The block shape and the `(before, after)` padding (or crop) of each
/// spatial dimension (the last `M`).
type BlockPlan = (Vec<usize>, Vec<(i64, i64)>);

/// A block primitive's [`BlockPlan`], checked.
fn block_plan(op: &str, attrs: &Attrs) -> Result<BlockPlan, OpError> {
    let (bname, pname) = block_names(op);
    let nested = nested_pairs(attrs, pname);
    if nested.is_empty()
        || nested
            .iter()
            .any(|p| p.len() != 2 || p.iter().any(|&v| v < 0))
    {
        return Err(OpError::attr(
            pname,
            format!("`{op}`: `{pname}` must be one (before, after) pair of non-negative ints per spatial dimension"),
        ));
    }
    let old = !op.ends_with("ND");
    if old && nested.len() != 2 {
        return Err(OpError::attr(
            pname,
            format!("`{op}`: `{pname}` must have two pairs, for height and width"),
        ));
    }
    let mut block = attrs.ints(bname).unwrap_or_default();
    if block.len() == 1 && nested.len() > 1 {
        block = vec![block[0]; nested.len()];
    }
    let min = if old { 2 } else { 1 };
    if block.len() != nested.len() || block.iter().any(|&b| b < min) {
        return Err(OpError::attr(
            bname,
            format!(
                "`{op}`: `{bname}` {} needs one size >= {min} per pair of `{pname}` ({} pairs)",
                fmt_ints(&block),
                nested.len()
            ),
        ));
    }
    Ok((
        block.into_iter().map(|b| b as usize).collect(),
        nested.iter().map(|p| (p[0], p[1])).collect(),
    ))
}

fn to_batch(op: &str) -> bool {
    op.starts_with("SpaceToBatch")
}

fn infer_batch_space(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (block, pads) = block_plan(op, call.attrs)?;
    let (dtype, dims) = dims_of(call, 0)?;
    let m = block.len();
    let Some(mut dims) = dims else {
        return Ok(unranked(dtype));
    };
    let old = !op.ends_with("ND");
    if (old && dims.len() != 4) || dims.len() < m + 1 {
        return Err(OpError::input(
            0,
            format!(
                "`{op}` needs an input of rank {} with its {m} spatial dimensions last, got {}",
                if old {
                    "4".to_string()
                } else {
                    format!("at least {}", m + 1)
                },
                fmt_dims(&dims)
            ),
        ));
    }
    let prod: i64 = block.iter().map(|&b| b as i64).product();
    let offset = dims.len() - m;
    if to_batch(op) {
        dims[0] = mul_dim(&dims[0], prod);
        for i in 0..m {
            let (b, (pb, pe)) = (block[i] as i64, pads[i]);
            dims[offset + i] = match dims[offset + i] {
                Dim::Known(n) if (n + pb + pe) % b != 0 => {
                    return Err(OpError::attr(
                        "paddings",
                        format!(
                            "`{op}`: dimension {} of size {n} padded by ({pb}, {pe}) is not divisible by the block size {b}",
                            offset + i
                        ),
                    ))
                }
                Dim::Known(n) => Dim::Known((n + pb + pe) / b),
                _ => Dim::Unknown,
            };
        }
    } else {
        divisible(op, &dims, 0, prod, "batch size")?;
        dims[0] = div_dim(&dims[0], prod);
        for i in 0..m {
            let (b, (cb, ce)) = (block[i] as i64, pads[i]);
            dims[offset + i] = match dims[offset + i] {
                Dim::Known(n) if n * b - cb - ce < 0 => {
                    return Err(OpError::attr(
                        "crops",
                        format!(
                        "`{op}`: crops ({cb}, {ce}) exceed dimension {} of the result ({n} × {b})",
                        offset + i
                    ),
                    ))
                }
                Dim::Known(n) => Dim::Known(n * b - cb - ce),
                _ => Dim::Unknown,
            };
        }
    }
    Ok(tensor_abs(dtype, dims))
}

/// Row-major coordinates of `k` in a box of `sizes`.
fn unravel(mut k: usize, sizes: &[usize]) -> Vec<usize> {
    let mut out = vec![0; sizes.len()];
    for i in (0..sizes.len()).rev() {
        out[i] = k % sizes[i];
        k /= sizes[i];
    }
    out
}

fn ravel(coords: &[usize], sizes: &[usize]) -> usize {
    coords
        .iter()
        .zip(sizes)
        .fold(0, |acc, (&c, &s)| acc * s + c)
}

/// The result shape of a block primitive on `shape` and the source offset of
/// each result element ([`FILL`] for padding).
fn batch_space_offsets(
    op: &str,
    shape: &[usize],
    attrs: &Attrs,
) -> Result<(Vec<usize>, Vec<usize>), OpError> {
    let (block, pads) = block_plan(op, attrs)?;
    let m = block.len();
    let old = !op.ends_with("ND");
    if (old && shape.len() != 4) || shape.len() < m + 1 {
        return Err(OpError::input(
            0,
            format!("`{op}`: the input of shape {shape:?} has too few dimensions"),
        ));
    }
    let offset = shape.len() - m;
    let prod: usize = block.iter().product();
    let mid: usize = shape[1..offset].iter().product();
    let spatial_in = &shape[offset..];
    let n_in = shape[0];
    let mut out_shape = shape.to_vec();
    let mut offsets = Vec::new();
    if to_batch(op) {
        let mut spatial_out = Vec::with_capacity(m);
        for i in 0..m {
            let padded = spatial_in[i] as i64 + pads[i].0 + pads[i].1;
            if padded % block[i] as i64 != 0 {
                return Err(OpError::attr(
                    "paddings",
                    format!(
                        "`{op}`: padded size {padded} is not divisible by {}",
                        block[i]
                    ),
                ));
            }
            spatial_out.push(padded as usize / block[i]);
        }
        out_shape[0] = n_in * prod;
        out_shape[offset..].copy_from_slice(&spatial_out);
        let inner: usize = spatial_out.iter().product();
        let in_inner: usize = spatial_in.iter().product();
        offsets.reserve(out_shape.iter().product());
        for b_out in 0..n_in * prod {
            let (n, k) = (b_out % n_in, unravel(b_out / n_in, &block));
            for c in 0..mid {
                for o in 0..inner {
                    let o = unravel(o, &spatial_out);
                    let mut src = Vec::with_capacity(m);
                    for i in 0..m {
                        let u = (o[i] * block[i] + k[i]) as i64 - pads[i].0;
                        if u < 0 || u >= spatial_in[i] as i64 {
                            break;
                        }
                        src.push(u as usize);
                    }
                    offsets.push(if src.len() == m {
                        (n * mid + c) * in_inner + ravel(&src, spatial_in)
                    } else {
                        FILL
                    });
                }
            }
        }
    } else {
        if !n_in.is_multiple_of(prod) {
            return Err(OpError::input(
                0,
                format!("`{op}`: the batch size {n_in} is not divisible by {prod}"),
            ));
        }
        let n_out = n_in / prod;
        let mut spatial_out = Vec::with_capacity(m);
        for i in 0..m {
            let size = (spatial_in[i] * block[i]) as i64 - pads[i].0 - pads[i].1;
            if size < 0 {
                return Err(OpError::attr(
                    "crops",
                    format!("`{op}`: the crops exceed dimension {}", offset + i),
                ));
            }
            spatial_out.push(size as usize);
        }
        out_shape[0] = n_out;
        out_shape[offset..].copy_from_slice(&spatial_out);
        let inner: usize = spatial_out.iter().product();
        let in_inner: usize = spatial_in.iter().product();
        offsets.reserve(out_shape.iter().product());
        for n in 0..n_out {
            for c in 0..mid {
                for y in 0..inner {
                    let y = unravel(y, &spatial_out);
                    let mut k = Vec::with_capacity(m);
                    let mut o = Vec::with_capacity(m);
                    for i in 0..m {
                        let u = y[i] + pads[i].0 as usize;
                        k.push(u % block[i]);
                        o.push(u / block[i]);
                    }
                    let b_in = ravel(&k, &block) * n_out + n;
                    offsets.push((b_in * mid + c) * in_inner + ravel(&o, spatial_in));
                }
            }
        }
    }
    Ok((out_shape, offsets))
}

fn kernel_batch_space(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let (shape, offsets) = batch_space_offsets(op, x.shape(), c.attrs)?;
    out(take_fill(x, shape, &offsets, 0.0))
}

/// The gradient of a block primitive: its inverse with the same block and
/// the paddings as crops (or the crops as paddings).
fn grad_batch_space(b: &mut dyn GradBuilder, c: &GradCall, inverse: &str) -> Grads {
    if !is_float_input(c, 0) {
        return vec![None];
    }
    let (bname, pname) = block_names(inverse);
    let block = c
        .attrs
        .iter()
        .find(|(k, _)| k.starts_with("block"))
        .map(|(_, v)| v.clone());
    let pads = c
        .attrs
        .iter()
        .find(|(k, _)| *k == "paddings" || *k == "crops")
        .map(|(_, v)| v.clone());
    let (Some(block), Some(pads)) = (block, pads) else {
        return vec![None];
    };
    vec![Some(b.prim(
        inverse,
        &[c.dout],
        vec![(bname, block), (pname, pads)],
    ))]
}

// ---------------------------------------------------------------------------
// The table.

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "SpaceToDepth",
        category: Category::Shape,
        doc: "Moves `block_size × block_size` blocks of the height and width of an NCHW `x` into channels: `out[n, (bh·b + bw)·C + c, h, w] = x[n, c, h·b + bh, w·b + bw]`; height and width must be divisible by `block_size`.",
        schema: Schema::ms(
            &[
                Override::attr("data_format", AttrType::Str(&["NCHW"]), Some(AttrDefault::Str("NCHW")), why::STRINGS),
            ],
            &[
                ("x", "A 4-D NCHW tensor."),
                ("block_size", "The block size, at least 2."),
                ("data_format", "The layout; MindSpore supports NCHW only."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_depth,
        grad: Some(|b, c| {
            if !is_float_input(c, 0) {
                return vec![None];
            }
            vec![Some(b.prim("DepthToSpace", &[c.dout], attrs_of(c)))]
        }),
        kernel: Some(|c| kernel_depth(c, "SpaceToDepth")),
        traits: Traits::NONE,
    },
    OpDef {
        name: "DepthToSpace",
        category: Category::Shape,
        doc: "Moves channels of an NCHW `x` into `block_size × block_size` blocks of the height and width (the inverse of SpaceToDepth): `out[n, c, h, w] = x[n, ((h mod b)·b + w mod b)·C' + c, h / b, w / b]`; the channel count must be divisible by `block_size²`.",
        schema: Schema::ms(
            &[
                Override::attr("data_format", AttrType::Str(&["NCHW"]), Some(AttrDefault::Str("NCHW")), why::STRINGS),
            ],
            &[
                ("x", "A 4-D NCHW tensor."),
                ("block_size", "The block size, at least 2."),
                ("data_format", "The layout; MindSpore supports NCHW only."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_depth,
        grad: Some(|b, c| {
            if !is_float_input(c, 0) {
                return vec![None];
            }
            vec![Some(b.prim("SpaceToDepth", &[c.dout], attrs_of(c)))]
        }),
        kernel: Some(|c| kernel_depth(c, "DepthToSpace")),
        traits: Traits::NONE,
    },
    OpDef {
        name: "PixelShuffle",
        category: Category::Shape,
        doc: "Rearranges `(*, C·r², H, W)` into `(*, C, H·r, W·r)`: `out[..., c, h·r + i, w·r + j] = input[..., c·r² + i·r + j, h, w]` with `r = upscale_factor`.",
        schema: Schema::ms(
            &[],
            &[
                ("input", "A tensor of rank at least 3, `(*, C·r², H, W)`."),
                ("upscale_factor", "The factor `r` by which height and width grow, positive."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_pixel_shuffle,
        grad: Some(|b, c| {
            if !is_float_input(c, 0) {
                return vec![None];
            }
            vec![Some(b.prim("_PixelShuffleGrad", &[c.dout], attrs_of(c)))]
        }),
        kernel: Some(kernel_pixel_shuffle),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_PixelShuffleGrad",
        category: Category::Internal,
        doc: "The gradient of PixelShuffle: the inverse rearrangement, `(*, C, H·r, W·r)` back to `(*, C·r², H, W)`.",
        schema: Schema::own(&[
            ParamDef::input("grad", "The gradient of the PixelShuffle result."),
            ParamDef::attr("upscale_factor", AttrType::Int, None, "PixelShuffle's upscale_factor."),
        ]),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_pixel_shuffle,
        grad: Some(|b, c| vec![Some(b.prim("PixelShuffle", &[c.dout], attrs_of(c)))]),
        kernel: Some(kernel_pixel_unshuffle),
        traits: Traits::NONE,
    },
    OpDef {
        name: "SpaceToBatchND",
        category: Category::Shape,
        doc: "Zero-pads the last M (spatial) dimensions of `input_x` by `paddings` and splits them into blocks of `block_shape`, moving the position within the block into the batch: result batch `(k·N + n)` for block position `k` (row-major) and batch `n`; each spatial size becomes `(size + before + after) / block`.",
        schema: Schema::ms(
            &[Override::attr("paddings", AttrType::IntTuples, None, why::TYPE)],
            &[
                ("input_x", "The tensor, `(N, ..., spatial dims)`, its last M dimensions spatial."),
                ("block_shape", "The block size per spatial dimension, each >= 1 (an int for all)."),
                ("paddings", "One `(before, after)` pair of non-negative ints per spatial dimension; padded sizes must be divisible by the block."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_batch_space,
        grad: Some(|b, c| grad_batch_space(b, c, "BatchToSpaceND")),
        kernel: Some(|c| kernel_batch_space(c, "SpaceToBatchND")),
        traits: Traits::NONE,
    },
    OpDef {
        name: "BatchToSpaceND",
        category: Category::Shape,
        doc: "The inverse of SpaceToBatchND: moves blocks of the batch back into the last M (spatial) dimensions (batch `k·N' + n` fills block position `k` of batch `n`), then crops each spatial dimension by `crops`.",
        schema: Schema::own(&[
            ParamDef::input("input_x", "The tensor, `(N'·prod(block_shape), ..., spatial dims)`."),
            ParamDef::attr("block_shape", AttrType::Ints, None, "The block size per spatial dimension, each >= 1 (an int for all)."),
            ParamDef::attr("crops", AttrType::IntTuples, None, "One `(before, after)` pair of non-negative ints per spatial dimension, cropped from the result."),
        ]),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_batch_space,
        grad: Some(|b, c| grad_batch_space(b, c, "SpaceToBatchND")),
        kernel: Some(|c| kernel_batch_space(c, "BatchToSpaceND")),
        traits: Traits::NONE,
    },
    OpDef {
        name: "SpaceToBatch",
        category: Category::Shape,
        doc: "SpaceToBatchND of a 4-D NCHW `input_x` with the square block `block_size` (deprecated in MindSpore, which has no CPU kernel for it).",
        schema: Schema::ms(
            &[Override::attr("paddings", AttrType::IntTuples, None, why::TYPE)],
            &[
                ("input_x", "A 4-D NCHW tensor."),
                ("block_size", "The block size of height and width, at least 2."),
                ("paddings", "`((top, bottom), (left, right))`, non-negative; padded sizes must be divisible by `block_size`."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_batch_space,
        grad: Some(|b, c| grad_batch_space(b, c, "BatchToSpace")),
        kernel: Some(|c| kernel_batch_space(c, "SpaceToBatch")),
        traits: Traits::NONE,
    },
    OpDef {
        name: "BatchToSpace",
        category: Category::Shape,
        doc: "BatchToSpaceND of a 4-D NCHW `input_x` with the square block `block_size` (deprecated in MindSpore, which has no CPU kernel for it).",
        schema: Schema::ms(
            &[Override::attr("crops", AttrType::IntTuples, None, why::TYPE)],
            &[
                ("input_x", "A 4-D NCHW tensor whose batch is divisible by `block_size²`."),
                ("block_size", "The block size of height and width, at least 2."),
                ("crops", "`((top, bottom), (left, right))`, non-negative, cropped from the result."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_batch_space,
        grad: Some(|b, c| grad_batch_space(b, c, "SpaceToBatch")),
        kernel: Some(|c| kernel_batch_space(c, "BatchToSpace")),
        traits: Traits::NONE,
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let t = int_tuple;
    let i = AttrValue::Int;
    let pairs = |v: &[(i64, i64)]| AttrValue::Tuple(v.iter().map(|&(a, b)| t(&[a, b])).collect());
    let r = random_f64;
    vec![
        Sample::new("SpaceToDepth", vec![r(&[2, 2, 4, 6], 317, -1.0, 1.0)])
            .attr("block_size", i(2)),
        Sample::new("DepthToSpace", vec![r(&[1, 8, 2, 3], 318, -1.0, 1.0)])
            .attr("block_size", i(2)),
        Sample::new("PixelShuffle", vec![r(&[2, 9, 2, 1], 319, -1.0, 1.0)])
            .attr("upscale_factor", i(3)),
        Sample::new("_PixelShuffleGrad", vec![r(&[2, 1, 4, 2], 320, -1.0, 1.0)])
            .attr("upscale_factor", i(2)),
        Sample::new("SpaceToBatchND", vec![r(&[2, 1, 3, 2], 321, -1.0, 1.0)])
            .attr("block_shape", t(&[2, 2]))
            .attr("paddings", pairs(&[(1, 0), (0, 2)])),
        Sample::new("SpaceToBatchND", vec![r(&[2, 3, 2], 322, -1.0, 1.0)])
            .attr("block_shape", i(2))
            .attr("paddings", pairs(&[(0, 2)])),
        Sample::new("BatchToSpaceND", vec![r(&[8, 1, 2, 2], 323, -1.0, 1.0)])
            .attr("block_shape", t(&[2, 2]))
            .attr("crops", pairs(&[(1, 0), (0, 2)])),
        Sample::new("SpaceToBatch", vec![r(&[1, 2, 2, 4], 324, -1.0, 1.0)])
            .attr("block_size", i(2))
            .attr("paddings", pairs(&[(1, 1), (0, 0)])),
        Sample::new("BatchToSpace", vec![r(&[4, 1, 2, 3], 325, -1.0, 1.0)])
            .attr("block_size", i(2))
            .attr("crops", pairs(&[(0, 1), (1, 1)])),
    ]
}
