//! Shape primitives: Reshape, Transpose, ExpandDims, Squeeze, Concat, Tile,
//! BroadcastTo, Gather, Shape, Flatten, StridedSlice.
//!
//! MindSpore passes shapes, permutations and axes of these primitives as
//! constant inputs; in the DSL they are attributes (spec §6), which is what
//! MindSpore's front end requires of them anyway.

pub mod gather_scatter;
pub mod layout;
pub mod make;
pub mod pad;
pub mod segment;
pub mod slice;
pub mod split_stack;

use crate::batch::BatchRule;
use crate::schema::{why, Override, Schema};
use crate::Family;
use crate::Strided;
use crate::Traits;
use ir::{AbsVal, AttrValue, DType, Dim, ScalarConst, Shape};
use tensor::{Buffer, Tensor};

use crate::infer::{normalize_axis, InferCall};
use crate::kernel::{KArg, KValue, KernelCall};
use crate::{AttrDefault, AttrType, Category, OpDef, OpError, OutputDef};

// ---------------------------------------------------------------------------
// Helpers shared by shape rules.

/// Input `i`'s dtype and dimensions (`None` when its rank is unknown).
pub(crate) fn dims_of(call: &InferCall, i: usize) -> Result<(DType, Option<Vec<Dim>>), OpError> {
    let (dtype, shape) = call.tensor(i)?;
    Ok((dtype, shape.dims().map(<[Dim]>::to_vec)))
}

pub(crate) fn tensor_abs(dtype: DType, dims: Vec<Dim>) -> AbsVal {
    AbsVal::Tensor {
        dtype,
        shape: Shape::Ranked(dims),
    }
}

pub(crate) fn unranked(dtype: DType) -> AbsVal {
    AbsVal::Tensor {
        dtype,
        shape: Shape::Unranked,
    }
}

/// `(2, -1)`: an int tuple as the DSL writes it.
pub(crate) fn fmt_ints(v: &[i64]) -> String {
    let items: Vec<String> = v.iter().map(i64::to_string).collect();
    if items.len() == 1 {
        format!("({},)", items[0])
    } else {
        format!("({})", items.join(", "))
    }
}

pub(crate) fn fmt_dims(dims: &[Dim]) -> String {
    Shape::Ranked(dims.to_vec()).to_string()
}

/// A possibly negative axis, normalised against `rank`; the error names the op.
pub(crate) fn op_axis(
    op: &str,
    axis: i64,
    rank: usize,
    attr: &'static str,
) -> Result<usize, OpError> {
    normalize_axis(axis, rank, attr).map_err(|mut e| {
        e.message = format!("`{op}`: {}", e.message);
        e
    })
}

/// The product of two dimensions, where it can be known.
pub(crate) fn dim_mul(a: &Dim, b: &Dim) -> Dim {
    match (a, b) {
        (Dim::Known(x), Dim::Known(y)) => Dim::Known(x * y),
        (Dim::Known(0), _) | (_, Dim::Known(0)) => Dim::Known(0),
        (Dim::Known(1), other) | (other, Dim::Known(1)) => other.clone(),
        _ => Dim::Unknown,
    }
}

/// Whether two dimensions may be equal (unknown and symbolic ones may).
pub(crate) fn dims_may_equal(a: &Dim, b: &Dim) -> bool {
    match (a, b) {
        (Dim::Known(x), Dim::Known(y)) => x == y,
        (Dim::Sym(x), Dim::Sym(y)) => x == y,
        _ => true,
    }
}

// ---------------------------------------------------------------------------
// Helpers shared by kernels: every shape primitive moves elements, so each is
// written once as a list of source offsets applied to any storage kind.

/// Row-major strides of `shape`.
pub(crate) fn row_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    strides
}

/// Every sum `per_dim[0][i0] + per_dim[1][i1] + ...`, in row-major order of
/// the indices: the source offsets of a result whose dimension `d` reads the
/// offsets `per_dim[d]`.
pub(crate) fn cartesian_offsets(per_dim: &[Vec<usize>]) -> Vec<usize> {
    let mut acc = vec![0usize];
    for offsets in per_dim {
        let mut next = Vec::with_capacity(acc.len() * offsets.len());
        for &base in &acc {
            next.extend(offsets.iter().map(|&o| base + o));
        }
        acc = next;
    }
    acc
}

