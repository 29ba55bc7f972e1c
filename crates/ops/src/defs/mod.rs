//! The primitives, one file per family. Adding a primitive: add its `OpDef` to
//! its family's `OPS` list, with schema, shape rule, gradient rule and kernel.

pub mod activations;
pub mod backward;
pub mod comm;
pub mod elementwise;
pub mod elementwise_ext;
pub mod elementwise_ext_clamp;
pub mod elementwise_ext_math;
pub mod internal;
pub mod internal_nn;
pub mod linalg;
pub mod linalg_ext;
pub mod linalg_ext_einsum;
pub mod linalg_ext_matrix;
pub mod loss;
pub mod makers;
pub mod nn;
pub mod nn_conv;
pub mod nn_conv3d;
mod nn_conv3d_gemm;
pub mod nn_conv_ext;
mod nn_conv_gemm;
pub mod nn_ext;
pub mod nn_misc_ext;
pub mod norm_ext;
pub mod norm_misc_ext;
pub mod opaque;
pub mod pool_ext;
mod pool_window;
pub mod reduce;
pub mod reduce_ext;
pub mod reduce_ext_index;
pub mod reduce_ext_sort;
pub mod reduce_ext_stats;
pub mod resize;
pub mod rnn;
pub mod scalar;
pub mod scalar_convert;
pub mod scalar_seq;
pub mod shape;
pub mod shape_ext;
pub mod shape_ext_index;
pub mod shape_ext_layout;
pub mod shape_ext_make;
pub mod shape_ext_pad;
pub mod shape_ext_segment;
pub mod shape_ext_slice;
pub mod state;
pub mod structure;

use crate::OpDef;

pub fn all() -> impl Iterator<Item = &'static OpDef> {
    [
        elementwise::OPS,
        elementwise_ext::OPS,
        elementwise_ext_clamp::OPS,
        elementwise_ext_math::OPS,
        activations::OPS,
        linalg::OPS,
        linalg_ext::OPS,
        linalg_ext_einsum::OPS,
        linalg_ext_matrix::OPS,
        reduce::OPS,
        reduce_ext::OPS,
        reduce_ext_index::OPS,
        reduce_ext_sort::OPS,
        reduce_ext_stats::OPS,
        scalar::OPS,
        scalar_seq::OPS,
        scalar_convert::OPS,
        shape::OPS,
        shape_ext::OPS,
        shape_ext_slice::OPS,
        shape_ext_pad::OPS,
        shape_ext_layout::OPS,
        shape_ext_index::OPS,
        shape_ext_segment::OPS,
        shape_ext_make::OPS,
        nn::OPS,
        nn_conv::OPS,
        nn_conv_ext::OPS,
        nn_conv3d::OPS,
        pool_ext::OPS,
        resize::OPS,
        norm_ext::OPS,
        norm_misc_ext::OPS,
        loss::OPS,
        rnn::OPS,
        nn_misc_ext::OPS,
        structure::OPS,
        makers::OPS,
        state::OPS,
        backward::OPS,
        backward::norm::OPS,
        backward::activation::OPS,
        backward::pool::OPS,
        backward::conv::OPS,
        comm::OPS,
        opaque::OPS,
        internal::OPS,
        internal_nn::OPS,
    ]
    .into_iter()
    .flatten()
}

/// Sample calls of every family's primitives (see [`crate::eager::Sample`]).
pub fn samples() -> Vec<crate::eager::Sample> {
    let mut all = Vec::new();
    all.extend(elementwise::samples());
    all.extend(elementwise_ext::samples());
    all.extend(elementwise_ext_clamp::samples());
    all.extend(elementwise_ext_math::samples());
    all.extend(activations::samples());
    all.extend(linalg::samples());
    all.extend(linalg_ext::samples());
    all.extend(linalg_ext_einsum::samples());
    all.extend(linalg_ext_matrix::samples());
    all.extend(reduce::samples());
    all.extend(reduce_ext::samples());
    all.extend(reduce_ext_index::samples());
    all.extend(reduce_ext_sort::samples());
    all.extend(reduce_ext_stats::samples());
    all.extend(scalar::samples());
    all.extend(scalar_seq::samples());
    all.extend(scalar_convert::samples());
    all.extend(shape::samples());
    all.extend(shape_ext::samples());
    all.extend(shape_ext_slice::samples());
    all.extend(shape_ext_pad::samples());
    all.extend(shape_ext_layout::samples());
    all.extend(shape_ext_index::samples());
    all.extend(shape_ext_segment::samples());
    all.extend(shape_ext_make::samples());
    all.extend(nn::samples());
    all.extend(nn_conv::samples());
    all.extend(nn_conv_ext::samples());
    all.extend(nn_conv3d::samples());
    all.extend(pool_ext::samples());
    all.extend(resize::samples());
    all.extend(norm_ext::samples());
    all.extend(norm_misc_ext::samples());
    all.extend(loss::samples());
    all.extend(rnn::samples());
    all.extend(nn_misc_ext::samples());
    all.extend(makers::samples());
    all.extend(internal::samples());
    all.extend(backward::samples());
    all.extend(backward::norm::samples());
    all.extend(backward::activation::samples());
    all.extend(backward::pool::samples());
    all.extend(backward::conv::samples());
    all.extend(comm::samples());
    all.extend(internal_nn::samples());
    all
}
