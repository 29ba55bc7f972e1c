//! The mirrored and edge paddings' backward primitives, as MindSpore's bprops
//! emit them: `MirrorPadGrad` and `PadV3Grad` (the gradient and the
//! forward's paddings: the input's shape is the gradient's less them), and
//! `ReflectionPad1D/2D/3DGrad`, `ReplicationPad1D/2D/3DGrad` (the gradient
//! and the input). Each adds the gradient back through its forward's padding
//! map (`shape::pad::unpad_add`: mirrored positions summed), and its gradient
//! is its forward again.

use crate::schema::{why, Override, Schema};
use crate::Traits;
use ir::{AbsVal, AttrValue};

use crate::defs::shape::pad::{unpad_add, unpadded_dims};
use crate::defs::shape::split_stack::{attrs_of, out};
use crate::defs::shape::{dims_of, tensor_abs, unranked};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef,
};

/// Whether backward primitive `fwd`'s is given the forward's input (rather
/// than unpadding the gradient's shape).
fn given_input(fwd: &str) -> bool {
    fwd != "MirrorPad" && fwd != "PadV3"
}

fn infer_backward(call: &InferCall, fwd: &str) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = dims_of(call, 0)?;
    if !dtype.is_float() {
        return Err(OpError::input(
            0,
            format!("`{}` needs a float gradient, got {dtype}", call.op.name),
        ));
    }
    if given_input(fwd) {
        let (_, like) = dims_of(call, 1)?;
        if let Some(like) = &like {
            // The padding's checks of the input's rank and sizes.
            unpadded_dims(fwd, call.attrs, &vec![ir::Dim::Unknown; like.len()])?;
        }
        return Ok(like.map_or(unranked(dtype), |l| tensor_abs(dtype, l)));
    }
    Ok(match dims {
        Some(d) => tensor_abs(dtype, unpadded_dims(fwd, call.attrs, &d)?),
        None => unranked(dtype),
    })
}

fn kernel_backward(c: &KernelCall, fwd: &str) -> Result<KValue, OpError> {
    let g = c.tensor(0)?;
    let like = if given_input(fwd) {
        Some(c.tensor(1)?.shape())
    } else {
        None
    };
    out(unpad_add(fwd, c.attrs, g, like)?)
}

/// The forward padding of the sensitivity (PadV3's constant is ignored in
/// its other modes: zero).
fn grad_backward(b: &mut dyn GradBuilder, c: &GradCall, fwd: &str) -> Vec<Option<GNode>> {
    let attrs = attrs_of(c);
    let dx = if fwd == "PadV3" {
        let zero = b.scalar(0.0);
        b.prim(fwd, &[c.dout, zero], attrs)
    } else {
        b.prim(fwd, &[c.dout], attrs)
    };
    let mut grads = vec![Some(dx)];
    if given_input(fwd) {
        grads.push(None);
    }
    grads
}

macro_rules! back_op {
    ($name:literal, $fwd:literal, $doc:literal, $schema:expr $(,)?) => {
        OpDef {
            name: $name,
            category: Category::Shape,
            doc: $doc,
            schema: $schema,
            variadic: false,
            output: OutputDef::Single,
            infer: |c| infer_backward(c, $fwd),
            grad: Some(|b, c| grad_backward(b, c, $fwd)),
            kernel: Some(|c| kernel_backward(c, $fwd)),
            traits: Traits::NONE,
        }
    };
}

const PAD_ND: Schema = Schema::ms(
    &[Override::attr(
        "padding",
        AttrType::IntTuple,
        None,
        why::TYPE,
    )],
    &[
        ("grad_output", "The gradient of the padded result."),
        ("input", "The padded input, for its shape."),
        ("padding", "As the padding."),
    ],
);

const PADDINGS_ATTR: &str =
    "constant paddings: an attribute in the registry, read from MindSpore's constant tensor";

