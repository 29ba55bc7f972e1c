//! Runs the TextMate grammar's Node tests (vscode-textmate + vscode-oniguruma
//! tokenising every example) as part of `cargo test`. Needs Node and the
//! grammar's npm packages (`npm ci` in grammar/textmate, done by .ci/run);
//! skipped with the reason printed without them (a failure with
//! `MIRDSL_REQUIRE_TOOLS=1` or `grammar`).

use std::process::Command;

use test_support::Tool;

#[test]
fn textmate_grammar_tokenises_the_examples() {
    let Some(dir) = test_support::require(Tool::Grammar, test_support::textmate_grammar()) else {
        return;
    };
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
