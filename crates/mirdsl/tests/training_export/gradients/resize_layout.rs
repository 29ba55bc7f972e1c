//! The gradients of the resizes (MindSpore's `Resize*Grad` and
//! `Upsample*Grad`), of the mirrored paddings (`MirrorPadGrad`, `PadV3Grad`,
//! `ReflectionPad*Grad`, `ReplicationPad*Grad`), of PixelShuffle (its
//! inverse as `Reshape`/`Transpose`) and of Take (a scatter-add at the taken
//! flat positions).

use super::{export_and_run_the_same, Case};
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
