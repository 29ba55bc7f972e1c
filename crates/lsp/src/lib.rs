//! The MindIR DSL language server (`mirdsl lsp`).
//!
//! Its own transport and main loop, in the manner of rust-analyzer's
//! `lsp-server` (see `docs/lsp.md` for why not tower-lsp):
//!
//! * [`transport`]: `Content-Length` frames in and out (read by the main loop,
//!   written by whichever thread answers). Any frame that is not
//!   a valid message is answered with the JSON-RPC error it calls for, and
//!   the server goes on. Unknown requests get `MethodNotFound`; `exit`
//!   without `shutdown` ends the server with status 1.
//! * [`server`]: one thread owns the salsa database ([`db::RootDb`]) and the
//!   open documents and takes messages in order; requests run on snapshots
//!   in one bounded [`pool`] of worker threads; a newer edit or
//!   `$/cancelRequest` cancels them (salsa unwinds their queries).
//! * Positions use the encoding negotiated at `initialize`: UTF-8 when the
//!   client offers it, else UTF-32, else UTF-16.
//! * Custom requests for the editors: `mirdsl/graph` (DOT text, SVG, node
//!   ranges), `mirdsl/ir` (IR or gradient text), `mirdsl/run` (run a graph
//!   with the `exec` crate on the CPU or, with `device: "gpu" | "auto"`, the
//!   `gpu` crate's CUDA backend, in a child process that a cancellation kills).
//! * `workspace/executeCommand` carries out the code lenses' commands
//!   (`mirdsl.run`, `mirdsl.showGraph`, `mirdsl.showGradient`) for clients
//!   that do not (editors that do list them in `initializationOptions.clientCommands`).

mod capabilities;
mod convert;
mod custom;
mod dump;
mod handlers;
mod pool;
mod publish;
mod runner;
mod server;
pub mod transport;

pub use custom::{graph_dot, render_svg};
pub use ls_types as lsp;
pub use runner::run_worker;

use std::path::PathBuf;

/// How the server runs.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// A program that runs `mirdsl/run` jobs as `PROGRAM lsp --run-worker`
    /// (a child process per run, killed when the run is cancelled or takes
    /// too long). `None`: runs go to a thread, which cannot be stopped.
    pub run_worker: Option<PathBuf>,
    /// Worker threads (default: the cores, between 2 and 4).
    pub threads: Option<usize>,
    /// The memory budget of a `mirdsl/run` (bytes); default
    /// [`tensor::limits::default_max_memory`] (`$MIRDSL_MAX_MEMORY`, or half
    /// of this machine's memory). `W0003` warns against
    /// [`analysis::limits::memory_budget`], which the caller sets.
    pub max_memory: Option<usize>,
}

/// The stack of the server's threads (analysis recursion follows call chains).
pub const STACK_SIZE: usize = 64 << 20;

/// Serves over any byte streams until `exit` (or the end of the input);
/// returns the exit status: 0 after `shutdown` then `exit`, else 1.
pub fn serve(
    input: impl std::io::Read + Send + 'static,
    output: impl std::io::Write + Send + 'static,
    options: Options,
) -> i32 {
    let outbox = transport::outbox(output);
    let mut server = server::Server::new(outbox.clone(), &options);
    // The main loop reads the input itself (a reader thread would be one
    // more thread wake-up between a keystroke and its diagnostics). The end
    // of the input without `exit` is an exit without `shutdown`.
    let mut code = 1;
    transport::read_messages(input, |incoming| match server.handle(incoming) {
        Some(c) => {
            code = c;
            false
        }
        None => true,
    });
    server.stop();
    // What was sent (the answer to `shutdown`) is out; let go of the output.
    outbox.close();
    code
}

/// `mirdsl lsp`: serves over stdin/stdout until `exit`; returns the exit status.
pub fn run_stdio(max_memory: Option<usize>) -> i32 {
    // Panics in a request or in one graph's analysis are caught and reported;
    // print one line for them rather than a backtrace (which costs
    // milliseconds a panic when RUST_BACKTRACE is set).
    if std::env::var_os("MIRDSL_LSP_BACKTRACE").is_none() {
        std::panic::set_hook(Box::new(|info| {
            eprintln!("mirdsl lsp: caught panic: {info}");
        }));
    }
    let options = Options {
        run_worker: std::env::current_exe().ok(),
        threads: None,
        max_memory,
    };
    serve(std::io::stdin(), std::io::stdout(), options)
}
