//! Break on bad numbers: NaN and threshold filters, data breakpoints, the backward pass, run-time faults.

use serde_json::json;

use crate::bad_launch;
use crate::support::{data, var, Client};

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
