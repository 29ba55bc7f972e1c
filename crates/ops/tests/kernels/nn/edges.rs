//! The extended neural-network family (`nn::common`): convolutions, pooling,
//! resizing, normalisations, losses, LSTM, Dense, embeddings and channel
//! dropout. Numerics are checked against MindSpore by the oracle
//! (`tests/ms_oracle/nn*.json`) and gradients by `gradients.rs`; here: errors
//! and their targets, shape rules on unknown and unranked inputs, odd shapes,
//! rank 0, and behaviour the oracle cannot show.

use ir::{AbsVal, Dim, Shape};
use ops::eager::{self, random_f64};
use ops::{AttrValue, ErrorTarget, KValue};
use tensor::{DType, Tensor};
use test_support::ops::{
    assert_err, b, call, floats, flt, infer, int, ints, items, run_err as err, s, tensor,
};

fn rnd(shape: &[usize], seed: u64) -> KValue {
    match random_f64(shape, seed, -1.0, 1.0) {
        KValue::Tensor(t) => KValue::Tensor(t.cast(DType::F32)),
        other => other,
    }
}

fn idx(dtype: DType, shape: &[usize], data: &[i64]) -> KValue {
    eager::ints(dtype, shape, data)
}

fn none() -> KValue {
    KValue::Tuple(vec![])
}

/// `f32[dims]`, `-1` for an unknown size.
fn abs(dims: &[i64]) -> AbsVal {
    AbsVal::Tensor {
        dtype: DType::F32,
        shape: Shape::Ranked(
            dims.iter()
                .map(|&d| if d < 0 { Dim::Unknown } else { Dim::Known(d) })
                .collect(),
        ),
    }
}

fn unranked() -> AbsVal {
    AbsVal::Tensor {
        dtype: DType::F32,
        shape: Shape::Unranked,
    }
}

fn shape_of(v: &AbsVal) -> Vec<i64> {
    match v {
        AbsVal::Tensor {
            shape: Shape::Ranked(d),
            ..
        } => d
            .iter()
            .map(|d| if let Dim::Known(k) = d { *k } else { -1 })
            .collect(),
        other => panic!("not a ranked tensor: {other}"),
    }
}

// ---------------------------------------------------------------------------
// Convolutions

fn bpi_attrs(sizes: &[i64]) -> Vec<(&'static str, AttrValue)> {
    vec![
        ("input_sizes", ints(sizes)),
        ("out_channel", int(3)),
        ("kernel_size", int(3)),
    ]
}

#[test]
fn conv2d_transpose_errors() {
    let (dout, w) = (rnd(&[1, 3, 4, 4], 1), rnd(&[3, 2, 3, 3], 2));
    let e = err(
        "Conv2DTranspose",
        vec![dout.clone(), w.clone()],
        bpi_attrs(&[1, 2, 6]),
    );
    assert_err(
        &e,
        ErrorTarget::Attr("input_sizes"),
        &["4 non-negative sizes"],
    );
    let e = err(
        "Conv2DTranspose",
        vec![dout.clone(), w.clone()],
        bpi_attrs(&[1, 2, 7, 6]),
    );
    assert_err(&e, ErrorTarget::Input(0), &["out_backprop", "[1, 3, 5, 4]"]);
    let e = err(
        "Conv2DTranspose",
        vec![dout.clone(), rnd(&[3, 1, 3, 3], 3)],
        bpi_attrs(&[1, 2, 6, 6]),
    );
    assert_err(&e, ErrorTarget::Input(1), &["filter", "does not fit"]);
    let mut a = bpi_attrs(&[1, 2, 6, 6]);
    a.push(("pad", int(1)));
    let e = err("Conv2DTranspose", vec![dout.clone(), w.clone()], a);
    assert_err(&e, ErrorTarget::Attr("pad"), &["pad_mode=\"pad\""]);
    let mut a = bpi_attrs(&[1, 2, 6, 6]);
    a.push(("pad_list", ints(&[1, 1])));
    let e = err("Conv2DTranspose", vec![dout.clone(), w.clone()], a);
    assert_err(&e, ErrorTarget::Attr("pad_list"), &["4 ints"]);
    let y = tensor(call(
        "Conv2DTranspose",
        vec![dout, w],
        bpi_attrs(&[1, 2, 6, 6]),
    ));
    assert_eq!(y.shape(), &[1, 2, 6, 6]);
    // An unknown batch and an unranked gradient still give input_sizes.
    let r = infer(
        "Conv2DTranspose",
        vec![unranked(), abs(&[3, 2, 3, 3])],
        bpi_attrs(&[1, 2, 6, 6]),
    )
    .unwrap();
    assert_eq!(shape_of(&r), vec![1, 2, 6, 6]);
    let r = infer(
        "Conv2DTranspose",
        vec![abs(&[-1, 3, -1, 4]), unranked()],
        bpi_attrs(&[1, 2, 6, 6]),
    )
    .unwrap();
    assert_eq!(shape_of(&r), vec![1, 2, 6, 6]);
}

/// A shape input (`input_sizes`, `filter_sizes`): a tuple of i64 scalars, as
/// `Shape` gives it.
fn sizes(v: &[i64]) -> KValue {
    KValue::Tuple(v.iter().map(|&d| idx(DType::I64, &[], &[d])).collect())
}

/// Its abstract value, `-1` for a size not known before run time.
fn sizes_abs(v: &[i64]) -> AbsVal {
    AbsVal::Tuple(
        v.iter()
            .map(|&d| AbsVal::Scalar {
                dtype: DType::I64,
                value: (d >= 0).then_some(ir::ScalarConst::Int(d)),
                weak: false,
            })
            .collect(),
    )
}

