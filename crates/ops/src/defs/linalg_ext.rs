//! More linear algebra: Outer, Dot, Mv, Mm, Addmm, Addmv, Baddbmm, Addbmm,
//! BatchMatMulExt, MatMulExt, MatrixInverse, MatrixDeterminant, Cholesky,
//! Trace, Cross, Diag, DiagPart (Einsum is in `linalg_ext_einsum`).
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

use ir::{AbsVal, AttrValue, DType, Dim, Shape};
use tensor::Tensor;

use crate::defs::elementwise::is_float_input;
use crate::defs::internal::broadcast_to;
use crate::defs::linalg::{batch_matmul, dims_compatible, matmul};
use crate::defs::shape::{dims_of, fmt_dims, op_axis};
use crate::infer::{broadcast_shapes, promote, InferCall};
use crate::kernel::{broadcast_shape, KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef,
    ParamDef,
};

// ---------------------------------------------------------------------------
// Helpers.

fn ok(t: Tensor) -> Result<KValue, OpError> {
    Ok(KValue::Tensor(t))
}

fn tensor_abs(dtype: DType, dims: Option<Vec<Dim>>) -> AbsVal {
    AbsVal::Tensor {
        dtype,
        shape: dims.map_or(Shape::Unranked, Shape::Ranked),
    }
}

