//! The reduction, scalar and linear algebra families: Einsum against direct
//! summation over every index (MindSpore's CPU backend has no Einsum kernel to
//! compare with), the scalar primitives' constant folding and the sequence
//! primitives whose result length depends on constants, odd shapes (rank 0,
//! zero-size dimensions), shape rules on unknown and symbolic shapes, the
//! gradients the registry-wide check cannot take in f64, and errors with
//! what they are about.

use std::collections::HashMap;

use ir::{Dim, ScalarConst, Shape};
use ops::eager;
use ops::{AbsVal, AttrValue, DType, ErrorTarget, KValue};
use tensor::Tensor;
use test_support::ops::{
    assert_err, infer, int, ints, kv, rnd as rand, run, s, t, try_call as call,
};

fn num(dtype: DType, v: f64) -> KValue {
    KValue::Tensor(Tensor::scalar(dtype, v))
}

fn tup(v: &[i64]) -> KValue {
    KValue::Tuple(v.iter().map(|&x| num(DType::I64, x as f64)).collect())
}

fn close(a: &[f64], b: &[f64], tol: f64) {
    test_support::ops::close("values", a, b, tol);
}

// ---------------------------------------------------------------------------
// Einsum against direct summation.

/// `equation` evaluated by summing over every assignment of its letters
/// (explicit output, no ellipsis).
fn naive_einsum(equation: &str, operands: &[Tensor]) -> (Vec<usize>, Vec<f64>) {
    let (left, out) = equation.split_once("->").unwrap();
    let terms: Vec<&str> = left.split(',').collect();
    let mut size: HashMap<char, usize> = HashMap::new();
    for (term, t) in terms.iter().zip(operands) {
        for (c, &d) in term.chars().zip(t.shape()) {
            size.insert(c, d);
        }
    }
    let letters: Vec<char> = size.keys().copied().collect();
    let out_shape: Vec<usize> = out.chars().map(|c| size[&c]).collect();
    let mut result = vec![0.0; out_shape.iter().product()];
    let data: Vec<Vec<f64>> = operands.iter().map(Tensor::to_f64_vec).collect();
    let total: usize = letters.iter().map(|c| size[c]).product();
    for mut k in 0..total {
        let mut val: HashMap<char, usize> = HashMap::new();
        for c in &letters {
            val.insert(*c, k % size[c]);
            k /= size[c];
        }
        let offset = |term: &str, shape: &[usize]| {
            term.chars()
                .zip(shape)
                .fold(0, |acc, (c, &d)| acc * d + val[&c])
        };
        let prod: f64 = terms
            .iter()
            .zip(operands)
            .zip(&data)
            .map(|((term, t), d)| d[offset(term, t.shape())])
            .product();
        result[offset(out, &out_shape)] += prod;
    }
    (out_shape, result)
}

#[test]
fn einsum_matches_direct_summation() {
    let cases: &[(&str, &[&[usize]])] = &[
        ("ij,jk->ik", &[&[2, 3], &[3, 4]]),
        ("bij,bjk->bik", &[&[2, 3, 4], &[2, 4, 5]]),
        ("bhqd,bhkd->bhqk", &[&[2, 2, 3, 4], &[2, 2, 5, 4]]),
        ("ii->i", &[&[4, 4]]),
        ("ii->", &[&[3, 3]]),
        ("ij->", &[&[2, 5]]),
        ("ij->ji", &[&[2, 5]]),
        ("ij,ij->ij", &[&[3, 2], &[3, 2]]),
        ("i,j->ij", &[&[3], &[4]]),
        ("ijk,ikl,ilm->jm", &[&[2, 3, 2], &[2, 2, 3], &[2, 3, 2]]),
        ("aab,bc->ac", &[&[3, 3, 2], &[2, 4]]),
        ("ij,jk,kl->il", &[&[2, 3], &[3, 4], &[4, 2]]),
        ("iij,jk->ki", &[&[2, 2, 3], &[3, 2]]),
        ("abc,cd->", &[&[2, 2, 3], &[3, 2]]),
        ("ab,cd->abcd", &[&[2, 3], &[2, 2]]),
        ("iAB,BC->AiC", &[&[2, 3, 2], &[2, 3]]),
    ];
    for (k, (eq, shapes)) in cases.iter().enumerate() {
        let operands: Vec<Tensor> = shapes
            .iter()
            .enumerate()
            .map(|(i, s)| rand(s, 900 + 10 * k as u64 + i as u64))
            .collect();
        let (mut shape, want) = naive_einsum(eq, &operands);
        if shape.is_empty() {
            shape = vec![1];
        }
        for dtype in [DType::F64, DType::F32] {
            let ops_in = KValue::Tuple(operands.iter().map(|o| kv(&o.cast(dtype))).collect());
            let got = run("Einsum", vec![ops_in], vec![("equation", s(eq))]);
            assert_eq!(got.shape(), shape.as_slice(), "{eq}");
            assert_eq!(got.dtype(), dtype);
            close(&got.to_f64_vec(), &want, 1e-5);
        }
    }
}

