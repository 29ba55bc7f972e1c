//! Every failure the program generator found, minimized, as a regression
//! test: each program in `tests/fixtures` passes all of gradgen's checks.
//! Failures found but not yet fixed go in `tests/fixtures/open` (not run
//! here; `gradgen --check FILE` shows each; none at present), false alarms
//! in `tests/fixtures/discarded`.

#[test]
fn fixtures() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mir"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        match gradgen::check::check_source(&text, 7) {
            gradgen::Outcome::Passed { .. } => {}
            gradgen::Outcome::Discarded(why) => {
                failures.push(format!("{}: discarded ({why})", file.display()))
            }
            gradgen::Outcome::Failed(f) => failures.push(format!(
                "{}: {:?} (order {}): {}",
                file.display(),
                f.kind,
                f.order,
                f.message
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Generator false alarms: programs whose gradient cannot be judged at the
/// point drawn (a jump there) must be discarded, not reported.
#[test]
fn discarded_fixtures() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/discarded");
    for e in std::fs::read_dir(&dir).unwrap() {
        let file = e.unwrap().path();
        let text = std::fs::read_to_string(&file).unwrap();
        match gradgen::check::check_source(&text, 7) {
            gradgen::Outcome::Discarded(why) => {
                assert!(
                    why.contains("not differentiable"),
                    "{}: {why}",
                    file.display()
                )
            }
            gradgen::Outcome::Passed { .. } => panic!("{}: passed", file.display()),
            gradgen::Outcome::Failed(f) => {
                panic!("{}: {:?}: {}", file.display(), f.kind, f.message)
            }
        }
    }
}
