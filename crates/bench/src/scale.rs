//! `bench scale`: models at real size. For each model `testdata/scale/gen.py`
//! made under `target/scale` (or `MIRDSL_SCALE_DIR`), smallest first:
//! `mirdsl import` (time, MB/s, peak RSS against the model's size),
//! `mirdsl run` of its forward pass (time, warm forward, peak RSS) next to
//! MindSpore's (`testdata/scale/ms_run.py`: load, compile and run once, the
//! warm forward, its peak RSS, in a process of its own) and, for the
//! LLaMA-style decoders, JAX's (`testdata/scale/jax_run.py`: the same decoder
//! under `jax.jit` on the CPU, from the weights `mirdsl import` wrote). Then
//! the editors' side: `mirdsl check` of the imported text, and the language
//! server's open (`didOpen` to its diagnostics) and graph view (`mirdsl/graph`
//! of `main`) on it, which never read the weights' bytes. Each command runs as
//! a child process measured by `wait4`; the import runs three times and the
//! fastest (warm page cache) is reported. `MIRDSL_SCALE_PYTHON` names the
//! Python with MindSpore and JAX (default `python3`; `none` skips them).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::Options;

/// Runs `cmd`, returning (seconds, peak RSS in bytes) or why it failed.
fn measure(cmd: &mut Command) -> Result<(f64, u64), String> {
    measure_out(cmd).map(|(s, r, _)| (s, r))
}

/// [`measure`], with what the command printed.
fn measure_out(cmd: &mut Command) -> Result<(f64, u64, String), String> {
    let start = Instant::now();
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let pid = child.id() as libc::pid_t;
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        use std::io::Read;
        let _ = stdout.read_to_string(&mut out);
        out
    });
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
    let out = reader.join().unwrap_or_default();
    Ok((secs, usage.ru_maxrss as u64 * 1024, out))
}

/// The model's arguments as `mirdsl run --arg` takes them (`NAME=FILE`),
/// from gen.py's `args` (older files: `x`, NAME.x.npy).
fn run_args(dir: &Path, name: &str, ms: &serde_json::Value) -> Vec<String> {
    match ms["args"].as_array() {
        Some(args) => args
            .iter()
            .filter_map(|a| {
                let (arg, file) = (a[0].as_str()?, a[1].as_str()?);
                Some(format!("{arg}={}", dir.join(file).display()))
            })
            .collect(),
        None => vec![format!("x={}", dir.join(format!("{name}.x.npy")).display())],
    }
}

/// Seconds from opening `mir` in the language server to its diagnostics,
/// from asking for the graph view of `main` to its answer, and the
/// server's peak RSS.
fn editor_open(bin: &Path, mir: &Path) -> Result<(f64, f64, u64), String> {
    let mut server = crate::lsp::Server::start(bin.to_str().unwrap_or("mirdsl"), &["lsp"])?;
    server.initialize()?;
    let uri = format!("file://{}", mir.display());
    let text = std::fs::read_to_string(mir).map_err(|e| e.to_string())?;
    let start = Instant::now();
    server.notify(
        "textDocument/didOpen",
        serde_json::json!({"textDocument": {"uri": uri, "languageId": "mirdsl", "version": 1, "text": text}}),
    );
    let (arrived, _) = server.diagnostics(1)?;
    let open = arrived.duration_since(start).as_secs_f64();
    let asked = Instant::now();
    let (answered, _) = server.request_timed(
        "mirdsl/graph",
        serde_json::json!({"uri": uri, "graph": "main"}),
    )?;
    let graph = answered.duration_since(asked).as_secs_f64();
    let (_, hwm) = server.memory_kib();
    server.stop();
    Ok((open, graph, hwm.unwrap_or(0) * 1024))
}

