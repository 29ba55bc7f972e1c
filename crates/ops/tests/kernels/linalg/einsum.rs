//! Einsum against direct summation over every index (MindSpore's CPU backend has no Einsum kernel to compare with): explicit and implicit outputs, ellipses, the shape rule.

use std::collections::HashMap;

use ir::{Dim, Shape};
use ops::{AbsVal, DType, ErrorTarget, KValue};
use tensor::Tensor;
use test_support::ops::{assert_err, infer, ints, kv, rnd as rand, run, s};

use crate::common::close;

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