fn conv_attrs() -> Vec<(&'static str, AttrValue)> {
    vec![("out_channel", int(3)), ("kernel_size", int(3))]
}

#[test]
fn conv2d_backprop_input_takes_its_shape_as_an_input() {
    let (dout, w) = (rnd(&[1, 3, 4, 4], 1), rnd(&[3, 2, 3, 3], 2));
    let y = tensor(call(
        "Conv2DBackpropInput",
        vec![dout.clone(), w.clone(), sizes(&[1, 2, 6, 6])],
        conv_attrs(),
    ));
    assert_eq!(y.shape(), &[1, 2, 6, 6]);
    // The same as a 1-D tensor, and as Conv2DTranspose's attribute.
    let y1 = tensor(call(
        "Conv2DBackpropInput",
        vec![
            dout.clone(),
            w.clone(),
            idx(DType::I32, &[4], &[1, 2, 6, 6]),
        ],
        conv_attrs(),
    ));
    assert_eq!(y1, y);
    let yt = tensor(call(
        "Conv2DTranspose",
        vec![dout.clone(), w.clone()],
        bpi_attrs(&[1, 2, 6, 6]),
    ));
    assert_eq!(yt, y);
    // Sizes known before run time are checked by the shape rule, the others
    // by the kernel.
    let e = infer(
        "Conv2DBackpropInput",
        vec![
            abs(&[1, 3, 4, 4]),
            abs(&[3, 2, 3, 3]),
            sizes_abs(&[1, 2, 7, 6]),
        ],
        conv_attrs(),
    )
    .unwrap_err();
    assert_err(&e, ErrorTarget::Input(0), &["out_backprop", "[1, 3, 5, 4]"]);
    let e = err(
        "Conv2DBackpropInput",
        vec![dout.clone(), w.clone(), sizes(&[1, 2, 7, 6])],
        conv_attrs(),
    );
    assert_err(
        &e,
        ErrorTarget::Input(0),
        &["output gradient", "[1, 3, 5, 4]"],
    );
    let e = err(
        "Conv2DBackpropInput",
        vec![dout.clone(), w.clone(), sizes(&[1, 2, 6])],
        conv_attrs(),
    );
    assert_err(&e, ErrorTarget::Input(2), &["4 sizes"]);
    let e = err(
        "Conv2DBackpropInput",
        vec![dout.clone(), w.clone(), rnd(&[4], 3)],
        conv_attrs(),
    );
    assert_err(&e, ErrorTarget::Input(2), &["tuple of ints"]);
    // `Shape(x)` of an `x` with a batch unknown before run time: the batch
    // is `out_backprop`'s (here symbolic), the other sizes the tuple's.
    let dout_b = AbsVal::Tensor {
        dtype: DType::F32,
        shape: Shape::Ranked(vec![
            Dim::Sym("B".into()),
            Dim::Known(3),
            Dim::Known(4),
            Dim::Known(4),
        ]),
    };
    let r = infer(
        "Conv2DBackpropInput",
        vec![dout_b, abs(&[3, 2, 3, 3]), sizes_abs(&[-1, 2, 6, 6])],
        conv_attrs(),
    )
    .unwrap();
    let AbsVal::Tensor {
        shape: Shape::Ranked(d),
        ..
    } = r
    else {
        panic!("{r}")
    };
    assert_eq!(
        d,
        vec![
            Dim::Sym("B".into()),
            Dim::Known(2),
            Dim::Known(6),
            Dim::Known(6)
        ]
    );
    // A tuple of unknown length: the batch still follows.
    let r = infer(
        "Conv2DBackpropInput",
        vec![abs(&[5, 3, 4, 4]), abs(&[3, 2, 3, 3]), AbsVal::Any],
        conv_attrs(),
    )
    .unwrap();
    assert_eq!(r, AbsVal::Any);
}

#[test]
fn conv2d_backprop_filter_errors() {
    let (dout, x) = (rnd(&[1, 3, 4, 4], 1), rnd(&[1, 2, 6, 6], 2));
    let e = infer(
        "Conv2DBackpropFilter",
        vec![
            abs(&[1, 3, 4, 4]),
            abs(&[1, 2, 6, 6]),
            sizes_abs(&[3, 2, 2, 3]),
        ],
        conv_attrs(),
    )
    .unwrap_err();
    assert_err(&e, ErrorTarget::Input(2), &["does not fit"]);
    let e = err(
        "Conv2DBackpropFilter",
        vec![dout.clone(), x.clone(), sizes(&[3, 2, 2, 3])],
        conv_attrs(),
    );
    assert_err(&e, ErrorTarget::Call, &["does not fit"]);
    let e = err(
        "Conv2DBackpropFilter",
        vec![dout.clone(), rnd(&[1, 2, 6], 3), sizes(&[3, 2, 3, 3])],
        conv_attrs(),
    );
    assert_err(&e, ErrorTarget::Input(1), &["4-D"]);
    let y = tensor(call(
        "Conv2DBackpropFilter",
        vec![dout, x, sizes(&[3, 2, 3, 3])],
        conv_attrs(),
    ));
    assert_eq!(y.shape(), &[3, 2, 3, 3]);
    // Filter sizes unknown before run time: the attributes give them.
    let r = infer(
        "Conv2DBackpropFilter",
        vec![
            abs(&[1, 3, 4, 4]),
            abs(&[1, 2, 6, 6]),
            sizes_abs(&[-1, -1, -1, -1]),
        ],
        conv_attrs(),
    )
    .unwrap();
    assert_eq!(shape_of(&r), vec![3, 2, 3, 3]);
}

