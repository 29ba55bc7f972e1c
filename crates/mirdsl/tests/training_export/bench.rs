//! `bench run`'s models' steps export and run the same.

use std::path::Path;
use std::process::Command;

use crate::{classes, dir, floats, mirdsl, numbers, ok, Input};

/// `bench run`'s models (`crates/bench/models`): each `step` (the loss and the
/// gradient of every weight) exports, and MindSpore computes the same
/// numbers for one batch.
fn bench_step_runs_the_same(model: &str, inputs: &[Input], dims: &[&str]) {
    let scratch = std::env::temp_dir().join(format!(
        "mirdsl-bench-step-{}-{}",
        model.trim_end_matches(".mir"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../bench/models")
        .join(model);
    let source = source.to_str().unwrap();
    let mut run = vec!["run", source, "--entry", "step", "--format", "json"];
    let mut flags = Vec::new();
    let mut npys = Vec::new();
    for input in inputs {
        let path = scratch.join(format!("{}.npy", input.name));
        std::fs::write(&path, tensor::npy::write(&input.value)).unwrap();
        flags.push(format!("{}={}", input.name, path.display()));
        npys.push(path.display().to_string());
    }
    for f in &flags {
        run.push("--arg");
        run.push(f);
    }
    for d in dims {
        run.push("--dim");
        run.push(d);
    }
    let here: serde_json::Value = serde_json::from_str(&ok("run", mirdsl(&run))).unwrap();
    let mut want = Vec::new();
    numbers(&here, &mut want);
    let model_path = scratch.join("step.mindir");
    let model_s = model_path.to_str().unwrap();
    ok(
        "export",
        mirdsl(&["export", source, "--entry", "step", "-o", model_s]),
    );
    if let Some(python) = test_support::require(
        test_support::Tool::MindSpore,
        test_support::mindspore_python(),
    ) {
        let out = Command::new(python)
            .arg(dir().join("run_mindspore.py"))
            .arg(&model_path)
            .arg("1")
            .args(&npys)
            .output()
            .expect("python runs");
        let stdout = ok("MindSpore", out);
        let v: serde_json::Value =
            serde_json::from_str(stdout.lines().last().unwrap_or("[]")).unwrap();
        let mut got = Vec::new();
        numbers(&v, &mut got);
        assert_eq!(got.len(), want.len(), "{model}: how many numbers");
        let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        let worst = got
            .iter()
            .zip(&want)
            .map(|(g, w)| (g - w).abs())
            .fold(0.0, f64::max);
        assert!(
            worst <= 1e-4 * scale,
            "{model}: MindSpore differs by {worst:e}"
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn bench_mlp_step_exports_and_runs_the_same() {
    bench_step_runs_the_same(
        "mlp.mir",
        &[floats("x", &[2, 784], 9), classes("labels", 2, 10, 10)],
        &[],
    );
}

#[test]
fn bench_lenet_step_exports_and_runs_the_same() {
    bench_step_runs_the_same(
        "lenet.mir",
        &[
            floats("x", &[2, 1, 32, 32], 11),
            classes("labels", 2, 10, 12),
        ],
        &[],
    );
}

#[test]
fn bench_resnet_step_exports_and_runs_the_same() {
    bench_step_runs_the_same(
        "resnet.mir",
        &[
            floats("x", &[2, 64, 8, 8], 13),
            classes("labels", 2, 10, 14),
        ],
        &[],
    );
}

#[test]
fn bench_transformer_step_exports_and_runs_the_same() {
    bench_step_runs_the_same(
        "transformer.mir",
        &[
            floats("x", &[1, 128, 256], 15),
            classes("labels", 1, 10, 16),
        ],
        &[],
    );
}
