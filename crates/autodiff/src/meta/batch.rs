//! The batched form of `vmap` (primitive by primitive, by the batching
//! rules of `ops::batch`). Not made yet: every `vmap` runs per example.
use super::vmap::Examples;
use super::*;

/// The batched entry of `vmap(f)`, or `None` where the per-example form
/// must be used.
#[allow(clippy::too_many_arguments)]
pub(super) fn batched(
    _cx: &mut Cx,
    _item: &Item,
    _k: usize,
    _in_axes: &ir::BatchAxes,
    _out_axes: &ir::BatchAxes,
    _ex: &Examples,
    _an: &Analysis,
    _out: &AV,
) -> Result<Option<Derived>, AdError> {
    Ok(None)
}
