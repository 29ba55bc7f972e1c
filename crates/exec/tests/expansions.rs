//! The expansions of the gradient helpers
//! (`crates/ops/composite/gradient-helpers.mir`): each has its helper's
//! signature, and computes what the helper's kernel computes on every call the
//! registry's gradient rules make of it on their samples (`ops::defs::samples`,
//! so the statistics a normalisation's rule passes are the forward pass's).

use exec::{ExecOptions, Executor, Value};
use ops::{KValue, ParamKind};
use test_support::rule_calls::{compare, rule_calls, RuleCall};

/// A kernel value as the executor's (an empty tuple, an absent operand, as
/// `none`).
fn value(v: &KValue) -> Value {
    match v {
        KValue::Tensor(t) => Value::tensor(t.clone()),
        KValue::Tuple(items) if items.is_empty() => Value::None,
        KValue::Tuple(items) => Value::Tuple(items.iter().map(value).collect()),
    }
}

/// The expansion of `name` specialised on `call`'s attributes, run on its
/// inputs.
fn run_expansion(name: &str, call: &RuleCall) -> Result<Value, String> {
    let mut prim = ir::PrimRef::new(name);
    prim.attrs = call.attrs.clone();
    let lowered = analysis::composite::instance(&prim).ok_or("no instance")?;
    if let Some(d) = lowered.diagnostics.first() {
        return Err(format!("the expansion does not lower: {}", d.message));
    }
    let program = ir::Program {
        graphs: vec![(lowered.name.clone(), lowered.body.clone())],
        weights: vec![],
    };
    let args: Vec<Value> = call.inputs.iter().map(value).collect();
    Executor::new(&program, ExecOptions::default())
        .call(&lowered.name, args)
        .map_err(|e| e.message)
}

#[test]
fn expansions_compute_what_the_kernels_compute() {
    let calls = rule_calls(&|name| ops::composite::expansion(name).is_some());
    let mut failures = Vec::new();
    for name in ops::composite::expansions().keys() {
        let Some(calls) = calls.get(*name) else {
            failures.push(format!("{name}: no gradient rule calls it on its samples"));
            continue;
        };
        for call in calls {
            let r = run_expansion(name, call).and_then(|v| {
                let got = v
                    .to_kvalue()
                    .ok_or_else(|| exec::output::to_json(&v).to_string())?;
                compare(&got, &call.out, "out")
            });
            if let Err(e) = r {
                failures.push(format!("{name} (from {} {:?}): {e}", call.from, call.attrs));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Each expansion has its helper's signature: the same inputs, then the same
/// attributes with the same defaults; and the helper has no gradient rule (a
/// rule would make the expansion unused).
#[test]
fn expansions_have_their_helpers_signatures() {
    for (name, e) in ops::composite::expansions() {
        let helper = ops::lookup(name).unwrap_or_else(|| panic!("`{name}` is no primitive"));
        assert!(helper.grad.is_none(), "`{name}` has a gradient rule");
        let sig = |op: &ops::OpDef| -> Vec<String> {
            op.params()
                .iter()
                .map(|p| match &p.kind {
                    ParamKind::Input => p.name.to_string(),
                    ParamKind::Attr { default, .. } => {
                        format!("{}={:?}", p.name, default.as_ref().map(|d| d.value()))
                    }
                })
                .collect()
        };
        assert_eq!(sig(e.op), sig(helper), "`{name}`'s expansion");
    }
}
