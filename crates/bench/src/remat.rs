//! `bench remat`: the peak memory and time of a deep MLP's training step
//! (the gradient of its loss with respect to every weight), plain and with
//! each block of layers under `checkpoint` (spec §7), which recomputes a
//! block's activations in the backward pass instead of keeping them.

use tensor::Tensor;

use crate::stats::{time, Summary};
use crate::Options;

const LAYERS_PER_BLOCK: usize = 4;
const BLOCKS: usize = 6;
const WIDTH: usize = 256;
const BATCH: usize = 512;

/// The program: `block` (4 Tanh layers), the loss calling it `BLOCKS`
/// times (through `checkpoint` when `remat`), and `step`, its gradient.
fn source(remat: bool) -> String {
    let ws: Vec<String> = (0..LAYERS_PER_BLOCK).map(|i| format!("w{i}")).collect();
    let mut s = format!(
        "graph block(h: f32[{BATCH}, {WIDTH}], {}) {{\n",
        ws.iter()
            .map(|w| format!("{w}: f32[{WIDTH}, {WIDTH}]"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut h = "h".to_string();
    for (i, w) in ws.iter().enumerate() {
        s.push_str(&format!("  a{i} = Tanh(MatMul({h}, {w}))\n"));
        h = format!("a{i}");
    }
    s.push_str(&format!("  return {h}\n}}\n"));
    let all: Vec<String> = (0..BLOCKS * LAYERS_PER_BLOCK)
        .map(|i| format!("v{i}"))
        .collect();
    let params = all
        .iter()
        .map(|w| format!("{w}: f32[{WIDTH}, {WIDTH}]"))
        .collect::<Vec<_>>()
        .join(", ");
    s.push_str(&format!(
        "graph loss(x: f32[{BATCH}, {WIDTH}], {params}) {{\n"
    ));
    let callee = if remat { "checkpoint(block)" } else { "block" };
    let mut h = "x".to_string();
    for b in 0..BLOCKS {
        let args = all[b * LAYERS_PER_BLOCK..(b + 1) * LAYERS_PER_BLOCK].join(", ");
        s.push_str(&format!("  h{b} = {callee}({h}, {args})\n"));
        h = format!("h{b}");
    }
    s.push_str(&format!("  return ReduceMean({h} * {h})\n}}\n"));
    let wrt = (1..=all.len())
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    s.push_str(&format!(
        "graph step(x: f32[{BATCH}, {WIDTH}], {params}) {{\n  return grad(loss, wrt=({wrt}))(x, {})\n}}\n",
        all.join(", ")
    ));
    s
}

fn random(shape: &[usize], seed: u64, scale: f32) -> Tensor {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let n: usize = shape.iter().product();
    let data = (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (((state >> 40) as f32 / (1u64 << 24) as f32) - 0.5) * scale
        })
        .collect();
    Tensor::from_f32(shape.to_vec(), data).unwrap()
}

/// Peak bytes, the step's times, and the gradients (to compare).
fn measure(remat: bool, runs: usize) -> (usize, Summary, Vec<Vec<f64>>) {
    let analysis = analysis::analyze(&source(remat));
    assert!(!analysis.has_errors(), "{:?}", analysis.diagnostics);
    let program = analysis.source.program();
    let mut ex = exec::Executor::new(&program, exec::ExecOptions::default());
    let mut args = vec![random(&[BATCH, WIDTH], 1, 2.0)];
    for i in 0..BLOCKS * LAYERS_PER_BLOCK {
        args.push(random(&[WIDTH, WIDTH], 10 + i as u64, 0.2));
    }
    let run = |ex: &mut exec::Executor| {
        let a = args.iter().map(|t| ex.tensor(t.clone())).collect();
        ex.call("step", a).expect("the step runs")
    };
    // Differentiation and compilation happen in the first call.
    let first = run(&mut ex);
    let grads: Vec<Vec<f64>> = match &first {
        exec::Value::Tuple(items) => items
            .iter()
            .map(|v| v.as_tensor().expect("a tensor").tensor().to_f64_vec())
            .collect(),
        _ => panic!("the step returns a tuple"),
    };
    drop(first);
    ex.memory_counter().reset_peak();
    let mut samples = Vec::new();
    for _ in 0..runs {
        let (out, d) = time(|| run(&mut ex));
        drop(out);
        samples.push(d);
    }
    (ex.memory().peak_bytes, Summary::of(&samples), grads)
}

pub fn run(options: &Options) {
    let runs = options.runs.clamp(1, 10);
    println!(
        "deep MLP training step: {} Tanh layers of {WIDTH}x{WIDTH} in {BLOCKS} blocks, batch {BATCH}, f32; gradient of every weight",
        BLOCKS * LAYERS_PER_BLOCK
    );
    let (plain_peak, plain_t, plain_g) = measure(false, runs);
    let (remat_peak, remat_t, remat_g) = measure(true, runs);
    let worst = plain_g
        .iter()
        .flatten()
        .zip(remat_g.iter().flatten())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f64, f64::max);
    let mb = |b: usize| b as f64 / (1 << 20) as f64;
    println!("| variant | peak memory | ms/step (median) |");
    println!("|---|---|---|");
    println!(
        "| plain | {:.1} MiB | {:.1} |",
        mb(plain_peak),
        plain_t.median.as_secs_f64() * 1e3
    );
    println!(
        "| checkpoint(block) | {:.1} MiB | {:.1} |",
        mb(remat_peak),
        remat_t.median.as_secs_f64() * 1e3
    );
    println!(
        "peak memory {:.0}% of plain; gradients equal to {worst:.1e}",
        100.0 * remat_peak as f64 / plain_peak as f64
    );
}
