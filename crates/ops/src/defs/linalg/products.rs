//! More linear algebra. Products here: Outer, Dot, Mv, Mm, Addmm, Addmv,
//! Baddbmm, Addbmm, BatchMatMulExt, MatMulExt; Einsum is in
//! `linalg::einsum`; MatrixInverse, MatrixDeterminant, Cholesky, Trace,
//! Cross, Diag and DiagPart in `linalg::matrix`.
//!
//! Products use `linalg`'s GEMM kernels; the `add*` forms compute
//! `beta·input + alpha·product` (with `input` broadcast, and ignored when
//! `beta` is 0, as `torch.addmm`). `MatMulExt` is `torch.matmul`: 1-D operands
//! are promoted to matrices and the result squeezed, batch dimensions
//! broadcast; `BatchMatMulExt` is `torch.bmm`, strictly 3-D with equal
//! batches. `MatrixInverse` and `MatrixDeterminant` use an LU factorisation
//! with partial pivoting in f64; `Cholesky` checks the matrix is symmetric (to
//! a relative 1e-5) and positive definite, as MindSpore's kernel refuses
//! others, and factors its symmetric part.
//!
//! Gradients are MindSpore's bprops; `Cholesky`'s is the symmetric one
//! (`CholeskyGrad`, computed by `_CholeskyGrad`), `Trace`'s is `_TraceGrad`.

use crate::schema::Schema;
use crate::Family;
use crate::MatMulForm;
use crate::Traits;
use ir::{AbsVal, AttrValue, DType, Dim, Shape};
use tensor::Tensor;

use crate::defs::elementwise::is_float_input;
use crate::defs::internal::broadcast_to;
use crate::defs::linalg::{batch_matmul, dims_compatible, matmul};
use crate::defs::shape::{dims_of, fmt_dims};
use crate::infer::{broadcast_shapes, promote, InferCall};
use crate::kernel::{broadcast_shape, KValue, KernelCall};
use crate::{Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef};

// ---------------------------------------------------------------------------
// Helpers.

pub(crate) fn ok(t: Tensor) -> Result<KValue, OpError> {
    Ok(KValue::Tensor(t))
}

pub(crate) fn tensor_abs(dtype: DType, dims: Option<Vec<Dim>>) -> AbsVal {
    AbsVal::Tensor {
        dtype,
        shape: dims.map_or(Shape::Unranked, Shape::Ranked),
    }
}

/// Input `i`'s dtype and dims, checking its rank is one of `ranks` (when known).
pub(crate) fn ranked(
    call: &InferCall,
    i: usize,
    ranks: &[usize],
) -> Result<(DType, Option<Vec<Dim>>), OpError> {
    let (dtype, dims) = dims_of(call, i)?;
    if dtype.is_bool() {
        return Err(OpError::input(
            i,
            format!(
                "`{}` needs a numeric `{}`, but it is {}",
                call.op.name,
                call.input_name(i),
                call.inputs[i]
            ),
        ));
    }
    if let Some(d) = &dims {
        if !ranks.contains(&d.len()) {
            let want: Vec<String> = ranks.iter().map(|r| format!("{r}-D")).collect();
            return Err(OpError::input(
                i,
                format!(
                    "`{}` needs a {} `{}`, got {}",
                    call.op.name,
                    want.join(" or "),
                    call.input_name(i),
                    call.inputs[i]
                ),
            ));
        }
    }
    Ok((dtype, dims))
}

pub(crate) fn same_dtype(
    call: &InferCall,
    a: (usize, DType),
    b: (usize, DType),
) -> Result<(), OpError> {
    if a.1 != b.1 {
        return Err(OpError::input(
            b.0,
            format!(
                "`{}` needs `{}` and `{}` of one dtype, but they are {} and {}",
                call.op.name,
                call.input_name(a.0),
                call.input_name(b.0),
                a.1,
                b.1
            ),
        ));
    }
    Ok(())
}

/// Checks that two dimensions that must agree can.
fn agree(call: &InferCall, i: usize, a: &Dim, b: &Dim, what: &str) -> Result<(), OpError> {
    if dims_compatible(a, b) {
        Ok(())
    } else {
        Err(OpError::input(
            i,
            format!("`{}`: {what} differ: {a} and {b}", call.op.name),
        ))
    }
}

