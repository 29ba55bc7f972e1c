//! The gradients of the resizes (MindSpore's `Resize*Grad` and
//! `Upsample*Grad`), of the mirrored paddings (`MirrorPadGrad`, `PadV3Grad`,
//! `ReflectionPad*Grad`, `ReplicationPad*Grad`), of PixelShuffle (its
//! inverse as `Reshape`/`Transpose`) and of Take (a scatter-add at the taken
//! flat positions), and of the constant paddings that crop (a `PadV3` by the
//! negated paddings).

use super::{export_and_run_the_same, export_once_runs_the_same_for_every_size, Case};
use crate::floats;

const NO_UPSAMPLE_LINEAR: &str =
    "MindSpore 2.10's CPU has no UpsampleLinear1D/UpsampleBilinear2D kernels";

#[test]
fn gradients_of_resizes_export_and_run_the_same() {
    let image = || vec![floats("x", &[1, 2, 3, 4], 41)];
    let line = || vec![floats("x", &[2, 2, 5], 42)];
    let volume = || vec![floats("x", &[1, 1, 2, 3, 2], 43)];
    let cases = vec![
        Case::new("ResizeNearestNeighbor(x, size=(5, 7))", image()),
        Case::new(
            "ResizeNearestNeighbor(x, size=(5, 3), align_corners=true)",
            image(),
        ),
        Case::new(
            "ResizeNearestNeighborV2(x, size=(5, 7), half_pixel_centers=true)",
            image(),
        ),
        Case::new("ResizeBilinearV2(x, size=(5, 7))", image()),
        Case::new(
            "ResizeBilinearV2(x, size=(5, 3), align_corners=true)",
            image(),
        ),
        Case::new(
            "ResizeBilinearV2(x, size=(5, 6), half_pixel_centers=true)",
            image(),
        ),
        Case::new("ResizeBicubic(x, size=(6, 7))", image()),
        Case::new(
            "ResizeBicubic(x, size=(6, 3), half_pixel_centers=true)",
            image(),
        ),
        Case::new("ResizeLinear1D(x, size=(8,))", line()),
        Case::new(
            "ResizeLinear1D(x, size=(3,), coordinate_transformation_mode=\"half_pixel\")",
            line(),
        ),
        Case::new("UpsampleNearest1D(x, output_size=(8,))", line()),
        Case::new("UpsampleNearest2D(x, scales=(2.0, 1.5))", image()),
        Case::new("UpsampleNearest3D(x, output_size=(3, 5, 4))", volume()),
        Case::new("UpsampleLinear1D(x, output_size=(8,))", line())
            .not_on_mindspore_cpu(NO_UPSAMPLE_LINEAR),
        Case::new(
            "UpsampleBilinear2D(x, output_size=(5, 7), align_corners=true)",
            image(),
        )
        .not_on_mindspore_cpu(NO_UPSAMPLE_LINEAR),
        Case::new("UpsampleTrilinear3D(x, scales=(1.5, 2.0, 1.5))", volume()),
    ];
    export_and_run_the_same("resizes", &cases);
}

const NO_PAD_ND: &str = "MindSpore 2.10's CPU has no ReflectionPad/ReplicationPad kernels";

