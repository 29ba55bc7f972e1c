//! The README's "Scale out" recipe, run for real: data-parallel training steps
//! written in the DSL (`testdata/data_parallel`: an MLP with Momentum, a
//! transformer block with SGD, a CNN with synchronized batch norm and
//! Momentum) are exported, and MindSpore trains each on two workers launched
//! by `msrun` (on this machine's CPU, over loopback), each on half of every
//! batch. Their `AllReduce` of the gradients (and, for the batch norm, of the
//! statistics) makes every step the whole batch's, so the three losses, and
//! every weight after them, must equal `mirdsl run --steps 3` on the whole
//! batch in one process.
//!
//! Each step checks, trains and exports here; the MindSpore part is optional:
//! set `MIRDSL_MINDSPORE_PYTHON` to a python with `mindspore==2.10.0` (its
//! `msrun` is found beside it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

const BIN: &str = env!("CARGO_BIN_EXE_mirdsl");

/// One `msrun` at a time: each starts two workers and a scheduler, and the
/// machine's cores are few.
static MSRUN: Mutex<()> = Mutex::new(());

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(8118)
}

/// An input of a step: its name (for `mirdsl run --arg`) and value.
struct Input {
    name: &'static str,
    value: tensor::Tensor,
}

/// Deterministic values in `[lo, hi)`.
fn values(n: usize, seed: u64, lo: f64, hi: f64) -> Vec<f64> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            lo + (state >> 11) as f64 / (1u64 << 53) as f64 * (hi - lo)
        })
        .collect()
}

/// f32 values in [-1, 1).
fn floats(name: &'static str, shape: &[usize], seed: u64) -> Input {
    let data = values(shape.iter().product(), seed, -1.0, 1.0);
    Input {
        name,
        value: tensor::Tensor::from_f64(shape.to_vec(), data)
            .unwrap()
            .cast(tensor::DType::F32),
    }
}

/// `n` i32 class indices in `[0, classes)`.
fn classes(name: &'static str, n: usize, classes: usize, seed: u64) -> Input {
    let data = values(n, seed, 0.0, classes as f64)
        .into_iter()
        .map(f64::floor)
        .collect();
    Input {
        name,
        value: tensor::Tensor::from_f64(vec![n], data)
            .unwrap()
            .cast(tensor::DType::I32),
    }
}

fn ok(what: &str, out: Output) -> String {
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn mirdsl(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("mirdsl runs")
}

fn losses_of_json(text: &str) -> Vec<f64> {
    let v: serde_json::Value = serde_json::from_str(text.trim()).expect("JSON");
    v.as_array()
        .expect("one result per step")
        .iter()
        .map(|r| r["data"][0].as_f64().expect("a loss"))
        .collect()
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-5 * (1.0 + want.abs())
}

/// `testdata/data_parallel/<file>`'s `train_step`: checks, trains three steps
/// on the whole batch here (`world_size` 1), exports, and, with MindSpore,
/// trains the export on two workers (half the batch each) to the same losses
/// and weights.
fn trains_data_parallel(file: &str, inputs: &[Input]) {
    let case = file.trim_end_matches(".mir");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("data_parallel")
        .join(case);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let step = repo().join("testdata/data_parallel").join(file);
    let step = step.to_str().unwrap();
    let mut npys = Vec::new();
    let mut arg_flags = Vec::new();
    for input in inputs {
        let path = dir.join(format!("{}.npy", input.name));
        std::fs::write(&path, tensor::npy::write(&input.value)).unwrap();
        arg_flags.push(format!("{}={}", input.name, path.display()));
        npys.push(path);
    }
    arg_flags.push("world_size=1.0".to_string());

    ok("check", mirdsl(&["check", step]));
    let weights = dir.join("weights_here.safetensors");
    let mut run = vec![
        "run",
        step,
        "--entry",
        "train_step",
        "--steps",
        "3",
        "--format",
        "json",
        "--save-weights",
        weights.to_str().unwrap(),
    ];
    for a in &arg_flags {
        run.extend(["--arg", a]);
    }
    let want = losses_of_json(&ok("run", mirdsl(&run)));
    assert_eq!(want.len(), 3);
    assert!(
        want.iter().all(|l| l.is_finite()) && want[2] < want[0],
        "{file} trains: {want:?}"
    );
    let model = dir.join("step.mindir");
    ok(
        "export",
        mirdsl(&[
            "export",
            step,
            "--entry",
            "train_step",
            "-o",
            model.to_str().unwrap(),
        ]),
    );

    let Some(python) = test_support::require(
        test_support::Tool::MindSpore,
        test_support::mindspore_python(),
    ) else {
        return;
    };
    let msrun = Path::new(&python).with_file_name("msrun");
    if !test_support::require_that(
        test_support::Tool::MindSpore,
        msrun.is_file(),
        format_args!("no msrun beside {}", Path::new(&python).display()),
    ) {
        return;
    }
    let logs = dir.join("logs");
    let out = {
        let _one = MSRUN.lock().unwrap_or_else(|e| e.into_inner());
        Command::new(&msrun)
            .args(["--worker_num=2", "--local_worker_num=2", "--join=True"])
            .arg(format!("--master_port={}", free_port()))
            .arg(format!("--log_dir={}", logs.display()))
            .arg(repo().join("testdata/data_parallel/train.py"))
            .arg(&model)
            .arg("3")
            .args(&npys)
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    msrun.parent().unwrap().display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .output()
            .unwrap()
    };
    let log = std::fs::read_to_string(logs.join("worker_0.log")).unwrap_or_default();
    let printed = |tag: &str| {
        log.lines()
            .find_map(|l| l.strip_prefix(tag))
            .unwrap_or_else(|| {
                panic!(
                    "{file}: MindSpore's workers printed no {tag}(msrun: {}):\n{}",
                    out.status,
                    log.lines().rev().take(15).collect::<Vec<_>>().join("\n")
                )
            })
    };
    let got: Vec<f64> = serde_json::from_str(printed("losses ")).unwrap();
    eprintln!("{file}: mirdsl on the whole batch {want:?}, MindSpore on two workers {got:?}");
    assert_eq!(got.len(), want.len());
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            close(*g, *w),
            "{file}, step {k}: MindSpore on two workers {g}, mirdsl on the whole batch {w}"
        );
    }
    // Every weight MindSpore holds after the three steps (the exported step
    // keeps those it uses), as here.
    let theirs: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(printed("weights ")).unwrap();
    assert!(!theirs.is_empty());
    let ours = std::fs::read(&weights).unwrap();
    for (name, values) in &theirs {
        let here = tensor::safetensors::read(&ours, name)
            .unwrap_or_else(|e| panic!("{file}: weight {name}: {e}"))
            .to_f64_vec();
        let there: Vec<f64> = serde_json::from_value(values.clone()).unwrap();
        assert_eq!(here.len(), there.len(), "{file}: weight {name}");
        for (i, (g, w)) in there.iter().zip(&here).enumerate() {
            assert!(
                close(*g, *w),
                "{file}: weight {name}[{i}] after 3 steps: MindSpore on two workers {g}, mirdsl {w}"
            );
        }
    }
}

