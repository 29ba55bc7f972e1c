//! Every generated kernel compiles with NVRTC. Runs wherever NVRTC loads (no
//! GPU or driver needed): set MIRDSL_NVRTC_LIB to a libnvrtc.so.12, e.g. from
//! `pip install nvidia-cuda-nvrtc-cu12`; skipped with a printed reason otherwise
//! (a failure with `MIRDSL_REQUIRE_TOOLS=nvrtc`).

use test_support::Tool;

#[test]
fn every_unit_compiles_with_nvrtc() {
    if test_support::require(Tool::Nvrtc, gpu::probe::nvrtc()).is_none() {
        return;
    }
    let mut failures = Vec::new();
    let units = gpu::source::all_units();
    for unit in &units {
        match gpu::compile_unit(unit, Some("compute_80")) {
            Ok(ptx) => {
                let text = ptx.to_src();
                for k in &unit.kernels {
                    if !text.contains(&format!(".entry {k}(")) {
                        failures.push(format!("{}: no entry {k} in the PTX", unit.name));
                    }
                }
            }
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    eprintln!("{} units compiled", units.len());
}
