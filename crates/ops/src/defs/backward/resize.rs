//! The resizes' backward primitives, as MindSpore's bprops emit them:
//! `ResizeNearestNeighborGrad` and `ResizeNearestNeighborV2Grad` (the
//! gradient and the input's spatial size), `ResizeBilinearGrad`,
//! `ResizeBicubicGrad` and `ResizeLinear1DGrad` (the gradient and the input),
//! and the `Upsample*Grad` (the gradient, the input's shape and the forward's
//! `output_size`, `scales`, `align_corners`). Each computes its forward's
//! transposed interpolation (`resize::apply_transposed`), and its gradient is
//! its forward again.

use crate::schema::{why, Override, Schema};
use crate::Traits;
use ir::{AbsVal, AttrValue, Dim};

use crate::defs::backward::sizes::{sizes_abs, sizes_arg, sizes_dims};
use crate::defs::nn::common::ktensor;
use crate::defs::resize::{apply_transposed, plan, Kind};
use crate::defs::shape::{dims_of, fmt_dims, tensor_abs, unranked};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Attrs, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef,
};

/// How a backward primitive learns its forward's input shape.
#[derive(Clone, Copy, PartialEq)]
enum Given {
    /// `size`: the input's spatial size (its leading dims are the gradient's).
    Size,
    /// A second input: the forward's input itself.
    Input,
    /// `input_size`: the input's whole shape.
    InputSize,
}

/// The backward primitive of `kind`, and how it is given its input's shape.
fn backward(kind: Kind) -> (&'static str, Given) {
    match kind {
        Kind::ResizeNearestNeighbor => ("ResizeNearestNeighborGrad", Given::Size),
        Kind::ResizeNearestNeighborV2 => ("ResizeNearestNeighborV2Grad", Given::Size),
        Kind::ResizeBilinearV2 => ("ResizeBilinearGrad", Given::Input),
        Kind::ResizeBicubic => ("ResizeBicubicGrad", Given::Input),
        Kind::ResizeLinear1D => ("ResizeLinear1DGrad", Given::Input),
        Kind::UpsampleNearest1D => ("UpsampleNearest1DGrad", Given::InputSize),
        Kind::UpsampleNearest2D => ("UpsampleNearest2DGrad", Given::InputSize),
        Kind::UpsampleNearest3D => ("UpsampleNearest3DGrad", Given::InputSize),
        Kind::UpsampleLinear1D => ("UpsampleLinear1DGrad", Given::InputSize),
        Kind::UpsampleBilinear2D => ("UpsampleBilinear2DGrad", Given::InputSize),
        Kind::UpsampleTrilinear3D => ("UpsampleTrilinear3DGrad", Given::InputSize),
    }
}

/// The static sizes of `v`'s dimensions `from..`, if all are known.
fn known_dims(v: &AbsVal, from: usize) -> Option<Vec<i64>> {
    let shape = v.shape()?;
    let dims = shape.dims()?;
    dims.get(from..)?.iter().map(Dim::known).collect()
}

fn ints(v: &[i64]) -> AttrValue {
    AttrValue::Tuple(v.iter().map(|&i| AttrValue::Int(i)).collect())
}