fn c3(oc: i64, k: &[i64]) -> Vec<(&'static str, AttrValue)> {
    vec![("out_channel", int(oc)), ("kernel_size", ints(k))]
}

#[test]
fn conv3d_errors_and_shapes() {
    let (x, w) = (rnd(&[1, 2, 4, 5, 6], 1), rnd(&[3, 2, 2, 2, 2], 2));
    let e = err("Conv3D", vec![x.clone(), w.clone()], c3(3, &[2, 2]));
    assert_err(&e, ErrorTarget::Attr("kernel_size"), &["3 ints"]);
    let e = err(
        "Conv3D",
        vec![rnd(&[1, 2, 4, 5], 3), w.clone()],
        c3(3, &[2, 2, 2]),
    );
    assert_err(&e, ErrorTarget::Input(0), &["5-D"]);
    let e = err(
        "Conv3D",
        vec![x.clone(), rnd(&[3, 1, 2, 2, 2], 4)],
        c3(3, &[2, 2, 2]),
    );
    assert_err(&e, ErrorTarget::Input(1), &["does not fit"]);
    let mut a = c3(3, &[2, 2, 2]);
    a.push(("group", int(2)));
    let e = err("Conv3D", vec![x.clone(), w.clone()], a);
    assert_err(&e, ErrorTarget::Attr("group"), &["divide"]);
    let mut a = c3(3, &[2, 2, 2]);
    a.push(("pad", ints(&[1, 1, 1])));
    let e = err("Conv3D", vec![x.clone(), w.clone()], a);
    assert_err(&e, ErrorTarget::Attr("pad"), &["6 ints"]);
    let e = err(
        "Conv3D",
        vec![rnd(&[1, 2, 1, 5, 6], 5), w.clone()],
        c3(3, &[2, 2, 2]),
    );
    assert_err(&e, ErrorTarget::Call, &["depth", "smaller than"]);
    // 5-tuple strides as MindSpore stores them.
    let mut a = c3(3, &[2, 2, 2]);
    a.push(("stride", ints(&[1, 1, 2, 2, 1])));
    let y = tensor(call("Conv3D", vec![x.clone(), w.clone()], a));
    assert_eq!(y.shape(), &[1, 3, 2, 2, 5]);
    // Unknown sizes stay unknown, the channels are known.
    let r = infer(
        "Conv3D",
        vec![abs(&[-1, 2, -1, 5, 6]), abs(&[3, 2, 2, 2, 2])],
        c3(3, &[2, 2, 2]),
    )
    .unwrap();
    assert_eq!(shape_of(&r), vec![-1, 3, -1, 4, 5]);
    let r = infer("Conv3D", vec![unranked(), unranked()], c3(3, &[2, 2, 2])).unwrap();
    assert_eq!(shape_of(&r), vec![-1, 3, -1, -1, -1]);
    // A batch of 0 gives an empty result.
    let y = tensor(call(
        "Conv3D",
        vec![rnd(&[0, 2, 4, 5, 6], 6), w],
        c3(3, &[2, 2, 2]),
    ));
    assert_eq!(y.shape(), &[0, 3, 3, 4, 5]);
}

#[test]
fn conv3d_transpose_errors() {
    let attrs = |extra: Vec<(&'static str, AttrValue)>| {
        let mut a = vec![
            ("in_channel", int(2)),
            ("out_channel", int(3)),
            ("kernel_size", int(2)),
        ];
        a.extend(extra);
        a
    };
    let (x, w) = (rnd(&[1, 2, 2, 3, 2], 1), rnd(&[2, 3, 2, 2, 2], 2));
    let e = err(
        "Conv3DTranspose",
        vec![x.clone(), w.clone()],
        attrs(vec![("dilation", ints(&[2, 1, 1]))]),
    );
    assert_err(&e, ErrorTarget::Attr("dilation"), &["depth", "must be 1"]);
    let e = err(
        "Conv3DTranspose",
        vec![x.clone(), w.clone()],
        attrs(vec![("output_padding", int(1)), ("stride", int(2))]),
    );
    assert_err(&e, ErrorTarget::Attr("output_padding"), &["pad_mode"]);
    let e = err(
        "Conv3DTranspose",
        vec![rnd(&[1, 3, 2, 3, 2], 3), w.clone()],
        attrs(vec![]),
    );
    assert_err(&e, ErrorTarget::Attr("in_channel"), &["3 channels"]);
    let y = tensor(call("Conv3DTranspose", vec![x, w], attrs(vec![])));
    assert_eq!(y.shape(), &[1, 3, 3, 4, 3]);
}

// ---------------------------------------------------------------------------
// Pooling

