//! Exported models run in real MindSpore 2.10 and agree with the executor.
//!
//! Optional: set `MIRDSL_MINDSPORE_PYTHON` to a python that has
//! `mindspore==2.10.0` (e.g. `target/ms-venv/bin/python` after
//! `python -m venv target/ms-venv && target/ms-venv/bin/pip install mindspore==2.10.0`).
//! Each program of `test_data/export` is exported, run here and in MindSpore
//! (`mindspore.load` + `nn.GraphCell`, through `tests/mindspore_roundtrip.py`)
//! on the same inputs, and the results compared.

mod common;

use std::path::Path;
use std::process::Command;

use common::{inputs_for, run, run_steps, temp_dir, test_data};

#[test]
fn exported_models_run_in_mindspore() {
    let Some(python) = test_support::require(
        test_support::Tool::MindSpore,
        test_support::mindspore_python(),
    ) else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mindspore_roundtrip.py");
    let mut files: Vec<_> = std::fs::read_dir(test_data().join("export"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mir"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    for file in &files {
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(file).unwrap();
        let dir = temp_dir(&format!("mindspore_{name}"));
        let opts = interop::mindir::ExportOptions {
            entry: None,
            base_dir: test_data().join("export"),
            ..Default::default()
        };
        let bytes = interop::mindir::export(&text, &opts).unwrap();
        std::fs::write(dir.join("model.mindir"), bytes).unwrap();
        let inputs = inputs_for(&text, "main");
        for (i, t) in inputs.iter().enumerate() {
            std::fs::write(dir.join(format!("in{i}.npy")), tensor::npy::write(t)).unwrap();
        }
        let expected = run(&text, &test_data().join("export"), "main", &inputs);
        std::fs::write(dir.join("expected.json"), expected.to_string()).unwrap();
        // A program that updates weights runs three times in a row in both.
        if text.contains("ApplyMomentum") || text.contains("Assign") {
            let steps = run_steps(&text, &test_data().join("export"), "main", &inputs, 3);
            let json = serde_json::json!({ "steps": steps });
            std::fs::write(dir.join("expected_steps.json"), json.to_string()).unwrap();
        }
        let out = Command::new(&python)
            .arg(&script)
            .arg("case")
            .arg(&dir)
            .output()
            .expect("the python runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || stdout.lines().last() != Some("ok") {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let tail: Vec<&str> = stderr
                .lines()
                .filter(|l| !l.starts_with("[WARNING]"))
                .collect();
            failures.push(format!(
                "{name}: {}{}",
                stdout.trim(),
                tail[tail.len().saturating_sub(5)..].join("\n")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "MindSpore disagrees:\n{}",
        failures.join("\n")
    );
}
