//! The elementwise kernels against naive reference loops (broadcasting, size-1
//! and zero-size dimensions, rank 0, integer and bool dtypes, weak scalars),
//! their shape rules' errors, and gradient details the finite-difference check
//! cannot see (ties, integer inputs, dtypes).

use ir::{Dim, Shape};
use ops::eager;
use ops::{AbsVal, AttrValue, DType, ErrorTarget, KArg, KValue, KernelCall};
use tensor::Tensor;
use test_support::ops::{
    assert_allclose as assert_close, bools, indices, infer, infer_err, rand, run, t, ten,
};

// ---------------------------------------------------------------------------
// Helpers.

/// Runs a kernel with some inputs marked as weak scalars (literals).
fn run_weak(op: &str, inputs: &[(&Tensor, bool)]) -> Tensor {
    let def = ops::lookup(op).unwrap();
    let attrs = ops::resolve_attrs(def, &[]);
    let args: Vec<KArg> = inputs.iter().map(|(t, _)| KArg::Tensor(t)).collect();
    let weak: Vec<bool> = inputs.iter().map(|(_, w)| *w).collect();
    (def.kernel.unwrap())(&KernelCall {
        inputs: &args,
        weak: &weak,
        attrs: &attrs,
    })
    .unwrap()
    .into_tensor()
    .unwrap()
}

fn weak(dtype: DType) -> AbsVal {
    AbsVal::Scalar {
        dtype,
        value: None,
        weak: true,
    }
}

/// NumPy broadcasting, written out naively.
fn broadcast(a: &[usize], b: &[usize]) -> Vec<usize> {
    let r = a.len().max(b.len());
    (0..r)
        .map(|i| {
            let da = if i < r - a.len() {
                1
            } else {
                a[i - (r - a.len())]
            };
            let db = if i < r - b.len() {
                1
            } else {
                b[i - (r - b.len())]
            };
            assert!(da == db || da == 1 || db == 1, "{a:?} vs {b:?}");
            if da == 1 {
                db
            } else {
                da
            }
        })
        .collect()
}

/// The element of a tensor of `shape` that output index `idx` reads when broadcast.
fn offset(idx: &[usize], shape: &[usize]) -> usize {
    let skip = idx.len() - shape.len();
    shape.iter().enumerate().fold(0, |off, (k, &d)| {
        off * d + if d == 1 { 0 } else { idx[skip + k] }
    })
}

fn ref_binary(a: &Tensor, b: &Tensor, f: impl Fn(f64, f64) -> f64) -> (Vec<usize>, Vec<f64>) {
    let out = broadcast(a.shape(), b.shape());
    let (av, bv) = (a.to_f64_vec(), b.to_f64_vec());
    let data = indices(&out)
        .iter()
        .map(|idx| f(av[offset(idx, a.shape())], bv[offset(idx, b.shape())]))
        .collect();
    (out, data)
}

const SHAPE_PAIRS: &[(&[usize], &[usize])] = &[
    (&[2, 3], &[2, 3]),
    (&[2, 3], &[3]),
    (&[3], &[2, 3]),
    (&[2, 1, 3], &[4, 1]),
    (&[], &[2, 3]),
    (&[2, 3], &[]),
    (&[], &[]),
    (&[0, 3], &[3]),
    (&[1], &[0]),
    (&[2, 1], &[1, 2]),
    (&[3, 1, 1, 2], &[1, 4, 1]),
    (&[1, 1, 5], &[2, 3, 1]),
    (&[2, 3, 4], &[2, 1, 4]),
    (&[4, 1, 7], &[1, 5, 7]),
];

type BinaryF64 = fn(f64, f64) -> f64;
type UnaryF64 = fn(f64) -> f64;

fn f64_binary_ops() -> Vec<(&'static str, BinaryF64)> {
    vec![
        ("Add", |a, b| a + b),
        ("Sub", |a, b| a - b),
        ("Mul", |a, b| a * b),
        ("RealDiv", |a, b| a / b),
        ("Maximum", f64::max),
        ("Minimum", f64::min),
    ]
}

// ---------------------------------------------------------------------------
// Binary arithmetic.

#[test]
fn binary_arithmetic_f64_and_f32_match_reference() {
    for (k, (sa, sb)) in SHAPE_PAIRS.iter().enumerate() {
        let a = rand(sa, 100 + k as u64, -3.0, 3.0);
        let b = rand(sb, 200 + k as u64, 0.5, 3.0);
        for (op, f) in f64_binary_ops() {
            let (shape, want) = ref_binary(&a, &b, f);
            let got = run(op, &[&a, &b], vec![]);
            assert_eq!(got.dtype(), DType::F64);
            assert_close(
                &format!("{op} {sa:?} {sb:?}"),
                &got,
                &shape,
                &want,
                0.0,
                1e-15,
            );
            let (a32, b32) = (a.cast(DType::F32), b.cast(DType::F32));
            let (shape, want) = ref_binary(&a32, &b32, f);
            let got = run(op, &[&a32, &b32], vec![]);
            assert_eq!(got.dtype(), DType::F32);
            assert_close(
                &format!("{op} f32 {sa:?} {sb:?}"),
                &got,
                &shape,
                &want,
                0.0,
                1e-7,
            );
        }
        // Pow with a positive base.
        let base = rand(sa, 300 + k as u64, 0.5, 2.0);
        let (shape, want) = ref_binary(&base, &b, f64::powf);
        assert_close(
            "Pow",
            &run("Pow", &[&base, &b], vec![]),
            &shape,
            &want,
            0.0,
            1e-14,
        );
    }
}