/// Input `i`'s dtype and dims, checking its rank is one of `ranks` (when known).
fn ranked(
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

fn same_dtype(call: &InferCall, a: (usize, DType), b: (usize, DType)) -> Result<(), OpError> {
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

fn prim(b: &mut dyn GradBuilder, name: &str, inputs: &[GNode]) -> GNode {
    b.prim(name, inputs, vec![])
}

fn flag(v: bool) -> AttrValue {
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

fn kernel_dims(op: &str, t: &Tensor, ranks: &[usize], what: &str) -> Result<(), OpError> {
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
    (c.f64("beta"), c.f64("alpha"))
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
// MatrixInverse, MatrixDeterminant, Cholesky.

/// LU factorisation with partial pivoting of the n×n row-major `a`, in
/// place; returns the permutation's sign, or 0 when a pivot is exactly 0.
fn lu(a: &mut [f64], n: usize, perm: &mut [usize]) -> f64 {
    let mut sign = 1.0;
    for (i, p) in perm.iter_mut().enumerate() {
        *p = i;
    }
    for k in 0..n {
        let p = (k..n)
            .max_by(|&i, &j| a[i * n + k].abs().total_cmp(&a[j * n + k].abs()))
            .expect("k < n");
        if a[p * n + k] == 0.0 {
            return 0.0;
        }
        if p != k {
            for j in 0..n {
                a.swap(k * n + j, p * n + j);
            }
            perm.swap(k, p);
            sign = -sign;
        }
        for i in k + 1..n {
            let f = a[i * n + k] / a[k * n + k];
            a[i * n + k] = f;
            for j in k + 1..n {
                a[i * n + j] -= f * a[k * n + j];
            }
        }
    }
    sign
}

/// `(batch, n)` of a tensor of square matrices.
fn square(op: &str, t: &Tensor) -> Result<(usize, usize), OpError> {
    let s = t.shape();
    if s.len() < 2 || s[s.len() - 1] != s[s.len() - 2] {
        return Err(OpError::input(
            0,
            format!("`{op}` needs square matrices, got shape {s:?}"),
        ));
    }
    let n = s[s.len() - 1];
    if n < 2 && matches!(op, "MatrixInverse" | "MatrixDeterminant") {
        return Err(OpError::input(
            0,
            format!("`{op}` needs matrices of at least 2 rows, got shape {s:?}"),
        ));
    }
    Ok((s[..s.len() - 2].iter().product(), n))
}

fn infer_square(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, dims) = dims_of(call, 0)?;
    if !dtype.is_float() {
        return Err(OpError::input(
            0,
            format!(
                "`{op}` needs a float tensor, but `{}` is {}",
                call.input_name(0),
                call.inputs[0]
            ),
        ));
    }
    let Some(d) = dims else {
        return Ok(tensor_abs(dtype, None));
    };
    if d.len() < 2 || !dims_compatible(&d[d.len() - 1], &d[d.len() - 2]) {
        return Err(OpError::input(
            0,
            format!(
                "`{op}` needs square matrices `[..., n, n]`, got {}",
                call.inputs[0]
            ),
        ));
    }
    if op != "Cholesky" && d[d.len() - 1].known().is_some_and(|n| n < 2) {
        return Err(OpError::input(
            0,
            format!(
                "`{op}` needs matrices of at least 2 rows (as MindSpore), got {}",
                call.inputs[0]
            ),
        ));
    }
    Ok(if op == "MatrixDeterminant" {
        tensor_abs(dtype, Some(d[..d.len() - 2].to_vec()))
    } else {
        tensor_abs(dtype, Some(d))
    })
}

fn k_det(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let (batch, n) = square("MatrixDeterminant", x)?;
    let v = x.to_f64_vec();
    let mut perm = vec![0; n];
    let dets: Vec<f64> = (0..batch)
        .map(|b| {
            let mut a = v[b * n * n..(b + 1) * n * n].to_vec();
            let sign = lu(&mut a, n, &mut perm);
            sign * (0..n).map(|i| a[i * n + i]).product::<f64>()
        })
        .collect();
    let shape = x.shape()[..x.rank() - 2].to_vec();
    ok(Tensor::from_f64(shape, dets)
        .map_err(|e| OpError::call(e.0))?
        .cast(x.dtype()))
}

fn k_inverse(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let (batch, n) = square("MatrixInverse", x)?;
    let adjoint = c.attrs.bool("adjoint");
    let v = x.to_f64_vec();
    let mut out = vec![0.0; v.len()];
    let mut perm = vec![0; n];
    for b in 0..batch {
        let mut a = v[b * n * n..(b + 1) * n * n].to_vec();
        let singular = lu(&mut a, n, &mut perm) == 0.0;
        let o = &mut out[b * n * n..(b + 1) * n * n];
        for col in 0..n {
            // Solve L U x = P e_col.
            let mut y: Vec<f64> = (0..n)
                .map(|i| f64::from(u8::from(perm[i] == col)))
                .collect();
            if singular {
                y.iter_mut().for_each(|e| *e = f64::NAN);
            } else {
                for i in 0..n {
                    for j in 0..i {
                        y[i] -= a[i * n + j] * y[j];
                    }
                }
                for i in (0..n).rev() {
                    for j in i + 1..n {
                        y[i] -= a[i * n + j] * y[j];
                    }
                    y[i] /= a[i * n + i];
                }
            }
            for (i, &e) in y.iter().enumerate() {
                if adjoint {
                    o[col * n + i] = e;
                } else {
                    o[i * n + col] = e;
                }
            }
        }
    }
    ok(Tensor::from_f64(x.shape().to_vec(), out)
        .map_err(|e| OpError::call(e.0))?
        .cast(x.dtype()))
}

fn grad_inverse(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    if !is_float_input(c, 0) {
        return vec![None];
    }
    let (y, d) = (c.out, c.dout);
    // y = inv(x): dx = -yᵀ·dy·yᵀ. With adjoint, y = inv(x)ᵀ: dx = -y·dyᵀ·y.
    let t = if c.attrs.bool("adjoint") {
        let t = b.prim("BatchMatMul", &[y, d], vec![("transpose_b", flag(true))]);
        b.prim("BatchMatMul", &[t, y], vec![])
    } else {
        let t = b.prim("BatchMatMul", &[y, d], vec![("transpose_a", flag(true))]);
        b.prim("BatchMatMul", &[t, y], vec![("transpose_b", flag(true))])
    };
    vec![Some(prim(b, "Neg", &[t]))]
}

fn grad_det(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    if !is_float_input(c, 0) {
        return vec![None];
    }
    // MindSpore: (dout·out)[..., None, None] · MatrixInverse(x, adjoint=True).
    let inv = b.prim(
        "MatrixInverse",
        &[c.inputs[0]],
        vec![("adjoint", flag(true))],
    );
    let m = prim(b, "Mul", &[c.dout, c.out]);
    let m = b.prim("ExpandDims", &[m], vec![("axis", AttrValue::Int(-1))]);
    let m = b.prim("ExpandDims", &[m], vec![("axis", AttrValue::Int(-1))]);
    vec![Some(prim(b, "Mul", &[m, inv]))]
}

/// The lower Cholesky factor of the n×n `a` (its symmetric part), or `None`
/// when it is not positive definite.
fn cholesky(a: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut l = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let aij = 0.5 * (a[i * n + j] + a[j * n + i]);
            let s: f64 = (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum();
            if i == j {
                let d = aij - s;
                if d <= 0.0 || d.is_nan() {
                    return None;
                }
                l[i * n + i] = d.sqrt();
            } else {
                l[i * n + j] = (aij - s) / l[j * n + j];
            }
        }
    }
    Some(l)
}

fn transpose_sq(a: &[f64], n: usize) -> Vec<f64> {
    let mut t = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            t[j * n + i] = a[i * n + j];
        }
    }
    t
}