#[test]
fn pooling_errors_and_shapes() {
    let x = rnd(&[1, 2, 4, 5, 6], 1);
    let e = err(
        "AvgPool3D",
        vec![rnd(&[2, 4, 5, 6], 2)],
        vec![("kernel_size", int(2))],
    );
    assert_err(&e, ErrorTarget::Input(0), &["5-D"]);
    let e = err(
        "AvgPool3D",
        vec![x.clone()],
        vec![("kernel_size", int(2)), ("pad", int(1))],
    );
    assert_err(&e, ErrorTarget::Attr("pad"), &["pad_mode=\"pad\""]);
    let e = err(
        "AvgPool3D",
        vec![x.clone()],
        vec![("divisor_override", int(-1))],
    );
    assert_err(&e, ErrorTarget::Attr("divisor_override"), &["non-negative"]);
    let e = err("MaxPool3D", vec![x.clone()], vec![("kernel_size", int(5))]);
    assert_err(&e, ErrorTarget::Call, &["smaller than"]);
    let e = err(
        "MaxPool3DWithArgmax",
        vec![x.clone()],
        vec![("ksize", int(2)), ("strides", int(1)), ("pads", int(2))],
    );
    assert_err(&e, ErrorTarget::Attr("pads"), &["half the kernel"]);
    let e = err(
        "MaxPoolWithArgmaxV2",
        vec![rnd(&[1, 2, 4, 4], 3)],
        vec![
            ("kernel_size", int(2)),
            ("argmax_type", AttrValue::DType(DType::F32)),
        ],
    );
    assert_err(&e, ErrorTarget::Attr("argmax_type"), &["int32 or int64"]);
    let e = err(
        "AdaptiveAvgPool2D",
        vec![rnd(&[1, 2, 4, 4], 4)],
        vec![("output_size", ints(&[0, 2]))],
    );
    assert_err(&e, ErrorTarget::Attr("output_size"), &["positive"]);
    let e = err(
        "AdaptiveAvgPool2D",
        vec![rnd(&[1, 2, 4, 4], 4)],
        vec![("output_size", ints(&[1, 2, 3]))],
    );
    assert_err(&e, ErrorTarget::Attr("output_size"), &["2 ints"]);
    let e = err(
        "AdaptiveMaxPool2D",
        vec![rnd(&[4, 4], 5)],
        vec![("output_size", ints(&[2, 2]))],
    );
    assert_err(&e, ErrorTarget::Input(0), &["3-D", "4-D"]);
    // MaxPoolWithArgmaxV2's strides default to the kernel size.
    let r = items(call(
        "MaxPoolWithArgmaxV2",
        vec![rnd(&[1, 1, 6, 7], 6)],
        vec![("kernel_size", int(3))],
    ));
    assert_eq!(tensor(r[0].clone()).shape(), &[1, 1, 2, 2]);
    assert_eq!(tensor(r[1].clone()).dtype(), DType::I64);
    // Shape rules: unknown spatial sizes stay unknown, adaptive sizes do not.
    let r = infer(
        "AvgPool3D",
        vec![abs(&[2, 3, -1, 8, 8])],
        vec![("kernel_size", int(2)), ("strides", int(2))],
    )
    .unwrap();
    assert_eq!(shape_of(&r), vec![2, 3, -1, 4, 4]);
    let r = infer(
        "AdaptiveAvgPool2D",
        vec![abs(&[-1, 3, -1, -1])],
        vec![("output_size", ints(&[2, -1]))],
    )
    .unwrap();
    assert_eq!(shape_of(&r), vec![-1, 3, 2, -1]);
    let r = infer("MaxPool3D", vec![unranked()], vec![("kernel_size", int(2))]).unwrap();
    assert_eq!(r, unranked());
}

#[test]
fn max_pool_gradient_goes_to_the_first_maximum() {
    let x =
        KValue::Tensor(Tensor::from_f32(vec![1, 1, 1, 2, 2], vec![3.0, 3.0, 1.0, 3.0]).unwrap());
    let attrs = vec![("kernel_size", ints(&[1, 2, 2])), ("strides", int(1))];
    let y = tensor(call("MaxPool3D", vec![x.clone()], attrs.clone()));
    assert_eq!(y.to_f64_vec(), vec![3.0]);
    let dout = KValue::Tensor(Tensor::from_f32(vec![1, 1, 1, 1, 1], vec![1.0]).unwrap());
    let g = eager::gradient("MaxPool3D", &[x], attrs, &dout).unwrap();
    assert_eq!(
        tensor(g[0].clone().unwrap()).to_f64_vec(),
        vec![1.0, 0.0, 0.0, 0.0]
    );
}

// ---------------------------------------------------------------------------
// Resizing

