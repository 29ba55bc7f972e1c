//! `run_npy` of `test_support::fuzz` (`crates/test-support/src/fuzz.rs`; the same
//! target the stable mutation loop in `cargo test` runs), under libFuzzer.

#![no_main]

use libfuzzer_sys::fuzz_target;

use test_support::fuzz as targets;

fuzz_target!(|data: &[u8]| {
    targets::run_npy(data);
});
