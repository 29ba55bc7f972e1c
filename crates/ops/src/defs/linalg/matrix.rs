//! Matrix functions and diagonals: MatrixInverse, MatrixDeterminant,
//! Cholesky, Trace, Cross, Diag, DiagPart, and the `_CholeskyGrad` and
//! `_TraceGrad` their gradients use (see `linalg::products` for the conventions).

use crate::schema::Schema;
use crate::Gradgen;
use crate::Traits;
use ir::{AbsVal, AttrValue, Dim};
use tensor::Tensor;

use crate::defs::elementwise::is_float_input;
use crate::defs::internal::broadcast_to;
use crate::defs::linalg::dims_compatible;
use crate::defs::linalg::products::{
    flag, kernel_dims, la, ok, prim, ranked, same_dtype, tensor_abs,
};
use crate::defs::shape::{dims_of, op_axis};
use crate::infer::{broadcast_shapes, InferCall};
use crate::kernel::{broadcast_shape, KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef,
    ParamDef,
};

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
    if dims.is_empty() {
        return Err(OpError::input(
            0,
            format!("`{op}` needs vectors of 3 elements; these are scalars"),
        ));
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

pub const OPS: &[OpDef] = &[
    la(
        "MatrixInverse",
        "The inverse of every square matrix in `x` (`[..., n, n]`, `n >= 2`); with `adjoint`, the inverse's (conjugate) transpose. A singular matrix gives NaN.",
        Schema::ms(
            &[],
            &[
                ("x", "Float square matrices, `[..., n, n]`."),
                ("adjoint", "Return the transposed inverse (default `false`)."),
            ],
        ),
        infer_square,
        Some(grad_inverse),
        k_inverse,
    )
    .drawn(Gradgen::Avoid),
    la(
        "MatrixDeterminant",
        "The determinant of every square matrix in `input` (`[..., n, n]` with `n >= 2` gives `[...]`), by LU factorisation.",
        Schema::ms(&[], &[("input", "Float square matrices, `[..., n, n]`.")]),
        infer_square,
        Some(grad_det),
        k_det,
    )
    .drawn(Gradgen::Avoid),
    la(
        "Cholesky",
        "The Cholesky factor of every symmetric positive definite matrix in `input_x`: lower `L` with `L·Lᵀ = A`, or with `upper` its transpose. Other matrices are an error.",
        Schema::ms(
            &[],
            &[
                ("input_x", "Float symmetric positive definite matrices, `[..., n, n]`."),
                ("upper", "Return the upper factor `Lᵀ` (default `false`: lower)."),
            ],
        ),
        infer_square,
        Some(|b, c| {
            let up = ("upper", flag(c.attrs.bool("upper")));
            vec![is_float_input(c, 0).then(|| b.prim("_CholeskyGrad", &[c.out, c.dout], vec![up]))]
        }),
        k_cholesky,
    )
    .drawn(Gradgen::Avoid),
    la(
        "Trace",
        "The sum of the main diagonal of a 2-D tensor (any rectangle): a rank-0 tensor of its dtype.",
        Schema::ms(&[], &[("input", "A 2-D tensor.")]),
        infer_trace,
        Some(|b, c| vec![is_float_input(c, 0).then(|| prim(b, "_TraceGrad", &[c.dout, c.inputs[0]]))]),
        k_trace,
    ),
    la(
        "Cross",
        "The cross product of `input` and `other` (broadcast together) along dimension `dim`, which must have size 3; by default the first dimension of size 3.",
        Schema::ms(
            &[],
            &[
                ("input", "A tensor with a dimension of size 3."),
                ("other", "A tensor of `input`'s dtype, broadcast against it."),
                ("dim", "The dimension of the vectors; the default -65530 means the first of size 3."),
            ],
        ),
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
        Schema::ms(&[], &[("input", "A tensor of rank 1 or more.")]),
        infer_diag,
        Some(|b, c| vec![is_float_input(c, 0).then(|| prim(b, "DiagPart", &[c.dout]))]),
        k_diag,
    ),
    la(
        "DiagPart",
        "The diagonal of a tensor of shape `s + s`: `out[i...] = input_x[i..., i...]`, of shape `s` (the inverse of `Diag`).",
        Schema::ms(
            &[],
            &[
                ("input_x", "A tensor of even rank `2k` whose first `k` dimensions equal its last `k`."),
            ],
        ),
        infer_diag_part,
        Some(|b, c| vec![is_float_input(c, 0).then(|| prim(b, "Diag", &[c.dout]))]),
        k_diag_part,
    ),
    OpDef {
        name: "_CholeskyGrad",
        category: Category::Internal,
        doc: "`CholeskyGrad`: the (symmetric) gradient of `Cholesky`'s input from its factor `y` and the factor's sensitivity `grad`.",
        schema: Schema::own(&[
            ParamDef::input("y", "Cholesky's result."),
            ParamDef::input("grad", "The sensitivity of `y`."),
            ParamDef::attr("upper", AttrType::Bool, Some(AttrDefault::Bool(false)), "Cholesky's `upper`."),
        ]),
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
        traits: Traits::NONE,
    },
    OpDef {
        name: "_TraceGrad",
        category: Category::Internal,
        doc: "The gradient of `Trace`: `grad` (a rank-0 tensor) on the main diagonal of zeros shaped like `like`.",
        schema: Schema::own(&[
            ParamDef::input("grad", "The sensitivity of the trace."),
            ParamDef::input("like", "Trace's 2-D input."),
        ]),
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
        traits: Traits::NONE,
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let r = random_f64;
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
