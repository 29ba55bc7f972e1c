//! The registry's kernels and shape rules, family by family: against
//! reference implementations (naive loops, direct summation), on odd shapes,
//! and with the errors they give. One test binary, one module per family
//! (values against MindSpore itself are in `ms_oracle`, gradients by finite
//! differences in `gradients`).

mod common;
mod elementwise;
mod linalg;
mod nn;
mod reduce;
mod scalars;
mod sequences;
mod shape;