fn k_cholesky(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let (batch, n) = square("Cholesky", x)?;
    let upper = c.attrs.bool("upper");
    let v = x.to_f64_vec();
    let mut out = Vec::with_capacity(v.len());
    for b in 0..batch {
        let a = &v[b * n * n..(b + 1) * n * n];
        let scale = a.iter().fold(0.0f64, |m, e| m.max(e.abs()));
        let symmetric =
            (0..n).all(|i| (0..i).all(|j| (a[i * n + j] - a[j * n + i]).abs() <= 1e-5 * scale));
        let l = cholesky(a, n).filter(|_| symmetric).ok_or_else(|| {
            OpError::input(0, "`Cholesky` expects symmetric positive definite matrices")
        })?;
        out.extend(if upper { transpose_sq(&l, n) } else { l });
    }
    ok(Tensor::from_f64(x.shape().to_vec(), out)
        .map_err(|e| OpError::call(e.0))?
        .cast(x.dtype()))
}

/// `CholeskyGrad`: with `L` lower and `L̄` its sensitivity,
/// `Ā = sym(L⁻ᵀ·Φ(Lᵀ·L̄)·L⁻¹)`, `Φ` taking the lower triangle with the diagonal halved.
fn cholesky_grad(l: &[f64], dl: &[f64], n: usize) -> Vec<f64> {
    let mm = |a: &[f64], b: &[f64]| {
        let mut c = vec![0.0; n * n];
        for i in 0..n {
            for k in 0..n {
                let aik = a[i * n + k];
                if aik != 0.0 {
                    for j in 0..n {
                        c[i * n + j] += aik * b[k * n + j];
                    }
                }
            }
        }
        c
    };
    let mut p = mm(&transpose_sq(l, n), dl);
    for i in 0..n {
        for j in 0..n {
            if j > i {
                p[i * n + j] = 0.0;
            } else if j == i {
                p[i * n + j] *= 0.5;
            }
        }
    }
    // Solve Lᵀ·S₁ = P (back substitution), then S·L = S₁ (i.e. Lᵀ·Sᵀ = S₁ᵀ).
    let solve_upper = |b: &[f64]| {
        // Lᵀ x = b for each column of b.
        let mut x = b.to_vec();
        for col in 0..n {
            for i in (0..n).rev() {
                let mut s = x[i * n + col];
                for k in i + 1..n {
                    s -= l[k * n + i] * x[k * n + col];
                }
                x[i * n + col] = s / l[i * n + i];
            }
        }
        x
    };
    let s1 = solve_upper(&p);
    let s = transpose_sq(&solve_upper(&transpose_sq(&s1, n)), n);
    let st = transpose_sq(&s, n);
    s.iter().zip(&st).map(|(a, b)| 0.5 * (a + b)).collect()
}