pub(crate) fn prim(b: &mut dyn GradBuilder, name: &str, inputs: &[GNode]) -> GNode {
    b.prim(name, inputs, vec![])
}

pub(crate) fn flag(v: bool) -> AttrValue {
    AttrValue::Bool(v)
}

fn transpose2(b: &mut dyn GradBuilder, x: GNode) -> GNode {
    b.prim(
        "Transpose",
        &[x],
        vec![(
            "perm",
            AttrValue::Tuple(vec![AttrValue::Int(1), AttrValue::Int(0)]),
        )],
    )
}

fn scale(b: &mut dyn GradBuilder, x: GNode, k: f64) -> GNode {
    if k == 1.0 {
        return x;
    }
    let s = b.scalar(k);
    prim(b, "Mul", &[x, s])
}

pub(crate) fn kernel_dims(
    op: &str,
    t: &Tensor,
    ranks: &[usize],
    what: &str,
) -> Result<(), OpError> {
    if ranks.contains(&t.rank()) {
        Ok(())
    } else {
        Err(OpError::call(format!(
            "`{op}`: `{what}` has shape {:?}",
            t.shape()
        )))
    }
}

// ---------------------------------------------------------------------------
// Outer, Dot, Mv, Mm.

fn infer_outer(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (_, a) = ranked(call, 0, &[1])?;
    let (_, b) = ranked(call, 1, &[1])?;
    let dtype = promote(&call.inputs[0], &call.inputs[1]).unwrap_or(DType::F32);
    let d = |v: Option<Vec<Dim>>| v.map_or(Dim::Unknown, |v| v[0].clone());
    Ok(tensor_abs(dtype, Some(vec![d(a), d(b)])))
}

fn k_outer(c: &KernelCall) -> Result<KValue, OpError> {
    let (a, b) = (c.tensor(0)?, c.tensor(1)?);
    kernel_dims("Outer", a, &[1], "input")?;
    kernel_dims("Outer", b, &[1], "vec2")?;
    let dtype = c.promoted();
    let (a2, b2) = (
        a.cast(dtype).reshaped(vec![a.numel(), 1]),
        b.cast(dtype).reshaped(vec![1, b.numel()]),
    );
    let (a2, b2) = (
        a2.map_err(|e| OpError::call(e.0))?,
        b2.map_err(|e| OpError::call(e.0))?,
    );
    ok(matmul(&a2, &b2, false, false)?)
}

fn infer_dot(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (da, a) = ranked(call, 0, &[1])?;
    let (db, b) = ranked(call, 1, &[1])?;
    same_dtype(call, (0, da), (1, db))?;
    if let (Some(a), Some(b)) = (a, b) {
        agree(call, 1, &a[0], &b[0], "the vectors' lengths")?;
    }
    Ok(tensor_abs(da, Some(vec![])))
}

fn k_dot(c: &KernelCall) -> Result<KValue, OpError> {
    let (a, b) = (c.tensor(0)?, c.tensor(1)?);
    if a.rank() != 1 || a.shape() != b.shape() {
        return Err(OpError::call(format!(
            "`Dot` needs two vectors of one length, got {:?} and {:?}",
            a.shape(),
            b.shape()
        )));
    }
    let r = matmul(
        &a.clone()
            .reshaped(vec![1, a.numel()])
            .map_err(|e| OpError::call(e.0))?,
        &b.clone()
            .reshaped(vec![b.numel(), 1])
            .map_err(|e| OpError::call(e.0))?,
        false,
        false,
    )?;
    ok(r.reshaped(vec![]).map_err(|e| OpError::call(e.0))?)
}

fn infer_mv(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (da, a) = ranked(call, 0, &[2])?;
    let (db, v) = ranked(call, 1, &[1])?;
    same_dtype(call, (0, da), (1, db))?;
    if let (Some(a), Some(v)) = (&a, &v) {
        agree(
            call,
            1,
            &a[1],
            &v[0],
            "the matrix's columns and the vector's length",
        )?;
    }
    Ok(tensor_abs(
        da,
        Some(vec![a.map_or(Dim::Unknown, |a| a[0].clone())]),
    ))
}

