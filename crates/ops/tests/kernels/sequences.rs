//! The sequence primitives whose result length depends on constants.

use ir::ScalarConst;
use ops::{AbsVal, DType, ErrorTarget, KValue};
use test_support::ops::{assert_err, infer, kv, run, t, try_call as call};

use crate::common::{num, tup};
use crate::scalars::{c_float, c_int};

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
