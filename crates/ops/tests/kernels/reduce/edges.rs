//! Reductions on odd shapes (rank 0, zero-size dimensions), shape rules on unknown shapes, errors naming their arguments, and index/scatter adjoints.

use ir::{Dim, Shape};
use ops::{AbsVal, AttrValue, DType, ErrorTarget, KValue};
use tensor::Tensor;
use test_support::ops::{
    assert_err, infer, int, ints, kv, rnd as rand, run, s, t, try_call as call,
};

#[test]
fn reductions_of_rank_0_and_empty_tensors() {
    let x = t(DType::F32, &[], &[2.5]);
    assert_eq!(
        run("ReduceProd", vec![kv(&x)], vec![]).to_f64_vec(),
        vec![2.5]
    );
    assert_eq!(run("Max", vec![kv(&x)], vec![]).to_f64_vec(), vec![2.5]);
    assert_eq!(
        run("CumSum", vec![kv(&x)], vec![("axis", int(0))]).to_f64_vec(),
        vec![2.5]
    );
    let KValue::Tuple(r) = call("ArgMaxWithValue", vec![kv(&x)], vec![]).unwrap() else {
        panic!()
    };
    assert_eq!(r[0].clone().into_tensor().unwrap().shape(), &[] as &[usize]);
    let KValue::Tuple(r) = call("Sort", vec![kv(&x)], vec![]).unwrap() else {
        panic!()
    };
    assert_eq!(r[0].clone().into_tensor().unwrap().to_f64_vec(), vec![2.5]);
    let e = t(DType::F32, &[2, 0], &[]);
    assert_eq!(
        run("ReduceProd", vec![kv(&e)], vec![("axis", int(1))]).to_f64_vec(),
        vec![1.0, 1.0]
    );
    assert_eq!(
        run("SumExt", vec![kv(&e)], vec![("dim", int(1))]).to_f64_vec(),
        vec![0.0, 0.0]
    );
    assert_eq!(
        run("ReduceAll", vec![kv(&e)], vec![("axis", int(1))]).to_f64_vec(),
        vec![1.0, 1.0]
    );
    assert_eq!(
        run("ReduceAny", vec![kv(&e)], vec![("axis", int(1))]).to_f64_vec(),
        vec![0.0, 0.0]
    );
    assert_eq!(
        run("CountNonZero", vec![kv(&e)], vec![]).to_f64_vec(),
        vec![0.0]
    );
    let c = run("CumProd", vec![kv(&e)], vec![("axis", int(1))]);
    assert_eq!(c.shape(), &[2, 0]);
    let KValue::Tuple(r) = call(
        "TopK",
        vec![kv(&t(DType::F32, &[0, 3], &[]))],
        vec![("k", int(2))],
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(r[1].clone().into_tensor().unwrap().shape(), &[0, 2]);
    let err = call("Max", vec![kv(&e)], vec![]).unwrap_err();
    assert_err(&err, ErrorTarget::Input(0), &["empty"]);
    let err = call("ArgMaxWithValue", vec![kv(&e)], vec![("axis", int(1))]).unwrap_err();
    assert_err(&err, ErrorTarget::Input(0), &["empty dimension"]);
    let err = call("Median", vec![kv(&e)], vec![("axis", int(1))]).unwrap_err();
    assert_err(&err, ErrorTarget::Input(0), &["empty dimension"]);
}

#[test]
fn reduction_shape_rules_on_unknown_shapes() {
    let unranked = AbsVal::Tensor {
        dtype: DType::F32,
        shape: Shape::Unranked,
    };
    let r = infer("ReduceProd", std::slice::from_ref(&unranked), vec![]).unwrap();
    assert_eq!(r, AbsVal::tensor(DType::F32, &[]));
    let r = infer(
        "ReduceProd",
        std::slice::from_ref(&unranked),
        vec![("axis", int(0))],
    )
    .unwrap();
    assert_eq!(r.shape(), Some(Shape::Unranked));
    let r = infer("SumExt", &[AbsVal::tensor(DType::I32, &[2, 3])], vec![]).unwrap();
    assert_eq!(r, AbsVal::tensor(DType::I64, &[]));
    let r = infer(
        "Var",
        std::slice::from_ref(&unranked),
        vec![("dim", int(1)), ("keepdim", AttrValue::Bool(true))],
    )
    .unwrap();
    assert_eq!(r.shape(), Some(Shape::Unranked));
    let sym = AbsVal::Tensor {
        dtype: DType::F32,
        shape: Shape::Ranked(vec![Dim::Sym("b".into()), Dim::Unknown, Dim::Known(5)]),
    };
    let r = infer("TopK", std::slice::from_ref(&sym), vec![("k", int(2))]).unwrap();
    let AbsVal::Tuple(items) = r else { panic!() };
    assert_eq!(
        items[1],
        AbsVal::Tensor {
            dtype: DType::I32,
            shape: Shape::Ranked(vec![Dim::Sym("b".into()), Dim::Unknown, Dim::Known(2)]),
        }
    );
    let r = infer(
        "ArgMaxWithValue",
        std::slice::from_ref(&sym),
        vec![("axis", int(-2)), ("keep_dims", AttrValue::Bool(true))],
    )
    .unwrap();
    let AbsVal::Tuple(items) = r else { panic!() };
    assert_eq!(
        items[1],
        AbsVal::Tensor {
            dtype: DType::F32,
            shape: Shape::Ranked(vec![Dim::Sym("b".into()), Dim::Known(1), Dim::Known(5)]),
        }
    );
    let r = infer("TopK", &[sym], vec![("k", int(9))]).unwrap_err();
    assert_err(&r, ErrorTarget::Attr("k"), &["[1, 5]", "9"]);
    for op in [
        "ReduceProd",
        "Max",
        "CumSum",
        "Sort",
        "Norm",
        "Einsum",
        "ScalarAdd",
    ] {
        let def = ops::lookup(op).unwrap();
        let inputs = vec![AbsVal::Any; def.input_count()];
        let attrs: Vec<(&'static str, AttrValue)> = match op {
            "CumSum" => vec![("axis", int(0))],
            "Einsum" => vec![("equation", s("i->i"))],
            _ => vec![],
        };
        assert_eq!(infer(op, &inputs, attrs).unwrap(), AbsVal::Any, "{op}");
    }
}

#[test]
fn reduction_errors_name_their_arguments() {
    let x = AbsVal::tensor(DType::F32, &[2, 3]);
    let e = infer(
        "ReduceProd",
        std::slice::from_ref(&x),
        vec![("axis", int(2))],
    )
    .unwrap_err();
    assert_err(
        &e,
        ErrorTarget::Attr("axis"),
        &["ReduceProd", "out of range"],
    );
    let e = infer(
        "ReduceProd",
        std::slice::from_ref(&x),
        vec![("axis", ints(&[1, -1]))],
    )
    .unwrap_err();
    assert_err(&e, ErrorTarget::Attr("axis"), &["more than once"]);
    let e = infer("CumSum", std::slice::from_ref(&x), vec![("axis", int(-3))]).unwrap_err();
    assert_err(&e, ErrorTarget::Attr("axis"), &["CumSum"]);
    let e = infer("MaxDim", std::slice::from_ref(&x), vec![("dim", int(5))]).unwrap_err();
    assert_err(&e, ErrorTarget::Attr("dim"), &["MaxDim"]);
    let e = infer("Sort", &[AbsVal::tensor(DType::Bool, &[3])], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["numeric"]);
    let e = infer(
        "Median",
        std::slice::from_ref(&x),
        vec![
            ("global_median", AttrValue::Bool(true)),
            ("keep_dims", AttrValue::Bool(true)),
        ],
    )
    .unwrap_err();
    assert_err(&e, ErrorTarget::Attr("keep_dims"), &["global_median"]);
    let e = infer(
        "SquareSumAll",
        &[x.clone(), AbsVal::tensor(DType::F32, &[3])],
        vec![],
    )
    .unwrap_err();
    assert_err(&e, ErrorTarget::Input(1), &["one shape"]);
    let e = infer("Std", &[AbsVal::tensor(DType::I32, &[3])], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["float"]);
    let e = infer(
        "LpNorm",
        std::slice::from_ref(&x),
        vec![("axis", int(0)), ("p", int(-1))],
    )
    .unwrap_err();
    assert_err(&e, ErrorTarget::Attr("p"), &["non-negative"]);
    let e = infer(
        "Norm",
        std::slice::from_ref(&x),
        vec![("dtype", AttrValue::DType(DType::I32))],
    )
    .unwrap_err();
    assert_err(&e, ErrorTarget::Attr("dtype"), &["float"]);
    let e = infer(
        "Argmin",
        std::slice::from_ref(&x),
        vec![("output_type", AttrValue::DType(DType::F32))],
    )
    .unwrap_err();
    assert_err(&e, ErrorTarget::Attr("output_type"), &["i32 or i64"]);
    let e = infer("MeanExt", &[AbsVal::tensor(DType::Bool, &[3])], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["bool"]);
    let e = infer(
        "TopK",
        &[AbsVal::tensor(DType::F32, &[])],
        vec![("k", int(1))],
    )
    .unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["rank 1"]);
    let idx = t(DType::I64, &[2, 1], &[0.0, 3.0]);
    let e = call(
        "_IndexGather",
        vec![kv(&rand(&[2, 3], 1)), kv(&idx)],
        vec![("axis", int(1))],
    )
    .unwrap_err();
    assert!(e.message.contains("out of range"), "{}", e.message);
}

#[test]
fn index_scatter_and_gather_are_adjoint() {
    // <scatter(idx, u), v> = <u, gather(v, idx)> for any u, v.
    let idx = t(DType::I64, &[2, 3], &[0.0, 2.0, 2.0, 1.0, 1.0, 0.0]);
    let u = rand(&[2, 3], 5);
    let v = rand(&[3, 3], 6);
    let sc = run(
        "_IndexScatterAdd",
        vec![kv(&idx), kv(&u), kv(&v)],
        vec![("axis", int(0))],
    );
    let ga = run(
        "_IndexGather",
        vec![kv(&v), kv(&idx)],
        vec![("axis", int(0))],
    );
    let dot = |a: &Tensor, b: &Tensor| -> f64 {
        a.to_f64_vec()
            .iter()
            .zip(b.to_f64_vec())
            .map(|(x, y)| x * y)
            .sum()
    };
    assert!((dot(&sc, &v) - dot(&u, &ga)).abs() < 1e-12);
}
