//! Safe and robust: malformed messages, bad requests, ending a session.

use serde_json::json;

use crate::debug_mir;
use crate::support::{data, var, Client};

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
