//! MatMul, BatchMatMul and BiasAdd against naive loops (transposes, broadcast
//! batches, zero-size dimensions, integer dtypes), the tensor makers, and the
//! shape rules' errors.

use ir::{Dim, Shape};
use ops::eager;
use ops::{AbsVal, AttrValue, DType, ErrorTarget, KValue};
use tensor::Tensor;
use test_support::ops::{
    assert_shaped_close as assert_close, b, infer, rand, t, ten, try_run as run,
};

/// Naive batched product with NumPy batch broadcasting.
fn ref_batch_matmul(x: &Tensor, y: &Tensor, ta: bool, tb: bool) -> (Vec<usize>, Vec<f64>) {
    let (xs, ys) = (x.shape(), y.shape());
    let (xb, xm) = xs.split_at(xs.len() - 2);
    let (yb, ym) = ys.split_at(ys.len() - 2);
    let r = xb.len().max(yb.len());
    let pad = |s: &[usize]| {
        let mut v = vec![1; r - s.len()];
        v.extend_from_slice(s);
        v
    };
    let (xb, yb) = (pad(xb), pad(yb));
    let batch: Vec<usize> = xb
        .iter()
        .zip(&yb)
        .map(|(&p, &q)| if p == 1 { q } else { p })
        .collect();
    let (m, k) = if ta { (xm[1], xm[0]) } else { (xm[0], xm[1]) };
    let n = if tb { ym[0] } else { ym[1] };
    let (xv, yv) = (x.to_f64_vec(), y.to_f64_vec());
    let nb: usize = batch.iter().product();
    let mut out = Vec::new();
    for bi in 0..nb {
        // Batch coordinates, and the offset of each operand's matrix.
        let mut rest = bi;
        let mut coords = vec![0; r];
        for d in (0..r).rev() {
            coords[d] = rest % batch[d];
            rest /= batch[d];
        }
        let off = |s: &[usize]| {
            coords
                .iter()
                .zip(s)
                .fold(0, |o, (&c, &d)| o * d + if d == 1 { 0 } else { c })
        };
        let (ox, oy) = (off(&xb) * xm[0] * xm[1], off(&yb) * ym[0] * ym[1]);
        for i in 0..m {
            for j in 0..n {
                let mut s = 0.0;
                for p in 0..k {
                    let a = if ta {
                        xv[ox + p * xm[1] + i]
                    } else {
                        xv[ox + i * xm[1] + p]
                    };
                    let c = if tb {
                        yv[oy + j * ym[1] + p]
                    } else {
                        yv[oy + p * ym[1] + j]
                    };
                    s += a * c;
                }
                out.push(s);
            }
        }
    }
    let mut shape = batch;
    shape.extend([m, n]);
    (shape, out)
}

#[test]
fn batch_matmul_matches_reference() {
    let cases: &[(&[usize], &[usize])] = &[
        (&[2, 3, 4], &[2, 4, 5]),
        (&[3, 4], &[4, 5]),
        (&[2, 1, 3, 4], &[5, 4, 2]),
        (&[3, 4], &[2, 4, 5]),
        (&[1, 3, 4], &[6, 4, 1]),
        (&[2, 3, 0], &[2, 0, 5]),
        (&[0, 3, 4], &[4, 2]),
        (&[2, 0, 4], &[1, 4, 3]),
        (&[1, 1], &[1, 1]),
        (&[70, 65], &[65, 66]),
    ];
    for (k, (sx, sy)) in cases.iter().enumerate() {
        for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
            let tr = |s: &[usize], t: bool| {
                let mut v = s.to_vec();
                if t {
                    let r = v.len();
                    v.swap(r - 1, r - 2);
                }
                v
            };
            let x = rand(&tr(sx, ta), k as u64, -1.0, 1.0);
            let y = rand(&tr(sy, tb), 50 + k as u64, -1.0, 1.0);
            let (shape, want) = ref_batch_matmul(&x, &y, ta, tb);
            let attrs = vec![("transpose_a", b(ta)), ("transpose_b", b(tb))];
            let what = format!("BatchMatMul {sx:?} {sy:?} ta={ta} tb={tb}");
            let got = run("BatchMatMul", &[&x, &y], attrs.clone()).unwrap();
            assert_eq!(got.dtype(), DType::F64);
            assert_close(&what, &got, &shape, &want, 1e-13);
            let (x32, y32) = (x.cast(DType::F32), y.cast(DType::F32));
            let got = run("BatchMatMul", &[&x32, &y32], attrs.clone()).unwrap();
            assert_eq!(got.dtype(), DType::F32);
            assert_close(&format!("{what} f32"), &got, &shape, &want, 1e-5);
            if sx.len() == 2 && sy.len() == 2 {
                let got = run("MatMul", &[&x, &y], attrs).unwrap();
                assert_close(&format!("MatMul {sx:?} {sy:?}"), &got, &shape, &want, 1e-13);
            }
        }
    }
}