#[test]
fn resize_errors_and_shapes() {
    let x = rnd(&[1, 2, 3, 4], 1);
    let e = err(
        "ResizeBilinearV2",
        vec![idx(DType::I32, &[1, 1, 1, 1], &[1])],
        vec![("size", ints(&[2, 2]))],
    );
    assert_err(&e, ErrorTarget::Input(0), &["float"]);
    let e = err(
        "ResizeNearestNeighborV2",
        vec![x.clone()],
        vec![("size", ints(&[2]))],
    );
    assert_err(&e, ErrorTarget::Attr("size"), &["2 positive ints"]);
    let e = err(
        "ResizeBicubic",
        vec![x.clone()],
        vec![
            ("size", ints(&[2, 2])),
            ("align_corners", b(true)),
            ("half_pixel_centers", b(true)),
        ],
    );
    assert_err(&e, ErrorTarget::Attr("half_pixel_centers"), &["both"]);
    let e = err(
        "UpsampleNearest2D",
        vec![x.clone()],
        vec![
            ("output_size", ints(&[4, 4])),
            ("scales", floats(&[2.0, 2.0])),
        ],
    );
    assert_err(&e, ErrorTarget::Attr("scales"), &["not both"]);
    let e = err("UpsampleNearest2D", vec![x.clone()], vec![]);
    assert_err(&e, ErrorTarget::Attr("output_size"), &["needs"]);
    let e = err(
        "UpsampleTrilinear3D",
        vec![x.clone()],
        vec![("output_size", ints(&[2, 2, 2]))],
    );
    assert_err(&e, ErrorTarget::Input(0), &["5-D"]);
    let e = err(
        "UpsampleBilinear2D",
        vec![x.clone()],
        vec![("scales", floats(&[2.0, -1.0]))],
    );
    assert_err(&e, ErrorTarget::Attr("scales"), &["positive"]);
    // Scales given as ints are floats.
    let y = tensor(call(
        "UpsampleNearest2D",
        vec![x.clone()],
        vec![("scales", ints(&[2, 3]))],
    ));
    assert_eq!(y.shape(), &[1, 2, 6, 12]);
    let r = infer(
        "ResizeBilinearV2",
        vec![abs(&[-1, 3, -1, -1])],
        vec![("size", ints(&[5, 7]))],
    )
    .unwrap();
    assert_eq!(shape_of(&r), vec![-1, 3, 5, 7]);
    let r = infer(
        "UpsampleNearest3D",
        vec![abs(&[1, 3, -1, 4, 4])],
        vec![("scales", floats(&[2.0, 2.0, 1.5]))],
    )
    .unwrap();
    assert_eq!(shape_of(&r), vec![1, 3, -1, 8, 6]);
    // Nearest resizing copies integers exactly.
    let xi = idx(DType::I32, &[1, 1, 2, 2], &[1, 2, 3, 4]);
    let y = tensor(call(
        "ResizeNearestNeighbor",
        vec![xi],
        vec![("size", ints(&[4, 4]))],
    ));
    assert_eq!(y.dtype(), DType::I32);
    assert_eq!(
        y.to_f64_vec(),
        vec![1., 1., 2., 2., 1., 1., 2., 2., 3., 3., 4., 4., 3., 3., 4., 4.]
    );
}

#[test]
fn pixel_shuffle_round_trip() {
    let x = rnd(&[2, 8, 2, 3], 1);
    let e = err(
        "PixelShuffle",
        vec![rnd(&[2, 6, 2, 3], 2)],
        vec![("upscale_factor", int(2))],
    );
    assert_err(&e, ErrorTarget::Input(0), &["not divisible"]);
    let e = err(
        "PixelShuffle",
        vec![x.clone()],
        vec![("upscale_factor", int(0))],
    );
    assert_err(&e, ErrorTarget::Attr("upscale_factor"), &["at least 1"]);
    let y = call(
        "PixelShuffle",
        vec![x.clone()],
        vec![("upscale_factor", int(2))],
    );
    assert_eq!(tensor(y.clone()).shape(), &[2, 2, 4, 6]);
    let back = call(
        "_PixelShuffleGrad",
        vec![y, x.clone()],
        vec![("upscale_factor", int(2))],
    );
    assert_eq!(tensor(back), tensor(x));
}

// ---------------------------------------------------------------------------
// Normalisations

#[test]
fn normalisation_errors() {
    let x = rnd(&[2, 6, 3], 1);
    let e = err(
        "GroupNorm",
        vec![x.clone(), none(), none()],
        vec![("num_groups", int(4))],
    );
    assert_err(&e, ErrorTarget::Attr("num_groups"), &["does not divide"]);
    let e = err(
        "GroupNorm",
        vec![x.clone(), rnd(&[5], 2), none()],
        vec![("num_groups", int(3))],
    );
    assert_err(&e, ErrorTarget::Input(1), &["weight", "[6]"]);
    let e = err(
        "LayerNormExt",
        vec![x.clone(), none(), none()],
        vec![("normalized_shape", ints(&[4]))],
    );
    assert_err(
        &e,
        ErrorTarget::Attr("normalized_shape"),
        &["trailing shape"],
    );
    let e = err("RmsNorm", vec![x.clone(), rnd(&[6], 3)], vec![]);
    assert_err(&e, ErrorTarget::Input(1), &["trailing shape"]);
    let e = err(
        "L2Normalize",
        vec![x.clone()],
        vec![("axis", ints(&[0, 1]))],
    );
    assert_err(&e, ErrorTarget::Attr("axis"), &["exactly one"]);
    let e = err("L2Normalize", vec![x.clone()], vec![("axis", int(3))]);
    assert_err(&e, ErrorTarget::Attr("axis"), &["out of range"]);
    let e = err(
        "BatchNormExt",
        vec![rnd(&[4], 7), none(), none(), none(), none()],
        vec![],
    );
    assert_err(&e, ErrorTarget::Input(0), &["rank at least 2"]);
    let e = err(
        "BatchNormExt",
        vec![x.clone(), rnd(&[5], 8), none(), none(), none()],
        vec![],
    );
    assert_err(&e, ErrorTarget::Input(1), &["weight", "[6]"]);
    let e = err("LRN", vec![x.clone()], vec![]);
    assert_err(&e, ErrorTarget::Input(0), &["4-D"]);
    let e = err(
        "LRN",
        vec![rnd(&[1, 2, 2, 2], 4)],
        vec![("depth_radius", int(-1))],
    );
    assert_err(&e, ErrorTarget::Attr("depth_radius"), &["non-negative"]);
    let g = (0..5).map(|k| rnd(&[3], 10 + k)).collect::<Vec<_>>();
    let e = err(
        "InstanceNorm",
        vec![
            rnd(&[2, 3], 5),
            g[0].clone(),
            g[1].clone(),
            g[2].clone(),
            g[3].clone(),
        ],
        vec![],
    );
    assert_err(&e, ErrorTarget::Input(0), &["rank at least 3"]);
    let e = err(
        "InstanceNorm",
        vec![
            rnd(&[2, 3, 4], 6),
            g[0].clone(),
            g[1].clone(),
            g[2].clone(),
            g[3].clone(),
        ],
        vec![("epsilon", flt(0.0))],
    );
    assert_err(&e, ErrorTarget::Attr("epsilon"), &["(0, 1]"]);
}

