//! Kernels and shape rules of the shape primitives against straightforward
//! reference implementations, on odd shapes, and their errors.

use ops::eager;
use ops::{AbsVal, AttrValue, ErrorTarget, KValue};
use tensor::{DType, Tensor};
use test_support::ops::{
    abs, arange, assert_err, indices, infer, int, ints, kv, rnd, run, run_err,
};

/// Element `index` (row-major multi-index) of a tensor.
fn at(t: &Tensor, index: &[usize]) -> f64 {
    let mut off = 0;
    for (d, &i) in index.iter().enumerate() {
        off = off * t.shape()[d] + i;
    }
    t.to_f64_vec()[off]
}

// ---------------------------------------------------------------------------

#[test]
fn reshape_infers_minus_one_and_keeps_order() {
    let x = rnd(&[2, 3, 4], 1);
    let y = run("Reshape", &[&x], vec![("shape", ints(&[4, -1]))]);
    assert_eq!(y.shape(), &[4, 6]);
    assert_eq!(y.to_f64_vec(), x.to_f64_vec());
    let z = run("Reshape", &[&x], vec![("shape", ints(&[-1]))]);
    assert_eq!(z.shape(), &[24]);
    // A scalar to [1, 1] and back; zero-size tensors.
    let s = Tensor::scalar(DType::F64, 3.0);
    assert_eq!(
        run("Reshape", &[&s], vec![("shape", ints(&[1, 1]))]).shape(),
        &[1, 1]
    );
    let e = rnd(&[0, 3], 2);
    assert_eq!(
        run("Reshape", &[&e], vec![("shape", ints(&[3, 0]))]).shape(),
        &[3, 0]
    );
    // Integer and bool tensors move as they are.
    let i = Tensor::from_i64(DType::I32, vec![2, 2], vec![1, 2, 3, 4]).unwrap();
    let r = run("Reshape", &[&i], vec![("shape", ints(&[4]))]);
    assert_eq!(
        (r.dtype(), r.to_f64_vec()),
        (DType::I32, vec![1.0, 2.0, 3.0, 4.0])
    );
}

#[test]
fn reshape_errors_name_the_attribute_and_counts() {
    let x = kv(&rnd(&[2, 3], 1));
    let e = run_err("Reshape", vec![x.clone()], vec![("shape", ints(&[4, 2]))]);
    assert_err(
        &e,
        ErrorTarget::Attr("shape"),
        &["Reshape", "[2, 3]", "6 elements", "(4, 2)", "8 elements"],
    );
    let e = run_err("Reshape", vec![x.clone()], vec![("shape", ints(&[-1, -1]))]);
    assert_err(&e, ErrorTarget::Attr("shape"), &["more than one -1"]);
    let e = run_err("Reshape", vec![x.clone()], vec![("shape", ints(&[-1, 4]))]);
    assert_err(&e, ErrorTarget::Attr("shape"), &["not a multiple of 4"]);
    let e = run_err("Reshape", vec![x.clone()], vec![("shape", ints(&[-2, 3]))]);
    assert_err(&e, ErrorTarget::Attr("shape"), &["negative size -2"]);
    let e = run_err(
        "Reshape",
        vec![kv(&rnd(&[0, 3], 1))],
        vec![("shape", ints(&[0, -1]))],
    );
    assert_err(&e, ErrorTarget::Attr("shape"), &["cannot infer the -1"]);
}

