//! Kernels and shape rules of the `shape` family (splits, stacking,
//! slices, paddings, gathers and scatters, makers, layout, size queries):
//! values against hand-computed references where MindSpore's CPU backend has
//! no kernel to compare with (Roll, Take, the paddings' gradient), shape
//! rules on symbolic and unknown sizes, rank-0 inputs, and the errors with
//! what they point at.

use ir::{Dim, ScalarConst, Shape};
use ops::eager::{ints, random_f64};
use ops::{AbsVal, AttrValue, ErrorTarget, KValue, OpError};
use tensor::{DType, Tensor};
use test_support::ops::{
    abs, call as run, infer, int, ints as t, run_err, s, tensor, tensors as items,
};

fn pairs(v: &[(i64, i64)]) -> AttrValue {
    AttrValue::Tuple(v.iter().map(|&(a, b)| t(&[a, b])).collect())
}

fn f64s(shape: &[usize], data: &[f64]) -> KValue {
    KValue::Tensor(Tensor::from_f64(shape.to_vec(), data.to_vec()).unwrap())
}

fn arange(shape: &[usize]) -> KValue {
    let n = shape.iter().product::<usize>();
    f64s(shape, &(0..n).map(|i| i as f64).collect::<Vec<_>>())
}

fn scalar(dtype: DType, v: f64) -> KValue {
    KValue::Tensor(Tensor::scalar(dtype, v))
}

fn bools(shape: &[usize], data: &[bool]) -> KValue {
    KValue::Tensor(Tensor::from_bool(shape.to_vec(), data.to_vec()).unwrap())
}

fn values(v: KValue) -> (Vec<usize>, Vec<f64>) {
    let t = tensor(v);
    (t.shape().to_vec(), t.to_f64_vec())
}

fn int_abs(dtype: DType, dims: &[i64]) -> AbsVal {
    AbsVal::tensor(dtype, dims)
}

fn assert_target(e: &OpError, target: ErrorTarget) {
    assert_eq!(e.target, target, "{}", e.message);
}

// ---------------------------------------------------------------------------
// Splits, Stack, Unstack

#[test]
fn splits_divide_the_dimension() {
    let pieces = items(run("Chunk", vec![arange(&[7])], vec![("chunks", int(3))]));
    let sizes: Vec<usize> = pieces.iter().map(|p| p.shape()[0]).collect();
    assert_eq!(sizes, vec![3, 3, 1]);
    let pieces = items(run(
        "SplitV",
        vec![arange(&[2, 5])],
        vec![
            ("size_splits", t(&[1, -1, 2])),
            ("split_dim", int(-1)),
            ("num_split", int(3)),
        ],
    ));
    assert_eq!(pieces[1].shape(), &[2, 2]);
    assert_eq!(pieces[1].to_f64_vec(), vec![1.0, 2.0, 6.0, 7.0]);
    // SplitTensor of an empty dimension gives no pieces.
    let pieces = items(run(
        "SplitTensor",
        vec![arange(&[0, 2])],
        vec![("split_size", int(2))],
    ));
    assert!(pieces.is_empty());
}

#[test]
fn split_errors_name_their_attribute() {
    let e = run_err("Split", vec![arange(&[3, 4])], vec![("output_num", int(2))]);
    assert_target(&e, ErrorTarget::Attr("output_num"));
    let e = run_err("Split", vec![arange(&[3, 4])], vec![("axis", int(2))]);
    assert_target(&e, ErrorTarget::Attr("axis"));
    let e = run_err("Split", vec![scalar(DType::F32, 1.0)], vec![]);
    assert_target(&e, ErrorTarget::Input(0));
    let e = run_err(
        "SplitV",
        vec![arange(&[4])],
        vec![
            ("size_splits", t(&[1, 1])),
            ("split_dim", int(0)),
            ("num_split", int(2)),
        ],
    );
    assert_target(&e, ErrorTarget::Attr("size_splits"));
    let e = run_err(
        "SplitV",
        vec![arange(&[4])],
        vec![
            ("size_splits", t(&[-1, -1])),
            ("split_dim", int(0)),
            ("num_split", int(2)),
        ],
    );
    assert_target(&e, ErrorTarget::Attr("size_splits"));
    let e = run_err(
        "SplitWithSize",
        vec![arange(&[4])],
        vec![("split_size", t(&[1, 2]))],
    );
    assert_target(&e, ErrorTarget::Attr("split_size"));
    let e = run_err("Chunk", vec![arange(&[4])], vec![("chunks", int(0))]);
    assert_target(&e, ErrorTarget::Attr("chunks"));
}

