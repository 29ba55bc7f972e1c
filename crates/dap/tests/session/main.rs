//! The adapter driven by a scripted client over pipes, as VS Code and
//! nvim-dap drive `mirdsl dap`: breakpoints and stepping, tensors, bad
//! numbers, models from MindSpore, and malformed input.

mod bad_numbers;
mod models;
mod robustness;
mod stepping;
mod support;
mod values;

use serde_json::json;
use support::data;

fn debug_mir() -> serde_json::Value {
    json!({"program": data("debug.mir").display().to_string(), "entry": "main",
        "args": {"x": "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]"}})
}

fn bad_launch() -> serde_json::Value {
    json!({"program": data("debug.mir").display().to_string(), "entry": "bad",
        "args": {"x": "[0.5, 1.0, 2.0, 3.0]"}})
}
