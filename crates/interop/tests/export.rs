//! Exporting DSL programs as `.mindir`: the model each program gives (as a
//! readable listing), and round trips: exporting then importing gives a
//! program that computes the same results.

mod common;

use std::path::Path;

use common::{assert_checks, close, inputs_for, run, temp_dir, test_data};
use interop::mindir::{ExportError, ExportOptions};
use interop::WeightOptions;

fn programs() -> Vec<(String, String)> {
    let mut files: Vec<_> = std::fs::read_dir(test_data().join("export"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mir"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            (
                p.file_stem().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect()
}

fn export(text: &str) -> Vec<u8> {
    let opts = ExportOptions {
        entry: None,
        base_dir: test_data().join("export"),
        ..Default::default()
    };
    interop::mindir::export(text, &opts).unwrap_or_else(|e| panic!("export failed: {e}"))
}

/// The listing of every exported program.
#[test]
fn models() {
    for (name, text) in programs() {
        let model = interop::mindir::decode(&export(&text)).unwrap();
        let listing = interop::mindir::describe(&model);
        expect_test::expect_file![format!("../test_data/export/{name}.mindir.txt")]
            .assert_eq(&listing);
    }
}

/// Export, import, and both programs give the same results.
#[test]
fn round_trips() {
    for (name, text) in programs() {
        let bytes = export(&text);
        let dir = temp_dir(&format!("round_trip_{name}"));
        let opts = WeightOptions {
            file: "weights.safetensors".into(),
            ..Default::default()
        };
        let back = interop::mindir::import(&bytes, &opts)
            .unwrap_or_else(|e| panic!("{name}: import failed: {e}"));
        if let Some(st) = back.safetensors() {
            std::fs::write(dir.join("weights.safetensors"), st).unwrap();
        }
        assert_checks(&format!("{name} imported back"), &back.text);
        let inputs = inputs_for(&text, "main");
        let want = run(&text, &test_data().join("export"), "main", &inputs);
        let got = run(&back.text, &dir, "main", &inputs);
        if let Err(e) = close(&got, &want) {
            panic!("{name}: the imported program differs: {e}\n{}", back.text);
        }
        // Exporting the imported program gives a model that imports to the
        // same text again.
        let again = interop::mindir::export(
            &back.text,
            &ExportOptions {
                entry: None,
                base_dir: dir.clone(),
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{name}: exporting the import failed: {e}"));
        let back2 = interop::mindir::import(&again, &opts).unwrap();
        assert_eq!(
            back.text, back2.text,
            "{name}: import(export(import(...))) differs"
        );
    }
}

fn export_error(text: &str) -> ExportError {
    interop::mindir::export(
        text,
        &ExportOptions {
            entry: None,
            base_dir: Path::new(".").to_path_buf(),
            ..Default::default()
        },
    )
    .unwrap_err()
}

#[test]
fn unsupported_programs_are_refused_clearly() {
    let generic = export_error("graph main(x) { return x + 1 }\n");
    assert!(generic.to_string().contains("annotate"), "{generic}");
    let scalar = export_error("graph main(n: i64) { return n + 1 }\n");
    assert!(scalar.to_string().contains("tensors"), "{scalar}");
    let broken = export_error("graph main(x: f32[3]) { return Nope(x) }\n");
    assert!(matches!(broken, ExportError::Check(_)), "{broken}");
    let missing = interop::mindir::export(
        "graph main(x: f32[3]) { return x }\n",
        &ExportOptions {
            entry: Some("other".into()),
            base_dir: Path::new(".").to_path_buf(),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(matches!(missing, ExportError::NoEntry(_)), "{missing}");
}

/// An operation export cannot write is placed at its source, also where a
/// gradient's forward pass holds it.
#[test]
fn an_operation_export_cannot_write_is_placed_at_its_source() {
    let forward = "graph f(x: f32[1, 1, D, 4, 4]) -> f32[] {\n  \
                   return ReduceSum(AvgPool3D(x, kernel_size=2, strides=2, pad_mode=\"same\"))\n}\n";
    let pool = forward.find("AvgPool3D").unwrap();
    for main in [
        "graph main(x: f32[1, 1, D, 4, 4]) { return f(x) }\n",
        "graph main(x: f32[1, 1, D, 4, 4]) { return value_and_grad(f)(x) }\n",
    ] {
        match export_error(&format!("{forward}{main}")) {
            ExportError::UnsupportedAt(m, span) => {
                assert!(m.contains("AvgPool3D"), "{m}");
                assert_eq!(usize::from(span.start()), pool, "{main}");
            }
            other => panic!("{main}: {other:?}"),
        }
    }
}

/// `grad` is written as the gradient graph it denotes, with MindSpore's
/// primitives only (the registry's gradient helpers are lowered).
#[test]
fn gradients_are_exported_as_graphs() {
    let model = interop::mindir::decode(&export(
        "graph f(x: f32[2, 3]) -> f32[] { return ReduceMean(x * x) }\n\
         graph main(x: f32[2, 3]) { return grad(f)(x) }\n",
    ))
    .unwrap();
    let ops: Vec<String> = model
        .primitives
        .iter()
        .map(|p| p.op_type().to_string())
        .collect();
    assert!(ops.iter().all(|o| !o.starts_with('_')), "{ops:?}");
    assert!(ops.iter().any(|o| o == "ReduceMean"), "{ops:?}");
    assert!(
        model.functions.len() + 1 >= 2,
        "the gradient graph is written"
    );
}

/// `Fill` of constants is a constant, as MindSpore folds it (old-style `Fill`
/// would need a dtype object as a node input).
#[test]
fn constant_makers_are_folded() {
    let model = interop::mindir::decode(&export(
        "graph main(x: f32[2]) { return x + Fill(dtype=f32, shape=(2,), value=1.5) }\n",
    ))
    .unwrap();
    let graph = model.graph.as_ref().unwrap();
    assert!(graph.node.iter().all(|n| !n.op_type().contains("Fill")));
    assert!(graph.node.iter().any(|n| n.op_type() == "Constant"));
}

/// A helper graph called with different shapes is inlined at each call
/// (MindIR graphs are monomorphic).
#[test]
fn polymorphic_helpers_are_inlined() {
    let text = "graph twice(x) { return x + x }\n\
                graph main(a: f32[2], b: f32[3]) { return (twice(a), twice(b)) }\n";
    let model = interop::mindir::decode(&export(text)).unwrap();
    let graph = model.graph.as_ref().unwrap();
    assert!(
        graph.node.iter().all(|n| n.op_type() != "REF::twice"),
        "{}",
        interop::mindir::describe(&model)
    );
    let adds = graph
        .node
        .iter()
        .filter(|n| n.op_type().starts_with("REF::Add"))
        .count();
    assert_eq!(adds, 2);
    // A helper used with one type stays a graph of its own.
    let text = "graph twice(x) { return x + x }\n\
                graph main(a: f32[2], b: f32[2]) { return (twice(a), twice(b)) }\n";
    let model = interop::mindir::decode(&export(text)).unwrap();
    assert_eq!(model.functions.len(), 1);
}
