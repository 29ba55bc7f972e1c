//! The command line's manners (issue 28): run-time faults shown down to the
//! user's own line, did-you-mean for names given on the command line,
//! integer parameters refused as `--wrt`, `random(low, high)`, `fmt --check`
//! diffs and `fmt -`, `ir`/`dot --entry` selecting the same graphs, and
//! imported floats in their shortest form.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_mirdsl");

/// A fresh directory for one test, holding `files` (name, text).
fn setup(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mirdsl-usability-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

/// `mirdsl ARGS...` run in `dir`, without colour.
fn mirdsl(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("mirdsl runs")
}

/// `mirdsl ARGS...` in `dir` with `input` on standard input.
fn mirdsl_stdin(dir: &Path, args: &[&str], input: &str) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mirdsl starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().expect("mirdsl runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited")
}

/// The line of `text` holding `needle` (1-based), for `file:LINE:COL` checks.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("`{needle}` not in the text"))
        + 1
}

// ---------------------------------------------------------------------------
// A. Run-time faults inside called graphs show the way down from the user's line.

const EMBED_MODEL: &str = r#"import "@std/nn/embedding.mir" as nn

param tok.table: f32[5, 4] = ones

graph encode(ids: i32[N]) -> f32[N, 4] {
  h = nn.embedding(ids, tok.table)
  return h
}

graph main(ids: i32[N]) -> f32[N, 4] {
  e = encode(ids)
  return e * 2.0
}
"#;

