//! `bench run`: execution speed and memory of training steps
//! (`value_and_grad` over every weight), each next to JAX and MindSpore in the
//! same run, and a 1024³ f32 GEMM next to NumPy:
//!
//! - an MLP 784-256-256-10, batch 128;
//! - LeNet-5, batch 32;
//! - a Transformer encoder layer (d=256, 4 heads, sequence 128, batch 8);
//! - a stack of two ResNet basic blocks (batch 16, 32x32, 64 channels).
//!
//! The models are `crates/bench/models/*.mir`; `jax_models.py` and
//! `mindspore_models.py` hold the same models. JAX is found like MindSpore:
//! the python in `MIRDSL_JAX_PYTHON` (else `target/jax-venv/bin/python`),
//! MindSpore's in `MIRDSL_MINDSPORE_PYTHON` (else `target/ms-venv/bin/python`);
//! both are optional. Each model is measured in mirdsl, then in JAX, then in
//! MindSpore, one after the other, so the three see the same machine.
//!
//! The ratio is mirdsl's median step time over JAX's, printed with its
//! target. `MIRDSL_INTERPRET=1` runs mirdsl without compiled plans, for
//! comparison; `MIRDSL_BENCH_MODELS=mlp,lenet` runs only those models.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use tensor::{DType, Tensor};

use crate::stats::{time, Summary};
use crate::Options;

/// A model: name, description, source, input shape, the targets' ratio, and
/// timed steps at the default `--runs 15`.
struct Model {
    name: &'static str,
    about: &'static str,
    source: &'static str,
    x_shape: &'static [usize],
    target: f64,
    steps: usize,
}

const MODELS: &[Model] = &[
    Model {
        name: "mlp",
        about: "MLP 784-256-256-10, batch 128",
        source: include_str!("../models/mlp.mir"),
        x_shape: &[128, 784],
        target: 0.8,
        steps: 300,
    },
    Model {
        name: "lenet",
        about: "LeNet-5, batch 32",
        source: include_str!("../models/lenet.mir"),
        x_shape: &[32, 1, 32, 32],
        target: 0.6,
        steps: 150,
    },
    Model {
        name: "transformer",
        about: "Transformer layer d=256, 4 heads, seq 128, batch 8",
        source: include_str!("../models/transformer.mir"),
        x_shape: &[8, 128, 256],
        target: 1.0,
        steps: 30,
    },
    Model {
        name: "resnet",
        about: "ResNet 2 basic blocks, 64 ch, 32x32, batch 16",
        source: include_str!("../models/resnet.mir"),
        x_shape: &[16, 64, 32, 32],
        target: 1.0,
        steps: 12,
    },
];

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
    // Warm up: differentiation and compilation happen once, weights are
    // initialised once.
    for _ in 0..2 {
        drop(run(&mut ex));
    }
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

/// A python from `var`, else a venv under `target/`.
fn python(var: &str, venv: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(var) {
        return Some(PathBuf::from(p));
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target")
        .join(venv)
        .join("bin/python");
    venv.exists().then_some(venv)
}

/// `key = value` figures a model script prints, or why there are none.
fn script_figures(
    python: &Path,
    script: &str,
    model: &str,
    steps: usize,
) -> Result<Vec<(String, f64)>, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(script);
    let out = Command::new(python)
        .arg(&script)
        .arg(model)
        .arg(steps.to_string())
        .env_remove("OPENBLAS_CORETYPE")
        .output()
        .map_err(|e| format!("not runnable: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(err.lines().last().unwrap_or("failed").to_string());
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once('='))
        .filter_map(|(k, v)| Some((k.trim().to_string(), v.trim().parse::<f64>().ok()?)))
        .collect())
}

fn figure(figures: &[(String, f64)], key: &str) -> Option<f64> {
    figures.iter().find(|(k, _)| k == key).map(|f| f.1)
}

const NUMPY_GEMM: &str = "import numpy as np, time\na=np.random.rand(1024,1024).astype(np.float32); b=np.random.rand(1024,1024).astype(np.float32)\nbest=1e9\nfor _ in range(10):\n    t=time.perf_counter(); a@b; best=min(best,time.perf_counter()-t)\nprint(2*1024**3/best/1e9)";

