//! The README's "Scale out" recipe, run for real: a data-parallel training step
//! written in the DSL (`testdata/data_parallel/step.mir`) is exported, and
//! MindSpore trains it on two workers launched by `msrun` (on this machine's
//! CPU, over loopback), each on half of every batch. Their `AllReduce` of the
//! gradients makes every step the full batch's, so the losses must equal
//! `mirdsl run --steps` on the whole batch in one process.
//!
//! Optional: set `MIRDSL_MINDSPORE_PYTHON` to a python with `mindspore==2.10.0`
//! (its `msrun` is found beside it).

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_mirdsl");

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(8118)
}

/// A small `.npy` of f32 values (row-major), written without NumPy.
fn write_npy(path: &Path, shape: &[usize], seed: u64) {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let data: Vec<f32> = (0..shape.iter().product::<usize>())
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) as f32
        })
        .collect();
    let t = tensor::Tensor::from_f32(shape.to_vec(), data).unwrap();
    std::fs::write(path, tensor::npy::write(&t)).unwrap();
}

fn losses_of_json(text: &str) -> Vec<f64> {
    let v: serde_json::Value = serde_json::from_str(text.trim()).expect("JSON");
    v.as_array()
        .expect("one result per step")
        .iter()
        .map(|r| r["data"][0].as_f64().expect("a loss"))
        .collect()
}

#[test]
fn exported_step_trains_data_parallel_in_mindspore() {
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
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("data_parallel");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let step = repo().join("testdata/data_parallel/step.mir");
    let (x, y, model) = (
        dir.join("x.npy"),
        dir.join("y.npy"),
        dir.join("step.mindir"),
    );
    write_npy(&x, &[8, 8], 1);
    write_npy(&y, &[8, 4], 2);

    let out = Command::new(BIN)
        .args(["export"])
        .arg(&step)
        .args(["--entry", "train_step", "-o"])
        .arg(&model)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = Command::new(BIN)
        .arg("run")
        .arg(&step)
        .args(["--entry", "train_step", "--steps", "3", "--format", "json"])
        .arg("--arg")
        .arg(format!("x={}", x.display()))
        .arg("--arg")
        .arg(format!("y={}", y.display()))
        .args(["--arg", "world_size=1.0"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = losses_of_json(&String::from_utf8_lossy(&out.stdout));

    let logs = dir.join("logs");
    let out = Command::new(&msrun)
        .args(["--worker_num=2", "--local_worker_num=2", "--join=True"])
        .arg(format!("--master_port={}", free_port()))
        .arg(format!("--log_dir={}", logs.display()))
        .arg(repo().join("testdata/data_parallel/train.py"))
        .arg(&model)
        .arg(&x)
        .arg(&y)
        .arg("3")
        .env(
            "PATH",
            format!(
                "{}:{}",
                msrun.parent().unwrap().display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .output()
        .unwrap();
    let log = std::fs::read_to_string(logs.join("worker_0.log")).unwrap_or_default();
    let line = log
        .lines()
        .find(|l| l.starts_with("losses "))
        .unwrap_or_else(|| {
            panic!(
                "MindSpore's workers printed no losses (msrun: {}):\n{}",
                out.status,
                log.lines().rev().take(15).collect::<Vec<_>>().join("\n")
            )
        });
    let got: Vec<f64> = serde_json::from_str(&line["losses ".len()..]).unwrap();
    assert_eq!(got.len(), want.len());
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-5 * (1.0 + w.abs()),
            "step {k}: MindSpore on two workers {g}, mirdsl on the whole batch {w}"
        );
    }
}
