//! Which queries re-execute after an edit, from salsa's `WillExecute` events;
//! and the incremental diagnostics equal the from-scratch ones (a new
//! database on the new text).

use std::sync::{Arc, Mutex};

use db::{salsa::plumbing::AsId, EventLog, File, RootDb};
use expect_test::{expect, Expect};
use syntax::{TextEdit, TextRange, TextSize};

const TEXT: &str = "\
graph a(x: f32[3]) {
  y = x + 1.0
  return y
}

graph b(x: f32[2, 3]) {
  y = ReduceSum(x, axis=1)
  return y * 2.0
}

graph c(x: f32[4]) {
  return Exp(x) # exp
}

# d calls b.
graph d(x: f32[2, 3]) {
  return b(x)
}
";

struct Fixture {
    db: RootDb,
    log: EventLog,
    file: File,
}

impl Fixture {
    fn new(text: &str) -> Fixture {
        let log: EventLog = Arc::new(Mutex::new(Vec::new()));
        let mut db = RootDb::with_execution_log(log.clone());
        let file = db.new_file(text);
        let f = Fixture { db, log, file };
        db::file_diagnostics(&f.db, f.file);
        f.log.lock().unwrap().clear();
        f
    }

    /// Replaces the first occurrence of `old` after `anchor` with `new`.
    fn edit(&mut self, anchor: &str, old: &str, new: &str) {
        let text = self.file.text(&self.db).to_string();
        let at = text.find(anchor).unwrap();
        let start = at + text[at..].find(old).unwrap();
        let edit = TextEdit {
            delete: TextRange::at(TextSize::from(start as u32), TextSize::of(old)),
            insert: new.to_string(),
        };
        self.db.apply_edits(self.file, vec![edit]);
    }

