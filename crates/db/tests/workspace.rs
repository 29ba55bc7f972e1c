//! The database as a workspace of files that import each other: which
//! queries re-execute after an edit in an imported file (salsa's
//! `WillExecute` events), and the diagnostics that follow imports.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use analysis::modules::Loader;
use db::{salsa::plumbing::AsId, EventLog, File, RootDb};
use expect_test::{expect, Expect};
use syntax::{TextEdit, TextRange, TextSize};

/// Files in memory.
struct Mem(HashMap<PathBuf, String>);

impl Loader for Mem {
    fn read(&self, path: &Path) -> Result<Arc<str>, String> {
        self.0
            .get(path)
            .map(|t| Arc::from(t.as_str()))
            .ok_or_else(|| format!("no such file: {}", path.display()))
    }
}

const LAYERS: &str = "\
param fc.weight: f32[4, 3] = zeros
param fc.bias: f32[4] = zeros

graph dense(x: f32[B, 3]) -> f32[B, 4] {
  return BiasAdd(MatMul(x, fc.weight, transpose_b=true), fc.bias)
}

graph act(x) {
  return ReLU(x)
}
";

const MODEL: &str = "\
import \"layers.mir\" as L

graph net(x: f32[2, 3]) {
  return L.dense(x)
}

graph other(x: f32[5]) {
  return Exp(x)
}
";

struct Fixture {
    db: RootDb,
    log: EventLog,
    model: File,
    layers: File,
}

impl Fixture {
    fn new(files: &[(&str, &str)]) -> Fixture {
        let log: EventLog = Arc::new(Mutex::new(Vec::new()));
        let mut db = RootDb::with_execution_log(log.clone());
        let mem: HashMap<PathBuf, String> = files
            .iter()
            .map(|(p, t)| (PathBuf::from("/ws").join(p), t.to_string()))
            .collect();
        db.set_loader(Arc::new(Mem(mem)));
        let model = db.open(Path::new("/ws/model.mir"), None);
        let layers = db.open(Path::new("/ws/layers.mir"), None);
        let f = Fixture {
            db,
            log,
            model,
            layers,
        };
        db::file_diagnostics(&f.db, f.model);
        db::file_diagnostics(&f.db, f.layers);
        f.log.lock().unwrap().clear();
        f
    }

    fn edit(&mut self, file: File, anchor: &str, old: &str, new: &str) {
        let text = file.text(&self.db).to_string();
        let at = text.find(anchor).unwrap();
        let start = at + text[at..].find(old).unwrap();
        let edit = TextEdit {
            delete: TextRange::at(TextSize::from(start as u32), TextSize::of(old)),
            insert: new.to_string(),
        };
        self.db.apply_edits(file, vec![edit]);
    }