#[test]
fn split_shape_rules_with_unknown_sizes() {
    let r = infer(
        "Split",
        vec![abs(&["B", "6"])],
        vec![("axis", int(1)), ("output_num", int(3))],
    )
    .unwrap();
    assert_eq!(r, AbsVal::Tuple(vec![abs(&["B", "2"]); 3]));
    let r = infer(
        "Split",
        vec![abs(&["B", "6"])],
        vec![("output_num", int(2))],
    )
    .unwrap();
    assert_eq!(r, AbsVal::Tuple(vec![abs(&["?", "6"]); 2]));
    let r = infer(
        "SplitWithSize",
        vec![abs(&["?", "3"])],
        vec![("split_size", t(&[1, 2]))],
    )
    .unwrap();
    assert_eq!(r, AbsVal::Tuple(vec![abs(&["1", "3"]), abs(&["2", "3"])]));
    // The number of chunks of an unknown size is unknown.
    let r = infer("Chunk", vec![abs(&["?"])], vec![("chunks", int(2))]).unwrap();
    assert_eq!(r, AbsVal::Any);
    let unranked = AbsVal::Tensor {
        dtype: DType::F32,
        shape: Shape::Unranked,
    };
    let r = infer(
        "Split",
        vec![unranked.clone()],
        vec![("output_num", int(2))],
    )
    .unwrap();
    assert_eq!(r, AbsVal::Tuple(vec![unranked; 2]));
}

#[test]
fn stack_and_unstack() {
    let r = tensor(run(
        "Stack",
        vec![KValue::Tuple(vec![
            scalar(DType::F64, 1.0),
            scalar(DType::F64, 2.0),
        ])],
        vec![],
    ));
    assert_eq!(
        (r.shape().to_vec(), r.to_f64_vec()),
        (vec![2], vec![1.0, 2.0])
    );
    let r = tensor(run(
        "Stack",
        vec![KValue::Tuple(vec![arange(&[2]), arange(&[2])])],
        vec![("axis", int(-1))],
    ));
    assert_eq!(r.shape(), &[2, 2]);
    assert_eq!(r.to_f64_vec(), vec![0.0, 0.0, 1.0, 1.0]);
    let e = run_err(
        "Stack",
        vec![KValue::Tuple(vec![arange(&[2]), arange(&[3])])],
        vec![],
    );
    assert_target(&e, ErrorTarget::Input(0));
    let e = run_err("Stack", vec![KValue::Tuple(vec![])], vec![]);
    assert_target(&e, ErrorTarget::Input(0));
    let e = run_err(
        "Stack",
        vec![KValue::Tuple(vec![arange(&[2])])],
        vec![("axis", int(2))],
    );
    assert_target(&e, ErrorTarget::Attr("axis"));
    // Symbolic sizes: a known size wins.
    let r = infer(
        "Stack",
        vec![AbsVal::Tuple(vec![abs(&["B", "?"]), abs(&["B", "3"])])],
        vec![],
    )
    .unwrap();
    assert_eq!(r, abs(&["2", "B", "3"]));

    let parts = items(run(
        "Unstack",
        vec![arange(&[2, 3])],
        vec![("axis", int(1))],
    ));
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[2].to_f64_vec(), vec![2.0, 5.0]);
    let e = run_err("Unstack", vec![scalar(DType::F32, 1.0)], vec![]);
    assert_target(&e, ErrorTarget::Input(0));
    let r = infer("Unstack", vec![abs(&["?", "3"])], vec![("num", int(2))]).unwrap();
    assert_eq!(r, AbsVal::Tuple(vec![abs(&["3"]); 2]));
    assert_eq!(
        infer("Unstack", vec![abs(&["?", "3"])], vec![]).unwrap(),
        AbsVal::Any
    );
}

// ---------------------------------------------------------------------------
// Slices, ReverseV2, Roll

#[test]
fn slice_errors() {
    let x = arange(&[3, 4]);
    let e = run_err(
        "Slice",
        vec![x.clone()],
        vec![("begin", t(&[1, 1])), ("size", t(&[3, 1]))],
    );
    assert_target(&e, ErrorTarget::Attr("size"));
    let e = run_err(
        "Slice",
        vec![x.clone()],
        vec![("begin", t(&[-1, 0])), ("size", t(&[1, 1]))],
    );
    assert_target(&e, ErrorTarget::Attr("begin"));
    let e = run_err(
        "Slice",
        vec![x.clone()],
        vec![("begin", t(&[0])), ("size", t(&[1]))],
    );
    assert_target(&e, ErrorTarget::Attr("begin"));
    let e = run_err(
        "Narrow",
        vec![x.clone()],
        vec![("dim", int(1)), ("start", int(3)), ("length", int(2))],
    );
    assert_target(&e, ErrorTarget::Attr("length"));
    let e = run_err(
        "SliceExt",
        vec![x.clone()],
        vec![
            ("dim", int(0)),
            ("start", int(0)),
            ("end", int(2)),
            ("step", int(0)),
        ],
    );
    assert_target(&e, ErrorTarget::Attr("step"));
    let e = run_err("ReverseV2", vec![x], vec![("axis", t(&[1, -1]))]);
    assert_target(&e, ErrorTarget::Attr("axis"));
}

