//! Padding (Pad, PadV3, ConstantPadND, MirrorPad, ReflectionPad1D/2D/3D,
//! ReplicationPad1D/2D/3D). The block layout primitives are in
//! `shape::layout`.
//!
//! Every padding is one map from result positions to source positions (or to
//! the constant): per dimension, position `j` of the result reads position
//! `j - before` of the input when it lies inside, and otherwise, by mode,
//! nothing (`constant`), its mirror image without the edge (`reflect`:
//! `[3 2 | 1 2 3 | 2 1]`), with it (`symmetric`: `[2 1 | 1 2 3 | 3 2]`), the
//! edge (`edge`) or the position modulo the size (`circular`). A negative
//! constant padding crops. The gradient of a padding adds the sensitivity
//! back through the same map (so reflected positions receive the sum of their
//! images): MindSpore's backward primitive of each mirrored or edge padding
//! (`MirrorPadGrad`, `PadV3Grad`, `ReflectionPad*Grad`, `ReplicationPad*Grad`,
//! in `backward::pad`), `_PadGrad` for the constant ones; the gradient of
//! `_PadGrad` is the zero padding `_Pad`, and the other way round.
//!
//! The paddings of `_Pad`/`_PadGrad`, like PadV3's and ConstantPadND's, are a
//! flat tuple that starts at the last dimension: `(before, after)` of the last
//! dimension, then of the one before, and so on (PyTorch's order); `Pad` and
//! `MirrorPad` list one `(before, after)` pair per dimension from the first.
//!
//! MindSpore's CPU backend has kernels for Pad, PadV3 and MirrorPad only; the
//! others are checked against PadV3 with the same paddings and mode.

use crate::schema::{why, Override, Schema};
use crate::Gradgen;
use crate::Traits;
use ir::{AbsVal, AttrValue, DType, Dim};
use tensor::{Buffer, Tensor};

use crate::defs::elementwise::is_float_input;
use crate::defs::shape::split_stack::{attrs_of, int_tuple, like, out, Grads};
use crate::defs::shape::{dims_of, fmt_ints, row_strides, scatter_add, take, tensor_abs, unranked};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Attrs, Category, GradBuilder, GradCall, OpDef, OpError, OutputDef,
    ParamDef,
};

// ---------------------------------------------------------------------------
// The padding map.

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Mode {
    Constant,
    Reflect,
    Symmetric,
    Edge,
    Circular,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Constant => "constant",
            Mode::Reflect => "reflect",
            Mode::Symmetric => "symmetric",
            Mode::Edge => "edge",
            Mode::Circular => "circular",
        }
    }

    fn parse(s: &str) -> Mode {
        match s.to_ascii_lowercase().as_str() {
            "reflect" => Mode::Reflect,
            "symmetric" => Mode::Symmetric,
            "edge" => Mode::Edge,
            "circular" => Mode::Circular,
            _ => Mode::Constant,
        }
    }
}

/// A result position that reads the constant.
pub(crate) const FILL: usize = usize::MAX;

/// The source position of result position `j` of a dimension of size `n`
/// padded with `before` positions.
fn source(j: i64, n: i64, before: i64, mode: Mode) -> Option<i64> {
    let i = j - before;
    if (0..n).contains(&i) {
        return Some(i);
    }
    if n == 0 {
        return None;
    }
    match mode {
        Mode::Constant => None,
        Mode::Reflect if n == 1 => Some(0),
        Mode::Reflect => {
            let p = 2 * (n - 1);
            let k = i.rem_euclid(p);
            Some(if k >= n { p - k } else { k })
        }
        Mode::Symmetric => {
            let p = 2 * n;
            let k = i.rem_euclid(p);
            Some(if k >= n { p - 1 - k } else { k })
        }
        Mode::Edge => Some(i.clamp(0, n - 1)),
        Mode::Circular => Some(i.rem_euclid(n)),
    }
}

/// `(before, after)` per dimension, from the first, of flat paddings in
/// PyTorch's order (the last dimension first) for a tensor of `rank`.
fn pairs_from_flat(flat: &[i64], rank: usize) -> Vec<(i64, i64)> {
    let mut pairs = vec![(0, 0); rank];
    for (k, p) in flat.chunks(2).enumerate() {
        if k < rank {
            pairs[rank - 1 - k] = (p[0], p.get(1).copied().unwrap_or(0));
        }
    }
    pairs
}

/// Flat paddings in PyTorch's order from `(before, after)` pairs listed from
/// the first dimension.
fn flat_from_pairs(pairs: &[(i64, i64)]) -> Vec<i64> {
    pairs.iter().rev().flat_map(|&(b, e)| [b, e]).collect()
}