/// The attributes of `attrs` named in `keep`, as given.
fn pass(attrs: &Attrs, keep: &[&'static str]) -> Vec<(&'static str, AttrValue)> {
    keep.iter()
        .filter_map(|&k| attrs.get(k).map(|v| (k, v.clone())))
        .collect()
}

/// The gradient of the resize `kind` of input `x` (`c` its call) as
/// MindSpore's bprop writes it. The sizes of `x` a backward primitive takes
/// (`size`, `input_size`) are a node input: the literal sizes where
/// inference knows them, else read from `Shape(x)` at run time (a batch `B`).
pub(crate) fn resize_backward(b: &mut dyn GradBuilder, c: &GradCall, kind: Kind) -> GNode {
    let (name, given) = backward(kind);
    let attrs = match kind {
        Kind::ResizeLinear1D => pass(c.attrs, &["coordinate_transformation_mode"]),
        Kind::UpsampleNearest1D | Kind::UpsampleNearest2D | Kind::UpsampleNearest3D => {
            pass(c.attrs, &["output_size", "scales"])
        }
        Kind::UpsampleLinear1D | Kind::UpsampleBilinear2D | Kind::UpsampleTrilinear3D => {
            pass(c.attrs, &["output_size", "scales", "align_corners"])
        }
        _ => pass(c.attrs, &["align_corners", "half_pixel_centers"]),
    };
    let x = c.input_values.first();
    match given {
        Given::Input => b.prim(name, &[c.dout, c.inputs[0]], attrs),
        Given::Size => {
            // The spatial sizes: `(H, W)` of `x`.
            let size = match x.and_then(|v| known_dims(v, 2)) {
                Some(size) => {
                    let items: Vec<GNode> = size.iter().map(|&d| b.int(d)).collect();
                    b.make_tuple(&items)
                }
                None => {
                    let shape = b.prim("Shape", &[c.inputs[0]], vec![]);
                    let items: Vec<GNode> = (2..2 + kind.spatial())
                        .map(|k| b.tuple_get(shape, k))
                        .collect();
                    b.make_tuple(&items)
                }
            };
            b.prim(name, &[c.dout, size], attrs)
        }
        Given::InputSize => {
            let shape = b.prim("Shape", &[c.inputs[0]], vec![]);
            b.prim(name, &[c.dout, shape], attrs)
        }
    }
}

// ---------------------------------------------------------------------------
// Shape rules, kernels, gradients.

fn infer_backward(call: &InferCall, kind: Kind) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, gd) = dims_of(call, 0)?;
    if !dtype.is_float() {
        return Err(OpError::input(
            0,
            format!("`{op}` needs a float gradient, got {dtype}"),
        ));
    }
    let rank = kind.spatial() + 2;
    if let Some(gd) = &gd {
        if gd.len() != rank {
            return Err(OpError::input(
                0,
                format!("`{op}` needs a {rank}-D gradient, got {}", fmt_dims(gd)),
            ));
        }
    }
    let dims = match backward(kind).1 {
        Given::Input => return Ok(tensor_abs(dtype, dims_of(call, 1)?.1.unwrap_or_default())),
        Given::Size | Given::InputSize => {
            let want = if backward(kind).1 == Given::Size {
                kind.spatial()
            } else {
                rank
            };
            let Some(sizes) = sizes_abs(call, 1)? else {
                return Ok(unranked(dtype));
            };
            if sizes.len() != want {
                return Err(OpError::input(
                    1,
                    format!(
                        "`{op}`: `{}` must be {want} sizes of the resized input, got {}",
                        call.input_name(1),
                        sizes.len()
                    ),
                ));
            }
            // Sizes known only at run time: the gradient's batch and channels.
            let lead = |k: usize| gd.as_ref().and_then(|d| d.get(k).cloned());
            if want == rank {
                sizes_dims(call, 1, &sizes, &[lead(0), lead(1)])?
            } else {
                let mut dims = vec![
                    lead(0).unwrap_or(Dim::Unknown),
                    lead(1).unwrap_or(Dim::Unknown),
                ];
                dims.extend(sizes_dims(call, 1, &sizes, &[])?);
                dims
            }
        }
    };
    Ok(tensor_abs(dtype, dims))
}

