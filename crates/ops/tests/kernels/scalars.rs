//! The scalar primitives: constant folding, dtypes, kernels, errors and gradients.

use ir::ScalarConst;
use ops::eager;
use ops::{AbsVal, AttrValue, DType, ErrorTarget, KValue};
use test_support::ops::{assert_err, infer, kv, run, t, try_call as call};

use crate::common::{close, num};

pub(crate) fn c_int(v: i64) -> AbsVal {
    AbsVal::constant(ScalarConst::Int(v), DType::I64, false)
}

pub(crate) fn c_float(v: f64) -> AbsVal {
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