#[test]
fn normalisation_shapes() {
    // None (or an empty tuple) for an optional input, in shape rules.
    let r = infer(
        "GroupNorm",
        vec![abs(&[-1, 6, 5]), AbsVal::None, AbsVal::None],
        vec![("num_groups", int(3))],
    )
    .unwrap();
    let AbsVal::Tuple(r) = r else { panic!() };
    assert_eq!(shape_of(&r[0]), vec![-1, 6, 5]);
    assert_eq!(shape_of(&r[1]), vec![-1, 3]);
    let r = infer(
        "LayerNormExt",
        vec![abs(&[2, -1, 4]), abs(&[4]), AbsVal::None],
        vec![("normalized_shape", ints(&[4]))],
    )
    .unwrap();
    let AbsVal::Tuple(r) = r else { panic!() };
    assert_eq!(shape_of(&r[1]), vec![2, -1, 1]);
    let r = infer("RmsNorm", vec![unranked(), unranked()], vec![]).unwrap();
    let AbsVal::Tuple(r) = r else { panic!() };
    assert_eq!(r[1].dtype(), Some(DType::F32));
    // GroupNorm without weight and bias is plain normalisation.
    let x = rnd(&[1, 2, 4], 1);
    let y = items(call(
        "GroupNorm",
        vec![x.clone(), none(), none()],
        vec![("num_groups", int(1))],
    ));
    let v = tensor(y[0].clone()).to_f64_vec();
    let mean: f64 = v.iter().sum::<f64>() / 8.0;
    let var: f64 = v.iter().map(|a| (a - mean) * (a - mean)).sum::<f64>() / 8.0;
    assert!(
        mean.abs() < 1e-6 && (var - 1.0).abs() < 1e-3,
        "{mean} {var}"
    );
    // L2Normalize of a rank-1 input.
    let y = tensor(call(
        "L2Normalize",
        vec![KValue::Tensor(
            Tensor::from_f32(vec![2], vec![3.0, 4.0]).unwrap(),
        )],
        vec![],
    ));
    assert_eq!(y.to_f64_vec(), vec![0.6000000238418579, 0.800000011920929]);
}

// ---------------------------------------------------------------------------
// Losses

#[test]
fn loss_errors() {
    let (x, t) = (rnd(&[2, 3], 1), rnd(&[2, 3], 2));
    let e = err(
        "BinaryCrossEntropy",
        vec![x.clone(), rnd(&[3], 3), none()],
        vec![],
    );
    assert_err(&e, ErrorTarget::Input(1), &["shape of `input`"]);
    let e = err(
        "BinaryCrossEntropy",
        vec![x.clone(), t.clone(), rnd(&[2, 2], 4)],
        vec![],
    );
    assert_err(&e, ErrorTarget::Input(2), &["broadcast"]);
    let e = err(
        "BCEWithLogitsLoss",
        vec![x.clone(), t.clone(), none(), rnd(&[4, 2, 3], 5)],
        vec![],
    );
    assert_err(&e, ErrorTarget::Input(3), &["must broadcast to"]);
    let e = err(
        "SmoothL1Loss",
        vec![x.clone(), t.clone()],
        vec![("beta", flt(0.0))],
    );
    assert_err(&e, ErrorTarget::Attr("beta"), &["positive"]);
    let e = err(
        "KLDivLoss",
        vec![rnd(&[], 6), rnd(&[], 7)],
        vec![("reduction", s("batchmean"))],
    );
    assert_err(&e, ErrorTarget::Input(0), &["rank at least 1"]);
    let e = err("MSELossExt", vec![x.clone(), rnd(&[4], 8)], vec![]);
    assert_err(&e, ErrorTarget::Input(1), &["broadcast"]);
    let e = err(
        "MSELossExt",
        vec![x.clone(), idx(DType::I32, &[3], &[1, 2, 3])],
        vec![],
    );
    assert_err(&e, ErrorTarget::Input(1), &["dtype"]);
    let w = rnd(&[3], 9);
    let e = err(
        "NLLLoss",
        vec![
            rnd(&[2, 3, 1], 10),
            idx(DType::I32, &[2], &[0, 1]),
            w.clone(),
        ],
        vec![],
    );
    assert_err(&e, ErrorTarget::Input(0), &["2-D"]);
    let e = err("NLLLoss", vec![x.clone(), t.clone(), w.clone()], vec![]);
    assert_err(&e, ErrorTarget::Input(1), &["integer"]);
    let e = err(
        "NLLLoss",
        vec![x.clone(), idx(DType::I64, &[2], &[0, 3]), w.clone()],
        vec![],
    );
    assert_err(&e, ErrorTarget::Input(1), &["out of range"]);
    let e = err("L2Loss", vec![idx(DType::I32, &[2], &[1, 2])], vec![]);
    assert_err(&e, ErrorTarget::Input(0), &["float"]);
}

