//! The export lowerings of the gradient helpers (`src/export_lower`): every
//! call the registry's gradient rules make, on their samples
//! (`ops::defs::samples`), of a helper MindSpore has no counterpart of and
//! that has no DSL expansion is written with MindSpore primitives, and that
//! program computes what the helper's kernel computes. So a helper no
//! lowering writes, or one written wrong, fails here, before any export.

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
