//! Segment sums and maxima (`_SegmentGather`: MindSpore's
//! `_gather_drop_negatives`), the embeddings' table gradients with an
//! offset, a padding row or frequency scaling (UnsortedSegmentSum), and the
//! second order of the pickers (`_IndexGather`: GatherD).

use super::{export_and_run_the_same, Case};
use crate::floats;

#[test]
fn segment_and_lookup_gradients_export_and_run_the_same() {
    let x = || vec![floats("x", &[4, 3], 50)];
    export_and_run_the_same(
        "segment",
        &[
            Case::new("UnsortedSegmentSum(x, [0, -1, 2, 0], 3)", x()),
            Case::new("UnsortedSegmentSum(x, [[1, 0, 1], [0, -1, 1], [1, 1, 0], [0, 0, 0]], 2)", x()),
            Case::new("UnsortedSegmentMax(x, [0, 1, 0, 1], 2)", x()),
            Case::new("UnsortedSegmentMin(x, [1, 1, -1, 0], 2)", x()),
            Case::new("Embedding([[1, 0], [3, 1]], x, padding_idx=1)", x()),
            Case::new("Embedding([[1, 0], [1, 1]], x, scale_grad_by_freq=true)", x()),
            Case::new("EmbeddingLookup(x, [[1, 3], [2, 6]], 1)", x()),
            Case::new("grad(sorted)(x)", x())
                .defining("graph sorted(x: f32[4, 3]) -> f32[] {\n  return ReduceSum(Sin(Sort(x)[0]) * x)\n}\n"),
            Case::new("grad(top)(x)", x())
                .defining("graph top(x: f32[4, 3]) -> f32[] {\n  return ReduceSum(Exp(TopK(x, 2)[0]))\n}\n"),
        ],
    );
}