#[test]
fn einsum_ellipsis_and_implicit_output() {
    let a = rand(&[2, 3, 4], 950);
    let b = rand(&[2, 4, 5], 951);
    let pair = KValue::Tuple(vec![kv(&a), kv(&b)]);
    let got = run(
        "Einsum",
        vec![pair.clone()],
        vec![("equation", s("...ij,...jk->...ik"))],
    );
    let want = run(
        "Einsum",
        vec![pair.clone()],
        vec![("equation", s("bij,bjk->bik"))],
    );
    assert_eq!(got, want);
    // Without `->`: `...` first, then the letters that occur once, alphabetically.
    let got = run("Einsum", vec![pair], vec![("equation", s("...ij,...jk"))]);
    assert_eq!(got, want);
    let x = rand(&[3, 2], 952);
    let got = run(
        "Einsum",
        vec![KValue::Tuple(vec![kv(&x)])],
        vec![("equation", s("ba"))],
    );
    let want = run("Transpose", vec![kv(&x)], vec![("perm", ints(&[1, 0]))]);
    assert_eq!(got, want);
    // Lowercase letters come before uppercase ones.
    let got = run(
        "Einsum",
        vec![KValue::Tuple(vec![kv(&x)])],
        vec![("equation", s("Ab"))],
    );
    assert_eq!(got, want);
    // Everything summed: shape [1], as MindSpore.
    let got = run(
        "Einsum",
        vec![KValue::Tuple(vec![kv(&rand(&[3, 3], 953))])],
        vec![("equation", s("aa"))],
    );
    assert_eq!(got.shape(), &[1]);
    // Spaces are ignored.
    let got = run(
        "Einsum",
        vec![KValue::Tuple(vec![kv(&x)])],
        vec![("equation", s(" a b -> b a "))],
    );
    assert_eq!(got, want);
}