fn k_mv(c: &KernelCall) -> Result<KValue, OpError> {
    let (a, v) = (c.tensor(0)?, c.tensor(1)?);
    kernel_dims("Mv", a, &[2], "input")?;
    kernel_dims("Mv", v, &[1], "vec")?;
    let col = v
        .clone()
        .reshaped(vec![v.numel(), 1])
        .map_err(|e| OpError::call(e.0))?;
    let r = matmul(a, &col, false, false)?;
    ok(r.reshaped(vec![a.shape()[0]])
        .map_err(|e| OpError::call(e.0))?)
}

fn infer_mm(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (da, a) = ranked(call, 0, &[2])?;
    let (db, b) = ranked(call, 1, &[2])?;
    same_dtype(call, (0, da), (1, db))?;
    if let (Some(a), Some(b)) = (&a, &b) {
        agree(call, 1, &a[1], &b[0], "the inner dimensions")?;
    }
    let m = a.map_or(Dim::Unknown, |a| a[0].clone());
    let n = b.map_or(Dim::Unknown, |b| b[1].clone());
    Ok(tensor_abs(da, Some(vec![m, n])))
}

fn grad_mm(b: &mut dyn GradBuilder, c: &GradCall, name: &str) -> Vec<Option<GNode>> {
    let (x, y, d) = (c.inputs[0], c.inputs[1], c.dout);
    let dx = is_float_input(c, 0).then(|| b.prim(name, &[d, y], vec![("transpose_b", flag(true))]));
    let dy = is_float_input(c, 1).then(|| b.prim(name, &[x, d], vec![("transpose_a", flag(true))]));
    vec![dx, dy]
}

// ---------------------------------------------------------------------------
// Addmm, Addmv, Baddbmm, Addbmm.

/// `beta·input + alpha·prod`, `input` broadcast to `prod`'s shape.
fn add_scaled(
    op: &str,
    input: &Tensor,
    prod: &Tensor,
    beta: f64,
    alpha: f64,
) -> Result<Tensor, OpError> {
    let shape = prod.shape().to_vec();
    if broadcast_shape(input.shape(), &shape).as_deref() != Some(shape.as_slice()) {
        return Err(OpError::input(
            0,
            format!(
                "`{op}`: `input` of shape {:?} does not broadcast to {shape:?}",
                input.shape()
            ),
        ));
    }
    let inp = broadcast_to(&input.to_f64_vec(), input.shape(), &shape);
    let v: Vec<f64> = prod
        .to_f64_vec()
        .iter()
        .zip(inp)
        .map(|(&p, i)| {
            if beta == 0.0 {
                alpha * p
            } else {
                beta * i + alpha * p
            }
        })
        .collect();
    let t = Tensor::from_f64(shape, v).map_err(|e| OpError::call(e.0))?;
    Ok(t.cast(prod.dtype()))
}

fn beta_alpha(c: &crate::Attrs) -> (f64, f64) {
    (
        crate::defs::reduce::aggregate::number(c, "beta"),
        crate::defs::reduce::aggregate::number(c, "alpha"),
    )
}

/// The shape rule of an `add*` primitive whose product has `prod` dims.
fn infer_add_form(
    call: &InferCall,
    prod: Option<Vec<Dim>>,
    dtype: DType,
) -> Result<AbsVal, OpError> {
    let (di, si) = dims_of(call, 0)?;
    same_dtype(call, (1, dtype), (0, di))?;
    if let (Some(p), Some(_)) = (&prod, &si) {
        let out = broadcast_shapes(
            &call.inputs[0].shape().unwrap_or(Shape::Unranked),
            &Shape::Ranked(p.clone()),
        )
        .map_err(|m| OpError::input(0, format!("`{}`: `input` {m}", call.op.name)))?;
        if out.rank() != Some(p.len()) {
            return Err(OpError::input(
                0,
                format!(
                    "`{}`: `input` {} has more dimensions than the product {}",
                    call.op.name,
                    call.inputs[0],
                    fmt_dims(p)
                ),
            ));
        }
    }
    Ok(tensor_abs(dtype, prod))
}

