//! Importing MindSpore's own files: the `.mindir` models and `.ir` dumps in
//! the shared fixtures (written by MindSpore 2.10), and malformed input.

mod common;

use common::{assert_checks, close, f32_tensor, fixtures, run, temp_dir};
use interop::{ImportError, WeightOptions};
use prost::Message;

fn import_mindir(name: &str) -> Option<interop::Imported> {
    let dir = fixtures()?;
    let bytes = std::fs::read(dir.join(name)).unwrap();
    let opts = WeightOptions {
        file: name.replace(".mindir", ".safetensors"),
        ..Default::default()
    };
    Some(interop::mindir::import(&bytes, &opts).unwrap_or_else(|e| panic!("{name}: {e}")))
}

fn import_ir(name: &str) -> Option<Result<interop::Imported, ImportError>> {
    let dir = fixtures()?;
    let text = std::fs::read_to_string(dir.join("ir").join(name)).unwrap();
    Some(interop::ir_text::import(&text, &WeightOptions::default()))
}

#[test]
fn cf_mindir() {
    let Some(imported) = import_mindir("cf.mindir") else {
        return;
    };
    assert!(imported.weights.is_empty());
    assert_checks("cf.mindir", &imported.text);
    expect_test::expect_file!["../test_data/import/cf.mir"].assert_eq(&imported.text);
    // `if x.sum() > y.sum(): z = x * y else: z = x + y`, then `z * 2` three times.
    let dir = temp_dir("cf");
    let out = run(
        &imported.text,
        &dir,
        "main",
        &[f32_tensor(&[1.0, 2.0, 3.0]), f32_tensor(&[1.0, 1.0, 1.0])],
    );
    close(
        &out,
        &serde_json::json!({"shape": [3], "data": [8.0, 16.0, 24.0]}),
    )
    .unwrap();
    let out = run(
        &imported.text,
        &dir,
        "main",
        &[f32_tensor(&[0.0, 0.0, 1.0]), f32_tensor(&[1.0, 1.0, 1.0])],
    );
    close(
        &out,
        &serde_json::json!({"shape": [3], "data": [8.0, 8.0, 16.0]}),
    )
    .unwrap();
}

/// Imports a model with weights, writes them beside the text, runs it.
fn with_weights(name: &str, weights: usize, input: Vec<usize>) {
    let Some(imported) = import_mindir(name) else {
        return;
    };
    assert_checks(name, &imported.text);
    assert_eq!(imported.weights.len(), weights, "{name}: weights to write");
    let dir = temp_dir(name);
    std::fs::write(
        dir.join(name.replace(".mindir", ".safetensors")),
        imported.safetensors().unwrap(),
    )
    .unwrap();
    let n: usize = input.iter().product();
    let x = tensor::Tensor::full(tensor::DType::F32, input, 0.5);
    assert_eq!(x.numel(), n);
    let out = run(&imported.text, &dir, "main", &[x]);
    assert!(out["data"]
        .as_array()
        .is_some_and(|d| d.iter().all(|v| v.is_number())));
}

#[test]
fn mlp_mindir() {
    with_weights("mlp.mindir", 3, vec![4, 784]);
    if let Some(imported) = import_mindir("mlp.mindir") {
        expect_test::expect_file!["../test_data/import/mlp.mir"].assert_eq(&imported.text);
    }
}

#[test]
fn lenet5_mindir() {
    with_weights("lenet5.mindir", 7, vec![1, 1, 32, 32]);
    if let Some(imported) = import_mindir("lenet5.mindir") {
        expect_test::expect_file!["../test_data/import/lenet5.mir"].assert_eq(&imported.text);
    }
}

