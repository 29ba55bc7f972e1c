//! The gradient of one operation at a time: `value_and_grad` of a loss
//! through the operation exports (its registry helpers written with
//! MindSpore primitives), imports back to the same value and gradient, and,
//! with MindSpore, MindSpore computes them too.

use std::process::Command;

use crate::{close, dir, floats, mirdsl, numbers, ok, Input};

mod conv_pool;
mod einsum;
mod resize_layout;
mod rnn;
mod segment;
mod slicing;

/// One operation to differentiate: an expression in the case's inputs,
/// differentiated with respect to the first.
pub(crate) struct Case {
    op: &'static str,
    inputs: Vec<Input>,
    /// Why MindSpore's CPU cannot run the forward, where it cannot (the
    /// export is then checked by importing it back only).
    not_on_mindspore_cpu: Option<&'static str>,
    /// Graphs the expression calls.
    graphs: &'static str,
}

impl Case {
    pub(crate) fn new(op: &'static str, inputs: Vec<Input>) -> Case {
        Case {
            op,
            inputs,
            not_on_mindspore_cpu: None,
            graphs: "",
        }
    }

    /// The case with `graphs` defined beside the loss.
    pub(crate) fn defining(mut self, graphs: &'static str) -> Case {
        self.graphs = graphs;
        self
    }

    pub(crate) fn not_on_mindspore_cpu(mut self, why: &'static str) -> Case {
        self.not_on_mindspore_cpu = Some(why);
        self
    }
}

/// The DSL type of `t`: `f32[2, 3]`.
fn type_of(t: &tensor::Tensor) -> String {
    let dims: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
    format!("{}[{}]", t.dtype().name(), dims.join(", "))
}

/// Each case's `value_and_grad` runs here, exports, runs imported back, and
/// runs in MindSpore, all to the same numbers.
pub(crate) fn export_and_run_the_same(family: &str, cases: &[Case]) {
    let scratch =
        std::env::temp_dir().join(format!("mirdsl-grads-{family}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let python = test_support::require(
        test_support::Tool::MindSpore,
        test_support::mindspore_python(),
    );
    for (k, case) in cases.iter().enumerate() {
        let op = case.op;
        let params: Vec<String> = case
            .inputs
            .iter()
            .map(|i| format!("{}: {}", i.name, type_of(&i.value)))
            .collect();
        let names: Vec<&str> = case.inputs.iter().map(|i| i.name).collect();
        let (params, names) = (params.join(", "), names.join(", "));
        let source = scratch.join(format!("case{k}.mir"));
        std::fs::write(
            &source,
            format!(
                "{}\ngraph f({params}) -> f32[] {{\n  return ReduceSum(Sin({op}) * Cos({op}))\n}}\n\
                 graph main({params}) {{\n  return value_and_grad(f)({names})\n}}\n",
                case.graphs
            ),
        )
        .unwrap();
        let source = source.to_str().unwrap();
        let mut npys = Vec::new();
        let mut args = Vec::new();
        for input in &case.inputs {
            let npy = scratch.join(format!("case{k}-{}.npy", input.name));
            std::fs::write(&npy, tensor::npy::write(&input.value)).unwrap();
            args.push(format!("{}={}", input.name, npy.display()));
            npys.push(npy);
        }
        let run = |file: &str| {
            let mut argv = vec!["run", file, "--entry", "main", "--format", "json"];
            for a in &args {
                argv.extend(["--arg", a.as_str()]);
            }
            let v: serde_json::Value =
                serde_json::from_str(&ok(&format!("run of {op} ({file})"), mirdsl(&argv))).unwrap();
            let mut out = Vec::new();
            numbers(&v, &mut out);
            out
        };
        let want = run(source);
        assert!(
            want.len() > 1 && want.iter().all(|v| v.is_finite()),
            "{op}: {want:?}"
        );
        let model = scratch.join(format!("case{k}.mindir"));
        let model_s = model.to_str().unwrap();
        ok(
            &format!("export of {op}"),
            mirdsl(&["export", source, "-o", model_s]),
        );
        let imported = scratch.join(format!("case{k}-imported.mir"));
        let imported_s = imported.to_str().unwrap();
        ok(
            &format!("import of {op}"),
            mirdsl(&["import", model_s, "-o", imported_s]),
        );
        let back = run(imported_s);
        assert!(
            close(&back, &want),
            "{op}: imported {back:?}, mirdsl {want:?}"
        );
        let Some(python) = &python else { continue };
        if let Some(why) = case.not_on_mindspore_cpu {
            eprintln!("{op}: not run in MindSpore: {why}");
            continue;
        }
        let out = Command::new(python)
            .arg(dir().join("run_mindspore.py"))
            .arg(&model)
            .arg("1")
            .args(&npys)
            .output()
            .expect("python runs");
        let v: serde_json::Value =
            serde_json::from_str(ok(op, out).lines().last().unwrap_or("[]")).unwrap();
        let mut got = Vec::new();
        numbers(&v, &mut got);
        assert!(
            close(&got, &want),
            "{op}: MindSpore {got:?}, mirdsl {want:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

/// `f(x: ty)`, whose body is `body` (ending in a `return`), under symbolic
/// sizes: its `value_and_grad` exports once, and that one model runs in
/// MindSpore, for an `x` of each of `shapes`, to what mirdsl computes.
pub(crate) fn export_once_runs_the_same_for_every_size(
    family: &str,
    ty: &str,
    body: &str,
    shapes: &[&[usize]],
) {
    let scratch =
        std::env::temp_dir().join(format!("mirdsl-grads-{family}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let source = scratch.join("symbolic.mir");
    std::fs::write(
        &source,
        format!(
            "graph f(x: {ty}) -> f32[] {{\n{body}\n}}\n\
             graph main(x: {ty}) {{\n  return value_and_grad(f)(x)\n}}\n"
        ),
    )
    .unwrap();
    let source = source.to_str().unwrap();
    let model = scratch.join("symbolic.mindir");
    ok(
        "export",
        mirdsl(&["export", source, "-o", model.to_str().unwrap()]),
    );
    let python = test_support::require(
        test_support::Tool::MindSpore,
        test_support::mindspore_python(),
    );
    for (k, shape) in shapes.iter().enumerate() {
        let x = floats("x", shape, 60 + k as u64);
        let npy = scratch.join(format!("x{k}.npy"));
        std::fs::write(&npy, tensor::npy::write(&x.value)).unwrap();
        let arg = format!("x={}", npy.display());
        let run = ok(
            "run",
            mirdsl(&[
                "run", source, "--entry", "main", "--format", "json", "--arg", &arg,
            ]),
        );
        let mut want = Vec::new();
        numbers(&serde_json::from_str(&run).unwrap(), &mut want);
        assert_eq!(want.len(), 1 + shape.iter().product::<usize>());
        let Some(python) = &python else { continue };
        let out = Command::new(python)
            .arg(dir().join("run_mindspore.py"))
            .arg(&model)
            .arg("1")
            .arg(&npy)
            .output()
            .expect("python runs");
        let v: serde_json::Value =
            serde_json::from_str(ok("MindSpore", out).lines().last().unwrap_or("[]")).unwrap();
        let mut got = Vec::new();
        numbers(&v, &mut got);
        assert!(
            close(&got, &want),
            "x of {shape:?}: MindSpore {got:?}, mirdsl {want:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
