//! Programs across files end to end (`docs/language.md` §10): the model of
//! `testdata/multifile` checks, runs, differentiates and exports as one
//! program, the export runs again to the same numbers, and import errors are
//! on the import line.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_mirdsl");

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/multifile")
}

fn mirdsl(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("mirdsl runs")
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "failed: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mirdsl-multi-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const X: &str =
    "x=[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [0.5, -0.5, 0.5, -0.5, 0.5, -0.5, 0.5, -0.5]]";

fn numbers(json: &str) -> Vec<f64> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    fn walk(v: &serde_json::Value, out: &mut Vec<f64>) {
        match v {
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            serde_json::Value::Object(o) => {
                if let Some(d) = o.get("data") {
                    walk(d, out)
                } else if let Some(x) = o.get("value") {
                    walk(x, out)
                }
            }
            serde_json::Value::Number(n) => out.push(n.as_f64().unwrap()),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(&v, &mut out);
    out
}

#[test]
fn the_model_split_over_files_checks_runs_differentiates_and_exports() {
    let dir = testdata();
    let model = dir.join("model.mir");
    let model = model.to_str().unwrap();
    // check: the folder as a workspace, and the model alone.
    ok(&mirdsl(&["check", dir.to_str().unwrap()]));
    ok(&mirdsl(&["check", model]));
    // run: the layers' weights come from layers.mir.
    let out = ok(&mirdsl(&["run", model, "--arg", X, "--format", "json"]));
    let probs = numbers(&out);
    assert_eq!(probs.len(), 8);
    assert!(
        (probs[..4].iter().sum::<f64>() - 1.0).abs() < 1e-5,
        "{probs:?}"
    );
    // The gradient with respect to imported weights, by their names here.
    let out = ok(&mirdsl(&[
        "run",
        model,
        "--entry",
        "train_grads",
        "--arg",
        X,
        "--arg",
        "labels=[1, 3]",
        "--format",
        "json",
    ]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["shape"], serde_json::json!([16, 8]));
    assert_eq!(v[1]["shape"], serde_json::json!([4]));
    // grad prints a program in the global names.
    let out = ok(&mirdsl(&["grad", model, "--entry", "loss"]));
    assert!(out.contains("layers.fc1.weight"), "{out}");
    // ir and dot show the imported graphs.
    let out = ok(&mirdsl(&["ir", model]));
    assert!(out.contains("graph layers.mlp("), "{out}");
    assert!(out.contains("graph cross_entropy("), "{out}");
    let out = ok(&mirdsl(&["dot", model, "--entry", "main"]));
    assert!(out.contains("layers.mlp"), "{out}");
    // export: one self-contained model; imported again, it runs to the
    // same numbers.
    let tmp = scratch("export");
    let mindir = tmp.join("model.mindir");
    ok(&mirdsl(&[
        "export",
        model,
        "--entry",
        "main",
        "-o",
        mindir.to_str().unwrap(),
    ]));
    let again = tmp.join("again.mir");
    ok(&mirdsl(&[
        "import",
        mindir.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]));
    let x0 = X.replacen("x=", "0=", 1);
    let out = ok(&mirdsl(&[
        "run",
        again.to_str().unwrap(),
        "--arg",
        &x0,
        "--format",
        "json",
    ]));
    let reimported = numbers(&out);
    assert_eq!(reimported.len(), probs.len());
    for (a, b) in reimported.iter().zip(&probs) {
        assert!((a - b).abs() < 1e-6, "{reimported:?} vs {probs:?}");
    }
}

#[test]
fn import_errors_are_on_the_import_line() {
    let dir = scratch("errors");
    std::fs::write(
        dir.join("a.mir"),
        "import \"b.mir\"\nimport \"nope.mir\"\ngraph f(x) { return x }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("b.mir"),
        "import \"a.mir\"\ngraph g(x) { return x }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("c.mir"),
        "import \"d.mir\"\nimport \"e.mir\"\ngraph main(x) { return h(x) }\n",
    )
    .unwrap();
    std::fs::write(dir.join("d.mir"), "graph h(x) { return x }\n").unwrap();
    std::fs::write(dir.join("e.mir"), "graph h(x) { return -x }\n").unwrap();
    let o = mirdsl(&["check", "--format", "json", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut got: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let file = Path::new(d["file"].as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            format!("{file}:{} {}", d["line"], d["code"].as_str().unwrap())
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            "a.mir:1 E0105",
            "a.mir:2 E0104",
            "b.mir:1 E0105",
            "c.mir:2 E0106"
        ]
    );
    // A command that runs refuses, naming the errors.
    let o = mirdsl(&["run", dir.join("c.mir").to_str().unwrap(), "--arg", "x=1.0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("E0106"));
}

/// `@std/` paths name the standard library (here a folder given by
/// `$MIRDSL_STD`); a file imported along two paths is one module.
#[test]
fn std_paths_and_one_module_per_file() {
    let dir = scratch("std");
    let std = dir.join("std");
    std::fs::create_dir_all(std.join("nn")).unwrap();
    std::fs::write(
        std.join("nn/scale.mir"),
        "param s: f32[] = constant(2.0)\ngraph scale(x) { return x * s }\n",
    )
    .unwrap();
    let app = dir.join("app");
    std::fs::create_dir_all(app.join("sub")).unwrap();
    std::fs::write(
        app.join("sub/twice.mir"),
        "import \"@std/nn/scale.mir\" as nn\ngraph twice(x) { return nn.scale(nn.scale(x)) }\n",
    )
    .unwrap();
    std::fs::write(
        app.join("main.mir"),
        "import \"@std/nn/scale.mir\" as nn\nimport \"sub/../sub/twice.mir\"\n\
         graph main(x: f32[2]) { return (nn.scale(x), twice(x), grad(fn(y) => ReduceSum(nn.scale(y) * nn.s), wrt=(nn.s,))(x)) }\n",
    )
    .unwrap();
    let out = Command::new(BIN)
        .args([
            "run",
            app.join("main.mir").to_str().unwrap(),
            "--arg",
            "x=[1.0, 3.0]",
            "--format",
            "json",
        ])
        .env("MIRDSL_STD", &std)
        .output()
        .unwrap();
    let out = ok(&out);
    // One weight `nn.s` for both files: scale, scale twice, and d/ds of sum(x*s*s) = 2*s*sum(x).
    assert_eq!(numbers(&out), [2.0, 6.0, 4.0, 12.0, 16.0], "{out}");
    let o = Command::new(BIN)
        .args(["check", app.to_str().unwrap()])
        .env("MIRDSL_STD", &std)
        .output()
        .unwrap();
    ok(&o);
}

/// The standard library shipped with mirdsl (`lib/`), imported by `@std/`
/// paths: every file at once (no clash), and the example of `lib/README.md`
/// checks and runs.
#[test]
fn the_standard_library_imports() {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../lib/nn");
    let mut names: Vec<String> = std::fs::read_dir(&lib)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".mir"))
        .collect();
    names.sort();
    assert!(!names.is_empty());
    let dir = scratch("stdlib");
    let all: String = names
        .iter()
        .map(|n| format!("import \"@std/nn/{n}\"\n"))
        .collect();
    std::fs::write(
        dir.join("all.mir"),
        format!("{all}graph main(x) {{ return x }}\n"),
    )
    .unwrap();
    let o = mirdsl(&["check", dir.join("all.mir").to_str().unwrap()]);
    ok(&o);
    let readme = "import \"@std/nn/dense.mir\"\nimport \"@std/nn/loss.mir\"\n\n\
        param fc.weight: f32[10, 784] = normal(std=0.01, seed=1)\nparam fc.bias: f32[10] = zeros\n\n\
        graph loss(x: f32[B, 784], labels: i32[B]) -> f32[] {\n  \
        return sparse_softmax_cross_entropy(dense(x, fc.weight, fc.bias), labels)\n}\n";
    std::fs::write(dir.join("model.mir"), readme).unwrap();
    let model = dir.join("model.mir");
    ok(&mirdsl(&["check", model.to_str().unwrap()]));
    let out = ok(&mirdsl(&[
        "run",
        model.to_str().unwrap(),
        "--dim",
        "B=2",
        "--arg",
        "x=zeros",
        "--arg",
        "labels=zeros",
        "--format",
        "json",
    ]));
    // Zero inputs and biases: uniform logits over 10 classes.
    let loss = numbers(&out)[0];
    assert!((loss - 10f64.ln()).abs() < 1e-5, "{out}");
}