fn infer_addmm(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (d1, a) = ranked(call, 1, &[2])?;
    let (d2, b) = ranked(call, 2, &[2])?;
    same_dtype(call, (1, d1), (2, d2))?;
    if let (Some(a), Some(b)) = (&a, &b) {
        agree(call, 2, &a[1], &b[0], "the inner dimensions")?;
    }
    let prod = vec![
        a.map_or(Dim::Unknown, |a| a[0].clone()),
        b.map_or(Dim::Unknown, |b| b[1].clone()),
    ];
    infer_add_form(call, Some(prod), d1)
}

fn infer_addmv(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (d1, a) = ranked(call, 1, &[2])?;
    let (d2, v) = ranked(call, 2, &[1])?;
    same_dtype(call, (1, d1), (2, d2))?;
    if let (Some(a), Some(v)) = (&a, &v) {
        agree(
            call,
            2,
            &a[1],
            &v[0],
            "the matrix's columns and the vector's length",
        )?;
    }
    infer_add_form(
        call,
        Some(vec![a.map_or(Dim::Unknown, |a| a[0].clone())]),
        d1,
    )
}

fn infer_bmm_form(call: &InferCall, x: usize, y: usize) -> Result<(DType, Vec<Dim>), OpError> {
    let (d1, a) = ranked(call, x, &[3])?;
    let (d2, b) = ranked(call, y, &[3])?;
    same_dtype(call, (x, d1), (y, d2))?;
    let a = a.unwrap_or(vec![Dim::Unknown; 3]);
    let b = b.unwrap_or(vec![Dim::Unknown; 3]);
    agree(call, y, &a[0], &b[0], "the batch sizes")?;
    agree(call, y, &a[2], &b[1], "the inner dimensions")?;
    let batch = if matches!(a[0], Dim::Known(_)) {
        a[0].clone()
    } else {
        b[0].clone()
    };
    Ok((d1, vec![batch, a[1].clone(), b[2].clone()]))
}

fn infer_baddbmm(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (d, p) = infer_bmm_form(call, 1, 2)?;
    infer_add_form(call, Some(p), d)
}

fn infer_addbmm(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (d, p) = infer_bmm_form(call, 1, 2)?;
    infer_add_form(call, Some(p[1..].to_vec()), d)
}

fn bmm_exact(op: &str, a: &Tensor, b: &Tensor) -> Result<Tensor, OpError> {
    kernel_dims(op, a, &[3], "batch1")?;
    kernel_dims(op, b, &[3], "batch2")?;
    if a.shape()[0] != b.shape()[0] {
        return Err(OpError::call(format!(
            "`{op}`: batch sizes differ: {:?} and {:?}",
            a.shape(),
            b.shape()
        )));
    }
    batch_matmul(a, b, false, false)
}

fn k_add_form(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    let (input, x, y) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let prod = match op {
        "Addmm" => matmul(x, y, false, false)?,
        "Addmv" => {
            kernel_dims(op, y, &[1], "vec")?;
            let col = y
                .clone()
                .reshaped(vec![y.numel(), 1])
                .map_err(|e| OpError::call(e.0))?;
            matmul(x, &col, false, false)?
                .reshaped(vec![x.shape()[0]])
                .map_err(|e| OpError::call(e.0))?
        }
        "Baddbmm" => bmm_exact(op, x, y)?,
        _ => {
            let p = bmm_exact(op, x, y)?;
            let (n, m) = (p.shape()[1], p.shape()[2]);
            let v = p.to_f64_vec();
            let mut s = vec![0.0; n * m];
            for chunk in v.chunks(n * m) {
                s.iter_mut().zip(chunk).for_each(|(a, b)| *a += b);
            }
            Tensor::from_f64(vec![n, m], s)
                .map_err(|e| OpError::call(e.0))?
                .cast(p.dtype())
        }
    };
    let (beta, alpha) = beta_alpha(c.attrs);
    ok(add_scaled(op, input, &prod, beta, alpha)?)
}

