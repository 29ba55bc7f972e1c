//! The model zoo (`testdata/zoo/`): real networks exported by MindSpore 2.10,
//! each taken through the built binary:
//!
//! 1. `import`: `mirdsl import model.mindir -o <tmp>/model.mir`
//! 2. `check`: `mirdsl check <tmp>/model.mir`
//! 3. `run`: `mirdsl run <tmp>/model.mir --format json --arg 0=in0.npy ...`
//! 4. `match`: the result against `expected.json` (MindSpore's own output of the
//!    file; f32 to 1e-4 relative, f16 to 1e-2)
//! 5. `steps` (training cells, which have `expected_steps.json`): the exported
//!    step run twice, then the weights (see [`steps_stage`])
//! 6. `roundtrip` (only where `MIRDSL_MINDSPORE_PYTHON` names a python with
//!    mindspore 2.10; required with `MIRDSL_REQUIRE_TOOLS=mindspore`): `mirdsl
//!    export` of the imported program, loaded and run in MindSpore
//!    (`crates/interop/tests/mindspore_roundtrip.py case`), against
//!    `expected.json`
//!
//! It prints a table, one row per network. `testdata/zoo/EXPECTED_FAILURES`
//! lists the networks that do not pass yet, with the stage they fail at; the
//! test fails when a network fails that is not listed, when a listed one fails
//! at another stage, and when a listed one passes (so the list stays honest and
//! shrinks as support lands). The message ends with the list as it should read.
//!
//! `MIRDSL_ZOO=name,name` runs only those networks; `MIRDSL_ZOO_TIMEOUT`
//! (seconds, default 300) bounds each command; `MIRDSL_ZOO_DEVICE=gpu` runs
//! the `run` and `steps` stages with `--device gpu` (on a machine with a GPU:
//! the GPU backend against MindSpore's own outputs).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

const BIN: &str = env!("CARGO_BIN_EXE_mirdsl");

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    Import,
    Check,
    Run,
    Match,
    Steps,
    Roundtrip,
}

const STAGES: [Stage; 6] = [
    Stage::Import,
    Stage::Check,
    Stage::Run,
    Stage::Match,
    Stage::Steps,
    Stage::Roundtrip,
];

impl Stage {
    fn name(self) -> &'static str {
        match self {
            Stage::Import => "import",
            Stage::Check => "check",
            Stage::Run => "run",
            Stage::Match => "match",
            Stage::Steps => "steps",
            Stage::Roundtrip => "roundtrip",
        }
    }

    fn parse(s: &str) -> Option<Stage> {
        STAGES.into_iter().find(|st| st.name() == s)
    }
}

/// What happened to one stage of one network.
#[derive(Clone, Debug, PartialEq)]
enum Status {
    Ok,
    Fail(String),
    /// Not applicable (an inference network has no `steps`), or not checked
    /// (`roundtrip` without `MIRDSL_MINDSPORE_PYTHON`).
    NotApplicable,
    /// An earlier stage failed.
    NotReached,
}

struct Outcome {
    name: String,
    stages: Vec<(Stage, Status)>,
}

impl Outcome {
    fn failure(&self) -> Option<(Stage, &str)> {
        self.stages.iter().find_map(|(st, s)| match s {
            Status::Fail(why) => Some((*st, why.as_str())),
            _ => None,
        })
    }

    fn status(&self, stage: Stage) -> &Status {
        &self
            .stages
            .iter()
            .find(|(st, _)| *st == stage)
            .expect("every stage has a status")
            .1
    }
}

fn zoo_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/zoo")
}

fn timeout() -> Duration {
    let secs = std::env::var("MIRDSL_ZOO_TIMEOUT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    Duration::from_secs(secs)
}

/// Exit success, stdout, stderr of a command, killed after [`timeout`].
fn run_command(cmd: &mut Command) -> (bool, String, String) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("NO_COLOR", "1")
        .spawn()
        .expect("the command starts");
    let mut out_pipe = child.stdout.take().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out_pipe.read_to_end(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err_pipe.read_to_end(&mut s);
        s
    });
    let start = Instant::now();
    let limit = timeout();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting works") {
            break Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = String::from_utf8_lossy(&out_reader.join().unwrap()).into_owned();
    let mut stderr = String::from_utf8_lossy(&err_reader.join().unwrap()).into_owned();
    if status.is_none() {
        stderr = format!("error: timed out after {} s\n{stderr}", limit.as_secs());
    }
    (status.is_some_and(|s| s.success()), stdout, stderr)
}

