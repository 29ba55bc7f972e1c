//! The reduction kernels against naive reference loops over every subset of
//! axes (with negative axes, keep_dims, size-1 and zero-size dimensions, rank
//! 0, integer dtypes), ArgMax's ties and NaNs, their shape rules' errors, and
//! the tie-sharing gradient of ReduceMax/ReduceMin.

use ir::{Dim, Shape};
use ops::eager;
use ops::{AbsVal, AttrValue, DType, ErrorTarget, KValue, OpError};
use tensor::Tensor;
use test_support::ops::{
    assert_shaped_close as assert_close, indices, ints as axis, rand, t, try_run as run,
};

fn infer(op: &str, x: &AbsVal, attrs: Vec<(&'static str, AttrValue)>) -> Result<AbsVal, OpError> {
    test_support::ops::infer(op, std::slice::from_ref(x), attrs)
}
/// Reference reduction: groups the elements by their kept coordinates.
fn ref_reduce(
    x: &Tensor,
    reduced: &[bool],
    keep: bool,
    f: &dyn Fn(&[f64]) -> f64,
) -> (Vec<usize>, Vec<f64>) {
    let shape = x.shape();
    let out_full: Vec<usize> = shape
        .iter()
        .zip(reduced)
        .map(|(&d, &r)| if r { 1 } else { d })
        .collect();
    let data = x.to_f64_vec();
    let mut groups: Vec<Vec<f64>> = vec![Vec::new(); out_full.iter().product()];
    for (flat, idx) in indices(shape).iter().enumerate() {
        let key = idx
            .iter()
            .zip(&out_full)
            .zip(reduced)
            .fold(0, |k, ((&i, &d), &r)| k * d + if r { 0 } else { i });
        groups[key].push(data[flat]);
    }
    let out_shape = if keep {
        out_full
    } else {
        shape
            .iter()
            .zip(reduced)
            .filter(|(_, &r)| !r)
            .map(|(&d, _)| d)
            .collect()
    };
    (out_shape, groups.iter().map(|g| f(g)).collect())
}

fn sum(v: &[f64]) -> f64 {
    v.iter().sum()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

/// Every subset of the axes of a rank-`r` tensor, spelled with a mix of
/// positive and negative indices.
fn axis_sets(r: usize) -> Vec<(Vec<i64>, Vec<bool>)> {
    (0..1u32 << r)
        .map(|bits| {
            let mask: Vec<bool> = (0..r).map(|i| bits & (1 << i) != 0).collect();
            let axes = (0..r)
                .filter(|&i| mask[i])
                .map(|i| {
                    if i % 2 == 1 {
                        i as i64 - r as i64
                    } else {
                        i as i64
                    }
                })
                .collect();
            (axes, mask)
        })
        .collect()
}

type Reference = fn(&[f64]) -> f64;

#[test]
fn reductions_match_reference_over_every_axis_set() {
    let ops_: [(&str, Reference); 4] = [
        ("ReduceSum", sum),
        ("ReduceMean", mean),
        ("ReduceMax", max),
        ("ReduceMin", min),
    ];
    let shapes: &[&[usize]] = &[&[2, 3, 4], &[1, 5, 1], &[3, 1, 2, 2], &[7], &[], &[3, 0, 2]];
    for (k, shape) in shapes.iter().enumerate() {
        let x = rand(shape, k as u64, -3.0, 3.0);
        for (axes, mask) in axis_sets(shape.len()) {
            // `()` means every axis.
            let mask = if axes.is_empty() {
                vec![true; shape.len()]
            } else {
                mask
            };
            for keep in [false, true] {
                for (op, f) in ops_ {
                    let (out_shape, want) = ref_reduce(&x, &mask, keep, &f);
                    let attrs = vec![("axis", axis(&axes)), ("keep_dims", AttrValue::Bool(keep))];
                    let empty_extreme = matches!(op, "ReduceMax" | "ReduceMin")
                        && want.iter().any(|v| v.is_infinite());
                    for dtype in [DType::F64, DType::F32] {
                        let what = format!("{op} {dtype} {shape:?} axis={axes:?} keep={keep}");
                        match run(op, &x.cast(dtype), attrs.clone()) {
                            Ok(got) => {
                                assert!(!empty_extreme, "{what}: expected an error");
                                assert_eq!(got.dtype(), dtype);
                                let tol = if dtype == DType::F32 { 1e-6 } else { 1e-14 };
                                let want: Vec<f64> = if dtype == DType::F32 {
                                    let x32 = x.cast(DType::F32);
                                    ref_reduce(&x32, &mask, keep, &f).1
                                } else {
                                    want.clone()
                                };
                                assert_close(&what, &got, &out_shape, &want, tol);
                            }
                            Err(e) => assert!(empty_extreme, "{what}: {}", e.message),
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn integer_reductions_are_exact() {
    let x = t(DType::I32, &[2, 3], &[1.0, -2.0, 3.0, -4.0, 5.0, -7.0]);
    let cases: Vec<(&str, i64, Vec<f64>)> = vec![
        ("ReduceSum", 1, vec![2.0, -6.0]),
        ("ReduceSum", 0, vec![-3.0, 3.0, -4.0]),
        // Integer means truncate toward zero.
        ("ReduceMean", 1, vec![0.0, -2.0]),
        ("ReduceMean", 0, vec![-1.0, 1.0, -2.0]),
        ("ReduceMax", -1, vec![3.0, 5.0]),
        ("ReduceMin", -1, vec![-2.0, -7.0]),
    ];
    for (op, a, want) in cases {
        let got = run(op, &x, vec![("axis", AttrValue::Int(a))]).unwrap();
        assert_eq!(got.dtype(), DType::I32, "{op}");
        assert_eq!(got.to_f64_vec(), want, "{op} axis={a}");
    }
    // Narrow sums wrap like MindSpore's.
    let x = t(DType::I8, &[3], &[100.0, 100.0, 100.0]);
    assert_eq!(
        run("ReduceSum", &x, vec![]).unwrap().to_f64_vec(),
        vec![44.0]
    );
}

#[test]
fn empty_reductions() {
    let x = t(DType::F32, &[2, 0], &[]);
    let got = run("ReduceSum", &x, vec![("axis", AttrValue::Int(1))]).unwrap();
    assert_eq!(
        (got.shape(), got.to_f64_vec()),
        (&[2usize][..], vec![0.0, 0.0])
    );
    let got = run("ReduceMean", &x, vec![("axis", AttrValue::Int(1))]).unwrap();
    assert!(got.to_f64_vec().iter().all(|v| v.is_nan()));
    // Reducing the non-empty axis of an empty tensor is an empty result.
    let got = run("ReduceMax", &x, vec![("axis", AttrValue::Int(0))]).unwrap();
    assert_eq!(got.shape(), &[0]);
    let e = run("ReduceMax", &x, vec![("axis", AttrValue::Int(1))]).unwrap_err();
    assert_eq!(e.target, ErrorTarget::Input(0));
    assert_eq!(
        e.message,
        "`ReduceMax` of an empty dimension has no value: dimension 1 of `x` f32[2, 0] has size 0"
    );
}

#[test]
fn max_and_min_propagate_nan() {
    let x = t(DType::F32, &[2, 2], &[1.0, f64::NAN, f64::NAN, -1.0]);
    for op in ["ReduceMax", "ReduceMin"] {
        let got = run(op, &x, vec![("axis", AttrValue::Int(1))]).unwrap();
        assert!(got.to_f64_vec().iter().all(|v| v.is_nan()), "{op}");
    }
}

#[test]
fn argmax_finds_the_first_maximum() {
    let x = t(DType::F64, &[2, 3], &[1.0, 5.0, 5.0, -1.0, -3.0, -2.0]);
    let got = run("ArgMax", &x, vec![]).unwrap();
    assert_eq!((got.dtype(), got.shape()), (DType::I32, &[2usize][..]));
    assert_eq!(got.to_f64_vec(), vec![1.0, 0.0]);
    let got = run(
        "ArgMax",
        &x,
        vec![
            ("axis", AttrValue::Int(0)),
            ("output_type", AttrValue::DType(DType::I64)),
        ],
    )
    .unwrap();
    assert_eq!(got.dtype(), DType::I64);
    assert_eq!(got.to_f64_vec(), vec![0.0, 0.0, 0.0]);
    // Against a reference, on every axis of a 3-D tensor, in several dtypes.
    let x = rand(&[3, 4, 5], 9, -3.0, 3.0);
    for a in -3i64..3 {
        let ax = a.rem_euclid(3) as usize;
        let mut out_shape = x.shape().to_vec();
        out_shape.remove(ax);
        let xs = x.to_f64_vec();
        let want: Vec<f64> = indices(&out_shape)
            .iter()
            .map(|idx| {
                let mut best = (f64::NEG_INFINITY, 0usize);
                for j in 0..x.shape()[ax] {
                    let mut full = idx.clone();
                    full.insert(ax, j);
                    let flat = full.iter().zip(x.shape()).fold(0, |f, (&i, &d)| f * d + i);
                    if xs[flat] > best.0 {
                        best = (xs[flat], j);
                    }
                }
                best.1 as f64
            })
            .collect();
        for dtype in [DType::F64, DType::F32] {
            let got = run("ArgMax", &x.cast(dtype), vec![("axis", AttrValue::Int(a))]).unwrap();
            assert_eq!(got.shape(), &out_shape[..]);
            assert_eq!(got.to_f64_vec(), want, "axis {a} {dtype}");
        }
        let xi = t(
            DType::I32,
            x.shape(),
            &xs.iter().map(|v| (v * 100.0).round()).collect::<Vec<_>>(),
        );
        let got = run("ArgMax", &xi, vec![("axis", AttrValue::Int(a))]).unwrap();
        assert_eq!(got.to_f64_vec(), want, "axis {a} i32");
    }
    // NaN counts as the maximum (the first one wins); rank 1 gives a scalar.
    let x = t(DType::F32, &[4], &[1.0, f64::NAN, 3.0, f64::NAN]);
    let got = run("ArgMax", &x, vec![]).unwrap();
    assert_eq!((got.shape(), got.to_f64_vec()), (&[][..], vec![1.0]));
    // Rank 0.
    let got = run("ArgMax", &t(DType::F32, &[], &[2.0]), vec![]).unwrap();
    assert_eq!((got.shape(), got.to_f64_vec()), (&[][..], vec![0.0]));
    // An empty result needs no search.
    let got = run("ArgMax", &t(DType::F32, &[0, 3], &[]), vec![]).unwrap();
    assert_eq!(got.shape(), &[0]);
}

#[test]
fn shape_rules() {
    let f32_ = DType::F32;
    let x = AbsVal::tensor(f32_, &[2, 3, 4]);
    let cases = vec![
        (vec![], AbsVal::tensor(f32_, &[])),
        (
            vec![("axis", AttrValue::Int(1))],
            AbsVal::tensor(f32_, &[2, 4]),
        ),
        (
            vec![
                ("axis", axis(&[0, -1])),
                ("keep_dims", AttrValue::Bool(true)),
            ],
            AbsVal::tensor(f32_, &[1, 3, 1]),
        ),
        (
            vec![("keep_dims", AttrValue::Bool(true))],
            AbsVal::tensor(f32_, &[1, 1, 1]),
        ),
    ];
    for (attrs, want) in cases {
        for op in ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"] {
            assert_eq!(infer(op, &x, attrs.clone()), Ok(want.clone()), "{op}");
        }
    }
    // Symbolic dimensions pass through; unknown and unranked inputs.
    let sym = AbsVal::Tensor {
        dtype: f32_,
        shape: Shape::Ranked(vec![Dim::Sym("B".into()), Dim::Known(3)]),
    };
    let want = AbsVal::Tensor {
        dtype: f32_,
        shape: Shape::Ranked(vec![Dim::Sym("B".into())]),
    };
    assert_eq!(
        infer("ReduceSum", &sym, vec![("axis", AttrValue::Int(1))]),
        Ok(want.clone())
    );
    assert_eq!(
        infer("ArgMax", &sym, vec![]).map(|v| v.shape()),
        Ok(want.shape())
    );
    assert_eq!(infer("ReduceSum", &AbsVal::Any, vec![]), Ok(AbsVal::Any));
    let unranked = AbsVal::Tensor {
        dtype: f32_,
        shape: Shape::Unranked,
    };
    assert_eq!(
        infer("ReduceMean", &unranked, vec![]),
        Ok(AbsVal::tensor(f32_, &[]))
    );
    assert_eq!(
        infer("ReduceMean", &unranked, vec![("axis", AttrValue::Int(0))]),
        Ok(unranked)
    );
    // A scalar reduces to a scalar.
    let s = AbsVal::scalar(DType::I64);
    assert_eq!(infer("ReduceSum", &s, vec![]), Ok(s));
    assert_eq!(
        infer("ArgMax", &AbsVal::tensor(DType::I8, &[5]), vec![]),
        Ok(AbsVal::tensor(DType::I32, &[]))
    );
}

#[test]
fn shape_rule_errors() {
    let x = AbsVal::tensor(DType::F32, &[2, 3]);
    let e = infer("ReduceSum", &x, vec![("axis", AttrValue::Int(3))]).unwrap_err();
    assert_eq!(e.target, ErrorTarget::Attr("axis"));
    assert_eq!(
        e.message,
        "`ReduceSum`: `axis` is 3, out of range for rank 2 (allowed -2..=1)"
    );
    let e = infer("ReduceMax", &x, vec![("axis", axis(&[0, -3]))]).unwrap_err();
    assert_eq!(e.target, ErrorTarget::Attr("axis"));
    assert_eq!(
        e.message,
        "`ReduceMax`: `axis` is -3, out of range for rank 2 (allowed -2..=1)"
    );
    let e = infer("ReduceMean", &x, vec![("axis", axis(&[1, -1]))]).unwrap_err();
    assert_eq!(e.target, ErrorTarget::Attr("axis"));
    assert_eq!(
        e.message,
        "`ReduceMean`: `axis` names dimension 1 more than once"
    );
    let e = infer("ReduceSum", &AbsVal::tensor(DType::Bool, &[3]), vec![]).unwrap_err();
    assert_eq!(e.target, ErrorTarget::Input(0));
    assert_eq!(
        e.message,
        "`ReduceSum` needs a numeric tensor, but `x` is bool[3]"
    );
    let e = infer("ArgMax", &x, vec![("axis", AttrValue::Int(2))]).unwrap_err();
    assert_eq!(e.target, ErrorTarget::Attr("axis"));
    assert_eq!(
        e.message,
        "`ArgMax`: `axis` is 2, out of range for rank 2 (allowed -2..=1)"
    );
    let e = infer(
        "ArgMax",
        &x,
        vec![("output_type", AttrValue::DType(DType::F32))],
    )
    .unwrap_err();
    assert_eq!(e.target, ErrorTarget::Attr("output_type"));
    assert_eq!(
        e.message,
        "`ArgMax`: `output_type` must be i32 or i64, not f32"
    );
    let e = infer("ArgMax", &AbsVal::tensor(DType::F32, &[2, 0]), vec![]).unwrap_err();
    assert_eq!(e.target, ErrorTarget::Input(0));
    // The kernel reports the same range errors if called directly.
    let e = run(
        "ReduceSum",
        &t(DType::F32, &[2], &[1.0, 2.0]),
        vec![("axis", AttrValue::Int(-2))],
    )
    .unwrap_err();
    assert_eq!(
        e.message,
        "`ReduceSum`: `axis` is -2, out of range for rank 1 (allowed -1..=0)"
    );
}

fn grad(op: &str, x: &Tensor, attrs: Vec<(&'static str, AttrValue)>, dout: &Tensor) -> Tensor {
    eager::gradient(
        op,
        &[KValue::Tensor(x.clone())],
        attrs,
        &KValue::Tensor(dout.clone()),
    )
    .unwrap()[0]
        .clone()
        .unwrap()
        .into_tensor()
        .unwrap()
}

#[test]
fn max_and_min_gradients_share_among_ties() {
    let x = t(DType::F64, &[2, 3], &[1.0, 3.0, 3.0, 2.0, 2.0, 2.0]);
    let d = t(DType::F64, &[2], &[1.0, 3.0]);
    let g = grad("ReduceMax", &x, vec![("axis", AttrValue::Int(1))], &d);
    assert_eq!(g.to_f64_vec(), vec![0.0, 0.5, 0.5, 1.0, 1.0, 1.0]);
    let g = grad("ReduceMin", &x, vec![("axis", AttrValue::Int(-1))], &d);
    assert_eq!(g.to_f64_vec(), vec![1.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
    // Over everything, keep_dims.
    let d = t(DType::F64, &[1, 1], &[6.0]);
    let g = grad(
        "ReduceMax",
        &x,
        vec![("keep_dims", AttrValue::Bool(true))],
        &d,
    );
    assert_eq!(g.to_f64_vec(), vec![0.0, 3.0, 3.0, 0.0, 0.0, 0.0]);
}

#[test]
fn sum_and_mean_gradients_broadcast_back() {
    let x = rand(&[2, 3, 4], 1, -1.0, 1.0);
    let d = rand(&[2, 4], 2, -1.0, 1.0);
    let dv = d.to_f64_vec();
    let g = grad("ReduceSum", &x, vec![("axis", AttrValue::Int(1))], &d);
    let want: Vec<f64> = indices(&[2, 3, 4])
        .iter()
        .map(|i| dv[i[0] * 4 + i[2]])
        .collect();
    assert_eq!(
        (g.shape(), g.to_f64_vec()),
        (&[2usize, 3, 4][..], want.clone())
    );
    let g = grad("ReduceMean", &x, vec![("axis", AttrValue::Int(1))], &d);
    let want: Vec<f64> = want.iter().map(|v| v / 3.0).collect();
    assert_close("mean grad", &g, &[2, 3, 4], &want, 1e-15);
    // Integer inputs get none.
    let xi = t(DType::I32, &[2], &[1.0, 2.0]);
    let gi = eager::gradient(
        "ReduceSum",
        &[KValue::Tensor(xi)],
        vec![],
        &KValue::Tensor(t(DType::I32, &[], &[0.0])),
    )
    .unwrap();
    assert!(gi[0].is_none());
}

#[test]
fn broadcast_to_shape_of_undoes_reductions() {
    let like = KValue::Tensor(rand(&[2, 3], 1, -1.0, 1.0));
    let g = KValue::Tensor(t(DType::F32, &[3], &[1.0, 2.0, 3.0]));
    let got = eager::call(
        "_BroadcastToShapeOf",
        &[g, like.clone()],
        vec![("axis", AttrValue::Int(0)), ("mean", AttrValue::Bool(true))],
    )
    .unwrap()
    .into_tensor()
    .unwrap();
    assert_eq!(got.dtype(), DType::F32);
    assert_eq!(got.to_f64_vec(), vec![0.5, 1.0, 1.5, 0.5, 1.0, 1.5]);
    let bad = KValue::Tensor(t(DType::F32, &[2], &[1.0, 2.0]));
    assert!(eager::call(
        "_BroadcastToShapeOf",
        &[bad, like],
        vec![("axis", AttrValue::Int(0))]
    )
    .is_err());
}

/// Reductions are documented.
#[test]
fn every_reduction_is_documented() {
    for op in ops::defs::reduce::OPS {
        assert!(op.doc.ends_with('.') && op.doc.len() > 20, "{}", op.name);
        for p in op.params() {
            assert!(p.doc.ends_with('.'), "{}.{}", op.name, p.name);
        }
    }
}
