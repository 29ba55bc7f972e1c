//! IDE features across files (`docs/language.md` §10.1): definition,
//! hover and completion of imported items.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use analysis::modules::Loader;
use db::{File, RootDb};
use syntax::TextSize;

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

# A dense layer without bias.
graph dense(x: f32[B, 3]) -> f32[B, 4] {
  return MatMul(x, fc.weight, transpose_b=true)
}
";

const MODEL: &str = "\
import \"nn/layers.mir\" as L

graph net(x: f32[2, 3]) {
  return L.dense(x)
}
";

fn workspace() -> (RootDb, File, File) {
    let mut db = RootDb::new();
    db.set_loader(Arc::new(Mem(HashMap::from([
        (PathBuf::from("/ws/nn/layers.mir"), LAYERS.to_string()),
        (PathBuf::from("/ws/model.mir"), MODEL.to_string()),
    ]))));
    let model = db.open(Path::new("/ws/model.mir"), None);
    let layers = db.file_at(Path::new("/ws/nn/layers.mir")).unwrap();
    (db, model, layers)
}

fn at(text: &str, needle: &str) -> TextSize {
    TextSize::from(text.find(needle).unwrap() as u32)
}

#[test]
fn definition_of_an_imported_graph_is_in_its_file() {
    let (db, model, layers) = workspace();
    let a = ide::Analysis::new(&db, model);
    let nav = a
        .goto_definition(at(MODEL, "dense(x)") + TextSize::from(2))
        .unwrap();
    assert_eq!(nav.file, Some(layers));
    assert_eq!(&LAYERS[nav.focus_range], "dense");
    // The import line goes to the file.
    let nav = a.goto_definition(at(MODEL, "nn/layers")).unwrap();
    assert_eq!(nav.file, Some(layers));
}

#[test]
fn hover_of_an_imported_graph_shows_its_signature_and_file() {
    let (db, model, _) = workspace();
    let a = ide::Analysis::new(&db, model);
    let h = a.hover(at(MODEL, "dense(x)")).unwrap();
    assert!(
        h.markdown
            .contains("graph dense(x: f32[B, 3]) -> f32[B, 4]"),
        "{}",
        h.markdown
    );
    assert!(
        h.markdown.contains("A dense layer without bias."),
        "{}",
        h.markdown
    );
    assert!(h.markdown.contains("from `layers.mir`"), "{}", h.markdown);
}

#[test]
fn completion_offers_imported_items_by_their_names_here() {
    let (mut db, model, _) = workspace();
    let text = MODEL.replace("return L.dense(x)", "y = L.dense(x)\n  return L.");
    db.set_text(model, &text);
    let a = ide::Analysis::new(&db, model);
    let offset = TextSize::from((text.find("return L.").unwrap() + "return L.".len()) as u32);
    let labels: Vec<String> = a.completions(offset).into_iter().map(|c| c.label).collect();
    assert!(labels.iter().any(|l| l == "L.dense"), "{labels:?}");
    assert!(labels.iter().any(|l| l == "L.fc.weight"), "{labels:?}");
    assert!(a
        .diagnostics()
        .iter()
        .all(|d| d.code != analysis::Code::UndefinedName || !d.message.contains("L.dense")));
}

#[test]
fn references_and_rename_cross_files() {
    let (mut db, model, layers) = workspace();
    // A second file that imports the layers without an alias.
    let other = "import \"nn/layers.mir\"\n\ngraph g(x: f32[1, 3]) {\n  return dense(x)\n}\n";
    let other = db.open(Path::new("/ws/other.mir"), Some(other));
    let files = [model, layers, other];
    // From the definition: every use, in each file, by its name there.
    let a = ide::Analysis::new(&db, layers);
    let refs = a
        .references_across(at(LAYERS, "dense("), true, &files)
        .unwrap();
    let shown: Vec<String> = refs
        .iter()
        .map(|(f, r)| {
            let which = if *f == layers {
                "layers"
            } else if *f == model {
                "model"
            } else {
                "other"
            };
            format!("{which}:{}", &f.text(&db)[*r])
        })
        .collect();
    assert_eq!(shown, ["layers:dense", "model:L.dense", "other:dense"]);
    // Renaming from a use in the model renames everywhere, keeping aliases.
    let m = ide::Analysis::new(&db, model);
    let edits = m
        .rename_across(at(MODEL, "L.dense"), "linear", &files)
        .unwrap()
        .unwrap();
    let mut texts: Vec<String> = edits.iter().map(|(_, e)| e.new_text.clone()).collect();
    texts.sort();
    assert_eq!(texts, ["L.linear", "linear", "linear"]);
    // A name the defining file has already is refused.
    let err = m
        .rename_across(at(MODEL, "L.dense"), "fc.weight", &files)
        .unwrap()
        .unwrap_err();
    assert!(err.contains("already defined"), "{err}");
    let _ = &mut db;
}