/// Checks the sizes a padding needs of a dimension of (known) size `n`.
fn check_dim(
    op: &str,
    attr: &'static str,
    d: usize,
    n: i64,
    (b, e): (i64, i64),
    mode: Mode,
) -> Result<(), OpError> {
    let bad = |why: String| {
        Err(OpError::attr(
            attr,
            format!("`{op}`: padding ({b}, {e}) of dimension {d} (size {n}) {why}"),
        ))
    };
    match mode {
        Mode::Constant if n + b + e < 0 => return bad("crops more than the dimension holds".into()),
        Mode::Reflect if b >= n || e >= n => {
            return bad("must be smaller than the dimension in reflect mode".into())
        }
        Mode::Symmetric | Mode::Circular if b > n || e > n => {
            return bad(format!(
                "must not exceed the dimension in {} mode",
                mode.name()
            ))
        }
        Mode::Edge if n == 0 && (b > 0 || e > 0) => return bad("has no edge to repeat".into()),
        _ => {}
    }
    Ok(())
}

/// The result shape of padding `shape` and each result element's source
/// offset ([`FILL`] for the constant).
pub(crate) fn pad_map(
    op: &str,
    attr: &'static str,
    shape: &[usize],
    pairs: &[(i64, i64)],
    mode: Mode,
) -> Result<(Vec<usize>, Vec<usize>), OpError> {
    let strides = row_strides(shape);
    let mut out_shape = Vec::with_capacity(shape.len());
    let mut per_dim = Vec::with_capacity(shape.len());
    for (d, (&n, &(b, e))) in shape.iter().zip(pairs).enumerate() {
        let n = n as i64;
        check_dim(op, attr, d, n, (b, e), mode)?;
        let m = (n + b + e).max(0);
        out_shape.push(m as usize);
        per_dim.push(
            (0..m)
                .map(|j| source(j, n, b, mode).map_or(FILL, |i| i as usize * strides[d]))
                .collect::<Vec<_>>(),
        );
    }
    // The cartesian sum, with FILL absorbing.
    let mut acc = vec![0usize];
    for offsets in &per_dim {
        let mut next = Vec::with_capacity(acc.len() * offsets.len());
        for &base in &acc {
            next.extend(offsets.iter().map(|&o| {
                if base == FILL || o == FILL {
                    FILL
                } else {
                    base + o
                }
            }));
        }
        acc = next;
    }
    Ok((out_shape, acc))
}

/// The elements of `t` at `offsets`, `fill` (converted as `Cast` would) at
/// [`FILL`].
pub(crate) fn take_fill(t: &Tensor, shape: Vec<usize>, offsets: &[usize], fill: f64) -> Tensor {
    fn pick<T: Copy>(v: &[T], offsets: &[usize], fill: T) -> Vec<T> {
        offsets
            .iter()
            .map(|&o| if o == FILL { fill } else { v[o] })
            .collect()
    }
    let buffer = match t.buffer() {
        Buffer::F32(v) => Buffer::F32(pick(v, offsets, fill as f32)),
        Buffer::F64(v) => Buffer::F64(pick(v, offsets, fill)),
        Buffer::I64(v) => Buffer::I64(pick(v, offsets, fill as i64)),
        Buffer::Bool(v) => Buffer::Bool(pick(v, offsets, fill != 0.0)),
    };
    Tensor::new(t.dtype(), shape, buffer).expect("one offset per element")
}

/// Zeros of `shape` with `g`'s elements added at their offsets (those at
/// [`FILL`] dropped): the adjoint of [`take_fill`].
pub(crate) fn scatter_fill(g: &Tensor, shape: Vec<usize>, offsets: &[usize]) -> Tensor {
    let kept: Vec<usize> = (0..offsets.len()).filter(|&k| offsets[k] != FILL).collect();
    if kept.len() == offsets.len() {
        return scatter_add(g, shape, offsets);
    }
    let src = take(g, vec![kept.len()], &kept);
    let to: Vec<usize> = kept.iter().map(|&k| offsets[k]).collect();
    scatter_add(&src, shape, &to)
}

// ---------------------------------------------------------------------------
// What each padding primitive pads.

/// A nested `((before, after), ...)` attribute.
pub(crate) fn nested_pairs(attrs: &Attrs, name: &str) -> Vec<Vec<i64>> {
    match attrs.get(name) {
        Some(AttrValue::Tuple(items)) => items
            .iter()
            .map(|i| i.as_ints().unwrap_or_default())
            .collect(),
        _ => Vec::new(),
    }
}

/// The padding a primitive applies: flat paddings in PyTorch's order, the
/// mode, and the ranks it accepts (checked against the input when known).
struct Plan {
    flat: Vec<i64>,
    mode: Mode,
    /// The attribute the paddings come from (for errors).
    attr: &'static str,
}

