//! Tensors you can read: variables, slices, weights, optimizer state, evaluate; values equal to a plain run's.

use serde_json::json;

use crate::debug_mir;
use crate::support::{data, var, Client};

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