fn grad_add_form(b: &mut dyn GradBuilder, c: &GradCall, op: &str) -> Vec<Option<GNode>> {
    let (beta, alpha) = beta_alpha(c.attrs);
    let (input, x, y, d) = (c.inputs[0], c.inputs[1], c.inputs[2], c.dout);
    let di = is_float_input(c, 0).then(|| {
        let g = scale(b, d, beta);
        prim(b, "_SumToShapeOf", &[g, input])
    });
    let (dx, dy) = match op {
        "Addmm" => (
            b.prim("MatMul", &[d, y], vec![("transpose_b", flag(true))]),
            b.prim("MatMul", &[x, d], vec![("transpose_a", flag(true))]),
        ),
        "Addmv" => {
            let xt = transpose2(b, x);
            (prim(b, "Outer", &[d, y]), prim(b, "Mv", &[xt, d]))
        }
        "Baddbmm" => (
            b.prim("BatchMatMul", &[d, y], vec![("transpose_b", flag(true))]),
            b.prim("BatchMatMul", &[x, d], vec![("transpose_a", flag(true))]),
        ),
        _ => {
            let d3 = b.prim("ExpandDims", &[d], vec![("axis", AttrValue::Int(0))]);
            (
                b.prim("BatchMatMul", &[d3, y], vec![("transpose_b", flag(true))]),
                b.prim("BatchMatMul", &[x, d3], vec![("transpose_a", flag(true))]),
            )
        }
    };
    let dx = is_float_input(c, 1).then(|| scale(b, dx, alpha));
    let dy = is_float_input(c, 2).then(|| scale(b, dy, alpha));
    vec![di, dx, dy]
}

// ---------------------------------------------------------------------------
// BatchMatMulExt, MatMulExt.

fn infer_bmm_ext(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (d, p) = infer_bmm_form(call, 0, 1)?;
    Ok(tensor_abs(d, Some(p)))
}

fn infer_matmul_ext(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (da, a) = ranked(call, 0, &[1, 2, 3, 4, 5, 6, 7, 8])?;
    let (db, b) = ranked(call, 1, &[1, 2, 3, 4, 5, 6, 7, 8])?;
    same_dtype(call, (0, da), (1, db))?;
    let (Some(a), Some(b)) = (a, b) else {
        return Ok(tensor_abs(da, None));
    };
    let a2 = if a.len() == 1 {
        vec![Dim::Known(1), a[0].clone()]
    } else {
        a.clone()
    };
    let b2 = if b.len() == 1 {
        vec![b[0].clone(), Dim::Known(1)]
    } else {
        b.clone()
    };
    let (ab, am) = a2.split_at(a2.len() - 2);
    let (bb, bm) = b2.split_at(b2.len() - 2);
    agree(call, 1, &am[1], &bm[0], "the inner dimensions")?;
    let batch = broadcast_shapes(&Shape::Ranked(ab.to_vec()), &Shape::Ranked(bb.to_vec()))
        .map_err(|m| OpError::call(format!("`MatMulExt`: batch dimensions: {m}")))?;
    let mut out = batch.dims().map(<[Dim]>::to_vec).unwrap_or_default();
    if a.len() > 1 {
        out.push(am[0].clone());
    }
    if b.len() > 1 {
        out.push(bm[1].clone());
    }
    Ok(tensor_abs(da, Some(out)))
}

fn k_matmul_ext(c: &KernelCall) -> Result<KValue, OpError> {
    let (a, b) = (c.tensor(0)?, c.tensor(1)?);
    if a.rank() == 0 || b.rank() == 0 {
        return Err(OpError::call("`MatMulExt` needs tensors of rank 1 or more"));
    }
    let re = |t: &Tensor, s: Vec<usize>| t.clone().reshaped(s).map_err(|e| OpError::call(e.0));
    let a2 = if a.rank() == 1 {
        re(a, vec![1, a.numel()])?
    } else {
        a.clone()
    };
    let b2 = if b.rank() == 1 {
        re(b, vec![b.numel(), 1])?
    } else {
        b.clone()
    };
    let r = batch_matmul(&a2, &b2, false, false)?;
    let mut shape = r.shape().to_vec();
    if b.rank() == 1 {
        shape.pop();
    }
    if a.rank() == 1 {
        let n = shape.len();
        shape.remove(n - 1 - usize::from(b.rank() != 1));
    }
    let r = r.cast(a.dtype());
    ok(re(&r, shape)?)
}

