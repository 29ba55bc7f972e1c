//! The MindIR DSL language server (`mirdsl lsp`), on tower-lsp-server.
//!
//! * State: a salsa database ([`db::RootDb`]) with one input per open
//!   document. Notifications (`didOpen`/`didChange`/`didClose`) change it at
//!   once, in arrival order, so every later request sees them.
//! * Requests run on a snapshot (a clone of the database handle) in a blocking
//!   thread. A newer edit cancels analysis in flight: salsa unwinds the
//!   snapshot's query with `salsa::Cancelled`, answered as `ContentModified`.
//!   Any other panic is caught, logged, and answered with an internal error.
//! * After every change of a document its diagnostics are published with the
//!   document's version (also when they did not change).
//! * Positions use the encoding negotiated at `initialize`: UTF-8 when the
//!   client offers it, else UTF-16.
//! * Custom requests for the editors: `mirdsl/graph` (DOT text, SVG hook,
//!   node ranges), `mirdsl/ir` (IR or gradient text), `mirdsl/run` (run a
//!   graph with the `exec` crate, with a time limit).

mod convert;
mod custom;
mod outbox;
mod publish;
mod server;

pub use custom::{graph_dot, render_svg};
pub use outbox::Outbox;
pub use server::Backend;

use tower_lsp_server::{ClientSocket, LspService, Server};

/// The server's service, for running it over any transport (tests use pipes).
pub fn service(outbox: Outbox) -> (LspService<Backend>, ClientSocket) {
    LspService::build(move |client| Backend::new(client, outbox.clone()))
        .custom_method("mirdsl/graph", Backend::graph_request)
        .custom_method("mirdsl/ir", Backend::ir_request)
        .custom_method("mirdsl/run", Backend::run_request)
        .custom_method("mirdsl/debug/panic", Backend::panic_request)
        .finish()
}

/// Serves over any byte streams until `exit`.
pub async fn serve<I, O>(input: I, output: O)
where
    I: tokio::io::AsyncRead + Unpin,
    O: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (outbox, frames, writer) = outbox::channel(output);
    let (service, socket) = service(outbox.clone());
    Server::new(input, frames, socket)
        .concurrency_level(64)
        .serve(service)
        .await;
    // Send what is queued (the answer to `shutdown`), then stop.
    outbox.close();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), writer).await;
}

/// The stack of the server's threads (analysis recursion follows call chains).
pub const STACK_SIZE: usize = 64 << 20;

/// `mirdsl lsp`: serves over stdin/stdout until `exit`.
pub fn run_stdio() -> std::io::Result<()> {
    // Panics in a request or in one graph's analysis are caught and reported;
    // print one line for them rather than a backtrace (which costs
    // milliseconds a panic when RUST_BACKTRACE is set).
    if std::env::var_os("MIRDSL_LSP_BACKTRACE").is_none() {
        std::panic::set_hook(Box::new(|info| {
            eprintln!("mirdsl lsp: caught panic: {info}");
        }));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        // Inference follows chains of graph calls recursively (200 deep at
        // most): blocking threads get a big stack.
        .thread_stack_size(STACK_SIZE)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        serve(tokio::io::stdin(), tokio::io::stdout()).await;
    });
    // Requests still running (a long `mirdsl/run`) do not hold up the exit.
    runtime.shutdown_background();
    Ok(())
}