#[test]
fn gradients_of_mirrored_paddings_export_and_run_the_same() {
    let matrix = || vec![floats("x", &[3, 4], 44)];
    let line = || vec![floats("x", &[1, 2, 4], 45)];
    let image = || vec![floats("x", &[1, 2, 3, 4], 46)];
    let cases = vec![
        Case::new("MirrorPad(x, paddings=((1, 2), (2, 1)))", matrix()),
        Case::new(
            "MirrorPad(x, paddings=((2, 1), (3, 4)), mode=\"SYMMETRIC\")",
            matrix(),
        ),
        Case::new("PadV3(x, paddings=(3, 1), constant_value=0.0, mode=\"reflect\")", line()),
        Case::new("PadV3(x, paddings=(1, 2, 2, 0), constant_value=0.0, mode=\"edge\")", image()),
        Case::new(
            "PadV3(x, paddings=(2, 1, 0, 2), constant_value=0.0, mode=\"reflect\", paddings_contiguous=false)",
            image(),
        ),
        Case::new("PadV3(x, paddings=(2, 3), constant_value=0.0, mode=\"circular\")", line()),
        Case::new("ReflectionPad1D(x, padding=(3, 1))", line()).not_on_mindspore_cpu(NO_PAD_ND),
        Case::new("ReflectionPad2D(x, padding=(1, 2, 2, 0))", image())
            .not_on_mindspore_cpu(NO_PAD_ND),
        Case::new("ReplicationPad1D(x, padding=(2, 4))", line()).not_on_mindspore_cpu(NO_PAD_ND),
        Case::new("ReplicationPad2D(x, padding=(0, 2, 1, 3))", image())
            .not_on_mindspore_cpu(NO_PAD_ND),
        Case::new(
            "ReplicationPad3D(x, padding=(1, 0, 0, 1, 2, 1))",
            vec![floats("x", &[1, 1, 2, 2, 3], 47)],
        )
        .not_on_mindspore_cpu(NO_PAD_ND),
    ];
    export_and_run_the_same("mirrored-paddings", &cases);
}

const NO_PIXEL_SHUFFLE: &str = "MindSpore 2.10's CPU has no PixelShuffle kernel";

#[test]
fn gradients_of_pixel_shuffle_take_and_zero_padding_export_and_run_the_same() {
    let cases = vec![
        Case::new("PixelShuffle(x, 2)", vec![floats("x", &[1, 8, 2, 3], 48)])
            .not_on_mindspore_cpu(NO_PIXEL_SHUFFLE),
        Case::new("PixelShuffle(x, 3)", vec![floats("x", &[2, 9, 2, 1], 49)])
            .not_on_mindspore_cpu(NO_PIXEL_SHUFFLE),
        Case::new(
            "Take(x, [[1, -2], [5, 1], [0, -12]])",
            vec![floats("x", &[3, 4], 50)],
        )
        .not_on_mindspore_cpu("MindSpore 2.10's CPU has no Take kernel"),
        // A constant padding that crops: PadV3 by the negated paddings.
        Case::new(
            "PadV3(x, paddings=(1, -1, 0, 2), constant_value=0.5)",
            vec![floats("x", &[3, 4], 52)],
        ),
        Case::new(
            "ConstantPadND(x, padding=(1, 1, -1, 0), value=2.0)",
            vec![floats("x", &[3, 4], 53)],
        )
        .not_on_mindspore_cpu("MindSpore 2.10's CPU has no ConstantPadND kernel"),
        // `_PadGrad`'s own gradient is the zero padding `_Pad`.
        Case::new(
            "_PadGrad(x, Slice(x, (0, 1), (2, 3)), paddings=(1, 1, 0, 1))",
            vec![floats("x", &[3, 5], 51)],
        ),
    ];
    export_and_run_the_same("layout", &cases);
}

/// The sizes a resize's backward primitive takes are read from `Shape(x)`
/// where they are symbolic, as MindSpore's bprops do: one export serves every
/// batch and image size.
#[test]
fn resize_gradients_under_symbolic_sizes_export_once_for_every_size() {
    export_once_runs_the_same_for_every_size(
        "resize-b",
        "f32[B, 2, H, W]",
        "  a = ReduceSum(Sin(UpsampleNearest2D(x, output_size=(5, 7))) * Cos(ResizeNearestNeighbor(x, size=(5, 7))))\n\
         \x20 b = ReduceSum(Sin(ResizeNearestNeighborV2(x, size=(6, 4), half_pixel_centers=true)))\n\
         \x20 return a + b",
        &[&[1, 2, 3, 4], &[3, 2, 4, 3]],
    );
}