#[test]
fn einsum_shape_rule() {
    let f = |dims: &[i64]| AbsVal::tensor(DType::F32, dims);
    let r = infer(
        "Einsum",
        &[AbsVal::Tuple(vec![f(&[2, 3]), f(&[3, 4])])],
        vec![("equation", s("ij,jk->ik"))],
    )
    .unwrap();
    assert_eq!(r, f(&[2, 4]));
    let r = infer(
        "Einsum",
        &[AbsVal::Tuple(vec![f(&[5, 2, 3]), f(&[5, 3, 4])])],
        vec![("equation", s("...ij,...jk"))],
    )
    .unwrap();
    assert_eq!(r, f(&[5, 2, 4]));
    let sym = AbsVal::Tensor {
        dtype: DType::F32,
        shape: Shape::Ranked(vec![Dim::Sym("n".into()), Dim::Known(3)]),
    };
    let r = infer(
        "Einsum",
        &[AbsVal::Tuple(vec![sym, f(&[3, 4])])],
        vec![("equation", s("ij,jk->ki"))],
    )
    .unwrap();
    assert_eq!(
        r,
        AbsVal::Tensor {
            dtype: DType::F32,
            shape: Shape::Ranked(vec![Dim::Known(4), Dim::Sym("n".into())]),
        }
    );
    let unranked = AbsVal::Tensor {
        dtype: DType::F32,
        shape: Shape::Unranked,
    };
    let r = infer(
        "Einsum",
        &[AbsVal::Tuple(vec![unranked.clone(), f(&[3, 4])])],
        vec![("equation", s("ij,jk->ik"))],
    )
    .unwrap();
    assert_eq!(
        r,
        AbsVal::Tensor {
            dtype: DType::F32,
            shape: Shape::Ranked(vec![Dim::Unknown, Dim::Known(4)]),
        }
    );
    let r = infer(
        "Einsum",
        &[AbsVal::Tuple(vec![unranked, f(&[3, 4])])],
        vec![("equation", s("...j,jk->...k"))],
    )
    .unwrap();
    assert_eq!(r.shape(), Some(Shape::Unranked));
    assert_eq!(
        infer("Einsum", &[AbsVal::Any], vec![("equation", s("i->"))]).unwrap(),
        AbsVal::Any
    );

    let bad = |eq: &str, inputs: Vec<AbsVal>| {
        infer(
            "Einsum",
            &[AbsVal::Tuple(inputs)],
            vec![("equation", s(eq))],
        )
        .unwrap_err()
    };
    assert_err(
        &bad("ij,jk->il", vec![f(&[2, 3]), f(&[3, 4])]),
        ErrorTarget::Attr("equation"),
        &["`l`", "does not occur"],
    );
    assert_err(
        &bad("ij->ii", vec![f(&[2, 2])]),
        ErrorTarget::Attr("equation"),
        &["twice"],
    );
    assert_err(
        &bad("i1->i", vec![f(&[2, 2])]),
        ErrorTarget::Attr("equation"),
        &["`1`"],
    );
    assert_err(
        &bad("ij,jk->ik", vec![f(&[2, 3])]),
        ErrorTarget::Input(0),
        &["2 operands but 1"],
    );
    assert_err(
        &bad("ij,jk->ik", vec![f(&[2, 3]), f(&[4, 4])]),
        ErrorTarget::Input(0),
        &["size 3", "4"],
    );
    assert_err(
        &bad("ijk->i", vec![f(&[2, 3])]),
        ErrorTarget::Input(0),
        &["rank 2 but 3 subscripts"],
    );
    assert_err(
        &bad("...i,...i->i", vec![f(&[2, 3]), f(&[4, 3])]),
        ErrorTarget::Input(0),
        &["size 2", "4"],
    );
    assert_err(
        &bad("ij->i", vec![AbsVal::tensor(DType::I32, &[2, 2])]),
        ErrorTarget::Input(0),
        &["float"],
    );
    assert_err(
        &bad("ij->i", vec![f(&[2, 0])]),
        ErrorTarget::Input(0),
        &["zero-size"],
    );
    assert_err(
        &bad("...i...->i", vec![f(&[2, 2])]),
        ErrorTarget::Attr("equation"),
        &["more than one ellipsis"],
    );
}

// ---------------------------------------------------------------------------
// Scalars: constant folding, dtypes and errors.

fn c_int(v: i64) -> AbsVal {
    AbsVal::constant(ScalarConst::Int(v), DType::I64, false)
}

fn c_float(v: f64) -> AbsVal {
    AbsVal::constant(ScalarConst::Float(v), DType::F32, true)
}

#[test]
fn scalar_rules_fold_constants() {
    let fold = |op: &str, inputs: &[AbsVal]| infer(op, inputs, vec![]).unwrap();
    assert_eq!(
        fold("ScalarMul", &[c_int(6), c_int(7)]).const_value(),
        Some(ScalarConst::Int(42))
    );
    assert_eq!(
        fold("ScalarFloorDiv", &[c_int(-7), c_int(2)]).const_value(),
        Some(ScalarConst::Int(-4))
    );
    assert_eq!(
        fold("ScalarMod", &[c_int(7), c_int(-2)]).const_value(),
        Some(ScalarConst::Int(-1))
    );
    assert_eq!(
        fold("ScalarPow", &[c_int(2), c_int(-1)]).const_value(),
        Some(ScalarConst::Int(0))
    );
    assert_eq!(
        fold("ScalarDiv", &[c_int(1), c_int(4)]).const_value(),
        Some(ScalarConst::Float(0.25))
    );
    assert_eq!(
        fold("ScalarLt", &[c_int(1), c_float(1.5)]).const_value(),
        Some(ScalarConst::Bool(true))
    );
    assert_eq!(
        fold("ScalarUsub", &[c_int(3)]).const_value(),
        Some(ScalarConst::Int(-3))
    );
    let r = infer(
        "ScalarCast",
        &[c_float(-2.7)],
        vec![("input_y", AttrValue::DType(DType::I64))],
    )
    .unwrap();
    assert_eq!(r.const_value(), Some(ScalarConst::Int(-2)));
    // Mixed dtypes: the float wins; a weak literal stays weak only with another.
    let r = fold("ScalarAdd", &[c_int(1), c_float(0.5)]);
    assert_eq!(r.dtype(), Some(DType::F32));
    assert!(!r.is_weak());
    assert!(fold("ScalarAdd", &[c_float(1.0), c_float(0.5)]).is_weak());
    // An unknown operand gives an unknown value.
    let r = fold("ScalarAdd", &[AbsVal::scalar(DType::I64), c_int(1)]);
    assert_eq!(r, AbsVal::scalar(DType::I64));
    assert_eq!(fold("ScalarAdd", &[AbsVal::Any, c_int(1)]), AbsVal::Any);
    // Shapes computed from shapes stay known.
    let shape = infer("Shape", &[AbsVal::tensor(DType::F32, &[4, 6])], vec![]).unwrap();
    let AbsVal::Tuple(dims) = &shape else {
        panic!()
    };
    let n = fold("ScalarMul", &[dims[0].clone(), dims[1].clone()]);
    assert_eq!(n.const_value(), Some(ScalarConst::Int(24)));
    assert_eq!(
        fold("shape_mul", std::slice::from_ref(&shape)).const_value(),
        Some(ScalarConst::Int(24))
    );
    assert_eq!(
        fold("sequence_len", std::slice::from_ref(&shape)).const_value(),
        Some(ScalarConst::Int(2))
    );
    let half = fold("ScalarFloorDiv", &[dims[1].clone(), c_int(2)]);
    assert_eq!(half.const_value(), Some(ScalarConst::Int(3)));
}