#[test]
fn loss_edges() {
    // Rank 0 operands, and empty ones.
    let y = tensor(call(
        "SoftMarginLoss",
        vec![rnd(&[], 1), rnd(&[], 2)],
        vec![("reduction", s("none"))],
    ));
    assert_eq!(y.shape(), &[] as &[usize]);
    let y = tensor(call("L2Loss", vec![rnd(&[0, 3], 3)], vec![]));
    assert_eq!(y.to_f64_vec(), vec![0.0]);
    let y = tensor(call("MSELossExt", vec![rnd(&[0], 4), rnd(&[0], 5)], vec![]));
    assert!(y.to_f64_vec()[0].is_nan());
    // BinaryCrossEntropy clamps its logarithms at ln(1e-12).
    let p = KValue::Tensor(Tensor::from_f32(vec![2], vec![0.0, 1.0]).unwrap());
    let q = KValue::Tensor(Tensor::from_f32(vec![2], vec![1.0, 0.0]).unwrap());
    let y = tensor(call(
        "BinaryCrossEntropy",
        vec![p, q, none()],
        vec![("reduction", s("none"))],
    ));
    for v in y.to_f64_vec() {
        assert!((v - 27.631021).abs() < 1e-4, "{v}");
    }
    // NLLLoss: every label ignored gives a NaN mean and a zero total.
    let r = items(call(
        "NLLLoss",
        vec![
            rnd(&[2, 3], 6),
            idx(DType::I32, &[2], &[1, 1]),
            rnd(&[3], 7),
        ],
        vec![("ignore_index", int(1))],
    ));
    assert!(tensor(r[0].clone()).to_f64_vec()[0].is_nan());
    assert_eq!(tensor(r[1].clone()).to_f64_vec(), vec![0.0]);
    // Shape rules: unranked inputs give a scalar unless reduction="none".
    let r = infer(
        "SmoothL1Loss",
        vec![unranked(), unranked()],
        vec![("reduction", s("sum"))],
    )
    .unwrap();
    assert_eq!(shape_of(&r), Vec::<i64>::new());
    let r = infer(
        "BCEWithLogitsLoss",
        vec![abs(&[-1, 3]), abs(&[-1, 3]), AbsVal::None, abs(&[3])],
        vec![("reduction", s("none"))],
    )
    .unwrap();
    assert_eq!(shape_of(&r), vec![-1, 3]);
}

// ---------------------------------------------------------------------------
// LSTM, Dense, embeddings, channel dropout

fn lstm_attrs(i: i64, h: i64) -> Vec<(&'static str, AttrValue)> {
    vec![
        ("input_size", int(i)),
        ("hidden_size", int(h)),
        ("num_layers", int(1)),
        ("has_bias", b(true)),
        ("bidirectional", b(false)),
        ("dropout", flt(0.0)),
    ]
}

#[test]
fn lstm_errors_and_shapes() {
    let (x, h, c) = (rnd(&[3, 2, 4], 1), rnd(&[1, 2, 5], 2), rnd(&[1, 2, 5], 3));
    let w = rnd(&[4 * 5 * (4 + 5) + 4 * 5, 1, 1], 4);
    let e = err(
        "LSTM",
        vec![x.clone(), h.clone(), c.clone(), rnd(&[10, 1, 1], 5)],
        lstm_attrs(4, 5),
    );
    assert_err(&e, ErrorTarget::Input(3), &["200 elements"]);
    let e = err(
        "LSTM",
        vec![x.clone(), h.clone(), c.clone(), w.clone()],
        lstm_attrs(3, 5),
    );
    assert_err(&e, ErrorTarget::Attr("input_size"), &["4 features"]);
    let e = err(
        "LSTM",
        vec![x.clone(), rnd(&[2, 2, 5], 6), c.clone(), w.clone()],
        lstm_attrs(4, 5),
    );
    assert_err(&e, ErrorTarget::Input(1), &["[1, 2, 5]"]);
    let mut a = lstm_attrs(4, 5);
    a.push(("proj_size", int(2)));
    let e = err("LSTM", vec![x.clone(), h.clone(), c.clone(), w.clone()], a);
    assert_err(&e, ErrorTarget::Attr("proj_size"), &["proj_size=0"]);
    let r = items(call(
        "LSTM",
        vec![x, h.clone(), c.clone(), w.clone()],
        lstm_attrs(4, 5),
    ));
    assert_eq!(tensor(r[0].clone()).shape(), &[3, 2, 5]);
    // An empty sequence returns the initial states.
    let r = items(call(
        "LSTM",
        vec![rnd(&[0, 2, 4], 7), h.clone(), c.clone(), w],
        lstm_attrs(4, 5),
    ));
    assert_eq!(tensor(r[0].clone()).shape(), &[0, 2, 5]);
    assert_eq!(tensor(r[1].clone()), tensor(h));
    assert_eq!(tensor(r[2].clone()), tensor(c));
    let r = infer(
        "LSTM",
        vec![abs(&[-1, -1, 4]), abs(&[1, -1, 5]), unranked(), unranked()],
        lstm_attrs(4, 5),
    )
    .unwrap();
    let AbsVal::Tuple(r) = r else { panic!() };
    assert_eq!(shape_of(&r[0]), vec![-1, -1, 5]);
}