/// The elements of `t` at `offsets`, as a tensor of `shape` and `t`'s dtype.
pub(crate) fn take(t: &Tensor, shape: Vec<usize>, offsets: &[usize]) -> Tensor {
    fn pick<T: Copy>(v: &[T], offsets: &[usize]) -> Vec<T> {
        offsets.iter().map(|&o| v[o]).collect()
    }
    let buffer = match t.buffer() {
        Buffer::F32(v) => Buffer::F32(pick(v, offsets)),
        Buffer::F64(v) => Buffer::F64(pick(v, offsets)),
        Buffer::I64(v) => Buffer::I64(pick(v, offsets)),
        Buffer::Bool(v) => Buffer::Bool(pick(v, offsets)),
    };
    Tensor::new(t.dtype(), shape, buffer).expect("one offset per element")
}

/// A tensor of `shape` (and `src`'s dtype) of zeros, with each element of
/// `src` added at its offset: the adjoint of [`take`].
pub(crate) fn scatter_add(src: &Tensor, shape: Vec<usize>, offsets: &[usize]) -> Tensor {
    fn add<T: Copy + Default + std::ops::Add<Output = T>>(
        v: &[T],
        n: usize,
        offsets: &[usize],
    ) -> Vec<T> {
        let mut out = vec![T::default(); n];
        for (&x, &o) in v.iter().zip(offsets) {
            out[o] = out[o] + x;
        }
        out
    }
    let n = shape.iter().product();
    let buffer = match src.buffer() {
        Buffer::F32(v) => Buffer::F32(add(v, n, offsets)),
        Buffer::F64(v) => Buffer::F64(add(v, n, offsets)),
        Buffer::I64(v) => Buffer::I64(add(v, n, offsets)),
        Buffer::Bool(v) => {
            let mut out = vec![false; n];
            for (&x, &o) in v.iter().zip(offsets) {
                out[o] |= x;
            }
            Buffer::Bool(out)
        }
    };
    Tensor::new(src.dtype(), shape, buffer).expect("sizes match")
}

/// The same data under another shape of equal element count.
pub(crate) fn reshape_to(t: &Tensor, shape: Vec<usize>) -> Result<Tensor, OpError> {
    t.clone().reshaped(shape).map_err(|e| OpError::call(e.0))
}

fn out(t: Tensor) -> Result<KValue, OpError> {
    Ok(KValue::Tensor(t))
}

fn tensor_arg<'a>(c: &KernelCall<'a>, i: usize) -> Result<&'a Tensor, OpError> {
    c.tensor(i)
}

// ---------------------------------------------------------------------------
// Reshape

/// Checks a `shape` attribute (-1 at most once, no other negative sizes) and
/// returns the position of its -1 and the product of its other sizes.
fn check_target(op: &str, target: &[i64]) -> Result<(Option<usize>, i64), OpError> {
    let mut infer_at = None;
    for (i, &t) in target.iter().enumerate() {
        if t == -1 {
            if infer_at.is_some() {
                return Err(OpError::attr(
                    "shape",
                    format!(
                        "`{op}`: `shape` {} has more than one -1; only one size can be inferred",
                        fmt_ints(target)
                    ),
                ));
            }
            infer_at = Some(i);
        } else if t < 0 {
            return Err(OpError::attr(
                "shape",
                format!(
                    "`{op}`: `shape` {} has the negative size {t} (only -1, inferred, is allowed)",
                    fmt_ints(target)
                ),
            ));
        }
    }
    Ok((infer_at, target.iter().filter(|&&t| t != -1).product()))
}