#[test]
fn reshape_with_symbolic_dims() {
    let r = infer(
        "Reshape",
        vec![abs(&["B", "12"])],
        vec![("shape", ints(&[-1, 12]))],
    )
    .unwrap();
    assert_eq!(r, abs(&["B", "12"]));
    let r = infer(
        "Reshape",
        vec![abs(&["B", "12"])],
        vec![("shape", ints(&[-1, 4]))],
    )
    .unwrap();
    assert_eq!(r, abs(&["?", "4"]));
    let r = infer(
        "Reshape",
        vec![abs(&["B", "3", "4"])],
        vec![("shape", ints(&[3, -1, 4]))],
    )
    .unwrap();
    assert_eq!(r, abs(&["3", "B", "4"]));
    // [B, 3] has a multiple of 3 elements: 20 is impossible for every B.
    let e = infer(
        "Reshape",
        vec![abs(&["B", "3"])],
        vec![("shape", ints(&[4, 5]))],
    )
    .unwrap_err();
    assert_err(&e, ErrorTarget::Attr("shape"), &["multiple of 3"]);
    // Undecidable: accepted.
    assert_eq!(
        infer(
            "Reshape",
            vec![abs(&["B", "3"])],
            vec![("shape", ints(&[2, 3]))]
        )
        .unwrap(),
        abs(&["2", "3"])
    );
    // Unknown rank.
    let unranked = AbsVal::Tensor {
        dtype: DType::F32,
        shape: ir::Shape::Unranked,
    };
    assert_eq!(
        infer("Reshape", vec![unranked], vec![("shape", ints(&[-1, 2]))]).unwrap(),
        abs(&["?", "2"])
    );
}

#[test]
fn transpose_matches_reference() {
    let x = rnd(&[2, 3, 4, 1], 3);
    for perm in [[0, 1, 2, 3], [3, 2, 1, 0], [1, 3, 0, 2], [2, 0, 3, 1]] {
        let p: Vec<i64> = perm.iter().map(|&v| v as i64).collect();
        let y = run("Transpose", &[&x], vec![("perm", ints(&p))]);
        let expect: Vec<usize> = perm.iter().map(|&d| x.shape()[d]).collect();
        assert_eq!(y.shape(), expect.as_slice());
        for idx in indices(y.shape()) {
            let mut src = [0; 4];
            for (i, &d) in perm.iter().enumerate() {
                src[d] = idx[i];
            }
            assert_eq!(at(&y, &idx), at(&x, &src));
        }
    }
    // Negative entries count from the end; zero-size dims.
    let y = run(
        "Transpose",
        &[&rnd(&[2, 0, 3], 4)],
        vec![("perm", ints(&[-1, 0, 1]))],
    );
    assert_eq!(y.shape(), &[3, 2, 0]);
}

#[test]
fn transpose_errors() {
    let x = kv(&rnd(&[2, 3], 1));
    let e = run_err("Transpose", vec![x.clone()], vec![("perm", ints(&[0, 0]))]);
    assert_err(
        &e,
        ErrorTarget::Attr("perm"),
        &["Transpose", "(0, 0)", "not a permutation", "twice"],
    );
    let e = run_err(
        "Transpose",
        vec![x.clone()],
        vec![("perm", ints(&[0, 1, 2]))],
    );
    assert_err(&e, ErrorTarget::Attr("perm"), &["3 entries", "rank 2"]);
    let e = run_err("Transpose", vec![x], vec![("perm", ints(&[0, 2]))]);
    assert_err(&e, ErrorTarget::Attr("perm"), &["2 is out of range"]);
}

