//! `mirdsl run` end to end: arguments, output formats, exit codes, faults.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_mirdsl");

/// A fresh directory for one test, with `prog.mir` holding `src`.
fn setup(name: &str, src: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mirdsl-run-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("prog.mir"), src).unwrap();
    dir
}

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("run")
        .arg(dir.join("prog.mir"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("mirdsl runs")
}

/// Writes the value of a DSL literal as `dir/name`.
fn npy(dir: &Path, name: &str, literal: &str) {
    let v = exec::args::literal_value(literal).unwrap();
    let tmp = dir.join(format!("{name}.d"));
    let paths = exec::output::write_npy(&v, &tmp).unwrap();
    std::fs::rename(&paths[0], dir.join(name)).unwrap();
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const PROGRAM: &str = r#"
param w: f32[2, 3] = ones

graph func_outer(a, b) {
  graph func_inner(c) { return a + b + c }
  return func_inner
}

graph closure() {
  f = func_outer(1, 2)
  return (f(1), f(2))
}

graph loss(x: f32[B, 3], labels: i32[B]) -> f32[] {
  logits = MatMul(x, w, transpose_b=true)
  return SparseSoftmaxCrossEntropyWithLogits(logits, labels)
}

graph echo(x: f32[B, 3], labels: i32[B]) {
  return (x, labels)
}

graph bad(x) {
  y = Reshape(x, (5,))
  return y
}

graph down(n: i64) -> i64 {
  r = if n == 0 { 0 } else { down(n - 1) }
  return r
}

graph last(n: i64) {
  return n * 2
}
"#;

#[test]
fn json_output_of_scalars_and_tuples() {
    let dir = setup("json", PROGRAM);
    let o = run(&dir, &["--entry", "closure", "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o).trim(),
        r#"[{"dtype":"i64","value":4},{"dtype":"i64","value":5}]"#
    );
}

#[test]
fn default_entry_is_main_else_the_last_graph() {
    let dir = setup("default", PROGRAM);
    let o = run(&dir, &["--arg", "n=21", "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), r#"{"dtype":"i64","value":42}"#);
    let with_main = format!("{PROGRAM}\ngraph main() {{ return 7 }}\n");
    let dir = setup("main", &with_main);
    let o = run(&dir, &["--format", "json"]);
    assert_eq!(stdout(&o).trim(), r#"{"dtype":"i64","value":7}"#);
}

#[test]
fn literal_arguments_take_the_declared_dtype() {
    let dir = setup("literal", PROGRAM);
    let o = run(
        &dir,
        &[
            "--entry",
            "echo",
            "--arg",
            "0=[[1, 2, 3]]",
            "--arg",
            "labels=[2]",
            "--format",
            "json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o).trim(),
        r#"[{"data":[1.0,2.0,3.0],"dtype":"f32","shape":[1,3]},{"data":[2],"dtype":"i32","shape":[1]}]"#
    );
}

#[test]
fn npy_arguments_and_out_dir() {
    let dir = setup("npy", PROGRAM);
    npy(&dir, "x.npy", "[[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]");
    npy(&dir, "labels.npy", "Cast([0, 1], i32)");
    let o = run(
        &dir,
        &[
            "--entry",
            "loss",
            "--arg",
            "x=x.npy",
            "--arg",
            "labels=labels.npy",
            "--out-dir",
            "out",
            "--format",
            "json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Equal logits: the loss is ln 2.
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let loss = v["data"][0].as_f64().unwrap();
    assert!((loss - 2f64.ln()).abs() < 1e-6, "{v}");
    let written = std::fs::read(dir.join("out/out_0.npy")).unwrap();
    assert!(written.starts_with(b"\x93NUMPY"));
    assert!(String::from_utf8_lossy(&written).contains("'shape': ()"));

    // The wrong dtype in a file is an input fault.
    npy(
        &dir,
        "x64.npy",
        "Cast([[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]], f64)",
    );
    let o = run(
        &dir,
        &[
            "--entry",
            "loss",
            "--arg",
            "x=x64.npy",
            "--arg",
            "labels=labels.npy",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("f64"), "{}", stderr(&o));

    // So is a missing file.
    let o = run(
        &dir,
        &[
            "--entry",
            "loss",
            "--arg",
            "x=nope.npy",
            "--arg",
            "labels=labels.npy",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("nope.npy"), "{}", stderr(&o));
}

#[test]
fn fillers_use_dims() {
    let dir = setup("fill", PROGRAM);
    let o = run(
        &dir,
        &[
            "--entry",
            "echo",
            "--arg",
            "x=ones",
            "--arg",
            "labels=zeros",
            "--dim",
            "B=2",
            "--format",
            "json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains(r#""shape":[2,3]"#));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    // A size for a dimension no parameter has: said, not silently ignored.
    let o = run(
        &dir,
        &[
            "--entry",
            "echo",
            "--arg",
            "x=ones",
            "--arg",
            "labels=zeros",
            "--dim",
            "B=2",
            "--dim",
            "Q=7",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("warning: `--dim Q=...` is not used: no parameter of `echo` has a dimension `Q` (its dimensions: B)"),
        "{}",
        stderr(&o)
    );
    let o = run(
        &dir,
        &[
            "--entry",
            "echo",
            "--arg",
            "x=random",
            "--arg",
            "labels=zeros",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--dim B="), "{}", stderr(&o));
}

#[test]
fn missing_and_unknown_arguments_are_usage_errors() {
    let dir = setup("missing", PROGRAM);
    let o = run(&dir, &["--entry", "loss"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("`x`, `labels`"), "{}", stderr(&o));
    let o = run(&dir, &["--entry", "loss", "--arg", "y=1"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&dir, &["--entry", "nope"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn run_time_faults_show_the_source() {
    let dir = setup("fault", PROGRAM);
    let o = run(&dir, &["--entry", "bad", "--arg", "x=[1.0, 2.0]"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("run-time fault"), "{err}");
    assert!(err.contains("prog.mir:24:7"), "{err}");
    assert!(err.contains("Reshape(x, (5,))"), "{err}");
    assert!(stdout(&o).is_empty());

    let o = run(
        &dir,
        &["--entry", "down", "--arg", "n=1000", "--max-depth", "100"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("recursion too deep"), "{}", stderr(&o));
    let o = run(
        &dir,
        &["--entry", "down", "--arg", "n=1000", "--format", "json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn check_errors_stop_the_run() {
    let dir = setup(
        "check",
        "graph main(x: f32[3]) {\n  return Add(x, undefined_name)\n}\n",
    );
    let o = run(&dir, &["--arg", "x=[1.0, 2.0, 3.0]"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("undefined_name"), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
}

/// Whether this machine can run the GPU backend (the CLI tests below assert
/// the no-driver behaviour only where there is none).
fn gpu_present() -> bool {
    gpu::probe::all().is_ok()
}

#[test]
fn gpu_without_a_driver_is_an_error_naming_what_is_missing() {
    if gpu_present() {
        test_support::skip("this machine has a usable GPU");
        return;
    }
    let dir = setup("gpu", PROGRAM);
    let o = run(
        &dir,
        &["--entry", "last", "--arg", "n=1", "--device", "gpu"],
    );
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.starts_with("error: --device gpu: "), "{err}");
    let named = ["libcuda.so", "no usable GPU", "libnvrtc.so", "libcublas.so"];
    assert!(named.iter().any(|n| err.contains(n)), "{err}");
    assert!(stdout(&o).is_empty());
}

#[test]
fn device_auto_falls_back_to_the_cpu_and_says_why() {
    let dir = setup("auto", PROGRAM);
    let o = run(
        &dir,
        &[
            "--entry",
            "last",
            "--arg",
            "n=1",
            "--device",
            "auto",
            "--verbose",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let cpu = run(&dir, &["--entry", "last", "--arg", "n=1"]);
    assert_eq!(stdout(&o), stdout(&cpu));
    let err = stderr(&o);
    if gpu_present() {
        assert!(err.contains("device: gpu"), "{err}");
    } else {
        assert!(err.contains("device: cpu (--device auto: "), "{err}");
    }
}

#[test]
fn gpu_results_match_the_cpu_where_there_is_a_gpu() {
    if test_support::require(test_support::Tool::Gpu, gpu::probe::all()).is_none() {
        return;
    }
    let dir = setup("gpu-run", PROGRAM);
    let args = [
        "--entry",
        "loss",
        "--arg",
        "x=[[1.5, -2, 3], [0.5, 1, -1]]",
        "--arg",
        "labels=[1, 0]",
        "--format",
        "json",
    ];
    let cpu = run(&dir, &args);
    let mut with_gpu = args.to_vec();
    with_gpu.extend(["--device", "gpu", "--verbose"]);
    let o = run(&dir, &with_gpu);
    assert!(o.status.success(), "{}", stderr(&o));
    let value = |o: &Output| -> f64 {
        let v: serde_json::Value = serde_json::from_str(&stdout(o)).unwrap();
        v["value"]
            .as_f64()
            .or_else(|| v["data"][0].as_f64())
            .unwrap()
    };
    assert!(
        (value(&cpu) - value(&o)).abs() < 1e-5,
        "{} vs {}",
        stdout(&cpu),
        stdout(&o)
    );
    let err = stderr(&o);
    assert!(
        err.contains("device: gpu") && err.contains("gpu: on the GPU: "),
        "{err}"
    );
    assert!(err.contains("MatMul x1"), "{err}");
}

#[test]
fn verbose_names_the_device() {
    let dir = setup("verbose", PROGRAM);
    let o = run(
        &dir,
        &["--entry", "last", "--arg", "n=1", "--device", "cpu", "-v"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("device: cpu"), "{}", stderr(&o));
}

#[test]
fn text_output() {
    let dir = setup("text", PROGRAM);
    let o = run(
        &dir,
        &[
            "--entry",
            "echo",
            "--arg",
            "x=[[1.5, -2, 3]]",
            "--arg",
            "labels=[1]",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "(\n  [[ 1.5, -2.0,  3.0]],  # f32[1, 3]\n  [1],  # i32[1]\n)\n"
    );
}

#[test]
fn spec_examples_run() {
    let Some(src) = test_support::require(
        test_support::Tool::Testdata,
        test_support::testdata("spec_examples.mir"),
    ) else {
        return;
    };
    let dir = setup("spec", &src);
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "test_f",
            &["--arg", "x=[1.0, 2.0, 3.0]", "--arg", "y=[4.0, 5.0, 6.0]"],
            r#"{"data":[0.0,1.0,2.0],"dtype":"f32","shape":[3]}"#,
        ),
        (
            "hof",
            &["--arg", "x=[1.0, 2.0]"],
            r#"{"data":[16.0,25.0],"dtype":"f32","shape":[2]}"#,
        ),
        (
            "fibonacci",
            &["--arg", "n=12"],
            r#"{"dtype":"i64","value":144}"#,
        ),
        (
            "ms_closure",
            &[],
            r#"[{"dtype":"i64","value":4},{"dtype":"i64","value":5}]"#,
        ),
        (
            "loss",
            &["--arg", "x=zeros", "--arg", "labels=[1, 2]"],
            r#"{"data":[2.3025851249694824],"dtype":"f32","shape":[]}"#,
        ),
        (
            "train_grads",
            &["--arg", "x=random", "--arg", "labels=[3, 4]"],
            "",
        ),
    ];
    for (entry, args, expected) in cases {
        let mut all = vec!["--entry", entry, "--format", "json"];
        all.extend_from_slice(args);
        let o = run(&dir, &all);
        assert!(o.status.success(), "{entry}: {}", stderr(&o));
        if !expected.is_empty() {
            assert_eq!(stdout(&o).trim(), *expected, "{entry}");
        }
    }
}

/// `check` on a directory without `.mir` files says so (a CI step pointed at
/// the wrong path must not pass in silence).
#[test]
fn check_of_a_directory_without_programs_warns() {
    let dir = setup("empty-check", PROGRAM);
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let o = Command::new(BIN)
        .arg("check")
        .arg(&empty)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains(&format!(
            "warning: no `.mir` files under {}",
            empty.display()
        )),
        "{}",
        stderr(&o)
    );
}
