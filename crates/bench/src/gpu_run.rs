//! `bench run --device gpu`: the GPU backend's step times next to PyTorch
//! (eager and `torch.compile`) on the same GPU. An MLP 784-256-256-10 training
//! step at batch 1024, the Transformer layer (batch 8) and ResNet stack
//! (batch 16) of the CPU benchmark, and a 4096³ f32 GEMM.
//!
//! PyTorch runs when `MIRDSL_TORCH_PYTHON` names a python with CUDA PyTorch
//! (`crates/bench/torch_gpu.py`, the same models). Targets (issue 16): each
//! step at most 1.5x PyTorch eager's time, the GEMM at least 70% of PyTorch's
//! GFLOP/s.

use std::path::Path;
use std::process::Command;

use tensor::{DType, Tensor};

use crate::stats::{time, Summary};
use crate::Options;

struct Model {
    name: &'static str,
    about: &'static str,
    source: &'static str,
    x_shape: &'static [usize],
}

const MODELS: &[Model] = &[
    Model {
        name: "mlp",
        about: "MLP 784-256-256-10 training step, batch 1024",
        source: include_str!("../models/mlp.mir"),
        x_shape: &[1024, 784],
    },
    Model {
        name: "transformer",
        about: "Transformer layer d=256, 4 heads, seq 128, batch 8",
        source: include_str!("../models/transformer.mir"),
        x_shape: &[8, 128, 256],
    },
    Model {
        name: "resnet",
        about: "ResNet 2 basic blocks, 64 ch, 32x32, batch 16",
        source: include_str!("../models/resnet.mir"),
        x_shape: &[16, 64, 32, 32],
    },
];

const GEMM: &str =
    "graph mm(a: f32[N, N], b: f32[N, N]) -> f32[N, N] {\n  return MatMul(a, b)\n}\n";

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
    Tensor::from_f32(shape.to_vec(), data).expect("sizes match")
}

/// Times `entry` on the GPU backend: warm-up calls, then `runs` timed calls,
/// each ended by a device synchronisation.
fn timed(
    source: &str,
    entry: &str,
    inputs: Vec<Tensor>,
    runs: usize,
) -> Result<(Summary, Vec<String>), String> {
    let analysis = analysis::analyze(source);
    if analysis.has_errors() {
        return Err(format!("{:?}", analysis.diagnostics));
    }
    let program = analysis.source.program();
    let backend = gpu::GpuBackend::new().map_err(|e| e.to_string())?;
    let stats = backend.stats();
    let sync = backend.syncer();
    let mut ex =
        exec::Executor::with_backend(&program, exec::ExecOptions::default(), Box::new(backend));
    // The same values every call: inputs are uploaded once.
    let args: Vec<exec::Value> = inputs.into_iter().map(|t| ex.tensor(t)).collect();
    let call = |ex: &mut exec::Executor| -> Result<(), String> {
        let out = ex.call(entry, args.clone()).map_err(|e| e.message)?;
        sync.synchronize()?;
        drop(out);
        Ok(())
    };
    for _ in 0..3 {
        call(&mut ex)?;
    }
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let (r, d) = time(|| call(&mut ex));
        r?;
        samples.push(d);
    }
    Ok((Summary::of(&samples), stats.report()))
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// `name eager_ms compiled_ms` lines from `torch_gpu.py`.
fn torch_figures(python: &str) -> Result<Vec<(String, f64, Option<f64>)>, String> {
    // The source tree's script, or the one under the working directory when
    // the binary was built elsewhere (copied to a GPU machine, say).
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("torch_gpu.py");
    let script = if built.exists() {
        built
    } else {
        Path::new("crates/bench/torch_gpu.py").to_path_buf()
    };
    let out = Command::new(python)
        .arg(&script)
        .output()
        .map_err(|e| format!("{python}: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            let name = parts.next()?.to_string();
            let eager = parts.next()?.parse().ok()?;
            let compiled = parts.next().and_then(|c| c.parse().ok());
            Some((name, eager, compiled))
        })
        .collect())
}

pub fn run(options: &Options) {
    if let Err(e) = gpu::probe::all() {
        eprintln!("bench run --device {}: {e}", options.device);
        std::process::exit(1);
    }
    let runs = options.runs;
    let mut ours: Vec<(String, f64)> = Vec::new();
    println!("GPU backend, median of {runs} steps (after 3 warm-up steps):");
    for m in MODELS {
        let batch = m.x_shape[0];
        let labels = Tensor::from_i64(
            DType::I32,
            vec![batch],
            (0..batch as i64).map(|i| i % 10).collect(),
        )
        .expect("sizes match");
        match timed(m.source, "step", vec![random(m.x_shape, 7), labels], runs) {
            Ok((s, report)) => {
                println!(
                    "  {:<12} {:>9.3} ms/step (p95 {:.3})  {}",
                    m.name,
                    ms(s.median),
                    ms(s.p95),
                    m.about
                );
                for line in report {
                    println!("      {line}");
                }
                ours.push((m.name.to_string(), ms(s.median)));
            }
            Err(e) => println!("  {:<12} failed: {e}", m.name),
        }
    }
    let n = 4096usize;
    let gemm_gflops = match timed(
        GEMM,
        "mm",
        vec![random(&[n, n], 1), random(&[n, n], 2)],
        runs,
    ) {
        Ok((s, _)) => {
            let g = 2.0 * (n as f64).powi(3) / s.median.as_secs_f64() / 1e9;
            println!(
                "  {:<12} {:>9.3} ms ({g:.0} GFLOP/s)  4096^3 f32 MatMul",
                "gemm",
                ms(s.median)
            );
            ours.push(("gemm".into(), ms(s.median)));
            Some(g)
        }
        Err(e) => {
            println!("  gemm         failed: {e}");
            None
        }
    };
    let Ok(python) = std::env::var("MIRDSL_TORCH_PYTHON") else {
        println!(
            "\nPyTorch: set MIRDSL_TORCH_PYTHON to a python with CUDA PyTorch for the comparison"
        );
        return;
    };
    match torch_figures(&python) {
        Err(e) => println!("\nPyTorch failed: {e}"),
        Ok(figures) => {
            println!("\n| step | mirdsl GPU (ms) | PyTorch eager (ms) | torch.compile (ms) | mirdsl / eager | target |");
            println!("|---|---|---|---|---|---|");
            for (name, eager, compiled) in &figures {
                let Some((_, mine)) = ours.iter().find(|(n, _)| n == name) else {
                    continue;
                };
                let ratio = mine / eager;
                let target = if name == "gemm" {
                    let ok = gemm_gflops.is_some_and(|_| eager / mine >= 0.7);
                    format!(
                        "≥ 70% of PyTorch's GFLOP/s: {}",
                        if ok { "met" } else { "missed" }
                    )
                } else {
                    format!("≤ 1.5x: {}", if ratio <= 1.5 { "met" } else { "missed" })
                };
                println!(
                    "| {name} | {mine:.3} | {eager:.3} | {} | {ratio:.2}x | {target} |",
                    compiled.map_or("-".into(), |c| format!("{c:.3}"))
                );
            }
        }
    }
}
