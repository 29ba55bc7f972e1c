//! The held-out programs of the MindSpore oracle, run through `mirdsl run
//! --format json` by the fixture's own script and compared with MindSpore's
//! results.
//!
//! The fixture directory is `$MIRDSL_ORACLE_DIR`, else the shared fixtures next
//! to the repository. The test is skipped (with the reason printed) when the
//! fixtures, `python3` or NumPy are missing, and fails then with
//! `MIRDSL_REQUIRE_TOOLS=1` (or `oracle`, `numpy`); `.ci/run` installs NumPy.

use std::process::Command;

use test_support::Tool;

#[test]
fn oracle_cases_match_mindspore() {
    let Some(dir) = test_support::require(Tool::Oracle, test_support::oracle_dir()) else {
        return;
    };
    if test_support::require(Tool::NumPy, test_support::numpy()).is_none() {
        return;
    }
    let out = Command::new("python3")
        .arg(dir.join("run_cases.py"))
        .arg(env!("CARGO_BIN_EXE_mirdsl"))
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "some oracle cases do not match:\n{stdout}"
    );
}