fn plan(op: &str, attrs: &Attrs) -> Result<Plan, OpError> {
    let flat_attr = |name: &'static str| attrs.ints(name).unwrap_or_default();
    let even = |name: &'static str, flat: &[i64]| -> Result<(), OpError> {
        if !flat.len().is_multiple_of(2) {
            return Err(OpError::attr(
                name,
                format!(
                    "`{op}`: `{name}` {} must have an even number of entries, (before, after) per dimension",
                    fmt_ints(flat)
                ),
            ));
        }
        Ok(())
    };
    let non_negative = |name: &'static str, flat: &[i64]| -> Result<(), OpError> {
        if let Some(&p) = flat.iter().find(|&&p| p < 0) {
            return Err(OpError::attr(
                name,
                format!(
                    "`{op}`: `{name}` {} has the negative entry {p}",
                    fmt_ints(flat)
                ),
            ));
        }
        Ok(())
    };
    match op {
        "Pad" | "MirrorPad" => {
            let nested = nested_pairs(attrs, "paddings");
            if let Some(p) = nested.iter().find(|p| p.len() != 2) {
                return Err(OpError::attr(
                    "paddings",
                    format!(
                        "`{op}`: each entry of `paddings` must be a pair (before, after), got {}",
                        fmt_ints(p)
                    ),
                ));
            }
            let pairs: Vec<(i64, i64)> = nested.iter().map(|p| (p[0], p[1])).collect();
            let flat = flat_from_pairs(&pairs);
            non_negative("paddings", &flat)?;
            let mode = if op == "Pad" {
                Mode::Constant
            } else if attrs.str("mode") == "SYMMETRIC" {
                Mode::Symmetric
            } else {
                Mode::Reflect
            };
            Ok(Plan {
                flat,
                mode,
                attr: "paddings",
            })
        }
        "PadV3" => {
            let p = flat_attr("paddings");
            even("paddings", &p)?;
            let flat = if attrs.bool("paddings_contiguous") {
                p
            } else {
                let k = p.len() / 2;
                (0..k).flat_map(|i| [p[i], p[i + k]]).collect()
            };
            let mode = Mode::parse(attrs.str("mode"));
            if mode != Mode::Constant {
                non_negative("paddings", &flat)?;
                if !matches!(flat.len(), 2 | 4 | 6) {
                    return Err(OpError::attr(
                        "paddings",
                        format!(
                            "`PadV3` in {} mode pads 1, 2 or 3 dimensions: `paddings` needs 2, 4 or 6 entries, got {}",
                            mode.name(),
                            flat.len()
                        ),
                    ));
                }
                if mode == Mode::Reflect && flat.len() == 6 {
                    return Err(OpError::attr(
                        "paddings",
                        "`PadV3` in reflect mode pads at most 2 dimensions (inputs of rank 3 or 4)",
                    ));
                }
            }
            Ok(Plan {
                flat,
                mode,
                attr: "paddings",
            })
        }
        "ConstantPadND" => {
            let flat = flat_attr("padding");
            even("padding", &flat)?;
            Ok(Plan {
                flat,
                mode: Mode::Constant,
                attr: "padding",
            })
        }
        "_Pad" | "_PadGrad" => {
            let flat = flat_attr("paddings");
            even("paddings", &flat)?;
            Ok(Plan {
                flat,
                mode: Mode::parse(attrs.str("mode")),
                attr: "paddings",
            })
        }
        _ => {
            // ReflectionPad1D/2D/3D, ReplicationPad1D/2D/3D.
            let k = pad_nd_dims(op);
            let flat = flat_attr("padding");
            if flat.len() != 2 * k {
                return Err(OpError::attr(
                    "padding",
                    format!(
                        "`{op}` pads {k} dimension(s): `padding` needs {} entries, got {}",
                        2 * k,
                        fmt_ints(&flat)
                    ),
                ));
            }
            non_negative("padding", &flat)?;
            let mode = if op.starts_with("Reflection") {
                Mode::Reflect
            } else {
                Mode::Edge
            };
            Ok(Plan {
                flat,
                mode,
                attr: "padding",
            })
        }
    }
}

/// How many trailing dimensions ReflectionPadND/ReplicationPadND pad.
fn pad_nd_dims(op: &str) -> usize {
    if op.ends_with("1D") {
        1
    } else if op.ends_with("2D") {
        2
    } else {
        3
    }
}

/// Checks the rank of the input against what `op` accepts.
fn check_rank(op: &str, plan: &Plan, rank: usize) -> Result<(), OpError> {
    let k = plan.flat.len() / 2;
    let bad = |want: String| {
        Err(OpError::input(
            0,
            format!("`{op}` needs an input of {want}, got rank {rank}"),
        ))
    };
    match op {
        "Pad" | "MirrorPad" if k != rank => Err(OpError::attr(
            "paddings",
            format!("`{op}`: `paddings` has {k} pairs but the input has rank {rank}"),
        )),
        "PadV3" if plan.mode != Mode::Constant && rank != k + 2 => bad(format!(
            "rank {} for {} paddings in {} mode",
            k + 2,
            2 * k,
            plan.mode.name()
        )),
        "PadV3" | "ConstantPadND" | "_Pad" | "_PadGrad" if k > rank => Err(OpError::attr(
            plan.attr,
            format!(
                "`{op}`: `{}` pads {k} dimensions but the input has rank {rank}",
                plan.attr
            ),
        )),
        "ReflectionPad1D" | "ReflectionPad2D" | "ReflectionPad3D" | "ReplicationPad1D"
        | "ReplicationPad2D" | "ReplicationPad3D"
            if rank != k + 1 && rank != k + 2 =>
        {
            bad(format!("rank {} or {}", k + 1, k + 2))
        }
        _ => Ok(()),
    }
}

