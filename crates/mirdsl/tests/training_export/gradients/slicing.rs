//! The gradients whose registry helpers export as a scatter-add into the
//! positions the forward took (`_StridedSliceGrad`, `_TileGrad`, `_GatherNdGrad`, `_IndexScatterAdd`, `_EmbeddingGrad`), a box
//! of the sensitivity (`_ConcatGrad`, `_PadGrad` of a constant padding, whose
//! forward `Pad` writes its tuple of tuples) or `Eye · dout` (`_TraceGrad`); `Slice`'s and `GatherD`'s
//! are MindSpore's `SliceGrad` and `GatherDGradV2`.

use super::{export_and_run_the_same, export_once_runs_the_same_for_every_size, Case};
use crate::floats;

#[test]
fn gradients_of_slicing_and_picking_export_and_run_the_same() {
    let cases = [
        "Slice(x, (0, 1), (2, 2))",
        "StridedSlice(x, (1, 0), (2, 3), (1, 2))",
        "Tile(x, (2, 1))",
        "Concat((Exp(x), x * 2.0, x), axis=0)",
        "GatherNd(x, [[1], [0], [1]])",
        "GatherD(x, 1, [[0, 2, 2], [1, 0, 0]])",
        "Sort(x)[0]",
        "TopK(x, 2)[0]",
        "ArgMaxWithValue(x, axis=1)[1]",
        "CumSum(Pad(x, paddings=((1, 0), (0, 2))), 1)",
        "x * Trace(x)",
        "Embedding([[1, 0], [1, 1]], x)",
    ];
    let cases: Vec<Case> = cases
        .into_iter()
        .map(|op| Case::new(op, vec![floats("x", &[2, 3], 30)]))
        .collect();
    export_and_run_the_same("slicing", &cases);
}

/// A reshape back across several symbolic sizes (ExpandDims' and Squeeze's
/// gradients under `[B, 2, H, W]`) is a `Squeeze` and `ExpandDims`, as one
/// `Reshape` can leave only one size to MindSpore (-1).
#[test]
fn reshapes_back_under_symbolic_sizes_export_once_for_every_size() {
    export_once_runs_the_same_for_every_size(
        "reshape-b",
        "f32[B, 2, H, W]",
        "  y = ExpandDims(x, 1)\n  return ReduceSum(Sin(y) * Cos(Squeeze(ExpandDims(x, 4), 4)))",
        &[&[1, 2, 3, 4], &[3, 2, 4, 1]],
    );
}

/// StridedSlice's gradient (`_StridedSliceGrad`, a scatter-add: MindSpore
/// 2.10's CPU StridedSliceGrad fails on a strided middle axis) under a
/// symbolic batch: one export serves every size.
#[test]
fn strided_slice_gradients_under_a_symbolic_batch_export_once_for_every_size() {
    export_once_runs_the_same_for_every_size(
        "strided-b",
        "f32[B, 4, 3]",
        "  y = StridedSlice(x, (0, 1), (0, 4), (1, 2), begin_mask=1, end_mask=1)\n  \
         return ReduceSum(Sin(y)) + ReduceSum(Cos(StridedSlice(x, (0, 0, 2), (1, 4, 3), (1, 1, 1), shrink_axis_mask=1)))",
        &[&[1, 4, 3], &[3, 4, 3]],
    );
}