#[test]
fn integer_batch_matmul() {
    let x = t(DType::I8, &[2, 1, 2], &[100.0, 100.0, -3.0, 4.0]);
    let y = t(DType::I8, &[2, 1], &[100.0, 2.0]);
    let got = run("BatchMatMul", &[&x, &y], vec![]).unwrap();
    // An i8 product is i32 (MindSpore's BatchMatMul), so 10200 does not wrap.
    assert_eq!(got.dtype(), DType::I32);
    assert_eq!(got.shape(), &[2, 1, 1]);
    assert_eq!(got.to_f64_vec(), vec![10200.0, -292.0]);
    let x = t(DType::I64, &[1, 2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let got = run("BatchMatMul", &[&x, &x], vec![("transpose_b", b(true))]).unwrap();
    assert_eq!(got.dtype(), DType::I64);
    assert_eq!(got.to_f64_vec(), vec![5.0, 11.0, 11.0, 25.0]);
}

fn ref_bias_add(x: &Tensor, bias: &Tensor, axis: usize) -> Vec<f64> {
    let shape = x.shape();
    let inner: usize = shape[axis + 1..].iter().product();
    let bv = bias.to_f64_vec();
    x.to_f64_vec()
        .iter()
        .enumerate()
        .map(|(i, v)| v + bv[(i / inner.max(1)) % shape[axis]])
        .collect()
}

#[test]
fn bias_add_matches_reference() {
    let cases: &[(&[usize], &str, usize)] = &[
        (&[4, 3], "NCHW", 1),
        (&[2, 3, 5], "NCHW", 1),
        (&[2, 3, 4, 5], "nchw", 1),
        (&[2, 4, 5, 3], "NHWC", 3),
        (&[2, 3], "NHWC", 1),
        (&[2, 3, 2, 1, 2], "NCDHW", 1),
        (&[0, 3, 4], "NCHW", 1),
        (&[2, 3, 0], "NCHW", 1),
    ];
    for (k, (shape, format, axis)) in cases.iter().enumerate() {
        let x = rand(shape, k as u64, -1.0, 1.0);
        let bias = rand(&[shape[*axis]], 10 + k as u64, -1.0, 1.0);
        let want = ref_bias_add(&x, &bias, *axis);
        let attrs = vec![("data_format", AttrValue::Str(format.to_string()))];
        for dtype in [DType::F64, DType::F32] {
            let got = run(
                "BiasAdd",
                &[&x.cast(dtype), &bias.cast(dtype)],
                attrs.clone(),
            )
            .unwrap();
            assert_eq!(got.dtype(), dtype);
            assert_close(
                &format!("BiasAdd {shape:?} {format}"),
                &got,
                shape,
                &want,
                1e-7,
            );
        }
    }
    let x = t(DType::I32, &[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let bias = t(DType::I32, &[2], &[10.0, 20.0]);
    let got = run("BiasAdd", &[&x, &bias], vec![]).unwrap();
    assert_eq!(
        (got.dtype(), got.to_f64_vec()),
        (DType::I32, vec![11.0, 22.0, 13.0, 24.0])
    );
}

#[test]
fn bias_add_gradient_sums_over_non_channel_axes() {
    for (shape, format, axis) in [
        (&[2usize, 3, 4][..], "NCHW", 1usize),
        (&[2, 4, 3], "NHWC", 2),
        (&[5, 3], "NCHW", 1),
    ] {
        let x = rand(shape, 1, -1.0, 1.0);
        let bias = rand(&[3], 2, -1.0, 1.0);
        let d = rand(shape, 3, -1.0, 1.0);
        let attrs = vec![("data_format", AttrValue::Str(format.into()))];
        let g = eager::gradient(
            "BiasAdd",
            &[KValue::Tensor(x), KValue::Tensor(bias)],
            attrs.clone(),
            &KValue::Tensor(d.clone()),
        )
        .unwrap();
        let dx = g[0].clone().unwrap().into_tensor().unwrap();
        assert_eq!(dx, d);
        let db = g[1].clone().unwrap().into_tensor().unwrap();
        let inner: usize = shape[axis + 1..].iter().product();
        let mut want = [0.0; 3];
        for (i, v) in d.to_f64_vec().iter().enumerate() {
            want[(i / inner) % 3] += v;
        }
        assert_close(&format!("dbias {format}"), &db, &[3], &want, 1e-14);
        // The fallback for an unknown rank computes the same.
        let fallback = run("BiasAddGrad", &[&d], attrs).unwrap();
        assert_close("BiasAddGrad", &fallback, &[3], &want, 1e-14);
    }
}

#[test]
fn shape_rules() {
    let f32_ = DType::F32;
    assert_eq!(
        infer(
            "BatchMatMul",
            &[ten(f32_, &[2, 1, 3, 4]), ten(f32_, &[5, 4, 2])],
            vec![]
        ),
        Ok(ten(f32_, &[2, 5, 3, 2]))
    );
    assert_eq!(
        infer(
            "BatchMatMul",
            &[ten(f32_, &[7, 4, 3]), ten(f32_, &[2, 4])],
            vec![("transpose_a", b(true)), ("transpose_b", b(true))]
        ),
        Ok(ten(f32_, &[7, 3, 2]))
    );
    assert_eq!(
        infer(
            "BatchMatMul",
            &[ten(DType::I8, &[2, 2]), ten(DType::I8, &[2, 2])],
            vec![]
        ),
        Ok(ten(DType::I32, &[2, 2]))
    );
    let sym = |dims: Vec<Dim>| AbsVal::Tensor {
        dtype: f32_,
        shape: Shape::Ranked(dims),
    };
    let bsym = Dim::Sym("B".into());
    assert_eq!(
        infer(
            "BatchMatMul",
            &[
                sym(vec![bsym.clone(), Dim::Known(3), Dim::Sym("K".into())]),
                ten(f32_, &[4, 5])
            ],
            vec![]
        ),
        Ok(sym(vec![bsym.clone(), Dim::Known(3), Dim::Known(5)]))
    );
    assert_eq!(
        infer("BatchMatMul", &[AbsVal::Any, ten(f32_, &[2, 2])], vec![]),
        Ok(AbsVal::Any)
    );
    assert_eq!(
        infer(
            "BiasAdd",
            &[sym(vec![bsym.clone(), Dim::Known(3)]), ten(f32_, &[3])],
            vec![]
        ),
        Ok(sym(vec![bsym, Dim::Known(3)]))
    );
}

#[test]
fn shape_rule_errors() {
    let f32_ = DType::F32;
    let e = infer(
        "BatchMatMul",
        &[ten(f32_, &[2, 3, 4]), ten(f32_, &[2, 5, 6])],
        vec![],
    )
    .unwrap_err();
    assert_eq!(e.target, ErrorTarget::Call);
    assert_eq!(
        e.message,
        "`BatchMatMul` inner dimensions differ: `x` [2, 3, 4] has 4 columns, `y` [2, 5, 6] has 5 rows"
    );
    let e = infer(
        "BatchMatMul",
        &[ten(f32_, &[2, 3, 4]), ten(f32_, &[3, 4, 6])],
        vec![],
    )
    .unwrap_err();
    assert_eq!(e.target, ErrorTarget::Call);
    assert_eq!(
        e.message,
        "`BatchMatMul`: batch dimensions: shapes [2] and [3] cannot be broadcast: dimension 2 against 3"
    );
    let e = infer(
        "BatchMatMul",
        &[ten(f32_, &[4]), ten(f32_, &[4, 2])],
        vec![],
    )
    .unwrap_err();
    assert_eq!(e.target, ErrorTarget::Input(0));
    assert_eq!(
        e.message,
        "`BatchMatMul` needs `x` of rank 2 or more, got [4]"
    );
    let e = infer(
        "BatchMatMul",
        &[ten(f32_, &[2, 2]), ten(DType::F64, &[2, 2])],
        vec![],
    )
    .unwrap_err();
    assert_eq!(e.target, ErrorTarget::Input(1));
    assert_eq!(
        e.message,
        "`BatchMatMul` needs operands of one dtype, got f32 and f64"
    );

    let e = infer("BiasAdd", &[ten(f32_, &[2, 3, 4]), ten(f32_, &[4])], vec![]).unwrap_err();
    assert_eq!(e.target, ErrorTarget::Call);
    assert_eq!(
        e.message,
        "`BiasAdd`: `bias` f32[4] has 4 elements but `x` f32[2, 3, 4] has 3 channels (axis 1, data_format \"NCHW\")"
    );
    let e = infer("BiasAdd", &[ten(f32_, &[2, 3]), ten(f32_, &[1, 3])], vec![]).unwrap_err();
    assert_eq!(e.target, ErrorTarget::Input(1));
    assert_eq!(e.message, "`BiasAdd` needs a 1-D `bias`, got f32[1, 3]");
    let e = infer("BiasAdd", &[ten(f32_, &[3]), ten(f32_, &[3])], vec![]).unwrap_err();
    assert_eq!(e.target, ErrorTarget::Input(0));
    assert_eq!(e.message, "`BiasAdd` needs `x` of rank 2 to 5, got f32[3]");
    let e = infer(
        "BiasAdd",
        &[ten(f32_, &[2, 3]), ten(DType::F16, &[3])],
        vec![],
    )
    .unwrap_err();
    assert_eq!(e.target, ErrorTarget::Input(1));
    let e = infer(
        "BiasAdd",
        &[ten(f32_, &[2, 3, 4, 4]), ten(f32_, &[3])],
        vec![("data_format", AttrValue::Str("NCDHW".into()))],
    )
    .unwrap_err();
    assert_eq!(e.target, ErrorTarget::Attr("data_format"));
    assert_eq!(
        e.message,
        "`BiasAdd`: data_format \"NCDHW\" needs a 5-D `x`, got f32[2, 3, 4, 4]"
    );
    let op = ops::lookup("BiasAdd").unwrap();
    assert_eq!(
        ops::check_attr(op, "data_format", &AttrValue::Str("HWCN".into())),
        Err("attribute `data_format` of `BiasAdd` must be one of \"NCHW\", \"NHWC\", \"NCDHW\" (any case), not \"HWCN\"".into())
    );
}

// ---------------------------------------------------------------------------
// Tensor makers.

fn shape(v: &[i64]) -> AttrValue {
    AttrValue::Tuple(v.iter().map(|&i| AttrValue::Int(i)).collect())
}

#[test]
fn makers_build_from_attributes() {
    let z = run("Zeros", &[], vec![("shape", shape(&[2, 3]))]).unwrap();
    assert_eq!(
        (z.dtype(), z.shape(), z.to_f64_vec()),
        (DType::F32, &[2usize, 3][..], vec![0.0; 6])
    );
    let o = run(
        "Ones",
        &[],
        vec![
            ("shape", AttrValue::Int(3)),
            ("dtype", AttrValue::DType(DType::I8)),
        ],
    )
    .unwrap();
    assert_eq!(
        (o.dtype(), o.shape(), o.to_f64_vec()),
        (DType::I8, &[3usize][..], vec![1.0; 3])
    );
    let s = run(
        "Zeros",
        &[],
        vec![
            ("shape", shape(&[])),
            ("dtype", AttrValue::DType(DType::Bool)),
        ],
    )
    .unwrap();
    assert_eq!(
        (s.dtype(), s.shape(), s.to_f64_vec()),
        (DType::Bool, &[][..], vec![0.0])
    );
    let e = run("Ones", &[], vec![("shape", shape(&[0, 4]))]).unwrap();
    assert_eq!(e.shape(), &[0, 4]);
    let cases = vec![
        (DType::F32, AttrValue::float(2.5), vec![2.5, 2.5]),
        (DType::I32, AttrValue::float(-2.7), vec![-2.0, -2.0]),
        (DType::I64, AttrValue::Int(7), vec![7.0, 7.0]),
        (DType::Bool, AttrValue::Int(3), vec![1.0, 1.0]),
        (DType::F16, AttrValue::Bool(true), vec![1.0, 1.0]),
        (
            DType::F16,
            AttrValue::float(0.1),
            vec![0.0999755859375, 0.0999755859375],
        ),
    ];
    for (dtype, value, want) in cases {
        let f = run(
            "Fill",
            &[],
            vec![
                ("dtype", AttrValue::DType(dtype)),
                ("shape", shape(&[2])),
                ("value", value),
            ],
        )
        .unwrap();
        assert_eq!((f.dtype(), f.to_f64_vec()), (dtype, want), "{dtype}");
    }
    assert_eq!(
        infer(
            "Fill",
            &[],
            vec![
                ("dtype", AttrValue::DType(DType::F64)),
                ("shape", shape(&[4, 1])),
                ("value", AttrValue::Int(0)),
            ]
        ),
        Ok(ten(DType::F64, &[4, 1]))
    );
    let e = infer("Zeros", &[], vec![("shape", shape(&[2, -1]))]).unwrap_err();
    assert_eq!(e.target, ErrorTarget::Attr("shape"));
    assert_eq!(
        e.message,
        "`Zeros`: `shape` has the negative dimension -1: [2, -1]"
    );
    // The signature: positional attributes in MindSpore's order.
    assert_eq!(
        ops::lookup("Fill").unwrap().signature(),
        "Fill(dtype: dtype, shape: int or tuple of ints, value: number)"
    );
    assert_eq!(
        ops::lookup("Zeros").unwrap().signature(),
        "Zeros(shape: int or tuple of ints, dtype=f32)"
    );
}

#[test]
fn every_op_here_is_documented() {
    for op in ops::defs::linalg::OPS.iter().chain(ops::defs::makers::OPS) {
        assert!(op.doc.ends_with('.') && op.doc.len() > 20, "{}", op.name);
        for p in op.params() {
            assert!(p.doc.ends_with('.'), "{}.{}", op.name, p.name);
        }
    }
}