/// A transposed (non-contiguous in the source's order) tensor flows through
/// more shape primitives; the result matches index arithmetic on the original.
#[test]
fn transpose_then_other_primitives() {
    let x = arange(&[2, 3, 4]);
    let t = run("Transpose", &[&x], vec![("perm", ints(&[2, 0, 1]))]); // [4, 2, 3]
    let s = run(
        "StridedSlice",
        &[&t],
        vec![
            ("begin", ints(&[1, 0, 2])),
            ("end", ints(&[4, 2, -3])),
            ("strides", ints(&[2, 1, -1])),
        ],
    ); // t[1:4:2, 0:2, 2:-3:-1] -> [2, 2, 2]
    assert_eq!(s.shape(), &[2, 2, 2]);
    for a in 0..2 {
        for b in 0..2 {
            for c in 0..2 {
                // t[i, j, k] = x[j, k, i]
                let (i, j, k) = (1 + 2 * a, b, 2 - c);
                assert_eq!(at(&s, &[a, b, c]), at(&x, &[j, k, i]));
            }
        }
    }
    let idx = Tensor::from_i64(DType::I64, vec![3], vec![2, 0, 2]).unwrap();
    let g = run("Gather", &[&t, &idx], vec![("axis", int(-1))]); // [4, 2, 3]
    for (n, i) in indices(g.shape()).into_iter().enumerate() {
        let k = [2, 0, 2][i[2]];
        assert_eq!(g.to_f64_vec()[n], at(&x, &[i[1], k, i[0]]));
    }
    let f = run("Flatten", &[&t], vec![]);
    assert_eq!(f.shape(), &[4, 6]);
    let r = run("Reshape", &[&t], vec![("shape", ints(&[2, -1]))]);
    assert_eq!(r.to_f64_vec(), t.to_f64_vec());
    let c = run("Tile", &[&t], vec![("multiples", ints(&[1, 2, 1]))]);
    assert_eq!(at(&c, &[3, 3, 1]), at(&t, &[3, 1, 1]));
}

#[test]
fn expand_dims_and_squeeze() {
    let x = rnd(&[2, 3], 5);
    for (axis, shape) in [
        (0, [1, 2, 3]),
        (1, [2, 1, 3]),
        (2, [2, 3, 1]),
        (-1, [2, 3, 1]),
        (-3, [1, 2, 3]),
    ] {
        let y = run("ExpandDims", &[&x], vec![("axis", int(axis))]);
        assert_eq!(y.shape(), &shape);
        assert_eq!(y.to_f64_vec(), x.to_f64_vec());
    }
    let e = run_err("ExpandDims", vec![kv(&x)], vec![("axis", int(3))]);
    assert_err(
        &e,
        ErrorTarget::Attr("axis"),
        &["ExpandDims", "3", "out of range", "-3..=2"],
    );

    let x = rnd(&[1, 3, 1, 2], 6);
    assert_eq!(run("Squeeze", &[&x], vec![]).shape(), &[3, 2]);
    assert_eq!(
        run("Squeeze", &[&x], vec![("axis", int(-2))]).shape(),
        &[1, 3, 2]
    );
    assert_eq!(
        run("Squeeze", &[&x], vec![("axis", ints(&[0, 2]))]).shape(),
        &[3, 2]
    );
    let one = rnd(&[1], 7);
    assert_eq!(run("Squeeze", &[&one], vec![]).shape(), &[] as &[usize]);
    let e = run_err("Squeeze", vec![kv(&x)], vec![("axis", int(1))]);
    assert_err(
        &e,
        ErrorTarget::Attr("axis"),
        &["Squeeze", "size 1", "axis 1", "size 3"],
    );
    // `axis=()` with a size that is not known: the rank is unknown.
    let r = infer("Squeeze", vec![abs(&["1", "B"])], vec![]).unwrap();
    assert_eq!(
        r,
        AbsVal::Tensor {
            dtype: DType::F32,
            shape: ir::Shape::Unranked
        }
    );
    assert_eq!(
        infer("Squeeze", vec![abs(&["1", "B"])], vec![("axis", int(0))]).unwrap(),
        abs(&["B"])
    );
}

