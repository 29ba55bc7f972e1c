//! The oracle programs (`/work/shared/fixtures/oracle/cases/v01..v10`): their
//! `main`s (which take `grad`/`value_and_grad`/`vjp` of a graph) run through
//! the executor and this crate against MindSpore's recorded results, the
//! differentiated graphs are checked against finite differences in f64, and
//! their printed gradients check again.

mod common;

use common::*;
use ir::{MetaFn, WrtItem};
use tensor::Tensor;

struct Case {
    file: &'static str,
    /// The graph `main` differentiates, and how.
    target: &'static str,
    meta: MetaFn,
}

fn cases() -> Vec<Case> {
    use WrtItem::{Param, Weight};
    let grad = |w: Vec<WrtItem>| MetaFn::Grad { wrt: Some(w) };
    vec![
        Case {
            file: "v01_test_f",
            target: "test_f",
            meta: grad(vec![Param(0), Param(1)]),
        },
        Case {
            file: "v02_dense",
            target: "dense",
            meta: grad(vec![Param(0), Param(1), Param(2)]),
        },
        Case {
            file: "v03_softmax",
            target: "f",
            meta: MetaFn::Grad { wrt: None },
        },
        Case {
            file: "v04_hof",
            target: "hof",
            meta: MetaFn::Grad { wrt: None },
        },
        Case {
            file: "v06_if",
            target: "f",
            meta: MetaFn::Grad { wrt: None },
        },
        Case {
            file: "v07_conv_same",
            target: "f",
            meta: grad(vec![Param(0), Param(1)]),
        },
        Case {
            file: "v08_shapes",
            target: "f",
            meta: MetaFn::Grad { wrt: None },
        },
        Case {
            file: "v09_vjp",
            target: "f",
            meta: MetaFn::Vjp,
        },
        Case {
            file: "v10_mlp",
            target: "loss",
            meta: MetaFn::ValueAndGrad {
                wrt: Some(vec![
                    Weight("fc1.weight".into()),
                    Weight("fc1.bias".into()),
                    Weight("fc2.weight".into()),
                    Weight("fc2.bias".into()),
                ]),
            },
        },
    ]
}

fn source(file: &str) -> String {
    std::fs::read_to_string(oracle_dir().join(format!("{file}.mir"))).unwrap()
}

/// The recorded runs of a case: arguments (by position) and expected results.
fn runs(file: &str) -> Vec<(Vec<Tensor>, serde_json::Value)> {
    let mut out = Vec::new();
    for k in 0.. {
        let path = oracle_dir().join(format!("{file}.{k}.expected.json"));
        let Ok(text) = std::fs::read_to_string(&path) else {
            break;
        };
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        let args = json["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                let bytes = std::fs::read(oracle_dir().join(a[1].as_str().unwrap())).unwrap();
                tensor::npy::read(&bytes).unwrap()
            })
            .collect();
        out.push((args, json["expected"].clone()));
    }
    out
}

#[test]
fn mains_match_mindspore() {
    let mut checked = 0;
    for file in [
        "v01_test_f",
        "v02_dense",
        "v03_softmax",
        "v04_hof",
        "v05_closure",
        "v06_if",
        "v07_conv_same",
        "v08_shapes",
        "v09_vjp",
        "v10_mlp",
    ] {
        let prog = program(&source(file));
        for (i, (args, expected)) in runs(file).into_iter().enumerate() {
            let got = run(&prog, &oracle_dir(), "main", &args);
            assert_matches_json(&got, &expected, &format!("{file} run {i}"));
            checked += 1;
        }
    }
    assert_eq!(checked, 11);
}

#[test]
fn gradients_match_finite_differences() {
    for case in cases() {
        let text = source(case.file);
        for (args, _) in runs(case.file) {
            let prog = program(&text);
            let n = prog
                .graph(case.target)
                .unwrap()
                .graph(ir::GraphId(0))
                .params
                .len();
            let args = &args[..n];
            // Every float parameter, and the weights the case differentiates.
            let mut wrt: Vec<WrtItem> = (0..n)
                .filter(|&i| args[i].dtype().is_float())
                .map(WrtItem::Param)
                .collect();
            if let MetaFn::ValueAndGrad { wrt: Some(items) } = &case.meta {
                wrt.extend(items.iter().cloned());
            }
            check_gradient(&text, &oracle_dir(), case.target, args, &wrt);
        }
    }
}

#[test]
fn printed_gradients_check() {
    for case in cases() {
        let text = source(case.file);
        let prog = program(&text);
        let gradient = gradient_text(&prog, case.target, &case.meta);
        check_standalone(&gradient);
    }
}