#[test]
fn slice_shape_rules_keep_what_they_can() {
    let r = infer(
        "Slice",
        vec![abs(&["B", "5"])],
        vec![("begin", t(&[0, 1])), ("size", t(&[-1, 3]))],
    )
    .unwrap();
    assert_eq!(r, abs(&["B", "3"]));
    let r = infer(
        "Slice",
        vec![abs(&["B", "5"])],
        vec![("begin", t(&[1, 1])), ("size", t(&[-1, 3]))],
    )
    .unwrap();
    assert_eq!(r, abs(&["?", "3"]));
    let r = infer(
        "SliceExt",
        vec![abs(&["B", "5"])],
        vec![
            ("dim", int(0)),
            ("start", int(0)),
            ("end", int(2)),
            ("step", int(1)),
        ],
    )
    .unwrap();
    assert_eq!(r, abs(&["?", "5"]));
    let r = infer(
        "Narrow",
        vec![abs(&["B", "5"])],
        vec![("dim", int(0)), ("start", int(1)), ("length", int(2))],
    )
    .unwrap();
    assert_eq!(r, abs(&["2", "5"]));
}

#[test]
fn roll_matches_numpy() {
    // np.roll(np.arange(12).reshape(3, 4), (1, -3), (0, 1))
    let (shape, v) = values(run(
        "Roll",
        vec![arange(&[3, 4])],
        vec![("shifts", t(&[1, -3])), ("dims", t(&[0, 1]))],
    ));
    assert_eq!(shape, vec![3, 4]);
    assert_eq!(
        v,
        vec![11.0, 8.0, 9.0, 10.0, 3.0, 0.0, 1.0, 2.0, 7.0, 4.0, 5.0, 6.0]
    );
    // np.roll(np.arange(6).reshape(2, 3), 2): the flattened tensor.
    let (_, v) = values(run("Roll", vec![arange(&[2, 3])], vec![("shifts", int(2))]));
    assert_eq!(v, vec![4.0, 5.0, 0.0, 1.0, 2.0, 3.0]);
    // The same dimension twice: the shifts add up.
    let (_, v) = values(run(
        "Roll",
        vec![arange(&[4])],
        vec![("shifts", t(&[1, 2])), ("dims", t(&[0, -1]))],
    ));
    assert_eq!(v, vec![1.0, 2.0, 3.0, 0.0]);
    let (_, v) = values(run(
        "Roll",
        vec![scalar(DType::F64, 7.0)],
        vec![("shifts", int(3))],
    ));
    assert_eq!(v, vec![7.0]);
    let e = run_err(
        "Roll",
        vec![arange(&[4])],
        vec![("shifts", t(&[1, 2])), ("dims", t(&[0]))],
    );
    assert_target(&e, ErrorTarget::Attr("dims"));
    let e = run_err("Roll", vec![arange(&[4])], vec![("shifts", t(&[1, 2]))]);
    assert_target(&e, ErrorTarget::Attr("shifts"));
}

// ---------------------------------------------------------------------------
// Size queries

#[test]
fn size_queries_are_constants_when_known() {
    let known = |v: i64| AbsVal::Scalar {
        dtype: DType::I64,
        value: Some(ScalarConst::Int(v)),
        weak: false,
    };
    assert_eq!(
        infer("Size", vec![abs(&["2", "3"])], vec![]).unwrap(),
        known(6)
    );
    assert_eq!(
        infer("Rank", vec![abs(&["B", "3"])], vec![]).unwrap(),
        known(2)
    );
    assert_eq!(
        infer("Size", vec![abs(&["B", "3"])], vec![]).unwrap(),
        AbsVal::scalar(DType::I64)
    );
    assert_eq!(
        infer("TensorShape", vec![abs(&["B", "3"])], vec![]).unwrap(),
        int_abs(DType::I64, &[2])
    );
    let (shape, v) = values(run("TensorShape", vec![scalar(DType::F32, 1.0)], vec![]));
    assert_eq!((shape, v), (vec![0], vec![]));
    assert_eq!(
        values(run("Rank", vec![scalar(DType::F32, 1.0)], vec![])).1,
        vec![0.0]
    );
    assert_eq!(
        values(run("Size", vec![scalar(DType::F32, 1.0)], vec![])).1,
        vec![1.0]
    );
    let perm = |v: &[i64]| KValue::Tuple(v.iter().map(|&i| ints(DType::I64, &[], &[i])).collect());
    let e = run_err("InvertPermutation", vec![perm(&[0, 2, 2])], vec![]);
    assert_target(&e, ErrorTarget::Input(0));
}

// ---------------------------------------------------------------------------
// Paddings

#[test]
fn pad_gradient_sums_the_mirrored_positions() {
    // [1 2 3] reflected by 2 on each side is [3 2 1 2 3 2 1]: position 0 is
    // read twice, position 1 three times, position 2 twice.
    let g = f64s(&[7], &[1.0; 7]);
    let (_, v) = values(run(
        "_PadGrad",
        vec![g.clone(), arange(&[3])],
        vec![("paddings", t(&[2, 2])), ("mode", s("reflect"))],
    ));
    assert_eq!(v, vec![2.0, 3.0, 2.0]);
    // Symmetric by (2, 0) is [2 1 | 1 2 3].
    let (_, v) = values(run(
        "_PadGrad",
        vec![f64s(&[5], &[1.0; 5]), arange(&[3])],
        vec![("paddings", t(&[2, 0])), ("mode", s("symmetric"))],
    ));
    assert_eq!(v, vec![2.0, 2.0, 1.0]);
    let (_, v) = values(run(
        "_PadGrad",
        vec![g, arange(&[3])],
        vec![("paddings", t(&[2, 2])), ("mode", s("edge"))],
    ));
    assert_eq!(v, vec![3.0, 1.0, 3.0]);
    // Constant padding: the padded positions are dropped; a crop gives zeros.
    let (_, v) = values(run(
        "_PadGrad",
        vec![f64s(&[3], &[1.0, 2.0, 3.0]), arange(&[2])],
        vec![("paddings", t(&[2, -1]))],
    ));
    assert_eq!(v, vec![3.0, 0.0]);
}