#[test]
fn flatten_shapes() {
    assert_eq!(
        run("Flatten", &[&rnd(&[2, 3, 4], 1)], vec![]).shape(),
        &[2, 12]
    );
    assert_eq!(run("Flatten", &[&rnd(&[5], 1)], vec![]).shape(), &[5, 1]);
    assert_eq!(
        run("Flatten", &[&rnd(&[0, 3, 2], 1)], vec![]).shape(),
        &[0, 6]
    );
    assert_eq!(
        infer("Flatten", vec![abs(&["B", "3", "4"])], vec![]).unwrap(),
        abs(&["B", "12"])
    );
    assert_eq!(
        infer("Flatten", vec![abs(&["B", "C"])], vec![]).unwrap(),
        abs(&["B", "C"])
    );
    assert_eq!(
        infer("Flatten", vec![abs(&["B", "C", "2"])], vec![]).unwrap(),
        abs(&["B", "?"])
    );
    let e = run_err(
        "Flatten",
        vec![kv(&Tensor::scalar(DType::F32, 1.0))],
        vec![],
    );
    assert_err(&e, ErrorTarget::Input(0), &["Flatten", "rank at least 1"]);
}

#[test]
fn concat_matches_reference() {
    let a = rnd(&[2, 3, 2], 1);
    let b = rnd(&[2, 1, 2], 2);
    let c = rnd(&[2, 0, 2], 3);
    let tuple = KValue::Tuple(vec![kv(&a), kv(&b), kv(&c)]);
    let y = match eager::call("Concat", &[tuple], vec![("axis", int(-2))]).unwrap() {
        KValue::Tensor(t) => t,
        _ => unreachable!(),
    };
    assert_eq!(y.shape(), &[2, 4, 2]);
    for idx in indices(y.shape()) {
        let v = if idx[1] < 3 {
            at(&a, &idx)
        } else {
            at(&b, &[idx[0], idx[1] - 3, idx[2]])
        };
        assert_eq!(at(&y, &idx), v);
    }
    // Axis 0, one element.
    let y = eager::call("Concat", &[KValue::Tuple(vec![kv(&a)])], vec![]).unwrap();
    assert_eq!(y, kv(&a));
}

#[test]
fn concat_errors() {
    let a = kv(&rnd(&[2, 3], 1));
    let b = kv(&rnd(&[3, 3], 2));
    let e = run_err(
        "Concat",
        vec![KValue::Tuple(vec![a.clone(), b.clone()])],
        vec![("axis", int(1))],
    );
    assert_err(
        &e,
        ErrorTarget::Input(0),
        &["Concat", "axis 1", "[3, 3]", "[2, 3]", "dimension 0"],
    );
    let i = KValue::Tensor(Tensor::from_i64(DType::I64, vec![2, 3], vec![0; 6]).unwrap());
    let e = run_err("Concat", vec![KValue::Tuple(vec![a.clone(), i])], vec![]);
    assert_err(&e, ErrorTarget::Input(0), &["one dtype", "f64", "i64"]);
    let e = run_err("Concat", vec![KValue::Tuple(vec![])], vec![]);
    assert_err(&e, ErrorTarget::Input(0), &["at least one tensor"]);
    let e = run_err("Concat", vec![a.clone()], vec![]);
    assert_err(&e, ErrorTarget::Input(0), &["tuple of tensors"]);
    let e = run_err(
        "Concat",
        vec![KValue::Tuple(vec![a.clone(), a])],
        vec![("axis", int(2))],
    );
    assert_err(
        &e,
        ErrorTarget::Attr("axis"),
        &["Concat", "2", "out of range"],
    );
    // Symbolic sizes: joined where they can be.
    let r = infer(
        "Concat",
        vec![AbsVal::Tuple(vec![abs(&["B", "3"]), abs(&["B", "4"])])],
        vec![("axis", int(1))],
    )
    .unwrap();
    assert_eq!(r, abs(&["B", "7"]));
    let r = infer(
        "Concat",
        vec![AbsVal::Tuple(vec![abs(&["B", "3"]), abs(&["C", "3"])])],
        vec![],
    )
    .unwrap();
    assert_eq!(r, abs(&["?", "3"]));
}