/// What importing each dump gives: text that checks, or an error naming the
/// construct the DSL cannot express.
#[test]
fn every_ir_dump() {
    let Some(dir) = fixtures() else {
        return;
    };
    let mut names: Vec<String> = std::fs::read_dir(dir.join("ir"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".ir"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 9);
    let mut report = String::new();
    for name in &names {
        let result = import_ir(name).unwrap();
        let line = match result {
            Ok(imported) => {
                let a = analysis::analyze(&imported.text);
                let errors: Vec<String> = a
                    .diagnostics
                    .iter()
                    .filter(|d| d.severity == analysis::Severity::Error)
                    .map(|d| format!("{:?}", d.code))
                    .collect();
                assert!(a.parse.errors().is_empty(), "{name} does not parse");
                if errors.is_empty() {
                    "imports, checks".to_string()
                } else {
                    // The gradient dump's branches return tuples holding
                    // different backpropagators, which the checker cannot join.
                    assert_eq!(name, "test_if_grad.34_execute.ir", "{name}: {errors:?}");
                    format!("imports; the checker reports {}", errors.join(", "))
                }
            }
            Err(e) => {
                let msg = e.to_string();
                let construct = if msg.contains("`resolve`") {
                    "resolve"
                } else if msg.contains("`J`") {
                    "J"
                } else {
                    panic!("{name}: unexpected error {msg}")
                };
                format!("error naming `{construct}`")
            }
        };
        report.push_str(&format!("{name}: {line}\n"));
    }
    expect_test::expect![[r#"
        hof.00_bootstrap.ir: imports, checks
        hof.01_type_inference.ir: imports, checks
        hof.34_execute.ir: imports, checks
        test_f.00_bootstrap.ir: imports, checks
        test_f.01_type_inference.ir: imports, checks
        test_if.01_type_inference.ir: imports, checks
        test_if.34_execute.ir: imports, checks
        test_if_grad.01_type_inference.ir: imports, checks
        test_if_grad.34_execute.ir: imports, checks
    "#]]
    .assert_eq(&report);
}

#[test]
fn ir_dump_snapshots() {
    for name in [
        "test_f.01_type_inference.ir",
        "hof.01_type_inference.ir",
        "hof.34_execute.ir",
        "test_if.34_execute.ir",
        "test_if_grad.34_execute.ir",
        "test_if_grad.01_type_inference.ir",
    ] {
        let Some(result) = import_ir(name) else {
            return;
        };
        let text = result.unwrap_or_else(|e| panic!("{name}: {e}")).text;
        expect_test::expect_file![format!(
            "../test_data/import/{}",
            name.replace(".ir", ".mir")
        )]
        .assert_eq(&text);
    }
}

/// A dump taken before differentiation, with MindSpore's `J`, imports as the
/// DSL's `vjp` and computes the same gradient as the dump taken after it.
#[test]
fn j_dump_runs_to_the_differentiated_dump() {
    let (Some(Ok(before)), Some(Ok(after))) = (
        import_ir("test_if_grad.01_type_inference.ir"),
        import_ir("test_if_grad.34_execute.ir"),
    ) else {
        return;
    };
    let dir = temp_dir("j_dump_runs");
    for (x, y) in [([1.0, 2.0], [3.0, -1.0]), ([-1.0, -2.0], [3.0, -1.0])] {
        let args = [f32_tensor(&x), f32_tensor(&y)];
        let a = run(&before.text, &dir, "main", &args);
        let b = run(&after.text, &dir, "main", &args);
        close(&a, &b).unwrap_or_else(|e| panic!("x={x:?} y={y:?}: {e}"));
    }
}

/// The imported dumps compute what the Python did.
#[test]
fn ir_dumps_run() {
    let Some(Ok(test_f)) = import_ir("test_f.01_type_inference.ir") else {
        return;
    };
    let dir = temp_dir("ir_dumps_run");
    // c = b * func(a, b) = b * (a / b) = a = x - 1.
    let out = run(
        &test_f.text,
        &dir,
        "main",
        &[f32_tensor(&[1.0, 2.0, 5.0]), f32_tensor(&[1.0, 1.0, 1.0])],
    );
    close(
        &out,
        &serde_json::json!({"shape": [3], "data": [0.0, 1.0, 4.0]}),
    )
    .unwrap();
    let Some(Ok(hof)) = import_ir("hof.01_type_inference.ir") else {
        return;
    };
    let out = run(&hof.text, &dir, "main", &[f32_tensor(&[1.0, -3.0])]);
    close(
        &out,
        &serde_json::json!({"shape": [2], "data": [16.0, 0.0]}),
    )
    .unwrap();
    for name in ["test_if.01_type_inference.ir", "test_if.34_execute.ir"] {
        let Some(Ok(test_if)) = import_ir(name) else {
            return;
        };
        // x.sum() > 0: x + y; else y * y.
        let out = run(
            &test_if.text,
            &dir,
            "main",
            &[f32_tensor(&[1.0, 2.0]), f32_tensor(&[3.0, 4.0])],
        );
        close(&out, &serde_json::json!({"shape": [2], "data": [4.0, 6.0]})).unwrap();
        let out = run(
            &test_if.text,
            &dir,
            "main",
            &[f32_tensor(&[-1.0, -2.0]), f32_tensor(&[3.0, 4.0])],
        );
        close(
            &out,
            &serde_json::json!({"shape": [2], "data": [9.0, 16.0]}),
        )
        .unwrap();
    }
}

#[test]
fn malformed_files() {
    let err = interop::mindir::import(b"not a model", &WeightOptions::default()).unwrap_err();
    assert!(matches!(err, ImportError::Malformed(_)), "{err}");
    let err = interop::ir_text::import("hello\n", &WeightOptions::default()).unwrap_err();
    assert!(err.to_string().contains("IR entry"), "{err}");
}

/// Primitives nobody knows are listed, all of them.
#[test]
fn unknown_primitives_are_listed() {
    use interop::proto::*;
    let node = |name: &str, op: &str, inputs: &[&str]| NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![name.into()],
        name: Some(name.into()),
        op_type: Some(op.into()),
        ..Default::default()
    };
    let prim = |name: &str, op: &str| PrimitiveProto {
        name: Some(name.into()),
        op_type: Some(op.into()),
        prim_type: Some(2),
        ..Default::default()
    };
    let model = ModelProto {
        graph: Some(GraphProto {
            name: Some("g".into()),
            input: vec![ValueInfoProto {
                name: Some("g:x".into()),
                tensor: vec![TensorProto {
                    dims: vec![3],
                    data_type: Some(1),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            node: vec![
                node("g:a:1", "REF::FancyOp:1", &["g:x"]),
                node("g:b:2", "REF::Exp:2", &["g:a:1"]),
                node("g:c:3", "REF::OtherOp:3", &["g:b:2"]),
            ],
            output: vec![ValueInfoProto {
                name: Some("g:c:3".into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
        primitives: vec![
            prim("FancyOp:1", "FancyOp"),
            prim("Exp:2", "Exp"),
            prim("OtherOp:3", "OtherOp"),
        ],
        ..Default::default()
    };
    let err =
        interop::mindir::import(&model.encode_to_vec(), &WeightOptions::default()).unwrap_err();
    assert_eq!(
        err,
        ImportError::UnknownOps(vec!["FancyOp".into(), "OtherOp".into()])
    );
    assert!(err.to_string().contains("FancyOp, OtherOp"));
}

/// Every fixture that imports and checks also exports, and the export
/// imports back to a program that computes the same results.
#[test]
fn imported_fixtures_export_and_come_back() {
    let Some(dir) = fixtures() else {
        return;
    };
    let mut cases: Vec<(String, interop::Imported)> = Vec::new();
    for name in ["cf.mindir", "mlp.mindir", "lenet5.mindir"] {
        cases.push((name.into(), import_mindir(name).unwrap()));
    }
    for name in [
        "test_f.01_type_inference.ir",
        "hof.01_type_inference.ir",
        "hof.34_execute.ir",
        "test_if.01_type_inference.ir",
        "test_if.34_execute.ir",
    ] {
        cases.push((name.into(), import_ir(name).unwrap().unwrap()));
    }
    assert!(dir.is_dir());
    for (name, imported) in cases {
        let work = temp_dir(&format!("fixture_round_trip_{}", name.replace('.', "_")));
        let weights_file = name.replace(".mindir", ".safetensors");
        if let Some(bytes) = imported.safetensors() {
            std::fs::write(work.join(&weights_file), bytes).unwrap();
        }
        let opts = interop::mindir::ExportOptions {
            entry: None,
            base_dir: work.clone(),
            ..Default::default()
        };
        let model = interop::mindir::export(&imported.text, &opts)
            .unwrap_or_else(|e| panic!("{name}: export failed: {e}"));
        let back_dir = work.join("back");
        std::fs::create_dir_all(&back_dir).unwrap();
        let back = interop::mindir::import(&model, &WeightOptions::default()).unwrap();
        if let Some(bytes) = back.safetensors() {
            std::fs::write(back_dir.join("weights.safetensors"), bytes).unwrap();
        }
        let inputs = common::inputs_for(&imported.text, "main");
        let want = run(&imported.text, &work, "main", &inputs);
        let got = run(&back.text, &back_dir, "main", &inputs);
        if let Err(e) = close(&got, &want) {
            panic!(
                "{name}: differs after export and import: {e}\n{}",
                back.text
            );
        }
    }
}

/// A MindSpore primitive the registry does not support is named as such,
/// with a node that uses it, apart from primitives nobody knows.
#[test]
fn unsupported_mindspore_primitives_are_named() {
    use interop::proto::*;
    let node = |name: &str, op: &str, inputs: &[&str]| NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![name.into()],
        name: Some(name.into()),
        op_type: Some(op.into()),
        ..Default::default()
    };
    let prim = |name: &str, op: &str| PrimitiveProto {
        name: Some(name.into()),
        op_type: Some(op.into()),
        prim_type: Some(2),
        ..Default::default()
    };
    // `NPUGetFloatStatusV2` is an Ascend-only MindSpore primitive.
    let model = ModelProto {
        graph: Some(GraphProto {
            name: Some("g".into()),
            input: vec![ValueInfoProto {
                name: Some("g:x".into()),
                tensor: vec![TensorProto {
                    dims: vec![3],
                    data_type: Some(1),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            node: vec![
                node("g:a:1", "REF::NPUGetFloatStatusV2:1", &["g:x"]),
                node("g:b:2", "REF::NPUGetFloatStatusV2:1", &["g:a:1"]),
                node("g:c:3", "REF::FancyOp:3", &["g:b:2"]),
            ],
            output: vec![ValueInfoProto {
                name: Some("g:c:3".into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
        primitives: vec![
            prim("NPUGetFloatStatusV2:1", "NPUGetFloatStatusV2"),
            prim("FancyOp:3", "FancyOp"),
        ],
        ..Default::default()
    };
    let err =
        interop::mindir::import(&model.encode_to_vec(), &WeightOptions::default()).unwrap_err();
    assert_eq!(
        err,
        ImportError::UnsupportedOps {
            ops: vec![("NPUGetFloatStatusV2".into(), vec!["a".into(), "b".into()])],
            unknown: vec!["FancyOp".into()],
        }
    );
    assert_eq!(
        err.to_string(),
        "`NPUGetFloatStatusV2` (node a, and 1 more) is a MindSpore 2.10 primitive mirdsl \
         does not support yet\nunknown primitive: FancyOp"
    );
}