/// The dimensions of reshaping `dims` (`None`: unknown rank) to `target`.
/// Element counts are checked wherever they can be decided: exactly when all
/// input sizes are known, and for divisibility when only some are.
fn reshape_dims(op: &str, dims: Option<&[Dim]>, target: &[i64]) -> Result<Vec<Dim>, OpError> {
    let (infer_at, product) = check_target(op, target)?;
    let mut out: Vec<Dim> = target.iter().map(|&t| Dim::Known(t)).collect();
    let Some(dims) = dims else {
        if let Some(i) = infer_at {
            out[i] = Dim::Unknown;
        }
        return Ok(out);
    };
    let shown = fmt_dims(dims);
    let mut known = 1i64;
    let mut unknown: Vec<&Dim> = Vec::new();
    for d in dims {
        match d {
            Dim::Known(n) => known *= n,
            other => unknown.push(other),
        }
    }
    let ambiguous = || {
        OpError::attr(
            "shape",
            format!(
                "`{op}`: cannot infer the -1 in `shape` {}: the other sizes multiply to 0",
                fmt_ints(target)
            ),
        )
        .with_note(format!("`x` has shape {shown}"))
    };
    if unknown.is_empty() || known == 0 {
        // The element count is known.
        match infer_at {
            Some(i) => {
                if product == 0 {
                    return Err(ambiguous());
                }
                if known % product != 0 {
                    return Err(OpError::attr(
                        "shape",
                        format!(
                            "`{op}` cannot reshape {shown} ({known} elements) to {}: {known} is not a multiple of {product}",
                            fmt_ints(target)
                        ),
                    ));
                }
                out[i] = Dim::Known(known / product);
            }
            None if product != known => {
                return Err(OpError::attr(
                    "shape",
                    format!(
                        "`{op}` cannot reshape {shown} ({known} elements) to {} ({product} elements)",
                        fmt_ints(target)
                    ),
                ));
            }
            None => {}
        }
        return Ok(out);
    }
    match infer_at {
        Some(i) => {
            if product == 0 {
                return Err(ambiguous());
            }
            out[i] = match unknown.as_slice() {
                [d @ Dim::Sym(_)] if product == known => (*d).clone(),
                _ => Dim::Unknown,
            };
        }
        None if product != 0 && product % known != 0 => {
            return Err(OpError::attr(
                "shape",
                format!(
                    "`{op}` cannot reshape {shown} to {} ({product} elements): the element count of `x` is a multiple of {known}",
                    fmt_ints(target)
                ),
            ));
        }
        None => {}
    }
    Ok(out)
}

/// The concrete shape of reshaping `numel` elements to `target`.
fn resolve_target(op: &str, numel: usize, target: &[i64]) -> Result<Vec<usize>, OpError> {
    let (infer_at, product) = check_target(op, target)?;
    let mut shape: Vec<usize> = target.iter().map(|&t| t.max(0) as usize).collect();
    let product = product as usize;
    match infer_at {
        Some(i) => {
            if !crate::defs::conv::divides(product, numel) {
                return Err(OpError::attr(
                    "shape",
                    format!(
                        "`{op}` cannot reshape {numel} elements to {}",
                        fmt_ints(target)
                    ),
                ));
            }
            shape[i] = numel / product;
        }
        None if product != numel => {
            return Err(OpError::attr(
                "shape",
                format!(
                    "`{op}` cannot reshape {numel} elements to {} ({product} elements)",
                    fmt_ints(target)
                ),
            ));
        }
        None => {}
    }
    Ok(shape)
}

fn infer_reshape(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = dims_of(call, 0)?;
    let target = call.attrs.ints("shape").unwrap_or_default();
    Ok(tensor_abs(
        dtype,
        reshape_dims(call.op.name, dims.as_deref(), &target)?,
    ))
}

fn kernel_reshape(c: &KernelCall) -> Result<KValue, OpError> {
    let x = tensor_arg(c, 0)?;
    let target = c.attrs.ints("shape").unwrap_or_default();
    let shape = resolve_target("Reshape", x.numel(), &target)?;
    out(reshape_to(x, shape)?)
}

// ---------------------------------------------------------------------------
// Transpose

/// Checks `perm` against `rank` and returns it normalised.
fn check_perm(op: &str, perm: &[i64], rank: usize) -> Result<Vec<usize>, OpError> {
    if perm.len() != rank {
        return Err(OpError::attr(
            "perm",
            format!(
                "`{op}`: `perm` {} has {} entries but `x` has rank {rank}",
                fmt_ints(perm),
                perm.len()
            ),
        ));
    }
    let mut seen = vec![false; rank];
    let mut out = Vec::with_capacity(rank);
    for &p in perm {
        let r = rank as i64;
        if p < -r || p >= r {
            return Err(OpError::attr(
                "perm",
                format!(
                    "`{op}`: `perm` {} is not a permutation of 0..{rank}: {p} is out of range",
                    fmt_ints(perm)
                ),
            ));
        }
        let q = if p < 0 { p + r } else { p } as usize;
        if seen[q] {
            return Err(OpError::attr(
                "perm",
                format!(
                    "`{op}`: `perm` {} is not a permutation of 0..{rank}: axis {q} appears twice",
                    fmt_ints(perm)
                ),
            ));
        }
        seen[q] = true;
        out.push(q);
    }
    Ok(out)
}

