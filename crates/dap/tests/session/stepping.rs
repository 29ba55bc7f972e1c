//! Breakpoints and stepping: lines, functions, run to cursor, step in/out, pause.

use serde_json::json;

use crate::debug_mir;
use crate::support::{data, var, Client};

#[test]
fn breakpoint_step_in_out_and_the_stack() {
    let file = data("debug.mir");
    let mut c = Client::launch(debug_mir(), |c| {
        let b = c.breakpoints(&file, &[23, 20]);
        assert_eq!(b["breakpoints"][0]["verified"], true);
        assert_eq!(b["breakpoints"][0]["line"], 23);
        // A blank line moves to the next statement (`a = x + 1`).
        assert_eq!(b["breakpoints"][1]["line"], 22);
    });
    let s = c.stopped();
    assert_eq!(s["reason"], "breakpoint");
    assert_eq!(c.stack()[0].0, "main");
    assert_eq!(c.stack()[0].2, 22);
    c.cont();
    assert_eq!(c.stopped()["reason"], "breakpoint");
    let stack = c.stack();
    assert_eq!((stack[0].0.as_str(), stack[0].2), ("main", 23));
    assert!(stack[0].1.ends_with("debug.mir"), "{stack:?}");
    // Into `square`.
    c.ok("stepIn", json!({"threadId": 1}));
    assert_eq!(c.stopped()["reason"], "step");
    let stack = c.stack();
    assert_eq!(stack.len(), 2, "{stack:?}");
    assert_eq!((stack[0].0.as_str(), stack[0].2), ("square", 9));
    assert_eq!((stack[1].0.as_str(), stack[1].2), ("main", 23));
    // Out again: back in main, at the statement after the call.
    c.ok("stepOut", json!({"threadId": 1}));
    c.stopped();
    let stack = c.stack();
    assert_eq!(stack.len(), 1, "{stack:?}");
    assert_eq!((stack[0].0.as_str(), stack[0].2), ("main", 24));
    // `next` steps over the imported graph's call.
    c.ok("next", json!({"threadId": 1}));
    c.stopped();
    let stack = c.stack();
    assert_eq!((stack.len(), stack[0].2), (1, 25), "{stack:?}");
    c.cont();
    let (out, code) = c.finish();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains('6'), "the result is printed: {out}");
    assert_eq!(c.disconnect(), 0);
}

#[test]
fn step_in_goes_into_an_if_branch() {
    let file = data("debug.mir");
    let mut c = Client::launch(debug_mir(), |c| {
        c.breakpoints(&file, &[26]);
    });
    c.stopped();
    c.ok("stepIn", json!({"threadId": 1}));
    c.stopped();
    let stack = c.stack();
    assert_eq!((stack[0].0.as_str(), stack[0].2), ("fact", 14), "{stack:?}");
    // The `else` branch of fact(3) is a graph of its own, in fact.
    c.ok("stepIn", json!({"threadId": 1}));
    c.stopped();
    let stack = c.stack();
    assert_eq!(stack[0].2, 15, "{stack:?}");
    assert!(stack[0].0.ends_with("(in fact)"), "{stack:?}");
    assert_eq!(stack[1].0, "fact", "{stack:?}");
    assert_eq!(var(&c.locals(1), "n")["value"], "i64 3");
    c.cont();
    assert_eq!(c.finish().1, 0);
}

#[test]
fn step_in_goes_into_a_closure_and_a_lambda() {
    let file = data("debug.mir");
    let launch = json!({"program": file.display().to_string(), "entry": "closures",
        "args": {"x": "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]"}});
    let mut c = Client::launch(launch, |c| {
        c.breakpoints(&file, &[50]);
    });
    c.stopped();
    assert_eq!(c.stack()[0].2, 50);
    // Into the nested graph, which captured `k` from `closures`.
    c.ok("stepIn", json!({"threadId": 1}));
    c.stopped();
    let stack = c.stack();
    assert_eq!(
        (stack[0].0.as_str(), stack[0].2),
        ("times_k (in closures)", 47),
        "{stack:?}"
    );
    assert_eq!((stack[1].0.as_str(), stack[1].2), ("closures", 50));
    let locals = c.locals(1);
    assert!(var(&locals, "k")["value"]
        .as_str()
        .unwrap()
        .starts_with("f32 6"));
    assert!(var(&locals, "v")["value"]
        .as_str()
        .unwrap()
        .contains("max=6"));
    // Out (a lambda's definition is no statement to stop at), and into the lambda.
    c.ok("stepOut", json!({"threadId": 1}));
    c.stopped();
    assert_eq!(c.stack()[0].2, 52);
    c.ok("stepIn", json!({"threadId": 1}));
    c.stopped();
    let stack = c.stack();
    assert_eq!(stack.len(), 2, "{stack:?}");
    assert_eq!(stack[0].2, 51, "the lambda's line: {stack:?}");
    assert!(stack[0].0.ends_with("(in closures)"), "{stack:?}");
    assert!(var(&c.locals(1), "v")["value"]
        .as_str()
        .unwrap()
        .contains("max=36"));
    c.cont();
    assert_eq!(c.finish().1, 0);
}