/// The first line that says what went wrong, shortened to one table-friendly line.
fn summary(stderr: &str, stdout: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .chain(stdout.lines())
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("[WARNING]"))
        .collect();
    let line = lines
        .iter()
        .find(|l| l.starts_with("error"))
        .or(lines.first())
        .copied()
        .unwrap_or("(no message)");
    let line = line
        .strip_prefix("error: ")
        .or_else(|| line.strip_prefix("error"))
        .unwrap_or(line);
    // Paths differ from machine to machine: "cannot import <path>: why" -> "why".
    let line = ["cannot import ", "cannot export "]
        .iter()
        .find_map(|p| line.strip_prefix(p)?.split_once(": ").map(|(_, r)| r))
        .unwrap_or(line);
    shorten(line, 240)
}

fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(n).collect::<String>())
    }
}

/// The inputs `in0.npy, in1.npy, ...` of a network, in order.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    (0..)
        .map(|i| dir.join(format!("in{i}.npy")))
        .take_while(|p| p.is_file())
        .collect()
}

// ---------------------------------------------------------------------------
// Comparing results with MindSpore's

/// A tensor or scalar of the `mirdsl run --format json` form as (dtype, shape, data).
fn as_tensor(v: &Json) -> Option<(String, Vec<u64>, Vec<Json>)> {
    let o = v.as_object()?;
    let dtype = o.get("dtype")?.as_str()?.to_string();
    if let Some(value) = o.get("value") {
        return Some((dtype, vec![], vec![value.clone()]));
    }
    let shape = o
        .get("shape")?
        .as_array()?
        .iter()
        .map(|d| d.as_u64())
        .collect::<Option<Vec<_>>>()?;
    let data = o.get("data")?.as_array()?.clone();
    Some((dtype, shape, data))
}