#[test]
fn pad_values() {
    // ConstantPadND: the last dimension first; negative entries crop.
    let (shape, v) = values(run(
        "ConstantPadND",
        vec![arange(&[2, 3])],
        vec![
            ("padding", t(&[-1, 1, 1, 0])),
            ("value", AttrValue::float(9.0)),
        ],
    ));
    assert_eq!(shape, vec![3, 3]);
    assert_eq!(v, vec![9.0, 9.0, 9.0, 1.0, 2.0, 9.0, 4.0, 5.0, 9.0]);
    // PadV3 ignores its constant outside constant mode.
    let (_, v) = values(run(
        "PadV3",
        vec![arange(&[1, 1, 3]), scalar(DType::F64, 5.0)],
        vec![("paddings", t(&[1, 1])), ("mode", s("edge"))],
    ));
    assert_eq!(v, vec![0.0, 0.0, 1.0, 2.0, 2.0]);
    // Integer and bool tensors pad too.
    let (_, v) = values(run(
        "Pad",
        vec![ints(DType::I8, &[2], &[-3, 4])],
        vec![("paddings", pairs(&[(1, 1)]))],
    ));
    assert_eq!(v, vec![0.0, -3.0, 4.0, 0.0]);
}

#[test]
fn pad_errors() {
    let x = arange(&[2, 3]);
    let e = run_err("Pad", vec![x.clone()], vec![("paddings", pairs(&[(1, 1)]))]);
    assert_target(&e, ErrorTarget::Attr("paddings"));
    let e = run_err(
        "Pad",
        vec![x.clone()],
        vec![("paddings", pairs(&[(1, 1), (-1, 0)]))],
    );
    assert_target(&e, ErrorTarget::Attr("paddings"));
    let e = run_err(
        "MirrorPad",
        vec![x.clone()],
        vec![("paddings", pairs(&[(0, 0), (3, 0)]))],
    );
    assert_target(&e, ErrorTarget::Attr("paddings"));
    let e = run_err(
        "PadV3",
        vec![x.clone(), scalar(DType::F64, 0.0)],
        vec![("paddings", t(&[1, 1])), ("mode", s("reflect"))],
    );
    assert_target(&e, ErrorTarget::Input(0));
    let e = run_err(
        "PadV3",
        vec![x.clone(), scalar(DType::F64, 0.0)],
        vec![("paddings", t(&[-3, 0]))],
    );
    assert_target(&e, ErrorTarget::Attr("paddings"));
    let e = run_err(
        "PadV3",
        vec![x.clone(), scalar(DType::F64, 0.0)],
        vec![("paddings", t(&[1, 1, 1]))],
    );
    assert_target(&e, ErrorTarget::Attr("paddings"));
    let e = run_err(
        "PadV3",
        vec![x.clone(), scalar(DType::I32, 0.0)],
        vec![("paddings", t(&[1, 1]))],
    );
    assert_target(&e, ErrorTarget::Input(1));
    let e = run_err(
        "PadV3",
        vec![arange(&[1, 1, 2]), scalar(DType::F64, 0.0)],
        vec![("paddings", t(&[3, 0])), ("mode", s("circular"))],
    );
    assert_target(&e, ErrorTarget::Attr("paddings"));
    let e = run_err(
        "ReflectionPad1D",
        vec![x.clone()],
        vec![("padding", t(&[1, 1, 1, 1]))],
    );
    assert_target(&e, ErrorTarget::Attr("padding"));
    let e = run_err(
        "ReflectionPad2D",
        vec![arange(&[3])],
        vec![("padding", t(&[1, 1, 1, 1]))],
    );
    assert_target(&e, ErrorTarget::Input(0));
    let e = run_err(
        "ReplicationPad1D",
        vec![arange(&[2, 0])],
        vec![("padding", t(&[1, 0]))],
    );
    assert_target(&e, ErrorTarget::Attr("padding"));
}

#[test]
fn pad_shape_rules_with_symbolic_sizes() {
    let r = infer(
        "Pad",
        vec![abs(&["B", "3"])],
        vec![("paddings", pairs(&[(0, 0), (1, 1)]))],
    )
    .unwrap();
    assert_eq!(r, abs(&["B", "5"]));
    let r = infer(
        "Pad",
        vec![abs(&["B", "3"])],
        vec![("paddings", pairs(&[(1, 0), (1, 1)]))],
    )
    .unwrap();
    assert_eq!(r, abs(&["?", "5"]));
    let r = infer(
        "ReflectionPad1D",
        vec![abs(&["B", "C", "8"])],
        vec![("padding", t(&[2, 3]))],
    )
    .unwrap();
    assert_eq!(r, abs(&["B", "C", "13"]));
}