/// The MLP (`step.mir`): Momentum on the AllReduce'd gradients.
#[test]
fn exported_step_trains_data_parallel_in_mindspore() {
    trains_data_parallel(
        "step.mir",
        &[floats("x", &[8, 8], 1), floats("y", &[8, 4], 2)],
    );
}

/// A transformer block: self-attention (BatchMatMul, Softmax), LayerNorm, a
/// GeLU MLP and a classifier, SGD on the AllReduce'd gradients of 14 weights.
#[test]
fn transformer_block_trains_data_parallel_in_mindspore() {
    trains_data_parallel(
        "transformer_step.mir",
        &[floats("x", &[8, 6, 8], 3), classes("labels", 8, 4, 4)],
    );
}

/// A GRU classifier (the library's recursive `gru`, its gradient unrolled by
/// export): SGD on the AllReduce'd gradients of its 6 weights.
#[test]
fn gru_classifier_trains_data_parallel_in_mindspore() {
    trains_data_parallel(
        "gru_step.mir",
        &[floats("x", &[8, 5, 3], 5), classes("labels", 8, 3, 6)],
    );
}

/// A CNN whose batch norm trains with the global batch's statistics
/// (synchronized batch norm, AllReduce'd per-channel sums), and its running
/// statistics; Momentum on the AllReduce'd gradients.
#[test]
fn cnn_with_sync_batch_norm_trains_data_parallel_in_mindspore() {
    // In one process the step's synchronized batch norm is training-mode
    // `BatchNorm` (its output and unbiased variance).
    let step = repo().join("testdata/data_parallel/cnn_sync_bn_step.mir");
    let diff = ok(
        "run",
        mirdsl(&[
            "run",
            step.to_str().unwrap(),
            "--entry",
            "sync_batch_norm_vs_batch_norm",
            "--arg",
            "x=random",
            "--dim",
            "B=3",
            "--format",
            "json",
        ]),
    );
    let diff: serde_json::Value = serde_json::from_str(diff.trim()).unwrap();
    let diff = diff["data"][0].as_f64().unwrap();
    assert!(diff < 1e-5, "sync batch norm vs BatchNorm: {diff}");
    trains_data_parallel(
        "cnn_sync_bn_step.mir",
        &[floats("x", &[8, 1, 8, 8], 5), classes("labels", 8, 10, 6)],
    );
}
