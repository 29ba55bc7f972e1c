//! Linear algebra: identities, errors, and second-order gradients the registry-wide check cannot take in f64.

use ir::{Dim, Shape};
use ops::eager;
use ops::{AbsVal, AttrValue, DType, ErrorTarget, KValue};
use test_support::ops::{assert_err, infer, int, kv, rnd as rand, run, s, t, try_call as call};

use crate::common::close;

#[test]
fn linear_algebra_identities() {
    let a = t(
        DType::F64,
        &[3, 3],
        &[4.0, 1.0, 2.0, 1.0, 3.0, 0.5, 2.0, 0.5, 5.0],
    );
    let inv = run("MatrixInverse", vec![kv(&a)], vec![]);
    let id = run("Mm", vec![kv(&a), kv(&inv)], vec![]);
    close(
        &id.to_f64_vec(),
        &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
        1e-12,
    );
    let det = run("MatrixDeterminant", vec![kv(&a)], vec![]).to_f64_vec()[0];
    let want = 4.0 * (3.0 * 5.0 - 0.25) - 1.0 * (5.0 - 1.0) + 2.0 * (0.5 - 6.0);
    assert!((det - want).abs() < 1e-12);
    let l = run("Cholesky", vec![kv(&a)], vec![]);
    let llt = run(
        "MatMul",
        vec![kv(&l), kv(&l)],
        vec![("transpose_b", AttrValue::Bool(true))],
    );
    close(&llt.to_f64_vec(), &a.to_f64_vec(), 1e-12);
    let lv = l.to_f64_vec();
    assert!(
        lv[1] == 0.0 && lv[2] == 0.0 && lv[5] == 0.0,
        "lower triangular"
    );
    let d = run("Diag", vec![kv(&t(DType::I32, &[2], &[3.0, -1.0]))], vec![]);
    assert_eq!(
        (d.dtype(), d.to_f64_vec()),
        (DType::I32, vec![3.0, 0.0, 0.0, -1.0])
    );
    let p = run("DiagPart", vec![kv(&d)], vec![]);
    assert_eq!(p.to_f64_vec(), vec![3.0, -1.0]);
    let m = run(
        "MatMulExt",
        vec![kv(&rand(&[4], 3)), kv(&rand(&[4], 3))],
        vec![],
    );
    assert_eq!(m.shape(), &[] as &[usize]);
    let m = run(
        "MatMulExt",
        vec![kv(&rand(&[2, 1, 3, 4], 3)), kv(&rand(&[4, 5], 4))],
        vec![],
    );
    assert_eq!(m.shape(), &[2, 1, 3, 5]);
    // Addmm ignores `input` when beta is 0, as torch.
    let nan = t(DType::F32, &[1], &[f64::NAN]);
    let r = run(
        "Addmm",
        vec![
            kv(&nan),
            kv(&rand(&[2, 2], 7).cast(DType::F32)),
            kv(&rand(&[2, 2], 8).cast(DType::F32)),
        ],
        vec![("beta", int(0))],
    );
    assert!(r.to_f64_vec().iter().all(|v| v.is_finite()));
}

