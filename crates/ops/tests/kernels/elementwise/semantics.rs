//! The `elementwise` family (division family, bitwise and logic, clamping,
//! tensor-scalar primitives, unary mathematics, activations): shape-rule
//! errors and their targets, unknown and unranked shapes, odd shapes and rank
//! 0, integer semantics, and gradient details the finite-difference check
//! cannot see (kinks, ties and integer inputs, against MindSpore 2.10's own
//! gradients where noted). Values against MindSpore are in `ms_oracle`.

use ir::{Dim, Shape};
use ops::eager;
use ops::{AbsVal, AttrValue, DType, ErrorTarget, KValue};
use tensor::Tensor;
use test_support::ops::{
    assert_close, call, flt as f, infer, infer_err, int, kv, run, run_err, t, ten,
};

// ---------------------------------------------------------------------------
// Helpers.

fn f64s(data: &[f64]) -> Tensor {
    t(DType::F64, &[data.len()], data)
}

/// The gradients of `op` at `inputs` for sensitivity `dout`.
fn grads(
    op: &str,
    inputs: &[&Tensor],
    attrs: Vec<(&'static str, AttrValue)>,
    dout: &KValue,
) -> Vec<Option<Tensor>> {
    let inputs: Vec<KValue> = inputs.iter().map(|x| kv(x)).collect();
    eager::gradient(op, &inputs, attrs, dout)
        .unwrap_or_else(|e| panic!("{op}: {}", e.message))
        .into_iter()
        .map(|g| g.map(|v| v.into_tensor().expect("a tensor gradient")))
        .collect()
}

fn ones_like(x: &Tensor) -> KValue {
    KValue::Tensor(Tensor::full(x.dtype(), x.shape().to_vec(), 1.0))
}

const FAMILY: &[&[ops::OpDef]] = &[
    ops::defs::elementwise::binary::OPS,
    ops::defs::elementwise::clamp::OPS,
    ops::defs::elementwise::math::OPS,
    ops::defs::activations::OPS,
];

// ---------------------------------------------------------------------------
// Registry.

#[test]
fn every_primitive_is_documented_and_named_as_mindspore() {
    for op in FAMILY.iter().flat_map(|o| o.iter()) {
        assert!(op.doc.ends_with('.') && op.doc.len() > 20, "{}", op.name);
        for p in op.params() {
            assert!(
                p.doc.ends_with('.') && p.doc.len() > 10,
                "{}.{}",
                op.name,
                p.name
            );
        }
        assert!(ops::lookup(op.name).is_some(), "{}", op.name);
    }
    // MindSpore's spellings.
    for name in [
        "ACos",
        "HSwish",
        "HSigmoid",
        "SiLU",
        "CeLU",
        "SeLU",
        "FastGeLU",
        "HShrink",
        "PReLU",
        "LeakyReLUExt",
        "GLU",
        "Xlogy",
        "Xdivy",
        "NanToNum",
        "ClampScalar",
        "ClampTensor",
    ] {
        assert!(ops::lookup(name).is_some(), "{name}");
    }
}

#[test]
fn signatures_follow_mindspore_argument_order() {
    let sig = |n: &str| ops::lookup(n).unwrap().signature();
    assert_eq!(sig("Round"), "Round(input, decimals=0)");
    assert_eq!(sig("ClampScalar"), "ClampScalar(input, min=none, max=none)");
    assert_eq!(sig("Lerp"), "Lerp(input, end, weight)");
    assert_eq!(sig("AddScalar"), "AddScalar(input, other, alpha=1)");
    assert_eq!(
        sig("NanToNum"),
        "NanToNum(input, nan=none, posinf=none, neginf=none)"
    );
    assert_eq!(sig("Hardtanh"), "Hardtanh(input, min_val=-1, max_val=1)");
    assert_eq!(
        sig("Threshold"),
        "Threshold(input, threshold: number, value: number)"
    );
    assert_eq!(sig("Elu"), "Elu(input_x, alpha=1.0)");
    assert_eq!(sig("RightShift"), "RightShift(input_x, input_y)");
    assert_eq!(sig("DivNoNan"), "DivNoNan(x1, x2)");
}

// ---------------------------------------------------------------------------
// Shape rules.

#[test]
fn shape_rules_promote_broadcast_and_keep_unknowns() {
    let f32_ = DType::F32;
    assert_eq!(
        infer(
            "Div",
            &[ten(DType::I32, &[2, 1]), ten(DType::I64, &[3])],
            vec![]
        ),
        Ok(ten(f32_, &[2, 3]))
    );
    assert_eq!(
        infer("Mod", &[ten(DType::I32, &[3]), ten(f32_, &[])], vec![]),
        Ok(ten(f32_, &[3]))
    );
    assert_eq!(
        infer("IsNan", &[ten(DType::I64, &[4])], vec![]),
        Ok(ten(DType::Bool, &[4]))
    );
    assert_eq!(
        infer("Log1p", &[ten(DType::I32, &[2])], vec![]),
        Ok(ten(f32_, &[2]))
    );
    assert_eq!(
        infer(
            "LogicalXor",
            &[ten(f32_, &[2]), ten(DType::I8, &[1])],
            vec![]
        ),
        Ok(ten(DType::Bool, &[2]))
    );
    // A float bound makes an integer ClampScalar f32; an int bound keeps it.
    assert_eq!(
        infer(
            "ClampScalar",
            &[ten(DType::I32, &[2])],
            vec![("min", f(0.5))]
        ),
        Ok(ten(f32_, &[2]))
    );
    assert_eq!(
        infer(
            "ClampScalar",
            &[ten(DType::I32, &[2])],
            vec![("max", int(3))]
        ),
        Ok(ten(DType::I32, &[2]))
    );
    // The number of a tensor-scalar primitive yields to the tensor.
    let weak_f = AbsVal::scalar(DType::F32);
    assert_eq!(
        infer("Muls", &[ten(DType::F16, &[3]), weak_f.clone()], vec![]),
        Ok(ten(DType::F16, &[3]))
    );
    assert_eq!(
        infer("Muls", &[ten(DType::I32, &[3]), weak_f.clone()], vec![]),
        Ok(ten(f32_, &[3]))
    );
    assert_eq!(
        infer(
            "Divs",
            &[ten(DType::I32, &[3]), AbsVal::scalar(DType::I64)],
            vec![]
        ),
        Ok(ten(f32_, &[3]))
    );
    // Unknown inputs, unknown dims, unranked shapes.
    assert_eq!(
        infer("Atan2", &[AbsVal::Any, ten(f32_, &[2])], vec![]),
        Ok(AbsVal::Any)
    );
    let unknown = AbsVal::Tensor {
        dtype: f32_,
        shape: Shape::Ranked(vec![Dim::Unknown, Dim::Known(4)]),
    };
    assert_eq!(
        infer("GLU", std::slice::from_ref(&unknown), vec![]),
        Ok(AbsVal::Tensor {
            dtype: f32_,
            shape: Shape::Ranked(vec![Dim::Unknown, Dim::Known(2)]),
        })
    );
    assert_eq!(
        infer(
            "GLU",
            std::slice::from_ref(&unknown),
            vec![("axis", int(0))]
        ),
        Ok(AbsVal::Tensor {
            dtype: f32_,
            shape: Shape::Ranked(vec![Dim::Unknown, Dim::Known(4)]),
        })
    );
    let unranked = AbsVal::Tensor {
        dtype: f32_,
        shape: Shape::Unranked,
    };
    assert_eq!(
        infer("GLU", std::slice::from_ref(&unranked), vec![]),
        Ok(unranked.clone())
    );
    assert_eq!(
        infer("PReLU", &[unranked.clone(), ten(f32_, &[3])], vec![]),
        Ok(unranked.clone())
    );
    assert_eq!(
        infer(
            "Lerp",
            &[unranked.clone(), ten(f32_, &[3]), AbsVal::scalar(f32_)],
            vec![]
        ),
        Ok(unranked.clone())
    );
    assert_eq!(
        infer("LogSigmoid", &[ten(f32_, &[2, 3])], vec![]),
        Ok(AbsVal::Tuple(vec![ten(f32_, &[2, 3]), ten(f32_, &[2, 3])]))
    );
    // Scalars in, scalar out.
    assert_eq!(
        infer(
            "Atan2",
            &[AbsVal::scalar(f32_), AbsVal::scalar(f32_)],
            vec![]
        ),
        Ok(AbsVal::scalar(f32_))
    );
}

#[test]
fn shape_rule_errors_name_the_problem() {
    let f32_ = DType::F32;
    let e = infer_err("Floor", &[ten(DType::I32, &[2])], vec![]);
    assert_eq!(e.target, ErrorTarget::Input(0));
    assert_eq!(
        e.message,
        "`Floor` needs a float (f16, bf16, f32 or f64) `input`, but it is i32[2]"
    );
    let e = infer_err("Sign", &[ten(DType::Bool, &[2])], vec![]);
    assert_eq!(e.target, ErrorTarget::Input(0));
    let e = infer_err(
        "Xlogy",
        &[ten(DType::I32, &[2]), ten(DType::I64, &[2])],
        vec![],
    );
    assert_eq!(e.target, ErrorTarget::Input(0));
    let e = infer_err(
        "BitwiseAnd",
        &[ten(f32_, &[2]), ten(DType::I32, &[2])],
        vec![],
    );
    assert_eq!(e.target, ErrorTarget::Input(0));
    let e = infer_err(
        "LeftShift",
        &[ten(DType::Bool, &[2]), ten(DType::Bool, &[2])],
        vec![],
    );
    assert_eq!(e.target, ErrorTarget::Input(0));
    let e = infer_err("Mod", &[ten(f32_, &[2, 3]), ten(f32_, &[2])], vec![]);
    assert_eq!(e.target, ErrorTarget::Call);
    assert_eq!(
        e.message,
        "`Mod`: shapes [2, 3] and [2] cannot be broadcast: dimension 3 against 2"
    );
    let e = infer_err(
        "Round",
        &[ten(DType::I32, &[2])],
        vec![("decimals", int(1))],
    );
    assert_eq!(e.target, ErrorTarget::Attr("decimals"));
    let e = infer_err("ClampScalar", &[ten(f32_, &[2])], vec![]);
    assert_eq!(e.target, ErrorTarget::Attr("min"));
    assert_eq!(
        e.message,
        "`ClampScalar` needs at least one of `min` and `max`"
    );
    let e = infer_err(
        "ClampTensor",
        &[ten(f32_, &[2, 3]), ten(f32_, &[4]), ten(f32_, &[])],
        vec![],
    );
    assert_eq!(e.target, ErrorTarget::Call);
    let e = infer_err(
        "Lerp",
        &[ten(DType::F16, &[2]), ten(f32_, &[2]), ten(f32_, &[])],
        vec![],
    );
    assert_eq!(e.target, ErrorTarget::Input(1));
    let e = infer_err(
        "Lerp",
        &[ten(DType::I32, &[2]), ten(DType::I32, &[2]), ten(f32_, &[])],
        vec![],
    );
    assert_eq!(e.target, ErrorTarget::Input(0));
    let e = infer_err(
        "Heaviside",
        &[ten(f32_, &[2]), ten(DType::F64, &[2])],
        vec![],
    );
    assert_eq!(e.target, ErrorTarget::Input(1));
    let e = infer_err("Muls", &[ten(f32_, &[2]), ten(f32_, &[2])], vec![]);
    assert_eq!(e.target, ErrorTarget::Input(1));
    assert_eq!(e.message, "`Muls` needs a number `other`, but it is f32[2]");
    let e = infer_err(
        "AddScalar",
        &[ten(DType::I32, &[2]), AbsVal::scalar(DType::I64)],
        vec![("alpha", f(1.5))],
    );
    assert_eq!(e.target, ErrorTarget::Attr("alpha"));
    let e = infer_err("NanToNum", &[ten(DType::I32, &[2])], vec![]);
    assert_eq!(e.target, ErrorTarget::Input(0));
    let e = infer_err("CeLU", &[ten(f32_, &[2])], vec![("alpha", f(0.0))]);
    assert_eq!(e.target, ErrorTarget::Attr("alpha"));
    let e = infer_err("SoftShrink", &[ten(f32_, &[2])], vec![("lambd", f(-1.0))]);
    assert_eq!(e.target, ErrorTarget::Attr("lambd"));
    let e = infer_err("GLU", &[ten(f32_, &[2, 3])], vec![]);
    assert_eq!(e.target, ErrorTarget::Input(0));
    assert_eq!(
        e.message,
        "`GLU` halves dimension 1 of `x` [2, 3], but its size 3 is odd"
    );
    let e = infer_err("GLU", &[ten(f32_, &[2, 4])], vec![("axis", int(2))]);
    assert_eq!(e.target, ErrorTarget::Attr("axis"));
    let e = infer_err("PReLU", &[ten(f32_, &[2, 3, 4]), ten(f32_, &[4])], vec![]);
    assert_eq!(e.target, ErrorTarget::Input(1));
    assert_eq!(
        e.message,
        "`PReLU`: `weight` has 4 slopes but `input` [2, 3, 4] has 3 channels (dimension 1); give 1 or 3"
    );
    let e = infer_err("PReLU", &[ten(f32_, &[2, 3]), ten(f32_, &[])], vec![]);
    assert_eq!(e.target, ErrorTarget::Input(1));
    let e = infer_err(
        "PReLU",
        &[ten(f32_, &[2, 3]), ten(DType::F64, &[3])],
        vec![],
    );
    assert_eq!(e.target, ErrorTarget::Input(1));
    let e = infer_err("ReLU6", &[ten(DType::I32, &[2])], vec![]);
    assert_eq!(e.target, ErrorTarget::Input(0));
    assert!(e.notes.iter().any(|n| n.contains("Cast")));
}

// ---------------------------------------------------------------------------
// Kernels.

#[test]
fn integer_division_family_matches_mindspore_semantics() {
    let x = t(DType::I32, &[6], &[7.0, -7.0, 7.0, -7.0, 5.0, 0.0]);
    let y = t(DType::I32, &[6], &[2.0, 2.0, -2.0, -2.0, 0.0, 0.0]);
    let max = i32::MAX as f64;
    let min = i32::MIN as f64;
    let cases: &[(&str, [f64; 6])] = &[
        ("FloorDiv", [3.0, -4.0, -4.0, 3.0, max, 0.0]),
        ("TruncateDiv", [3.0, -3.0, -3.0, 3.0, max, 0.0]),
        ("Mod", [1.0, -1.0, 1.0, -1.0, min, 0.0]),
        ("FloorMod", [1.0, 1.0, -1.0, -1.0, min, min]),
        ("TruncateMod", [1.0, -1.0, 1.0, -1.0, 0.0, 0.0]),
    ];
    for (op, want) in cases {
        let got = run(op, &[&x, &y], vec![]);
        assert_eq!(got.dtype(), DType::I32, "{op}");
        assert_eq!(got.to_f64_vec(), want.to_vec(), "{op}");
    }
    // Narrow types: the non-finite intermediates of Mod/FloorMod give 0.
    let x8 = x.cast(DType::I8);
    let y8 = y.cast(DType::I8);
    assert_eq!(run("Mod", &[&x8, &y8], vec![]).to_f64_vec()[4], 0.0);
    assert_eq!(run("FloorMod", &[&x8, &y8], vec![]).to_f64_vec()[5], 0.0);
    assert_eq!(run("FloorDiv", &[&x8, &y8], vec![]).to_f64_vec()[4], 127.0);
}

#[test]
fn float_modulos_follow_mindspore() {
    let x = f64s(&[1.0, 0.0, -0.0, 7.5, -7.5]);
    let y = f64s(&[f64::INFINITY, 0.0, 3.0, -2.0, 2.0]);
    let m = run("Mod", &[&x, &y], vec![]).to_f64_vec();
    assert!(m[0].is_nan());
    assert_eq!(m[1..], [0.0, 0.0, 1.5, -1.5]);
    let fm = run("FloorMod", &[&x, &y], vec![]).to_f64_vec();
    assert!(fm[0].is_nan() && fm[1].is_nan());
    assert_eq!(fm[3..], [-0.5, 0.5]);
    let tm = run("TruncateMod", &[&x, &y], vec![]).to_f64_vec();
    assert_eq!(tm[0], 1.0);
    assert!(tm[1].is_nan());
    // TruncateDiv divides f32 operands in f32: 0.7f / 0.1f rounds to 7.
    let a = t(DType::F32, &[1], &[0.7]);
    let b = t(DType::F32, &[1], &[0.1]);
    assert_eq!(
        run("TruncateDiv", &[&a, &b], vec![]).to_f64_vec(),
        vec![7.0]
    );
    assert_eq!(run("FloorDiv", &[&a, &b], vec![]).to_f64_vec(), vec![6.0]);
}

#[test]
fn special_divisions() {
    let x = f64s(&[0.0, 3.0, f64::NAN, 0.0]);
    let y = f64s(&[0.0, 0.0, 0.0, f64::INFINITY]);
    assert_eq!(
        run("DivNoNan", &[&x, &y], vec![]).to_f64_vec()[..3],
        [0.0, 0.0, 0.0]
    );
    assert_eq!(run("Xdivy", &[&x, &y], vec![]).to_f64_vec()[0], 0.0);
    assert!(run("MulNoNan", &[&x, &y], vec![]).to_f64_vec()[3].is_nan());
    assert_eq!(run("MulNoNan", &[&y, &x], vec![]).to_f64_vec()[3], 0.0);
    // Xlogy is x·log(y) as MindSpore's CPU kernel: 0·log(0) is NaN.
    assert!(run("Xlogy", &[&x, &y], vec![]).to_f64_vec()[0].is_nan());
    // Div and Divs are true division; Muls keeps an integer tensor's dtype.
    let i = t(DType::I8, &[2], &[3.0, 4.0]);
    let two = t(DType::I64, &[], &[2.0]);
    let d = run("Divs", &[&i, &two], vec![]);
    assert_eq!((d.dtype(), d.to_f64_vec()), (DType::F32, vec![1.5, 2.0]));
    let m = run("Muls", &[&i, &two], vec![]);
    assert_eq!((m.dtype(), m.to_f64_vec()), (DType::I8, vec![6.0, 8.0]));
    let s = run("SubScalar", &[&i, &two], vec![("alpha", int(3))]);
    assert_eq!((s.dtype(), s.to_f64_vec()), (DType::I8, vec![-3.0, -2.0]));
}

#[test]
fn shifts_and_bitwise_ops_wrap_as_mindspore() {
    let x = t(DType::I8, &[4], &[1.0, -8.0, 100.0, 7.0]);
    let y = t(DType::I8, &[4], &[2.0, 1.0, 7.0, 70.0]);
    assert_eq!(
        run("LeftShift", &[&x, &y], vec![]).to_f64_vec(),
        vec![4.0, -16.0, 0.0, -64.0]
    );
    assert_eq!(
        run("RightShift", &[&x, &y], vec![]).to_f64_vec(),
        vec![0.0, -4.0, 0.0, 0.0]
    );
    let x = t(DType::I64, &[2], &[7.0, 1.0]);
    let y = t(DType::I64, &[2], &[70.0, -1.0]);
    assert_eq!(
        run("LeftShift", &[&x, &y], vec![]).to_f64_vec(),
        vec![448.0, i64::MIN as f64]
    );
    let b = t(DType::Bool, &[2], &[1.0, 0.0]);
    let n = run("BitwiseNot", &[&b], vec![]);
    assert_eq!((n.dtype(), n.to_f64_vec()), (DType::Bool, vec![0.0, 1.0]));
    let u = t(DType::U8, &[2], &[0.0, 200.0]);
    assert_eq!(
        run("BitwiseNot", &[&u], vec![]).to_f64_vec(),
        vec![255.0, 55.0]
    );
    assert_eq!(
        run("BitwiseXor", &[&u, &t(DType::U8, &[], &[255.0])], vec![]).to_f64_vec(),
        vec![255.0, 55.0]
    );
}

#[test]
fn rounding_and_integers() {
    let x = f64s(&[0.5, 1.5, 2.5, -0.5, -2.5, 1.2345, -1.2355]);
    assert_eq!(
        run("Round", &[&x], vec![]).to_f64_vec(),
        vec![0.0, 2.0, 2.0, -0.0, -2.0, 1.0, -1.0]
    );
    let r2 = run("Round", &[&x], vec![("decimals", int(2))]).to_f64_vec();
    assert_eq!(r2[5..], [1.23, -1.24]);
    let big = f64s(&[1234.5, -1250.0]);
    assert_eq!(
        run("Round", &[&big], vec![("decimals", int(-2))]).to_f64_vec(),
        vec![1200.0, -1200.0]
    );
    let i = t(DType::I16, &[4], &[-3.0, 0.0, 1.0, 2.0]);
    assert_eq!(
        run("Inv", &[&i], vec![]).to_f64_vec(),
        vec![0.0, 0.0, 1.0, 0.0]
    );
    let i = t(DType::I32, &[2], &[0.0, -1.0]);
    assert_eq!(
        run("Inv", &[&i], vec![]).to_f64_vec(),
        vec![i32::MIN as f64, -1.0]
    );
    assert_eq!(run("Sign", &[&i], vec![]).to_f64_vec(), vec![0.0, -1.0]);
    let s = run("Sign", &[&f64s(&[f64::NAN, -0.0, -3.0])], vec![]).to_f64_vec();
    assert_eq!(s, vec![0.0, 0.0, -1.0]);
    let b = t(DType::Bool, &[2], &[1.0, 0.0]);
    assert_eq!(run("Trunc", &[&b], vec![]).dtype(), DType::Bool);
    let r = run("Reciprocal", &[&b], vec![]);
    assert_eq!(
        (r.dtype(), r.to_f64_vec()),
        (DType::F32, vec![1.0, f64::INFINITY])
    );
}

#[test]
fn rank_zero_and_empty_inputs() {
    let s = t(DType::F32, &[], &[0.25]);
    for op in [
        "Log1p", "Erfc", "Asin", "Sinc", "ReLU6", "Mish", "Logit", "HShrink",
    ] {
        assert_eq!(run(op, &[&s], vec![]).shape(), &[] as &[usize], "{op}");
    }
    let e = t(DType::F32, &[0, 3], &[]);
    for op in ["Floor", "Expm1", "SiLU", "Softplus", "IsInf"] {
        assert_eq!(run(op, &[&e], vec![]).shape(), &[0, 3], "{op}");
    }
    let v = t(DType::F32, &[3], &[1.0, 2.0, 3.0]);
    assert_eq!(run("Atan2", &[&e, &v], vec![]).shape(), &[0, 3]);
    assert_eq!(run("Lerp", &[&e, &v, &s], vec![]).shape(), &[0, 3]);
    let g = t(DType::F32, &[0, 4], &[]);
    assert_eq!(run("GLU", &[&g], vec![]).shape(), &[0, 2]);
}

#[test]
fn special_functions_are_accurate() {
    // erfc keeps its relative accuracy where 1 - erf has none (tabulated).
    let x = f64s(&[0.3, 2.4, 2.6, 5.0, 9.0, -6.0]);
    let want = [
        0.6713732405408726,
        0.0006885138966450789,
        0.000236034416529349,
        1.5374597944280347e-12,
        4.137031746513811e-37,
        2.0,
    ];
    let got = run("Erfc", &[&x], vec![]);
    for (i, (&g, &w)) in got.to_f64_vec().iter().zip(&want).enumerate() {
        assert!((g - w).abs() <= 2e-13 * w.abs(), "erfc[{i}]: {g} vs {w}");
    }
    // erfinv against tabulated values, near ±1 too.
    let y = f64s(&[
        -0.6220035095932177,
        0.5,
        0.9,
        0.99,
        0.999,
        0.999999,
        -0.999999,
    ]);
    let want = [
        -0.6233809786943502,
        0.4769362762044699,
        1.1630871536766743,
        1.8213863677184496,
        2.326753765513524,
        3.458910737275499,
        -3.458910737275499,
    ];
    assert_close("erfinv", &run("Erfinv", &[&y], vec![]), &want, 1e-13);
    let e = run("Erfinv", &[&f64s(&[1.0, -1.0, 1.5])], vec![]).to_f64_vec();
    assert!(e[0] == f64::INFINITY && e[1] == f64::NEG_INFINITY && e[2].is_nan());
}

#[test]
fn activations_at_edges() {
    let x = t(
        DType::F32,
        &[6],
        &[f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -3.0, 3.0, 100.0],
    );
    let relu6 = run("ReLU6", &[&x], vec![]).to_f64_vec();
    assert_eq!(relu6[..], [0.0, 6.0, 0.0, 0.0, 3.0, 6.0]);
    let hswish = run("HSwish", &[&x], vec![]).to_f64_vec();
    assert!(hswish[0].is_nan());
    assert_eq!(hswish[1..], [f64::INFINITY, 0.0, 0.0, 3.0, 100.0]);
    let mish = run("Mish", &[&x], vec![]).to_f64_vec();
    assert_eq!(
        mish[5], 100.0,
        "stable where MindSpore's f32 kernel overflows"
    );
    let sp = run("Softplus", &[&x], vec![]);
    let softplus = |v: f64| v.max(0.0) + (-v.abs()).exp().ln_1p();
    let want = [
        f64::NAN,
        f64::INFINITY,
        0.0,
        softplus(-3.0),
        softplus(3.0),
        100.0,
    ];
    assert_close("Softplus", &sp, &want, 1e-7);
    let th = run(
        "Threshold",
        &[&x],
        vec![("threshold", f(2.0)), ("value", int(-1))],
    )
    .to_f64_vec();
    assert_eq!(th, vec![-1.0, f64::INFINITY, -1.0, -1.0, 3.0, 100.0]);
    let ht = run("Hardtanh", &[&x], vec![]).to_f64_vec();
    assert_eq!(ht, vec![-1.0, 1.0, -1.0, -1.0, 1.0, 1.0]);
    let hs = run("HShrink", &[&x], vec![("lambd", f(3.0))]).to_f64_vec();
    assert_eq!(
        hs,
        vec![0.0, f64::INFINITY, f64::NEG_INFINITY, 0.0, 0.0, 100.0]
    );
    // Integer activations, as MindSpore's kernels.
    let i = t(DType::I32, &[6], &[-5.0, -2.0, -1.0, 2.0, 3.0, 7.0]);
    assert_eq!(
        run("HSwish", &[&i], vec![]).to_f64_vec(),
        vec![0.0, 0.0, 0.0, 1.0, 3.0, 7.0]
    );
    assert_eq!(
        run("HSigmoid", &[&i], vec![]).to_f64_vec(),
        vec![0.0, 0.0, 0.0, 0.0, 1.0, 1.0]
    );
    assert_eq!(
        run("SeLU", &[&i], vec![]).to_f64_vec(),
        vec![0.0, 0.0, 0.0, 2.0, 3.0, 7.0]
    );
}

#[test]
fn prelu_and_glu_layouts() {
    // [N=1, C=2, 2]: channel c uses weight[c].
    let x = t(DType::F32, &[1, 2, 2], &[-1.0, 2.0, -3.0, -4.0]);
    let w = t(DType::F32, &[2], &[0.5, 0.25]);
    assert_eq!(
        run("PReLU", &[&x, &w], vec![]).to_f64_vec(),
        vec![-0.5, 2.0, -0.75, -1.0]
    );
    let e = run_err(
        "PReLU",
        &[&x, &t(DType::F32, &[3], &[0.1, 0.2, 0.3])],
        vec![],
    );
    assert_eq!(e.target, ErrorTarget::Input(1));
    // GLU along axis 0 of [2, 3]: a = row 0, b = row 1.
    let g = f64s(&[1.0, -2.0, 0.5, 0.0, 1.0, -1.0])
        .reshaped(vec![2, 3])
        .unwrap();
    let sig = |v: f64| 1.0 / (1.0 + (-v).exp());
    assert_close(
        "GLU",
        &run("GLU", &[&g], vec![("axis", int(0))]),
        &[0.5, -2.0 * sig(1.0), 0.5 * sig(-1.0)],
        1e-15,
    );
    let e = run_err("GLU", &[&g], vec![]);
    assert_eq!(e.target, ErrorTarget::Input(0));
}

#[test]
fn clamps_and_nan_to_num() {
    let x = t(DType::F32, &[5], &[f64::NAN, -3.0, 0.2, 3.0, f64::INFINITY]);
    let c = run(
        "ClampScalar",
        &[&x],
        vec![("min", f(-1.0)), ("max", f(1.0))],
    );
    assert_eq!(c.to_f64_vec(), vec![-1.0, -1.0, 0.2f32 as f64, 1.0, 1.0]);
    let c = run("ClampScalar", &[&x], vec![("max", int(1))]).to_f64_vec();
    assert_eq!(c[0], 1.0);
    let c = run(
        "ClampScalar",
        &[&x],
        vec![("min", f(1.0)), ("max", f(-1.0))],
    )
    .to_f64_vec();
    assert!(c.iter().all(|&v| v == -1.0));
    let e = run_err("ClampScalar", &[&x], vec![("min", AttrValue::None)]);
    assert_eq!(e.target, ErrorTarget::Attr("min"));
    let lo = t(DType::I64, &[], &[0.0]);
    let hi = t(DType::F64, &[5], &[1.0, 1.0, 0.1, 2.0, 5.0]);
    let c = run("ClampTensor", &[&x, &lo, &hi], vec![]);
    assert_eq!(c.dtype(), DType::F64);
    assert_eq!(c.to_f64_vec(), vec![0.0, 0.0, 0.1, 2.0, 5.0]);
    let n = run("NanToNum", &[&x], vec![]).to_f64_vec();
    assert_eq!(n[0], 0.0);
    assert_eq!(n[4], f32::MAX as f64);
    let h = t(DType::F16, &[2], &[f64::INFINITY, f64::NEG_INFINITY]);
    assert_eq!(
        run("NanToNum", &[&h], vec![]).to_f64_vec(),
        vec![65504.0, -65504.0]
    );
    let n = run("NanToNum", &[&x], vec![("nan", f(7.0)), ("posinf", f(8.0))]).to_f64_vec();
    assert_eq!((n[0], n[4]), (7.0, 8.0));
}

// ---------------------------------------------------------------------------
// Gradients (MindSpore 2.10's values from `mindspore.grad` where noted).

#[test]
fn gradients_at_kinks_follow_mindspore() {
    let x = f64s(&[-7.0, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0, 7.0]);
    let dout = ones_like(&x);
    let check = |op: &str, attrs: Vec<(&'static str, AttrValue)>, want: &[f64]| {
        let g = grads(op, &[&x], attrs, &dout);
        assert_close(op, g[0].as_ref().unwrap(), want, 1e-6);
    };
    let h = 1.0 / 6.0;
    check(
        "ReLU6",
        vec![],
        &[0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0],
    );
    check(
        "HSwish",
        vec![],
        &[0.0, -0.5, h, 2.0 * h, 0.5, 4.0 * h, 5.0 * h, 1.5, 1.0, 1.0],
    );
    check(
        "HSigmoid",
        vec![],
        &[0.0, 0.0, h, h, h, h, h, 0.0, 0.0, 0.0],
    );
    check(
        "HShrink",
        vec![],
        &[1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0],
    );
    check(
        "SoftShrink",
        vec![],
        &[1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0],
    );
    check(
        "ClampScalar",
        vec![("min", f(-1.0)), ("max", f(1.0))],
        &[0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0],
    );
    check(
        "Elu",
        vec![],
        &[
            0.000912, 0.049787, 0.367879, 0.60653, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
        ],
    );
    check(
        "LeakyReLUExt",
        vec![],
        &[0.01, 0.01, 0.01, 0.01, 0.01, 1.0, 1.0, 1.0, 1.0, 1.0],
    );
    // SeLU: the derivative (MindSpore's bprop gives -0.117 at x = -1).
    let g = grads(
        "SeLU",
        &[&f64s(&[-1.0, 0.0, 2.0])],
        vec![],
        &ones_like(&f64s(&[0.0; 3])),
    );
    let s = 1.05070098;
    assert_close(
        "SeLU",
        g[0].as_ref().unwrap(),
        &[s * 1.67326324 * (-1.0f64).exp(), s, s],
        1e-12,
    );
}

#[test]
fn gradients_of_binary_primitives_follow_mindspore() {
    let one = |x: &Tensor| ones_like(x);
    // Logit with eps: zero outside [eps, 1 - eps], the boundary included.
    let x = f64s(&[0.2, 0.5, 0.9, 0.3, 0.7]);
    let g = grads("Logit", &[&x], vec![("eps", f(0.3))], &one(&x));
    let eps = 0.3f32 as f64;
    let want: Vec<f64> = [0.2, 0.5, 0.9, 0.3, 0.7]
        .iter()
        .map(|&v: &f64| {
            if v >= eps && v <= 1.0 - eps {
                1.0 / (v * (1.0 - v))
            } else {
                0.0
            }
        })
        .collect();
    assert_close("Logit", g[0].as_ref().unwrap(), &want, 1e-12);
    // ClampTensor: each element's sensitivity to whichever of x, min, max it came from.
    let x = f64s(&[-2.0, -1.0, 0.0, 1.0, 2.0]);
    let lo = f64s(&[-1.0]);
    let hi = t(DType::F64, &[], &[1.0]);
    let g = grads("ClampTensor", &[&x, &lo, &hi], vec![], &one(&x));
    assert_eq!(
        g[0].as_ref().unwrap().to_f64_vec(),
        vec![0.0, 1.0, 1.0, 1.0, 0.0]
    );
    assert_eq!(g[1].as_ref().unwrap().to_f64_vec(), vec![1.0]);
    assert_eq!(g[2].as_ref().unwrap().to_f64_vec(), vec![1.0]);
    // PReLU: dx = w·dout where x <= 0; dweight sums x·dout over each channel.
    let x = f64s(&[-3.0, -2.0, -1.0, 0.0, 1.0, 2.0])
        .reshaped(vec![3, 2])
        .unwrap();
    let w = f64s(&[0.1, 0.2]);
    let g = grads("PReLU", &[&x, &w], vec![], &one(&x));
    assert_close(
        "PReLU dx",
        g[0].as_ref().unwrap(),
        &[0.1, 0.2, 0.1, 0.2, 1.0, 1.0],
        1e-15,
    );
    assert_eq!(g[1].as_ref().unwrap().to_f64_vec(), vec![-4.0, -2.0]);
    // Xdivy, Xlogy, MulNoNan and Sinc at their special points.
    let x = f64s(&[7.5, 0.0, 1.0]);
    let y = f64s(&[2.0, 2.0, 3.0]);
    let g = grads("Xdivy", &[&x, &y], vec![], &one(&x));
    assert_close(
        "Xdivy dx",
        g[0].as_ref().unwrap(),
        &[0.5, 0.0, 1.0 / 3.0],
        1e-15,
    );
    assert_close(
        "Xdivy dy",
        g[1].as_ref().unwrap(),
        &[-1.875, 0.0, -1.0 / 9.0],
        1e-15,
    );
    let g = grads("Xlogy", &[&x, &y], vec![], &one(&x));
    assert_close(
        "Xlogy dx",
        g[0].as_ref().unwrap(),
        &[2f64.ln(), 2f64.ln(), 3f64.ln()],
        1e-15,
    );
    let y = f64s(&[2.0, f64::INFINITY, 3.0]);
    let g = grads("MulNoNan", &[&x, &y], vec![], &one(&x));
    assert_eq!(g[1].as_ref().unwrap().to_f64_vec(), vec![7.5, 0.0, 1.0]);
    let s = f64s(&[0.0, 0.5]);
    let g = grads("Sinc", &[&s], vec![], &one(&s));
    assert_close(
        "Sinc",
        g[0].as_ref().unwrap(),
        &[0.0, -4.0 / std::f64::consts::PI],
        1e-12,
    );
    // Heaviside: `values` gets the sensitivity where x == 0; x none.
    let x = f64s(&[-1.0, 0.0, 2.0, 0.0]);
    let v = f64s(&[0.5]);
    let g = grads("Heaviside", &[&x, &v], vec![], &one(&x));
    assert!(g[0].is_none());
    assert_eq!(g[1].as_ref().unwrap().to_f64_vec(), vec![2.0]);
    // Mod's dy is -dout·trunc(x / y) (the derivative; MindSpore's bprop uses floor).
    let x = f64s(&[7.5, -7.5]);
    let y = f64s(&[2.0, 2.0]);
    let g = grads("Mod", &[&x, &y], vec![], &one(&x));
    assert_eq!(g[1].as_ref().unwrap().to_f64_vec(), vec![-3.0, 3.0]);
    let g = grads("FloorMod", &[&x, &y], vec![], &one(&x));
    assert_eq!(g[1].as_ref().unwrap().to_f64_vec(), vec![-3.0, 4.0]);
}

#[test]
fn integer_and_flat_primitives_get_no_gradient() {
    for op in [
        "Floor",
        "Ceil",
        "Round",
        "Rint",
        "Trunc",
        "Sign",
        "IsNan",
        "IsFinite",
        "IsInf",
        "FloorDiv",
        "TruncateDiv",
        "BitwiseAnd",
        "BitwiseOr",
        "BitwiseXor",
        "BitwiseNot",
        "LogicalXor",
        "LeftShift",
        "RightShift",
    ] {
        assert!(ops::lookup(op).unwrap().grad.is_none(), "{op}");
    }
    // Integer inputs of differentiable primitives get none either.
    let i = t(DType::I32, &[3], &[1.0, -2.0, 3.0]);
    let x = f64s(&[0.5, 1.5, -2.5]);
    let g = grads("Mod", &[&x, &i], vec![], &ones_like(&x));
    assert!(g[0].is_some() && g[1].is_none());
    let g = grads("HSwish", &[&i], vec![], &ones_like(&i));
    assert!(g[0].is_none());
    let g = grads(
        "Muls",
        &[&i, &t(DType::F32, &[], &[2.5])],
        vec![],
        &KValue::Tensor(Tensor::full(DType::F32, vec![3], 1.0)),
    );
    assert!(g[0].is_none());
}

#[test]
fn log_sigmoid_returns_its_buffer() {
    let x = f64s(&[-2.0, 0.0, 3.0]);
    let KValue::Tuple(items) = call("LogSigmoid", &[&x], vec![]) else {
        panic!("a tuple")
    };
    let out = items[0].clone().into_tensor().unwrap();
    let buffer = items[1].clone().into_tensor().unwrap();
    let want: Vec<f64> = [-2.0f64, 0.0, 3.0]
        .iter()
        .map(|&v| -(1.0 + (-v).exp()).ln())
        .collect();
    assert_close("LogSigmoid", &out, &want, 1e-15);
    assert_close(
        "buffer",
        &buffer,
        &[(-2f64).exp(), 1.0, (-3f64).exp()],
        1e-15,
    );
}
