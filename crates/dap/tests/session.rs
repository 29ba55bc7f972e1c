//! The adapter driven by a scripted client over pipes, as VS Code and
//! nvim-dap drive `mirdsl dap`: breakpoints and stepping, tensors, bad
//! numbers, models from MindSpore, and malformed input.

mod support;

use serde_json::json;
use support::{data, var, Client};

fn debug_mir() -> serde_json::Value {
    json!({"program": data("debug.mir").display().to_string(), "entry": "main",
        "args": {"x": "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]"}})
}

// 1. Breakpoints and stepping.

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

// 2. Tensors you can read.

#[test]
fn variables_slices_weights_and_evaluate() {
    let file = data("debug.mir");
    let mut c = Client::launch(debug_mir(), |c| {
        c.breakpoints(&file, &[24]);
    });
    c.stopped();
    let locals = c.locals(1);
    let x = var(&locals, "x");
    assert_eq!(x["type"], "f32[2, 3]");
    let v = x["value"].as_str().unwrap();
    for part in [
        "min=1",
        "max=6",
        "mean=3.5",
        "std=1.70783",
        "nan=0",
        "inf=0",
        "[1, 2, 3, 4, 5, 6]",
    ] {
        assert!(v.contains(part), "{part} in {v}");
    }
    let b = var(&locals, "b");
    assert!(b["value"].as_str().unwrap().contains("max=49"), "{b}");
    // Expanding shows rows, and a row its elements.
    let rows = c.ok(
        "variables",
        json!({"variablesReference": x["variablesReference"]}),
    )["variables"]
        .clone();
    assert_eq!(rows.as_array().unwrap().len(), 2);
    assert_eq!(rows[1]["name"], "[1, :]");
    assert!(
        rows[1]["value"].as_str().unwrap().contains("[4, 5, 6]"),
        "{rows}"
    );
    // Paged, as clients ask for big tensors.
    let page = c.ok(
        "variables",
        json!({"variablesReference": rows[1]["variablesReference"], "start": 1, "count": 1}),
    )["variables"]
        .clone();
    assert_eq!(page.as_array().unwrap().len(), 1);
    assert_eq!(page[0]["name"], "[1, 1]");
    let elems = c.ok(
        "variables",
        json!({"variablesReference": rows[1]["variablesReference"]}),
    )["variables"]
        .clone();
    assert_eq!(elems[2]["name"], "[1, 2]");
    assert_eq!(elems[2]["value"], "6");
    // Weights.
    let weights = c.weights(1);
    let w = var(&weights, "fc.weight");
    assert_eq!(w["type"], "f32[2, 3]");
    assert!(
        w["value"]
            .as_str()
            .unwrap()
            .contains("[0.5, -1, 2, 1.5, 0.25, -0.5]"),
        "{w}"
    );
    // Expressions in the frame's scope, with the program's graphs and weights.
    let e = c.ok(
        "evaluate",
        json!({"expression": "ReduceMax(Abs(b))", "frameId": 1, "context": "watch"}),
    );
    assert_eq!(e["result"], "f32 49");
    let e = c.ok(
        "evaluate",
        json!({"expression": "square(a) - b", "frameId": 1, "context": "repl"}),
    );
    assert!(e["result"].as_str().unwrap().contains("min=0 max=0"), "{e}");
    let e = c.ok(
        "evaluate",
        json!({"expression": "ReduceSum(fc.weight)", "frameId": 1}),
    );
    assert_eq!(e["result"], "f32 2.75");
    let e = c.ok(
        "evaluate",
        json!({"expression": "a", "frameId": 1, "context": "hover"}),
    );
    assert!(
        e["result"].as_str().unwrap().starts_with("f32[2, 3]"),
        "{e}"
    );
    let bad = c.request(
        "evaluate",
        json!({"expression": "nosuch + 1", "frameId": 1}),
    );
    assert_eq!(bad["success"], false);
    assert!(bad["message"].as_str().unwrap().contains("nosuch"), "{bad}");
    c.cont();
    assert_eq!(c.finish().1, 0);
}