#[test]
fn fault_in_a_library_graph_shows_the_users_call() {
    let dir = setup("embed", &[("model.mir", EMBED_MODEL)]);
    // Token 7 of a 5-row table: the checker cannot know, the run finds it.
    let o = mirdsl(&dir, &["run", "model.mir", "--arg", "ids=[1, 7, 2]"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    assert!(
        err.contains("error: run-time fault: `Gather`: index 7 is out of range"),
        "{err}"
    );
    // The fault, in the library's file, labelled with what went wrong.
    let lib = analysis::modules::std_text(Path::new("@std/nn/embedding.mir")).unwrap();
    let lib_line = line_of(lib, "return Gather(table, ids, 0)");
    assert!(
        err.contains(&format!("nn/embedding.mir:{lib_line}:10")),
        "the library file and line: {err}"
    );
    assert!(
        err.contains("^ index 7 is out of range for axis 0 of size 5"),
        "the primary label says what went wrong: {err}"
    );
    assert!(!err.contains("^ shape"), "no category as the label: {err}");
    // Each call on the way, in the user's file, the outermost included.
    let call = line_of(EMBED_MODEL, "nn.embedding(ids, tok.table)");
    assert!(err.contains(&format!("model.mir:{call}:7")), "{err}");
    assert!(err.contains("- in this call of `nn.embedding`"), "{err}");
    let outer = line_of(EMBED_MODEL, "e = encode(ids)");
    assert!(
        err.contains(&format!("{outer} │   e = encode(ids)")),
        "the outermost call, in the file run: {err}"
    );
    assert!(err.contains("- in this call of `encode`"), "{err}");
    assert!(
        err.contains("call stack: main -> encode -> nn.embedding"),
        "{err}"
    );
    // The library's snippet comes first (the fault), then the user's calls.
    let lib_at = err.find("embedding.mir:").unwrap();
    let user_at = err.find("model.mir:").unwrap();
    assert!(lib_at < user_at, "{err}");
}

#[test]
fn fault_in_the_users_other_file_shows_both_files() {
    let layers = "# Groups of three.\ngraph triples(x) {\n  return Reshape(x, (-1, 3))\n}\n";
    let prog =
        "import \"layers.mir\" as L\n\ngraph main(x: f32[N]) {\n  t = L.triples(x)\n  return t\n}\n";
    let dir = setup("twofiles", &[("layers.mir", layers), ("prog.mir", prog)]);
    // A length known only at run time: 4 is no multiple of 3.
    let o = mirdsl(
        &dir,
        &["run", "prog.mir", "--arg", "x=[1.0, 2.0, 3.0, 4.0]"],
    );
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    assert!(err.contains("layers.mir:3:10"), "{err}");
    assert!(
        err.contains("^ cannot reshape [4] (4 elements) to (-1, 3)"),
        "{err}"
    );
    assert!(err.contains("prog.mir:4:7"), "{err}");
    assert!(err.contains("- in this call of `L.triples`"), "{err}");
}

// ---------------------------------------------------------------------------
// B. Did-you-mean for names given on the command line.

const TRAIN: &str = r#"import "@std/nn/dense.mir" as nn
import "@std/nn/embedding.mir" as emb

param tok.table: f32[5, 4] = ones
param fc.w: f32[3, 4] = ones
param fc.b: f32[3] = zeros
param spare: f32[2] = zeros
param step: i64[] = zeros

graph loss(ids: i32[B], labels: i32[B]) -> f32[] {
  h = emb.embedding(ids, tok.table)
  logits = nn.dense(h, fc.w, fc.b)
  return SparseSoftmaxCrossEntropyWithLogits(logits, labels)
}

graph train_step(ids: i32[B], labels: i32[B]) -> f32[] {
  return loss(ids, labels)
}

graph scaled(x: f32[3], k: i32[]) -> f32[] {
  return ReduceSum(x * Cast(k, f32) * fc.b)
}
"#;

#[test]
fn unknown_entry_suggests_and_lists_own_graphs_apart() {
    let dir = setup("entry", &[("x.mir", TRAIN)]);
    for cmd in [
        vec!["run", "x.mir", "--entry", "trainstep"],
        vec!["grad", "x.mir", "--entry", "trainstep"],
        vec!["ir", "x.mir", "--entry", "trainstep"],
        vec!["dot", "x.mir", "--entry", "trainstep"],
        vec!["export", "x.mir", "--entry", "trainstep", "-o", "x.mindir"],
    ] {
        let o = mirdsl(&dir, &cmd);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{cmd:?}: {err}");
        let mut lines = err.lines();
        assert_eq!(
            lines.next(),
            Some("error: no graph `trainstep` in x.mir; did you mean `train_step`?"),
            "{cmd:?}: {err}"
        );
        assert_eq!(
            lines.next(),
            Some("note: the graphs of x.mir: `loss`, `train_step`, `scaled`"),
            "{cmd:?}: the file's own graphs first: {err}"
        );
        // The library's graphs apart, one short line per imported file.
        assert!(
            err.contains(
                "note: imported from @std/nn/dense.mir: `nn.dense`, `nn.dense_no_bias`, `nn.dense_act`, and 2 more"
            ),
            "{cmd:?}: {err}"
        );
        assert!(
            err.contains("note: imported from @std/nn/embedding.mir: `emb.embedding`, `emb.embedding_scaled`"),
            "{cmd:?}: {err}"
        );
        assert_eq!(err.lines().count(), 4, "{cmd:?}: brief: {err}");
        assert!(!dir.join("x.mindir").exists());
    }
    // An imported graph is found by its linked name, and suggested.
    let o = mirdsl(&dir, &["ir", "x.mir", "--entry", "emb.embeding"]);
    assert!(
        stderr(&o)
            .starts_with("error: no graph `emb.embeding` in x.mir; did you mean `emb.embedding`"),
        "{}",
        stderr(&o)
    );
    // Nothing close: no guess.
    let o = mirdsl(&dir, &["run", "x.mir", "--entry", "zzzzzz"]);
    assert!(
        stderr(&o).starts_with("error: no graph `zzzzzz` in x.mir\n"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn unknown_wrt_and_arg_names_suggest() {
    let dir = setup("names", &[("x.mir", TRAIN)]);
    let o = mirdsl(
        &dir,
        &["grad", "x.mir", "--entry", "loss", "--wrt", "tok.tabel"],
    );
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}");
    assert!(
        err.contains(
            "error: `--wrt tok.tabel`: `tok.tabel` is neither a parameter of `loss` nor a weight; did you mean `tok.table`?"
        ),
        "{err}"
    );
    assert!(
        err.contains("note: the parameters of `loss`: `ids`, `labels`"),
        "{err}"
    );
    let o = mirdsl(
        &dir,
        &["grad", "x.mir", "--entry", "loss", "--wrt", "label"],
    );
    assert!(
        stderr(&o).contains("did you mean `labels`?"),
        "{}",
        stderr(&o)
    );

    let o = mirdsl(
        &dir,
        &[
            "run",
            "x.mir",
            "--entry",
            "loss",
            "--arg",
            "idz=[1]",
            "--arg",
            "labels=[0]",
        ],
    );
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}");
    assert!(
        err.contains("error: `--arg idz=...`: the entry has no parameter `idz`; did you mean `ids`? (its parameters: `ids`, `labels`)"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// C. Integers and booleans have no gradient.

#[test]
fn grad_refuses_integer_parameters_and_weights() {
    let dir = setup("intgrad", &[("x.mir", TRAIN)]);
    let o = mirdsl(
        &dir,
        &["grad", "x.mir", "--entry", "loss", "--wrt", "labels"],
    );
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}");
    assert!(stdout(&o).is_empty());
    assert!(
        err.contains("error: `--wrt labels`: parameter `labels` of `loss` is i32; an integer has no gradient"),
        "{err}"
    );
    assert!(
        err.contains("note: `loss` has no float parameter; the float weights it uses: `tok.table`, `fc.w`, `fc.b`"),
        "only the weights `loss` uses: {err}"
    );
    // By position, and an integer weight.
    let o = mirdsl(&dir, &["grad", "x.mir", "--entry", "scaled", "--wrt", "1"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}");
    assert!(err.contains("parameter `k` of `scaled` is i32"), "{err}");
    assert!(err.contains("note: its float parameters: `x`"), "{err}");
    let o = mirdsl(
        &dir,
        &["grad", "x.mir", "--entry", "scaled", "--wrt", "x,step"],
    );
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("`--wrt step`: weight `step` is i64; an integer has no gradient"),
        "{}",
        stderr(&o)
    );
    // The default is the first parameter: an integer one is refused too.
    let o = mirdsl(&dir, &["grad", "x.mir", "--entry", "loss"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}");
    assert!(
        err.contains("without `--wrt`, the gradient is with respect to the first parameter, but `ids` is i32"),
        "{err}"
    );
    assert!(
        err.contains("help: choose what to differentiate with `--wrt"),
        "{err}"
    );
    // Float ones still work, and the program checks.
    let o = mirdsl(
        &dir,
        &[
            "grad",
            "x.mir",
            "--entry",
            "loss",
            "--wrt",
            "tok.table,fc.w",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("graph grad_loss("), "{}", stdout(&o));
    let o = mirdsl(&dir, &["grad", "x.mir", "--entry", "scaled"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

// ---------------------------------------------------------------------------
// F. `ir --entry` and `dot --entry` show the same graphs and weights.

const REACH: &str = r#"param a.w: f32[3] = ones
param b.w: f32[3] = ones
param unused: f32[2] = zeros

graph helper(x) { return x * a.w }
graph other(x) { return x + b.w }
graph apply(f, x) { return f(x) }
graph top(x: f32[3]) {
  y = apply(helper, x)
  return y
}
graph main(x: f32[3]) { return other(top(x)) }
"#;

#[test]
fn ir_and_dot_entry_select_the_same_graphs() {
    let dir = setup("reach", &[("r.mir", REACH)]);
    let o = mirdsl(&dir, &["ir", "r.mir", "--entry", "top"]);
    let ir = stdout(&o);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let graphs: Vec<&str> = ir
        .lines()
        .filter_map(|l| l.strip_prefix("graph "))
        .map(|l| l.split('(').next().unwrap())
        .collect();
    // The entry, the graph it calls and the graph it passes as a value, in
    // the program's order; nothing it does not reach.
    assert_eq!(graphs, ["helper", "apply", "top"], "{ir}");
    let weights: Vec<&str> = ir.lines().filter(|l| l.starts_with("param ")).collect();
    assert_eq!(weights, ["param a.w: f32[3] = ..."], "{ir}");

    let o = mirdsl(&dir, &["dot", "r.mir", "--entry", "top"]);
    let dot = stdout(&o);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let clusters: Vec<&str> = dot
        .lines()
        .filter_map(|l| l.trim().strip_prefix("subgraph \"cluster_"))
        .filter_map(|l| l.strip_suffix(":g0\" {"))
        .collect();
    assert_eq!(clusters, graphs, "{dot}");
    assert!(dot.contains("\"weight:a.w\" ["), "{dot}");
    assert!(
        !dot.contains("weight:b.w"),
        "a weight no included graph uses: {dot}"
    );
    assert!(!dot.contains("weight:unused"), "{dot}");

    // The MindSpore form names the chosen entry.
    let o = mirdsl(
        &dir,
        &["ir", "r.mir", "--entry", "top", "--format", "ms-ir"],
    );
    assert!(
        stdout(&o).starts_with("# IR entry: @top\n"),
        "{}",
        stdout(&o)
    );

    // Without --entry: every graph, and the weights they use only.
    let o = mirdsl(&dir, &["dot", "r.mir"]);
    let dot = stdout(&o);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        dot.contains("\"weight:a.w\" [") && dot.contains("\"weight:b.w\" ["),
        "{dot}"
    );
    assert!(
        !dot.contains("weight:unused"),
        "an unused weight is not drawn: {dot}"
    );
}

// ---------------------------------------------------------------------------
// E. `fmt --check` shows the diff; `fmt -` formats standard input.

const UNFORMATTED: &str = "graph f(x){\n  y=x+1\n  return y\n}\n\n\n\n\n\n\ngraph g(x) {\n  return x\n}\n\n# the end\ngraph h(x) {return    x}\n";

const FORMATTED: &str = "graph f(x) {\n  y = x + 1\n  return y\n}\n\ngraph g(x) {\n  return x\n}\n\n# the end\ngraph h(x) { return x }\n";

const UNFORMATTED_DIFF: &str = "@@ -1,16 +1,11 @@
-graph f(x){
-  y=x+1
+graph f(x) {
+  y = x + 1
   return y
 }
 
-
-
-
-
-
 graph g(x) {
   return x
 }
 
 # the end
-graph h(x) {return    x}
+graph h(x) { return x }
";

#[test]
fn fmt_check_prints_a_unified_diff() {
    let dir = setup("fmtcheck", &[("u.mir", UNFORMATTED), ("ok.mir", FORMATTED)]);
    let o = mirdsl(&dir, &["fmt", "--check", "u.mir", "ok.mir"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        format!("--- a/u.mir\n+++ b/u.mir\n{UNFORMATTED_DIFF}"),
        "only the unformatted file, with 3 lines of context"
    );
    assert!(
        stderr(&o).contains("u.mir: not formatted"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("ok.mir"), "{}", stderr(&o));
    // Nothing was written.
    assert_eq!(
        std::fs::read_to_string(dir.join("u.mir")).unwrap(),
        UNFORMATTED
    );
    // Two hunks where the changes are far apart.
    let far: String = (0..20)
        .map(|i| format!("graph g{i}(x) {{\n  return x\n}}\n\n"))
        .collect::<String>()
        .replacen(
            "graph g1(x) {\n  return x",
            "graph g1(x) {\n  return    x",
            1,
        )
        .replacen(
            "graph g18(x) {\n  return x",
            "graph g18(x) {\n  return    x",
            1,
        );
    std::fs::write(dir.join("far.mir"), &far).unwrap();
    let o = mirdsl(&dir, &["fmt", "--check", "far.mir"]);
    assert_eq!(code(&o), 1);
    let diff = stdout(&o);
    assert_eq!(
        diff.matches("\n@@ ").count() + usize::from(diff.starts_with("@@")),
        2,
        "{diff}"
    );
    assert!(
        diff.contains(
            "@@ -3,7 +3,7 @@\n }\n \n graph g1(x) {\n-  return    x\n+  return x\n }\n \n"
        ),
        "{diff}"
    );
    // Formatted, the check passes and prints nothing.
    let o = mirdsl(&dir, &["fmt", "u.mir"]);
    assert_eq!(code(&o), 0);
    assert_eq!(
        std::fs::read_to_string(dir.join("u.mir")).unwrap(),
        FORMATTED
    );
    let o = mirdsl(&dir, &["fmt", "--check", "u.mir"]);
    assert_eq!((code(&o), stdout(&o).as_str()), (0, ""));
}

#[test]
fn fmt_reads_standard_input() {
    let dir = setup("fmtstdin", &[]);
    let o = mirdsl_stdin(&dir, &["fmt", "-"], UNFORMATTED);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o), FORMATTED);
    let o = mirdsl_stdin(&dir, &["fmt", "-", "--check"], UNFORMATTED);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        format!("--- <stdin>\n+++ <stdin>\n{UNFORMATTED_DIFF}")
    );
    let o = mirdsl_stdin(&dir, &["fmt", "--check", "-"], FORMATTED);
    assert_eq!((code(&o), stdout(&o).as_str()), (0, ""));
    // Syntax errors: rendered, nothing on stdout, exit 1.
    let o = mirdsl_stdin(&dir, &["fmt", "-"], "graph f(x) { return ( }\n");
    assert_eq!(code(&o), 1);
    assert_eq!(stdout(&o), "");
    let err = stderr(&o);
    assert!(err.contains("<stdin>:1:"), "{err}");
    assert!(
        err.contains("error: not formatting standard input: it has syntax errors"),
        "{err}"
    );
    // `-` with files is a usage error.
    let o = mirdsl_stdin(&dir, &["fmt", "-", "x.mir"], FORMATTED);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}

// ---------------------------------------------------------------------------
// D. `random(low, high)`.

const RANDOM: &str = r#"param w: f32[4, 3] = ones

graph loss(x: f32[B, 3], labels: i32[B]) -> f32[] {
  logits = MatMul(x, w, transpose_b=true)
  return SparseSoftmaxCrossEntropyWithLogits(logits, labels)
}

graph echo(x: f32[B, 3], labels: i32[B], n: i64[B], flags: bool[B], d: f64[B]) {
  return (x, labels, n, flags, d)
}
"#;

/// The `data` arrays of a JSON tuple result, as numbers (booleans as 0/1).
fn json_data(o: &Output) -> Vec<Vec<f64>> {
    let v: serde_json::Value = serde_json::from_str(&stdout(o)).expect("JSON");
    v.as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().or(x.as_bool().map(f64::from)).unwrap())
                .collect()
        })
        .collect()
}

#[test]
fn random_with_bounds_per_dtype() {
    let dir = setup("random", &[("r.mir", RANDOM)]);
    // Labels of 4 classes: the loss runs.
    let o = mirdsl(
        &dir,
        &[
            "run",
            "r.mir",
            "--entry",
            "loss",
            "--dim",
            "B=64",
            "--arg",
            "x=random",
            "--arg",
            "labels=random(0,4)",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let args = [
        "run",
        "r.mir",
        "--entry",
        "echo",
        "--dim",
        "B=500",
        "--format",
        "json",
        "--arg",
        "x=random(2, 3)",
        "--arg",
        "labels=random(0, 4)",
        "--arg",
        "n=random(-5, -3)",
        "--arg",
        "flags=random",
        "--arg",
        "d=random(-0.001, 0.001)",
    ];
    let o = mirdsl(&dir, &args);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let data = json_data(&o);
    let within = |v: &[f64], lo: f64, hi: f64| v.iter().all(|&x| lo <= x && x < hi);
    assert!(within(&data[0], 2.0, 3.0), "{:?}", data[0]);
    assert!(within(&data[1], 0.0, 4.0), "{:?}", data[1]);
    for k in 0..4 {
        assert!(data[1].contains(&(k as f64)), "every class appears");
    }
    assert!(
        data[2].iter().all(|&x| x == -5.0 || x == -4.0),
        "{:?}",
        data[2]
    );
    assert!(data[2].contains(&-5.0) && data[2].contains(&-4.0));
    assert!(within(&data[4], -0.001, 0.001), "{:?}", data[4]);
    // Deterministic.
    assert_eq!(json_data(&mirdsl(&dir, &args)), data);
    // Plain `random` as before: floats in [-1, 1), integers in [0, 10), fair booleans.
    let plain = [
        "run",
        "r.mir",
        "--entry",
        "echo",
        "--dim",
        "B=500",
        "--format",
        "json",
        "--arg",
        "x=random",
        "--arg",
        "labels=random",
        "--arg",
        "n=random",
        "--arg",
        "flags=random",
        "--arg",
        "d=random",
    ];
    let data = json_data(&mirdsl(&dir, &plain));
    assert!(within(&data[0], -1.0, 1.0));
    assert!(data[0].iter().any(|&x| x < -0.5) && data[0].iter().any(|&x| x > 0.5));
    assert!(within(&data[1], 0.0, 10.0) && data[1].contains(&9.0));
    assert!(data[1].iter().all(|x| x.fract() == 0.0));
    assert!(data[3].contains(&0.0) && data[3].contains(&1.0));

    // Bad bounds: a clear message, exit 2.
    for (arg, message) in [
        (
            "labels=random(4, 0)",
            "the low bound must be below the high bound",
        ),
        (
            "labels=random(2, 2)",
            "the low bound must be below the high bound",
        ),
        ("labels=random(a, 4)", "`a` is not a number"),
        (
            "labels=random(0)",
            "expected two bounds, `random(low, high)`",
        ),
        (
            "labels=random(0.5, 4)",
            "the bounds must be integers for i32 values",
        ),
        ("labels=random(0, 1e10)", "does not fit i32"),
        (
            "flags=random(0, 1)",
            "`random(low, high)` makes numbers, not booleans",
        ),
        (
            "x=random(1, 1)",
            "the low bound must be below the high bound",
        ),
    ] {
        let mut args = vec![
            "run", "r.mir", "--entry", "echo", "--dim", "B=2", "--arg", arg,
        ];
        for other in [
            "x=zeros",
            "labels=zeros",
            "n=zeros",
            "flags=zeros",
            "d=zeros",
        ] {
            if other.split('=').next() != arg.split('=').next() {
                args.extend(["--arg", other]);
            }
        }
        let o = mirdsl(&dir, &args);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{arg}: {err}");
        let name = arg.split('=').next().unwrap();
        let value = &arg[name.len() + 1..];
        assert!(
            err.starts_with(&format!("error: argument `{name}` ({value}): "))
                && err.contains(message),
            "{arg}: {err}"
        );
    }
}

// ---------------------------------------------------------------------------
// G. Imported floats in their shortest form.

#[test]
fn import_prints_f32_attributes_in_their_shortest_form() {
    let zoo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/zoo");
    let dir = setup("import", &[]);
    // A transformer layer exported by MindSpore: LayerNorm's epsilon is an
    // f32 attribute 1e-5 (not the default 1e-7, so it is written).
    let o = mirdsl(
        &dir,
        &[
            "import",
            zoo.join("transformer_encoder_layer/model.mindir")
                .to_str()
                .unwrap(),
            "-o",
            "t.mir",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let text = std::fs::read_to_string(dir.join("t.mir")).unwrap();
    assert!(text.contains("epsilon=1e-5)"), "{text}");
    assert!(!text.contains("9.999999747378752e-6"), "{text}");
    // ClampScalar's bounds, f32 attributes too.
    let o = mirdsl(
        &dir,
        &[
            "import",
            zoo.join("activations/model.mindir").to_str().unwrap(),
            "-o",
            "a.mir",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let text = std::fs::read_to_string(dir.join("a.mir")).unwrap();
    assert!(text.contains("min=-0.5, max=0.8)"), "{text}");
    assert!(!text.contains("0.800000011920929"), "{text}");
    // Both still check.
    let o = mirdsl(&dir, &["check", "t.mir", "a.mir"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

// ---------------------------------------------------------------------------
// The gradient program stands alone; `--wrt weights` is every weight.

const STEP: &str = r#"import "@std/nn/dense.mir"

param fc.weight: f32[3, 4] = normal(std=0.5, seed=3)
param fc.bias: f32[3] = zeros
param frozen: f32[2] = ones

graph scale(v) { return v * 2.0 }

graph loss(x: f32[B, 4]) -> f32[] {
  return ReduceSum(scale(dense(x, fc.weight, fc.bias)))
}
"#;

#[test]
fn grad_prints_a_program_that_runs_alone_with_every_weight() {
    let dir = setup("grad_alone", &[("step.mir", STEP)]);
    let o = mirdsl(
        &dir,
        &["grad", "step.mir", "--entry", "loss", "--wrt", "weights"],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let text = stdout(&o);
    // It declares the weights the gradient uses (not the unused one) and the
    // program's graphs it calls.
    assert!(
        text.contains("param fc.weight: f32[3, 4] = normal(mean=0.0, std=0.5, seed=3)"),
        "{text}"
    );
    assert!(text.contains("param fc.bias: f32[3] = zeros"), "{text}");
    assert!(!text.contains("frozen"), "{text}");
    // Written elsewhere, without the source beside it, it checks and runs:
    // the gradient of sum(2·(x·wᵀ + b)) is 2·Σx per row of w, and 2·B per bias.
    let alone = setup("grad_alone_out", &[("g.mir", &text)]);
    let o = mirdsl(&alone, &["check", "g.mir"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = mirdsl(
        &alone,
        &[
            "run",
            "g.mir",
            "--arg",
            "x=[[1.0, 2.0, 3.0, 4.0], [1.0, 1.0, 1.0, 1.0]]",
            "--format",
            "json",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let dw: Vec<f64> = v[0]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_f64().unwrap())
        .collect();
    assert_eq!(&dw[..4], &[4.0, 6.0, 8.0, 10.0]);
    let db: Vec<f64> = v[1]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_f64().unwrap())
        .collect();
    assert_eq!(db, [4.0, 4.0, 4.0]);
}