/// PadV3's constant mode refuses results with an empty cropped dimension.
fn check_pad_v3_sizes(plan: &Plan, dims: &[Dim]) -> Result<(), OpError> {
    if plan.mode != Mode::Constant {
        return Ok(());
    }
    let pairs = pairs_from_flat(&plan.flat, dims.len());
    for (d, (dim, &(b, e))) in dims.iter().zip(&pairs).enumerate() {
        if let Dim::Known(n) = dim {
            if (b < 0 || e < 0) && n + b + e <= 0 {
                return Err(OpError::attr(
                    "paddings",
                    format!(
                        "`PadV3`: padding ({b}, {e}) leaves nothing of dimension {d} (size {n}); the result must not be empty"
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn infer_pad(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let plan = plan(op, call.attrs)?;
    let (dtype, dims) = dims_of(call, 0)?;
    if op == "PadV3" {
        let (cdtype, cshape) = call.tensor(1)?;
        if cshape.numel().is_some_and(|n| n != 1) {
            return Err(OpError::input(
                1,
                format!(
                    "`PadV3` needs a single `constant_value`, got {}",
                    call.inputs[1]
                ),
            ));
        }
        if cdtype != dtype && !call.inputs[1].is_weak() {
            return Err(OpError::input(
                1,
                format!(
                    "`PadV3` needs `constant_value` of the dtype of `x`, {dtype}, got {}",
                    call.inputs[1]
                ),
            ));
        }
    }
    let Some(dims) = dims else {
        return Ok(match op {
            "Pad" | "MirrorPad" => tensor_abs(dtype, vec![Dim::Unknown; plan.flat.len() / 2]),
            _ => unranked(dtype),
        });
    };
    check_rank(op, &plan, dims.len())?;
    if op == "PadV3" {
        check_pad_v3_sizes(&plan, &dims)?;
    }
    let pairs = pairs_from_flat(&plan.flat, dims.len());
    let mut out = Vec::with_capacity(dims.len());
    for (d, (dim, &(b, e))) in dims.iter().zip(&pairs).enumerate() {
        out.push(match dim {
            Dim::Known(n) => {
                check_dim(op, plan.attr, d, *n, (b, e), plan.mode)?;
                Dim::Known(n + b + e)
            }
            other if b == 0 && e == 0 => other.clone(),
            _ => Dim::Unknown,
        });
    }
    Ok(tensor_abs(dtype, out))
}

/// The constant a padding primitive fills with.
fn fill_value(op: &str, c: &KernelCall) -> Result<f64, OpError> {
    Ok(match op {
        "PadV3" => {
            let v = c.tensor(1)?;
            if v.numel() != 1 {
                return Err(OpError::input(1, "`PadV3` needs a single `constant_value`"));
            }
            v.to_f64_vec()[0]
        }
        "ConstantPadND" => match c.attrs.get("value") {
            Some(AttrValue::Bool(b)) => f64::from(u8::from(*b)),
            Some(v) => v.as_f64().unwrap_or(0.0),
            None => 0.0,
        },
        _ => 0.0,
    })
}

fn kernel_pad(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let plan = plan(op, c.attrs)?;
    check_rank(op, &plan, x.rank())?;
    if op == "PadV3" {
        let dims: Vec<Dim> = x.shape().iter().map(|&n| Dim::Known(n as i64)).collect();
        check_pad_v3_sizes(&plan, &dims)?;
    }
    let pairs = pairs_from_flat(&plan.flat, x.rank());
    let (shape, offsets) = pad_map(op, plan.attr, x.shape(), &pairs, plan.mode)?;
    out(take_fill(x, shape, &offsets, fill_value(op, c)?))
}

fn kernel_pad_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (g, l) = (c.tensor(0)?, c.tensor(1)?);
    let plan = plan("_PadGrad", c.attrs)?;
    check_rank("_PadGrad", &plan, l.rank())?;
    let pairs = pairs_from_flat(&plan.flat, l.rank());
    let (shape, offsets) = pad_map("_PadGrad", plan.attr, l.shape(), &pairs, plan.mode)?;
    if g.shape() != shape.as_slice() {
        return Err(OpError::input(
            0,
            format!(
                "`_PadGrad`: the gradient has shape {:?}, the padding gave {shape:?}",
                g.shape()
            ),
        ));
    }
    out(scatter_fill(g, l.shape().to_vec(), &offsets))
}

/// The input shape whose padding by `op` (a primitive with a backward
/// primitive: MirrorPad, PadV3, ReflectionPadND, ReplicationPadND) with
/// `attrs` has shape `padded` (unknown sizes stay unknown).
pub(crate) fn unpadded_dims(op: &str, attrs: &Attrs, padded: &[Dim]) -> Result<Vec<Dim>, OpError> {
    let plan = plan(op, attrs)?;
    check_rank(op, &plan, padded.len())?;
    let pairs = pairs_from_flat(&plan.flat, padded.len());
    padded
        .iter()
        .zip(&pairs)
        .enumerate()
        .map(|(d, (dim, &(b, e)))| match dim {
            Dim::Known(n) if n - b - e < 0 => Err(OpError::input(
                0,
                format!("`{op}`: dimension {d} of the gradient, {n}, is smaller than its padding ({b}, {e})"),
            )),
            Dim::Known(n) => Ok(Dim::Known(n - b - e)),
            other if b == 0 && e == 0 => Ok(other.clone()),
            _ => Ok(Dim::Unknown),
        })
        .collect()
}

/// `g`, the gradient of the padding by `op` (as [`unpadded_dims`]) of an
/// input of shape `like` (`None`: the shape `g` unpads to), added back through
/// the padding map: positions of the constant dropped, mirrored positions
/// summed.
pub(crate) fn unpad_add(
    op: &str,
    attrs: &Attrs,
    g: &Tensor,
    like: Option<&[usize]>,
) -> Result<Tensor, OpError> {
    let plan = plan(op, attrs)?;
    let rank = like.map_or(g.rank(), <[usize]>::len);
    check_rank(op, &plan, rank)?;
    let pairs = pairs_from_flat(&plan.flat, rank);
    let like: Vec<usize> = match like {
        Some(l) => l.to_vec(),
        None => g
            .shape()
            .iter()
            .zip(&pairs)
            .map(|(&n, &(b, e))| (n as i64 - b - e).max(0) as usize)
            .collect(),
    };
    let (shape, offsets) = pad_map(op, plan.attr, &like, &pairs, plan.mode)?;
    if g.shape() != shape.as_slice() {
        return Err(OpError::input(
            0,
            format!(
                "the gradient has shape {:?}, `{op}` of {like:?} gives {shape:?}",
                g.shape()
            ),
        ));
    }
    Ok(scatter_fill(g, like, &offsets))
}

/// MindSpore's backward primitive of a padding in a mode other than the
/// constant, as its bprops emit it (`MirrorPadGrad`, `PadV3Grad`,
/// `ReflectionPad*Grad`, `ReplicationPad*Grad`), with the forward's
/// attributes.
fn pad_backward(
    b: &mut dyn GradBuilder,
    c: &GradCall,
    op: &str,
    mode: Mode,
) -> Option<crate::GNode> {
    let attrs = attrs_of(c);
    Some(match op {
        "MirrorPad" => b.prim("MirrorPadGrad", &[c.dout], attrs),
        "PadV3" if mode != Mode::Constant => b.prim("PadV3Grad", &[c.dout], attrs),
        "ReflectionPad1D" => b.prim("ReflectionPad1DGrad", &[c.dout, c.inputs[0]], attrs),
        "ReflectionPad2D" => b.prim("ReflectionPad2DGrad", &[c.dout, c.inputs[0]], attrs),
        "ReflectionPad3D" => b.prim("ReflectionPad3DGrad", &[c.dout, c.inputs[0]], attrs),
        "ReplicationPad1D" => b.prim("ReplicationPad1DGrad", &[c.dout, c.inputs[0]], attrs),
        "ReplicationPad2D" => b.prim("ReplicationPad2DGrad", &[c.dout, c.inputs[0]], attrs),
        "ReplicationPad3D" => b.prim("ReplicationPad3DGrad", &[c.dout, c.inputs[0]], attrs),
        _ => return None,
    })
}

/// The gradient of every padding primitive: MindSpore's backward primitive
/// where it has one (the modes other than the constant, see
/// `pad_backward`); otherwise `_PadGrad` with its paddings in
/// PyTorch's order and its mode. The constant (PadV3's `constant_value`) gets
/// none, as in MindSpore.
fn grad_pad(b: &mut dyn GradBuilder, c: &GradCall, op: &str) -> Grads {
    let n = if op == "PadV3" { 2 } else { 1 };
    let mut grads = vec![None; n];
    if !is_float_input(c, 0) {
        return grads;
    }
    let Ok(plan) = plan(op, c.attrs) else {
        return grads;
    };
    if let Some(dx) = pad_backward(b, c, op, plan.mode) {
        grads[0] = Some(dx);
        return grads;
    }
    if op == "PadV3" {
        // MindSpore's bprop of the constant mode: PadV3 of the sensitivity by
        // the negated paddings (a padding crops, a crop pads with zeros).
        let negated: Vec<i64> = c
            .attrs
            .ints("paddings")
            .unwrap_or_default()
            .iter()
            .map(|p| -p)
            .collect();
        let zero = b.scalar(0.0);
        let mut attrs = attrs_of(c);
        attrs.retain(|(k, _)| *k != "paddings");
        attrs.push(("paddings", int_tuple(&negated)));
        grads[0] = Some(b.prim("PadV3", &[c.dout, zero], attrs));
        return grads;
    }
    grads[0] = Some(b.prim(
        "_PadGrad",
        &[c.dout, c.inputs[0]],
        vec![
            ("paddings", int_tuple(&plan.flat)),
            ("mode", AttrValue::Str(plan.mode.name().into())),
        ],
    ));
    grads
}

fn infer_pad_grad(call: &InferCall) -> Result<AbsVal, OpError> {
    like(call, 0, 1)
}

// ---------------------------------------------------------------------------
// The table.

const fn pad_op(
    name: &'static str,
    category: Category,
    doc: &'static str,
    params: Schema,
    grad: crate::GradFn,
    kernel: crate::KernelFn,
) -> OpDef {
    OpDef {
        name,
        category,
        doc,
        schema: params,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_pad,
        grad: Some(grad),
        kernel: Some(kernel),
        traits: Traits::NONE,
    }
}

const PADDING_1D: Schema = Schema::ms(
    &[Override::attr(
        "padding",
        AttrType::IntTuple,
        None,
        why::TYPE,
    )],
    &[
        ("input", "The input, `(C, W)` or `(N, C, W)`."),
        (
            "padding",
            "`(left, right)`: how many positions to add before and after the last dimension, >= 0.",
        ),
    ],
);
const PADDING_2D: Schema = Schema::ms(
    &[Override::attr("padding", AttrType::IntTuple, None, why::TYPE)],
    &[
        ("input", "The input, `(C, H, W)` or `(N, C, H, W)`."),
        ("padding", "`(left, right, top, bottom)`: the padding of the last dimension, then of the one before, >= 0."),
    ],
);
const PADDING_3D: Schema = Schema::ms(
    &[Override::attr("padding", AttrType::IntTuple, None, why::TYPE)],
    &[
        ("input", "The input, `(C, D, H, W)` or `(N, C, D, H, W)`."),
        ("padding", "`(left, right, top, bottom, front, back)`: the padding of the last three dimensions, the last first, >= 0."),
    ],
);

const MODES: &[&str] = &["constant", "reflect", "symmetric", "edge", "circular"];

const PAD_INTERNAL: [ParamDef; 2] = [
    ParamDef::attr(
        "paddings",
        AttrType::IntTuple,
        None,
        "`(before, after)` per padded dimension, the last dimension first.",
    ),
    ParamDef::attr(
        "mode",
        AttrType::Str(MODES),
        Some(AttrDefault::Str("constant")),
        "The padding mode.",
    ),
];

pub const OPS: &[OpDef] = &[
    pad_op(
        "Pad",
        Category::Shape,
        "Pads `input_x` with zeros: `paddings[d] = (before, after)` positions are added before and after dimension `d`.",
        Schema::ms(
            &[
                Override::inputs(&["input_x"], why::INPUT_NAMES),
                Override::attr("paddings", AttrType::IntTuples, None, why::TYPE),
            ],
            &[
                ("input_x", "The tensor to pad (any dtype)."),
                ("paddings", "One `(before, after)` pair of non-negative ints per dimension, e.g. `((1, 1), (0, 2))`."),
            ],
        ),
        |b, c| grad_pad(b, c, "Pad"),
        |c| kernel_pad(c, "Pad"),
    ),
    pad_op(
        "PadV3",
        Category::Shape,
        "Pads the last dimensions of `x` (`paddings` lists `(before, after)` from the last dimension backwards, like `ops.pad`) with `constant_value` (`constant` mode, where negative paddings crop), the mirror image without the edge (`reflect`), the edge value (`edge`) or the other end (`circular`). The modes other than constant need a rank-3, -4 or -5 input with 2, 4 or 6 paddings (reflect at most 4).",
        Schema::ms(
            &[
                Override::attr("paddings", AttrType::IntTuple, None, "constant paddings: an attribute in the registry, read from MindSpore's constant tensor"),
                Override::attr("mode", AttrType::Str(&["constant", "reflect", "edge", "circular"]), Some(AttrDefault::Str("constant")), why::STRINGS),
            ],
            &[
                ("x", "The tensor to pad."),
                ("paddings", "`(before, after)` of the last dimension, then of the one before, and so on (MindSpore takes it as a constant tensor)."),
                ("constant_value", "The fill value of `constant` mode: a scalar of the dtype of `x` (MindSpore passes none in the other modes; here any scalar, ignored)."),
                ("mode", "`constant` (the default), `reflect`, `edge` or `circular`."),
                ("paddings_contiguous", "`true` (the default): `paddings` is `(before0, after0, before1, after1, ...)`; `false`: `(before0, before1, ..., after0, after1, ...)`."),
            ],
        ),
        |b, c| grad_pad(b, c, "PadV3"),
        |c| kernel_pad(c, "PadV3"),
    )
    .drawn(Gradgen::Avoid),
    pad_op(
        "ConstantPadND",
        Category::Shape,
        "Pads the last dimensions of `input` with `value`: `padding` lists `(before, after)` from the last dimension backwards; negative entries crop. MindSpore's CPU backend has no kernel for it.",
        Schema::ms(
            &[Override::attr("padding", AttrType::IntTuple, None, why::TYPE)],
            &[
                ("input", "The tensor to pad."),
                ("padding", "`(before, after)` of the last dimension, then of the one before, and so on."),
                ("value", "The fill value, converted to the dtype of `input`. Default 0."),
            ],
        ),
        |b, c| grad_pad(b, c, "ConstantPadND"),
        |c| kernel_pad(c, "ConstantPadND"),
    ),
    pad_op(
        "MirrorPad",
        Category::Shape,
        "Pads `input_x` with its mirror image: `REFLECT` leaves out the edge (`[1 2 3]` padded by 2 is `[3 2 1 2 3 2 1]`), `SYMMETRIC` repeats it (`[2 1 1 2 3 3 2]`). Paddings must be smaller than the dimension (REFLECT) or at most its size (SYMMETRIC).",
        Schema::ms(
            &[
                Override::attr("paddings", AttrType::IntTuples, None, "constant paddings: an attribute in the registry, read from MindSpore's constant tensor"),
                Override::inputs(&["input_x"], why::INPUT_NAMES),
                Override::attr("mode", AttrType::Str(&["REFLECT", "SYMMETRIC"]), Some(AttrDefault::Str("REFLECT")), why::STRINGS),
            ],
            &[
                ("input_x", "The tensor to pad."),
                ("paddings", "One `(before, after)` pair per dimension (MindSpore takes it as a constant `(N, 2)` tensor)."),
                ("mode", "`REFLECT` (the default) or `SYMMETRIC`."),
            ],
        ),
        |b, c| grad_pad(b, c, "MirrorPad"),
        |c| kernel_pad(c, "MirrorPad"),
    ),
    pad_op(
        "ReflectionPad1D",
        Category::Shape,
        "Pads the last dimension of `input` with its reflection (without the edge); paddings must be smaller than the dimension. MindSpore's CPU backend has no kernel for it.",
        PADDING_1D,
        |b, c| grad_pad(b, c, "ReflectionPad1D"),
        |c| kernel_pad(c, "ReflectionPad1D"),
    ),
    pad_op(
        "ReflectionPad2D",
        Category::Shape,
        "Pads the last two dimensions of `input` with their reflection (without the edge); paddings must be smaller than the dimension. MindSpore's CPU backend has no kernel for it.",
        PADDING_2D,
        |b, c| grad_pad(b, c, "ReflectionPad2D"),
        |c| kernel_pad(c, "ReflectionPad2D"),
    ),
    pad_op(
        "ReflectionPad3D",
        Category::Shape,
        "Pads the last three dimensions of `input` with their reflection (without the edge); paddings must be smaller than the dimension. MindSpore's CPU backend has no kernel for it.",
        PADDING_3D,
        |b, c| grad_pad(b, c, "ReflectionPad3D"),
        |c| kernel_pad(c, "ReflectionPad3D"),
    ),
    pad_op(
        "ReplicationPad1D",
        Category::Shape,
        "Pads the last dimension of `input` by repeating its edge values. MindSpore's CPU backend has no kernel for it.",
        PADDING_1D,
        |b, c| grad_pad(b, c, "ReplicationPad1D"),
        |c| kernel_pad(c, "ReplicationPad1D"),
    ),
    pad_op(
        "ReplicationPad2D",
        Category::Shape,
        "Pads the last two dimensions of `input` by repeating their edge values. MindSpore's CPU backend has no kernel for it.",
        PADDING_2D,
        |b, c| grad_pad(b, c, "ReplicationPad2D"),
        |c| kernel_pad(c, "ReplicationPad2D"),
    ),
    pad_op(
        "ReplicationPad3D",
        Category::Shape,
        "Pads the last three dimensions of `input` by repeating their edge values. MindSpore's CPU backend has no kernel for it.",
        PADDING_3D,
        |b, c| grad_pad(b, c, "ReplicationPad3D"),
        |c| kernel_pad(c, "ReplicationPad3D"),
    ),
    pad_op(
        "_Pad",
        Category::Internal,
        "Pads `x` in `mode` with zeros as the constant (the gradient of `_PadGrad`).",
        Schema::own(&[
            ParamDef::input("x", "The tensor to pad."),
            PAD_INTERNAL[0],
            PAD_INTERNAL[1],
        ]),
        |b, c| {
            if !is_float_input(c, 0) {
                return vec![None];
            }
            vec![Some(b.prim("_PadGrad", &[c.dout, c.inputs[0]], attrs_of(c)))]
        },
        |c| kernel_pad(c, "_Pad"),
    ),
    OpDef {
        name: "_PadGrad",
        category: Category::Internal,
        doc: "The gradient of the padding primitives: `grad` added back through the padding map into zeros shaped like `like` (positions of the constant dropped, mirrored positions summed).",
        schema: Schema::own(&[
            ParamDef::input("grad", "The gradient of the padded result."),
            ParamDef::input("like", "The padded input, for its shape."),
            PAD_INTERNAL[0],
            PAD_INTERNAL[1],
        ]),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_pad_grad,
        grad: Some(|b, c| vec![Some(b.prim("_Pad", &[c.dout], attrs_of(c))), None]),
        kernel: Some(kernel_pad_grad),
        traits: Traits::NONE,
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let t = int_tuple;
    let s = |v: &str| AttrValue::Str(v.into());
    let pairs = |v: &[(i64, i64)]| AttrValue::Tuple(v.iter().map(|&(a, b)| t(&[a, b])).collect());
    let r = random_f64;
    let scalar = |v: f64| KValue::Tensor(Tensor::scalar(DType::F64, v));
    vec![
        Sample::new("Pad", vec![r(&[2, 3], 300, -1.0, 1.0)])
            .attr("paddings", pairs(&[(1, 0), (2, 1)])),
        Sample::new("PadV3", vec![r(&[2, 3], 301, -1.0, 1.0), scalar(0.5)])
            .attr("paddings", t(&[1, -1, 0, 2])),
        Sample::new("PadV3", vec![r(&[1, 2, 4], 302, -1.0, 1.0), scalar(0.0)])
            .attr("paddings", t(&[3, 2]))
            .attr("mode", s("reflect")),
        Sample::new("PadV3", vec![r(&[1, 2, 3, 2], 303, -1.0, 1.0), scalar(0.0)])
            .attr("paddings", t(&[1, 2, 2, 0]))
            .attr("mode", s("edge"))
            .attr("paddings_contiguous", AttrValue::Bool(false)),
        Sample::new("PadV3", vec![r(&[1, 1, 3], 304, -1.0, 1.0), scalar(0.0)])
            .attr("paddings", t(&[2, 3]))
            .attr("mode", s("circular")),
        Sample::new("ConstantPadND", vec![r(&[3, 2], 305, -1.0, 1.0)])
            .attr("padding", t(&[1, 1, -1, 0]))
            .attr("value", AttrValue::float(2.0)),
        Sample::new("MirrorPad", vec![r(&[3, 4], 306, -1.0, 1.0)])
            .attr("paddings", pairs(&[(2, 1), (3, 3)])),
        Sample::new("MirrorPad", vec![r(&[3, 2], 307, -1.0, 1.0)])
            .attr("paddings", pairs(&[(3, 1), (2, 2)]))
            .attr("mode", s("SYMMETRIC")),
        Sample::new("ReflectionPad1D", vec![r(&[2, 4], 308, -1.0, 1.0)])
            .attr("padding", t(&[3, 1])),
        Sample::new("ReflectionPad2D", vec![r(&[1, 3, 3], 309, -1.0, 1.0)])
            .attr("padding", t(&[1, 2, 2, 0])),
        Sample::new("ReflectionPad3D", vec![r(&[1, 2, 2, 3], 310, -1.0, 1.0)])
            .attr("padding", t(&[1, 1, 0, 1, 1, 0])),
        Sample::new("ReplicationPad1D", vec![r(&[1, 2, 3], 311, -1.0, 1.0)])
            .attr("padding", t(&[2, 4])),
        Sample::new("ReplicationPad2D", vec![r(&[2, 2, 3], 312, -1.0, 1.0)])
            .attr("padding", t(&[0, 2, 1, 3])),
        Sample::new("ReplicationPad3D", vec![r(&[2, 1, 2, 2], 313, -1.0, 1.0)])
            .attr("padding", t(&[1, 0, 0, 1, 2, 1])),
        Sample::new("_Pad", vec![r(&[2, 3], 314, -1.0, 1.0)])
            .attr("paddings", t(&[2, 2, 1, 0]))
            .attr("mode", s("symmetric")),
        Sample::new(
            "_PadGrad",
            vec![r(&[3, 7], 315, -1.0, 1.0), r(&[2, 3], 316, -1.0, 1.0)],
        )
        .attr("paddings", t(&[2, 2, 1, 0]))
        .attr("mode", s("reflect")),
    ]
}