// ---------------------------------------------------------------------------
// Layout

#[test]
fn layout_round_trips_and_errors() {
    let x = random_f64(&[2, 3, 4, 6], 1, -1.0, 1.0);
    let y = run(
        "SpaceToDepth",
        vec![x.clone()],
        vec![("block_size", int(2))],
    );
    assert_eq!(tensor(y.clone()).shape(), &[2, 12, 2, 3]);
    let back = run("DepthToSpace", vec![y], vec![("block_size", int(2))]);
    assert_eq!(back, x);
    let z = run(
        "PixelShuffle",
        vec![x.clone()],
        vec![("upscale_factor", int(1))],
    );
    assert_eq!(z, x);
    let x = random_f64(&[2, 8, 3, 1], 2, -1.0, 1.0);
    let y = run(
        "PixelShuffle",
        vec![x.clone()],
        vec![("upscale_factor", int(2))],
    );
    assert_eq!(tensor(y.clone()).shape(), &[2, 2, 6, 2]);
    assert_eq!(
        run(
            "_PixelShuffleGrad",
            vec![y],
            vec![("upscale_factor", int(2))]
        ),
        x
    );

    let e = run_err(
        "SpaceToDepth",
        vec![arange(&[1, 1, 3, 4])],
        vec![("block_size", int(2))],
    );
    assert_target(&e, ErrorTarget::Input(0));
    let e = run_err(
        "SpaceToDepth",
        vec![arange(&[1, 1, 4, 4])],
        vec![("block_size", int(1))],
    );
    assert_target(&e, ErrorTarget::Attr("block_size"));
    let e = run_err(
        "DepthToSpace",
        vec![arange(&[1, 6, 1, 1])],
        vec![("block_size", int(2))],
    );
    assert_target(&e, ErrorTarget::Input(0));
    let e = run_err(
        "PixelShuffle",
        vec![arange(&[4, 2])],
        vec![("upscale_factor", int(2))],
    );
    assert_target(&e, ErrorTarget::Input(0));
    let r = infer(
        "PixelShuffle",
        vec![abs(&["B", "8", "H", "3"])],
        vec![("upscale_factor", int(2))],
    )
    .unwrap();
    assert_eq!(r, abs(&["B", "2", "?", "6"]));
}

#[test]
fn block_layout_errors() {
    let x = arange(&[2, 1, 3, 2]);
    let e = run_err(
        "SpaceToBatchND",
        vec![x.clone()],
        vec![
            ("block_shape", t(&[2, 2, 2])),
            ("paddings", pairs(&[(1, 0), (0, 0)])),
        ],
    );
    assert_target(&e, ErrorTarget::Attr("block_shape"));
    let e = run_err(
        "SpaceToBatchND",
        vec![x.clone()],
        vec![
            ("block_shape", t(&[2, 2])),
            ("paddings", pairs(&[(0, 0), (0, 0)])),
        ],
    );
    assert_target(&e, ErrorTarget::Attr("paddings"));
    let e = run_err(
        "BatchToSpaceND",
        vec![x.clone()],
        vec![
            ("block_shape", t(&[2, 2])),
            ("crops", pairs(&[(0, 0), (0, 0)])),
        ],
    );
    assert_target(&e, ErrorTarget::Input(0));
    let e = run_err(
        "BatchToSpaceND",
        vec![arange(&[4, 1, 1, 1])],
        vec![
            ("block_shape", t(&[2, 2])),
            ("crops", pairs(&[(2, 1), (0, 0)])),
        ],
    );
    assert_target(&e, ErrorTarget::Attr("crops"));
    let e = run_err(
        "SpaceToBatch",
        vec![arange(&[1, 4, 4])],
        vec![
            ("block_size", int(2)),
            ("paddings", pairs(&[(0, 0), (0, 0)])),
        ],
    );
    assert_target(&e, ErrorTarget::Input(0));
    // The two are inverse to each other, paddings as crops.
    let x = random_f64(&[2, 3, 3, 2], 3, -1.0, 1.0);
    let attrs = |p: &'static str| vec![("block_shape", t(&[2, 1])), (p, pairs(&[(1, 0), (0, 1)]))];
    let y = run("SpaceToBatchND", vec![x.clone()], attrs("paddings"));
    assert_eq!(tensor(y.clone()).shape(), &[4, 3, 2, 3]);
    assert_eq!(run("BatchToSpaceND", vec![y], attrs("crops")), x);
}

// ---------------------------------------------------------------------------
// Gathers and scatters