#[test]
fn binary_arithmetic_on_integers_is_exact_and_wraps() {
    let a = t(DType::I32, &[2, 3], &[1.0, -2.0, 3.0, 40.0, -50.0, 6.0]);
    let b = t(DType::I32, &[3], &[4.0, 5.0, -6.0]);
    type BinaryI64 = fn(i64, i64) -> i64;
    let cases: Vec<(&str, BinaryI64)> = vec![
        ("Add", |a, b| a + b),
        ("Sub", |a, b| a - b),
        ("Mul", |a, b| a * b),
        ("Maximum", |a, b| a.max(b)),
        ("Minimum", |a, b| a.min(b)),
    ];
    for (op, f) in cases {
        let got = run(op, &[&a, &b], vec![]);
        assert_eq!(got.dtype(), DType::I32, "{op}");
        let (shape, want) = ref_binary(&a, &b, |x, y| f(x as i64, y as i64) as f64);
        assert_close(op, &got, &shape, &want, 0.0, 0.0);
    }
    // Narrow integers wrap like C.
    let x = t(DType::I8, &[2], &[100.0, -100.0]);
    let got = run("Add", &[&x, &x], vec![]);
    assert_eq!(got.dtype(), DType::I8);
    assert_eq!(got.to_f64_vec(), vec![-56.0, 56.0]);
    // Integer powers, including negative exponents.
    let base = t(DType::I64, &[5], &[2.0, 3.0, -1.0, 1.0, 2.0]);
    let exp = t(DType::I64, &[5], &[10.0, 0.0, -3.0, -5.0, -1.0]);
    assert_eq!(
        run("Pow", &[&base, &exp], vec![]).to_f64_vec(),
        vec![1024.0, 1.0, -1.0, 1.0, 0.0]
    );
}

#[test]
fn real_div_keeps_integers_and_div_is_true_division() {
    // MindSpore 2.10: RealDiv(i32, i32) is i32, truncating, x / 0 saturating.
    let a = t(DType::I32, &[5], &[7.0, -7.0, 1.0, -1.0, 0.0]);
    let b = t(DType::I32, &[5], &[2.0, 2.0, 0.0, 0.0, 0.0]);
    let got = run("RealDiv", &[&a, &b], vec![]);
    assert_eq!(got.dtype(), DType::I32);
    assert_eq!(
        got.to_f64_vec(),
        vec![3.0, -3.0, i32::MAX as f64, i32::MIN as f64, 0.0]
    );
    let got = run("Div", &[&a, &b], vec![]);
    assert_eq!(got.dtype(), DType::F32);
    assert_eq!(
        got.to_f64_vec()[..4],
        [3.5, -3.5, f64::INFINITY, f64::NEG_INFINITY]
    );
    assert!(got.to_f64_vec()[4].is_nan());
}

#[test]
fn bool_arithmetic() {
    let a = bools(&[4], &[true, true, false, false]);
    let b = bools(&[4], &[true, false, true, false]);
    let add = run("Add", &[&a, &b], vec![]);
    assert_eq!(add.dtype(), DType::Bool);
    assert_eq!(add.to_f64_vec(), vec![1.0, 1.0, 1.0, 0.0]);
    assert_eq!(
        run("Mul", &[&a, &b], vec![]).to_f64_vec(),
        vec![1.0, 0.0, 0.0, 0.0]
    );
    assert_eq!(
        run("Maximum", &[&a, &b], vec![]).to_f64_vec(),
        vec![1.0, 1.0, 1.0, 0.0]
    );
}

#[test]
fn maximum_and_minimum_treat_nan_as_mindspore() {
    // `x > y ? x : y`: a NaN `y` propagates, a NaN `x` yields `y`.
    let a = t(DType::F32, &[3], &[f64::NAN, 1.0, 2.0]);
    let b = t(DType::F32, &[3], &[1.0, f64::NAN, 3.0]);
    for (op, last) in [("Maximum", 3.0), ("Minimum", 2.0)] {
        let v = run(op, &[&a, &b], vec![]).to_f64_vec();
        assert!(v[0] == 1.0 && v[1].is_nan() && v[2] == last, "{op}: {v:?}");
    }
}

#[test]
fn weak_scalars_take_the_tensor_dtype() {
    let x = t(DType::F16, &[3], &[1.0, 2.0, 3.0]);
    let two = Tensor::scalar(DType::I64, 2.0);
    let got = run_weak("Mul", &[(&x, false), (&two, true)]);
    assert_eq!(got.dtype(), DType::F16);
    assert_eq!(got.to_f64_vec(), vec![2.0, 4.0, 6.0]);
    assert_eq!(
        infer("Mul", &[ten(DType::F16, &[3]), weak(DType::I64)], vec![]),
        Ok(ten(DType::F16, &[3]))
    );
    // A float literal with an integer tensor computes in f32.
    let i = t(DType::I32, &[2], &[1.0, 3.0]);
    let half = Tensor::scalar(DType::F32, 0.5);
    let got = run_weak("Mul", &[(&i, false), (&half, true)]);
    assert_eq!(got.dtype(), DType::F32);
    assert_eq!(got.to_f64_vec(), vec![0.5, 1.5]);
    // An integer literal yields to an integer tensor.
    let got = run_weak("Sub", &[(&two, true), (&i, false)]);
    assert_eq!(got.dtype(), DType::I32);
    assert_eq!(got.to_f64_vec(), vec![1.0, -1.0]);
    // Comparisons against a literal, and Select with a literal branch.
    let got = run_weak("Greater", &[(&i, false), (&half, true)]);
    assert_eq!(got.to_f64_vec(), vec![1.0, 1.0]);
    let cond = bools(&[3], &[true, false, true]);
    let zero = Tensor::scalar(DType::F32, 0.0);
    let got = run_weak("Select", &[(&cond, false), (&x, false), (&zero, true)]);
    assert_eq!(got.dtype(), DType::F16);
    assert_eq!(got.to_f64_vec(), vec![1.0, 0.0, 3.0]);
}

