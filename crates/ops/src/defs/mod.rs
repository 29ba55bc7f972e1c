//! The primitives, one file per family. Adding a primitive: add its `OpDef` to
//! its family's `OPS` list, with schema, shape rule, gradient rule and kernel.

pub mod elementwise;
pub mod internal;
pub mod internal_nn;
pub mod linalg;
pub mod loss;
pub mod makers;
pub mod nn;
pub mod nn_conv;
pub mod nn_conv3d;
mod nn_conv3d_gemm;
pub mod nn_conv_ext;
pub mod nn_ext;
pub mod nn_misc_ext;
pub mod norm_ext;
pub mod norm_misc_ext;
pub mod pool_ext;
mod pool_window;
pub mod reduce;
pub mod resize;
pub mod rnn;
pub mod shape;
pub mod structure;

use crate::OpDef;

pub fn all() -> impl Iterator<Item = &'static OpDef> {
    [
        elementwise::OPS,
        linalg::OPS,
        reduce::OPS,
        shape::OPS,
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
    all.extend(linalg::samples());
    all.extend(reduce::samples());
    all.extend(shape::samples());
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
    all.extend(internal_nn::samples());
    all
}