fn number(v: &Json) -> Option<f64> {
    match v {
        Json::Number(n) => n.as_f64(),
        Json::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Json::String(s) => match s.as_str() {
            "nan" => Some(f64::NAN),
            "inf" => Some(f64::INFINITY),
            "-inf" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// (relative, absolute) tolerance for a dtype; integers and booleans are exact.
/// `half`: the network computes in f16 somewhere, so its f32 outputs inherit
/// f16 rounding (one f16 ulp in a logit moves a softmax by ~1e-4) and get the
/// f16 tolerance too.
fn tolerance(dtype: &str, half: bool) -> (f64, f64) {
    match dtype {
        "f32" | "f64" if !half => (1e-4, 1e-5),
        "f32" | "f64" | "f16" => (1e-2, 1e-3),
        "bf16" => (2e-2, 1e-2),
        _ => (0.0, 0.0),
    }
}

/// Whether a value holds a half-precision tensor.
fn has_half(v: &Json) -> bool {
    match v {
        Json::Array(a) => a.iter().any(has_half),
        Json::Object(o) => matches!(o.get("dtype").and_then(Json::as_str), Some("f16" | "bf16")),
        _ => false,
    }
}

/// `None` when `got` (mirdsl) matches `want` (MindSpore), else where and how not.
fn compare(got: &Json, want: &Json, path: &str) -> Option<String> {
    compare_with(got, want, path, has_half(want))
}

fn compare_with(got: &Json, want: &Json, path: &str, half: bool) -> Option<String> {
    if let Json::Array(ws) = want {
        let Json::Array(gs) = got else {
            return Some(format!(
                "{path}: expected a tuple of {}, got {}",
                ws.len(),
                kind(got)
            ));
        };
        if gs.len() != ws.len() {
            return Some(format!(
                "{path}: a tuple of {}, expected {}",
                gs.len(),
                ws.len()
            ));
        }
        return gs
            .iter()
            .zip(ws)
            .enumerate()
            .find_map(|(i, (g, w))| compare_with(g, w, &format!("{path}[{i}]"), half));
    }
    if want.is_null() {
        return (!got.is_null()).then(|| format!("{path}: expected none, got {}", kind(got)));
    }
    let Some((wd, ws, wv)) = as_tensor(want) else {
        return Some(format!("{path}: cannot read the expected value {want}"));
    };
    let Some((gd, gs, gv)) = as_tensor(got) else {
        return Some(format!("{path}: expected a {wd} tensor, got {}", kind(got)));
    };
    if gd != wd {
        return Some(format!("{path}: dtype {gd}, expected {wd}"));
    }
    if gs != ws {
        return Some(format!("{path}: shape {gs:?}, expected {ws:?}"));
    }
    if gv.len() != wv.len() {
        return Some(format!(
            "{path}: {} elements, expected {}",
            gv.len(),
            wv.len()
        ));
    }
    let (rtol, atol) = tolerance(&wd, half);
    let mut worst: Option<(usize, f64, f64, f64)> = None;
    for (i, (g, w)) in gv.iter().zip(&wv).enumerate() {
        let (Some(g), Some(w)) = (number(g), number(w)) else {
            return Some(format!("{path}: element {i} is {g}, expected {w}"));
        };
        let same = (g.is_nan() && w.is_nan()) || g == w;
        let excess = if same {
            0.0
        } else {
            (g - w).abs() - (atol + rtol * w.abs())
        };
        // A NaN difference (nan vs a number, inf vs -inf) is always a mismatch.
        let bad = excess > 0.0 || excess.is_nan();
        if bad && worst.is_none_or(|(_, _, _, e)| excess.is_nan() || excess > e) {
            worst = Some((
                i,
                g,
                w,
                if excess.is_nan() {
                    f64::INFINITY
                } else {
                    excess
                },
            ));
        }
    }
    worst.map(|(i, g, w, _)| {
        let bad = gv
            .iter()
            .zip(&wv)
            .filter(|(g, w)| {
                let (g, w) = (number(g).unwrap(), number(w).unwrap());
                !((g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= atol + rtol * w.abs())
            })
            .count();
        format!(
            "{path}: {bad} of {} elements differ; worst, element {i}: mirdsl {g} vs MindSpore {w}",
            wv.len()
        )
    })
}

fn kind(v: &Json) -> String {
    match v {
        Json::Array(a) => format!("a tuple of {}", a.len()),
        Json::Null => "none".into(),
        Json::Object(o) => match o.get("dtype") {
            Some(d) => format!("a {d} value"),
            None => format!("{v}"),
        },
        other => format!("{other}"),
    }
}

// ---------------------------------------------------------------------------
// The stages

fn import_stage(dir: &Path, work: &Path) -> Result<(), String> {
    let (ok, out, err) = run_command(
        Command::new(BIN)
            .arg("import")
            .arg(dir.join("model.mindir"))
            .arg("-o")
            .arg(work.join("model.mir")),
    );
    if ok && work.join("model.mir").is_file() {
        Ok(())
    } else {
        Err(summary(&err, &out))
    }
}

/// `--device D` where `MIRDSL_ZOO_DEVICE` names one.
fn with_device(cmd: &mut Command) {
    if let Some(d) = std::env::var_os("MIRDSL_ZOO_DEVICE").filter(|d| !d.is_empty()) {
        cmd.arg("--device").arg(d);
    }
}

fn check_stage(work: &Path) -> Result<(), String> {
    let (ok, out, err) = run_command(Command::new(BIN).arg("check").arg(work.join("model.mir")));
    if ok {
        Ok(())
    } else {
        // `check` prints codespan diagnostics: keep the first `error[...]` line.
        Err(summary(&out, &err))
    }
}

fn run_stage(dir: &Path, work: &Path) -> Result<Json, String> {
    let mut cmd = Command::new(BIN);
    cmd.arg("run")
        .arg(work.join("model.mir"))
        .arg("--format")
        .arg("json");
    with_device(&mut cmd);
    for (i, path) in inputs(dir).iter().enumerate() {
        let path = path.canonicalize().expect("the input exists");
        cmd.arg("--arg").arg(format!("{i}={}", path.display()));
    }
    let (ok, out, err) = run_command(&mut cmd);
    if !ok {
        return Err(summary(&err, &out));
    }
    std::fs::write(work.join("got.json"), &out).unwrap();
    serde_json::from_str(&out).map_err(|e| format!("the output is not JSON: {e}"))
}

fn read_json(path: &Path) -> Json {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

fn match_stage(dir: &Path, got: &Json) -> Result<(), String> {
    match compare(got, &read_json(&dir.join("expected.json")), "out") {
        None => Ok(()),
        Some(why) => Err(shorten(&why, 240)),
    }
}

/// The training cells' two steps: the imported step runs twice in one process
/// (`mirdsl run --steps 2`), so the second run sees the weights the first
/// updated, exactly as MindSpore's `GraphCell` does; both outputs must match
/// `expected_steps.json`, and every weight after the second step (model
/// weights and optimizer state: `accum.*`, `moments.*`, `moment1.*`,
/// `beta1_power`, `global_step`...) must match `weights_after.safetensors`.
fn steps_stage(dir: &Path, work: &Path) -> Result<(), String> {
    let expected = read_json(&dir.join("expected_steps.json"));
    let steps = expected["steps"]
        .as_array()
        .expect("expected_steps.json has steps");
    assert_eq!(steps.len(), 2, "{}: two steps", dir.display());
    assert!(
        compare(&steps[1], &steps[0], "steps[1]").is_some(),
        "{}: the second step sees updated weights, so its output differs",
        dir.display()
    );
    let saved = work.join("weights_after.safetensors");
    let mut cmd = Command::new(BIN);
    cmd.arg("run")
        .arg(work.join("model.mir"))
        .args(["--format", "json", "--steps", "2", "--save-weights"])
        .arg(&saved);
    with_device(&mut cmd);
    for (i, path) in inputs(dir).iter().enumerate() {
        let path = path.canonicalize().expect("the input exists");
        cmd.arg("--arg").arg(format!("{i}={}", path.display()));
    }
    let (ok, out, err) = run_command(&mut cmd);
    if !ok {
        return Err(summary(&err, &out));
    }
    let got: Json =
        serde_json::from_str(&out).map_err(|e| format!("the output is not JSON: {e}"))?;
    if let Some(why) = compare(&got, &Json::Array(steps.clone()), "steps") {
        return Err(shorten(&why, 240));
    }
    let want = std::fs::read(dir.join("weights_after.safetensors")).unwrap();
    let have = std::fs::read(&saved).map_err(|e| format!("no saved weights: {e}"))?;
    let ours = tensor::safetensors::names(&have).expect("our weights read");
    for name in tensor::safetensors::names(&want).expect("weights_after.safetensors reads") {
        let w = tensor::safetensors::read(&want, &name).unwrap();
        // The importer keeps MindSpore's parameter names, with `_` before a
        // segment that would start with a digit (`0.bias` is `_0.bias`).
        let plain = |n: &str| -> String {
            n.split('.')
                .map(|s| s.trim_start_matches('_'))
                .collect::<Vec<_>>()
                .join(".")
        };
        let Some(our) = ours.iter().find(|o| plain(o) == plain(&name)) else {
            return Err(format!("weight `{name}` is missing after the steps"));
        };
        let mut g = tensor::safetensors::read(&have, our).unwrap();
        // MindSpore's `asnumpy()` of a scalar parameter (`learning_rate`)
        // gives shape [1] where the model file declares [].
        if g.rank() == 0 && w.shape() == [1] {
            g = g.reshaped(vec![1]).unwrap();
        }
        let (g, w) = (tensor_json(&g), tensor_json(&w));
        if let Some(why) = compare(&g, &w, &format!("weight {name}")) {
            return Err(shorten(&why, 240));
        }
    }
    Ok(())
}

/// A tensor in the `mirdsl run --format json` form, for [`compare`].
fn tensor_json(t: &tensor::Tensor) -> Json {
    serde_json::json!({
        "dtype": t.dtype().name(),
        "shape": t.shape(),
        "data": t.to_f64_vec(),
    })
}

fn roundtrip_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../interop/tests/mindspore_roundtrip.py")
}

/// `mirdsl export` of the imported program, run by MindSpore on the zoo's
/// inputs, against MindSpore's output of the original file.
fn roundtrip_stage(python: &Path, dir: &Path, work: &Path) -> Result<(), String> {
    let case = work.join("roundtrip");
    let _ = std::fs::remove_dir_all(&case);
    std::fs::create_dir_all(&case).unwrap();
    let (ok, out, err) = run_command(
        Command::new(BIN)
            .arg("export")
            .arg(work.join("model.mir"))
            .arg("-o")
            .arg(case.join("model.mindir")),
    );
    if !ok {
        return Err(format!("export: {}", summary(&err, &out)));
    }
    for (i, path) in inputs(dir).iter().enumerate() {
        std::fs::copy(path, case.join(format!("in{i}.npy"))).unwrap();
    }
    std::fs::copy(dir.join("expected.json"), case.join("expected.json")).unwrap();
    // A training step runs twice in MindSpore too, each run updating the weights.
    if dir.join("expected_steps.json").is_file() {
        std::fs::copy(
            dir.join("expected_steps.json"),
            case.join("expected_steps.json"),
        )
        .unwrap();
    }
    let (_, out, err) = run_command(
        Command::new(python)
            .arg(roundtrip_script())
            .arg("case")
            .arg(&case),
    );
    if out.lines().last() == Some("ok") {
        Ok(())
    } else {
        let text: Vec<&str> = out
            .lines()
            .chain(err.lines())
            .filter(|l| !l.trim().is_empty() && !l.starts_with("[WARNING]"))
            .collect();
        let tail = text[text.len().saturating_sub(2)..].join(" | ");
        Err(format!("MindSpore: {}", shorten(&tail, 240)))
    }
}

fn run_network(name: &str, python: Option<&Path>) -> Outcome {
    let dir = zoo_dir().join(name);
    let work = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("zoo")
        .join(name);
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let training = dir.join("expected_steps.json").is_file();
    let mut stages = Vec::new();
    let mut failed = false;
    // `None`: the stage does not apply to this network (or this machine).
    let mut record = |stage: Stage, f: Option<&mut dyn FnMut() -> Result<(), String>>| {
        let status = match f {
            None => Status::NotApplicable,
            Some(_) if failed => Status::NotReached,
            Some(f) => match f() {
                Ok(()) => Status::Ok,
                Err(why) => {
                    failed = true;
                    Status::Fail(why)
                }
            },
        };
        stages.push((stage, status));
    };
    record(Stage::Import, Some(&mut || import_stage(&dir, &work)));
    record(Stage::Check, Some(&mut || check_stage(&work)));
    let mut got = Json::Null;
    record(
        Stage::Run,
        Some(&mut || {
            got = run_stage(&dir, &work)?;
            Ok(())
        }),
    );
    record(Stage::Match, Some(&mut || match_stage(&dir, &got)));
    let mut steps = || steps_stage(&dir, &work);
    record(
        Stage::Steps,
        training.then_some(&mut steps as &mut dyn FnMut() -> Result<(), String>),
    );
    let mut roundtrip = || roundtrip_stage(python.unwrap(), &dir, &work);
    record(
        Stage::Roundtrip,
        python
            .is_some()
            .then_some(&mut roundtrip as &mut dyn FnMut() -> Result<(), String>),
    );
    Outcome {
        name: name.to_string(),
        stages,
    }
}

// ---------------------------------------------------------------------------
// The list of expected failures

/// `name stage: reason` lines; `#` starts a comment.
fn expected_failures(text: &str) -> BTreeMap<String, (Stage, String)> {
    let mut map = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split_once('#').map_or(line, |(l, _)| l).trim();
        if line.is_empty() {
            continue;
        }
        let (head, reason) = line.split_once(':').unwrap_or((line, ""));
        let mut words = head.split_whitespace();
        let (Some(name), Some(stage), None) = (words.next(), words.next(), words.next()) else {
            panic!(
                "EXPECTED_FAILURES line {}: write `name stage: reason`",
                i + 1
            );
        };
        let stage = Stage::parse(stage).unwrap_or_else(|| {
            panic!(
                "EXPECTED_FAILURES line {}: unknown stage `{stage}` (one of {})",
                i + 1,
                STAGES.map(Stage::name).join(", ")
            )
        });
        let old = map.insert(name.to_string(), (stage, reason.trim().to_string()));
        assert!(old.is_none(), "EXPECTED_FAILURES lists {name} twice");
    }
    map
}

/// The header comment of EXPECTED_FAILURES (kept when the test suggests a new list).
fn header(text: &str) -> String {
    text.lines()
        .take_while(|l| l.starts_with('#') || l.trim().is_empty())
        .map(|l| format!("{l}\n"))
        .collect()
}

fn cell(status: &Status) -> &'static str {
    match status {
        Status::Ok => "ok",
        Status::Fail(_) => "FAIL",
        Status::NotApplicable => "n/a",
        Status::NotReached => "-",
    }
}

#[test]
fn zoo_networks() {
    let zoo = zoo_dir();
    let mut names: Vec<String> = std::fs::read_dir(&zoo)
        .expect("testdata/zoo exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("model.mindir").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 24, "the zoo has {} networks", names.len());
    let only: Option<Vec<String>> = std::env::var("MIRDSL_ZOO")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.split(',').map(|n| n.trim().to_string()).collect());
    if let Some(only) = &only {
        for n in only {
            assert!(names.contains(n), "MIRDSL_ZOO names `{n}`, not in the zoo");
        }
        names.retain(|n| only.contains(n));
    }
    let list_path = zoo.join("EXPECTED_FAILURES");
    let list_text = std::fs::read_to_string(&list_path).unwrap_or_default();
    let expected = expected_failures(&list_text);
    // Without MindSpore the roundtrip stage is skipped (with the reason
    // printed; a failure with `MIRDSL_REQUIRE_TOOLS=mindspore`).
    let python =
        test_support::mindspore_python().map_err(|why| format!("the roundtrip stage: {why}"));
    let python = test_support::require(test_support::Tool::MindSpore, python);

    // A few networks at a time: each stage is a process of its own.
    let results: Vec<Mutex<Option<Outcome>>> = names.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 4);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(name) = names.get(i) else { break };
                let outcome = run_network(name, python.as_deref());
                *results[i].lock().unwrap() = Some(outcome);
            });
        }
    });
    let outcomes: Vec<Outcome> = results
        .into_iter()
        .map(|m| m.into_inner().unwrap().expect("every network ran"))
        .collect();

    // The table.
    let width = names.iter().map(String::len).max().unwrap_or(7).max(7);
    let mut table = format!("{:width$}", "network");
    for st in STAGES {
        table += &format!(" {:>9}", st.name());
    }
    table += "  verdict\n";
    let mut problems = Vec::new();
    let mut passing = 0;
    for o in &outcomes {
        table += &format!("{:width$}", o.name);
        for st in STAGES {
            table += &format!(" {:>9}", cell(o.status(st)));
        }
        let listed = expected.get(&o.name);
        let verdict = match (o.failure(), listed) {
            (None, None) => {
                passing += 1;
                "pass".to_string()
            }
            (Some((st, why)), None) => {
                problems.push(format!(
                    "{} fails at {} and is not in EXPECTED_FAILURES: {why}",
                    o.name,
                    st.name()
                ));
                format!("UNEXPECTED FAILURE at {}", st.name())
            }
            (Some((st, why)), Some((want, _))) if st == *want => {
                format!("expected failure at {}: {why}", st.name())
            }
            (Some((st, why)), Some((want, _))) => {
                problems.push(format!(
                    "{} now fails at {}, EXPECTED_FAILURES says {}: {why}",
                    o.name,
                    st.name(),
                    want.name()
                ));
                format!("fails at {}, listed at {}", st.name(), want.name())
            }
            (None, Some((Stage::Roundtrip, _))) if python.is_none() => {
                passing += 1;
                "pass (its listed roundtrip failure is not checked here)".to_string()
            }
            (None, Some((want, _))) => {
                problems.push(format!(
                    "{} passes now: remove its line (`{} {}`) from EXPECTED_FAILURES",
                    o.name,
                    o.name,
                    want.name()
                ));
                "PASSES, but is listed as failing".to_string()
            }
        };
        table += &format!("  {verdict}\n");
    }
    table += &format!("{passing} of {} networks pass\n", outcomes.len());
    println!("{table}");
    if only.is_none() {
        for name in expected.keys() {
            if !names.contains(name) {
                problems.push(format!(
                    "EXPECTED_FAILURES lists {name}, which is not in the zoo"
                ));
            }
        }
    }
    if !problems.is_empty() {
        // The list as it should read now (for the networks run here).
        let mut suggested = header(&list_text);
        for o in &outcomes {
            match o.failure() {
                Some((st, why)) => suggested += &format!("{} {}: {why}\n", o.name, st.name()),
                None => {
                    if let Some((Stage::Roundtrip, why)) = expected.get(&o.name) {
                        if python.is_none() {
                            suggested += &format!("{} roundtrip: {why}\n", o.name);
                        }
                    }
                }
            }
        }
        panic!(
            "the zoo disagrees with testdata/zoo/EXPECTED_FAILURES:\n  {}\n\n\
             {table}\nEXPECTED_FAILURES as it would read now:\n{suggested}",
            problems.join("\n  ")
        );
    }
}