#[test]
fn scalar_errors() {
    let e = infer("ScalarFloorDiv", &[c_int(1), c_int(0)], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(1), &["division by zero"]);
    let e = infer("ScalarAdd", &[c_int(i64::MAX), c_int(1)], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(1), &["overflow"]);
    let e = infer(
        "ScalarAdd",
        &[AbsVal::tensor(DType::F32, &[3]), c_int(1)],
        vec![],
    )
    .unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["number", "f32[3]"]);
    let e = infer("bit_and", &[c_float(1.0), c_int(1)], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["integer"]);
    let e = infer(
        "ScalarCast",
        &[c_int(1)],
        vec![("input_y", AttrValue::DType(DType::I32))],
    )
    .unwrap_err();
    assert_err(&e, ErrorTarget::Attr("input_y"), &["i64, f32, f64 or bool"]);
    let e = infer("BoolNot", &[c_int(1)], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["bool"]);
    let e = call(
        "ScalarMod",
        vec![num(DType::I64, 3.0), num(DType::I64, 0.0)],
        vec![],
    )
    .unwrap_err();
    assert_err(&e, ErrorTarget::Input(1), &["division by zero"]);
    let e = infer(
        "TensorToScalar",
        &[AbsVal::tensor(DType::F32, &[2])],
        vec![],
    )
    .unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["one element"]);
}

#[test]
fn scalar_kernels() {
    let r = |op: &str, a: KValue, b: KValue| run(op, vec![a, b], vec![]);
    let i = |v: f64| num(DType::I64, v);
    let f = |v: f64| num(DType::F32, v);
    assert_eq!(
        r("ScalarFloorDiv", i(7.0), i(-2.0)).to_f64_vec(),
        vec![-4.0]
    );
    assert_eq!(r("ScalarMod", f(-7.5), f(2.0)).to_f64_vec(), vec![0.5]);
    assert_eq!(r("ScalarMod", f(7.5), i(-2.0)).to_f64_vec(), vec![-0.5]);
    let d = r("ScalarDiv", i(1.0), i(3.0));
    assert_eq!(
        (d.dtype(), d.to_f64_vec()),
        (DType::F32, vec![f64::from(1.0f32 / 3.0)])
    );
    let p = r("ScalarPow", i(-1.0), i(-3.0));
    assert_eq!((p.dtype(), p.to_f64_vec()), (DType::I64, vec![-1.0]));
    let b = r("ScalarAdd", num(DType::Bool, 1.0), num(DType::Bool, 1.0));
    assert_eq!((b.dtype(), b.to_f64_vec()), (DType::I32, vec![2.0]));
    let m = r("ScalarMax", i(3.0), f(2.5));
    assert_eq!((m.dtype(), m.to_f64_vec()), (DType::F32, vec![3.0]));
    assert_eq!(r("ScalarEq", f(1.0), i(1.0)).to_f64_vec(), vec![1.0]);
    assert_eq!(
        r("ScalarEq", f(f64::INFINITY), f(f64::INFINITY)).to_f64_vec(),
        vec![1.0]
    );
    assert_eq!(r("bit_or", i(6.0), i(3.0)).to_f64_vec(), vec![7.0]);
    let st = run(
        "ScalarToTensor",
        vec![f(-2.7)],
        vec![("dtype", AttrValue::DType(DType::I8))],
    );
    assert_eq!(
        (st.dtype(), st.shape(), st.to_f64_vec()),
        (DType::I8, &[][..], vec![-2.0])
    );
    let s = run(
        "TensorToScalar",
        vec![kv(&t(DType::I32, &[1], &[5.0]))],
        vec![],
    );
    assert_eq!(
        (s.dtype(), s.shape(), s.to_f64_vec()),
        (DType::I32, &[][..], vec![5.0])
    );
}

