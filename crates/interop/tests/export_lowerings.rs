//! The export lowerings of the gradient helpers (`src/export_lower`): every
//! call the registry's gradient rules make, on their samples
//! (`ops::defs::samples`), of a helper MindSpore has no counterpart of and
//! that has no DSL expansion is written with MindSpore primitives, and that
//! program computes what the helper's kernel computes. So a helper no
//! lowering writes, or one written wrong, fails here, before any export.
//! With MindSpore (`MIRDSL_MINDSPORE_PYTHON`), every lowered call is also
//! exported on its own and run there, to the kernel's numbers.

use exec::{ExecOptions, Executor, Value};
use ops::KValue;
use test_support::rule_calls::{compare, rule_calls, RuleCall};

/// Whether export must write a call of `name` with other primitives.
fn needs_lowering(name: &str) -> bool {
    ops::mindspore::export_mapping(name).is_none() && ops::composite::expansion(name).is_none()
}

/// The DSL type of a tensor: `f64[2, 3]`.
fn type_of(t: &tensor::Tensor) -> String {
    let dims: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
    format!("{}[{}]", t.dtype().name(), dims.join(", "))
}

/// `graph h(...) { return helper(...) }` for `call`: a parameter per tensor
/// (a tuple operand written as a tuple of parameters), and the arguments
/// the executor takes for them, in order.
fn program(name: &str, call: &RuleCall) -> Option<(String, Vec<Value>)> {
    let (mut params, mut operands, mut args) = (Vec::new(), Vec::new(), Vec::new());
    let mut param = |t: &tensor::Tensor| {
        let p = format!("a{}", params.len());
        params.push(format!("{p}: {}", type_of(t)));
        args.push(Value::tensor(t.clone()));
        p
    };
    for v in &call.inputs {
        operands.push(match v {
            KValue::Tensor(t) => param(t),
            KValue::Tuple(items) => {
                let items: Vec<String> = items
                    .iter()
                    .map(|i| match i {
                        KValue::Tensor(t) => Some(param(t)),
                        KValue::Tuple(_) => None,
                    })
                    .collect::<Option<_>>()?;
                format!(
                    "({})",
                    items.join(", ") + if items.len() == 1 { "," } else { "" }
                )
            }
        });
    }
    operands.extend(call.attrs.iter().map(|(k, v)| format!("{k}={v}")));
    let text = format!(
        "graph h({}) {{\n  return {name}({})\n}}\n",
        params.join(", "),
        operands.join(", ")
    );
    Some((text, args))
}

/// `call` written by export's lowerings, checked to hold only primitives
/// export writes, and run.
fn run_lowered(name: &str, call: &RuleCall) -> Result<Value, String> {
    let (text, args) = program(name, call).ok_or("a nested tuple operand")?;
    let analysis = analysis::analyze(&text);
    if let Some(d) = analysis.diagnostics.first() {
        return Err(format!("the call does not check: {}\n{text}", d.message));
    }
    let lowered = interop::lower_gradient_helpers(&analysis).map_err(|e| format!("{e:?}"))?;
    let program = lowered.source.program();
    for (_, body) in &program.graphs {
        for g in body.graph_ids() {
            for &n in &body.graph(g).nodes {
                if let Some(p) = body.called_prim(n) {
                    if needs_lowering(&p.name) {
                        return Err(format!("`{}` is left", p.name));
                    }
                }
            }
        }
    }
    Executor::new(&program, ExecOptions::default())
        .call("h", args)
        .map_err(|e| e.message)
}

/// Helpers some of whose calls export cannot write yet, and why (issue 27).
/// Each must still fail somewhere: one that passes everywhere is to leave
/// the list.
const NOT_LOWERED_YET: &[(&str, &str)] = &[];

#[test]
fn every_helper_call_is_lowered_to_what_its_kernel_computes() {
    let calls = rule_calls(&needs_lowering);
    assert!(calls.len() > 10, "{:?}", calls.keys());
    let mut failures = Vec::new();
    let mut failing = std::collections::BTreeSet::new();
    let mut checked = 0;
    for (name, calls) in &calls {
        for call in calls {
            match run_lowered(name, call).and_then(|v| {
                let got = v
                    .to_kvalue()
                    .ok_or_else(|| exec::output::to_json(&v).to_string())?;
                compare(&got, &call.out, "out")
            }) {
                Ok(()) => checked += 1,
                Err(e) => {
                    failing.insert(name.as_str());
                    if !NOT_LOWERED_YET.iter().any(|(n, _)| n == name) {
                        failures.push(format!("{name} (from {} {:?}): {e}", call.from, call.attrs));
                    }
                }
            }
        }
    }
    println!("{checked} helper calls of {} helpers lowered", calls.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let fixed: Vec<&str> = NOT_LOWERED_YET
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !failing.contains(n))
        .collect();
    assert!(
        fixed.is_empty(),
        "lowered now, leave NOT_LOWERED_YET: {fixed:?}"
    );
}