#[test]
fn linear_algebra_errors() {
    let f = |dims: &[i64]| AbsVal::tensor(DType::F32, dims);
    let e = infer("Mm", &[f(&[2, 3]), f(&[4, 2])], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(1), &["inner dimensions", "3", "4"]);
    let e = infer(
        "Mm",
        &[f(&[2, 3]), AbsVal::tensor(DType::F64, &[3, 2])],
        vec![],
    )
    .unwrap_err();
    assert_err(&e, ErrorTarget::Input(1), &["one dtype"]);
    let e = infer("Mv", &[f(&[2, 3]), f(&[3, 1])], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(1), &["1-D"]);
    let e = infer("BatchMatMulExt", &[f(&[2, 3, 4]), f(&[1, 4, 2])], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(1), &["batch sizes"]);
    let e = infer("Addmm", &[f(&[3]), f(&[2, 4]), f(&[4, 2])], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["Addmm"]);
    let e = infer("MatrixInverse", &[f(&[2, 3])], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["square"]);
    let e = infer("MatrixDeterminant", &[f(&[4, 1, 1])], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["at least 2 rows"]);
    let e = infer("Cholesky", &[AbsVal::tensor(DType::I32, &[2, 2])], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["float"]);
    let e = call(
        "Cholesky",
        vec![kv(&t(DType::F32, &[2, 2], &[1.0, 2.0, 2.0, 1.0]))],
        vec![],
    )
    .unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["positive definite"]);
    let e = call(
        "Cholesky",
        vec![kv(&t(DType::F32, &[2, 2], &[4.0, 2.0, 100.0, 3.0]))],
        vec![],
    )
    .unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["symmetric"]);
    let e = infer("Trace", &[f(&[2, 2, 2])], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["2-D"]);
    let e = infer("Cross", &[f(&[2, 4]), f(&[2, 4])], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["size 3"]);
    let e = infer("Cross", &[f(&[3, 4]), f(&[3, 4])], vec![("dim", int(1))]).unwrap_err();
    assert_err(&e, ErrorTarget::Attr("dim"), &["size 4"]);
    let e = infer("DiagPart", &[f(&[2, 3])], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["even rank"]);
    let e = infer("Diag", &[f(&[])], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["rank 1"]);
    // Unknown shapes are answered, not refused.
    let unranked = AbsVal::Tensor {
        dtype: DType::F32,
        shape: Shape::Unranked,
    };
    assert_eq!(
        infer("MatMulExt", &[unranked.clone(), f(&[3, 4])], vec![])
            .unwrap()
            .shape(),
        Some(Shape::Unranked)
    );
    let r = infer("Mm", &[unranked.clone(), f(&[3, 4])], vec![]).unwrap();
    assert_eq!(
        r,
        AbsVal::Tensor {
            dtype: DType::F32,
            shape: Shape::Ranked(vec![Dim::Unknown, Dim::Known(4)]),
        }
    );
    assert_eq!(
        infer("MatrixDeterminant", std::slice::from_ref(&unranked), vec![])
            .unwrap()
            .shape(),
        Some(Shape::Unranked)
    );
    assert_eq!(
        infer("Diag", &[unranked], vec![]).unwrap().shape(),
        Some(Shape::Unranked)
    );
}

/// The gradients of gradients the registry's internal primitives make possible.
#[test]
fn second_order_gradients_run() {
    // d/dx of (d/dx Σ y·TopK(x)) through _IndexScatterAdd → _IndexGather.
    let x = eager::random_f64(&[2, 4], 31, -1.0, 1.0);
    let KValue::Tuple(out) =
        eager::call("TopK", std::slice::from_ref(&x), vec![("k", int(2))]).unwrap()
    else {
        panic!()
    };
    let idx = out[1].clone().into_tensor().unwrap().cast(DType::I64);
    let upd = eager::random_f64(&[2, 2], 32, -1.0, 1.0);
    let g = eager::gradient(
        "_IndexScatterAdd",
        &[KValue::Tensor(idx), upd, x.clone()],
        vec![("axis", int(-1))],
        &eager::random_f64(&[2, 4], 33, -1.0, 1.0),
    )
    .unwrap();
    assert!(g[0].is_none() && g[1].is_some() && g[2].is_none());
    let g = eager::gradient(
        "_EinsumEmbed",
        &[
            eager::random_f64(&[3], 34, -1.0, 1.0),
            eager::random_f64(&[3, 3], 35, -1.0, 1.0),
        ],
        vec![("subscripts", s("ii")), ("grad_subscripts", s("i"))],
        &eager::random_f64(&[3, 3], 36, -1.0, 1.0),
    )
    .unwrap();
    assert_eq!(g[0].clone().unwrap().into_tensor().unwrap().shape(), &[3]);
}