fn infer_transpose(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = dims_of(call, 0)?;
    let perm = call.attrs.ints("perm").unwrap_or_default();
    let Some(dims) = dims else {
        return Ok(tensor_abs(dtype, vec![Dim::Unknown; perm.len()]));
    };
    let perm = check_perm(call.op.name, &perm, dims.len())?;
    Ok(tensor_abs(
        dtype,
        perm.iter().map(|&p| dims[p].clone()).collect(),
    ))
}

/// `x` with its dimensions permuted: result dimension `i` is `x`'s `perm[i]`.
pub(crate) fn transpose_tensor(x: &Tensor, perm: &[usize]) -> Tensor {
    let shape = x.shape();
    let strides = row_strides(shape);
    let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let per_dim: Vec<Vec<usize>> = perm
        .iter()
        .map(|&p| (0..shape[p]).map(|k| k * strides[p]).collect())
        .collect();
    take(x, out_shape, &cartesian_offsets(&per_dim))
}

fn kernel_transpose(c: &KernelCall) -> Result<KValue, OpError> {
    let x = tensor_arg(c, 0)?;
    let perm = check_perm(
        "Transpose",
        &c.attrs.ints("perm").unwrap_or_default(),
        x.rank(),
    )?;
    out(transpose_tensor(x, &perm))
}

// ---------------------------------------------------------------------------
// ExpandDims, Squeeze, Flatten

fn infer_expand_dims(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = dims_of(call, 0)?;
    let Some(mut dims) = dims else {
        return Ok(unranked(dtype));
    };
    let axis = op_axis(call.op.name, call.attrs.int("axis"), dims.len() + 1, "axis")?;
    dims.insert(axis, Dim::Known(1));
    Ok(tensor_abs(dtype, dims))
}

fn kernel_expand_dims(c: &KernelCall) -> Result<KValue, OpError> {
    let x = tensor_arg(c, 0)?;
    let axis = op_axis("ExpandDims", c.attrs.int("axis"), x.rank() + 1, "axis")?;
    let mut shape = x.shape().to_vec();
    shape.insert(axis, 1);
    out(reshape_to(x, shape)?)
}

/// The axes `Squeeze` removes, checked: explicit ones must have size 1.
fn squeeze_axes(op: &str, axes: &[i64], dims: &[Dim]) -> Result<Option<Vec<usize>>, OpError> {
    if axes.is_empty() {
        // Every size-1 dimension; undecidable when some size is not known.
        if dims.iter().any(|d| d.known().is_none()) {
            return Ok(None);
        }
        return Ok(Some(
            (0..dims.len())
                .filter(|&i| dims[i] == Dim::Known(1))
                .collect(),
        ));
    }
    if dims.is_empty() {
        return Err(OpError::attr(
            "axis",
            format!(
                "`{op}`: `x` is a scalar; it has no axis {} to remove",
                fmt_ints(axes)
            ),
        ));
    }
    let mut out = Vec::new();
    for &a in axes {
        let i = op_axis(op, a, dims.len(), "axis")?;
        if out.contains(&i) {
            return Err(OpError::attr(
                "axis",
                format!(
                    "`{op}`: axis {a} is given twice in `axis` {}",
                    fmt_ints(axes)
                ),
            ));
        }
        if let Dim::Known(n) = dims[i] {
            if n != 1 {
                return Err(OpError::attr(
                    "axis",
                    format!(
                        "`{op}` can only remove dimensions of size 1, but axis {a} of `x` {} has size {n}",
                        fmt_dims(dims)
                    ),
                ));
            }
        }
        out.push(i);
    }
    Ok(Some(out))
}