#[test]
fn run_to_cursor_as_vs_code_and_nvim_dap_ask_for_it() {
    let file = data("debug.mir");
    let path = file.display().to_string();
    // VS Code: a temporary breakpoint beside the others, `continue`, and the
    // breakpoints as they were once stopped.
    let mut c = Client::launch(debug_mir(), |c| {
        c.breakpoints(&file, &[22]);
    });
    c.stopped();
    assert_eq!(c.stack()[0].2, 22);
    let b = c.breakpoints(&file, &[22, 25]);
    let temp = b["breakpoints"][1]["id"].clone();
    c.cont();
    let s = c.stopped();
    assert_eq!(s["reason"], "breakpoint");
    assert_eq!(s["hitBreakpointIds"], json!([temp]));
    assert_eq!(c.stack()[0].2, 25);
    c.breakpoints(&file, &[22]);
    c.cont();
    assert_eq!(c.finish().1, 0);
    // nvim-dap: every breakpoint replaced by one at the cursor (here in
    // `fact`, a graph called later), `continue`, then the old ones back.
    let helpers = data("helpers.mir");
    let mut c = Client::launch(debug_mir(), |c| {
        c.breakpoints(&file, &[22]);
        c.breakpoints(&helpers, &[3]);
    });
    c.stopped();
    c.breakpoints(&file, &[14]);
    c.ok(
        "setBreakpoints",
        json!({"source": {"path": helpers.display().to_string()}, "breakpoints": []}),
    );
    c.cont();
    let s = c.stopped();
    assert_eq!(s["reason"], "breakpoint");
    let stack = c.stack();
    assert_eq!((stack[0].0.as_str(), stack[0].2), ("fact", 14), "{stack:?}");
    c.ok(
        "setBreakpoints",
        json!({"source": {"path": path}, "breakpoints": [{"line": 22}]}),
    );
    c.breakpoints(&helpers, &[3]);
    // helpers.scale ran before fact: nothing stops again.
    c.cont();
    assert_eq!(c.finish().1, 0);
}

#[test]
fn breakpoints_in_imported_and_std_files_and_recursion() {
    let helpers = data("helpers.mir");
    let std_dense = test_support::repo_root().join("lib/nn/dense.mir");
    let file = data("debug.mir");
    let mut c = Client::launch(debug_mir(), |c| {
        assert_eq!(
            c.breakpoints(&helpers, &[3])["breakpoints"][0]["verified"],
            true
        );
        assert_eq!(
            c.breakpoints(&std_dense, &[12])["breakpoints"][0]["verified"],
            true
        );
        // Inside the recursive branch of `fact`.
        assert_eq!(
            c.breakpoints(&file, &[15])["breakpoints"][0]["verified"],
            true
        );
    });
    c.stopped();
    let stack = c.stack();
    assert_eq!(stack[0].2, 3);
    assert!(stack[0].1.ends_with("helpers.mir"), "{stack:?}");
    assert!(stack[0].0.contains("scale"), "{stack:?}");
    assert_eq!((stack[1].0.as_str(), stack[1].2), ("main", 24));
    c.cont();
    c.stopped();
    let stack = c.stack();
    assert!(stack[0].1.ends_with("nn/dense.mir"), "{stack:?}");
    assert_eq!(stack[0].2, 12);
    c.cont();
    // fact(3) -> fact(2) -> fact(1): the breakpoint is hit in fact(3) and fact(2).
    c.stopped();
    let first = c.stack();
    c.cont();
    c.stopped();
    let second = c.stack();
    let facts = |s: &[(String, String, u64)]| s.iter().filter(|f| f.0.contains("fact")).count();
    assert!(facts(&second) > facts(&first), "{first:?}\n{second:?}");
    assert!(
        second.iter().any(|f| f.0 == "main" && f.2 == 26),
        "{second:?}"
    );
    c.cont();
    let (_, code) = c.finish();
    assert_eq!(code, 0);
}

