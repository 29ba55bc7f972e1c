//! What `mirdsl check` prints for common mistakes, as a person reads it and
//! as CI tools read it: `testdata/diagnostics/*.mir` against the `.stderr`
//! (and `.json`) beside each (see the folder's README; `UPDATE_EXPECT=1`
//! rewrites them).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_mirdsl");

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/diagnostics")
}

/// `mirdsl check ARGS` run in the fixtures' folder (paths print as given).
fn check(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("check")
        .args(args)
        .current_dir(dir())
        .env("NO_COLOR", "1")
        .output()
        .expect("mirdsl runs")
}

/// Compares `actual` with the file `name` of the fixtures' folder, or
/// rewrites the file under `UPDATE_EXPECT=1`.
fn expect_file(name: &str, actual: &str) -> Result<(), String> {
    let path = dir().join(name);
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&path, actual).unwrap();
        return Ok(());
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    if expected == actual {
        Ok(())
    } else {
        Err(format!(
            "{name} differs (UPDATE_EXPECT=1 rewrites it)\n--- expected\n{expected}\n--- actual\n{actual}"
        ))
    }
}

#[test]
fn each_mistake_renders_as_its_stderr_file() {
    let mut cases: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".mir"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 5, "{cases:?}");
    let mut failures = Vec::new();
    for case in &cases {
        let o = check(&[case]);
        assert_eq!(o.status.code(), Some(1), "{case} has errors: exit 1");
        let stem = case.trim_end_matches(".mir");
        let stderr = String::from_utf8(o.stderr).unwrap();
        if let Err(e) = expect_file(&format!("{stem}.stderr"), &stderr) {
            failures.push(e);
        }
    }
    let o = check(&["workspace"]);
    assert_eq!(o.status.code(), Some(1));
    if let Err(e) = expect_file("workspace.stderr", &String::from_utf8(o.stderr).unwrap()) {
        failures.push(e);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn json(args: &[&str]) -> Vec<serde_json::Value> {
    let o = check(args);
    serde_json::from_slice::<serde_json::Value>(&o.stdout)
        .expect("JSON")
        .as_array()
        .unwrap()
        .clone()
}

/// The JSON of a call of a library graph with an argument missing: the
/// missing parameter is named, the definition is related in its own file,
/// and the help text is there.
#[test]
fn json_related_spans_name_their_file_and_help_is_kept() {
    let ds = json(&["--format", "json", "wrong_argument_count.mir"]);
    let text = serde_json::to_string_pretty(&ds).unwrap();
    expect_file("wrong_argument_count.json", &format!("{text}\n")).unwrap();
    let dense = ds
        .iter()
        .find(|d| d["message"].as_str().unwrap().starts_with("`dense`"))
        .expect("the dense call");
    assert_eq!(
        dense["message"],
        "`dense` takes 3 arguments but is given 2: `b` is missing"
    );
    let related = &dense["related"][0];
    assert_eq!(related["file"], "@std/nn/dense.mir");
    assert_eq!(related["message"], "`dense(x, w, b)` is defined here");
    // Line 11 of lib/nn/dense.mir is `graph dense(x, w, b) {`.
    let lib = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../lib/nn/dense.mir"),
    )
    .unwrap();
    let line = related["line"].as_u64().unwrap() as usize;
    assert!(lib
        .lines()
        .nth(line - 1)
        .unwrap()
        .starts_with("graph dense("));
    for d in &ds {
        for r in d["related"].as_array().unwrap() {
            assert!(r["file"].is_string(), "{r}");
        }
    }
    assert_eq!(dense["help"][0], "pass `b` after the 2 arguments given");
}

/// SARIF: related locations carry their file, and fixes are SARIF fixes.
#[test]
fn sarif_carries_files_help_and_fixes() {
    let o = check(&[
        "--format",
        "sarif",
        "undefined_library_names.mir",
        "wrong_dtype.mir",
        "wrong_argument_count.mir",
    ]);
    let sarif: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let import = results
        .iter()
        .find(|r| {
            r["message"]["text"]
                .as_str()
                .unwrap()
                .contains("sparse_softmax_cross_entropy")
        })
        .unwrap();
    let change = &import["fixes"][0]["artifactChanges"][0];
    assert_eq!(
        change["artifactLocation"]["uri"],
        "undefined_library_names.mir"
    );
    assert_eq!(
        change["replacements"][0]["insertedContent"]["text"],
        "import \"@std/nn/loss.mir\"\n\n"
    );
    let cast = results.iter().find(|r| r["ruleId"] == "E0200").unwrap();
    assert!(cast["message"]["text"]
        .as_str()
        .unwrap()
        .contains("help: cast to f32: `Cast(ids, f32)`"));
    let dense = results
        .iter()
        .find(|r| {
            r["message"]["text"]
                .as_str()
                .unwrap()
                .starts_with("`dense` takes")
        })
        .unwrap();
    assert_eq!(
        dense["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "@std/nn/dense.mir"
    );
}

/// The fixes `--format json` offers, applied, make the file check.
#[test]
fn applying_the_json_fixes_makes_the_files_check() {
    let scratch = std::env::temp_dir().join(format!("mirdsl-diag-fix-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    for case in ["undefined_library_names.mir", "wrong_dtype.mir"] {
        let mut text = std::fs::read_to_string(dir().join(case)).unwrap();
        let ds = json(&["--format", "json", case]);
        // Each diagnostic's first fix, applied from the end of the file back.
        let mut edits: Vec<(usize, usize, String)> = ds
            .iter()
            .filter_map(|d| d["fixes"].as_array()?.first().cloned())
            .map(|f| {
                let offset = |line: &serde_json::Value, col: &serde_json::Value| {
                    let (line, col) = (
                        line.as_u64().unwrap() as usize,
                        col.as_u64().unwrap() as usize,
                    );
                    let start: usize = text.lines().take(line - 1).map(|l| l.len() + 1).sum();
                    start
                        + text
                            .lines()
                            .nth(line - 1)
                            .unwrap_or("")
                            .chars()
                            .take(col - 1)
                            .map(char::len_utf8)
                            .sum::<usize>()
                };
                (
                    offset(&f["line"], &f["column"]),
                    offset(&f["end_line"], &f["end_column"]),
                    f["replacement"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert!(!edits.is_empty(), "{case}: fixes");
        edits.sort_by_key(|e| std::cmp::Reverse(e.0));
        for (start, end, new) in edits {
            text.replace_range(start..end, &new);
        }
        let fixed = scratch.join(case);
        std::fs::write(&fixed, &text).unwrap();
        let o = Command::new(BIN).arg("check").arg(&fixed).output().unwrap();
        assert!(
            o.status.success(),
            "{case} after its fixes:\n{text}\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