fn infer_squeeze(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = dims_of(call, 0)?;
    let Some(dims) = dims else {
        return Ok(unranked(dtype));
    };
    let axes = call.attrs.ints("axis").unwrap_or_default();
    match squeeze_axes(call.op.name, &axes, &dims)? {
        None => Ok(unranked(dtype)),
        Some(remove) => Ok(tensor_abs(
            dtype,
            (0..dims.len())
                .filter(|i| !remove.contains(i))
                .map(|i| dims[i].clone())
                .collect(),
        )),
    }
}

fn kernel_squeeze(c: &KernelCall) -> Result<KValue, OpError> {
    let x = tensor_arg(c, 0)?;
    let dims: Vec<Dim> = x.shape().iter().map(|&d| Dim::Known(d as i64)).collect();
    let axes = c.attrs.ints("axis").unwrap_or_default();
    let remove = squeeze_axes("Squeeze", &axes, &dims)?.unwrap_or_default();
    let shape = (0..x.rank())
        .filter(|i| !remove.contains(i))
        .map(|i| x.shape()[i])
        .collect();
    out(reshape_to(x, shape)?)
}

fn infer_flatten(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = dims_of(call, 0)?;
    let Some(dims) = dims else {
        return Ok(tensor_abs(dtype, vec![Dim::Unknown, Dim::Unknown]));
    };
    if dims.is_empty() {
        return Err(OpError::input(
            0,
            "`Flatten` needs `x` of rank at least 1, got a scalar",
        ));
    }
    let rest = dims[1..]
        .iter()
        .fold(Dim::Known(1), |acc, d| dim_mul(&acc, d));
    Ok(tensor_abs(dtype, vec![dims[0].clone(), rest]))
}

fn kernel_flatten(c: &KernelCall) -> Result<KValue, OpError> {
    let x = tensor_arg(c, 0)?;
    if x.rank() == 0 {
        return Err(OpError::input(0, "`Flatten` needs `x` of rank at least 1"));
    }
    let n = x.shape()[0];
    let rest = x.shape()[1..].iter().product();
    out(reshape_to(x, vec![n, rest])?)
}

mod parts;
pub use parts::strided_slice_layout;
pub(crate) use parts::*;

// ---------------------------------------------------------------------------
// The table.

/// The gradient of a primitive that only rearranges `x`: `dout` reshaped back.
fn reshape_back(b: &mut dyn crate::GradBuilder, c: &crate::GradCall) -> Vec<Option<crate::GNode>> {
    vec![Some(b.prim("_ReshapeLike", &[c.dout, c.inputs[0]], vec![]))]
}

