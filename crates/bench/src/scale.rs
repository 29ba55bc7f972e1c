//! `bench scale`: models at real size. For each model `testdata/scale/gen.py`
//! made under `target/scale` (or `MIRDSL_SCALE_DIR`), smallest first:
//! `mirdsl import` (time, MB/s, peak RSS against the model's size) and
//! `mirdsl run` of its forward pass (time and peak RSS) next to MindSpore's
//! figures the generator recorded (load+compile+first run, warm forward,
//! peak RSS). Each command runs as a child process measured by `wait4`; the
//! import runs three times and the fastest (warm page cache) is reported.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::Options;

/// Runs `cmd`, returning (seconds, peak RSS in bytes) or why it failed.
fn measure(cmd: &mut Command) -> Result<(f64, u64), String> {
    let start = Instant::now();
    let child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: zeroed rusage is valid; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let secs = start.elapsed().as_secs_f64();
    if r != pid || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        let mut err = String::new();
        if let Some(mut e) = child.stderr {
            use std::io::Read;
            let _ = e.read_to_string(&mut err);
        }
        return Err(format!("failed: {}", err.lines().last().unwrap_or("")));
    }
    Ok((secs, usage.ru_maxrss as u64 * 1024))
}

fn mirdsl() -> PathBuf {
    let exe = std::env::current_exe().expect("the bench binary's path");
    exe.with_file_name("mirdsl")
}

/// The models: `(name, model file, its size with external data)`.
fn models(dir: &Path) -> Vec<(String, PathBuf, u64)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        let file = p.file_name().unwrap().to_string_lossy().into_owned();
        let Some(stem) = file.strip_suffix(".ms.json") else {
            continue;
        };
        let (model, data) = (
            dir.join(format!("{stem}.mindir")),
            dir.join(format!("{stem}_graph.mindir")),
        );
        let (model, extra) = if model.is_file() {
            (model, 0)
        } else if data.is_file() {
            let vars = dir.join(format!("{stem}_variables/data_0"));
            let extra = std::fs::metadata(vars).map(|m| m.len()).unwrap_or(0);
            (data, extra)
        } else {
            continue;
        };
        let size = std::fs::metadata(&model).map(|m| m.len()).unwrap_or(0) + extra;
        out.push((stem.to_string(), model, size));
    }
    out.sort_by_key(|m| m.2);
    out
}

pub fn run(_: &Options) {
    let dir = std::env::var_os("MIRDSL_SCALE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/scale"));
    let list = models(&dir);
    if list.is_empty() {
        println!(
            "no models in {}: make some with `python3 testdata/scale/gen.py NAME --layers L --dim D`",
            dir.display()
        );
        return;
    }
    let bin = mirdsl();
    let work = std::env::temp_dir().join(format!("bench-scale-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&work);
    let mb = |b: u64| b as f64 / 1e6;
    println!(
        "{:<14} {:>9} | {:>8} {:>8} {:>10} {:>7} | {:>8} {:>8} {:>10} | {:>9} {:>9} {:>10}",
        "model",
        "size MB",
        "import s",
        "MB/s",
        "peak MB",
        "x size",
        "run s",
        "warm s",
        "peak MB",
        "MS first",
        "MS warm",
        "MS peak MB"
    );
    for (name, model, size) in list {
        let mir = work.join(format!("{name}.mir"));
        let import = || {
            measure(
                Command::new(&bin)
                    .arg("import")
                    .arg(&model)
                    .arg("-o")
                    .arg(&mir),
            )
        };
        // The fastest of three (the first fills the page cache), and the
        // largest peak.
        let imported = (0..3).try_fold((f64::INFINITY, 0u64), |(t, r), _| {
            import().map(|(t2, r2)| (t.min(t2), r.max(r2)))
        });
        let (isecs, irss) = match imported {
            Ok(m) => m,
            Err(e) => {
                println!("{name:<14} {:>9.1} | import {e}", mb(size));
                continue;
            }
        };
        let x = format!("x={}", dir.join(format!("{name}.x.npy")).display());
        let ran = measure(Command::new(&bin).arg("run").arg(&mir).arg("--arg").arg(&x));
        // The warm forward: six runs in one process less one, over five.
        let steps = measure(
            Command::new(&bin)
                .arg("run")
                .arg(&mir)
                .arg("--arg")
                .arg(&x)
                .args(["--steps", "6"]),
        );
        let warm = match (&ran, &steps) {
            (Ok((one, _)), Ok((six, _))) => format!("{:.3}", ((six - one) / 5.0).max(0.0)),
            _ => "-".into(),
        };
        let ms: serde_json::Value = std::fs::read(dir.join(format!("{name}.ms.json")))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let (rs, rrss) = match ran {
            Ok((s, r)) => (format!("{s:.3}"), format!("{:.0}", mb(r))),
            Err(e) => (e.chars().take(8).collect(), "-".into()),
        };
        println!(
            "{name:<14} {:>9.1} | {isecs:>8.3} {:>8.0} {:>10.0} {:>7.2} | {rs:>8} {warm:>8} {rrss:>10} | {:>9.3} {:>9.3} {:>10.0}",
            mb(size),
            mb(size) / isecs,
            mb(irss),
            irss as f64 / size as f64,
            ms["mindspore_first_s"].as_f64().unwrap_or(f64::NAN),
            ms["mindspore_warm_s"].as_f64().unwrap_or(f64::NAN),
            ms["mindspore_peak_rss_kb"].as_f64().unwrap_or(f64::NAN) * 1024.0 / 1e6,
        );
        let _ = std::fs::remove_file(&mir);
        let _ = std::fs::remove_file(work.join(format!("{name}.safetensors")));
    }
    let _ = std::fs::remove_dir_all(&work);
    println!(
        "\nimport: the fastest of three runs (warm page cache), the largest peak; run: `mirdsl run` of the forward pass from the imported text \
         (read weights, compile, run once), warm: one more forward in the same process; MS: MindSpore 2.10 loading the same model (testdata/scale/gen.py)"
    );
}
