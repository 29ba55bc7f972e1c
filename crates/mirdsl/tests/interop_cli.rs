//! `mirdsl import`, `mirdsl export`, `mirdsl dot` and `mirdsl ir --format
//! ms-ir|dot` from the command line.

use std::path::{Path, PathBuf};
use std::process::Command;

fn mirdsl() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mirdsl"))
}

fn temp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const PROGRAM: &str = "\
param w: f32[3] = ones
graph helper(x) { return x * w }
graph main(x: f32[3], y: f32[3]) {
  r = if ReduceSum(x) > 0.0 { helper(x) } else { y - 1 }
  return (r, Exp(y))
}
";

#[test]
fn export_then_import() {
    let dir = temp("cli_export_import");
    let mir = dir.join("p.mir");
    std::fs::write(&mir, PROGRAM).unwrap();
    let model = dir.join("p.mindir");
    let out = mirdsl()
        .arg("export")
        .arg(&mir)
        .arg("-o")
        .arg(&model)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::metadata(&model).unwrap().len() > 0);
    let back = dir.join("back.mir");
    let out = mirdsl()
        .arg("import")
        .arg(&model)
        .arg("-o")
        .arg(&back)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&back).unwrap();
    assert!(text.contains("graph main(x: f32[3], y: f32[3])"), "{text}");
    let out = mirdsl().arg("check").arg(&back).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A symbolic dimension survives export (MindIR's -1, named in the input's
/// `denotation`) and comes back by its name on import.
#[test]
fn symbolic_dimensions_survive_export_and_import() {
    let dir = temp("cli_symbolic_dims");
    let mir = dir.join("p.mir");
    std::fs::write(
        &mir,
        "param w: f32[4, 8] = ones\ngraph main(x: f32[B, 8]) -> f32[B, 4] {\n  return MatMul(x, w, transpose_b=true)\n}\n",
    )
    .unwrap();
    let model = dir.join("p.mindir");
    let out = mirdsl()
        .arg("export")
        .arg(&mir)
        .arg("-o")
        .arg(&model)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = mirdsl().arg("import").arg(&model).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("graph main(x: f32[B, 8])"), "{text}");
    // `--dim B=4` fixes it: a static graph.
    let out = mirdsl()
        .args(["export", "--dim", "B=4", "-o"])
        .arg(&model)
        .arg(&mir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = mirdsl().arg("import").arg(&model).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("graph main(x: f32[4, 8]) -> f32[4, 4]")
            || text.contains("graph main(x: f32[4, 8])"),
        "{text}"
    );
    // A dimension no annotation names is a usage error, with a suggestion.
    let out = mirdsl()
        .args(["export", "--dim", "b=4", "-o"])
        .arg(&model)
        .arg(&mir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did you mean `B`?"), "{err}");
}

#[test]
fn export_reports_problems() {
    let dir = temp("cli_export_errors");
    let mir = dir.join("bad.mir");
    std::fs::write(&mir, "graph main(x: f32[3]) { return Nope(x) }\n").unwrap();
    let out = mirdsl()
        .arg("export")
        .arg(&mir)
        .arg("-o")
        .arg(dir.join("bad.mindir"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let mir = dir.join("generic.mir");
    std::fs::write(&mir, "graph main(x) { return x }\n").unwrap();
    let out = mirdsl()
        .arg("export")
        .arg(&mir)
        .arg("-o")
        .arg(dir.join("g.mindir"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("annotate"));
    let out = mirdsl().arg("import").arg(&mir).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "a .mir file is not importable");
}

#[test]
fn dot_and_ir_formats() {
    let dir = temp("cli_dot");
    let mir = dir.join("p.mir");
    std::fs::write(&mir, PROGRAM).unwrap();
    let out = mirdsl()
        .arg("dot")
        .arg(&mir)
        .arg("--entry")
        .arg("main")
        .output()
        .unwrap();
    assert!(out.status.success());
    let dot = String::from_utf8_lossy(&out.stdout);
    assert!(dot.starts_with("digraph mindspore {"), "{dot}");
    assert!(
        dot.contains("cluster_helper:g0"),
        "--entry keeps the graphs main uses"
    );
    let out = mirdsl()
        .arg("dot")
        .arg(&mir)
        .arg("--entry")
        .arg("main")
        .arg("--svg")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("<svg") || stderr.contains("not available"),
        "{stderr}"
    );
    let out = mirdsl()
        .arg("ir")
        .arg(&mir)
        .arg("--format")
        .arg("ms-ir")
        .output()
        .unwrap();
    assert!(out.status.success());
    let ir = String::from_utf8_lossy(&out.stdout);
    assert!(ir.starts_with("# IR entry: @main"), "{ir}");
    assert!(ir.contains("subgraph @helper("), "{ir}");
    let out = mirdsl()
        .arg("ir")
        .arg(&mir)
        .arg("--format")
        .arg("dot")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("digraph"));
}
