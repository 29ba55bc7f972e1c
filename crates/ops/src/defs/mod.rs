//! The primitives, one file per family. Adding a primitive: add its `OpDef` to
//! its family's `OPS` list, with schema, shape rule, gradient rule and kernel.

pub mod elementwise;
pub mod internal;
pub mod internal_nn;
pub mod linalg;
pub mod makers;
pub mod nn;
pub mod nn_conv;
pub mod reduce;
pub mod shape;
pub mod shape_ext;
pub mod shape_ext_index;
pub mod shape_ext_layout;
pub mod shape_ext_make;
pub mod shape_ext_pad;
pub mod shape_ext_segment;
pub mod shape_ext_slice;
pub mod structure;

use crate::OpDef;

pub fn all() -> impl Iterator<Item = &'static OpDef> {
    [
        elementwise::OPS,
        linalg::OPS,
        reduce::OPS,
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
    all.extend(shape_ext::samples());
    all.extend(shape_ext_slice::samples());
    all.extend(shape_ext_pad::samples());
    all.extend(shape_ext_layout::samples());
    all.extend(shape_ext_index::samples());
    all.extend(shape_ext_segment::samples());
    all.extend(shape_ext_make::samples());
    all.extend(nn::samples());
    all.extend(nn_conv::samples());
    all.extend(makers::samples());
    all.extend(internal::samples());
    all.extend(internal_nn::samples());
    all
}