/// `v` as `mirdsl run --format json` writes it (what
/// `tests/mindspore_roundtrip.py` compares with).
fn json_of(v: &KValue) -> serde_json::Value {
    match v {
        KValue::Tensor(t) => serde_json::json!({"shape": t.shape(), "data": t.to_f64_vec()}),
        KValue::Tuple(items) => serde_json::Value::Array(items.iter().map(json_of).collect()),
    }
}

/// Helpers whose lowering MindSpore 2.10's CPU cannot run, and why. Each must
/// still fail there: one that runs is to leave the list.
const NOT_ON_MINDSPORE_CPU: &[(&str, &str)] = &[];

/// Optional (`MIRDSL_MINDSPORE_PYTHON`): every lowered helper call, in f32,
/// exported on its own and run by MindSpore 2.10, gives what the helper's
/// kernel gives.
#[test]
fn every_lowered_helper_call_runs_in_mindspore() {
    let Some(python) = test_support::require(
        test_support::Tool::MindSpore,
        test_support::mindspore_python(),
    ) else {
        return;
    };
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("export_lowerings_ms");
    let _ = std::fs::remove_dir_all(&root);
    let calls = rule_calls(&needs_lowering);
    let mut names = std::collections::BTreeMap::new();
    for (name, calls) in &calls {
        for (k, call) in calls.iter().enumerate() {
            let f32s = |v: &KValue| -> KValue {
                match v {
                    KValue::Tensor(t) if t.dtype().is_float() => {
                        KValue::Tensor(t.cast(tensor::DType::F32))
                    }
                    other => other.clone(),
                }
            };
            let narrowed = RuleCall {
                from: call.from,
                attrs: call.attrs.clone(),
                inputs: call
                    .inputs
                    .iter()
                    .map(|v| match v {
                        KValue::Tuple(items) => KValue::Tuple(items.iter().map(f32s).collect()),
                        other => f32s(other),
                    })
                    .collect(),
                out: call.out.clone(),
            };
            let Some((text, args)) = program(name, &narrowed) else {
                continue;
            };
            let model = interop::mindir::export(
                &text,
                &interop::mindir::ExportOptions {
                    entry: Some("h".into()),
                    base_dir: std::path::Path::new(".").to_path_buf(),
                    ..Default::default()
                },
            )
            .unwrap_or_else(|e| panic!("{name} (from {}): {e}\n{text}", call.from));
            let case = format!("{}-{k}", name.trim_start_matches('_'));
            let dir = root.join(&case);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("model.mindir"), model).unwrap();
            for (i, a) in args.iter().enumerate() {
                let t = a.to_kvalue().expect("a tensor");
                let KValue::Tensor(t) = t else { unreachable!() };
                std::fs::write(dir.join(format!("in{i}.npy")), tensor::npy::write(&t)).unwrap();
            }
            std::fs::write(dir.join("expected.json"), json_of(&call.out).to_string()).unwrap();
            names.insert(
                case,
                (
                    name.clone(),
                    format!("(from {} {:?})", call.from, call.attrs),
                ),
            );
        }
    }
    let out = std::process::Command::new(python)
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mindspore_roundtrip.py"))
        .arg("cases")
        .arg(&root)
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut failures = Vec::new();
    let mut failing = std::collections::BTreeSet::new();
    let mut ran = 0;
    for line in stdout.lines() {
        let Some((case, verdict)) = line.split_once(' ') else {
            continue;
        };
        let Some((name, call)) = names.get(case) else {
            continue;
        };
        ran += 1;
        if verdict != "ok" {
            failing.insert(name.clone());
            if !NOT_ON_MINDSPORE_CPU.iter().any(|(n, _)| n == name) {
                failures.push(format!("{name} {call}: {verdict}"));
            }
        }
    }
    println!(
        "{ran} of {} lowered helper calls ran in MindSpore",
        names.len()
    );
    assert_eq!(ran, names.len(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let fixed: Vec<&str> = NOT_ON_MINDSPORE_CPU
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !failing.contains(*n))
        .collect();
    assert!(
        fixed.is_empty(),
        "run in MindSpore now, leave NOT_ON_MINDSPORE_CPU: {fixed:?}"
    );
}
