//! `mirdsl dap`: a Debug Adapter Protocol server for MindIR DSL programs.
//!
//! A session launches one program (a `.mir` file, or a MindSpore `.mindir`
//! model or `.ir` dump imported to DSL text), runs its entry in the
//! interpreter on a thread of its own, and stops it where the client asks:
//! line breakpoints (with conditions) in any file of the program, stepping
//! (`next`, `stepIn`, `stepOut`), `pause`, the `nan` and `threshold`
//! exception filters, and data breakpoints on weights. At a stop it shows
//! the call stack with graph frames and source lines, each frame's
//! variables and the weights as tensors with their statistics, and
//! evaluates DSL expressions in a frame's scope.
//!
//! - [`protocol`]: the base protocol's framing.
//! - [`session`]: requests, responses and events.
//! - [`launch`]: the launch arguments, loading the program, the run.
//! - [`runner`]: the observer that decides where to stop.
//! - [`inspect`]: what a value looks like in the variables view.
//! - [`eval`]: expressions in a frame's scope.
//! - [`source`]: node ranges as files and lines.
//! - [`scope`]: MindSpore's scopes in an imported model's names.

pub mod eval;
pub mod inspect;
pub mod launch;
pub mod protocol;
pub mod runner;
pub mod scope;
pub mod session;
pub mod source;

pub use session::{capabilities, serve};

/// Serves a session on standard input and output.
pub fn run_stdio() -> i32 {
    let stdin = std::io::BufReader::new(std::io::stdin());
    serve(stdin, std::io::stdout())
}