#[test]
fn compare_tolerates_rounding_only() {
    let t = |dtype: &str, data: &[f64]| serde_json::json!({"dtype": dtype, "shape": [data.len()], "data": data});
    assert_eq!(
        compare(&t("f32", &[1.0, 2.0]), &t("f32", &[1.00001, 2.0]), "out"),
        None
    );
    assert!(compare(&t("f32", &[1.0, 2.0]), &t("f32", &[1.01, 2.0]), "out").is_some());
    assert_eq!(compare(&t("f16", &[1.0]), &t("f16", &[1.004]), "out"), None);
    // f32 outputs of a network with f16 outputs get the f16 tolerance.
    let mixed = |a: f64| serde_json::json!([t("f16", &[1.0]), t("f32", &[a])]);
    assert_eq!(compare(&mixed(0.5), &mixed(0.5004), "out"), None);
    assert!(compare(&t("f32", &[0.5]), &t("f32", &[0.5004]), "out").is_some());
    assert!(compare(&t("f32", &[1.0]), &t("f16", &[1.0]), "out").is_some());
    assert!(compare(&t("i32", &[3.0]), &t("i32", &[4.0]), "out").is_some());
    let scalar = serde_json::json!({"dtype": "f32", "value": 0.5});
    let zero_d = serde_json::json!({"dtype": "f32", "shape": [], "data": [0.5]});
    assert_eq!(compare(&scalar, &zero_d, "out"), None);
    let nan = serde_json::json!({"dtype": "f32", "shape": [1], "data": ["nan"]});
    assert_eq!(compare(&nan, &nan, "out"), None);
    assert!(compare(&t("f32", &[0.0]), &nan, "out").is_some());
    let tuple = serde_json::json!([zero_d, [scalar]]);
    assert_eq!(compare(&tuple, &tuple, "out"), None);
    assert!(compare(&serde_json::json!([zero_d]), &tuple, "out").is_some());
    let list =
        expected_failures("# c\nresnet18 import: no AdaptiveAvgPool2D # x\n\nlstm run: why\n");
    assert_eq!(
        list["resnet18"],
        (Stage::Import, "no AdaptiveAvgPool2D".to_string())
    );
    assert_eq!(list["lstm"].0, Stage::Run);
}
