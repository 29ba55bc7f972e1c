//! `bench`: timing runs of the mirdsl toolchain on generated `.mir` files.
//!
//! ```text
//! cargo run --release -p bench -- parse [--lines N] [--runs N] [--edits N] [--seed S]
//! ```
//!
//! Each benchmark is a sibling module with a `run(&Options)` entry point; add a
//! module and a line in [`BENCHES`] for a new one (`check`, `lsp`, `run`, ...).

mod check;
mod dump;
mod gen;
mod gpu_run;
mod lsp;
mod parse;
mod remat;
mod run;
mod scale;
mod stats;
mod workload;

use std::process::ExitCode;

/// Syntax trees, IR graphs and tensors are many small allocations; mimalloc
/// handles them markedly faster than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Settings shared by all benchmarks; each uses those that apply to it.
#[derive(Debug, Clone)]
pub struct Options {
    /// Lines of the generated `.mir` file.
    pub lines: usize,
    /// Seed of the generator.
    pub seed: u64,
    /// Timed repetitions of a whole-file measurement (the median is reported).
    pub runs: usize,
    /// Different edits for the incremental measurements.
    pub edits: usize,
    /// `bench run`'s device: `cpu`, or `gpu` for the GPU backend next to PyTorch.
    pub device: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            lines: 50_000,
            seed: 1,
            runs: 15,
            edits: 200,
            device: "cpu".into(),
        }
    }
}

type Bench = fn(&Options);

/// Every benchmark: name, what it measures, entry point.
const BENCHES: &[(&str, &str, Bench)] = &[
    (
        "parse",
        "lex+parse and format throughput, incremental reparse latency",
        parse::run,
    ),
    (
        "lsp",
        "mirdsl lsp edit→diagnostics latency and memory, next to mlir-lsp-server",
        lsp::run,
    ),
    (
        "check",
        "whole-file check (parse, lower, infer every graph) throughput",
        check::run,
    ),
    (
        "run",
        "training steps (MLP, LeNet-5, Transformer layer, ResNet blocks): ms/step and peak memory next to JAX and MindSpore; GEMM vs NumPy (`--device gpu`: the GPU backend next to PyTorch)",
        run::run,
    ),
    (
        "dump",
        "a 100,000-line MindSpore compile dump (.ir) in the editor: open and each request",
        dump::run,
    ),
    (
        "remat",
        "a deep MLP's training step: peak memory and ms/step, plain and with checkpoint(block)",
        remat::run,
    ),
    (
        "scale",
        "models at real size (testdata/scale/gen.py, target/scale): import time, MB/s and peak RSS against size; forward run next to MindSpore",
        scale::run,
    ),
    (
        "gen",
        "print the generated .mir file (for profiling with other tools)",
        print_generated,
    ),
    (
        "gen-valid",
        "print the well-typed program `check` and `lsp` time (for profiling)",
        print_generated_valid,
    ),
    (
        "gen-workspace",
        "print the models-and-shared-layers workspace `lsp` times (for profiling)",
        print_generated_workspace,
    ),
];

fn print_generated_workspace(options: &Options) {
    print!("{}", lsp::workspace_text(options.lines, options.seed));
}

fn print_generated(options: &Options) {
    print!("{}", gen::generate(options.lines, options.seed));
}

fn print_generated_valid(options: &Options) {
    print!("{}", check::generate_valid(options.lines, options.seed));
}

fn usage() -> String {
    let mut out = String::from(
        "usage: bench BENCH [--lines N] [--runs N] [--edits N] [--seed S] [--device cpu|gpu]\n\nbenchmarks:\n",
    );
    for (name, about, _) in BENCHES {
        out.push_str(&format!("  {name:<8} {about}\n"));
    }
    let d = Options::default();
    out.push_str(&format!(
        "\ndefaults: --lines {} --runs {} --edits {} --seed {}\n\
         build with --release: `cargo run --release -p bench -- parse`\n",
        d.lines, d.runs, d.edits, d.seed
    ));
    out
}

fn parse_options(args: &[String]) -> Result<Options, String> {
    let mut options = Options::default();
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .ok_or_else(|| format!("`{flag}` needs a value"))?;
        let number = || -> Result<u64, String> {
            value
                .replace('_', "")
                .parse()
                .map_err(|_| format!("`{flag}`: `{value}` is not a number"))
        };
        match flag.as_str() {
            "--lines" => options.lines = number()? as usize,
            "--runs" => options.runs = (number()? as usize).max(1),
            "--edits" => options.edits = (number()? as usize).max(1),
            "--seed" => options.seed = number()?,
            "--device" => match value.as_str() {
                "cpu" | "gpu" => options.device = value.clone(),
                _ => return Err(format!("`--device` must be cpu or gpu, not `{value}`")),
            },
            _ => return Err(format!("unknown option `{flag}`")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(name) = args.first() else {
        eprint!("{}", usage());
        return ExitCode::from(2);
    };
    if matches!(name.as_str(), "-h" | "--help" | "help") {
        print!("{}", usage());
        return ExitCode::SUCCESS;
    }
    let Some((_, _, bench)) = BENCHES.iter().find(|(n, _, _)| n == name) else {
        eprintln!("unknown benchmark `{name}`\n");
        eprint!("{}", usage());
        return ExitCode::from(2);
    };
    let options = match parse_options(&args[1..]) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}\n");
            eprint!("{}", usage());
            return ExitCode::from(2);
        }
    };
    if cfg!(debug_assertions) {
        eprintln!("warning: a debug build; run with `--release` for real figures\n");
    }
    if name == "run" && options.device == "gpu" {
        gpu_run::run(&options);
    } else {
        bench(&options);
    }
    ExitCode::SUCCESS
}
