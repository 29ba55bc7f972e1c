//! A write to the database cancels queries running on other handles: they
//! unwind with `salsa::Cancelled`, and the writer goes on once they are gone.

use std::sync::mpsc;
use std::time::Duration;

use db::RootDb;
use salsa::Cancelled;

fn big_file(n: usize) -> String {
    let mut text = String::new();
    for i in 0..n {
        text.push_str(&format!(
            "graph g{i}(x: f32[8, 8]) {{\n  a = MatMul(x, x)\n  b = ReLU(a + 1.0)\n  return ReduceSum(b, axis=1)\n}}\n"
        ));
    }
    text
}

#[test]
fn setting_a_text_cancels_analysis_in_flight() {
    let mut db = RootDb::new();
    let file = db.new_file(&big_file(3000));
    let snapshot = db.clone();
    let (started, wait_started) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        started.send(()).unwrap();
        let result = Cancelled::catch(|| db::file_diagnostics(&snapshot, file).len());
        drop(snapshot);
        result
    });
    wait_started.recv().unwrap();
    std::thread::sleep(Duration::from_millis(30));
    // Blocks until the worker has unwound and dropped its handle.
    db.set_text(file, "graph small() { return 1 }\n");
    let result = worker.join().unwrap();
    assert!(matches!(result, Err(Cancelled::PendingWrite)), "{result:?}");
    // The new text is analysed from here.
    assert!(db::file_diagnostics(&db, file).is_empty());
}