#[test]
fn stop_on_entry_and_pause() {
    let mut launch = debug_mir();
    launch["stopOnEntry"] = json!(true);
    let mut c = Client::launch(launch, |_| {});
    assert_eq!(c.stopped()["reason"], "entry");
    assert_eq!(c.stack()[0].2, 22);
    // A pause asked for stops at the next statement once running.
    c.ok("pause", json!({"threadId": 1}));
    c.cont();
    assert_eq!(c.stopped()["reason"], "pause");
    assert_eq!(c.stack()[0].2, 23);
    c.cont();
    assert_eq!(c.finish().1, 0);
}

#[test]
fn pause_and_terminate_a_running_graph() {
    // A recursion of a million calls: `pause` stops it wherever it is, and
    // `terminate` then ends it long before its end.
    let dir = std::env::temp_dir().join(format!("mirdsl-dap-pause-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("long.mir");
    std::fs::write(
        &file,
        "graph count(n: i64) -> i64 {\n  r = if n < 1 { 0 } else { count(n - 1) + 1 }\n  return r\n}\n\
         graph main() -> i64 {\n  c = count(1000000)\n  return c\n}\n",
    )
    .unwrap();
    let mut c = Client::launch(json!({"program": file.display().to_string()}), |_| {});
    c.ok("pause", json!({"threadId": 1}));
    assert_eq!(c.stopped()["reason"], "pause");
    // Wherever the first pause landed, the next statement is inside `count`.
    c.cont();
    c.ok("pause", json!({"threadId": 1}));
    assert_eq!(c.stopped()["reason"], "pause");
    let st = c.ok("stackTrace", json!({"threadId": 1, "levels": 20}));
    let total = st["totalFrames"].as_u64().unwrap();
    assert!(total > 1, "{st}");
    assert_eq!(
        st["stackFrames"].as_array().unwrap().len() as u64,
        total.min(20)
    );
    assert!(
        st["stackFrames"][0]["name"]
            .as_str()
            .unwrap()
            .contains("count"),
        "{st}"
    );
    c.ok("terminate", json!({}));
    let (out, code) = c.finish();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("the debug session ended"), "{out}");
    assert_eq!(c.disconnect(), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn function_breakpoints_loaded_sources_and_lines_from_zero() {
    let mut c = Client::start();
    // This client counts lines from 0.
    c.ok(
        "initialize",
        json!({"adapterID": "mirdsl", "linesStartAt1": false}),
    );
    c.ok("launch", debug_mir());
    c.event("initialized");
    let f = c.ok(
        "setFunctionBreakpoints",
        json!({"breakpoints": [{"name": "square"}, {"name": "nope"}]}),
    );
    assert_eq!(f["breakpoints"][0]["verified"], true);
    assert_eq!(f["breakpoints"][1]["verified"], false);
    let b = c.breakpoints(&data("debug.mir"), &[25]);
    assert_eq!(b["breakpoints"][0]["line"], 25);
    c.ok("configurationDone", json!({}));
    let s = c.stopped();
    assert_eq!(s["reason"], "function breakpoint");
    let stack = c.stack();
    assert_eq!((stack[0].0.as_str(), stack[0].2), ("square", 8));
    assert_eq!((stack[1].0.as_str(), stack[1].2), ("main", 22));
    c.cont();
    assert_eq!(c.stopped()["reason"], "breakpoint");
    assert_eq!(c.stack()[0].2, 25);
    let sources = c.ok("loadedSources", json!({}));
    let names: Vec<&str> = sources["sources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    for n in ["debug.mir", "helpers.mir", "dense.mir"] {
        assert!(names.contains(&n), "{n} in {names:?}");
    }
    c.cont();
    assert_eq!(c.finish().1, 0);
}
