//! `cargo run --release -p gradgen -- [--minutes N] [--count N] [--seed S] [--out DIR]`
//! (or `--check FILE`, `--print SEED`):
//! checks generated programs until the time or count is spent; prints each
//! new kind of failure with its minimized program (also written to `DIR`).

use std::time::{Duration, Instant};

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut minutes = 1.0f64;
    let mut count = usize::MAX;
    let mut seed = 1u64;
    let mut out: Option<std::path::PathBuf> = None;
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--minutes" => minutes = value.parse().expect("--minutes N"),
            "--count" => count = value.parse().expect("--count N"),
            "--seed" => seed = value.parse().expect("--seed S"),
            "--out" => out = Some(value.into()),
            "--check" => {
                // A program file (a fixture): all the checks, the outcome printed.
                let text = std::fs::read_to_string(&value).expect("--check FILE");
                return match gradgen::check::check_source(&text, 7) {
                    gradgen::Outcome::Passed { first, second } => {
                        println!("passed: {first} first-order and {second} second-order gradient elements");
                        std::process::ExitCode::SUCCESS
                    }
                    gradgen::Outcome::Discarded(why) => {
                        println!("discarded: {why}");
                        std::process::ExitCode::SUCCESS
                    }
                    gradgen::Outcome::Failed(f) => {
                        println!("{:?} (order {}): {}", f.kind, f.order, f.message);
                        std::process::ExitCode::FAILURE
                    }
                };
            }
            "--print" => {
                let cands = gradgen::candidates();
                let s: u64 = value.parse().expect("--print SEED");
                let p = gradgen::program(s, &cands);
                print!("{}", p.text());
                println!(
                    "# second order:\n{}",
                    gradgen::check::second_order_text(&p, "")
                );
                return std::process::ExitCode::SUCCESS;
            }
            other => {
                eprintln!("unknown option `{other}`\nusage: gradgen [--minutes N] [--count N] [--seed S] [--out DIR] | --check FILE | --print SEED");
                return std::process::ExitCode::from(2);
            }
        }
        i += 2;
    }
    if let Some(dir) = &out {
        std::fs::create_dir_all(dir).expect("the output directory");
    }
    let cands = gradgen::candidates();
    eprintln!("gradgen: {} primitives to draw from", cands.len());
    let deadline = Instant::now() + Duration::from_secs_f64(minutes * 60.0);
    let start = Instant::now();
    let mut counts = gradgen::Counts::default();
    let mut seen = gradgen::check::Seen::default();
    let mut last_report = Instant::now();
    let mut s = seed;
    while Instant::now() < deadline && counts.programs < count {
        if let Some((p, f)) = gradgen::run_one(s, &cands, &mut counts) {
            if seen.first(&f) {
                let small = gradgen::minimize(&p, &f);
                let report = format!(
                    "# seed {s}: {:?} (order {})\n# {}\n{}",
                    f.kind,
                    f.order,
                    f.message.lines().take(12).collect::<Vec<_>>().join("\n# "),
                    small.text()
                );
                println!("{report}\n");
                if let Some(dir) = &out {
                    let _ = std::fs::write(dir.join(format!("failure-{s}.mir")), &report);
                }
            } else if let Some(dir) = &out {
                // Another of a kind already seen (maybe another cause): kept
                // as found.
                let report = format!(
                    "# seed {s}: {:?} (order {})\n# {}\n{}",
                    f.kind,
                    f.order,
                    f.message.lines().next().unwrap_or(""),
                    p.text()
                );
                let _ = std::fs::write(dir.join(format!("again-{s}.mir")), report);
            }
        }
        s += 1;
        if last_report.elapsed() > Duration::from_secs(60) {
            last_report = Instant::now();
            eprintln!(
                "{:.1} min: {counts:?}",
                start.elapsed().as_secs_f64() / 60.0
            );
        }
    }
    println!(
        "gradgen: {} programs from seed {seed} in {:.1} min: {} checked, {} discarded, {} failures ({} kinds); gradient elements against finite differences: {} first order, {} second order",
        counts.programs,
        start.elapsed().as_secs_f64() / 60.0,
        counts.checked,
        counts.discarded,
        counts.failures,
        seen.0.len(),
        counts.first_order,
        counts.second_order
    );
    if counts.failures > 0 {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    }
}
