//! Helpers shared by the interop tests: checking DSL text, running it with the
//! executor, comparing results.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use ir::Ty;
use serde_json::Value as Json;
use tensor::Tensor;

/// MindSpore's artefacts (`../shared/fixtures/mindspore`,
/// `MIRDSL_MINDSPORE_FIXTURES`), when present: a test without them is
/// skipped, or fails where `MIRDSL_REQUIRE_TOOLS` asks for them.
pub fn fixtures() -> Option<PathBuf> {
    test_support::require(
        test_support::Tool::MindSporeFixtures,
        test_support::mindspore_fixtures(),
    )
}

pub fn test_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data")
}

/// A fresh temporary directory for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Asserts that `text` checks without errors.
pub fn assert_checks(what: &str, text: &str) -> analysis::FileAnalysis {
    let a = analysis::analyze(text);
    let errors: Vec<String> = a
        .diagnostics
        .iter()
        .filter(|d| d.severity == analysis::Severity::Error)
        .map(|d| format!("{:?}: {}", d.code, d.message))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not check:\n{}\n{text}",
        errors.join("\n")
    );
    a
}

/// Deterministic inputs for the entry's annotated parameters.
pub fn inputs_for(text: &str, entry: &str) -> Vec<Tensor> {
    let a = analysis::analyze(text);
    let body = &a.source.graphs[entry].body;
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    body.graph(body.root())
        .params
        .iter()
        .map(|&p| match &body.node(p).annotation {
            Some((Ty::Tensor(d, shape), _)) => {
                let dims: Vec<usize> = shape
                    .as_known()
                    .expect("known shape")
                    .iter()
                    .map(|&n| n as usize)
                    .collect();
                let n: usize = dims.iter().product();
                let data: Vec<f64> = (0..n).map(|_| next()).collect();
                Tensor::from_f64(dims, data).unwrap().cast(*d)
            }
            other => panic!("entry parameter needs a tensor annotation, has {other:?}"),
        })
        .collect()
}

/// Runs `entry` of `text` (weights relative to `base`) on `inputs`.
pub fn run(text: &str, base: &Path, entry: &str, inputs: &[Tensor]) -> Json {
    let a = assert_checks("the program", text);
    let program = a.source.program();
    let options = exec::ExecOptions {
        base_dir: base.to_path_buf(),
        ..Default::default()
    };
    let mut ex = exec::Executor::new(&program, options);
    let args = inputs.iter().map(|t| ex.tensor(t.clone())).collect();
    match ex.call(entry, args) {
        Ok(v) => exec::output::to_json(&v),
        Err(e) => panic!("running {entry} failed: {}", e.message),
    }
}

/// `entry` run `steps` times on one executor (weights updated by one run are
/// seen by the next), one result per run.
pub fn run_steps(
    text: &str,
    base: &Path,
    entry: &str,
    inputs: &[Tensor],
    steps: usize,
) -> Vec<Json> {
    let a = assert_checks("the program", text);
    let program = a.source.program();
    let options = exec::ExecOptions {
        base_dir: base.to_path_buf(),
        ..Default::default()
    };
    let mut ex = exec::Executor::new(&program, options);
    (0..steps)
        .map(|_| {
            let args = inputs.iter().map(|t| ex.tensor(t.clone())).collect();
            match ex.call(entry, args) {
                Ok(v) => exec::output::to_json(&v),
                Err(e) => panic!("running {entry} failed: {}", e.message),
            }
        })
        .collect()
}

/// Whether two results (`mirdsl run --format json` shapes) agree closely.
pub fn close(a: &Json, b: &Json) -> Result<(), String> {
    match (a, b) {
        (Json::Array(x), Json::Array(y)) => {
            if x.len() != y.len() {
                return Err(format!("tuples of {} and {}", x.len(), y.len()));
            }
            for (p, q) in x.iter().zip(y) {
                close(p, q)?;
            }
            Ok(())
        }
        (Json::Object(x), Json::Object(y)) => {
            if x.get("shape") != y.get("shape") {
                return Err(format!(
                    "shapes {:?} and {:?}",
                    x.get("shape"),
                    y.get("shape")
                ));
            }
            let nums = |v: &Json| -> Vec<f64> {
                match v {
                    Json::Array(items) => items
                        .iter()
                        .map(|i| i.as_f64().unwrap_or(f64::NAN))
                        .collect(),
                    other => vec![other.as_f64().unwrap_or(f64::NAN)],
                }
            };
            let (p, q) = (
                nums(x.get("data").or(x.get("value")).unwrap_or(&Json::Null)),
                nums(y.get("data").or(y.get("value")).unwrap_or(&Json::Null)),
            );
            if p.len() != q.len() {
                return Err("element counts differ".into());
            }
            for (i, (u, v)) in p.iter().zip(&q).enumerate() {
                if (u - v).abs() > 1e-5 + 1e-4 * v.abs() {
                    return Err(format!("element {i}: {u} vs {v}"));
                }
            }
            Ok(())
        }
        _ if a == b => Ok(()),
        _ => Err(format!("{a} vs {b}")),
    }
}

pub fn f32_tensor(data: &[f32]) -> Tensor {
    Tensor::from_f32(vec![data.len()], data.to_vec()).unwrap()
}