/// One LSTM step against the textbook equations (gates i, f, g, o).
#[test]
fn lstm_step_matches_the_equations() {
    let (i, h) = (2usize, 1usize);
    let x = [0.5, -1.0];
    let (h0, c0) = (0.3, -0.2);
    // W_ih [4, 2], W_hh [4, 1], bias [4].
    let wih = [0.1, 0.2, -0.3, 0.4, 0.5, -0.6, 0.7, 0.8];
    let whh = [0.9, -0.1, 0.2, -0.3];
    let bias = [0.05, -0.05, 0.1, 0.0];
    let mut w = wih.to_vec();
    w.extend(whh);
    w.extend(bias);
    let sig = |v: f64| 1.0 / (1.0 + (-v).exp());
    let a: Vec<f64> = (0..4)
        .map(|k| wih[2 * k] * x[0] + wih[2 * k + 1] * x[1] + whh[k] * h0 + bias[k])
        .collect();
    let c1 = sig(a[1]) * c0 + sig(a[0]) * a[2].tanh();
    let h1 = sig(a[3]) * c1.tanh();
    let kv = |shape: Vec<usize>, v: Vec<f64>| KValue::Tensor(Tensor::from_f64(shape, v).unwrap());
    let r = items(call(
        "LSTM",
        vec![
            kv(vec![1, 1, i], x.to_vec()),
            kv(vec![1, 1, h], vec![h0]),
            kv(vec![1, 1, h], vec![c0]),
            kv(vec![w.len(), 1, 1], w),
        ],
        lstm_attrs(2, 1),
    ));
    assert!((tensor(r[0].clone()).to_f64_vec()[0] - h1).abs() < 1e-12);
    assert!((tensor(r[2].clone()).to_f64_vec()[0] - c1).abs() < 1e-12);
}

#[test]
fn dense_and_embeddings() {
    let e = err(
        "Dense",
        vec![rnd(&[3, 4], 1), rnd(&[5, 3], 2), none()],
        vec![],
    );
    assert_err(&e, ErrorTarget::Input(1), &["4 features"]);
    let e = err(
        "Dense",
        vec![rnd(&[3, 4], 1), rnd(&[2, 5, 4], 3), none()],
        vec![],
    );
    assert_err(&e, ErrorTarget::Input(1), &["out_channels, in_channels"]);
    let e = err(
        "Dense",
        vec![rnd(&[3, 4], 1), rnd(&[5, 4], 3), rnd(&[4], 4)],
        vec![],
    );
    assert_err(&e, ErrorTarget::Input(2), &["bias"]);
    let y = tensor(call(
        "Dense",
        vec![rnd(&[4], 5), rnd(&[5, 4], 6), none()],
        vec![],
    ));
    assert_eq!(y.shape(), &[5]);
    let table = rnd(&[5, 3], 7);
    let e = err(
        "Embedding",
        vec![idx(DType::I32, &[2], &[0, 5]), table.clone()],
        vec![],
    );
    assert_err(&e, ErrorTarget::Input(0), &["out of range"]);
    let e = err(
        "Embedding",
        vec![idx(DType::I32, &[2], &[0, 1]), table.clone()],
        vec![("padding_idx", int(5))],
    );
    assert_err(&e, ErrorTarget::Attr("padding_idx"), &["out of range"]);
    let e = err(
        "EmbeddingLookup",
        vec![rnd(&[2, 2, 2], 8), idx(DType::I32, &[1], &[0])],
        vec![("offset", int(0))],
    );
    assert_err(&e, ErrorTarget::Input(0), &["rank 1 or 2"]);
    // padding_idx rows get no gradient; scale_grad_by_freq divides by counts.
    let ix = idx(DType::I64, &[4], &[0, 3, 3, 1]);
    let dout = KValue::Tensor(Tensor::full(DType::F32, vec![4, 3], 1.0));
    let g = eager::gradient(
        "Embedding",
        &[ix, table],
        vec![("padding_idx", int(1)), ("scale_grad_by_freq", b(true))],
        &dout,
    )
    .unwrap();
    let g = tensor(g[1].clone().unwrap()).to_f64_vec();
    assert_eq!(&g[0..3], &[1.0, 1.0, 1.0]);
    assert_eq!(&g[3..6], &[0.0, 0.0, 0.0]);
    assert_eq!(&g[9..12], &[1.0, 1.0, 1.0]);
}

#[test]
fn channel_dropout_keeps_or_drops_whole_channels() {
    let x = rnd(&[2, 4, 3, 3], 1);
    let e = err("Dropout2D", vec![rnd(&[2, 4, 3], 2)], vec![]);
    assert_err(&e, ErrorTarget::Input(0), &["4-D"]);
    let e = err(
        "Dropout3D",
        vec![rnd(&[2, 4, 3, 3, 1], 3)],
        vec![("keep_prob", flt(1.5))],
    );
    assert_err(&e, ErrorTarget::Attr("keep_prob"), &["[0, 1]"]);
    let r = items(call(
        "Dropout2D",
        vec![x.clone()],
        vec![("keep_prob", flt(0.5))],
    ));
    let (y, m) = (tensor(r[0].clone()).to_f64_vec(), tensor(r[1].clone()));
    assert_eq!(m.dtype(), DType::Bool);
    let (xv, mv) = (tensor(x.clone()).to_f64_vec(), m.to_f64_vec());
    for ch in 0..8 {
        let cells = &mv[ch * 9..(ch + 1) * 9];
        assert!(cells.iter().all(|&v| v == cells[0]));
        for k in ch * 9..(ch + 1) * 9 {
            assert!((y[k] - xv[k] * mv[k] * 2.0).abs() < 1e-6);
        }
    }
    let r = items(call("Dropout2D", vec![x], vec![("keep_prob", flt(0.0))]));
    assert!(tensor(r[0].clone()).to_f64_vec().iter().all(|&v| v == 0.0));
}
