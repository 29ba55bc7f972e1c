//! Runs the TextMate grammar's Node tests (vscode-textmate + vscode-oniguruma
//! tokenising every example) as part of `cargo test`. Needs Node and the
//! grammar's npm packages (`npm ci` in grammar/textmate, done by .ci/run).

use std::path::Path;
use std::process::Command;

#[test]
fn textmate_grammar_tokenises_the_examples() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../grammar/textmate");
    if !dir.join("node_modules/vscode-textmate").exists() {
        eprintln!("skipped: run `npm ci` in grammar/textmate to enable the TextMate grammar tests");
        return;
    }
    let output = Command::new("node")
        .args(["--test", "test/"])
        .current_dir(&dir)
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "TextMate grammar tests failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("# fail 0"), "{stdout}");
}
