//! Training steps written as a user writes them (`testdata/training`: a CNN
//! with Momentum, a transformer encoder with SGD, a residual block with
//! Adam, an LSTM with Adam; and held-out ones: a CNN with batch norm, dropout,
//! average pooling and Adam, a GRU classifier with SGD, a hand-written
//! transformer block with AdamW): each checks, trains for three steps, exports to a `.mindir`, and
//! the exported step imports back and trains to the same losses.
//!
//! With `MIRDSL_MINDSPORE_PYTHON` naming a python with MindSpore 2.10, the
//! exported step also runs in MindSpore (`testdata/training/run_mindspore.py`)
//! and its three losses match `mirdsl run --steps 3`.
//!
//! [`gradients`]: the gradient of one operation at a time, whose registry
//! helpers export written with MindSpore primitives.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod bench;
mod gradients;
mod steps;

const BIN: &str = env!("CARGO_BIN_EXE_mirdsl");

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/training")
}

fn mirdsl(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("mirdsl runs")
}

fn ok(what: &str, o: Output) -> String {
    assert!(
        o.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// An input of a step: its name and value.
struct Input {
    name: &'static str,
    value: tensor::Tensor,
}

/// Deterministic values in `[lo, hi)` (integers: floored).
fn values(n: usize, seed: u64, lo: f64, hi: f64, int: bool) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(1);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let u = (s >> 11) as f64 / (1u64 << 53) as f64;
            let v = lo + u * (hi - lo);
            if int {
                v.floor()
            } else {
                v
            }
        })
        .collect()
}

fn floats(name: &'static str, shape: &[usize], seed: u64) -> Input {
    let n = shape.iter().product();
    let data = values(n, seed, -1.0, 1.0, false);
    Input {
        name,
        value: tensor::Tensor::from_f64(shape.to_vec(), data)
            .unwrap()
            .cast(tensor::DType::F32),
    }
}

fn classes(name: &'static str, n: usize, classes: usize, seed: u64) -> Input {
    let data = values(n, seed, 0.0, classes as f64, true);
    Input {
        name,
        value: tensor::Tensor::from_f64(vec![n], data)
            .unwrap()
            .cast(tensor::DType::I32),
    }
}

fn scalar(name: &'static str, v: f64) -> Input {
    Input {
        name,
        value: tensor::Tensor::from_f64(vec![], vec![v])
            .unwrap()
            .cast(tensor::DType::F32),
    }
}

fn losses(json: &str) -> Vec<f64> {
    let v: serde_json::Value = serde_json::from_str(json.trim()).expect("JSON");
    v.as_array()
        .unwrap()
        .iter()
        .map(|l| match l {
            serde_json::Value::Number(n) => n.as_f64().unwrap(),
            other => other["data"][0].as_f64().unwrap(),
        })
        .collect()
}

fn close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= 1e-4 * (1.0 + x.abs().max(y.abs())))
}

/// Every number of a `mirdsl run --format json` value (tuples flattened).
fn numbers(v: &serde_json::Value, out: &mut Vec<f64>) {
    match v {
        serde_json::Value::Array(items) => items.iter().for_each(|i| numbers(i, out)),
        serde_json::Value::Number(n) => out.push(n.as_f64().unwrap()),
        other => match (&other["data"], &other["value"]) {
            (serde_json::Value::Array(d), _) => out.extend(d.iter().map(|x| x.as_f64().unwrap())),
            (_, serde_json::Value::Number(n)) => out.push(n.as_f64().unwrap()),
            _ => {}
        },
    }
}