    /// The queries executed to get the model's diagnostics again, with
    /// files and items by name.
    fn executed(&mut self) -> String {
        db::file_diagnostics(&self.db, self.model);
        let mut names = Vec::new();
        for (file, label) in [(self.model, "model"), (self.layers, "layers")] {
            names.push((format!("({:?})", file.as_id()), format!("({label})")));
            for item in db::items(&self.db, file).items.iter() {
                let key = self.db.key(file, &item.name);
                names.push((
                    format!("({:?})", key.as_id()),
                    format!("({label}:{})", item.name),
                ));
            }
        }
        let log = std::mem::take(&mut *self.log.lock().unwrap());
        log.into_iter()
            .map(|l| {
                // A memoised call is keyed by an interned (graph, arguments).
                let mut l = if l.starts_with("call_output(") {
                    "call_output(call)".to_string()
                } else {
                    l
                };
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

    fn messages(&self, file: File) -> Vec<String> {
        db::file_diagnostics(&self.db, file)
            .to_vec()
            .iter()
            .map(|d| {
                let text = file.text(&self.db);
                format!("{} {:?}: {}", d.code.as_str(), &text[d.range], d.message)
            })
            .collect()
    }
}

#[test]
fn an_imported_graph_is_checked_with_its_caller() {
    let f = Fixture::new(&[("model.mir", MODEL), ("layers.mir", LAYERS)]);
    assert!(f.messages(f.model).is_empty(), "{:?}", f.messages(f.model));
    let f = Fixture::new(&[
        ("model.mir", &MODEL.replace("f32[2, 3]", "f32[2, 7]")),
        ("layers.mir", LAYERS),
    ]);
    expect![[r#"
        [
            "E0211 \"x\": argument `x` of `L.dense` must be f32[B, 3], but this is f32[2, 7]: dimension 1 is 7, not 3",
        ]
    "#]]
    .assert_debug_eq(&f.messages(f.model));
}

#[test]
fn an_edit_in_an_imported_graph_reinfers_only_its_callers() {
    let mut f = Fixture::new(&[("model.mir", MODEL), ("layers.mir", LAYERS)]);
    // `dense`'s body: the model's `net` calls it; the call, memoised with
    // net's arguments, is evaluated again and comes to the same result, so
    // net is not inferred again (nor `other`, and nothing of the model is
    // lowered again).
    f.edit(f.layers, "graph dense", "fc.bias)", "fc.bias) ");
    f.check(expect![[r#"
        item_syntax(layers:dense)
        norm(layers:dense)
        lower(layers:dense)
        signature(layers:dense)
        callees(layers:dense)
        call_output(call)"#]]);
    f.edit(f.layers, "graph dense", "MatMul(x", "MatMul(ReLU(x)");
    f.check(expect![[r#"
        item_syntax(layers:dense)
        norm(layers:dense)
        lower(layers:dense)
        signature(layers:dense)
        callees(layers:dense)
        call_output(call)"#]]);
    // A graph that the model does not call: nothing of the model.
    f.edit(f.layers, "graph act", "ReLU(x)", "Exp(x)");
    f.check(expect![[r#""#]]);
}

#[test]
fn diagnostics_of_a_file_follow_an_edit_in_the_file_it_imports() {
    let mut f = Fixture::new(&[("model.mir", MODEL), ("layers.mir", LAYERS)]);
    let memo = Mutex::new(db::DiagnosticsMemo::default());
    assert!(db::file_diagnostics_memo(&f.db, f.model, &memo).is_empty());
    f.edit(f.layers, "graph dense", "f32[B, 3]", "f32[B, 9]");
    let expected = expect![[r#"
        [
            "E0211 \"x\": argument `x` of `L.dense` must be f32[B, 9], but this is f32[2, 3]: dimension 1 is 3, not 9",
        ]
    "#]];
    expected.assert_debug_eq(&f.messages(f.model));
    // The server's memo sees it too.
    let memoised = db::file_diagnostics_memo(&f.db, f.model, &memo).to_vec();
    assert_eq!(memoised, db::file_diagnostics(&f.db, f.model).to_vec());
    assert_eq!(memoised.len(), 1);
}

#[test]
fn import_errors_are_on_the_import_line() {
    let a = "import \"b.mir\"\nimport \"missing.mir\"\ngraph f(x) { return x }\n";
    let b = "import \"model.mir\"\ngraph g(x) { return x }\n";
    let model = "import \"a.mir\"\nimport \"c.mir\"\nimport \"d.mir\"\ngraph h(x) { return x }\n";
    let c = "graph f(x) { return x }\n";
    let d = "graph h(x) { return x }\n";
    let f = Fixture::new(&[
        ("model.mir", model),
        ("a.mir", a),
        ("b.mir", b),
        ("c.mir", c),
        ("d.mir", d),
        ("layers.mir", ""),
    ]);
    expect![[r#"
        [
            "E0105 \"import \\\"a.mir\\\"\": this import makes a cycle: model.mir → a.mir → b.mir → model.mir (files may not import each other)",
            "E0106 \"import \\\"d.mir\\\"\": this import of `d.mir` makes `h` visible a second time; import it with `as NAME` to keep its names apart",
        ]
    "#]]
    .assert_debug_eq(&f.messages(f.model));
    let a = f.db.file_at(Path::new("/ws/a.mir")).unwrap();
    expect![[r#"
        [
            "E0105 \"import \\\"b.mir\\\"\": this import makes a cycle: a.mir → b.mir → model.mir → a.mir (files may not import each other)",
            "E0104 \"import \\\"missing.mir\\\"\": no such file: /ws/missing.mir",
        ]
    "#]]
    .assert_debug_eq(&f.messages(a));
}
