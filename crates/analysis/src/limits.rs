//! Sizes the checker compares against: a shape that cannot exist (its
//! element count or byte size overflows, `E0202`) and a tensor larger than
//! the memory budget of `mirdsl run` (`W0003`).

use std::sync::atomic::{AtomicUsize, Ordering};

use ir::{AbsVal, DType, Shape};

static BUDGET: AtomicUsize = AtomicUsize::new(0);

/// Sets the budget `W0003` compares against (`mirdsl check --max-memory`);
/// by default it is `mirdsl run`'s, [`tensor::limits::default_max_memory`].
pub fn set_memory_budget(bytes: usize) {
    BUDGET.store(bytes, Ordering::Relaxed);
}

/// The budget `W0003` compares against.
pub fn memory_budget() -> usize {
    match BUDGET.load(Ordering::Relaxed) {
        0 => tensor::limits::default_max_memory(),
        n => n,
    }
}

/// Bytes a tensor of this static shape takes when run (the host storage of
/// its dtype), when every dimension is known; saturating.
pub fn static_bytes(dtype: DType, shape: &Shape) -> Option<usize> {
    let dims = shape.as_known()?;
    Some(
        dims.iter()
            .map(|&d| d.max(0) as usize)
            .fold(dtype.storage().size_of(), usize::saturating_mul),
    )
}

/// The message of `E0202` for a value, when one of its tensors' shapes
/// overflows (or has a negative dimension, which only an overflow makes).
pub fn overflow_in(v: &AbsVal) -> Option<String> {
    match v {
        AbsVal::Tensor { dtype, shape } => {
            let negative = shape
                .dims()
                .is_some_and(|d| d.iter().any(|d| d.known().is_some_and(|n| n < 0)));
            if negative {
                Some(format!(
                    "the shape {shape} has a negative dimension: its arithmetic overflowed"
                ))
            } else if shape.overflows(*dtype) {
                Some(format!(
                    "a {dtype}{shape} tensor cannot exist: its element count or byte size overflows a 64-bit integer"
                ))
            } else {
                None
            }
        }
        AbsVal::Tuple(items) => items.iter().find_map(overflow_in),
        _ => None,
    }
}

/// The message of `W0003` for a value whose static size exceeds the budget.
pub fn over_budget(v: &AbsVal) -> Option<String> {
    if overflow_in(v).is_some() {
        return None; // an error already
    }
    let budget = memory_budget();
    let mut largest: Option<(usize, String)> = None;
    fn walk(v: &AbsVal, largest: &mut Option<(usize, String)>) {
        match v {
            AbsVal::Tensor { dtype, shape } => {
                if let Some(b) = static_bytes(*dtype, shape) {
                    if largest.as_ref().is_none_or(|(l, _)| b > *l) {
                        *largest = Some((b, format!("{dtype}{shape}")));
                    }
                }
            }
            AbsVal::Tuple(items) => items.iter().for_each(|i| walk(i, largest)),
            _ => {}
        }
    }
    walk(v, &mut largest);
    let (bytes, what) = largest?;
    (bytes > budget).then(|| over_budget_message(&what, bytes, budget))
}

pub fn over_budget_message(what: &str, bytes: usize, budget: usize) -> String {
    use tensor::limits::format_bytes;
    format!(
        "this {what} takes {} ({bytes} bytes), more than the memory budget of {}: `mirdsl run` will refuse to make it (`--max-memory` sets the budget)",
        format_bytes(bytes),
        format_bytes(budget)
    )
}