// ---------------------------------------------------------------------------
// Unary functions.

/// erf by Simpson's rule on 20000 intervals (accurate to ~1e-15 for |x| ≤ 6).
fn erf_reference(x: f64) -> f64 {
    let n = 20000;
    let h = x / n as f64;
    let f = |t: f64| (-t * t).exp();
    let mut s = f(0.0) + f(x);
    for i in 1..n {
        s += f(i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
    }
    s * h / 3.0 * std::f64::consts::FRAC_2_SQRT_PI
}

fn gelu_reference(x: f64) -> f64 {
    // √(2/π) as MindSpore's kernel spells it.
    let c = 0.797_884_560_8;
    0.5 * x * (1.0 + (c * (x + 0.044715 * x * x * x)).tanh())
}

fn sigmoid_reference(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn float_unary_ops() -> Vec<(&'static str, UnaryF64, f64, f64)> {
    vec![
        ("Exp", f64::exp, -5.0, 5.0),
        ("Log", f64::ln, 0.01, 10.0),
        ("Sqrt", f64::sqrt, 0.0, 10.0),
        ("Rsqrt", |x| 1.0 / x.sqrt(), 0.01, 10.0),
        ("Sin", f64::sin, -6.0, 6.0),
        ("Cos", f64::cos, -6.0, 6.0),
        ("Tanh", f64::tanh, -5.0, 5.0),
        ("Sigmoid", sigmoid_reference, -30.0, 30.0),
        ("Erf", erf_reference, -5.0, 5.0),
        ("GeLU", gelu_reference, -5.0, 5.0),
    ]
}

#[test]
fn float_unary_ops_match_reference() {
    for (k, shape) in [&[2usize, 3][..], &[], &[0, 4], &[1, 1, 5]]
        .iter()
        .enumerate()
    {
        for (j, (op, f, lo, hi)) in float_unary_ops().into_iter().enumerate() {
            let x = rand(shape, (10 * k + j) as u64, lo, hi);
            let want: Vec<f64> = x.to_f64_vec().into_iter().map(f).collect();
            let got = run(op, &[&x], vec![]);
            assert_eq!(got.dtype(), DType::F64);
            assert_close(op, &got, shape, &want, 1e-15, 1e-13);
            let x32 = x.cast(DType::F32);
            let want: Vec<f64> = x32.to_f64_vec().into_iter().map(f).collect();
            let got = run(op, &[&x32], vec![]);
            assert_eq!(got.dtype(), DType::F32);
            // GeLU's f32 form (MindSpore's) loses relative accuracy where
            // 1 + tanh(u) cancels; everything else is within a few ulps.
            let atol = if op == "GeLU" { 1e-6 } else { 1e-7 };
            assert_close(&format!("{op} f32"), &got, shape, &want, atol, 1e-6);
        }
    }
}

#[test]
fn float_unary_ops_compute_integers_in_f32() {
    let x = t(DType::I32, &[3], &[0.0, 1.0, 4.0]);
    for (op, f, _, _) in float_unary_ops() {
        if op == "GeLU" {
            continue;
        }
        let got = run(op, &[&x], vec![]);
        assert_eq!(got.dtype(), DType::F32, "{op}");
        let want: Vec<f64> = [0.0f64, 1.0, 4.0].map(|v| f(v) as f32 as f64).to_vec();
        assert_close(op, &got, &[3], &want, 1e-7, 1e-6);
    }
    let b = bools(&[2], &[false, true]);
    assert_eq!(
        run("Exp", &[&b], vec![]).to_f64_vec(),
        vec![1.0, std::f32::consts::E as f64]
    );
}

#[test]
fn erf_matches_tabulated_values() {
    let table = [
        (0.0, 0.0),
        (1e-10, 1.1283791670955126e-10),
        (0.1, 0.1124629160182849),
        (0.5, 0.5204998778130465),
        (1.0, 0.8427007929497149),
        (1.5, 0.9661051464753108),
        (2.0, 0.9953222650189527),
        (2.5, 0.999593047982555),
        (3.0, 0.9999779095030014),
        (3.5, 0.9999992569016276),
        (4.0, 0.9999999845827421),
        (6.5, 1.0),
        (f64::INFINITY, 1.0),
    ];
    for (x, want) in table {
        for (x, want) in [(x, want), (-x, -want)] {
            let got = ops::defs::elementwise::erf(x);
            assert!((got - want).abs() <= 1e-15, "erf({x}) = {got}, want {want}");
        }
    }
    // No seam where the series hands over to the continued fraction (x = 2.5).
    let h = 1e-7;
    let slope = std::f64::consts::FRAC_2_SQRT_PI * (-6.25f64).exp();
    let below = ops::defs::elementwise::erf(2.5 - h);
    assert!((below - (0.999593047982555 - h * slope)).abs() < 1e-15);
    // The tail, where erf is within 1e-5 of 1: erfc(x) = 1 - erf(x).
    for (x, erfc) in [
        (3.0, 2.209049699858544e-05),
        (4.0, 1.541725790028002e-08),
        (5.0, 1.537459794428035e-12),
    ] {
        let got = 1.0 - ops::defs::elementwise::erf(x);
        assert!((got - erfc).abs() < 1e-15, "erfc({x}): {got} vs {erfc}");
    }
    assert!(ops::defs::elementwise::erf(f64::NAN).is_nan());
}

#[test]
fn f32_tanh_and_erf_are_within_a_few_ulps() {
    use ops::defs::elementwise::{erf, erf_f32, tanh_f32};
    let ulp = |v: f32| f32::from_bits(v.abs().to_bits() + 1) - v.abs();
    let mut x = -12.0f32;
    while x < 12.0 {
        for v in [x, x * 1e-3, x * 1e-6] {
            let want = (v as f64).tanh() as f32;
            let got = tanh_f32(v);
            assert!(
                (got - want).abs() <= 3.0 * ulp(want),
                "tanh({v}): {got} vs {want}"
            );
            let want = erf(v as f64) as f32;
            let got = erf_f32(v);
            assert!((got - want).abs() <= ulp(want), "erf({v}): {got} vs {want}");
        }
        x += 0.0037;
    }
    for v in [0.625f32, -0.625, 0.62499994, 9.0, 1e-30, -1e-30, 0.0, -0.0] {
        let want = (v as f64).tanh() as f32;
        assert!((tanh_f32(v) - want).abs() <= 3.0 * ulp(want), "tanh({v})");
    }
    assert_eq!(tanh_f32(f32::INFINITY), 1.0);
    assert_eq!(tanh_f32(f32::NEG_INFINITY), -1.0);
    assert!(tanh_f32(f32::NAN).is_nan() && erf_f32(f32::NAN).is_nan());
    assert_eq!(erf_f32(f32::NEG_INFINITY), -1.0);
}

#[test]
fn gelu_matches_mindspore_example() {
    // mindspore.ops.GeLU's documented example (its CPU kernel is the tanh form).
    let x = t(DType::F32, &[3], &[1.0, 2.0, 3.0]);
    let got = run("GeLU", &[&x], vec![]);
    assert_close(
        "GeLU",
        &got,
        &[3],
        &[0.841192, 1.9545976, 2.9963627],
        1e-6,
        0.0,
    );
}

#[test]
fn sigmoid_is_stable_for_large_inputs() {
    for dtype in [DType::F32, DType::F64] {
        let x = t(dtype, &[4], &[1000.0, -1000.0, -100.0, 100.0]);
        let v = run("Sigmoid", &[&x], vec![]).to_f64_vec();
        assert_eq!(v[0], 1.0);
        assert_eq!(v[3], 1.0);
        assert!(v[1] == 0.0 && v[2] >= 0.0 && v[2] < 1e-40, "{dtype}: {v:?}");
        assert!(v.iter().all(|e| e.is_finite()));
    }
}

#[test]
fn numeric_unary_ops_match_reference() {
    let cases: Vec<(&str, UnaryF64)> = vec![
        ("Neg", |x| -x),
        ("Abs", f64::abs),
        ("Square", |x| x * x),
        ("ReLU", |x| x.max(0.0)),
    ];
    for (op, f) in cases {
        for shape in [&[2usize, 3][..], &[], &[3, 0]] {
            let x = rand(shape, 7, -3.0, 3.0);
            for dtype in [DType::F64, DType::F32] {
                let x = x.cast(dtype);
                let want: Vec<f64> = x.to_f64_vec().into_iter().map(f).collect();
                let got = run(op, &[&x], vec![]);
                assert_eq!(got.dtype(), dtype);
                assert_close(op, &got, shape, &want, 0.0, 1e-7);
            }
        }
        let i = t(DType::I32, &[4], &[-3.0, 0.0, 2.0, -1.0]);
        let got = run(op, &[&i], vec![]);
        assert_eq!(got.dtype(), DType::I32, "{op}");
        let want: Vec<f64> = i.to_f64_vec().into_iter().map(f).collect();
        assert_eq!(got.to_f64_vec(), want, "{op}");
    }
    // i8: -(-128) and |-128| wrap to -128; 16² wraps to 0.
    let x = t(DType::I8, &[2], &[-128.0, 16.0]);
    assert_eq!(run("Neg", &[&x], vec![]).to_f64_vec(), vec![-128.0, -16.0]);
    assert_eq!(run("Abs", &[&x], vec![]).to_f64_vec(), vec![-128.0, 16.0]);
    assert_eq!(run("Square", &[&x], vec![]).to_f64_vec(), vec![0.0, 0.0]);
}

// ---------------------------------------------------------------------------
// Comparisons, logic, Select, Cast, ZerosLike/OnesLike.

#[test]
fn comparisons_match_reference() {
    type Compare = fn(f64, f64) -> bool;
    let cases: Vec<(&str, Compare)> = vec![
        ("Equal", |a, b| a == b),
        ("NotEqual", |a, b| a != b),
        ("Less", |a, b| a < b),
        ("LessEqual", |a, b| a <= b),
        ("Greater", |a, b| a > b),
        ("GreaterEqual", |a, b| a >= b),
    ];
    for (op, f) in cases {
        for (k, (sa, sb)) in SHAPE_PAIRS.iter().enumerate() {
            // Few distinct values, so that ties occur.
            let a = t(
                DType::F64,
                sa,
                &rand(sa, k as u64, 0.0, 3.0)
                    .to_f64_vec()
                    .iter()
                    .map(|v| v.floor())
                    .collect::<Vec<_>>(),
            );
            let b = t(
                DType::F64,
                sb,
                &rand(sb, 50 + k as u64, 0.0, 3.0)
                    .to_f64_vec()
                    .iter()
                    .map(|v| v.floor())
                    .collect::<Vec<_>>(),
            );
            let (shape, want) = ref_binary(&a, &b, |x, y| f64::from(u8::from(f(x, y))));
            for dtype in [DType::F64, DType::F32, DType::I32, DType::I64] {
                let got = run(op, &[&a.cast(dtype), &b.cast(dtype)], vec![]);
                assert_eq!(got.dtype(), DType::Bool);
                assert_close(&format!("{op} {dtype}"), &got, &shape, &want, 0.0, 0.0);
            }
        }
        // NaN compares unequal to everything.
        let n = t(DType::F32, &[2], &[f64::NAN, 1.0]);
        let want: Vec<f64> = [(f64::NAN, f64::NAN), (1.0, f64::NAN)]
            .iter()
            .map(|&(x, y)| f64::from(u8::from(f(x, y))))
            .collect();
        let nan = t(DType::F32, &[1], &[f64::NAN]);
        assert_eq!(run(op, &[&n, &nan], vec![]).to_f64_vec(), want, "{op} NaN");
    }
    // Mixed dtypes compare after promotion; bools compare too.
    let i = t(DType::I32, &[2], &[1.0, 2.0]);
    let f = t(DType::F32, &[2], &[1.0, 1.5]);
    assert_eq!(run("Equal", &[&i, &f], vec![]).to_f64_vec(), vec![1.0, 0.0]);
    let p = bools(&[2], &[true, false]);
    assert_eq!(
        run("Greater", &[&p, &bools(&[], &[false])], vec![]).to_f64_vec(),
        vec![1.0, 0.0]
    );
}

#[test]
fn logical_ops_match_reference() {
    let a = bools(&[2, 1, 2], &[true, false, true, true]);
    let b = bools(&[3, 1], &[true, false, true]);
    type Logic = fn(bool, bool) -> bool;
    let cases: Vec<(&str, Logic)> =
        vec![("LogicalAnd", |a, b| a && b), ("LogicalOr", |a, b| a || b)];
    for (op, f) in cases {
        let (shape, want) = ref_binary(&a, &b, |x, y| f64::from(u8::from(f(x != 0.0, y != 0.0))));
        let got = run(op, &[&a, &b], vec![]);
        assert_eq!(got.dtype(), DType::Bool);
        assert_close(op, &got, &shape, &want, 0.0, 0.0);
        let empty = bools(&[0, 2], &[]);
        assert_eq!(
            run(op, &[&empty, &bools(&[], &[true])], vec![]).shape(),
            &[0, 2]
        );
    }
    assert_eq!(
        run("LogicalNot", &[&a], vec![]).to_f64_vec(),
        vec![0.0, 1.0, 0.0, 0.0]
    );
    assert_eq!(
        run("LogicalNot", &[&bools(&[], &[false])], vec![]).to_f64_vec(),
        vec![1.0]
    );
}

#[test]
fn select_matches_reference() {
    let shapes: &[(&[usize], &[usize], &[usize])] = &[
        (&[2, 3], &[2, 3], &[2, 3]),
        (&[2, 3], &[3], &[2, 1]),
        (&[], &[2, 2], &[2, 2]),
        (&[3, 1], &[1, 4], &[]),
        (&[0, 2], &[2], &[1]),
        (&[1], &[], &[]),
    ];
    for (k, (sc, sx, sy)) in shapes.iter().enumerate() {
        let cond = rand(sc, k as u64, 0.0, 1.0).to_f64_vec();
        let cond_t = bools(sc, &cond.iter().map(|&v| v > 0.5).collect::<Vec<_>>());
        let x = rand(sx, 10 + k as u64, -1.0, 1.0);
        let y = rand(sy, 20 + k as u64, -1.0, 1.0);
        let out = broadcast(&broadcast(sc, sx), sy);
        let (cv, xv, yv) = (cond_t.to_f64_vec(), x.to_f64_vec(), y.to_f64_vec());
        let want: Vec<f64> = indices(&out)
            .iter()
            .map(|i| {
                if cv[offset(i, sc)] != 0.0 {
                    xv[offset(i, sx)]
                } else {
                    yv[offset(i, sy)]
                }
            })
            .collect();
        for dtype in [DType::F64, DType::F32, DType::I64, DType::Bool] {
            let (xd, yd) = (x.cast(dtype), y.cast(dtype));
            let want: Vec<f64> = want
                .iter()
                .map(|&v| Tensor::scalar(DType::F64, v).cast(dtype).to_f64_vec()[0])
                .collect();
            let got = run("Select", &[&cond_t, &xd, &yd], vec![]);
            assert_eq!(got.dtype(), dtype);
            assert_close(&format!("Select {dtype} {k}"), &got, &out, &want, 0.0, 0.0);
        }
    }
}

#[test]
fn cast_converts_like_mindspore() {
    let x = t(DType::F64, &[5], &[-1.7, -0.2, 0.0, 2.9, 300.0]);
    let cases: Vec<(DType, Vec<f64>)> = vec![
        (DType::I32, vec![-1.0, 0.0, 0.0, 2.0, 300.0]),
        (DType::I8, vec![-1.0, 0.0, 0.0, 2.0, 44.0]),
        (DType::U8, vec![255.0, 0.0, 0.0, 2.0, 44.0]),
        (DType::Bool, vec![1.0, 1.0, 0.0, 1.0, 1.0]),
        (
            DType::F16,
            vec![-1.7001953125, -0.199951171875, 0.0, 2.900390625, 300.0],
        ),
        (DType::F64, vec![-1.7, -0.2, 0.0, 2.9, 300.0]),
    ];
    for (dtype, want) in cases {
        let got = run("Cast", &[&x], vec![("dtype", AttrValue::DType(dtype))]);
        assert_eq!(got.dtype(), dtype);
        assert_eq!(got.to_f64_vec(), want, "{dtype}");
    }
    let b = bools(&[0], &[]);
    let got = run("Cast", &[&b], vec![("dtype", AttrValue::DType(DType::F32))]);
    assert_eq!((got.dtype(), got.shape()), (DType::F32, &[0usize][..]));
}

#[test]
fn zeros_like_and_ones_like_keep_dtype_and_shape() {
    for (dtype, shape) in [
        (DType::F32, &[2usize, 3][..]),
        (DType::I8, &[]),
        (DType::Bool, &[0, 4]),
        (DType::BF16, &[1]),
    ] {
        let x = rand(shape, 3, -1.0, 1.0).cast(dtype);
        let n: usize = shape.iter().product();
        let z = run("ZerosLike", &[&x], vec![]);
        assert_eq!((z.dtype(), z.shape()), (dtype, shape));
        assert_eq!(z.to_f64_vec(), vec![0.0; n]);
        let o = run("OnesLike", &[&x], vec![]);
        assert_eq!((o.dtype(), o.shape()), (dtype, shape));
        assert_eq!(o.to_f64_vec(), vec![1.0; n]);
    }
}

// ---------------------------------------------------------------------------
// Shape rules.

#[test]
fn shape_rules_broadcast_and_promote() {
    let f32_ = DType::F32;
    assert_eq!(
        infer("Add", &[ten(f32_, &[2, 1, 3]), ten(f32_, &[4, 1])], vec![]),
        Ok(ten(f32_, &[2, 4, 3]))
    );
    assert_eq!(
        infer(
            "Add",
            &[ten(DType::I32, &[3]), ten(DType::F16, &[3])],
            vec![]
        ),
        Ok(ten(DType::F16, &[3]))
    );
    assert_eq!(
        infer("Equal", &[ten(f32_, &[3]), weak(DType::I64)], vec![]),
        Ok(ten(DType::Bool, &[3]))
    );
    assert_eq!(
        infer(
            "RealDiv",
            &[ten(DType::I64, &[3]), ten(DType::I64, &[1])],
            vec![]
        ),
        Ok(ten(DType::I64, &[3]))
    );
    assert_eq!(
        infer(
            "Div",
            &[ten(DType::I64, &[3]), ten(DType::I64, &[1])],
            vec![]
        ),
        Ok(ten(f32_, &[3]))
    );
    assert_eq!(
        infer(
            "LogicalAnd",
            &[ten(DType::Bool, &[3]), ten(f32_, &[3])],
            vec![]
        ),
        Ok(ten(DType::Bool, &[3]))
    );
    assert_eq!(
        infer("LogicalNot", &[ten(DType::I32, &[])], vec![]),
        Ok(ten(DType::Bool, &[]))
    );
    assert_eq!(
        infer(
            "Select",
            &[
                ten(DType::Bool, &[3]),
                ten(f32_, &[3]),
                ten(DType::F64, &[3]),
            ],
            vec![]
        ),
        Ok(ten(DType::F64, &[3]))
    );
    assert_eq!(
        infer("Exp", &[ten(DType::I32, &[2])], vec![]),
        Ok(ten(f32_, &[2]))
    );
    assert_eq!(
        infer("Sqrt", &[ten(DType::F64, &[2])], vec![]),
        Ok(ten(DType::F64, &[2]))
    );
    // Symbolic dimensions pass through.
    let sym = AbsVal::Tensor {
        dtype: f32_,
        shape: Shape::Ranked(vec![Dim::Sym("B".into()), Dim::Known(3)]),
    };
    assert_eq!(
        infer("Mul", &[sym.clone(), ten(f32_, &[3])], vec![]),
        Ok(sym.clone())
    );
    assert_eq!(
        infer("Tanh", std::slice::from_ref(&sym), vec![]),
        Ok(sym.clone())
    );
    assert_eq!(
        infer(
            "Select",
            &[ten(DType::Bool, &[1, 3]), sym.clone(), weak(f32_)],
            vec![]
        ),
        Ok(sym)
    );
    // Unknown inputs give unknown results, not errors.
    assert_eq!(
        infer("Add", &[AbsVal::Any, ten(f32_, &[3])], vec![]),
        Ok(AbsVal::Any)
    );
    assert_eq!(
        infer("LogicalAnd", &[AbsVal::Any, ten(f32_, &[3])], vec![]),
        Ok(AbsVal::Any)
    );
    assert_eq!(infer("GeLU", &[AbsVal::Any], vec![]), Ok(AbsVal::Any));
    // Scalars in, scalar out.
    let s = AbsVal::scalar(f32_);
    assert_eq!(infer("Add", &[s.clone(), s.clone()], vec![]), Ok(s.clone()));
    assert_eq!(
        infer("Neg", std::slice::from_ref(&s), vec![]),
        Ok(s.clone())
    );
    assert_eq!(
        infer(
            "Cast",
            &[weak(DType::I64)],
            vec![("dtype", AttrValue::DType(f32_))]
        ),
        Ok(s)
    );
    assert_eq!(
        infer(
            "Cast",
            &[ten(f32_, &[2])],
            vec![("dtype", AttrValue::DType(DType::I8))]
        ),
        Ok(ten(DType::I8, &[2]))
    );
    assert_eq!(
        infer("ZerosLike", &[ten(DType::U8, &[0])], vec![]),
        Ok(ten(DType::U8, &[0]))
    );
}

#[test]
fn shape_rule_errors_name_the_problem() {
    let f32_ = DType::F32;
    let e = infer_err("Add", &[ten(f32_, &[2, 3]), ten(f32_, &[4])], vec![]);
    assert_eq!(e.target, ErrorTarget::Call);
    assert_eq!(
        e.message,
        "`Add`: shapes [2, 3] and [4] cannot be broadcast: dimension 3 against 4"
    );
    assert_eq!(e.notes, vec!["`x` is f32[2, 3]", "`y` is f32[4]"]);

    let e = infer_err(
        "RealDiv",
        &[ten(DType::Bool, &[3]), ten(DType::Bool, &[3])],
        vec![],
    );
    assert_eq!(e.target, ErrorTarget::Input(0));
    assert_eq!(
        e.message,
        "`RealDiv` needs a numeric operand, but `x` is bool[3] and `y` is bool[3]"
    );

    let e = infer_err(
        "Select",
        &[ten(f32_, &[3]), ten(f32_, &[3]), ten(f32_, &[3])],
        vec![],
    );
    assert_eq!(e.target, ErrorTarget::Input(0));
    assert_eq!(e.message, "`Select` needs a bool `cond`, but it is f32[3]");

    let e = infer_err(
        "Select",
        &[ten(DType::Bool, &[2]), ten(f32_, &[3]), ten(f32_, &[3])],
        vec![],
    );
    assert_eq!(e.target, ErrorTarget::Call);
    assert_eq!(
        e.message,
        "`Select`: shapes [2] and [3] cannot be broadcast: dimension 2 against 3"
    );

    let e = infer_err("GeLU", &[ten(DType::I32, &[2])], vec![]);
    assert_eq!(e.target, ErrorTarget::Input(0));
    assert_eq!(
        e.message,
        "`GeLU` needs a float operand (f16, bf16, f32 or f64), but `x` is i32[2]"
    );

    let e = infer_err("Neg", &[ten(DType::Bool, &[2])], vec![]);
    assert_eq!(e.target, ErrorTarget::Input(0));
    assert_eq!(
        e.message,
        "`Neg` needs a numeric operand, but `x` is bool[2]"
    );

    let e = infer_err("Exp", &[AbsVal::Tuple(vec![])], vec![]);
    assert_eq!(e.target, ErrorTarget::Input(0));
}

#[test]
fn every_elementwise_op_is_documented() {
    for op in ops::defs::elementwise::OPS {
        assert!(op.doc.ends_with('.') && op.doc.len() > 20, "{}", op.name);
        for p in op.params() {
            assert!(
                p.doc.ends_with('.') && p.doc.len() > 10,
                "{}.{}",
                op.name,
                p.name
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Gradient details.

fn grads(op: &str, inputs: &[Tensor], dout: &Tensor) -> Vec<Option<Tensor>> {
    let inputs: Vec<KValue> = inputs.iter().cloned().map(KValue::Tensor).collect();
    eager::gradient(op, &inputs, vec![], &KValue::Tensor(dout.clone()))
        .unwrap()
        .into_iter()
        .map(|g| g.and_then(KValue::into_tensor))
        .collect()
}

#[test]
fn maximum_and_minimum_split_tied_gradients() {
    let x = t(DType::F64, &[3], &[1.0, 2.0, 3.0]);
    let y = t(DType::F64, &[3], &[2.0, 2.0, 2.0]);
    let d = t(DType::F64, &[3], &[1.0, 1.0, 1.0]);
    let g = grads("Maximum", &[x.clone(), y.clone()], &d);
    assert_eq!(g[0].as_ref().unwrap().to_f64_vec(), vec![0.0, 0.5, 1.0]);
    assert_eq!(g[1].as_ref().unwrap().to_f64_vec(), vec![1.0, 0.5, 0.0]);
    let g = grads("Minimum", &[x, y], &d);
    assert_eq!(g[0].as_ref().unwrap().to_f64_vec(), vec![1.0, 0.5, 0.0]);
    assert_eq!(g[1].as_ref().unwrap().to_f64_vec(), vec![0.0, 0.5, 1.0]);
    // Broadcast: a scalar y collects its share from every element.
    let x = t(DType::F64, &[3], &[1.0, 2.0, 3.0]);
    let y = t(DType::F64, &[], &[2.0]);
    let g = grads("Maximum", &[x, y], &d);
    assert_eq!(g[1].as_ref().unwrap().to_f64_vec(), vec![1.5]);
}

#[test]
fn abs_and_relu_have_zero_gradient_at_zero() {
    let x = t(DType::F64, &[3], &[-2.0, 0.0, 2.0]);
    let d = t(DType::F64, &[3], &[1.0, 1.0, 1.0]);
    let g = grads("Abs", std::slice::from_ref(&x), &d);
    assert_eq!(g[0].as_ref().unwrap().to_f64_vec(), vec![-1.0, 0.0, 1.0]);
    let g = grads("ReLU", &[x], &d);
    assert_eq!(g[0].as_ref().unwrap().to_f64_vec(), vec![0.0, 0.0, 1.0]);
}

#[test]
fn pow_gradient_of_the_exponent_uses_log_of_one_for_negative_bases() {
    let x = t(DType::F64, &[2], &[-2.0, 3.0]);
    let p = t(DType::F64, &[2], &[2.0, 2.0]);
    let d = t(DType::F64, &[2], &[1.0, 1.0]);
    let g = grads("Pow", &[x, p], &d);
    assert_eq!(g[0].as_ref().unwrap().to_f64_vec(), vec![-4.0, 6.0]);
    let dp = g[1].as_ref().unwrap().to_f64_vec();
    assert_eq!(dp[0], 0.0);
    assert!((dp[1] - 9.0 * 3f64.ln()).abs() < 1e-12);
}

#[test]
fn integer_and_bool_inputs_get_no_gradient() {
    let x = t(DType::F64, &[3], &[1.0, 2.0, 3.0]);
    let i = t(DType::I32, &[3], &[1.0, 2.0, 3.0]);
    let d = t(DType::F64, &[3], &[1.0, 1.0, 1.0]);
    let g = grads("Mul", &[x.clone(), i.clone()], &d);
    assert_eq!(g[0].as_ref().unwrap().to_f64_vec(), vec![1.0, 2.0, 3.0]);
    assert!(g[1].is_none());
    let g = grads("Exp", std::slice::from_ref(&i), &d.cast(DType::F32));
    assert!(g[0].is_none());
    let cond = bools(&[3], &[true, false, true]);
    let g = grads("Select", &[cond, x.clone(), x.clone()], &d);
    assert!(g[0].is_none());
    assert_eq!(g[1].as_ref().unwrap().to_f64_vec(), vec![1.0, 0.0, 1.0]);
    assert_eq!(g[2].as_ref().unwrap().to_f64_vec(), vec![0.0, 1.0, 0.0]);
    for op in [
        "Equal",
        "Less",
        "LogicalAnd",
        "ArgMax",
        "ZerosLike",
        "Zeros",
    ] {
        assert!(ops::lookup(op).unwrap().grad.is_none(), "{op}");
    }
}

#[test]
fn gradients_come_back_in_the_input_dtype() {
    // A promoted f32 operand gets an f32 gradient.
    let x = t(DType::F32, &[2, 3], &[1.0; 6]);
    let y = t(DType::F64, &[3], &[1.0, 2.0, 3.0]);
    let d = t(DType::F64, &[2, 3], &[1.0; 6]);
    let g = grads("Mul", &[x, y], &d);
    let gx = g[0].as_ref().unwrap();
    assert_eq!((gx.dtype(), gx.shape()), (DType::F32, &[2usize, 3][..]));
    let gy = g[1].as_ref().unwrap();
    assert_eq!(
        (gy.dtype(), gy.to_f64_vec()),
        (DType::F64, vec![2.0, 2.0, 2.0])
    );
    // Cast's gradient casts back.
    let x = t(DType::F64, &[2], &[1.5, 2.5]);
    let inputs = vec![KValue::Tensor(x)];
    let dout = KValue::Tensor(t(DType::F32, &[2], &[1.0, 2.0]));
    let g = eager::gradient(
        "Cast",
        &inputs,
        vec![("dtype", AttrValue::DType(DType::F32))],
        &dout,
    )
    .unwrap();
    let g = g[0].clone().unwrap().into_tensor().unwrap();
    assert_eq!((g.dtype(), g.to_f64_vec()), (DType::F64, vec![1.0, 2.0]));
    let g = eager::gradient(
        "Cast",
        &inputs,
        vec![("dtype", AttrValue::DType(DType::I32))],
        &KValue::Tensor(t(DType::I32, &[2], &[0.0, 0.0])),
    )
    .unwrap();
    assert!(g[0].is_none());
}

/// Throughput of the f32 kernels on 1M-element operands, calling the kernels
/// directly (`cargo test -p ops --release -- --ignored --nocapture`).
#[test]
#[ignore]
fn elementwise_f32_throughput() {
    let n = 1 << 20;
    let a = rand(&[n], 1, -1.0, 1.0).cast(DType::F32);
    let b = rand(&[n], 2, -1.0, 1.0).cast(DType::F32);
    let row = rand(&[1024], 3, -1.0, 1.0).cast(DType::F32);
    let m = a.clone().reshaped(vec![n / 1024, 1024]).unwrap();
    let col = rand(&[n / 1024, 1], 4, -1.0, 1.0).cast(DType::F32);
    let time = |what: &str, f: &dyn Fn() -> Tensor| {
        f();
        let reps = 20;
        let start = std::time::Instant::now();
        for _ in 0..reps {
            std::hint::black_box(f());
        }
        let s = start.elapsed().as_secs_f64() / reps as f64;
        println!("{what:>18}: {:6.0} M elements/s", n as f64 / s / 1e6);
    };
    time("Add", &|| run_weak("Add", &[(&a, false), (&b, false)]));
    time("Mul by a row", &|| {
        run_weak("Mul", &[(&m, false), (&row, false)])
    });
    time("Sub a column", &|| {
        run_weak("Sub", &[(&m, false), (&col, false)])
    });
    time("Maximum", &|| {
        run_weak("Maximum", &[(&a, false), (&b, false)])
    });
    time("Greater", &|| {
        run_weak("Greater", &[(&a, false), (&b, false)])
    });
    time("ReLU", &|| run_weak("ReLU", &[(&a, false)]));
    time("Exp", &|| run_weak("Exp", &[(&a, false)]));
    time("Sigmoid", &|| run_weak("Sigmoid", &[(&a, false)]));
    time("Tanh", &|| run_weak("Tanh", &[(&a, false)]));
    time("GeLU", &|| run_weak("GeLU", &[(&a, false)]));
    time("Erf", &|| run_weak("Erf", &[(&a, false)]));
    let cond = run_weak("Greater", &[(&a, false), (&b, false)]);
    time("Select", &|| {
        run_weak("Select", &[(&cond, false), (&a, false), (&b, false)])
    });
    time("ReduceSum last", &|| {
        let def = ops::lookup("ReduceSum").unwrap();
        let attrs = ops::resolve_attrs(def, &[("axis".into(), AttrValue::Int(-1))]);
        (def.kernel.unwrap())(&KernelCall {
            inputs: &[KArg::Tensor(&m)],
            weak: &[false],
            attrs: &attrs,
        })
        .unwrap()
        .into_tensor()
        .unwrap()
    });
    time("ReduceSum first", &|| {
        let def = ops::lookup("ReduceSum").unwrap();
        let attrs = ops::resolve_attrs(def, &[("axis".into(), AttrValue::Int(0))]);
        (def.kernel.unwrap())(&KernelCall {
            inputs: &[KArg::Tensor(&m)],
            weak: &[false],
            attrs: &attrs,
        })
        .unwrap()
        .into_tensor()
        .unwrap()
    });
}
