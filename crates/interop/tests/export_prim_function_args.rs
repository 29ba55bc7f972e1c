//! Primitive functions whose arguments a loaded MindIR must hold in
//! MindSpore's own form (rows of `ops::mindspore::ALIASES`):
//!
//! - a reduction's `axis` is a tuple: MindSpore's parser casts `axis=1` to
//!   `(1,)` when it compiles Python, but not when it loads a model, and its
//!   shape inference then fails ("Failed to get array value, expect sequence
//!   or tensor type, but got: Int64Imm");
//! - `LayerNormGrad` takes no `epsilon` argument: MindSpore's bprop of
//!   LayerNorm sets it as an attribute on the primitive, where the CPU kernel
//!   reads it (1e-7 without), so a LayerNorm with another epsilon gets other
//!   gradients in MindSpore unless export writes it there.

mod common;

use std::path::Path;
use std::process::Command;

use common::{inputs_for, run, temp_dir, test_data};
use interop::model::Const;

const REDUCE: &str = "\
graph main(x: f32[2, 3, 4]) {
  return (ReduceMean(x, axis=1), ReduceSum(x, axis=-1, keep_dims=true), ReduceMax(x, axis=(0, 2)))
}
";

const LAYER_NORM_GRAD: &str = "\
graph f(x: f32[4, 8], g: f32[8], b: f32[8]) -> f32[] {
  (y, _m, _v) = LayerNorm(x, g, b, begin_norm_axis=1, begin_params_axis=1, epsilon=0.01)
  return ReduceSum(y * x)
}
graph main(x: f32[4, 8], g: f32[8], b: f32[8]) {
  return grad(f, wrt=(0, 1))(x, g, b)
}
";

fn export(text: &str) -> Vec<u8> {
    let opts = interop::mindir::ExportOptions {
        entry: None,
        base_dir: test_data(),
        ..Default::default()
    };
    interop::mindir::export(text, &opts).unwrap_or_else(|e| panic!("export failed: {e}\n{text}"))
}

/// The constant each reduction of the model's main graph takes as `axis`.
fn axes(bytes: &[u8]) -> Vec<(String, Const)> {
    let model = interop::mindir::decode(bytes).unwrap();
    let graph = model.graph.as_ref().unwrap();
    let constant = |name: &str| -> Const {
        let node = graph
            .node
            .iter()
            .find(|n| n.output.iter().any(|o| o == name) && n.op_type() == "Constant")
            .unwrap_or_else(|| panic!("`{name}` is no constant"));
        let value = node.attribute.iter().find(|a| a.name() == "value").unwrap();
        interop::mindir::attr_const(value)
    };
    graph
        .node
        .iter()
        .filter(|n| n.op_type().starts_with("REF::Reduce"))
        .map(|n| (n.op_type().to_string(), constant(&n.input[1])))
        .collect()
}

fn ints(v: &[i64]) -> Const {
    Const::Tuple(
        v.iter()
            .map(|&i| Const::Int(i, tensor::DType::I64))
            .collect(),
    )
}

#[test]
fn reduction_axes_are_tuples() {
    let got = axes(&export(REDUCE));
    let want = [
        ("ReduceMean", ints(&[1])),
        ("ReduceSum", ints(&[-1])),
        ("ReduceMax", ints(&[0, 2])),
    ];
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (op, axis) in want {
        let (_, c) = got
            .iter()
            .find(|(o, _)| o.contains(op))
            .unwrap_or_else(|| panic!("no {op}: {got:?}"));
        assert_eq!(*c, axis, "{op}");
    }
}

#[test]
fn layer_norm_grad_carries_epsilon() {
    let model = interop::mindir::decode(&export(LAYER_NORM_GRAD)).unwrap();
    let prim = model
        .primitives
        .iter()
        .find(|p| p.op_type() == "LayerNormGrad")
        .unwrap_or_else(|| panic!("no LayerNormGrad: {}", interop::mindir::describe(&model)));
    let eps = prim
        .attribute
        .iter()
        .find(|a| a.name() == "epsilon")
        .expect("LayerNormGrad's epsilon");
    match interop::mindir::attr_const(eps) {
        Const::Float(x, _) => assert!((x - 0.01).abs() < 1e-9, "{x}"),
        other => panic!("epsilon is {other:?}"),
    }
}

/// Import reads both back: the round trip computes the same.
#[test]
fn they_import_back() {
    for text in [REDUCE, LAYER_NORM_GRAD] {
        let dir = temp_dir("export_prim_function_args_import");
        let opts = interop::WeightOptions {
            file: "weights.safetensors".into(),
            ..Default::default()
        };
        let imported = interop::mindir::import(&export(text), &opts)
            .unwrap_or_else(|e| panic!("import failed: {e}\n{text}"));
        if let Some(st) = imported.safetensors() {
            std::fs::write(dir.join("weights.safetensors"), st).unwrap();
        }
        let inputs = inputs_for(text, "main");
        let want = run(text, &test_data(), "main", &inputs);
        let got = run(&imported.text, &dir, "main", &inputs);
        common::close(&want, &got).unwrap_or_else(|e| panic!("{e}\n{text}\n{}", imported.text));
    }
}

/// With MindSpore: both run there and give what they give here.
#[test]
fn they_run_in_mindspore() {
    let Some(python) = test_support::require(
        test_support::Tool::MindSpore,
        test_support::mindspore_python(),
    ) else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mindspore_roundtrip.py");
    let mut failures = Vec::new();
    for (name, text) in [("reduce", REDUCE), ("layer_norm_grad", LAYER_NORM_GRAD)] {
        let dir = temp_dir(&format!("export_prim_function_args_ms_{name}"));
        std::fs::write(dir.join("model.mindir"), export(text)).unwrap();
        let inputs = inputs_for(text, "main");
        for (k, t) in inputs.iter().enumerate() {
            std::fs::write(dir.join(format!("in{k}.npy")), tensor::npy::write(t)).unwrap();
        }
        let expected = run(text, &test_data(), "main", &inputs);
        std::fs::write(dir.join("expected.json"), expected.to_string()).unwrap();
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