/// torch.matmul's gradient: the batched products of the 2-D forms, summed
/// over broadcast batch dimensions and reshaped back.
fn grad_matmul_ext(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let rank = |i: usize| c.input_values[i].shape().and_then(|s| s.rank());
    let (Some(ra), Some(rb)) = (rank(0), rank(1)) else {
        return vec![None, None];
    };
    let (x, y) = (c.inputs[0], c.inputs[1]);
    let expand = |b: &mut dyn GradBuilder, v: GNode, axis: i64| {
        b.prim("ExpandDims", &[v], vec![("axis", AttrValue::Int(axis))])
    };
    let x2 = if ra == 1 { expand(b, x, 0) } else { x };
    let y2 = if rb == 1 { expand(b, y, -1) } else { y };
    let mut d = c.dout;
    if ra == 1 {
        d = expand(b, d, if rb == 1 { 0 } else { -2 });
    }
    if rb == 1 {
        d = expand(b, d, -1);
    }
    let back = |b: &mut dyn GradBuilder, g: GNode, two_d: GNode, orig: GNode| {
        let s = prim(b, "_SumToShapeOf", &[g, two_d]);
        prim(b, "_ReshapeLike", &[s, orig])
    };
    let dx = is_float_input(c, 0).then(|| {
        let g = b.prim("BatchMatMul", &[d, y2], vec![("transpose_b", flag(true))]);
        back(b, g, x2, x)
    });
    let dy = is_float_input(c, 1).then(|| {
        let g = b.prim("BatchMatMul", &[x2, d], vec![("transpose_a", flag(true))]);
        back(b, g, y2, y)
    });
    vec![dx, dy]
}

// ---------------------------------------------------------------------------
// The table.

pub(crate) const fn la(
    name: &'static str,
    doc: &'static str,
    params: Schema,
    infer: crate::InferFn,
    grad: Option<crate::GradFn>,
    kernel: crate::KernelFn,
) -> OpDef {
    OpDef {
        name,
        category: Category::LinearAlgebra,
        doc,
        schema: params,
        variadic: false,
        output: OutputDef::Single,
        infer,
        grad,
        kernel: Some(kernel),
        traits: Traits::NONE,
    }
}

