//! Every failure the program generator found, minimized, as a regression
//! test: each program in `tests/fixtures` passes all of gradgen's checks.

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