#[test]
fn tile_matches_reference() {
    let x = rnd(&[2, 3], 4);
    let y = run("Tile", &[&x], vec![("multiples", ints(&[2, 1, 3]))]);
    assert_eq!(y.shape(), &[2, 2, 9]);
    for idx in indices(y.shape()) {
        assert_eq!(at(&y, &idx), at(&x, &[idx[1] % 2, idx[2] % 3]));
    }
    assert_eq!(
        run("Tile", &[&x], vec![("multiples", ints(&[0, 2]))]).shape(),
        &[0, 6]
    );
    let e = run_err("Tile", vec![kv(&x)], vec![("multiples", ints(&[2]))]);
    assert_err(
        &e,
        ErrorTarget::Attr("multiples"),
        &["Tile", "(2,)", "fewer than the rank 2"],
    );
    let e = run_err("Tile", vec![kv(&x)], vec![("multiples", ints(&[1, -1]))]);
    assert_err(&e, ErrorTarget::Attr("multiples"), &["negative"]);
}

#[test]
fn broadcast_to_matches_reference() {
    let x = rnd(&[3, 1], 5);
    let y = run("BroadcastTo", &[&x], vec![("shape", ints(&[2, -1, 4]))]);
    assert_eq!(y.shape(), &[2, 3, 4]);
    for idx in indices(y.shape()) {
        assert_eq!(at(&y, &idx), at(&x, &[idx[1], 0]));
    }
    let e = run_err("BroadcastTo", vec![kv(&x)], vec![("shape", ints(&[2, 4]))]);
    assert_err(
        &e,
        ErrorTarget::Attr("shape"),
        &["BroadcastTo", "[3, 1]", "3 against 2"],
    );
    let e = run_err(
        "BroadcastTo",
        vec![kv(&x)],
        vec![("shape", ints(&[-1, 3, 1]))],
    );
    assert_err(&e, ErrorTarget::Attr("shape"), &["-1 at position 0"]);
    let e = run_err("BroadcastTo", vec![kv(&x)], vec![("shape", ints(&[1]))]);
    assert_err(&e, ErrorTarget::Attr("shape"), &["fewer dimensions"]);
}

#[test]
fn gather_matches_reference() {
    let x = rnd(&[3, 4, 2], 6);
    let idx = Tensor::from_i64(DType::I32, vec![2, 3], vec![3, 0, 1, 1, 2, 3]).unwrap();
    for axis in [1i64, -2] {
        let y = run("Gather", &[&x, &idx], vec![("axis", int(axis))]);
        assert_eq!(y.shape(), &[3, 2, 3, 2]);
        for i in indices(y.shape()) {
            let k = at(&idx, &[i[1], i[2]]) as usize;
            assert_eq!(at(&y, &i), at(&x, &[i[0], k, i[3]]));
        }
    }
    // batch_dims = 1: per row of indices.
    let idx = Tensor::from_i64(DType::I64, vec![3, 2], vec![0, 3, 2, 2, 1, 0]).unwrap();
    let y = run(
        "Gather",
        &[&x, &idx],
        vec![("axis", int(1)), ("batch_dims", int(1))],
    );
    assert_eq!(y.shape(), &[3, 2, 2]);
    for i in indices(y.shape()) {
        let k = at(&idx, &[i[0], i[1]]) as usize;
        assert_eq!(at(&y, &i), at(&x, &[i[0], k, i[2]]));
    }
    // Scalar indices drop the axis; empty indices give an empty result.
    let s = Tensor::from_i64(DType::I64, vec![], vec![2]).unwrap();
    let y = run("Gather", &[&x, &s], vec![("axis", int(0))]);
    assert_eq!(y.shape(), &[4, 2]);
    assert_eq!(y.to_f64_vec(), x.to_f64_vec()[16..].to_vec());
    let empty = Tensor::from_i64(DType::I64, vec![0], vec![]).unwrap();
    assert_eq!(
        run("Gather", &[&x, &empty], vec![("axis", int(2))]).shape(),
        &[3, 4, 0]
    );
}

