//! The held-out programs of the MindSpore oracle, run through `mirdsl run
//! --format json` by the fixture's own script and compared with MindSpore's
//! results.
//!
//! The fixture directory is `$MIRDSL_ORACLE_DIR`, else the shared fixtures next
//! to the repository. The test is skipped (with the reason printed) when the
//! fixtures, `python3` or NumPy are missing; `.ci/run` installs NumPy.

use std::path::{Path, PathBuf};
use std::process::Command;

fn oracle_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("MIRDSL_ORACLE_DIR") {
        return Some(PathBuf::from(d));
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        manifest.join("../../testdata/oracle"),
        manifest.join("../../../shared/fixtures/oracle"),
        PathBuf::from("/work/shared/fixtures/oracle"),
    ]
    .into_iter()
    .find(|d| d.join("run_cases.py").is_file())
}

#[test]
fn oracle_cases_match_mindspore() {
    let Some(dir) = oracle_dir() else {
        eprintln!("skipped: no oracle fixtures (set MIRDSL_ORACLE_DIR to the directory with run_cases.py)");
        return;
    };
    match Command::new("python3")
        .args(["-c", "import numpy"])
        .output()
    {
        Ok(o) if o.status.success() => {}
        Ok(_) => {
            eprintln!("skipped: NumPy is not installed (`pip install numpy`)");
            return;
        }
        Err(e) => {
            eprintln!("skipped: cannot run python3: {e}");
            return;
        }
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
