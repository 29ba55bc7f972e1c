//! MindSpore's external-data layout, both ways: a model MindSpore 2.10
//! exported as `NAME_graph.mindir` + `NAME_variables/data_0`
//! (`data/external`, made by `testdata/scale/gen.py`) imports and runs to
//! MindSpore's output, and exported back over the limit
//! (`MIRDSL_EXTERNAL_DATA_ABOVE` lowers MindSpore's 1 GiB) gives the same
//! data file, byte for byte. With `MIRDSL_MINDSPORE_PYTHON`, `mindspore.load`
//! runs the export.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_mirdsl");

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/external")
}

fn mirdsl(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(BIN);
    c.current_dir(dir).args(args).env("NO_COLOR", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("mirdsl runs")
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The largest difference relative to the largest magnitude of `want`.
fn rel_err(got: &tensor::Tensor, want: &tensor::Tensor) -> f64 {
    assert_eq!(got.shape(), want.shape());
    let (g, w) = (got.to_f64_vec(), want.to_f64_vec());
    let scale = w.iter().fold(0f64, |m, x| m.max(x.abs()));
    g.iter()
        .zip(&w)
        .fold(0f64, |m, (a, b)| m.max((a - b).abs()))
        / scale
}

#[test]
fn imports_runs_and_exports_back_the_external_data_layout() {
    let d = std::env::temp_dir().join(format!("mirdsl-extdata-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let model = data().join("ext_tiny_graph.mindir");
    ok(&mirdsl(
        &d,
        &["import", model.to_str().unwrap(), "-o", "m.mir"],
        &[],
    ));
    let x = data().join("ext_tiny.x.npy");
    let x_arg = format!("x={}", x.display());
    ok(&mirdsl(
        &d,
        &["run", "m.mir", "--arg", &x_arg, "--save-weights", "w.ckpt"],
        &[],
    ));
    let out = ok(&mirdsl(
        &d,
        &["run", "m.mir", "--arg", &x_arg, "--format", "json"],
        &[],
    ));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let shape: Vec<usize> = v["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let values: Vec<f32> = v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect();
    let got = tensor::Tensor::from_f32(shape, values).unwrap();
    let want = tensor::npy::read(&std::fs::read(data().join("ext_tiny.out.npy")).unwrap()).unwrap();
    let e = rel_err(&got, &want);
    assert!(e < 1e-5, "relative error {e}");

    // Export back: over the (lowered) limit, MindSpore's layout.
    let o = mirdsl(
        &d,
        &["export", "m.mir", "-o", "back.mindir"],
        &[("MIRDSL_EXTERNAL_DATA_ABOVE", "1000")],
    );
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stderr).contains("external-data layout"));
    assert!(d.join("back_graph.mindir").is_file() && !d.join("back.mindir").exists());
    assert_eq!(
        std::fs::read(d.join("back_variables/data_0")).unwrap(),
        std::fs::read(data().join("ext_tiny_variables/data_0")).unwrap(),
        "the data file is MindSpore's, byte for byte"
    );
    // Under the limit, one file as before.
    ok(&mirdsl(&d, &["export", "m.mir", "-o", "one.mindir"], &[]));
    assert!(d.join("one.mindir").is_file());
    // The export imports back.
    ok(&mirdsl(
        &d,
        &["import", "back_graph.mindir", "-o", "again.mir"],
        &[],
    ));

    if let Some(python) = test_support::require(
        test_support::Tool::MindSpore,
        test_support::mindspore_python(),
    ) {
        let script = format!(
            "import numpy as np, mindspore as ms\nfrom mindspore import nn, Tensor\ng = ms.load({:?})\nout = nn.GraphCell(g)(Tensor(np.load({:?}))).asnumpy()\nref = np.load({:?})\nprint(float(np.abs(out - ref).max() / np.abs(ref).max()))\n",
            d.join("back_graph.mindir").display().to_string(),
            x.display().to_string(),
            data().join("ext_tiny.out.npy").display().to_string()
        );
        let o = Command::new(python).arg("-c").arg(script).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let e: f64 = String::from_utf8_lossy(&o.stdout).trim().parse().unwrap();
        assert!(
            e < 1e-6,
            "MindSpore's run of the export: relative error {e}"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_missing_or_escaping_data_file_is_a_clear_error() {
    let d = std::env::temp_dir().join(format!("mirdsl-extdata-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::copy(
        data().join("ext_tiny_graph.mindir"),
        d.join("ext_tiny_graph.mindir"),
    )
    .unwrap();
    let o = mirdsl(&d, &["import", "ext_tiny_graph.mindir", "-o", "m.mir"], &[]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("ext_tiny_variables/data_0") && e.contains("cannot be read"),
        "{e}"
    );
    // A data file too short for the offsets it is given.
    std::fs::create_dir_all(d.join("ext_tiny_variables")).unwrap();
    std::fs::write(d.join("ext_tiny_variables/data_0"), [1u8; 100]).unwrap();
    let o = mirdsl(&d, &["import", "ext_tiny_graph.mindir", "-o", "m.mir"], &[]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("lies outside"), "{e}");
    let _ = std::fs::remove_dir_all(&d);
}