fn k_cholesky_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (y, dy) = (c.tensor(0)?, c.tensor(1)?);
    let (batch, n) = square("_CholeskyGrad", y)?;
    if dy.shape() != y.shape() {
        return Err(OpError::call(
            "`_CholeskyGrad`: the factor and its gradient differ in shape",
        ));
    }
    let upper = c.attrs.bool("upper");
    let (yv, dv) = (y.to_f64_vec(), dy.to_f64_vec());
    let mut out = Vec::with_capacity(yv.len());
    for b in 0..batch {
        let r = b * n * n..(b + 1) * n * n;
        let (l, dl) = if upper {
            (transpose_sq(&yv[r.clone()], n), transpose_sq(&dv[r], n))
        } else {
            (yv[r.clone()].to_vec(), dv[r].to_vec())
        };
        out.extend(cholesky_grad(&l, &dl, n));
    }
    ok(Tensor::from_f64(y.shape().to_vec(), out)
        .map_err(|e| OpError::call(e.0))?
        .cast(dy.dtype()))
}

// ---------------------------------------------------------------------------
// Trace, Cross, Diag, DiagPart.

fn infer_trace(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, _) = ranked(call, 0, &[2])?;
    Ok(tensor_abs(dtype, Some(vec![])))
}

fn k_trace(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    kernel_dims("Trace", x, &[2], "input")?;
    let (r, k) = (x.shape()[0], x.shape()[1]);
    let v = x.to_f64_vec();
    let s: f64 = (0..r.min(k)).map(|i| v[i * k + i]).sum();
    let t = Tensor::from_f64(vec![], vec![s]).map_err(|e| OpError::call(e.0))?;
    ok(t.cast(x.dtype()))
}

fn k_trace_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (d, like) = (c.tensor(0)?, c.tensor(1)?);
    kernel_dims("_TraceGrad", like, &[2], "like")?;
    let (r, k) = (like.shape()[0], like.shape()[1]);
    let g = d.to_f64_vec().first().copied().unwrap_or(0.0);
    let mut v = vec![0.0; r * k];
    for i in 0..r.min(k) {
        v[i * k + i] = g;
    }
    ok(Tensor::from_f64(vec![r, k], v)
        .map_err(|e| OpError::call(e.0))?
        .cast(d.dtype()))
}

/// The dimension `Cross` works along in a result of shape `dims`.
fn cross_axis(op: &str, dim: i64, dims: &[Option<i64>]) -> Result<usize, OpError> {
    if dim == -65530 {
        return dims
            .iter()
            .position(|&d| d == Some(3))
            .ok_or_else(|| OpError::input(0, format!("`{op}`: no dimension has size 3")));
    }
    let i = op_axis(op, dim, dims.len(), "dim")?;
    if dims[i].is_some_and(|d| d != 3) {
        return Err(OpError::attr(
            "dim",
            format!(
                "`{op}`: dimension {i} has size {}, not 3",
                dims[i].unwrap_or(0)
            ),
        ));
    }
    Ok(i)
}

fn infer_cross(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (da, sa) = call.tensor(0)?;
    let (db, sb) = call.tensor(1)?;
    same_dtype(call, (0, da), (1, db))?;
    let out = broadcast_shapes(&sa, &sb).map_err(|m| OpError::call(format!("`Cross`: {m}")))?;
    if let Some(d) = out.dims() {
        let known: Vec<Option<i64>> = d.iter().map(Dim::known).collect();
        if known.iter().all(Option::is_some) || call.attrs.int("dim") != -65530 {
            cross_axis("Cross", call.attrs.int("dim"), &known)?;
        }
    }
    Ok(AbsVal::Tensor {
        dtype: da,
        shape: out,
    })
}

fn k_cross(c: &KernelCall) -> Result<KValue, OpError> {
    let (a, b) = (c.tensor(0)?, c.tensor(1)?);
    let shape = broadcast_shape(a.shape(), b.shape())
        .ok_or_else(|| OpError::call("`Cross`: the shapes cannot be broadcast"))?;
    let known: Vec<Option<i64>> = shape.iter().map(|&d| Some(d as i64)).collect();
    let axis = cross_axis("Cross", c.attrs.int("dim"), &known)?;
    let (av, bv) = (
        broadcast_to(&a.to_f64_vec(), a.shape(), &shape),
        broadcast_to(&b.to_f64_vec(), b.shape(), &shape),
    );
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let mut out = vec![0.0; av.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * 3 + k) * inner + i;
            for k in 0..3 {
                let (p, q) = ((k + 1) % 3, (k + 2) % 3);
                out[at(k)] = av[at(p)] * bv[at(q)] - av[at(q)] * bv[at(p)];
            }
        }
    }
    let t = Tensor::from_f64(shape, out).map_err(|e| OpError::call(e.0))?;
    ok(t.cast(a.dtype()))
}