#[test]
fn gather_errors() {
    let x = kv(&rnd(&[3, 4], 6));
    let bad = KValue::Tensor(Tensor::from_i64(DType::I64, vec![2], vec![1, 4]).unwrap());
    let e = run_err("Gather", vec![x.clone(), bad], vec![("axis", int(1))]);
    assert_err(
        &e,
        ErrorTarget::Input(1),
        &["Gather", "index 4", "out of range", "size 4"],
    );
    let neg = KValue::Tensor(Tensor::from_i64(DType::I32, vec![1], vec![-1]).unwrap());
    let e = run_err("Gather", vec![x.clone(), neg], vec![("axis", int(0))]);
    assert_err(&e, ErrorTarget::Input(1), &["index -1"]);
    let e = run_err("Gather", vec![x.clone(), x.clone()], vec![("axis", int(0))]);
    assert_err(&e, ErrorTarget::Input(1), &["i32 or i64", "f64"]);
    let i = KValue::Tensor(Tensor::from_i64(DType::I64, vec![1], vec![0]).unwrap());
    let e = run_err("Gather", vec![x.clone(), i.clone()], vec![("axis", int(2))]);
    assert_err(&e, ErrorTarget::Attr("axis"), &["Gather", "out of range"]);
    let e = run_err(
        "Gather",
        vec![x, i],
        vec![("axis", int(0)), ("batch_dims", int(1))],
    );
    assert_err(&e, ErrorTarget::Attr("batch_dims"), &["batch_dims"]);
}

#[test]
fn shape_is_constant_when_known() {
    let r = infer("Shape", vec![abs(&["2", "B"])], vec![]).unwrap();
    let AbsVal::Tuple(items) = r else {
        panic!("not a tuple")
    };
    assert_eq!(items[0].const_value(), Some(ir::ScalarConst::Int(2)));
    assert_eq!(items[1].const_value(), None);
    assert_eq!(items[1].dtype(), Some(DType::I64));
    let v = eager::call("Shape", &[kv(&rnd(&[2, 0, 3], 1))], vec![]).unwrap();
    let KValue::Tuple(items) = v else {
        panic!("not a tuple")
    };
    let dims: Vec<f64> = items
        .iter()
        .map(|i| match i {
            KValue::Tensor(t) => {
                assert_eq!((t.dtype(), t.rank()), (DType::I64, 0));
                t.to_f64_vec()[0]
            }
            _ => panic!(),
        })
        .collect();
    assert_eq!(dims, vec![2.0, 0.0, 3.0]);
}

/// Python's `range(*slice(b, e, s).indices(size))`: the reference for StridedSlice.
fn py_slice(size: i64, b: Option<i64>, e: Option<i64>, s: i64) -> Vec<usize> {
    let norm = |v: i64| if v < 0 { v + size } else { v };
    let (lo, hi) = if s > 0 { (0, size) } else { (-1, size - 1) };
    let b = b.map_or(if s > 0 { 0 } else { size - 1 }, |v| norm(v).clamp(lo, hi));
    let e = e.map_or(if s > 0 { size } else { -1 }, |v| norm(v).clamp(lo, hi));
    let mut out = Vec::new();
    let mut i = b;
    while (s > 0 && i < e) || (s < 0 && i > e) {
        out.push(i as usize);
        i += s;
    }
    out
}