#[test]
fn optimizer_state_is_listed_in_a_training_step() {
    let launch = json!({"program": data("momentum.mir").display().to_string(),
        "entry": "train_step", "args": {"x": "[1.0, 0.5, -1.0]"}, "steps": 2});
    let file = data("momentum.mir");
    let mut c = Client::launch(launch, |c| {
        c.breakpoints(&file, &[17]);
    });
    // Step 1, at `return l`: the momentum buffer holds the first gradient.
    c.stopped();
    let weights = c.weights(1);
    let m = var(&weights, "moments.w")["value"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(m.contains("[2, 1, 6]"), "{m}");
    assert!(var(&weights, "w")["value"]
        .as_str()
        .unwrap()
        .contains("[0.8, 1.9, 2.4]"));
    // Step 2: m' = 0.9 m + g.
    c.cont();
    c.stopped();
    let m = var(&c.weights(1), "moments.w")["value"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!m.contains("[2, 1, 6]") && m.contains("f32[3]"), "{m}");
    let e = c.ok(
        "evaluate",
        json!({"expression": "moments.w - 0.9 * [2.0, 1.0, 6.0]", "frameId": 1, "context": "watch"}),
    );
    // The second gradient, [1.6, 0.95, 4.8] in f32 arithmetic.
    let r = e["result"].as_str().unwrap();
    assert!(r.contains("max=4.8 ") && r.contains("min=0.94999"), "{e}");
    c.cont();
    assert_eq!(c.finish().1, 0);
}

#[test]
fn conditional_breakpoint() {
    let file = data("debug.mir");
    let mut c = Client::launch(debug_mir(), |c| {
        c.ok(
            "setBreakpoints",
            json!({"source": {"path": file.display().to_string()},
                "breakpoints": [{"line": 15, "condition": "n == 2"},
                    // b = square(x + 1): its largest magnitude is 49.
                    {"line": 24, "condition": "ReduceMax(Abs(b)) > 100"},
                    {"line": 25, "condition": "ReduceMax(Abs(b)) > 40"},
                    {"line": 26, "condition": "ReduceMax(Abs(nosuch)) > 1"}]}),
        );
    });
    // Line 24 does not stop (49 < 100); line 25 does.
    c.stopped();
    assert_eq!(c.stack()[0].2, 25);
    c.cont();
    // A condition that cannot be checked stops and says why.
    let s = c.stopped();
    assert_eq!(c.stack()[0].2, 26);
    assert!(s["text"].as_str().unwrap().contains("nosuch"), "{s}");
    c.cont();
    c.stopped();
    let n = var(&c.locals(1), "n").clone();
    assert_eq!(n["value"], "i64 2");
    c.cont();
    // fact(3) did not stop, nor does anything after fact(2).
    assert_eq!(c.finish().1, 0);
}

#[test]
fn logpoints_and_hit_counts() {
    let file = data("debug.mir");
    let mut c = Client::launch(debug_mir(), |c| {
        let b = c.ok(
            "setBreakpoints",
            json!({"source": {"path": file.display().to_string()},
                "breakpoints": [{"line": 15, "hitCondition": "2"},
                    {"line": 14, "logMessage": "fact({n}): 2n = {n * 2}"},
                    {"line": 22, "hitCondition": "every other"}]}),
        );
        assert_eq!(b["breakpoints"][2]["verified"], false);
    });
    // Line 15 is reached in fact(3), then in fact(2): the second stops.
    c.stopped();
    assert_eq!(var(&c.locals(1), "n")["value"], "i64 2");
    c.cont();
    let (out, code) = c.finish();
    assert_eq!(code, 0);
    for n in [3, 2, 1] {
        let line = format!("fact(i64 {n}): 2n = i64 {}", 2 * n);
        assert!(out.contains(&line), "{line} in {out}");
    }
}

#[test]
fn npy_arguments_and_load_weights_are_read_beside_the_program() {
    // The adapter's working directory is not the program's folder.
    let dir = std::env::temp_dir().join(format!("mirdsl-dap-npy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["debug.mir", "helpers.mir"] {
        std::fs::copy(data(f), dir.join(f)).unwrap();
    }
    let x = tensor::Tensor::from_f32(vec![2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    std::fs::write(dir.join("x.npy"), tensor::npy::write(&x)).unwrap();
    let w = tensor::Tensor::from_f32(vec![2, 3], vec![7.0; 6]).unwrap();
    std::fs::write(
        dir.join("w.safetensors"),
        tensor::safetensors::write(&[("fc.weight", &w)]),
    )
    .unwrap();
    let launch = json!({"program": dir.join("debug.mir").display().to_string(), "entry": "main",
        "args": {"x": "x.npy"}, "loadWeights": "w.safetensors", "stopOnEntry": true});
    let mut c = Client::launch(launch, |_| {});
    c.stopped();
    let x = var(&c.locals(1), "x").clone();
    assert!(
        x["value"].as_str().unwrap().contains("[1, 2, 3, 4, 5, 6]"),
        "{x}"
    );
    let w = var(&c.weights(1), "fc.weight").clone();
    assert!(w["value"].as_str().unwrap().contains("min=7 max=7"), "{w}");
    c.cont();
    assert_eq!(c.finish().1, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn values_are_those_of_a_plain_run() {
    // The debugged run's result, printed, is the plain executor's (compiled
    // plans included), bit for bit in its printed form.
    let mut c = Client::launch(debug_mir(), |_| {});
    let (out, code) = c.finish();
    assert_eq!(code, 0);
    let text = std::fs::read_to_string(data("debug.mir")).unwrap();
    let linked = analysis::link::link(
        &data("debug.mir"),
        Some(text.into()),
        &analysis::modules::FsLoader,
    );
    let program = linked.analysis.source.program();
    let mut ex = exec::Executor::new(&program, exec::ExecOptions::default());
    let x = exec::args::literal_value("[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]").unwrap();
    let v = ex.call("main", vec![x]).unwrap();
    assert_eq!(out, exec::output::to_text(&v));
}

/// `a`, `b`, `c`, `d` of debug.mir's `main` at a breakpoint on line 26, as
/// Copy Value gives them (the `clipboard` context: every element).
fn debugged_values(x: &str, device: &str) -> (Vec<String>, String) {
    let file = data("debug.mir");
    let launch = json!({"program": file.display().to_string(), "entry": "main",
        "args": {"x": x}, "device": device});
    let mut c = Client::launch(launch, |c| {
        c.breakpoints(&file, &[26]);
    });
    c.stopped();
    let values = ["a", "b", "c", "d"]
        .iter()
        .map(|n| {
            let e = c.ok(
                "evaluate",
                json!({"expression": n, "frameId": 1, "context": "clipboard"}),
            );
            e["result"].as_str().unwrap().to_string()
        })
        .collect();
    c.cont();
    let (out, code) = c.finish();
    assert_eq!(code, 0, "{out}");
    (values, out)
}

/// The same values from a plain run of the same statements that stops
/// there (compiled plans included), on `backend`.
fn plain_values(x: &str, backend: Box<dyn exec::Backend>) -> Vec<String> {
    let file = data("debug.mir");
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(
        "\ngraph upto(x: f32[2, 3]) {\n  a = x + 1\n  b = square(a)\n  c = helpers.scale(b, 2.0)\n  \
         d = dense(c, fc.weight, fc.bias)\n  return (a, b, c, d)\n}\n",
    );
    let linked = analysis::link::link(&file, Some(text.into()), &analysis::modules::FsLoader);
    assert!(!linked.has_errors());
    let program = linked.analysis.source.program();
    let mut ex = exec::Executor::with_backend(&program, exec::ExecOptions::default(), backend);
    let v = ex
        .call("upto", vec![exec::args::literal_value(x).unwrap()])
        .unwrap();
    let exec::Value::Tuple(parts) = &v else {
        panic!("a tuple")
    };
    parts
        .iter()
        .map(|p| exec::output::to_text(p).trim_end().to_string())
        .collect()
}

const ODD_X: &str = "[[0.1, -0.7, 1.3], [2.9, 0.33, -1.7]]";

#[test]
fn values_at_a_breakpoint_are_those_of_a_plain_run_that_stops_there() {
    // Equal texts of every element: equal bits.
    let (debugged, _) = debugged_values(ODD_X, "cpu");
    let plain = plain_values(ODD_X, Box::new(exec::CpuBackend));
    for (k, n) in ["a", "b", "c", "d"].iter().enumerate() {
        assert_eq!(debugged[k], plain[k], "`{n}`");
    }
}

#[test]
fn device_gpu_without_a_gpu_fails_the_launch_naming_what_is_missing() {
    if gpu::probe::all().is_ok() {
        test_support::skip("this machine has a usable GPU");
        return;
    }
    let mut c = Client::start();
    c.ok("initialize", json!({"adapterID": "mirdsl"}));
    let mut launch = debug_mir();
    launch["device"] = json!("gpu");
    let r = c.request("launch", launch.clone());
    assert_eq!(r["success"], false);
    let m = r["message"].as_str().unwrap();
    assert!(m.starts_with("`device: \"gpu\"`: "), "{m}");
    let named = ["libcuda.so", "no usable GPU", "libnvrtc.so", "libcublas.so"];
    assert!(named.iter().any(|n| m.contains(n)), "{m}");
    launch["device"] = json!("tpu");
    let r = c.request("launch", launch);
    assert!(
        r["message"]
            .as_str()
            .unwrap()
            .contains("`device` is cpu, gpu or auto, not `tpu`"),
        "{r}"
    );
    assert_eq!(c.disconnect(), 0);
}

#[test]
fn device_gpu_debugs_on_the_gpu() {
    // Where there is a GPU (MIRDSL_REQUIRE_TOOLS=gpu makes its absence a
    // failure): the run is on it, it stops at a breakpoint, and the values
    // there are a plain GPU run's, bit for bit; within 1e-5 of the CPU's.
    if test_support::require(test_support::Tool::Gpu, gpu::probe::all()).is_none() {
        return;
    }
    let (debugged, out) = debugged_values(ODD_X, "gpu");
    assert!(out.contains("device: gpu ("), "{out}");
    let selected = gpu::select(gpu::DeviceChoice::Gpu).unwrap();
    let plain = plain_values(ODD_X, selected.backend);
    let cpu = plain_values(ODD_X, Box::new(exec::CpuBackend));
    let numbers = |t: &str| -> Vec<f64> {
        t.split(|ch: char| !(ch.is_ascii_digit() || ch == '.' || ch == '-' || ch == 'e'))
            .filter_map(|w| w.parse().ok())
            .collect()
    };
    for (k, n) in ["a", "b", "c", "d"].iter().enumerate() {
        assert_eq!(debugged[k], plain[k], "`{n}` debugged vs a plain GPU run");
        for (g, c) in numbers(&debugged[k]).iter().zip(numbers(&cpu[k])) {
            assert!(
                (g - c).abs() <= 1e-5 * c.abs().max(1.0),
                "`{n}`: {g} vs the CPU's {c}"
            );
        }
    }
}

#[test]
fn no_debug_runs_without_stopping() {
    // VS Code's Run Without Debugging: breakpoints and filters are set but
    // nothing stops, and the output is a plain run's.
    let file = data("debug.mir");
    let mut launch = debug_mir();
    launch["noDebug"] = json!(true);
    launch["stopOnEntry"] = json!(true);
    let mut c = Client::launch(launch, |c| {
        c.breakpoints(&file, &[23]);
        c.ok("setExceptionBreakpoints", json!({"filters": ["nan"]}));
    });
    let (out, code) = c.finish();
    assert_eq!(code, 0, "{out}");
    assert!(
        !c.events.iter().any(|e| e["event"] == "stopped"),
        "{:?}",
        c.events
    );
    let mut plain = Client::launch(debug_mir(), |_| {});
    assert_eq!(plain.finish().0, out);
}

// 3. Break on bad numbers.

fn bad_launch() -> serde_json::Value {
    json!({"program": data("debug.mir").display().to_string(), "entry": "bad",
        "args": {"x": "[0.5, 1.0, 2.0, 3.0]"}})
}

#[test]
fn nan_filter_stops_where_bad_numbers_first_appear() {
    let mut c = Client::start();
    let caps = c.ok("initialize", json!({"adapterID": "mirdsl"}));
    let filters: Vec<&str> = caps["exceptionBreakpointFilters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["filter"].as_str().unwrap())
        .collect();
    assert_eq!(filters, ["nan", "threshold"]);
    c.ok("launch", bad_launch());
    c.event("initialized");
    c.ok("setExceptionBreakpoints", json!({"filters": ["nan"]}));
    c.ok("configurationDone", json!({}));
    let s = c.stopped();
    assert_eq!(s["reason"], "exception");
    let text = s["text"].as_str().unwrap();
    assert!(text.contains("`Log`") && text.contains("`a`"), "{text}");
    let info = c.ok("exceptionInfo", json!({"threadId": 1}));
    assert_eq!(info["exceptionId"], "nan");
    assert!(
        info["description"].as_str().unwrap().contains("`Log`"),
        "{info}"
    );
    assert!(text.contains("NaN") && text.contains("Inf"), "{text}");
    assert_eq!(c.stack()[0].2, 32);
    let l = var(&c.locals(1), "l").clone();
    assert!(l["value"].as_str().unwrap().contains("nan=1 inf=1"), "{l}");
    // `m = l * 2` carries them on: no second stop.
    c.cont();
    assert_eq!(c.finish().1, 0);
}

#[test]
fn threshold_filter() {
    let mut c = Client::start();
    c.ok("initialize", json!({"adapterID": "mirdsl"}));
    c.ok("launch", bad_launch());
    c.event("initialized");
    c.ok(
        "setExceptionBreakpoints",
        json!({"filters": [], "filterOptions": [{"filterId": "threshold", "condition": "1000"}]}),
    );
    c.ok("configurationDone", json!({}));
    let s = c.stopped();
    assert_eq!(s["reason"], "exception");
    let text = s["text"].as_str().unwrap();
    assert!(text.contains("`Exp`") && text.contains("1000"), "{text}");
    assert_eq!(c.stack()[0].2, 34);
    c.cont();
    assert_eq!(c.finish().1, 0);
}

#[test]
fn data_breakpoints_on_weights_in_a_training_run() {
    let launch = json!({"program": data("train.mir").display().to_string(), "entry": "train_step",
        "args": {"x": "[1.0, 0.5, -1.0]"}, "steps": 2});
    let mut c = Client::launch(launch, |c| {
        let info = c.ok("dataBreakpointInfo", json!({"name": "w"}));
        assert_eq!(info["accessTypes"], json!(["write"]));
        let w = info["dataId"].clone();
        let frozen = c.ok("dataBreakpointInfo", json!({"name": "frozen"}))["dataId"].clone();
        let none = c.ok("dataBreakpointInfo", json!({"name": "l"}));
        assert!(none["dataId"].is_null());
        let set = c.ok(
            "setDataBreakpoints",
            json!({"breakpoints": [{"dataId": w, "accessType": "write"},
                {"dataId": frozen, "accessType": "write", "condition": "unchanged"}]}),
        );
        assert_eq!(set["breakpoints"][0]["verified"], true);
    });
    // Step 1: `w` changes at the Assign, then `frozen` is found unchanged at the return.
    let s = c.stopped();
    assert_eq!(s["reason"], "data breakpoint");
    assert!(s["text"].as_str().unwrap().contains("`w` changed"), "{s}");
    assert_eq!(c.stack()[0].2, 11);
    let w = var(&c.weights(1), "w").clone();
    assert!(!w["value"].as_str().unwrap().contains("[1, 2, 3]"), "{w}");
    c.cont();
    let s = c.stopped();
    assert!(
        s["text"]
            .as_str()
            .unwrap()
            .contains("`frozen` did not change"),
        "{s}"
    );
    assert_eq!(c.stack()[0].2, 12);
    // Step 2 alike.
    c.cont();
    assert!(c.stopped()["text"]
        .as_str()
        .unwrap()
        .contains("`w` changed"));
    c.cont();
    assert!(c.stopped()["text"].as_str().unwrap().contains("`frozen`"));
    c.cont();
    assert_eq!(c.finish().1, 0);
}

#[test]
fn the_backward_pass_steps_through_the_printed_gradient_program() {
    let launch = json!({"program": data("train.mir").display().to_string(), "entry": "train_step",
        "args": {"x": "[1.0, 0.5, -1.0]"}, "steps": 2, "stopOnEntry": true});
    let mut c = Client::launch(launch, |_| {});
    c.stopped();
    // Step in until a statement of the backward pass: it has no line of
    // its own, so the frame shows the gradient program as a document.
    let mut found = None;
    for _ in 0..100 {
        c.ok("stepIn", json!({"threadId": 1}));
        c.stopped();
        let st = c.ok("stackTrace", json!({"threadId": 1}));
        let top = st["stackFrames"][0].clone();
        if top["source"]["name"]
            .as_str()
            .is_some_and(|n| n.ends_with(".grad.mir"))
        {
            found = Some(top);
            break;
        }
    }
    let top = found.expect("a stop in the gradient program");
    assert_eq!(top["name"], "value_and_grad_loss");
    let reference = top["source"]["sourceReference"].clone();
    let text = c.ok("source", json!({"sourceReference": reference}))["content"].clone();
    let text = text.as_str().unwrap();
    assert!(text.starts_with("graph value_and_grad_loss("), "{text}");
    let line = top["line"].as_u64().unwrap() as usize;
    let statement = text.lines().nth(line - 1).unwrap();
    assert!(
        statement.contains(" = "),
        "line {line}: {statement}\n{text}"
    );
    // A breakpoint on that line of the read-only document stops the next step there.
    let b = c.ok(
        "setBreakpoints",
        json!({"source": {"sourceReference": reference}, "breakpoints": [{"line": line}]}),
    );
    assert_eq!(b["breakpoints"][0]["verified"], true);
    c.cont();
    assert_eq!(c.stopped()["reason"], "breakpoint");
    assert_eq!(c.stack()[0].2, line as u64);
    c.ok(
        "setBreakpoints",
        json!({"source": {"sourceReference": reference}, "breakpoints": []}),
    );
    c.cont();
    assert_eq!(c.finish().1, 0);
}

#[test]
fn a_run_time_fault_stops_where_it_happens() {
    let launch = json!({"program": data("debug.mir").display().to_string(), "entry": "fault",
        "args": {"x": "ones", "i": "[0, 7]"}});
    let mut c = Client::launch(launch, |_| {});
    let s = c.stopped();
    assert_eq!(s["reason"], "exception");
    assert!(
        s["text"]
            .as_str()
            .unwrap()
            .contains("index 7 is out of range"),
        "{s}"
    );
    assert_eq!(c.stack()[0].2, 40);
    let y = var(&c.locals(1), "y").clone();
    assert!(y["value"].as_str().unwrap().contains("[2, 2, 2, 2]"), "{y}");
    c.cont();
    let (out, code) = c.finish();
    assert_eq!(code, 1);
    assert!(out.contains("index 7 is out of range"), "{out}");
}

#[test]
fn breakpoints_in_a_differentiated_graph_stop_in_its_gradient_program() {
    // `loss` runs inside the program value_and_grad made of it: its forward
    // statements keep their lines.
    let launch = json!({"program": data("train.mir").display().to_string(), "entry": "train_step",
        "args": {"x": "[1.0, 0.5, -1.0]"}});
    let file = data("train.mir");
    let mut c = Client::launch(launch, |c| {
        c.breakpoints(&file, &[6]);
    });
    c.stopped();
    let stack = c.stack();
    assert_eq!(
        (stack[0].0.as_str(), stack[0].2),
        ("value_and_grad_loss", 6),
        "{stack:?}"
    );
    assert_eq!(
        (stack[1].0.as_str(), stack[1].2),
        ("train_step", 10),
        "{stack:?}"
    );
    c.cont();
    assert_eq!(c.finish().1, 0);
}

// 4. Models from MindSpore.

#[test]
fn imported_mindir_model() {
    let model = test_support::repo_root().join("testdata/zoo/activations/model.mindir");
    let mut c = Client::start();
    c.ok("initialize", json!({"adapterID": "mirdsl"}));
    c.ok(
        "launch",
        json!({"program": model.display().to_string(), "stopOnEntry": true,
        "args": {"0": "ones"}}),
    );
    c.event("initialized");
    c.ok("configurationDone", json!({}));
    assert_eq!(c.stopped()["reason"], "entry");
    let stack = c.stack();
    assert!(stack[0].1.ends_with("model.mir"), "{stack:?}");
    // The frame names the statement's MindSpore scope (`gelu.div`: `gelu`).
    assert_eq!(stack[0].0, "main [gelu]", "{stack:?}");
    c.ok("next", json!({"threadId": 1}));
    c.stopped();
    // Hover names the scope of a value computed so far.
    let h = c.ok(
        "evaluate",
        json!({"expression": "gelu.div", "frameId": 1, "context": "hover"}),
    );
    assert!(
        h["result"]
            .as_str()
            .unwrap()
            .starts_with("MindSpore scope `gelu`: f32[3, 5]"),
        "{h}"
    );
    let locals = c.locals(1);
    assert!(
        locals
            .iter()
            .any(|v| v["type"].as_str().unwrap_or("").starts_with("f32")),
        "{locals:#?}"
    );
    c.cont();
    assert_eq!(c.finish().1, 0);
}

#[test]
fn imported_ir_dump() {
    // A MindSpore 2.10 compile dump (test_f.01_type_inference.ir), stepped into
    // the graphs MindSpore made of `test_f`'s operators.
    let mut c = Client::start();
    c.ok("initialize", json!({"adapterID": "mirdsl"}));
    c.ok(
        "launch",
        json!({"program": data("test_f.ir").display().to_string(), "stopOnEntry": true,
            "args": {"x": "[1.0, 2.0, 3.0]", "y": "[4.0, 5.0, 6.0]"}}),
    );
    c.event("initialized");
    c.ok("configurationDone", json!({}));
    assert_eq!(c.stopped()["reason"], "entry");
    assert_eq!(c.stack()[0].0, "main");
    c.ok("stepIn", json!({"threadId": 1}));
    c.stopped();
    let stack = c.stack();
    assert_eq!(stack[0].0, "test_f", "{stack:?}");
    assert!(stack[0].1.ends_with("test_f.mir"), "{stack:?}");
    let x = var(&c.locals(1), "x").clone();
    assert!(x["value"].as_str().unwrap().contains("[1, 2, 3]"), "{x}");
    c.cont();
    let (out, code) = c.finish();
    assert_eq!(code, 0, "{out}");
}

#[test]
fn an_ir_dump_shows_mindspore_scopes_in_the_stack_and_hover() {
    // MindSpore 2.10's execute-stage dump of Net(block(fc, act), head)
    // (gen_scoped_net.py), with the network's weights beside it: a dump
    // holds none.
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data("scoped_net.json")).unwrap()).unwrap();
    let launch = json!({"program": data("scoped_net.ir").display().to_string(),
        "args": {"x": expected["x"].to_string()}, "loadWeights": "scoped_net.safetensors",
        "stopOnEntry": true});
    let mut c = Client::launch(launch, |_| {});
    assert_eq!(c.stopped()["reason"], "entry");
    let stack = c.stack();
    assert!(stack[0].1.ends_with("scoped_net.mir"), "{stack:?}");
    // `block.fc.x = MatMul(...)`: Default/block-Block/fc-Dense/MatMul-op0.
    assert_eq!(stack[0].0, "main [block.fc]", "{stack:?}");
    for _ in 0..2 {
        c.ok("next", json!({"threadId": 1}));
        c.stopped();
    }
    // `block.act.div = Div(...)`, GELU's first operation.
    assert_eq!(c.stack()[0].0, "main [block.act]");
    // Hover on a value names its scope; on a cell, lists what is in it.
    let h = c.ok(
        "evaluate",
        json!({"expression": "block.fc.x_1", "frameId": 1, "context": "hover"}),
    );
    let r = h["result"].as_str().unwrap();
    assert!(
        r.starts_with("MindSpore scope `block.fc`: f32[1, 3] min="),
        "{h}"
    );
    let h = c.ok(
        "evaluate",
        json!({"expression": "block", "frameId": 1, "context": "hover"}),
    );
    assert_eq!(
        h["result"], "MindSpore scope `block`: 2 values, 2 weights",
        "{h}"
    );
    let members = c.ok(
        "variables",
        json!({"variablesReference": h["variablesReference"]}),
    )["variables"]
        .clone();
    let names: Vec<&str> = members
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "block.fc.x",
            "block.fc.x_1",
            "block.fc.weight",
            "block.fc.bias"
        ]
    );
    // Watch expressions use the scoped names.
    let w = c.ok(
        "evaluate",
        json!({"expression": "ReduceMax(Abs(block.fc.x_1 - BiasAdd(block.fc.x, block.fc.bias)))",
            "frameId": 1, "context": "watch"}),
    );
    assert_eq!(w["result"], "f32 0", "{w}");
    // The imported text lives in a scratch folder while the session does.
    let st = c.ok("stackTrace", json!({"threadId": 1}));
    let text = std::path::PathBuf::from(st["stackFrames"][0]["source"]["path"].as_str().unwrap());
    assert!(text.is_file(), "{}", text.display());
    c.cont();
    let (out, code) = c.finish();
    assert_eq!(code, 0, "{out}");
    assert_eq!(c.disconnect(), 0);
    assert!(
        !text.parent().unwrap().exists(),
        "{} is left",
        text.display()
    );
    // MindSpore's output for this input, to f32 rounding.
    let got: Vec<f64> = out
        .split(|ch: char| !(ch.is_ascii_digit() || ch == '.' || ch == '-' || ch == 'e'))
        .filter_map(|t| t.parse().ok())
        .collect();
    let want: Vec<f64> = expected["y"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(got.len() >= 2, "{out}");
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() < 1e-5, "{out} vs {want:?}");
    }
}

#[test]
fn a_model_launched_without_args_gets_ones_and_partial_args_are_an_error() {
    // F5 on a dump with no launch.json: no `args` at all.
    let launch =
        json!({"program": data("scoped_net.ir").display().to_string(), "stopOnEntry": true});
    let mut c = Client::launch(launch, |_| {});
    c.stopped();
    let x = var(&c.locals(1), "x").clone();
    assert!(x["value"].as_str().unwrap().contains("min=1 max=1"), "{x}");
    c.cont();
    let (out, code) = c.finish();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("no `args` in the launch: x = ones"), "{out}");
    // Some `args`, but not all: the run says which are missing, and where to give them.
    let launch = json!({"program": data("debug.mir").display().to_string(), "entry": "fault",
        "args": {"x": "ones"}});
    let mut c = Client::launch(launch, |_| {});
    let (out, code) = c.finish();
    assert_eq!(code, 1);
    assert!(
        out.contains("missing argument `i` (give it in the launch's `args`)"),
        "{out}"
    );
}

#[test]
fn a_mindspore_model_s_scopes_from_the_shared_fixtures() {
    // LeNet-5 as mindspore.export wrote it: frames and hover name its cells.
    let Some(dir) = test_support::require(
        test_support::Tool::MindSporeFixtures,
        test_support::mindspore_fixtures(),
    ) else {
        return;
    };
    let launch = json!({"program": dir.join("lenet5.mindir").display().to_string(),
        "args": {"x": "ones"}, "stopOnEntry": true});
    let mut c = Client::launch(launch, |_| {});
    c.stopped();
    assert_eq!(c.stack()[0].0, "main [conv1]");
    let mut seen = Vec::new();
    for _ in 0..20 {
        c.ok("next", json!({"threadId": 1}));
        if c.stopped()["reason"] != "step" {
            break;
        }
        let name = c.stack()[0].0.clone();
        if !seen.contains(&name) {
            seen.push(name);
        }
        if seen.iter().any(|n| n == "main [fc1]") {
            break;
        }
    }
    assert!(seen.iter().any(|n| n == "main [relu]"), "{seen:?}");
    assert!(seen.iter().any(|n| n == "main [fc1]"), "{seen:?}");
    let h = c.ok(
        "evaluate",
        json!({"expression": "conv1.conv2d", "frameId": 1, "context": "hover"}),
    );
    assert!(
        h["result"]
            .as_str()
            .unwrap()
            .starts_with("MindSpore scope `conv1`: f32[1, 6, 28, 28]"),
        "{h}"
    );
    let h = c.ok(
        "evaluate",
        json!({"expression": "fc3", "frameId": 1, "context": "hover"}),
    );
    assert_eq!(h["result"], "MindSpore scope `fc3`: 0 values, 2 weights");
    c.cont();
    assert_eq!(c.finish().1, 0);
}

#[test]
fn numbered_cells_are_named_as_mindspore_names_them() {
    // A SequentialCell's cells are numbered (`conv1.0.weight` in MindSpore);
    // the imported text writes `conv1._0`.
    let model = test_support::repo_root().join("testdata/zoo/resnet_block/model.mindir");
    let launch = json!({"program": model.display().to_string(), "args": {"identity": "ones"},
        "stopOnEntry": true});
    let mut c = Client::launch(launch, |_| {});
    c.stopped();
    assert_eq!(c.stack()[0].0, "main [conv1.0]");
    let h = c.ok(
        "evaluate",
        json!({"expression": "conv1._0.weight", "frameId": 1, "context": "hover"}),
    );
    assert!(
        h["result"]
            .as_str()
            .unwrap()
            .starts_with("MindSpore scope `conv1.0`: f32[8, 8, 3, 3]"),
        "{h}"
    );
    c.cont();
    assert_eq!(c.finish().1, 0);
}

// 5. Safe and robust.

#[test]
fn malformed_messages_are_survived() {
    let mut c = Client::start();
    c.raw(b"Content-Length: 5\r\n\r\n{oops");
    c.raw(b"Content-Length: 2\r\n\r\n[]");
    c.raw(b"Content-Length: nine\r\n\r\n");
    c.raw(b"Hello: world\r\n\r\n");
    let r = c.request("noSuchCommand", json!({}));
    assert_eq!(r["success"], false);
    let r = c.request("stackTrace", json!({"threadId": 1}));
    assert_eq!(r["success"], false);
    let r = c.request("launch", json!({"program": 7}));
    assert_eq!(r["success"], false);
    let r = c.request(
        "launch",
        json!({"program": data("missing.mir").display().to_string()}),
    );
    assert_eq!(r["success"], false);
    assert!(
        r["message"].as_str().unwrap().contains("missing.mir"),
        "{r}"
    );
    let r = c.request("variables", json!({"variablesReference": "x"}));
    assert_eq!(r["success"], false);
    let caps = c.ok("initialize", json!({"adapterID": "mirdsl"}));
    assert_eq!(caps["supportsConditionalBreakpoints"], true);
    let skipped = c.events.iter().filter(|e| {
        e["event"] == "output"
            && e["body"]["output"]
                .as_str()
                .unwrap_or("")
                .contains("malformed")
    });
    assert_eq!(skipped.count(), 4);
    assert_eq!(c.disconnect(), 0);
}

#[test]
fn bad_requests_while_stopped_leave_the_run_usable() {
    let file = data("debug.mir");
    let mut c = Client::launch(debug_mir(), |c| {
        c.breakpoints(&file, &[23]);
    });
    c.stopped();
    let bad: Vec<(&str, serde_json::Value)> = vec![
        ("setBreakpoints", json!({"source": 5, "breakpoints": "x"})),
        (
            "setBreakpoints",
            json!({"source": {"path": "/nowhere.mir"}, "breakpoints": [{"line": 4294967295u64}]}),
        ),
        (
            "stackTrace",
            json!({"threadId": 1, "startFrame": 1000000, "levels": 5}),
        ),
        ("scopes", json!({"frameId": 999})),
        ("scopes", json!({"frameId": -1})),
        ("variables", json!({"variablesReference": 123456789})),
        (
            "variables",
            json!({"variablesReference": 1, "start": 1000000, "count": 5}),
        ),
        (
            "evaluate",
            json!({"expression": "a\n}\ngraph evil() {", "frameId": 1}),
        ),
        ("evaluate", json!({"expression": "", "frameId": 1})),
        ("evaluate", json!({"expression": "Exp(", "frameId": 1})),
        ("source", json!({"sourceReference": 999})),
        (
            "setExceptionBreakpoints",
            json!({"filters": ["nan"], "filterOptions": [{"filterId": "threshold", "condition": "big"}]}),
        ),
        ("dataBreakpointInfo", json!({})),
        (
            "setDataBreakpoints",
            json!({"breakpoints": [{"dataId": 7}]}),
        ),
        (
            "setFunctionBreakpoints",
            json!({"breakpoints": [{"name": null}]}),
        ),
        ("launch", debug_mir()),
        ("stepIn", json!({"threadId": "one", "targetId": []})),
    ];
    for (command, args) in bad {
        // An answer, failed or not, and no panic: the session goes on.
        let r = c.request(command, args);
        assert_eq!(r["type"], "response", "{command}: {r}");
        assert!(
            !r["message"]
                .as_str()
                .unwrap_or("")
                .contains("internal error"),
            "{command}: {r}"
        );
        if command == "stepIn" {
            c.stopped();
        }
    }
    c.ok("setExceptionBreakpoints", json!({"filters": []}));
    // The stepIn above went into `square`.
    assert_eq!(c.stack()[0].0, "square");
    let locals = c.locals(1);
    assert!(var(&locals, "x")["value"]
        .as_str()
        .unwrap()
        .contains("f32[2, 3]"));
    c.cont();
    assert_eq!(c.finish().1, 0);
}

#[test]
fn ending_a_session_frees_its_run() {
    let file = data("debug.mir");
    let mut c = Client::launch(debug_mir(), |c| {
        c.breakpoints(&file, &[23]);
    });
    c.stopped();
    // `terminate` ends the stopped run: it exits.
    c.ok("terminate", json!({}));
    c.event("terminated");
    assert_eq!(c.disconnect(), 0);
    // A disconnect while stopped returns too (its run thread is told to end).
    let mut c = Client::launch(debug_mir(), |c| {
        c.breakpoints(&file, &[23]);
    });
    c.stopped();
    assert_eq!(c.disconnect(), 0);
}
