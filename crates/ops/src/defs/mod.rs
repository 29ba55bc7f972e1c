//! The primitives, one file per family. Adding a primitive: add its `OpDef` to
//! its family's `OPS` list, with schema, shape rule, gradient rule and kernel.

pub mod activations;
pub mod backward;
pub mod comm;
pub mod conv;
pub mod elementwise;
pub mod internal;
pub mod internal_nn;
pub mod linalg;
pub mod loss;
pub mod makers;
pub mod nn;
pub mod norm;
pub mod opaque;
pub mod pool;
pub mod reduce;
pub mod resize;
pub mod rnn;
pub mod scalar;
pub mod scalar_convert;
pub mod scalar_seq;
pub mod shape;
pub mod state;
pub mod structure;

use crate::OpDef;

pub fn all() -> impl Iterator<Item = &'static OpDef> {
    [
        elementwise::OPS,
        elementwise::binary::OPS,
        elementwise::clamp::OPS,
        elementwise::math::OPS,
        activations::OPS,
        linalg::OPS,
        linalg::products::OPS,
        linalg::einsum::OPS,
        linalg::matrix::OPS,
        reduce::OPS,
        reduce::aggregate::OPS,
        reduce::index::OPS,
        reduce::sort::OPS,
        reduce::stats::OPS,
        scalar::OPS,
        scalar_seq::OPS,
        scalar_convert::OPS,
        shape::OPS,
        shape::split_stack::OPS,
        shape::slice::OPS,
        shape::pad::OPS,
        shape::layout::OPS,
        shape::gather_scatter::OPS,
        shape::segment::OPS,
        shape::make::OPS,
        nn::OPS,
        conv::OPS,
        conv::transpose::OPS,
        conv::conv3d::OPS,
        pool::OPS,
        pool::grads::OPS,
        resize::OPS,
        norm::group::OPS,
        norm::batch_rms_lrn::OPS,
        loss::OPS,
        rnn::OPS,
        nn::layers::OPS,
        structure::OPS,
        makers::OPS,
        state::OPS,
        backward::OPS,
        backward::norm::OPS,
        backward::activation::OPS,
        backward::pool::OPS,
        backward::conv::OPS,
        backward::resize::OPS,
        backward::pad::OPS,
        backward::slices::OPS,
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
    all.extend(elementwise::binary::samples());
    all.extend(elementwise::clamp::samples());
    all.extend(elementwise::math::samples());
    all.extend(activations::samples());
    all.extend(linalg::samples());
    all.extend(linalg::products::samples());
    all.extend(linalg::einsum::samples());
    all.extend(linalg::matrix::samples());
    all.extend(reduce::samples());
    all.extend(reduce::aggregate::samples());
    all.extend(reduce::index::samples());
    all.extend(reduce::sort::samples());
    all.extend(reduce::stats::samples());
    all.extend(scalar::samples());
    all.extend(scalar_seq::samples());
    all.extend(scalar_convert::samples());
    all.extend(shape::samples());
    all.extend(shape::split_stack::samples());
    all.extend(shape::slice::samples());
    all.extend(shape::pad::samples());
    all.extend(shape::layout::samples());
    all.extend(shape::gather_scatter::samples());
    all.extend(shape::segment::samples());
    all.extend(shape::make::samples());
    all.extend(nn::samples());
    all.extend(conv::samples());
    all.extend(conv::transpose::samples());
    all.extend(conv::conv3d::samples());
    all.extend(pool::samples());
    all.extend(pool::grads::samples());
    all.extend(resize::samples());
    all.extend(norm::group::samples());
    all.extend(norm::batch_rms_lrn::samples());
    all.extend(loss::samples());
    all.extend(rnn::samples());
    all.extend(nn::layers::samples());
    all.extend(makers::samples());
    all.extend(internal::samples());
    all.extend(backward::samples());
    all.extend(backward::norm::samples());
    all.extend(backward::activation::samples());
    all.extend(backward::pool::samples());
    all.extend(backward::conv::samples());
    all.extend(backward::resize::samples());
    all.extend(backward::pad::samples());
    all.extend(backward::slices::samples());
    all.extend(comm::samples());
    all.extend(internal_nn::samples());
    all
}