#[test]
fn completion_of_an_imported_graph_shows_its_signature() {
    let (mut db, model, _) = workspace();
    let text = MODEL.replace("return L.dense(x)", "y = L.dense(x)\n  return L.");
    db.set_text(model, &text);
    let a = ide::Analysis::new(&db, model);
    let offset = TextSize::from((text.find("return L.").unwrap() + "return L.".len()) as u32);
    let dense = a
        .completions(offset)
        .into_iter()
        .find(|c| c.label == "L.dense")
        .expect("L.dense is offered");
    assert_eq!(
        dense.detail.as_deref(),
        Some("graph L.dense(x: f32[B, 3]) -> f32[B, 4]")
    );
}

/// A file of the workspace that uses `dense` without importing it: the
/// error names the file that defines it, and the fix adds the import.
#[test]
fn an_undefined_name_another_workspace_file_defines_is_imported_by_a_fix() {
    let (mut db, _, layers) = workspace();
    let user = "# Uses a layer.\n\ngraph use_it(x: f32[2, 3]) {\n  return dense(x)\n}\n";
    let file = db.open(Path::new("/ws/apps/user.mir"), Some(user));
    let a = ide::Analysis::new(&db, file);
    let ds = a.diagnostics_seeing(&[layers, file]);
    let d = ds
        .iter()
        .find(|d| d.code == analysis::Code::UndefinedName)
        .expect("E0100");
    // Which file defines it is a note (the message is the checker's, as the
    // editor publishes it); the standard library's `dense` comes second.
    assert!(
        d.notes
            .iter()
            .any(|n| n == "`../nn/layers.mir` defines `dense`"),
        "{d:?}"
    );
    let actions = a.code_actions(d.range, &[layers, file]);
    let fix = actions
        .iter()
        .find(|c| c.title.contains("import \"../nn/layers.mir\""))
        .expect("an import fix");
    let mut fixed = user.to_string();
    for e in fix.edits.iter().rev() {
        fixed.replace_range(
            usize::from(e.range.start())..usize::from(e.range.end()),
            &e.new_text,
        );
    }
    // Below the file's header comment, above the first item.
    assert_eq!(
        fixed,
        "# Uses a layer.\n\nimport \"../nn/layers.mir\"\n\ngraph use_it(x: f32[2, 3]) {\n  return dense(x)\n}\n"
    );
    // With the import, the file checks.
    db.set_text(file, &fixed);
    let a = ide::Analysis::new(&db, file);
    assert!(a.diagnostics().is_empty(), "{:?}", a.diagnostics());
}

/// A name of the standard library: the file it is in, and the import after
/// the file's own imports.
#[test]
fn an_undefined_name_of_the_standard_library_is_imported_by_a_fix() {
    let mut db = RootDb::new();
    let text = "import \"@std/nn/dense.mir\"\n\n# Loss.\ngraph loss(x: f32[2, 4], labels: i32[2]) {\n  return sparse_softmax_cross_entropy(x, labels)\n}\n";
    let file = db.new_file(text);
    let a = ide::Analysis::new(&db, file);
    let ds = a.diagnostics();
    assert_eq!(ds.len(), 1, "{ds:?}");
    assert_eq!(
        ds[0].message,
        "`sparse_softmax_cross_entropy` is not defined here; the standard library defines it in `@std/nn/loss.mir`"
    );
    let fix = &ds[0].fixes[0];
    assert_eq!(
        fix.label,
        "add `import \"@std/nn/loss.mir\"` at the top of the file"
    );
    let mut fixed = text.to_string();
    fixed.insert_str(usize::from(fix.range.start()), &fix.new_text(text));
    assert!(
        fixed.starts_with("import \"@std/nn/dense.mir\"\nimport \"@std/nn/loss.mir\"\n\n# Loss."),
        "{fixed}"
    );
    db.set_text(file, &fixed);
    assert!(ide::Analysis::new(&db, file).diagnostics().is_empty());
}