#[test]
fn gather_and_scatter_values() {
    // ScatterNd adds duplicates; TensorScatterUpdate applies them in order.
    let (_, v) = values(run(
        "ScatterNd",
        vec![
            ints(DType::I32, &[3, 1], &[1, 1, 0]),
            f64s(&[3], &[1.0, 2.0, 4.0]),
        ],
        vec![("shape", t(&[3]))],
    ));
    assert_eq!(v, vec![4.0, 3.0, 0.0]);
    let (_, v) = values(run(
        "TensorScatterUpdate",
        vec![
            arange(&[3]),
            ints(DType::I64, &[2, 1], &[1, 1]),
            f64s(&[2], &[7.0, 8.0]),
        ],
        vec![],
    ));
    assert_eq!(v, vec![0.0, 8.0, 2.0]);
    // GatherD wraps negative indices.
    let (_, v) = values(run(
        "GatherD",
        vec![arange(&[2, 3]), ints(DType::I64, &[2, 1], &[-1, -3])],
        vec![("dim", int(1))],
    ));
    assert_eq!(v, vec![2.0, 3.0]);
    // Take indexes the flattened tensor; negative positions count from the end.
    let (shape, v) = values(run(
        "Take",
        vec![arange(&[2, 3]), ints(DType::I32, &[2, 2], &[-1, 0, 4, -6])],
        vec![],
    ));
    assert_eq!((shape, v), (vec![2, 2], vec![5.0, 0.0, 4.0, 0.0]));
    // An empty segment of an i32 maximum holds i32's lowest value.
    let (_, v) = values(run(
        "UnsortedSegmentMax",
        vec![
            ints(DType::I32, &[2], &[3, 5]),
            ints(DType::I32, &[2], &[0, 0]),
        ],
        vec![("num_segments", int(2))],
    ));
    assert_eq!(v, vec![5.0, i32::MIN as f64]);
    // Rank-0 inputs: GatherNd with 1-D indices gives a scalar.
    let r = tensor(run(
        "GatherNd",
        vec![arange(&[2, 3]), ints(DType::I64, &[2], &[1, 2])],
        vec![],
    ));
    assert_eq!((r.rank(), r.to_f64_vec()), (0, vec![5.0]));
}

#[test]
fn gather_and_scatter_errors() {
    let x = arange(&[3, 4]);
    let e = run_err(
        "GatherNd",
        vec![x.clone(), ints(DType::I32, &[1, 2], &[0, 4])],
        vec![],
    );
    assert_target(&e, ErrorTarget::Input(1));
    let e = run_err(
        "GatherNd",
        vec![x.clone(), ints(DType::I32, &[1, 3], &[0, 0, 0])],
        vec![],
    );
    assert_target(&e, ErrorTarget::Input(1));
    let e = run_err("GatherNd", vec![x.clone(), f64s(&[1, 1], &[0.0])], vec![]);
    assert_target(&e, ErrorTarget::Input(1));
    let e = run_err(
        "ScatterNd",
        vec![
            ints(DType::I32, &[2, 1], &[0, 1]),
            f64s(&[3], &[1.0, 2.0, 3.0]),
        ],
        vec![("shape", t(&[3]))],
    );
    assert_target(&e, ErrorTarget::Input(1));
    let e = run_err(
        "ScatterNd",
        vec![ints(DType::I32, &[1, 1], &[0]), f64s(&[1], &[1.0])],
        vec![("shape", t(&[-3]))],
    );
    assert_target(&e, ErrorTarget::Attr("shape"));
    let e = run_err(
        "TensorScatterAdd",
        vec![
            bools(&[2], &[true, false]),
            ints(DType::I32, &[1, 1], &[0]),
            bools(&[1], &[true]),
        ],
        vec![],
    );
    assert_target(&e, ErrorTarget::Input(0));
    let e = run_err(
        "TensorScatterUpdate",
        vec![
            arange(&[3]),
            ints(DType::I32, &[1, 1], &[0]),
            ints(DType::I64, &[1], &[1]),
        ],
        vec![],
    );
    assert_target(&e, ErrorTarget::Input(2));
    let e = run_err(
        "GatherD",
        vec![x.clone(), ints(DType::I64, &[3], &[0, 1, 2])],
        vec![("dim", int(0))],
    );
    assert_target(&e, ErrorTarget::Input(1));
    let e = run_err(
        "GatherD",
        vec![x.clone(), ints(DType::I64, &[1, 1], &[4])],
        vec![("dim", int(1))],
    );
    assert_target(&e, ErrorTarget::Input(1));
    let e = run_err(
        "IndexSelect",
        vec![x.clone(), ints(DType::I64, &[1, 1], &[0])],
        vec![("dim", int(0))],
    );
    assert_target(&e, ErrorTarget::Input(1));
    let e = run_err(
        "Take",
        vec![x.clone(), ints(DType::I64, &[1], &[12])],
        vec![],
    );
    assert_target(&e, ErrorTarget::Input(1));
    let e = run_err(
        "UnsortedSegmentSum",
        vec![x.clone(), ints(DType::I32, &[3], &[0, 2, 0])],
        vec![("num_segments", int(2))],
    );
    assert_target(&e, ErrorTarget::Input(1));
    let e = run_err(
        "UnsortedSegmentSum",
        vec![x.clone(), ints(DType::I32, &[3], &[0, 0, 0])],
        vec![("num_segments", int(0))],
    );
    assert_target(&e, ErrorTarget::Attr("num_segments"));
    let e = run_err(
        "UnsortedSegmentSum",
        vec![x.clone(), ints(DType::I32, &[4], &[0, 0, 0, 0])],
        vec![("num_segments", int(1))],
    );
    assert_target(&e, ErrorTarget::Input(1));
}