pub const OPS: &[OpDef] = &[
    back_op!(
        "MirrorPadGrad",
        "MirrorPad",
        "The gradient of `MirrorPad`: `dy` added back through the mirror padding (each input position receives the sum of its images), onto the shape `dy` has without the paddings.",
        Schema::ms(
            &[
                Override::attr("paddings", AttrType::IntTuples, None, PADDINGS_ATTR),
                Override::attr(
                    "mode",
                    AttrType::Str(&["REFLECT", "SYMMETRIC"]),
                    Some(AttrDefault::Str("REFLECT")),
                    why::STRINGS,
                ),
            ],
            &[
                ("dy", "The gradient of the padded result."),
                ("paddings", "As MirrorPad: one `(before, after)` pair per dimension."),
                ("mode", "As MirrorPad: `REFLECT` or `SYMMETRIC`."),
            ],
        ),
    ),
    back_op!(
        "PadV3Grad",
        "PadV3",
        "The gradient of `PadV3` in its `reflect`, `edge` and `circular` modes: `x` (the gradient) added back through the padding, onto the shape it has without the paddings.",
        Schema::ms(
            &[
                Override::attr("paddings", AttrType::IntTuple, None, PADDINGS_ATTR),
                Override::attr(
                    "mode",
                    AttrType::Str(&["reflect", "edge", "circular"]),
                    Some(AttrDefault::Str("reflect")),
                    why::STRINGS,
                ),
            ],
            &[
                ("x", "The gradient of the padded result."),
                ("paddings", "As PadV3."),
                ("mode", "As PadV3: `reflect`, `edge` or `circular`."),
                ("paddings_contiguous", "As PadV3."),
            ],
        ),
    ),
    back_op!(
        "ReflectionPad1DGrad",
        "ReflectionPad1D",
        "The gradient of `ReflectionPad1D`: `grad_output` added back through the reflection onto `input`'s shape. MindSpore's CPU backend has no kernel for it.",
        PAD_ND,
    ),
    back_op!(
        "ReflectionPad2DGrad",
        "ReflectionPad2D",
        "The gradient of `ReflectionPad2D`: `grad_output` added back through the reflection onto `input`'s shape. MindSpore's CPU backend has no kernel for it.",
        PAD_ND,
    ),
    back_op!(
        "ReflectionPad3DGrad",
        "ReflectionPad3D",
        "The gradient of `ReflectionPad3D`: `grad_output` added back through the reflection onto `input`'s shape. MindSpore's CPU backend has no kernel for it.",
        PAD_ND,
    ),
    back_op!(
        "ReplicationPad1DGrad",
        "ReplicationPad1D",
        "The gradient of `ReplicationPad1D`: `grad_output` added back through the edge padding (each edge receives its copies) onto `input`'s shape. MindSpore's CPU backend has no kernel for it.",
        PAD_ND,
    ),
    back_op!(
        "ReplicationPad2DGrad",
        "ReplicationPad2D",
        "The gradient of `ReplicationPad2D`: `grad_output` added back through the edge padding (each edge receives its copies) onto `input`'s shape. MindSpore's CPU backend has no kernel for it.",
        PAD_ND,
    ),
    back_op!(
        "ReplicationPad3DGrad",
        "ReplicationPad3D",
        "The gradient of `ReplicationPad3D`: `grad_output` added back through the edge padding (each edge receives its copies) onto `input`'s shape. MindSpore's CPU backend has no kernel for it.",
        PAD_ND,
    ),
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let t = crate::defs::shape::split_stack::int_tuple;
    let s = |v: &str| AttrValue::Str(v.into());
    let pairs = |v: &[(i64, i64)]| AttrValue::Tuple(v.iter().map(|&(a, b)| t(&[a, b])).collect());
    let r = |shape: &[usize], seed: u64| random_f64(shape, seed, -1.0, 1.0);
    vec![
        Sample::new("MirrorPadGrad", vec![r(&[6, 10], 560)])
            .attr("paddings", pairs(&[(2, 1), (3, 3)])),
        Sample::new("MirrorPadGrad", vec![r(&[7, 6], 561)])
            .attr("paddings", pairs(&[(3, 1), (2, 2)]))
            .attr("mode", s("SYMMETRIC")),
        Sample::new("PadV3Grad", vec![r(&[1, 2, 9], 562)]).attr("paddings", t(&[3, 2])),
        Sample::new("PadV3Grad", vec![r(&[1, 2, 5, 5], 563)])
            .attr("paddings", t(&[1, 2, 2, 0]))
            .attr("mode", s("edge"))
            .attr("paddings_contiguous", AttrValue::Bool(false)),
        Sample::new("PadV3Grad", vec![r(&[1, 1, 8], 564)])
            .attr("paddings", t(&[2, 3]))
            .attr("mode", s("circular")),
        Sample::new(
            "ReflectionPad1DGrad",
            vec![r(&[2, 8], 565), r(&[2, 4], 566)],
        )
        .attr("padding", t(&[3, 1])),
        Sample::new(
            "ReflectionPad2DGrad",
            vec![r(&[1, 5, 6], 567), r(&[1, 3, 3], 568)],
        )
        .attr("padding", t(&[1, 2, 2, 0])),
        Sample::new(
            "ReflectionPad3DGrad",
            vec![r(&[1, 4, 3, 5], 569), r(&[1, 2, 2, 3], 570)],
        )
        .attr("padding", t(&[1, 1, 0, 1, 1, 1])),
        Sample::new(
            "ReplicationPad1DGrad",
            vec![r(&[1, 2, 9], 571), r(&[1, 2, 3], 572)],
        )
        .attr("padding", t(&[2, 4])),
        Sample::new(
            "ReplicationPad2DGrad",
            vec![r(&[2, 6, 5], 573), r(&[2, 2, 3], 574)],
        )
        .attr("padding", t(&[0, 2, 1, 3])),
        Sample::new(
            "ReplicationPad3DGrad",
            vec![r(&[2, 4, 3, 3], 575), r(&[2, 1, 2, 2], 576)],
        )
        .attr("padding", t(&[1, 0, 0, 1, 2, 1])),
    ]
}
