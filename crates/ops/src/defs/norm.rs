//! Normalisations beyond `LayerNorm` and `BatchNorm` (those are in `nn`):
//! over groups, instances and trailing axes (`group`), and `BatchNormExt`,
//! `RmsNorm`, `L2Normalize` and `LRN` (`batch_rms_lrn`).

pub mod batch_rms_lrn;
pub mod group;