#[test]
fn masked_fill_rules() {
    let x = arange(&[2, 2]);
    let mask = bools(&[2], &[true, false]);
    let e = run_err(
        "MaskedFill",
        vec![x.clone(), arange(&[2]), scalar(DType::F64, 1.0)],
        vec![],
    );
    assert_target(&e, ErrorTarget::Input(1));
    let e = run_err(
        "MaskedFill",
        vec![
            ints(DType::I32, &[2], &[1, 2]),
            mask.clone(),
            scalar(DType::F32, 1.5),
        ],
        vec![],
    );
    assert_target(&e, ErrorTarget::Input(2));
    let e = run_err(
        "MaskedFill",
        vec![x.clone(), mask.clone(), arange(&[2])],
        vec![],
    );
    assert_target(&e, ErrorTarget::Input(2));
    let e = run_err(
        "MaskedFill",
        vec![x.clone(), bools(&[3], &[true; 3]), scalar(DType::F64, 1.0)],
        vec![],
    );
    assert_target(&e, ErrorTarget::Call);
    // An integer value fills a float tensor.
    let (_, v) = values(run(
        "MaskedFill",
        vec![x, mask, ints(DType::I32, &[], &[7])],
        vec![],
    ));
    assert_eq!(v, vec![7.0, 1.0, 7.0, 3.0]);
}

// ---------------------------------------------------------------------------
// Makers

#[test]
fn one_hot_rules() {
    let idx = ints(DType::I64, &[2], &[0, 2]);
    let (on, off) = (scalar(DType::F32, 1.0), scalar(DType::F32, 0.0));
    let e = run_err(
        "OneHot",
        vec![idx.clone(), on.clone(), off.clone()],
        vec![("depth", int(3)), ("axis", int(-2))],
    );
    assert_target(&e, ErrorTarget::Attr("axis"));
    let e = run_err(
        "OneHot",
        vec![idx.clone(), on.clone(), off.clone()],
        vec![("depth", int(-1))],
    );
    assert_target(&e, ErrorTarget::Attr("depth"));
    let e = run_err(
        "OneHot",
        vec![idx.clone(), on.clone(), scalar(DType::I32, 0.0)],
        vec![("depth", int(3))],
    );
    assert_target(&e, ErrorTarget::Input(2));
    let e = run_err(
        "OneHot",
        vec![arange(&[2]), on.clone(), off.clone()],
        vec![("depth", int(3))],
    );
    assert_target(&e, ErrorTarget::Input(0));
    // OneHotExt with -1 classes: the largest index plus one, unknown before run time.
    let (shape, _) = values(run(
        "OneHotExt",
        vec![idx.clone(), on.clone(), off.clone()],
        vec![("num_classes", int(-1))],
    ));
    assert_eq!(shape, vec![2, 3]);
    let r = infer(
        "OneHotExt",
        vec![
            int_abs(DType::I64, &[2]),
            AbsVal::scalar(DType::F32),
            AbsVal::scalar(DType::F32),
        ],
        vec![("num_classes", int(-1))],
    )
    .unwrap();
    assert_eq!(r, abs(&["2", "?"]));
}

#[test]
fn range_rules() {
    let i = |v: i64| ints(DType::I32, &[], &[v]);
    // Integer bounds give i64, float bounds f32.
    let r = tensor(run("Range", vec![i(1), i(10), i(3)], vec![]));
    assert_eq!(
        (r.dtype(), r.to_f64_vec()),
        (DType::I64, vec![1.0, 4.0, 7.0])
    );
    let r = tensor(run(
        "Range",
        vec![
            scalar(DType::F64, 0.0),
            scalar(DType::F64, 1.0),
            scalar(DType::F64, 0.25),
        ],
        vec![],
    ));
    assert_eq!(
        (r.dtype(), r.to_f64_vec()),
        (DType::F32, vec![0.0, 0.25, 0.5, 0.75])
    );
    let e = run_err("Range", vec![i(1), i(10), i(0)], vec![]);
    assert_target(&e, ErrorTarget::Input(2));
    let e = run_err("Range", vec![i(1), i(10), i(-1)], vec![]);
    assert_target(&e, ErrorTarget::Input(2));
    let e = run_err("Range", vec![i(1), scalar(DType::F32, 10.0), i(1)], vec![]);
    assert_target(&e, ErrorTarget::Call);
    // Arange mixes kinds and converts to `dtype`.
    let r = tensor(run(
        "Arange",
        vec![i(0), scalar(DType::F32, 2.0), scalar(DType::F32, 0.5)],
        vec![("dtype", AttrValue::DType(DType::F64))],
    ));
    assert_eq!(
        (r.dtype(), r.to_f64_vec()),
        (DType::F64, vec![0.0, 0.5, 1.0, 1.5])
    );
    // Constant bounds give a known length; others an unknown one.
    let c = |v: i64| AbsVal::constant(ScalarConst::Int(v), DType::I64, true);
    let r = infer("Range", vec![c(0), c(10), c(4)], vec![]).unwrap();
    assert_eq!(r, int_abs(DType::I64, &[3]));
    let r = infer(
        "Range",
        vec![c(0), AbsVal::scalar(DType::I64), c(4)],
        vec![],
    )
    .unwrap();
    assert_eq!(
        r,
        AbsVal::Tensor {
            dtype: DType::I64,
            shape: Shape::Ranked(vec![Dim::Unknown])
        }
    );
}