fn infer_diag(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = dims_of(call, 0)?;
    Ok(match dims {
        Some(d) if d.is_empty() => {
            return Err(OpError::input(
                0,
                format!(
                    "`Diag` needs a tensor of rank 1 or more, got {}",
                    call.inputs[0]
                ),
            ))
        }
        Some(d) => tensor_abs(dtype, Some(d.iter().chain(&d).cloned().collect())),
        None => tensor_abs(dtype, None),
    })
}

fn k_diag(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    if x.rank() == 0 {
        return Err(OpError::input(0, "`Diag` needs a tensor of rank 1 or more"));
    }
    let n = x.numel();
    let mut shape = x.shape().to_vec();
    shape.extend_from_slice(x.shape());
    let offsets: Vec<usize> = (0..n).map(|i| i * n + i).collect();
    ok(crate::defs::shape::scatter_add(x, shape, &offsets))
}

fn infer_diag_part(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = dims_of(call, 0)?;
    let Some(d) = dims else {
        return Ok(tensor_abs(dtype, None));
    };
    let k = d.len() / 2;
    if d.is_empty() || d.len() % 2 != 0 || (0..k).any(|i| !dims_compatible(&d[i], &d[i + k])) {
        return Err(OpError::input(
            0,
            format!(
                "`DiagPart` needs a tensor of even rank whose first half of dimensions equals its second, got {}",
                call.inputs[0]
            ),
        ));
    }
    Ok(tensor_abs(dtype, Some(d[..k].to_vec())))
}

fn k_diag_part(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let s = x.shape();
    let k = s.len() / 2;
    if s.is_empty() || s.len() % 2 != 0 || s[..k] != s[k..] {
        return Err(OpError::input(
            0,
            format!("`DiagPart` needs shape [*s, *s], got {s:?}"),
        ));
    }
    let n: usize = s[..k].iter().product();
    let offsets: Vec<usize> = (0..n).map(|i| i * n + i).collect();
    ok(crate::defs::shape::take(x, s[..k].to_vec(), &offsets))
}

// ---------------------------------------------------------------------------
// The table.

const BETA: ParamDef = ParamDef::attr(
    "beta",
    AttrType::Number,
    Some(AttrDefault::Int(1)),
    "The factor of `input` (default 1); with 0, `input` is ignored.",
);
const ALPHA: ParamDef = ParamDef::attr(
    "alpha",
    AttrType::Number,
    Some(AttrDefault::Int(1)),
    "The factor of the product (default 1).",
);

const fn la(
    name: &'static str,
    doc: &'static str,
    params: &'static [ParamDef],
    infer: crate::InferFn,
    grad: Option<crate::GradFn>,
    kernel: crate::KernelFn,
) -> OpDef {
    OpDef {
        name,
        category: Category::LinearAlgebra,
        doc,
        params,
        variadic: false,
        output: OutputDef::Single,
        infer,
        grad,
        kernel: Some(kernel),
    }
}

