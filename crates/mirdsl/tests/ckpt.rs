//! MindSpore checkpoints (`.ckpt`): `--load-weights`, `--save-weights` and
//! `load("m.ckpt", "name")` read and write MindSpore's `Checkpoint` protobuf,
//! keyed by parameter names, each dtype kept (float16 and bfloat16 too).
//!
//! `data/ckpt/small.ckpt` was written by MindSpore 2.10's `save_checkpoint`
//! (`data/ckpt/make_small.py`): it loads, and saving it back gives the same
//! bytes. With `MIRDSL_MINDSPORE_PYTHON`, a fresh file from MindSpore loads
//! too and `mindspore.load_checkpoint` reads what `--save-weights` wrote.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_mirdsl");

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ckpt")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mirdsl-ckpt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn mirdsl(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .current_dir(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("mirdsl runs")
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn fails(o: &Output) -> String {
    assert!(
        !o.status.success(),
        "should fail: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The values small.ckpt holds, as `run --format json` prints them.
const SMALL_JSON: &str = r#"[{"data":[0.0,0.1428571492433548,0.2857142984867096,0.4285714328289032,0.5714285969734192,0.7142857313156128],"dtype":"f32","shape":[2,3]},{"data":[1.5,-2.25,3.0],"dtype":"f16","shape":[3]},{"data":[0.10009765625,0.2001953125,0.30078125,0.400390625],"dtype":"bf16","shape":[4]},{"data":[4,5],"dtype":"i32","shape":[2]},{"data":[3],"dtype":"i64","shape":[]}]"#;

fn setup(name: &str) -> PathBuf {
    let d = scratch(name);
    for f in ["small.ckpt", "small.mir"] {
        std::fs::copy(data().join(f), d.join(f)).unwrap();
    }
    d
}

#[test]
fn mindspore_checkpoint_loads_and_saves_back_byte_for_byte() {
    let d = setup("small");
    let out = ok(&mirdsl(
        &d,
        &[
            "run",
            "small.mir",
            "--load-weights",
            "small.ckpt",
            "--save-weights",
            "back.ckpt",
            "--format",
            "json",
        ],
    ));
    assert_eq!(out.trim(), SMALL_JSON);
    assert_eq!(
        std::fs::read(d.join("back.ckpt")).unwrap(),
        std::fs::read(d.join("small.ckpt")).unwrap(),
        "the checkpoint written is MindSpore's, byte for byte"
    );
    // Through safetensors too, dtypes kept.
    ok(&mirdsl(
        &d,
        &[
            "run",
            "small.mir",
            "--load-weights",
            "small.ckpt",
            "--save-weights",
            "w.safetensors",
        ],
    ));
    let out = ok(&mirdsl(
        &d,
        &[
            "run",
            "small.mir",
            "--load-weights",
            "w.safetensors",
            "--format",
            "json",
        ],
    ));
    assert_eq!(out.trim(), SMALL_JSON);
    let _ = std::fs::remove_dir_all(&d);
}

/// A folder of NAME.npy files (a directory, or a path ending in `/`): one
/// file per parameter, bfloat16 kept as float32 (NumPy has none) and rounded
/// back on loading; a mismatch names the parameter and its file.
#[test]
fn a_folder_of_npy_files_holds_the_weights() {
    let d = setup("npy");
    ok(&mirdsl(
        &d,
        &[
            "run",
            "small.mir",
            "--load-weights",
            "small.ckpt",
            "--save-weights",
            "w/",
        ],
    ));
    let mut files: Vec<String> = std::fs::read_dir(d.join("w"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert!(files.contains(&"fc.weight.npy".to_string()), "{files:?}");
    assert!(files.iter().all(|f| f.ends_with(".npy")), "{files:?}");
    let f16 = tensor::npy::read(&std::fs::read(d.join("w/fc.bias.npy")).unwrap()).unwrap();
    assert_eq!(f16.dtype(), tensor::DType::F16, "float16 keeps its dtype");
    let out = ok(&mirdsl(
        &d,
        &[
            "run",
            "small.mir",
            "--load-weights",
            "w",
            "--format",
            "json",
        ],
    ));
    assert_eq!(out.trim(), SMALL_JSON);
    std::fs::write(
        d.join("w/fc.weight.npy"),
        tensor::npy::write(&tensor::Tensor::zeros(tensor::DType::F32, vec![3, 2])),
    )
    .unwrap();
    let e = fails(&mirdsl(&d, &["run", "small.mir", "--load-weights", "w"]));
    assert!(
        e.contains("parameter `fc.weight` has shape [3, 2] in the file"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn dsl_load_reads_a_parameter() {
    let d = setup("dsl");
    std::fs::write(
        d.join("p.mir"),
        "param b: f16[3] = load(\"small.ckpt\", \"fc.bias\")\nparam g: bf16[4] = load(\"small.ckpt\", \"norm.gamma\")\ngraph main() { return (b, g) }\n",
    )
    .unwrap();
    let out = ok(&mirdsl(&d, &["run", "p.mir", "--format", "json"]));
    assert_eq!(
        out.trim(),
        r#"[{"data":[1.5,-2.25,3.0],"dtype":"f16","shape":[3]},{"data":[0.10009765625,0.2001953125,0.30078125,0.400390625],"dtype":"bf16","shape":[4]}]"#
    );
    for (src, says) in [
        (
            "param b: f32[3] = load(\"small.ckpt\", \"fc.bias\")",
            "holds f16 data but `b` is declared f32[3]",
        ),
        (
            "param b: f16[2] = load(\"small.ckpt\", \"fc.bias\")",
            "has shape [3] but `b` is declared f16[2]",
        ),
        (
            "param b: f16[3] = load(\"small.ckpt\", \"fc.bais\")",
            "no parameter `fc.bais` (it has `fc.weight`, `fc.bias`",
        ),
        (
            "param b: f16[3] = load(\"small.ckpt\")",
            "name the parameter",
        ),
    ] {
        std::fs::write(
            d.join("e.mir"),
            format!("{src}\ngraph main() {{ return b }}\n"),
        )
        .unwrap();
        let e = fails(&mirdsl(&d, &["run", "e.mir"]));
        assert!(e.contains(says), "{src}: {e}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn mismatches_name_the_parameter() {
    let d = setup("mismatch");
    let src = std::fs::read_to_string(d.join("small.mir")).unwrap();
    for (from, to, says) in [
        ("fc.bias: f16[3]", "fc.bias: f32[3]", "parameter `fc.bias` is f16 in the file, but the weight is declared f32[3]"),
        ("fc.weight: f32[2, 3]", "fc.weight: f32[3, 2]", "parameter `fc.weight` has shape [2, 3] in the file, but the weight is declared f32[3, 2]"),
        ("param ids", "param idx", "parameter `ids` is not a weight of the program"),
    ] {
        let changed = src.replace(from, to);
        let changed = if to == "param idx" {
            changed.replace(", ids,", ", idx,")
        } else {
            changed
        };
        std::fs::write(d.join("m.mir"), changed).unwrap();
        let e = fails(&mirdsl(&d, &["run", "m.mir", "--load-weights", "small.ckpt"]));
        assert!(e.contains(says), "{to}: {e}");
    }
    std::fs::write(d.join("junk.ckpt"), b"not a checkpoint at all").unwrap();
    let e = fails(&mirdsl(
        &d,
        &["run", "small.mir", "--load-weights", "junk.ckpt"],
    ));
    assert!(
        e.contains("junk.ckpt") && e.contains("not a MindSpore checkpoint"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn training_resumes_from_a_checkpoint() {
    let d = scratch("train");
    std::fs::write(
        d.join("t.mir"),
        "param w: f16[2] = constant(1.0)\ngraph main(x: f16[2]) {\n  Assign(w, w * x)\n  return w\n}\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "t.mir", "--arg", "x=[2.0, 0.5]", "--format", "json"];
        args.extend_from_slice(extra);
        ok(&mirdsl(&d, &args))
    };
    let two = run(&["--steps", "2", "--save-weights", "w.ckpt"]);
    assert!(
        two.contains(r#"{"data":[4.0,0.25],"dtype":"f16","shape":[2]}"#),
        "{two}"
    );
    let third = run(&["--load-weights", "w.ckpt"]);
    assert_eq!(
        third.trim(),
        r#"{"data":[8.0,0.125],"dtype":"f16","shape":[2]}"#
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn mindspore_reads_and_writes_the_same_checkpoints() {
    let Some(python) = test_support::require(
        test_support::Tool::MindSpore,
        test_support::mindspore_python(),
    ) else {
        return;
    };
    let d = setup("mindspore");
    let made = Command::new(&python)
        .arg(data().join("make_small.py"))
        .arg(d.join("fresh.ckpt"))
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let out = ok(&mirdsl(
        &d,
        &[
            "run",
            "small.mir",
            "--load-weights",
            "fresh.ckpt",
            "--save-weights",
            "ours.ckpt",
            "--format",
            "json",
        ],
    ));
    assert_eq!(out.trim(), SMALL_JSON);
    let read = Command::new(&python)
        .arg(data().join("read_ckpt.py"))
        .arg(d.join("ours.ckpt"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&read.stdout);
    assert!(
        read.status.success(),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "fc.weight Float32 [2, 3] [0.0, 0.1428571492433548, 0.2857142984867096, 0.4285714328289032, 0.5714285969734192, 0.7142857313156128]",
            "fc.bias Float16 [3] [1.5, -2.25, 3.0]",
            "norm.gamma BFloat16 [4] [0.10009765625, 0.2001953125, 0.30078125, 0.400390625]",
            "ids Int32 [2] [4.0, 5.0]",
            "step Int64 [] [3.0]",
        ]
    );
    let _ = std::fs::remove_dir_all(&d);
}