#[test]
fn maker_errors() {
    let e = run_err(
        "LinSpace",
        vec![scalar(DType::F32, 0.0), scalar(DType::F32, 1.0)],
        vec![("num", int(0))],
    );
    assert_target(&e, ErrorTarget::Attr("num"));
    let e = run_err(
        "LinSpace",
        vec![ints(DType::I32, &[], &[0]), scalar(DType::F32, 1.0)],
        vec![("num", int(2))],
    );
    assert_target(&e, ErrorTarget::Input(0));
    let e = run_err(
        "LinSpace",
        vec![scalar(DType::F32, 0.0), scalar(DType::F64, 1.0)],
        vec![("num", int(2))],
    );
    assert_target(&e, ErrorTarget::Input(1));
    let e = run_err(
        "Eye",
        vec![],
        vec![
            ("n", int(-1)),
            ("m", int(2)),
            ("dtype", AttrValue::DType(DType::F32)),
        ],
    );
    assert_target(&e, ErrorTarget::Attr("n"));
    let e = run_err("Tril", vec![arange(&[3])], vec![]);
    assert_target(&e, ErrorTarget::Input(0));
    let e = run_err("Triu", vec![scalar(DType::F32, 1.0)], vec![]);
    assert_target(&e, ErrorTarget::Input(0));
    let e = run_err(
        "Meshgrid",
        vec![KValue::Tuple(vec![
            arange(&[2]),
            ints(DType::I32, &[2], &[0, 1]),
        ])],
        vec![],
    );
    assert_target(&e, ErrorTarget::Input(0));
    let e = run_err(
        "Meshgrid",
        vec![KValue::Tuple(vec![arange(&[2, 2]), arange(&[2])])],
        vec![],
    );
    assert_target(&e, ErrorTarget::Input(0));
    let e = run_err("Meshgrid", vec![KValue::Tuple(vec![])], vec![]);
    assert_target(&e, ErrorTarget::Input(0));
    let e = run_err(
        "SequenceMask",
        vec![ints(DType::I32, &[2], &[1, 2])],
        vec![("maxlen", int(0))],
    );
    assert_target(&e, ErrorTarget::Attr("maxlen"));
    let e = run_err("SequenceMask", vec![arange(&[2])], vec![("maxlen", int(2))]);
    assert_target(&e, ErrorTarget::Input(0));
    let e = run_err(
        "FillV2",
        vec![scalar(DType::F32, 1.0)],
        vec![("shape", t(&[2, -1]))],
    );
    assert_target(&e, ErrorTarget::Attr("shape"));
    let e = run_err("FillV2", vec![arange(&[2])], vec![("shape", t(&[2]))]);
    assert_target(&e, ErrorTarget::Input(0));
}

#[test]
fn makers_on_rank_zero_and_dtypes() {
    let r = tensor(run(
        "FillV2",
        vec![scalar(DType::I8, 3.0)],
        vec![("shape", t(&[]))],
    ));
    assert_eq!(
        (r.dtype(), r.rank(), r.to_f64_vec()),
        (DType::I8, 0, vec![3.0])
    );
    let r = tensor(run(
        "ZerosLikeExt",
        vec![arange(&[2])],
        vec![("dtype", AttrValue::DType(DType::Bool))],
    ));
    assert_eq!((r.dtype(), r.to_f64_vec()), (DType::Bool, vec![0.0, 0.0]));
    let r = tensor(run("OnesLikeExt", vec![ints(DType::U8, &[], &[9])], vec![]));
    assert_eq!((r.dtype(), r.to_f64_vec()), (DType::U8, vec![1.0]));
    let r = tensor(run(
        "Fills",
        vec![ints(DType::I32, &[2], &[0, 0]), scalar(DType::F32, 2.7)],
        vec![],
    ));
    assert_eq!((r.dtype(), r.to_f64_vec()), (DType::I32, vec![2.0, 2.0]));
    let r = tensor(run("Identity", vec![scalar(DType::BF16, 1.5)], vec![]));
    assert_eq!((r.dtype(), r.rank()), (DType::BF16, 0));
    // A one-hot of a scalar index is a vector.
    let r = tensor(run(
        "OneHot",
        vec![
            ints(DType::I32, &[], &[1]),
            scalar(DType::F32, 1.0),
            scalar(DType::F32, 0.0),
        ],
        vec![("depth", int(3))],
    ));
    assert_eq!(r.to_f64_vec(), vec![0.0, 1.0, 0.0]);
}
