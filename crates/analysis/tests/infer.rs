//! Inference snapshots: the inferred type of every parameter and binding of
//! every graph of the examples (testdata/ and the MindSpore oracle programs).
//! `UPDATE_EXPECT=1 cargo test -p analysis --test infer` rewrites them.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use expect_test::expect_file;
use ir::NodeKind;

fn describe(text: &str) -> String {
    let analysis = analysis::analyze(text);
    let mut out = String::new();
    for name in &analysis.source.order {
        let lowered = &analysis.source.graphs[name];
        let entry = &analysis.entries[name];
        let body = &lowered.body;
        for g in body.graph_ids() {
            let graph = body.graph(g);
            let _ = writeln!(out, "graph {}:", graph.name);
            let named = graph.params.iter().chain(&graph.nodes).filter(|&&n| {
                body.node(n).name.is_some()
                    && (matches!(body.node(n).kind, NodeKind::Param { .. })
                        || !body.node(n).name.as_deref().unwrap_or("").is_empty())
            });
            for &n in named {
                let vs = analysis.values_of(name, n);
                let values = if vs.is_empty() {
                    "(not evaluated)".to_string()
                } else {
                    join_unique(&vs)
                };
                let _ = writeln!(
                    out,
                    "  {}: {values}",
                    body.node(n).name.as_deref().unwrap_or("?")
                );
            }
            if let Some(o) = graph.output {
                let vs = analysis.values_of(name, o);
                if !vs.is_empty() {
                    let v = join_unique(&vs);
                    let _ = writeln!(out, "  -> {v}");
                }
            }
        }
        let _ = writeln!(
            out,
            "entry {name}: ({}) -> {}",
            entry
                .params
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            entry
                .output
                .as_ref()
                .map_or("never returns".to_string(), |o| o.to_string())
        );
    }
    for d in &analysis.diagnostics {
        let _ = writeln!(out, "{} {}", d.code.as_str(), d.message);
    }
    out
}

/// Values as text, each distinct text once (constants print as their type).
fn join_unique(values: &[ir::AbsVal]) -> String {
    let mut texts: Vec<String> = Vec::new();
    for v in values {
        let t = v.to_string();
        if !texts.contains(&t) {
            texts.push(t);
        }
    }
    texts.join(" | ")
}

fn examples() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        root.join("../../testdata"),
        root.join("../../../shared/fixtures/oracle/cases"),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "mir") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn inferred_types_of_the_examples() {
    let examples = examples();
    assert!(examples.len() >= 7);
    for path in examples {
        let text = std::fs::read_to_string(&path).unwrap();
        let snapshot = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("test_data/infer")
            .join(path.file_stem().unwrap())
            .with_extension("txt");
        expect_file![snapshot].assert_eq(&describe(&text));
    }
}

#[test]
fn examples_check_clean() {
    for path in examples() {
        let text = std::fs::read_to_string(&path).unwrap();
        let analysis = analysis::analyze(&text);
        let problems: Vec<String> = analysis
            .diagnostics
            .iter()
            .map(|d| format!("{} {}", d.code.as_str(), d.message))
            .collect();
        assert!(problems.is_empty(), "{}: {problems:#?}", path.display());
    }
}

/// A graph whose body comes to nothing known (an error in it, reported
/// there) gives callers the type it declares, its symbols bound by the
/// call: `y` is f32[2, 3], and a misuse of it is caught at the caller. A
/// graph that declares nothing still gives its callers nothing known.
#[test]
fn callers_see_the_declared_result_of_a_broken_body() {
    let text = "\
graph layer(x: f32[B, 3]) -> f32[B, 3] {
  return Bogus(x)
}
graph undeclared(x: f32[B, 3]) {
  return Bogus(x)
}
graph model(x: f32[2, 3], v: f32[4]) {
  y = layer(x)
  z = undeclared(x)
  return Add(y, v)
}
";
    expect_test::expect![[r#"
        graph layer:
          x: f32[B, 3] | f32[2, 3]
          -> ?
        entry layer: (f32[B, 3]) -> f32[B, 3]
        graph undeclared:
          x: f32[B, 3] | f32[2, 3]
          -> ?
        entry undeclared: (f32[B, 3]) -> ?
        graph model:
          x: f32[2, 3]
          v: f32[4]
          y: f32[2, 3]
          z: ?
          -> ?
        entry model: (f32[2, 3], f32[4]) -> ?
        E0140 unknown primitive `Bogus`
        E0140 unknown primitive `Bogus`
        W0001 `z` is never used
        E0201 `Add`: shapes [2, 3] and [4] cannot be broadcast: dimension 3 against 4
    "#]]
    .assert_eq(&describe(text));
}