    /// The queries executed to get the diagnostics again, with item keys by name.
    fn executed(&mut self) -> String {
        let diagnostics = db::file_diagnostics(&self.db, self.file).clone();
        let text = self.file.text(&self.db).to_string();
        let scratch = from_scratch(&text);
        assert_eq!(
            diagnostics.to_vec(),
            scratch,
            "incremental and from-scratch diagnostics differ"
        );
        let mut names = Vec::new();
        for item in db::items(&self.db, self.file).items.iter() {
            let key = self.db.key(self.file, &item.name);
            names.push((format!("({:?})", key.as_id()), format!("({})", item.name)));
        }
        let file_id = format!("({:?})", self.file.as_id());
        let log = std::mem::take(&mut *self.log.lock().unwrap());
        log.into_iter()
            .map(|l| {
                let mut l = l.replace(&file_id, "(file)");
                // A memoised call is keyed by an interned (graph, arguments).
                if l.starts_with("call_output(") {
                    l = "call_output(call)".to_string();
                }
                for (id, name) in &names {
                    l = l.replace(id, name);
                }
                l
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn check(&mut self, expect: Expect) {
        let executed = self.executed();
        expect.assert_eq(&executed);
    }
}

/// The diagnostics of a new database on `text`.
fn from_scratch(text: &str) -> Vec<analysis::Diagnostic> {
    let mut db = RootDb::new();
    let file = db.new_file(text);
    db::file_diagnostics(&db, file).to_vec()
}

#[test]
fn first_run_executes_everything_once() {
    let log: EventLog = Arc::new(Mutex::new(Vec::new()));
    let mut db = RootDb::with_execution_log(log.clone());
    let file = db.new_file(TEXT);
    db::file_diagnostics(&db, file);
    let count = |q: &str| {
        log.lock()
            .unwrap()
            .iter()
            .filter(|l| l.starts_with(&format!("{q}(")))
            .count()
    };
    assert_eq!(count("lower"), 4);
    assert_eq!(count("infer"), 4);
}

#[test]
fn edit_in_one_graph_reinfers_it_and_its_callers_only() {
    let mut f = Fixture::new(TEXT);
    // `b`'s body: d calls b, so d is inferred again; a and c are not.
    f.edit("graph b", "axis=1", "axis=0");
    f.check(expect![[r#"
        file_diagnostics(file)
        item_syntax(b)
        positions(b)
        norm(b)
        item_diagnostics(b)
        lower(b)
        infer(b)
        signature(b)
        callees(b)
        call_output(call)
        infer(d)
        item_diagnostics(d)"#]]);
    // `a`'s body: only a.
    f.edit("graph a", "1.0", "2.0");
    f.check(expect![[r#"
        file_diagnostics(file)
        item_syntax(a)
        positions(a)
        norm(a)
        item_diagnostics(a)
        lower(a)
        infer(a)"#]]);
}

#[test]
fn edit_that_keeps_the_result_type_does_not_reinfer_callers() {
    let mut f = Fixture::new(TEXT);
    // b still returns f32[2]: its memoised call is evaluated again, finds the
    // same result, and d's inference stands (a firewall, not a cascade).
    f.edit("graph b", "y * 2.0", "y * 3.0");
    f.check(expect![[r#"
        file_diagnostics(file)
        item_syntax(b)
        positions(b)
        norm(b)
        item_diagnostics(b)
        lower(b)
        infer(b)
        signature(b)
        callees(b)
        call_output(call)"#]]);
}

#[test]
fn a_broken_body_that_declares_its_result_does_not_reinfer_callers() {
    let text = "\
graph layer(x: f32[B, 3]) -> f32[B, 3] {
  y = Exp(x)
  return y
}

graph model(x: f32[2, 3]) {
  return layer(x) + 1.0
}
";
    let mut f = Fixture::new(text);
    // Typing leaves the body broken for a moment: it comes to nothing known,
    // so callers get what `layer` declares (f32[2, 3], B bound by the call),
    // as before, and model's inference stands.
    f.edit("graph layer", "Exp(x)", "Exp(x) *");
    let executed = f.executed();
    assert!(executed.contains("call_output(call)"), "{executed}");
    assert!(!executed.contains("infer(model)"), "{executed}");
    // An unknown primitive: the same.
    f.edit("graph layer", "Exp(x) *", "Bogus(x)");
    let executed = f.executed();
    assert!(!executed.contains("infer(model)"), "{executed}");
}

#[test]
fn edit_that_changes_the_result_type_spreads_to_callers() {
    let mut f = Fixture::new(TEXT);
    // b's result becomes f32[2, 3] -> f32[3]: d's inference re-runs (and would
    // re-run its callers in turn); c is untouched.
    f.edit("graph b", "y * 2.0", "x * 2.0");
    let executed = f.executed();
    assert!(executed.contains("infer(d)"), "{executed}");
    assert!(!executed.contains("infer(c)"), "{executed}");
    assert!(!executed.contains("lower(c)"), "{executed}");
}

#[test]
fn whitespace_and_comment_edits_do_not_lower_or_infer() {
    let mut f = Fixture::new(TEXT);
    // Spaces inside an expression of `b`.
    f.edit("graph b", "y * 2.0", "y  *   2.0");
    f.check(expect![[r#"
        file_diagnostics(file)
        item_syntax(b)
        positions(b)
        item_diagnostics(b)
        norm(b)"#]]);
    // The text of a comment inside `c`'s body, made non-ASCII.
    f.edit("graph c", "# exp", "# 日本語 😀 comment");
    f.check(expect![[r#"
        file_diagnostics(file)
        item_syntax(c)
        positions(c)
        item_diagnostics(c)
        norm(c)"#]]);
    // A new line (even one holding only a comment) is a token of the body
    // (statements end at line breaks), so `c` is lowered and inferred again.
    f.edit(
        "graph c",
        "  return Exp",
        "  # another comment\n  return Exp",
    );
    let executed = f.executed();
    assert!(executed.contains("lower(c)"), "{executed}");
    // Blank lines between graphs move every later graph: nothing is lowered again.
    f.edit("graph c", "graph c", "\n\ngraph c");
    let executed = f.executed();
    assert!(!executed.contains("lower("), "{executed}");
    assert!(!executed.contains("infer("), "{executed}");
}

#[test]
fn renaming_a_top_level_item_relowers_everything() {
    let mut f = Fixture::new(TEXT);
    f.edit("graph c", "graph c", "graph c2");
    let executed = f.executed();
    for g in ["a", "b", "c2", "d"] {
        assert!(executed.contains(&format!("lower({g})")), "{executed}");
    }
}

#[test]
fn diagnostics_map_back_after_edits_before_them() {
    // An error in `c`, then edits above it: the range follows the text.
    let text = TEXT.replace("return Exp(x)", "return MatMul(x, x)");
    let mut f = Fixture::new(&text);
    f.executed();
    f.edit("graph a", "y = x + 1.0", "y = x + 1.0 # 한국어 ✓\n  z = y");
    let executed = f.executed();
    assert!(executed.contains("lower(a)"));
    assert!(!executed.contains("lower(c)"));
    let ds = db::file_diagnostics(&f.db, f.file).to_vec();
    let text = f.file.text(&f.db);
    let shape = ds
        .iter()
        .find(|d| d.code == analysis::Code::ShapeMismatch)
        .expect("a shape error in c");
    assert!(text[shape.range].contains('x'), "{}", &text[shape.range]);
}

#[test]
fn errors_in_callees_are_mapped_to_their_own_graphs() {
    // The related range of an error at a call points into the callee.
    let text = "\
graph callee(x) {
  return MatMul(x, x)
}

graph caller(v: f32[3]) {
  return callee(v)
}
";
    let mut f = Fixture::new(text);
    f.executed();
    f.edit(
        "graph callee",
        "graph callee(x) {",
        "graph callee(x) {\n  # moved down",
    );
    f.executed();
    let ds = db::file_diagnostics(&f.db, f.file).to_vec();
    let text = f.file.text(&f.db).to_string();
    let at_call = ds
        .iter()
        .find(|d| d.message.starts_with("calling `callee`"))
        .expect("an error at the call");
    assert_eq!(&text[at_call.range], "callee(v)");
    let related = at_call.related[0].range;
    assert!(text[related].starts_with('x'), "{}", &text[related]);
}

/// Random edits of the test files: the incremental diagnostics always equal
/// those of a new database on the new text.
#[test]
fn incremental_equals_from_scratch_under_random_edits() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "mir"))
        .collect();
    files.sort();
    let inserts = [
        " ",
        "\n",
        "x",
        "1",
        "(",
        ")",
        "+ 2",
        "# ü\n",
        "}",
        "{",
        "graph q() { return 1 }\n",
        "y = x\n",
        "",
        "Add(",
        ",",
        "f32[3]",
        "graph e(p) { Assign(p, p)\n return p }\n",
        "e(x)\n",
    ];
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let mut db = RootDb::new();
        let file = db.new_file(&text);
        db::file_diagnostics(&db, file);
        // The server's way: only the items whose stamps changed are fetched.
        let memo = Mutex::new(db::DiagnosticsMemo::default());
        for _ in 0..40 {
            let current = file.text(&db).to_string();
            let mut start = next(current.len() + 1);
            while !current.is_char_boundary(start) {
                start -= 1;
            }
            let mut end = (start + next(6)).min(current.len());
            while !current.is_char_boundary(end) {
                end -= 1;
            }
            let insert = inserts[next(inserts.len())];
            db.apply_edits(
                file,
                vec![TextEdit {
                    delete: TextRange::new(
                        TextSize::from(start as u32),
                        TextSize::from(end as u32),
                    ),
                    insert: insert.to_string(),
                }],
            );
            let incremental = db::file_diagnostics(&db, file).clone();
            let new_text = file.text(&db).to_string();
            let scratch = from_scratch(&new_text);
            assert_eq!(
                incremental.to_vec(),
                scratch,
                "{}: after replacing {start}..{end} with {insert:?}:\n{new_text}",
                path.display()
            );
            assert_eq!(
                db::file_diagnostics_memo(&db, file, &memo).to_vec(),
                scratch,
                "{} (memo): after replacing {start}..{end} with {insert:?}:\n{new_text}",
                path.display()
            );
            assert_eq!(db::parse(&db, file).syntax_node().to_string(), new_text);
            // The names and effects kept per item equal the whole file's.
            let (index, _) = analysis::ItemIndex::build(&syntax::parse(&new_text).tree());
            let kept = db::item_names(&db, file);
            let names = |v: &Vec<(String, TextRange)>| -> Vec<String> {
                v.iter().map(|(n, _)| n.clone()).collect()
            };
            assert_eq!(names(&kept.graphs), names(&index.graphs));
            assert_eq!(names(&kept.weights), names(&index.weights));
            assert_eq!(kept.effectful, index.effectful);
        }
    }
}

/// Through the memo, an edit of a callee reaches its callers' diagnostics
/// (transitively), and an edit elsewhere leaves them be.
#[test]
fn the_memo_follows_references_between_items() {
    let text = "\
graph leaf(x) { return x * 2.0 }
graph mid(x) { return leaf(x) }
graph top(v: f32[3]) { return mid(v) }
graph other(v: f32[3]) { return v }
";
    let mut db = RootDb::new();
    let file = db.new_file(text);
    let memo = Mutex::new(db::DiagnosticsMemo::default());
    assert!(db::file_diagnostics_memo(&db, file, &memo).is_empty());
    // `leaf` now fails for `top`'s arguments: the error appears at top's call.
    let at = text.find("x * 2.0").unwrap();
    db.apply_edits(
        file,
        vec![TextEdit {
            delete: TextRange::at(TextSize::from(at as u32), TextSize::of("x * 2.0")),
            insert: "MatMul(x, x)".into(),
        }],
    );
    let with_memo = db::file_diagnostics_memo(&db, file, &memo).to_vec();
    assert_eq!(with_memo, from_scratch(file.text(&db)));
    assert!(
        with_memo
            .iter()
            .any(|d| d.message.starts_with("calling `mid`")),
        "{with_memo:?}"
    );
    let other = text.find("return v }").unwrap() + "return v".len();
    db.apply_edits(
        file,
        vec![TextEdit {
            delete: TextRange::empty(TextSize::from(other as u32 + 4)),
            insert: " * 1.0".into(),
        }],
    );
    assert_eq!(
        db::file_diagnostics_memo(&db, file, &memo).to_vec(),
        from_scratch(file.text(&db))
    );
}

/// A graph whose analysis panics (a checker bug) is reported as a failure and
/// does not stop the rest of the file from being checked.
#[test]
fn a_panicking_graph_does_not_hide_the_others() {
    let text = "\
graph risky(x: f32[3]) {
  return Cast(x, dtype=\"f16\")
}

graph good(x: f32[3]) {
  return Exp(undefined_name)
}
";
    let mut db = RootDb::new();
    let file = db.new_file(text);
    let ds = db::file_diagnostics(&db, file);
    let all = ds.to_vec();
    assert!(
        all.iter().any(|d| d.code == analysis::Code::UndefinedName),
        "{all:?}"
    );
    for f in &ds.failures() {
        assert_eq!(f.item, "risky");
        assert_eq!(&text[f.range], "risky");
    }
}

/// Issue 14, finding 9: an edit inside one graph costs what it changes, not
/// what the file holds. In a file of `n` graphs, the queries executed are a
/// handful whatever `n` (before, `item_syntax` ran again for every item, and
/// every item's dependencies were validated): the language server's way
/// ([`db::file_diagnostics_memo`]) asks salsa only about the edited graph
/// and what refers to it.
#[test]
fn an_edit_inside_one_graph_of_many_does_work_independent_of_their_number() {
    let mut works = Vec::new();
    for n in [50usize, 400] {
        let mut text = String::new();
        // Chains of eight graphs, each calling the one before.
        for i in 0..n {
            let ret = if i % 8 == 0 {
                "ReLU(h)".to_string()
            } else {
                format!("g{}(ReLU(h))", i - 1)
            };
            text.push_str(&format!(
                "param w{i}: f32[4, 4] = zeros\ngraph g{i}(x: f32[2, 4]) {{\n  h = MatMul(x, w{i})\n  return {ret}\n}}\n"
            ));
        }
        let counts = Arc::new(Mutex::new(db::WorkCounts::default()));
        let mut db = RootDb::with_work_counts(counts.clone());
        let file = db.new_file(&text);
        let memo = Mutex::new(db::DiagnosticsMemo::default());
        assert!(db::file_diagnostics_memo(&db, file, &memo).is_empty());
        // The last graph of a full chain (seven callees), which nothing calls.
        let target = (0..n).rev().find(|i| i % 8 == 7).unwrap();
        let line = format!("  h = MatMul(x, w{target})");
        // Edit its body twice; the second edit is measured.
        for (old, new) in [("", " * 1.0"), (" * 1.0", " * 2.0")] {
            let current = file.text(&db).to_string();
            let start = current.find(&line).unwrap() + line.len();
            db.apply_edits(
                file,
                vec![TextEdit {
                    delete: TextRange::at(TextSize::from(start as u32), TextSize::of(old)),
                    insert: new.to_string(),
                }],
            );
            *counts.lock().unwrap() = db::WorkCounts::default();
            assert!(db::file_diagnostics_memo(&db, file, &memo).is_empty());
        }
        let work = *counts.lock().unwrap();
        assert!(work.executed <= 12, "{n} graphs: {work:?}");
        // The edited graph and the chain it calls are validated (with each
        // graph's signature, callees and memoised call); nothing else.
        assert!(work.validated <= 100, "{n} graphs: {work:?}");
        works.push(work);
    }
    assert_eq!(
        works[0], works[1],
        "the work depends on the number of graphs"
    );
}

/// A generic graph's problem with a caller's arguments is reported at the
/// call, also after edits that bring it and take it away: the memoised call
/// is used only where its evaluation found nothing to report.
#[test]
fn a_problem_in_a_memoised_call_reaches_the_caller() {
    let text = "\
graph g(x) {
  return x * 2.0
}

graph h(x: f32[2, 3]) {
  return g(x)
}
";
    let mut f = Fixture::new(text);
    assert!(db::file_diagnostics(&f.db, f.file).is_empty());
    f.edit("graph g", "x * 2.0", "MatMul(x, x)");
    // `executed` also checks the diagnostics against a new database's.
    f.executed();
    let messages: Vec<String> = db::file_diagnostics(&f.db, f.file)
        .to_vec()
        .iter()
        .map(|d| d.message.clone())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("calling `g` with these arguments fails")),
        "{messages:?}"
    );
    f.edit("graph g", "MatMul(x, x)", "x * 3.0");
    f.executed();
    assert!(db::file_diagnostics(&f.db, f.file).is_empty());
}