pub const OPS: &[OpDef] = &[
    la(
        "Outer",
        "The outer product of two vectors, `input[:, None] * vec2[None, :]`, in their promoted dtype.",
        Schema::ms(&[], &[("input", "A 1-D tensor, `[n]`."), ("vec2", "A 1-D tensor, `[m]`.")]),
        infer_outer,
        Some(|b, c| {
            let (x, y, d) = (c.inputs[0], c.inputs[1], c.dout);
            let dx = is_float_input(c, 0).then(|| prim(b, "Mv", &[d, y]));
            let dy = is_float_input(c, 1).then(|| {
                let dt = transpose2(b, d);
                prim(b, "Mv", &[dt, x])
            });
            vec![dx, dy]
        }),
        k_outer,
    ),
    la(
        "Dot",
        "The inner product of two vectors of one length and dtype: a rank-0 tensor.",
        Schema::ms(
            &[],
            &[("input", "A 1-D tensor."), ("other", "A 1-D tensor of `input`'s length and dtype.")],
        ),
        infer_dot,
        Some(|b, c| {
            let dx = is_float_input(c, 0).then(|| prim(b, "Mul", &[c.dout, c.inputs[1]]));
            let dy = is_float_input(c, 1).then(|| prim(b, "Mul", &[c.dout, c.inputs[0]]));
            vec![dx, dy]
        }),
        k_dot,
    ),
    la(
        "Mv",
        "The product of a matrix `[n, m]` and a vector `[m]`: a vector `[n]`.",
        Schema::ms(
            &[],
            &[
                ("input", "A 2-D tensor, `[n, m]`."),
                ("vec", "A 1-D tensor, `[m]`, of `input`'s dtype."),
            ],
        ),
        infer_mv,
        Some(|b, c| {
            let (x, v, d) = (c.inputs[0], c.inputs[1], c.dout);
            let dx = is_float_input(c, 0).then(|| prim(b, "Outer", &[d, v]));
            let dv = is_float_input(c, 1).then(|| {
                let xt = transpose2(b, x);
                prim(b, "Mv", &[xt, d])
            });
            vec![dx, dv]
        }),
        k_mv,
    ),
    la(
        "Mm",
        "The product of two matrices, `input @ mat2` (`[n, k] @ [k, m]`), of one dtype.",
        Schema::ms(
            &[],
            &[
                ("input", "A 2-D tensor, `[n, k]`."),
                ("mat2", "A 2-D tensor, `[k, m]`, of `input`'s dtype."),
            ],
        ),
        infer_mm,
        Some(|b, c| grad_mm(b, c, "MatMul")),
        |c| ok(matmul(c.tensor(0)?, c.tensor(1)?, false, false)?),
    )
    .in_family(Family::MatMul { form: MatMulForm::Plain, batched: false }),
    la(
        "Addmm",
        "`beta * input + alpha * (mat1 @ mat2)`, `input` broadcast to `[n, p]` (ignored when `beta` is 0).",
        Schema::ms(
            &[],
            &[
                ("input", "Broadcastable to `[n, p]`."),
                ("mat1", "A 2-D tensor, `[n, m]`."),
                ("mat2", "A 2-D tensor, `[m, p]`."),
                ("beta", "The factor of `input` (default 1); with 0, `input` is ignored."),
                ("alpha", "The factor of the product (default 1)."),
            ],
        ),
        infer_addmm,
        Some(|b, c| grad_add_form(b, c, "Addmm")),
        |c| k_add_form(c, "Addmm"),
    ),
    la(
        "Addmv",
        "`beta * input + alpha * (mat @ vec)`, `input` broadcast to `[n]` (ignored when `beta` is 0).",
        Schema::ms(
            &[],
            &[
                ("input", "Broadcastable to `[n]`."),
                ("mat", "A 2-D tensor, `[n, m]`."),
                ("vec", "A 1-D tensor, `[m]`."),
                ("beta", "The factor of `input` (default 1); with 0, `input` is ignored."),
                ("alpha", "The factor of the product (default 1)."),
            ],
        ),
        infer_addmv,
        Some(|b, c| grad_add_form(b, c, "Addmv")),
        |c| k_add_form(c, "Addmv"),
    ),
    la(
        "Baddbmm",
        "`beta * input + alpha * bmm(batch1, batch2)`, `input` broadcast to `[b, n, p]` (ignored when `beta` is 0).",
        Schema::ms(
            &[],
            &[
                ("input", "Broadcastable to `[b, n, p]`."),
                ("batch1", "A 3-D tensor, `[b, n, m]`."),
                ("batch2", "A 3-D tensor, `[b, m, p]`."),
                ("beta", "The factor of `input` (default 1); with 0, `input` is ignored."),
                ("alpha", "The factor of the product (default 1)."),
            ],
        ),
        infer_baddbmm,
        Some(|b, c| grad_add_form(b, c, "Baddbmm")),
        |c| k_add_form(c, "Baddbmm"),
    ),
    la(
        "Addbmm",
        "`beta * input + alpha * sum_i(batch1[i] @ batch2[i])`, `input` broadcast to `[n, p]` (ignored when `beta` is 0).",
        Schema::ms(
            &[],
            &[
                ("input", "Broadcastable to `[n, p]`."),
                ("batch1", "A 3-D tensor, `[b, n, m]`."),
                ("batch2", "A 3-D tensor, `[b, m, p]`."),
                ("beta", "The factor of `input` (default 1); with 0, `input` is ignored."),
                ("alpha", "The factor of the product (default 1)."),
            ],
        ),
        infer_addbmm,
        Some(|b, c| grad_add_form(b, c, "Addbmm")),
        |c| k_add_form(c, "Addbmm"),
    ),
    la(
        "BatchMatMulExt",
        "`torch.bmm`: the product of two 3-D tensors with equal batch sizes, `[b, n, m] @ [b, m, p]` (no broadcasting).",
        Schema::ms(
            &[],
            &[
                ("input", "A 3-D tensor, `[b, n, m]`."),
                ("mat2", "A 3-D tensor, `[b, m, p]`, of `input`'s dtype."),
            ],
        ),
        infer_bmm_ext,
        Some(|b, c| grad_mm(b, c, "BatchMatMul")),
        |c| ok(bmm_exact("BatchMatMulExt", c.tensor(0)?, c.tensor(1)?)?),
    )
    .in_family(Family::MatMul { form: MatMulForm::Plain, batched: true }),
    la(
        "MatMulExt",
        "`torch.matmul`: a 1-D operand is a row (left) or column (right) vector whose dimension is removed from the result; two vectors give their dot product; batch dimensions broadcast.",
        Schema::ms(
            &[],
            &[
                ("input", "A tensor of rank 1 or more."),
                ("other", "A tensor of rank 1 or more, of `input`'s dtype."),
            ],
        ),
        infer_matmul_ext,
        Some(grad_matmul_ext),
        k_matmul_ext,
    )
    .in_family(Family::MatMul { form: MatMulForm::Plain, batched: true }),
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let r = random_f64;
    let f = AttrValue::float;
    vec![
        Sample::new(
            "Outer",
            vec![r(&[3], 530, -1.0, 1.0), r(&[4], 531, -1.0, 1.0)],
        ),
        Sample::new(
            "Dot",
            vec![r(&[4], 532, -1.0, 1.0), r(&[4], 533, -1.0, 1.0)],
        ),
        Sample::new(
            "Mv",
            vec![r(&[3, 4], 534, -1.0, 1.0), r(&[4], 535, -1.0, 1.0)],
        ),
        Sample::new(
            "Mm",
            vec![r(&[3, 4], 536, -1.0, 1.0), r(&[4, 2], 537, -1.0, 1.0)],
        ),
        Sample::new(
            "Addmm",
            vec![
                r(&[2], 538, -1.0, 1.0),
                r(&[3, 4], 539, -1.0, 1.0),
                r(&[4, 2], 540, -1.0, 1.0),
            ],
        )
        .attr("beta", f(0.5))
        .attr("alpha", f(2.0)),
        Sample::new(
            "Addmv",
            vec![
                r(&[3], 541, -1.0, 1.0),
                r(&[3, 4], 542, -1.0, 1.0),
                r(&[4], 543, -1.0, 1.0),
            ],
        )
        .attr("alpha", f(-1.5)),
        Sample::new(
            "Baddbmm",
            vec![
                r(&[1, 3, 2], 544, -1.0, 1.0),
                r(&[2, 3, 4], 545, -1.0, 1.0),
                r(&[2, 4, 2], 546, -1.0, 1.0),
            ],
        )
        .attr("beta", f(2.0)),
        Sample::new(
            "Addbmm",
            vec![
                r(&[3, 2], 547, -1.0, 1.0),
                r(&[2, 3, 4], 548, -1.0, 1.0),
                r(&[2, 4, 2], 549, -1.0, 1.0),
            ],
        )
        .attr("beta", f(0.5))
        .attr("alpha", f(0.25)),
        Sample::new(
            "BatchMatMulExt",
            vec![r(&[2, 3, 4], 550, -1.0, 1.0), r(&[2, 4, 2], 551, -1.0, 1.0)],
        ),
        Sample::new(
            "MatMulExt",
            vec![
                r(&[2, 1, 3, 4], 552, -1.0, 1.0),
                r(&[2, 4, 2], 553, -1.0, 1.0),
            ],
        ),
        Sample::new(
            "MatMulExt",
            vec![r(&[4], 554, -1.0, 1.0), r(&[2, 4, 3], 555, -1.0, 1.0)],
        ),
        Sample::new(
            "MatMulExt",
            vec![r(&[3, 4], 556, -1.0, 1.0), r(&[4], 557, -1.0, 1.0)],
        ),
        Sample::new(
            "MatMulExt",
            vec![r(&[4], 558, -1.0, 1.0), r(&[4], 559, -1.0, 1.0)],
        ),
    ]
}
