//! Models from MindSpore: `.mindir` models and `.ir` dumps, their scopes in the stack.

use serde_json::json;

use crate::support::{data, var, Client};

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