/// ScalarDiv and ScalarLog give f32, too coarse for the registry-wide
/// finite-difference check in f64: their gradients are checked here.
#[test]
fn scalar_div_and_log_gradients() {
    let x = num(DType::F64, 3.0);
    let y = num(DType::F64, 2.0);
    let dout = num(DType::F32, 1.0);
    let g = eager::gradient("ScalarDiv", &[x.clone(), y], vec![], &dout).unwrap();
    let v: Vec<f64> = g
        .iter()
        .map(|g| g.clone().unwrap().into_tensor().unwrap().to_f64_vec()[0])
        .collect();
    close(&v, &[0.5, -0.75], 1e-6);
    let g = eager::gradient("ScalarLog", &[x], vec![], &dout).unwrap();
    let v = g[0].clone().unwrap().into_tensor().unwrap().to_f64_vec()[0];
    close(&[v], &[1.0 / 3.0], 1e-6);
    // Integer operands get none.
    let g = eager::gradient(
        "ScalarDiv",
        &[num(DType::I64, 3.0), num(DType::I64, 2.0)],
        vec![],
        &dout,
    )
    .unwrap();
    assert!(g.iter().all(Option::is_none));
}

// ---------------------------------------------------------------------------
// Sequences.

#[test]
fn sequences_with_constant_lengths() {
    let known = |v: &[i64]| AbsVal::Tuple(v.iter().map(|&x| c_int(x)).collect());
    let values = |r: &AbsVal| -> Vec<i64> {
        let AbsVal::Tuple(items) = r else {
            panic!("{r}")
        };
        items
            .iter()
            .map(|i| i.const_value().and_then(ScalarConst::as_i64).unwrap())
            .collect()
    };
    let r = infer("make_range", &[c_int(1), c_int(10), c_int(3)], vec![]).unwrap();
    assert_eq!(values(&r), vec![1, 4, 7]);
    let KValue::Tuple(items) = call(
        "make_range",
        vec![
            num(DType::I64, 10.0),
            num(DType::I64, 1.0),
            num(DType::I64, -3.0),
        ],
        vec![],
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(items.len(), 3);
    assert_eq!(
        values(&infer("make_range", &[c_int(5)], vec![]).unwrap()),
        vec![0, 1, 2, 3, 4]
    );
    assert_eq!(
        infer("make_range", &[AbsVal::scalar(DType::I64)], vec![]).unwrap(),
        AbsVal::Any
    );
    let e = infer("make_range", &[c_int(1), c_int(5), c_int(0)], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(2), &["delta"]);
    let e = infer("make_range", &[c_float(1.0)], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["integer"]);

    let five = known(&[1, 2, 3, 4, 5]);
    let slice = |a: i64, b: i64, c: i64| {
        values(
            &infer(
                "SequenceSlice",
                &[five.clone(), c_int(a), c_int(b), c_int(c)],
                vec![],
            )
            .unwrap(),
        )
    };
    assert_eq!(slice(1, 5, 2), vec![2, 4]);
    assert_eq!(slice(-1, -6, -2), vec![5, 3, 1]);
    assert_eq!(slice(-100, 2, 1), vec![1, 2]);
    assert_eq!(slice(4, 0, -1), vec![5, 4, 3, 2]);
    assert_eq!(slice(3, 1, 1), Vec::<i64>::new());
    let KValue::Tuple(k) = call(
        "SequenceSlice",
        vec![
            tup(&[1, 2, 3, 4, 5]),
            num(DType::I64, -1.0),
            num(DType::I64, -6.0),
            num(DType::I64, -2.0),
        ],
        vec![],
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(k.len(), 3);
    assert_eq!(
        infer(
            "SequenceSlice",
            &[five.clone(), AbsVal::scalar(DType::I64), c_int(1), c_int(1)],
            vec![]
        )
        .unwrap(),
        AbsVal::Any
    );
    let e = infer(
        "SequenceSlice",
        &[five.clone(), c_int(0), c_int(1), c_int(0)],
        vec![],
    )
    .unwrap_err();
    assert_err(&e, ErrorTarget::Input(3), &["step"]);
    assert_eq!(
        values(&infer("SequenceMul", &[known(&[1, 2]), c_int(2)], vec![]).unwrap()),
        vec![1, 2, 1, 2]
    );
    assert_eq!(
        values(&infer("SequenceMul", &[known(&[1, 2]), c_int(-1)], vec![]).unwrap()),
        Vec::<i64>::new()
    );
    assert_eq!(
        values(&infer("ListInsert", &[known(&[1, 2]), c_int(-1), c_int(9)], vec![]).unwrap()),
        vec![1, 9, 2]
    );
    assert_eq!(
        values(&infer("ListInsert", &[known(&[1, 2]), c_int(10), c_int(9)], vec![]).unwrap()),
        vec![1, 2, 9]
    );
    assert_eq!(
        values(&infer("ListAppend", &[known(&[1]), c_int(9)], vec![]).unwrap()),
        vec![1, 9]
    );
    assert_eq!(
        values(&infer("SequenceAdd", &[known(&[1]), known(&[2, 3])], vec![]).unwrap()),
        vec![1, 2, 3]
    );
    let cmp = |op: &str, a: &[i64], b: &[i64]| {
        infer(op, &[known(a), known(b)], vec![])
            .unwrap()
            .const_value()
    };
    assert_eq!(
        cmp("tuple_lt", &[1, 2], &[1, 2, 0]),
        Some(ScalarConst::Bool(true))
    );
    assert_eq!(
        cmp("tuple_greater_equal", &[2], &[1, 9]),
        Some(ScalarConst::Bool(true))
    );
    assert_eq!(
        cmp("tuple_equal", &[1, 2], &[1, 2, 0]),
        Some(ScalarConst::Bool(false))
    );
    assert_eq!(
        infer("SequenceCount", &[known(&[1, 2, 1]), c_int(1)], vec![])
            .unwrap()
            .const_value(),
        Some(ScalarConst::Int(2))
    );
    assert_eq!(
        infer("InSequence", &[c_int(3), known(&[1, 2])], vec![])
            .unwrap()
            .const_value(),
        Some(ScalarConst::Bool(false))
    );
    assert_eq!(
        infer("SequenceMax", &[known(&[1, 5, 2])], vec![])
            .unwrap()
            .const_value(),
        Some(ScalarConst::Int(5))
    );
    let e = infer("SequenceMax", &[known(&[])], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["empty tuple"]);
    let e = infer("sequence_len", &[AbsVal::tensor(DType::F32, &[2])], vec![]).unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["tuple"]);
    // Tuples and tensors.
    assert_eq!(
        infer("TupleToTensor", &[known(&[1, 2, 3])], vec![]).unwrap(),
        AbsVal::tensor(DType::I64, &[3])
    );
    assert_eq!(
        infer(
            "TupleToTensor",
            &[AbsVal::Tuple(vec![c_int(1), c_float(2.5)])],
            vec![]
        )
        .unwrap(),
        AbsVal::tensor(DType::F32, &[2])
    );
    let r = infer("TensorToTuple", &[AbsVal::tensor(DType::I32, &[2])], vec![]).unwrap();
    assert_eq!(r, AbsVal::Tuple(vec![AbsVal::scalar(DType::I32); 2]));
    let e = infer(
        "TensorToTuple",
        &[AbsVal::tensor(DType::I32, &[2, 2])],
        vec![],
    )
    .unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["1-D"]);
    let r = infer(
        "LessScalar",
        &[AbsVal::tensor(DType::I32, &[2, 3]), c_float(1.5)],
        vec![],
    )
    .unwrap();
    assert_eq!(r, AbsVal::tensor(DType::Bool, &[2, 3]));
    let k = run(
        "LessScalar",
        vec![
            kv(&t(DType::I32, &[3], &[1.0, 2.0, 3.0])),
            num(DType::F32, 1.5),
        ],
        vec![],
    );
    assert_eq!(k.to_f64_vec(), vec![1.0, 0.0, 0.0]);
    let k = run(
        "GreaterEqualScalar",
        vec![
            kv(&t(DType::F32, &[3], &[1.0, 2.0, 3.0])),
            num(DType::I64, 2.0),
        ],
        vec![],
    );
    assert_eq!(k.to_f64_vec(), vec![0.0, 1.0, 1.0]);
}

// ---------------------------------------------------------------------------
// Reductions: odd shapes, unknown shapes, errors.

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

// ---------------------------------------------------------------------------
// Linear algebra: identities and errors.

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