fn attrs_of(c: &crate::GradCall) -> Vec<(&'static str, AttrValue)> {
    c.attrs.iter().map(|(k, v)| (*k, v.clone())).collect()
}

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "Reshape",
        category: Category::Shape,
        doc: "Gives `x` a new shape with the same elements in the same (row-major) order; one size of `shape` may be -1, inferred from the element count.",
        schema: Schema::ms(
            &[
                Override::inputs(&["x"], why::INPUT_NAMES),
                Override::attr("shape", AttrType::IntTuple, None, why::TYPE),
            ],
            &[
                ("x", "The input tensor (any dtype)."),
                ("shape", "The new shape: a tuple of sizes, at most one of them -1 (inferred so the element count is unchanged)."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_reshape,
        grad: Some(reshape_back),
        kernel: Some(kernel_reshape),
        traits: Traits::of(Family::View).batched(BatchRule::Shape { attr: "shape", broadcast: false }),
    },
    OpDef {
        name: "Transpose",
        category: Category::Shape,
        doc: "Permutes the dimensions of `x`: dimension `i` of the result is dimension `perm[i]` of `x`.",
        schema: Schema::ms(
            &[
                Override::inputs(&["x"], why::INPUT_NAMES),
                Override::attr("perm", AttrType::IntTuple, None, why::TYPE),
            ],
            &[
                ("x", "The input tensor (any dtype)."),
                ("perm", "A permutation of `0..rank(x)` (negative entries count from the end)."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_transpose,
        grad: Some(|b, c| {
            let rank = c.attrs.ints("perm").unwrap_or_default().len();
            let perm = check_perm("Transpose", &c.attrs.ints("perm").unwrap_or_default(), rank)
                .unwrap_or_default();
            let mut inverse = vec![0i64; perm.len()];
            for (i, &p) in perm.iter().enumerate() {
                inverse[p] = i as i64;
            }
            let inverse = AttrValue::Tuple(inverse.into_iter().map(AttrValue::Int).collect());
            vec![Some(b.prim("Transpose", &[c.dout], vec![("perm", inverse)]))]
        }),
        kernel: Some(kernel_transpose),
        traits: Traits::of(Family::Strided(Strided::Transpose)).batched(BatchRule::Permutation { attr: "perm" }),
    },
    OpDef {
        name: "ExpandDims",
        category: Category::Shape,
        doc: "Inserts a dimension of size 1 into `x` at position `axis`.",
        schema: Schema::ms(
            &[Override::inputs(&["x"], why::INPUT_NAMES)],
            &[
                ("x", "The input tensor (any dtype)."),
                ("axis", "Where the new dimension goes, in `[-rank(x)-1, rank(x)]`; negative values count from the end of the result."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_expand_dims,
        grad: Some(reshape_back),
        kernel: Some(kernel_expand_dims),
        traits: Traits::of(Family::View).batched(BatchRule::Axes { attr: "axis", empty_is_all: false }),
    },
    OpDef {
        name: "Squeeze",
        category: Category::Shape,
        doc: "Removes dimensions of size 1 from `x`: those listed in `axis`, or all of them when `axis` is empty.",
        schema: Schema::ms(
            &[
                Override::inputs(&["x"], why::INPUT_NAMES),
                Override::attr("axis", AttrType::Ints, Some(AttrDefault::Ints(&[])), why::TYPE),
            ],
            &[
                ("x", "The input tensor (any dtype)."),
                ("axis", "The dimensions to remove (an int or a tuple; each must have size 1). The default `()` removes every dimension of size 1."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_squeeze,
        grad: Some(reshape_back),
        kernel: Some(kernel_squeeze),
            // `axis=()` (every axis of size 1) runs per example.
        traits: Traits::of(Family::View).batched(BatchRule::Axes { attr: "axis", empty_is_all: false }),
    },
    OpDef {
        name: "Concat",
        category: Category::Shape,
        doc: "Joins a tuple of tensors along `axis`; they must have one dtype and rank, and equal sizes in every other dimension.",
        schema: Schema::ms(
            &[],
            &[
                ("tensors", "A tuple of tensors, `(a, b, ...)`, of one dtype and rank."),
                ("axis", "The dimension to join along; negative values count from the end. Default 0."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_concat,
        grad: Some(|b, c| {
            // One gradient for the tuple input: a tuple of slices of `dout`.
            let count = match c.input_values.first() {
                Some(AbsVal::Tuple(items)) => items.len(),
                _ => return vec![None],
            };
            let axis = c.attrs.int("axis");
            let slices: Vec<crate::GNode> = (0..count)
                .map(|i| {
                    b.prim(
                        "_ConcatGrad",
                        &[c.dout, c.inputs[0]],
                        vec![
                            ("axis", AttrValue::Int(axis)),
                            ("index", AttrValue::Int(i as i64)),
                        ],
                    )
                })
                .collect();
            vec![Some(b.make_tuple(&slices))]
        }),
        kernel: Some(kernel_concat),
        traits: Traits::of(Family::Concat { stack: false }),
    },
    OpDef {
        name: "Tile",
        category: Category::Shape,
        doc: "Repeats `x` `multiples[i]` times along each dimension `i`; when `multiples` is longer than the rank of `x`, `x` is first given leading dimensions of size 1.",
        schema: Schema::ms(
            &[Override::inputs(&["x"], why::INPUT_NAMES)],
            &[
                ("x", "The input tensor (any dtype)."),
                ("multiples", "Repetitions per dimension: a tuple of non-negative ints at least as long as the rank of `x`."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_tile,
        grad: Some(|b, c| {
            vec![Some(b.prim(
                "_TileGrad",
                &[c.dout, c.inputs[0]],
                attrs_of(c),
            ))]
        }),
        kernel: Some(kernel_tile),
        traits: Traits::of(Family::Strided(Strided::Tile)),
    },
    OpDef {
        name: "BroadcastTo",
        category: Category::Shape,
        doc: "Broadcasts `x` to `shape` (NumPy rules: dimensions are matched from the right and size-1 dimensions are repeated).",
        schema: Schema::ms(
            &[Override::inputs(&["x"], why::INPUT_NAMES)],
            &[
                ("x", "The input tensor (any dtype)."),
                ("shape", "The target shape; -1 keeps the size of the corresponding dimension of `x`."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_broadcast_to,
        grad: Some(|b, c| {
            vec![Some(b.prim(
                "_SumToShapeOf",
                &[c.dout, c.inputs[0]],
                vec![],
            ))]
        }),
        kernel: Some(kernel_broadcast_to),
        traits: Traits::of(Family::Strided(Strided::BroadcastTo)).batched(BatchRule::Shape { attr: "shape", broadcast: true }),
    },
    OpDef {
        name: "Gather",
        category: Category::Shape,
        doc: "Takes slices of `input_params` along `axis` at the positions in `input_indices`: the result has shape `params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis+1:]`. An index outside `[0, params.shape[axis])` is an error, as on MindSpore's CPU.",
        schema: Schema::ms(
            &[Override::attr("axis", AttrType::Int, None, why::TO_ATTR)],
            &[
                ("input_params", "The tensor to take slices from."),
                ("input_indices", "The positions along `axis`: an i32 or i64 tensor of any shape."),
                ("axis", "The dimension of `input_params` to index (negative values count from the end). MindSpore takes it as an input; here it is a constant."),
                ("batch_dims", "How many leading dimensions `input_params` and `input_indices` share as batch dimensions (gathering per batch). Default 0: none."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_gather,
        grad: Some(|b, c| {
            let dx = b.prim(
                "_GatherGrad",
                &[c.inputs[0], c.inputs[1], c.dout],
                attrs_of(c),
            );
            vec![Some(dx), None]
        }),
        kernel: Some(kernel_gather),
        traits: Traits::of(Family::Gather),
    },
    OpDef {
        name: "Shape",
        category: Category::Shape,
        doc: "The shape of `x` as a tuple of i64 scalars; sizes known before run time are constants.",
        schema: Schema::ms(&[], &[("x", "The input tensor.")]),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_shape,
        grad: None,
        kernel: Some(kernel_shape),
        traits: Traits::of(Family::ShapeOf),
    },
    OpDef {
        name: "Flatten",
        category: Category::Shape,
        doc: "Flattens every dimension of `x` but the first: `[N, ...]` becomes `[N, product of the rest]`.",
        schema: Schema::ms(
            &[Override::inputs(&["x"], why::INPUT_NAMES)],
            &[("x", "A tensor of rank at least 1, `[N, ...]`.")],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_flatten,
        grad: Some(reshape_back),
        kernel: Some(kernel_flatten),
        traits: Traits::of(Family::View),
    },
    OpDef {
        name: "StridedSlice",
        category: Category::Shape,
        doc: "Slices `x` from `begin` to `end` (exclusive) with `strides`, one entry per dimension, with MindSpore's (TensorFlow's) mask semantics; dimensions not covered are taken whole.",
        schema: Schema::ms(
            &[
                Override::inputs(&["x"], why::INPUT_NAMES),
                Override::attr("begin", AttrType::IntTuple, None, why::TYPE),
                Override::attr("end", AttrType::IntTuple, None, why::TYPE),
                Override::attr("strides", AttrType::IntTuple, None, why::TYPE),
            ],
            &[
                ("x", "The input tensor (any dtype)."),
                ("begin", "Start index per sliced dimension (negative values count from the end)."),
                ("end", "End index (exclusive) per sliced dimension, same length as `begin`."),
                ("strides", "Step per sliced dimension, non-zero (negative steps walk backwards), same length as `begin`."),
                ("begin_mask", "Bit `i` set: ignore `begin[i]` and start at the first element (the last for a negative stride). Default 0."),
                ("end_mask", "Bit `i` set: ignore `end[i]` and slice to the end of the dimension. Default 0."),
                ("ellipsis_mask", "Bit `i` set: entry `i` stands for as many whole dimensions as needed (at most one bit). Default 0."),
                ("new_axis_mask", "Bit `i` set: entry `i` inserts a new dimension of size 1. Default 0."),
                ("shrink_axis_mask", "Bit `i` set: take the single element `begin[i]` and remove that dimension. Default 0."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_strided_slice,
        grad: Some(|b, c| {
            vec![Some(b.prim(
                "_StridedSliceGrad",
                &[c.dout, c.inputs[0]],
                attrs_of(c),
            ))]
        }),
        kernel: Some(kernel_strided_slice),
        traits: Traits::of(Family::Strided(Strided::StridedSlice)),
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    let t = |v: &[i64]| AttrValue::Tuple(v.iter().map(|&i| AttrValue::Int(i)).collect());
    let i = AttrValue::Int;
    vec![
        Sample::new("Reshape", vec![random_f64(&[2, 3, 4], 20, -1.0, 1.0)])
            .attr("shape", t(&[4, -1])),
        Sample::new("Reshape", vec![random_f64(&[6], 21, -1.0, 1.0)]).attr("shape", t(&[1, 2, 3])),
        Sample::new("Transpose", vec![random_f64(&[2, 3, 4], 22, -1.0, 1.0)])
            .attr("perm", t(&[2, 0, 1])),
        Sample::new("Transpose", vec![random_f64(&[3, 2], 23, -1.0, 1.0)])
            .attr("perm", t(&[-1, 0])),
        Sample::new("ExpandDims", vec![random_f64(&[2, 3], 24, -1.0, 1.0)]).attr("axis", i(-1)),
        Sample::new("ExpandDims", vec![random_f64(&[2, 3], 25, -1.0, 1.0)]).attr("axis", i(0)),
        Sample::new("Squeeze", vec![random_f64(&[1, 3, 1], 26, -1.0, 1.0)]),
        Sample::new("Squeeze", vec![random_f64(&[1, 3, 1], 27, -1.0, 1.0)]).attr("axis", i(-1)),
        Sample::new(
            "Concat",
            vec![KValue::Tuple(vec![
                random_f64(&[2, 3], 28, -1.0, 1.0),
                random_f64(&[2, 1], 29, -1.0, 1.0),
                random_f64(&[2, 2], 30, -1.0, 1.0),
            ])],
        )
        .attr("axis", i(-1)),
        Sample::new(
            "Concat",
            vec![KValue::Tuple(vec![
                random_f64(&[1, 2], 31, -1.0, 1.0),
                random_f64(&[2, 2], 32, -1.0, 1.0),
            ])],
        ),
        Sample::new("Tile", vec![random_f64(&[2, 3], 33, -1.0, 1.0)])
            .attr("multiples", t(&[2, 1, 2])),
        Sample::new("BroadcastTo", vec![random_f64(&[3, 1], 34, -1.0, 1.0)])
            .attr("shape", t(&[2, -1, 4])),
        Sample::new(
            "Gather",
            vec![
                random_f64(&[4, 3], 35, -1.0, 1.0),
                ints(DType::I32, &[2, 2], &[0, 3, 3, 1]),
            ],
        )
        .attr("axis", i(0)),
        Sample::new(
            "Gather",
            vec![
                random_f64(&[2, 4, 3], 36, -1.0, 1.0),
                ints(DType::I64, &[2, 2], &[0, 3, 2, 2]),
            ],
        )
        .attr("axis", i(-2))
        .attr("batch_dims", i(1)),
        Sample::new("Shape", vec![random_f64(&[2, 3], 37, -1.0, 1.0)]),
        Sample::new("Flatten", vec![random_f64(&[2, 3, 2], 38, -1.0, 1.0)]),
        Sample::new("StridedSlice", vec![random_f64(&[4, 5], 39, -1.0, 1.0)])
            .attr("begin", t(&[1, 0]))
            .attr("end", t(&[4, 5]))
            .attr("strides", t(&[2, 2])),
        Sample::new("StridedSlice", vec![random_f64(&[3, 4, 2], 40, -1.0, 1.0)])
            .attr("begin", t(&[0, -1, 1]))
            .attr("end", t(&[0, 0, 2]))
            .attr("strides", t(&[1, -1, 1]))
            .attr("begin_mask", i(1))
            .attr("end_mask", i(3))
            .attr("shrink_axis_mask", i(4)),
    ]
}
