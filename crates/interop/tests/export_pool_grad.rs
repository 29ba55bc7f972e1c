//! `MaxPoolGrad` and `MaxPoolGradGrad` (what MaxPool's gradient emits) are
//! old-style MindSpore primitives whose C++ reads their attributes as
//! MindSpore's Python stores them, not as their `__init__` takes them:
//! `kernel_size` and `strides` as NCHW 4-tuples, `pad_mode` upper-cased, the
//! layout under `format` as well as `data_format`. Written otherwise,
//! MindSpore 2.10 fails to compile the model ("The pointer[value] is null" in
//! `GetValue`; "kernel_size must be 4D"). `ops::mindspore::ALIASES` says so in
//! a row each; this checks what export writes, and (with MindSpore) that the
//! models run there as here.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use common::{inputs_for, run, temp_dir, test_data};
use interop::model::Const;

const GRAD: &str = "\
graph main(x: f32[2, 3, 9, 9]) -> f32[2, 3, 9, 9] {
  y = MaxPool(x, kernel_size=KERNEL, strides=STRIDES, pad_mode=\"MODE\")
  return MaxPoolGrad(x, y, y * y, kernel_size=KERNEL, strides=STRIDES, pad_mode=\"MODE\")
}
";

const GRAD_GRAD: &str = "\
graph main(x: f32[2, 3, 9, 9]) -> f32[] {
  y = MaxPool(x, kernel_size=KERNEL, strides=STRIDES, pad_mode=\"MODE\")
  return ReduceSum(MaxPoolGradGrad(x, y, x * x, kernel_size=KERNEL, strides=STRIDES, pad_mode=\"MODE\"))
}
";

/// A window as the DSL writes it, and as MindSpore stores it.
struct Case {
    kernel: &'static str,
    strides: &'static str,
    mode: &'static str,
    /// `kernel_size` and `strides` as NCHW 4-tuples, and the mode upper-cased.
    stored: ([i64; 4], [i64; 4], &'static str),
}

const CASES: &[Case] = &[
    Case {
        kernel: "2",
        strides: "2",
        mode: "valid",
        stored: ([1, 1, 2, 2], [1, 1, 2, 2], "VALID"),
    },
    Case {
        kernel: "3",
        strides: "2",
        mode: "same",
        stored: ([1, 1, 3, 3], [1, 1, 2, 2], "SAME"),
    },
    Case {
        kernel: "(3, 2)",
        strides: "(1, 2)",
        mode: "valid",
        stored: ([1, 1, 3, 2], [1, 1, 1, 2], "VALID"),
    },
    Case {
        kernel: "2",
        strides: "1",
        mode: "same",
        stored: ([1, 1, 2, 2], [1, 1, 1, 1], "SAME"),
    },
];

impl Case {
    fn program(&self, template: &str) -> String {
        template
            .replace("KERNEL", self.kernel)
            .replace("STRIDES", self.strides)
            .replace("MODE", self.mode)
    }
}

fn export(text: &str) -> Vec<u8> {
    let opts = interop::mindir::ExportOptions {
        entry: None,
        base_dir: test_data(),
        ..Default::default()
    };
    interop::mindir::export(text, &opts).unwrap_or_else(|e| panic!("export failed: {e}\n{text}"))
}

/// The attributes of the model's primitive `op_type`.
fn attrs_of(bytes: &[u8], op_type: &str) -> HashMap<String, Const> {
    let model = interop::mindir::decode(bytes).unwrap();
    let prim = model
        .primitives
        .iter()
        .find(|p| p.op_type() == op_type)
        .unwrap_or_else(|| panic!("no {op_type}: {}", interop::mindir::describe(&model)));
    prim.attribute
        .iter()
        .map(|a| (a.name().to_string(), interop::mindir::attr_const(a)))
        .collect()
}

fn ints(v: &[i64]) -> Const {
    Const::Tuple(
        v.iter()
            .map(|&i| Const::Int(i, tensor::DType::I64))
            .collect(),
    )
}

fn string(s: &str) -> Const {
    Const::Str(s.to_string())
}

#[test]
fn max_pool_grads_are_written_as_mindspore_stores_them() {
    for case in CASES {
        let (k4, s4, ms_mode) = case.stored;
        let text = case.program(GRAD);
        let attrs = attrs_of(&export(&text), "MaxPoolGrad");
        assert_eq!(attrs["kernel_size"], ints(&k4), "{text}");
        assert_eq!(attrs["strides"], ints(&s4), "{text}");
        assert_eq!(attrs["pad_mode"], string(ms_mode), "{text}");
        assert_eq!(attrs["data_format"], string("NCHW"), "{text}");
        assert_eq!(attrs["format"], string("NCHW"), "{text}");
        // MaxPool itself, as before.
        let fwd = attrs_of(&export(&text), "MaxPool");
        assert_eq!(fwd["kernel_size"], ints(&k4), "{text}");
        assert_eq!(fwd["pad_mode"], string(ms_mode), "{text}");

        let text = case.program(GRAD_GRAD);
        let attrs = attrs_of(&export(&text), "MaxPoolGradGrad");
        assert_eq!(attrs["kernel_size"], ints(&k4), "{text}");
        assert_eq!(attrs["strides"], ints(&s4), "{text}");
        assert_eq!(attrs["pad_mode"], string(ms_mode), "{text}");
    }
}

/// Import reads MindSpore's 4-tuples and upper-case modes back: the round
/// trip gives the same program's results.
#[test]
fn max_pool_grads_import_back() {
    for case in CASES {
        for template in [GRAD, GRAD_GRAD] {
            let text = case.program(template);
            let bytes = export(&text);
            let dir = temp_dir("export_pool_grad_import");
            let opts = interop::WeightOptions {
                file: "weights.safetensors".into(),
                ..Default::default()
            };
            let imported = interop::mindir::import(&bytes, &opts)
                .unwrap_or_else(|e| panic!("import failed: {e}\n{text}"));
            if let Some(st) = imported.safetensors() {
                std::fs::write(dir.join("weights.safetensors"), st).unwrap();
            }
            let back = imported.text;
            let inputs = inputs_for(&text, "main");
            let want = run(&text, &test_data(), "main", &inputs);
            let got = run(&back, &dir, "main", &inputs);
            common::close(&want, &got).unwrap_or_else(|e| panic!("{e}\n{text}\n{back}"));
        }
    }
}

/// With MindSpore: each program runs there and gives what it gives here.
#[test]
fn max_pool_grads_run_in_mindspore() {
    let Some(python) = test_support::require(
        test_support::Tool::MindSpore,
        test_support::mindspore_python(),
    ) else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mindspore_roundtrip.py");
    let mut failures = Vec::new();
    for (i, case) in CASES.iter().enumerate() {
        for (what, template) in [("MaxPoolGrad", GRAD), ("MaxPoolGradGrad", GRAD_GRAD)] {
            let text = case.program(template);
            let dir = temp_dir(&format!("export_pool_grad_ms_{what}_{i}"));
            std::fs::write(dir.join("model.mindir"), export(&text)).unwrap();
            let inputs = inputs_for(&text, "main");
            for (k, t) in inputs.iter().enumerate() {
                std::fs::write(dir.join(format!("in{k}.npy")), tensor::npy::write(t)).unwrap();
            }
            let expected = run(&text, &test_data(), "main", &inputs);
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
                    "{what} kernel_size={} strides={} pad_mode={}: {}{}",
                    case.kernel,
                    case.strides,
                    case.mode,
                    stdout.trim(),
                    tail[tail.len().saturating_sub(5)..].join("\n")
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "MindSpore disagrees:\n{}",
        failures.join("\n")
    );
}
