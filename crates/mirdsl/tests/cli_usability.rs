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
