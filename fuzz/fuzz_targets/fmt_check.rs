//! `run_fmt` of `crates/mirdsl/tests/common/fuzz_targets.rs` (the same target the
//! stable mutation loop in `cargo test` runs), under libFuzzer.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/mirdsl/tests/common/fuzz_targets.rs"]
mod targets;

fuzz_target!(|data: &[u8]| {
    targets::run_fmt(data);
});