#[test]
fn strided_slice_matches_python_slicing() {
    let x = arange(&[4, 5, 3]);
    type Case = (Vec<(&'static str, AttrValue)>, [Vec<usize>; 3]);
    let cases: Vec<Case> = vec![
        // x[1:4:2, 0:5, ::]
        (
            vec![
                ("begin", ints(&[1, 0])),
                ("end", ints(&[4, 5])),
                ("strides", ints(&[2, 1])),
            ],
            [
                py_slice(4, Some(1), Some(4), 2),
                py_slice(5, Some(0), Some(5), 1),
                py_slice(3, None, None, 1),
            ],
        ),
        // x[-1:0:-2, 10:-10:-1, -2:]
        (
            vec![
                ("begin", ints(&[-1, 10, -2])),
                ("end", ints(&[0, -10, 3])),
                ("strides", ints(&[-2, -1, 1])),
            ],
            [
                py_slice(4, Some(-1), Some(0), -2),
                py_slice(5, Some(10), Some(-10), -1),
                py_slice(3, Some(-2), Some(3), 1),
            ],
        ),
        // x[:, ::-2, :2] with begin/end masks
        (
            vec![
                ("begin", ints(&[7, 7, 0])),
                ("end", ints(&[7, 7, 2])),
                ("strides", ints(&[1, -2, 1])),
                ("begin_mask", int(0b011)),
                ("end_mask", int(0b011)),
            ],
            [
                py_slice(4, None, None, 1),
                py_slice(5, None, None, -2),
                py_slice(3, Some(0), Some(2), 1),
            ],
        ),
        // Empty: x[3:1]
        (
            vec![
                ("begin", ints(&[3])),
                ("end", ints(&[1])),
                ("strides", ints(&[1])),
            ],
            [
                vec![],
                py_slice(5, None, None, 1),
                py_slice(3, None, None, 1),
            ],
        ),
    ];
    for (attrs, expect) in cases {
        let y = run("StridedSlice", &[&x], attrs.clone());
        let shape: Vec<usize> = expect.iter().map(Vec::len).collect();
        assert_eq!(y.shape(), shape.as_slice(), "{attrs:?}");
        let mut want = Vec::new();
        for &i in &expect[0] {
            for &j in &expect[1] {
                for &k in &expect[2] {
                    want.push(at(&x, &[i, j, k]));
                }
            }
        }
        assert_eq!(y.to_f64_vec(), want, "{attrs:?}");
    }
}

#[test]
fn strided_slice_masks() {
    let x = arange(&[2, 3, 4]);
    // x[:, ::-1, 1]: shrink the last axis.
    let y = run(
        "StridedSlice",
        &[&x],
        vec![
            ("begin", ints(&[0, 0, 1])),
            ("end", ints(&[0, 0, 2])),
            ("strides", ints(&[1, -1, 1])),
            ("begin_mask", int(3)),
            ("end_mask", int(3)),
            ("shrink_axis_mask", int(4)),
        ],
    );
    assert_eq!(y.shape(), &[2, 3]);
    for i in indices(&[2, 3]) {
        assert_eq!(at(&y, &i), at(&x, &[i[0], 2 - i[1], 1]));
    }
    // x[..., 1:3]
    let y = run(
        "StridedSlice",
        &[&x],
        vec![
            ("begin", ints(&[0, 1])),
            ("end", ints(&[0, 3])),
            ("strides", ints(&[1, 1])),
            ("ellipsis_mask", int(1)),
        ],
    );
    assert_eq!(y.shape(), &[2, 3, 2]);
    assert_eq!(at(&y, &[1, 2, 1]), at(&x, &[1, 2, 2]));
    // x[:, None, -1]
    let y = run(
        "StridedSlice",
        &[&x],
        vec![
            ("begin", ints(&[0, 0, -1])),
            ("end", ints(&[0, 0, 0])),
            ("strides", ints(&[1, 1, 1])),
            ("begin_mask", int(1)),
            ("end_mask", int(1)),
            ("new_axis_mask", int(2)),
            ("shrink_axis_mask", int(4)),
        ],
    );
    assert_eq!(y.shape(), &[2, 1, 4]);
    assert_eq!(at(&y, &[1, 0, 3]), at(&x, &[1, 2, 3]));
    // Symbolic sizes: whole dimensions keep their symbol.
    let r = infer(
        "StridedSlice",
        vec![abs(&["B", "6"])],
        vec![
            ("begin", ints(&[0, 1])),
            ("end", ints(&[0, 5])),
            ("strides", ints(&[1, 2])),
            ("begin_mask", int(1)),
            ("end_mask", int(1)),
        ],
    )
    .unwrap();
    assert_eq!(r, abs(&["B", "2"]));
}

#[test]
fn strided_slice_errors() {
    let x = kv(&arange(&[2, 3]));
    let attrs = |b: &[i64], e: &[i64], s: &[i64]| {
        vec![("begin", ints(b)), ("end", ints(e)), ("strides", ints(s))]
    };
    let err = run_err("StridedSlice", vec![x.clone()], attrs(&[0], &[1, 2], &[1]));
    assert_err(
        &err,
        ErrorTarget::Attr("end"),
        &["StridedSlice", "different lengths"],
    );
    let err = run_err("StridedSlice", vec![x.clone()], attrs(&[0], &[1], &[0]));
    assert_err(&err, ErrorTarget::Attr("strides"), &["non-zero"]);
    let err = run_err(
        "StridedSlice",
        vec![x.clone()],
        attrs(&[0, 0, 0], &[1, 1, 1], &[1, 1, 1]),
    );
    assert_err(&err, ErrorTarget::Attr("begin"), &["rank 2"]);
    let mut a = attrs(&[5], &[6], &[1]);
    a.push(("shrink_axis_mask", int(1)));
    let err = run_err("StridedSlice", vec![x], a);
    assert_err(
        &err,
        ErrorTarget::Attr("begin"),
        &["index 5", "out of range", "size 2"],
    );
}

/// The gradient helpers are adjoint to their forward kernels:
/// `<f(x), g> == <x, f^T(g)>`.
#[test]
fn gradient_helpers_are_adjoint() {
    let dot = |a: &Tensor, b: &Tensor| -> f64 {
        a.to_f64_vec()
            .iter()
            .zip(b.to_f64_vec())
            .map(|(x, y)| x * y)
            .sum()
    };
    let x = rnd(&[3, 4, 2], 11);
    let check =
        |op: &str, attrs: Vec<(&'static str, AttrValue)>, extra: Option<Tensor>, helper: &str| {
            let mut inputs = vec![kv(&x)];
            if let Some(e) = &extra {
                inputs.push(kv(e));
            }
            let y = match eager::call(op, &inputs, attrs.clone()).unwrap() {
                KValue::Tensor(t) => t,
                _ => unreachable!(),
            };
            let g = rnd(y.shape(), 12);
            let dx = eager::gradient(op, &inputs, attrs, &kv(&g)).unwrap()[0]
                .clone()
                .unwrap();
            let KValue::Tensor(dx) = dx else {
                unreachable!()
            };
            assert_eq!(dx.shape(), x.shape(), "{helper}");
            let (l, r) = (dot(&y, &g), dot(&x, &dx));
            assert!((l - r).abs() < 1e-9, "{helper}: {l} vs {r}");
        };
    check(
        "Tile",
        vec![("multiples", ints(&[2, 1, 1, 3]))],
        None,
        "_TileGrad",
    );
    let idx = Tensor::from_i64(DType::I64, vec![5], vec![0, 3, 3, 1, 0]).unwrap();
    check("Gather", vec![("axis", int(1))], Some(idx), "_GatherGrad");
    check(
        "StridedSlice",
        vec![
            ("begin", ints(&[2, 0, 1])),
            ("end", ints(&[0, 4, 2])),
            ("strides", ints(&[-1, 3, 1])),
        ],
        None,
        "_StridedSliceGrad",
    );
    check(
        "BroadcastTo",
        vec![("shape", ints(&[2, 3, 4, 2]))],
        None,
        "_SumToShapeOf",
    );
    check(
        "Transpose",
        vec![("perm", ints(&[1, 2, 0]))],
        None,
        "Transpose",
    );
}