pub const OPS: &[OpDef] = &[
    la(
        "Outer",
        "The outer product of two vectors, `input[:, None] * vec2[None, :]`, in their promoted dtype.",
        &[ParamDef::input("input", "A 1-D tensor, `[n]`."), ParamDef::input("vec2", "A 1-D tensor, `[m]`.")],
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
        &[ParamDef::input("input", "A 1-D tensor."), ParamDef::input("other", "A 1-D tensor of `input`'s length and dtype.")],
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
        &[ParamDef::input("input", "A 2-D tensor, `[n, m]`."), ParamDef::input("vec", "A 1-D tensor, `[m]`, of `input`'s dtype.")],
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
        &[ParamDef::input("input", "A 2-D tensor, `[n, k]`."), ParamDef::input("mat2", "A 2-D tensor, `[k, m]`, of `input`'s dtype.")],
        infer_mm,
        Some(|b, c| grad_mm(b, c, "MatMul")),
        |c| ok(matmul(c.tensor(0)?, c.tensor(1)?, false, false)?),
    ),
    la(
        "Addmm",
        "`beta * input + alpha * (mat1 @ mat2)`, `input` broadcast to `[n, p]` (ignored when `beta` is 0).",
        &[
            ParamDef::input("input", "Broadcastable to `[n, p]`."),
            ParamDef::input("mat1", "A 2-D tensor, `[n, m]`."),
            ParamDef::input("mat2", "A 2-D tensor, `[m, p]`."),
            BETA,
            ALPHA,
        ],
        infer_addmm,
        Some(|b, c| grad_add_form(b, c, "Addmm")),
        |c| k_add_form(c, "Addmm"),
    ),
    la(
        "Addmv",
        "`beta * input + alpha * (mat @ vec)`, `input` broadcast to `[n]` (ignored when `beta` is 0).",
        &[
            ParamDef::input("input", "Broadcastable to `[n]`."),
            ParamDef::input("mat", "A 2-D tensor, `[n, m]`."),
            ParamDef::input("vec", "A 1-D tensor, `[m]`."),
            BETA,
            ALPHA,
        ],
        infer_addmv,
        Some(|b, c| grad_add_form(b, c, "Addmv")),
        |c| k_add_form(c, "Addmv"),
    ),
    la(
        "Baddbmm",
        "`beta * input + alpha * bmm(batch1, batch2)`, `input` broadcast to `[b, n, p]` (ignored when `beta` is 0).",
        &[
            ParamDef::input("input", "Broadcastable to `[b, n, p]`."),
            ParamDef::input("batch1", "A 3-D tensor, `[b, n, m]`."),
            ParamDef::input("batch2", "A 3-D tensor, `[b, m, p]`."),
            BETA,
            ALPHA,
        ],
        infer_baddbmm,
        Some(|b, c| grad_add_form(b, c, "Baddbmm")),
        |c| k_add_form(c, "Baddbmm"),
    ),
    la(
        "Addbmm",
        "`beta * input + alpha * sum_i(batch1[i] @ batch2[i])`, `input` broadcast to `[n, p]` (ignored when `beta` is 0).",
        &[
            ParamDef::input("input", "Broadcastable to `[n, p]`."),
            ParamDef::input("batch1", "A 3-D tensor, `[b, n, m]`."),
            ParamDef::input("batch2", "A 3-D tensor, `[b, m, p]`."),
            BETA,
            ALPHA,
        ],
        infer_addbmm,
        Some(|b, c| grad_add_form(b, c, "Addbmm")),
        |c| k_add_form(c, "Addbmm"),
    ),
    la(
        "BatchMatMulExt",
        "`torch.bmm`: the product of two 3-D tensors with equal batch sizes, `[b, n, m] @ [b, m, p]` (no broadcasting).",
        &[ParamDef::input("input", "A 3-D tensor, `[b, n, m]`."), ParamDef::input("mat2", "A 3-D tensor, `[b, m, p]`, of `input`'s dtype.")],
        infer_bmm_ext,
        Some(|b, c| grad_mm(b, c, "BatchMatMul")),
        |c| ok(bmm_exact("BatchMatMulExt", c.tensor(0)?, c.tensor(1)?)?),
    ),
    la(
        "MatMulExt",
        "`torch.matmul`: a 1-D operand is a row (left) or column (right) vector whose dimension is removed from the result; two vectors give their dot product; batch dimensions broadcast.",
        &[ParamDef::input("input", "A tensor of rank 1 or more."), ParamDef::input("other", "A tensor of rank 1 or more, of `input`'s dtype.")],
        infer_matmul_ext,
        Some(grad_matmul_ext),
        k_matmul_ext,
    ),
    la(
        "MatrixInverse",
        "The inverse of every square matrix in `x` (`[..., n, n]`, `n >= 2`); with `adjoint`, the inverse's (conjugate) transpose. A singular matrix gives NaN.",
        &[
            ParamDef::input("x", "Float square matrices, `[..., n, n]`."),
            ParamDef::attr("adjoint", AttrType::Bool, Some(AttrDefault::Bool(false)), "Return the transposed inverse (default `false`)."),
        ],
        infer_square,
        Some(grad_inverse),
        k_inverse,
    ),
    la(
        "MatrixDeterminant",
        "The determinant of every square matrix in `input` (`[..., n, n]` with `n >= 2` gives `[...]`), by LU factorisation.",
        &[ParamDef::input("input", "Float square matrices, `[..., n, n]`.")],
        infer_square,
        Some(grad_det),
        k_det,
    ),
    la(
        "Cholesky",
        "The Cholesky factor of every symmetric positive definite matrix in `input_x`: lower `L` with `L·Lᵀ = A`, or with `upper` its transpose. Other matrices are an error.",
        &[
            ParamDef::input("input_x", "Float symmetric positive definite matrices, `[..., n, n]`."),
            ParamDef::attr("upper", AttrType::Bool, Some(AttrDefault::Bool(false)), "Return the upper factor `Lᵀ` (default `false`: lower)."),
        ],
        infer_square,
        Some(|b, c| {
            let up = ("upper", flag(c.attrs.bool("upper")));
            vec![is_float_input(c, 0).then(|| b.prim("_CholeskyGrad", &[c.out, c.dout], vec![up]))]
        }),
        k_cholesky,
    ),
    la(
        "Trace",
        "The sum of the main diagonal of a 2-D tensor (any rectangle): a rank-0 tensor of its dtype.",
        &[ParamDef::input("input", "A 2-D tensor.")],
        infer_trace,
        Some(|b, c| vec![is_float_input(c, 0).then(|| prim(b, "_TraceGrad", &[c.dout, c.inputs[0]]))]),
        k_trace,
    ),
    la(
        "Cross",
        "The cross product of `input` and `other` (broadcast together) along dimension `dim`, which must have size 3; by default the first dimension of size 3.",
        &[
            ParamDef::input("input", "A tensor with a dimension of size 3."),
            ParamDef::input("other", "A tensor of `input`'s dtype, broadcast against it."),
            ParamDef::attr("dim", AttrType::Int, Some(AttrDefault::Int(-65530)), "The dimension of the vectors; the default -65530 means the first of size 3."),
        ],
        infer_cross,
        Some(|b, c| {
            let dim = vec![("dim", AttrValue::Int(c.attrs.int("dim")))];
            let (x, y, d) = (c.inputs[0], c.inputs[1], c.dout);
            let dx = is_float_input(c, 0).then(|| {
                let g = b.prim("Cross", &[y, d], dim.clone());
                prim(b, "_SumToShapeOf", &[g, x])
            });
            let dy = is_float_input(c, 1).then(|| {
                let g = b.prim("Cross", &[d, x], dim.clone());
                prim(b, "_SumToShapeOf", &[g, y])
            });
            vec![dx, dy]
        }),
        k_cross,
    ),
    la(
        "Diag",
        "A tensor with `input` on its diagonal: shape `s` gives `s + s`, `out[i..., i...] = input[i...]`, zeros elsewhere.",
        &[ParamDef::input("input", "A tensor of rank 1 or more.")],
        infer_diag,
        Some(|b, c| vec![is_float_input(c, 0).then(|| prim(b, "DiagPart", &[c.dout]))]),
        k_diag,
    ),
    la(
        "DiagPart",
        "The diagonal of a tensor of shape `s + s`: `out[i...] = input_x[i..., i...]`, of shape `s` (the inverse of `Diag`).",
        &[ParamDef::input("input_x", "A tensor of even rank `2k` whose first `k` dimensions equal its last `k`.")],
        infer_diag_part,
        Some(|b, c| vec![is_float_input(c, 0).then(|| prim(b, "Diag", &[c.dout]))]),
        k_diag_part,
    ),
    OpDef {
        name: "_CholeskyGrad",
        category: Category::Internal,
        doc: "`CholeskyGrad`: the (symmetric) gradient of `Cholesky`'s input from its factor `y` and the factor's sensitivity `grad`.",
        params: &[
            ParamDef::input("y", "Cholesky's result."),
            ParamDef::input("grad", "The sensitivity of `y`."),
            ParamDef::attr("upper", AttrType::Bool, Some(AttrDefault::Bool(false)), "Cholesky's `upper`."),
        ],
        variadic: false,
        output: OutputDef::Single,
        infer: |call| {
            if call.any_unknown() {
                return Ok(AbsVal::Any);
            }
            let (dtype, shape) = call.tensor(1)?;
            Ok(AbsVal::Tensor { dtype, shape })
        },
        grad: None,
        kernel: Some(k_cholesky_grad),
    },
    OpDef {
        name: "_TraceGrad",
        category: Category::Internal,
        doc: "The gradient of `Trace`: `grad` (a rank-0 tensor) on the main diagonal of zeros shaped like `like`.",
        params: &[
            ParamDef::input("grad", "The sensitivity of the trace."),
            ParamDef::input("like", "Trace's 2-D input."),
        ],
        variadic: false,
        output: OutputDef::Single,
        infer: |call| {
            if call.any_unknown() {
                return Ok(AbsVal::Any);
            }
            let (dtype, _) = call.tensor(0)?;
            let (_, shape) = call.tensor(1)?;
            Ok(AbsVal::Tensor { dtype, shape })
        },
        grad: Some(|b, c| vec![Some(prim(b, "Trace", &[c.dout])), None]),
        kernel: Some(k_trace_grad),
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let r = random_f64;
    let f = AttrValue::float;
    let spd = |seed: u64, batch: &[usize], n: usize| {
        // A·Aᵀ + n·I: symmetric positive definite.
        let KValue::Tensor(a) = r(&[batch.iter().product::<usize>(), n, n], seed, -1.0, 1.0) else {
            unreachable!()
        };
        let at = a.to_f64_vec();
        let count = batch.iter().product::<usize>();
        let mut v = vec![0.0; count * n * n];
        for b in 0..count {
            for i in 0..n {
                for j in 0..n {
                    let s: f64 = (0..n)
                        .map(|k| at[b * n * n + i * n + k] * at[b * n * n + j * n + k])
                        .sum();
                    v[b * n * n + i * n + j] = s + if i == j { n as f64 } else { 0.0 };
                }
            }
        }
        let mut shape = batch.to_vec();
        shape.extend([n, n]);
        KValue::Tensor(Tensor::from_f64(shape, v).unwrap())
    };
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
        Sample::new("MatrixInverse", vec![spd(560, &[2], 3)]),
        Sample::new("MatrixInverse", vec![r(&[3, 3], 561, -1.0, 1.0)])
            .attr("adjoint", AttrValue::Bool(true)),
        Sample::new("MatrixDeterminant", vec![r(&[2, 3, 3], 562, -1.0, 1.0)]),
        Sample::new("Cholesky", vec![spd(563, &[], 3)]),
        Sample::new("Cholesky", vec![spd(564, &[2], 2)]).attr("upper", AttrValue::Bool(true)),
        Sample::new("Trace", vec![r(&[3, 4], 565, -1.0, 1.0)]),
        Sample::new(
            "Cross",
            vec![r(&[2, 3], 566, -1.0, 1.0), r(&[3], 567, -1.0, 1.0)],
        ),
        Sample::new(
            "Cross",
            vec![r(&[3, 2], 568, -1.0, 1.0), r(&[3, 2], 569, -1.0, 1.0)],
        )
        .attr("dim", AttrValue::Int(0)),
        Sample::new("Diag", vec![r(&[2, 3], 570, -1.0, 1.0)]),
        Sample::new("DiagPart", vec![r(&[2, 3, 2, 3], 571, -1.0, 1.0)]),
        Sample::new(
            "_TraceGrad",
            vec![r(&[], 572, -1.0, 1.0), r(&[2, 3], 573, -1.0, 1.0)],
        ),
    ]
}