pub fn run(options: &Options) {
    let scale = options.runs.max(1) as f64 / 15.0;
    let jax = python("MIRDSL_JAX_PYTHON", "jax-venv");
    let mindspore = python("MIRDSL_MINDSPORE_PYTHON", "ms-venv");
    let only: Option<Vec<String>> = std::env::var("MIRDSL_BENCH_MODELS")
        .ok()
        .map(|s| s.split(',').map(str::to_string).collect());
    println!(
        "mirdsl run benchmarks (release build; training steps: value_and_grad over every weight; \
         median of many steps after warm-up; mirdsl {}; {} CPU threads)\n",
        if std::env::var_os("MIRDSL_INTERPRET").is_some_and(|v| !v.is_empty() && v != "0") {
            "interpreted (MIRDSL_INTERPRET)"
        } else {
            "with compiled plans"
        },
        rayon_threads()
    );
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mib = |b: usize| b as f64 / (1 << 20) as f64;
    let mut rows = Vec::new();
    for m in MODELS {
        if only
            .as_ref()
            .is_some_and(|o| !o.iter().any(|n| n == m.name))
        {
            continue;
        }
        let steps = ((m.steps as f64 * scale).round() as usize).max(3);
        let ours = train_steps(m.source, m.x_shape, steps);
        let jax_figures = jax
            .as_ref()
            .map(|p| script_figures(p, "jax_models.py", m.name, steps));
        let ms_figures = mindspore
            .as_ref()
            .map(|p| script_figures(p, "mindspore_models.py", m.name, steps.min(20)));
        let jax_ms = jax_figures
            .as_ref()
            .and_then(|f| f.as_ref().ok())
            .and_then(|f| figure(f, "ms"));
        let jax_peak = jax_figures
            .as_ref()
            .and_then(|f| f.as_ref().ok())
            .and_then(|f| figure(f, "peak_mib"));
        let ms_ms = ms_figures
            .as_ref()
            .and_then(|f| f.as_ref().ok())
            .and_then(|f| figure(f, "ms"));
        for (who, f) in [("JAX", &jax_figures), ("MindSpore", &ms_figures)] {
            if let Some(Err(e)) = f {
                eprintln!("{who} failed on {}: {e}", m.name);
            }
        }
        let ours_ms = ms(ours.step.median);
        let ratio = jax_ms.map(|j| ours_ms / j);
        rows.push(format!(
            "| {} | {:.2} | {:.2} | {:.1} | {} | {} | {} | {} |",
            m.about,
            ours_ms,
            ms(ours.step.p95),
            mib(ours.peak_bytes),
            jax_ms.map_or("-".into(), |j| format!("{j:.2}")),
            jax_peak.map_or("-".into(), |p| format!("{p:.1}")),
            ratio.map_or("-".into(), |r| format!(
                "**{r:.2}** (target ≤ {}{})",
                m.target,
                if r <= m.target { ", met" } else { ", not met" }
            )),
            ms_ms.map_or("-".into(), |v| format!("{v:.1}")),
        ));
        // Print as we go: the whole run takes a while.
        eprintln!("{}", rows.last().expect("a row"));
    }
    println!(
        "| model | mirdsl median ms/step | p95 | peak MiB | JAX (jit) median ms | JAX peak MiB | mirdsl / JAX | MindSpore 2.10 ms |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for r in &rows {
        println!("{r}");
    }
    println!(
        "\npeak memory: mirdsl's is the most bytes of tensors alive at once during the timed steps \
         (inputs, weights, outputs, intermediates and compiled plans' arenas); JAX's is XLA's memory \
         analysis of the compiled step (arguments + outputs + temporaries)."
    );
    if jax.is_none() {
        println!(
            "JAX not found: set MIRDSL_JAX_PYTHON to a python with jax (python3 -m venv V && V/bin/pip install jax numpy)."
        );
    }
    if mindspore.is_none() {
        println!(
            "MindSpore not found: set MIRDSL_MINDSPORE_PYTHON to a python with mindspore==2.10.0."
        );
    }

    let ours = gemm_gflops(1024, 10);
    print!("\n1024x1024 f32 GEMM: mirdsl {ours:.1} GFLOP/s");
    match python_figure("python3", NUMPY_GEMM).and_then(|s| s.parse::<f64>().ok()) {
        Some(np) => println!(
            ", NumPy {np:.1} GFLOP/s ({:.0}% of NumPy)",
            100.0 * ours / np
        ),
        None => println!(" (NumPy not available for comparison)"),
    }
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