/// The forward's attributes and input shape of a backward call on `dout`.
fn forward_of(c: &KernelCall, kind: Kind, dout: &[usize]) -> Result<(Attrs, Vec<usize>), OpError> {
    let op = backward(kind).0;
    let spatial: Vec<i64> = dout.iter().skip(2).map(|&d| d as i64).collect();
    let copy = |keep: &[&'static str]| pass(c.attrs, keep);
    let (mut attrs, shape) = match backward(kind).1 {
        Given::Input => (
            copy(&[
                "align_corners",
                "half_pixel_centers",
                "coordinate_transformation_mode",
            ]),
            c.tensor(1)?.shape().to_vec(),
        ),
        Given::Size => {
            let size = sizes_arg(c, 1, op)?;
            let mut shape: Vec<usize> = dout.iter().take(2).copied().collect();
            shape.extend(size);
            (copy(&["align_corners", "half_pixel_centers"]), shape)
        }
        Given::InputSize => (
            copy(&["output_size", "scales", "align_corners"]),
            sizes_arg(c, 1, op)?,
        ),
    };
    if !kind.name().starts_with("Upsample") {
        attrs.push(("size", ints(&spatial)));
    }
    Ok((Attrs::new(attrs), shape))
}

fn kernel_backward(c: &KernelCall, kind: Kind) -> Result<KValue, OpError> {
    let op = backward(kind).0;
    let dout = c.tensor(0)?;
    if dout.rank() != kind.spatial() + 2 {
        return Err(OpError::input(
            0,
            format!(
                "`{op}` needs a {}-D gradient, got {:?}",
                kind.spatial() + 2,
                dout.shape()
            ),
        ));
    }
    let (attrs, shape) = forward_of(c, kind, dout.shape())?;
    let (planes, sp, tables, out_shape) = plan(kind, &attrs, &shape)?;
    if dout.shape() != out_shape {
        return Err(OpError::input(
            0,
            format!(
                "`{op}`: the gradient has shape {:?}, `{}` of {shape:?} gives {out_shape:?}",
                dout.shape(),
                kind.name()
            ),
        ));
    }
    let dx = apply_transposed(&dout.to_f64_vec(), planes, sp, &tables);
    Ok(ktensor(dout.dtype(), shape, dx))
}

/// The gradient of a backward primitive: its forward resize of the
/// sensitivity (to the gradient's spatial size, which inference knows).
fn grad_backward(b: &mut dyn GradBuilder, c: &GradCall, kind: Kind) -> Vec<Option<GNode>> {
    let n = c.inputs.len();
    let mut grads = vec![None; n];
    let mut attrs: Vec<(&'static str, AttrValue)> = match backward(kind).1 {
        Given::InputSize => pass(c.attrs, &["output_size", "scales", "align_corners"]),
        _ => pass(
            c.attrs,
            &[
                "align_corners",
                "half_pixel_centers",
                "coordinate_transformation_mode",
            ],
        ),
    };
    if backward(kind).1 != Given::InputSize {
        // The forward's `size`: the gradient's spatial sizes, static (they
        // are the resize's own `size`) wherever its rank is known.
        let Some(size) = c.input_values.first().and_then(|v| known_dims(v, 2)) else {
            return grads;
        };
        attrs.push(("size", ints(&size)));
    }
    grads[0] = Some(b.prim(kind.name(), &[c.dout], attrs));
    grads
}

// ---------------------------------------------------------------------------
// The table.

macro_rules! back_op {
    ($name:literal, $kind:expr, $doc:literal, $schema:expr $(,)?) => {
        OpDef {
            name: $name,
            category: Category::NeuralNetwork,
            doc: $doc,
            schema: $schema,
            variadic: false,
            output: OutputDef::Single,
            infer: |c| infer_backward(c, $kind),
            grad: Some(|b, c| grad_backward(b, c, $kind)),
            kernel: Some(|c| kernel_backward(c, $kind)),
            traits: Traits::NONE,
        }
    };
}

/// Why `size` and `input_size` are inputs.
const SIZES_INPUT: &str = "a tuple of sizes, which MindSpore's bprop gives as `Shape(x)` (or its spatial part) where they are known only at run time";

const GRADS: (&str, &str) = ("grads", "The gradient of the resize's result.");
const ALIGN: (&str, &str) = ("align_corners", "As the resize.");
const HALF: (&str, &str) = ("half_pixel_centers", "As the resize.");
const SIZE_OVERRIDES: &[Override] = &[
    Override::attr(
        "output_size",
        AttrType::IntTuple,
        Some(AttrDefault::None),
        why::TYPE,
    ),
    Override::input("input_size", SIZES_INPUT),
];
const UPSAMPLE_DOCS: [(&str, &str); 4] = [
    ("dy", "The gradient of the upsampling's result."),
    (
        "input_size",
        "The upsampled input's shape: a tuple of ints (`Shape(x)`).",
    ),
    ("output_size", "As the upsampling."),
    ("scales", "As the upsampling."),
];
const UPSAMPLE_LINEAR_DOCS: [(&str, &str); 5] = [
    UPSAMPLE_DOCS[0],
    UPSAMPLE_DOCS[1],
    UPSAMPLE_DOCS[2],
    UPSAMPLE_DOCS[3],
    ALIGN,
];

pub const OPS: &[OpDef] = &[
    back_op!(
        "ResizeNearestNeighborGrad",
        Kind::ResizeNearestNeighbor,
        "The gradient of `ResizeNearestNeighbor`: each element of `grads` added to the input position it was read from, onto the input's spatial `size`. As MindSpore's CPU kernel, `half_pixel_centers` has no effect.",
        Schema::ms(
            &[
                Override::input("grads", "a tensor, which MindSpore's table types as a bool"),
                Override::input("size", SIZES_INPUT),
            ],
            &[GRADS, ("size", "The input's `(height, width)`: a tuple of ints (of `Shape(x)`)."), ALIGN, HALF],
        ),
    ),
    back_op!(
        "ResizeNearestNeighborV2Grad",
        Kind::ResizeNearestNeighborV2,
        "The gradient of `ResizeNearestNeighborV2`: each element of `grads` added to the input position it was read from, onto the input's spatial `size`.",
        Schema::ms(
            &[Override::input("size", SIZES_INPUT)],
            &[GRADS, ("size", "The input's `(height, width)`: a tuple of ints (of `Shape(x)`)."), ALIGN, HALF],
        ),
    ),
    back_op!(
        "ResizeBilinearGrad",
        Kind::ResizeBilinearV2,
        "The gradient of `ResizeBilinearV2` (and `ResizeBilinear`): `grads` spread back onto `image`'s shape by the bilinear weights.",
        Schema::ms(&[], &[GRADS, ("image", "The resized input, for its shape."), ALIGN, HALF]),
    ),
    back_op!(
        "ResizeBicubicGrad",
        Kind::ResizeBicubic,
        "The gradient of `ResizeBicubic`: `grads` spread back onto `image`'s shape by the bicubic weights.",
        Schema::ms(&[], &[GRADS, ("image", "The resized input, for its shape."), ALIGN, HALF]),
    ),
    back_op!(
        "ResizeLinear1DGrad",
        Kind::ResizeLinear1D,
        "The gradient of `ResizeLinear1D`: `grads` spread back onto `x`'s shape by the linear weights.",
        Schema::ms(
            &[Override::attr(
                "coordinate_transformation_mode",
                AttrType::Str(&["align_corners", "half_pixel"]),
                Some(AttrDefault::Str("align_corners")),
                why::STRINGS,
            )],
            &[
                GRADS,
                ("x", "The resized input, for its shape."),
                ("coordinate_transformation_mode", "As the resize."),
            ],
        ),
    ),
    back_op!(
        "UpsampleNearest1DGrad",
        Kind::UpsampleNearest1D,
        "The gradient of `UpsampleNearest1D`: each element of `dy` added to the input position it was read from.",
        Schema::ms(SIZE_OVERRIDES, &UPSAMPLE_DOCS),
    ),
    back_op!(
        "UpsampleNearest2DGrad",
        Kind::UpsampleNearest2D,
        "The gradient of `UpsampleNearest2D`: each element of `dy` added to the input position it was read from.",
        Schema::ms(SIZE_OVERRIDES, &UPSAMPLE_DOCS),
    ),
    back_op!(
        "UpsampleNearest3DGrad",
        Kind::UpsampleNearest3D,
        "The gradient of `UpsampleNearest3D`: each element of `dy` added to the input position it was read from.",
        Schema::ms(SIZE_OVERRIDES, &UPSAMPLE_DOCS),
    ),
    back_op!(
        "UpsampleLinear1DGrad",
        Kind::UpsampleLinear1D,
        "The gradient of `UpsampleLinear1D`: `dy` spread back onto `input_size` by the linear weights.",
        Schema::ms(
            &[
                Override::attr("output_size", AttrType::IntTuple, Some(AttrDefault::None), why::TYPE),
                Override::input("input_size", SIZES_INPUT),
                Override::attr("scales", AttrType::Floats, Some(AttrDefault::None), why::TYPE),
            ],
            &UPSAMPLE_LINEAR_DOCS,
        ),
    ),
    back_op!(
        "UpsampleBilinear2DGrad",
        Kind::UpsampleBilinear2D,
        "The gradient of `UpsampleBilinear2D`: `dy` spread back onto `input_size` by the bilinear weights.",
        Schema::ms(SIZE_OVERRIDES, &UPSAMPLE_LINEAR_DOCS),
    ),
    back_op!(
        "UpsampleTrilinear3DGrad",
        Kind::UpsampleTrilinear3D,
        "The gradient of `UpsampleTrilinear3D`: `dy` spread back onto `input_size` by the trilinear weights.",
        Schema::ms(SIZE_OVERRIDES, &UPSAMPLE_LINEAR_DOCS),
    ),
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let b = AttrValue::Bool;
    let s = |v: &str| AttrValue::Str(v.to_string());
    let f = |v: &[f64]| AttrValue::Tuple(v.iter().map(|&x| AttrValue::float(x)).collect());
    let g = |shape: &[usize], seed: u64| random_f64(shape, seed, -1.0, 1.0);
    let sizes = |v: &[i64]| {
        KValue::Tuple(
            v.iter()
                .map(|&d| crate::eager::ints(ir::DType::I64, &[], &[d]))
                .collect(),
        )
    };
    vec![
        Sample::new(
            "ResizeNearestNeighborGrad",
            vec![g(&[1, 2, 5, 7], 530), sizes(&[3, 4])],
        ),
        Sample::new(
            "ResizeNearestNeighborGrad",
            vec![g(&[1, 2, 3, 5], 531), sizes(&[4, 3])],
        )
        .attr("align_corners", b(true)),
        Sample::new(
            "ResizeNearestNeighborV2Grad",
            vec![g(&[1, 2, 5, 7], 532), sizes(&[3, 4])],
        )
        .attr("half_pixel_centers", b(true)),
        Sample::new(
            "ResizeBilinearGrad",
            vec![g(&[1, 2, 5, 7], 533), g(&[1, 2, 3, 4], 534)],
        ),
        Sample::new(
            "ResizeBilinearGrad",
            vec![g(&[1, 1, 5, 6], 535), g(&[1, 1, 3, 4], 536)],
        )
        .attr("half_pixel_centers", b(true)),
        Sample::new(
            "ResizeBicubicGrad",
            vec![g(&[1, 1, 6, 7], 537), g(&[1, 1, 4, 5], 538)],
        ),
        Sample::new(
            "ResizeLinear1DGrad",
            vec![g(&[2, 2, 3], 539), g(&[2, 2, 5], 540)],
        )
        .attr("coordinate_transformation_mode", s("half_pixel")),
        Sample::new(
            "UpsampleNearest1DGrad",
            vec![g(&[2, 2, 8], 541), sizes(&[2, 2, 5])],
        )
        .attr("output_size", ints(&[8])),
        Sample::new(
            "UpsampleNearest2DGrad",
            vec![g(&[1, 2, 6, 6], 542), sizes(&[1, 2, 3, 4])],
        )
        .attr("scales", f(&[2.0, 1.5])),
        Sample::new(
            "UpsampleNearest3DGrad",
            vec![g(&[1, 1, 3, 5, 4], 543), sizes(&[1, 1, 2, 3, 2])],
        )
        .attr("output_size", ints(&[3, 5, 4])),
        Sample::new(
            "UpsampleLinear1DGrad",
            vec![g(&[2, 2, 8], 544), sizes(&[2, 2, 5])],
        )
        .attr("output_size", ints(&[8])),
        Sample::new(
            "UpsampleBilinear2DGrad",
            vec![g(&[1, 2, 5, 7], 545), sizes(&[1, 2, 3, 4])],
        )
        .attr("output_size", ints(&[5, 7]))
        .attr("align_corners", b(true)),
        Sample::new(
            "UpsampleTrilinear3DGrad",
            vec![g(&[1, 1, 3, 6, 3], 546), sizes(&[1, 1, 2, 3, 2])],
        )
        .attr("scales", f(&[1.5, 2.0, 1.5])),
    ]
}