/// A Python script's JSON answer, its time and peak RSS.
fn python(script: &str, args: &[String]) -> Option<(serde_json::Value, u64)> {
    let py = std::env::var("MIRDSL_SCALE_PYTHON").unwrap_or_else(|_| "python3".into());
    if py == "none" {
        return None;
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/scale")
        .join(script);
    match measure_out(Command::new(&py).arg(path).args(args)) {
        Ok((_, rss, out)) => {
            let v = out
                .lines()
                .last()
                .and_then(|l| serde_json::from_str(l).ok())?;
            Some((v, rss))
        }
        Err(e) => {
            eprintln!("{script}: {e}");
            None
        }
    }
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
    let f = |v: &serde_json::Value| v.as_f64().map_or("-".to_string(), |x| format!("{x:.3}"));
    println!(
        "{:<10} {:>7} | {:>6} {:>5} {:>7} {:>5} | {:>6} {:>6} {:>7} | {:>6} {:>6} {:>7} | {:>6} {:>6} {:>7} | {:>6} {:>6} {:>6} {:>6}",
        "model", "MB", "import", "MB/s", "peak", "x", "run", "warm", "peak", "MS 1st", "warm", "peak",
        "JAX1st", "warm", "peak", "check", "open", "graph", "srv MB"
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
                println!("{name:<10} {:>7.1} | import {e}", mb(size));
                continue;
            }
        };
        let ms: serde_json::Value = std::fs::read(dir.join(format!("{name}.ms.json")))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let args = run_args(&dir, &name, &ms);
        let mut run = Command::new(&bin);
        run.arg("run").arg(&mir);
        for a in &args {
            run.arg("--arg").arg(a);
        }
        let ran = measure(&mut run);
        // The warm forward: six runs in one process less one, over five.
        let steps = measure(run.args(["--steps", "6"]));
        let warm = match (&ran, &steps) {
            (Ok((one, _)), Ok((six, _))) => format!("{:.3}", ((six - one) / 5.0).max(0.0)),
            _ => "-".into(),
        };
        let (rs, rrss) = match ran {
            Ok((s, r)) => (format!("{s:.3}"), format!("{:.0}", mb(r))),
            Err(e) => (e.chars().take(6).collect(), "-".into()),
        };
        let files: Vec<String> = args
            .iter()
            .map(|a| a.split_once('=').map_or(a.clone(), |(_, f)| f.to_string()))
            .collect();
        let mut ms_args = vec![model.display().to_string()];
        ms_args.extend(files.iter().cloned());
        let (msv, msrss) = python("ms_run.py", &ms_args).unwrap_or_default();
        let weights = work.join(format!("{name}.safetensors"));
        let is_decoder = ms["arch"].as_str().is_none_or(|a| a == "decoder");
        let (jaxv, jaxrss) = if is_decoder && weights.is_file() {
            let mut a = vec![
                weights.display().to_string(),
                dir.join(format!("{name}.ms.json")).display().to_string(),
            ];
            a.extend(files.iter().cloned());
            a.push(dir.join(format!("{name}.out.npy")).display().to_string());
            python("jax_run.py", &a).unwrap_or_default()
        } else {
            Default::default()
        };
        if let Some(e) = jaxv["rel_err"].as_f64() {
            eprintln!("{name}: JAX's output within {e:.1e} of MindSpore's");
        }
        let check = measure(Command::new(&bin).arg("check").arg(&mir))
            .map_or("-".into(), |(s, _)| format!("{s:.3}"));
        let (open, graph, srv) = match editor_open(&bin, &mir) {
            Ok((o, g, r)) => (
                format!("{o:.3}"),
                format!("{g:.3}"),
                format!("{:.0}", mb(r)),
            ),
            Err(e) => {
                eprintln!("{name}: language server: {e}");
                ("-".into(), "-".into(), "-".into())
            }
        };
        let peak = |v: &serde_json::Value, rss: u64| {
            if v.is_null() {
                "-".to_string()
            } else {
                format!("{:.0}", mb(rss))
            }
        };
        println!(
            "{name:<10} {:>7.1} | {isecs:>6.3} {:>5.0} {:>7.0} {:>5.2} | {rs:>6} {warm:>6} {rrss:>7} | {:>6} {:>6} {:>7} | {:>6} {:>6} {:>7} | {check:>6} {open:>6} {graph:>6} {srv:>6}",
            mb(size),
            mb(size) / isecs,
            mb(irss),
            irss as f64 / size as f64,
            f(&msv["first_s"]),
            f(&msv["warm_s"]),
            peak(&msv, msrss),
            f(&jaxv["first_s"]),
            f(&jaxv["warm_s"]),
            peak(&jaxv, jaxrss),
        );
        let _ = std::fs::remove_file(&mir);
        let _ = std::fs::remove_file(&weights);
    }
    let _ = std::fs::remove_dir_all(&work);
    println!(
        "\nMB: the model's size (external data included); import: the fastest of three runs (warm page cache), the largest peak RSS (MB) and it over the size (x); \
         run: `mirdsl run` of the forward pass from the imported text (map the weights, compile, run once), warm: one more forward in the same process, peak RSS; \
         MS: MindSpore 2.10 (testdata/scale/ms_run.py: load + compile + first run, warm forward, peak RSS); JAX: the decoder under jax.jit on the CPU from the same weights (testdata/scale/jax_run.py); \
         check: `mirdsl check` of the imported text; open: the language server's didOpen to diagnostics, graph: its graph view of `main`, srv MB: the server's peak RSS"
    );
}
