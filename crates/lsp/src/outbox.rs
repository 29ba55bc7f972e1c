//! One writer for everything the server sends: tower-lsp's messages and the
//! server's own pre-serialised ones.
//!
//! tower-lsp serialises a notification's parameters to a `serde_json::Value`
//! and then to text; for a big file's diagnostics (thousands, megabytes) that
//! round trip costs more than computing them. So diagnostics are serialised
//! straight to text (from per-item fragments that are reused across edits) and
//! sent as whole frames through an [`Outbox`]. tower-lsp writes into a
//! [`FrameSplitter`], which cuts its byte stream into whole frames, so the two
//! kinds of frames interleave only at frame boundaries, in the order they are
//! sent.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

enum Out {
    Frame(Vec<u8>),
    /// Write what is queued, then stop.
    Close,
}

/// Sends whole frames to the output.
#[derive(Clone)]
pub struct Outbox(UnboundedSender<Out>);

impl Outbox {
    /// Sends one JSON-RPC message (its body; the header is added here).
    pub fn send_message(&self, body: &[u8]) {
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend_from_slice(body);
        let _ = self.0.send(Out::Frame(frame));
    }

    pub fn close(&self) {
        let _ = self.0.send(Out::Close);
    }
}

/// The output tower-lsp writes to: complete frames go to the outbox.
pub struct FrameSplitter {
    buf: Vec<u8>,
    out: UnboundedSender<Out>,
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

impl AsyncWrite for FrameSplitter {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.buf.extend_from_slice(data);
        while let Some(h) = find(&this.buf, b"\r\n\r\n") {
            let length = std::str::from_utf8(&this.buf[..h]).ok().and_then(|header| {
                header.lines().find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.trim()
                        .eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
            });
            let Some(length) = length else {
                // Not a frame we understand: pass the bytes on as they are.
                let all = std::mem::take(&mut this.buf);
                let _ = this.out.send(Out::Frame(all));
                break;
            };
            let total = h + 4 + length;
            if this.buf.len() < total {
                break;
            }
            let rest = this.buf.split_off(total);
            let frame = std::mem::replace(&mut this.buf, rest);
            let _ = this.out.send(Out::Frame(frame));
        }
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// The outbox, tower-lsp's output, and the task that writes both to `output`.
pub fn channel<O>(output: O) -> (Outbox, FrameSplitter, tokio::task::JoinHandle<()>)
where
    O: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = unbounded_channel();
    let writer = tokio::spawn(write_all(output, rx));
    (
        Outbox(tx.clone()),
        FrameSplitter {
            buf: Vec::new(),
            out: tx,
        },
        writer,
    )
}

async fn write_all<O: AsyncWrite + Unpin>(mut output: O, mut rx: UnboundedReceiver<Out>) {
    while let Some(first) = rx.recv().await {
        let mut next = Some(first);
        // Write everything queued, then flush once.
        while let Some(message) = next {
            match message {
                Out::Frame(frame) => {
                    if output.write_all(&frame).await.is_err() {
                        return;
                    }
                }
                Out::Close => {
                    let _ = output.flush().await;
                    return;
                }
            }
            next = rx.try_recv().ok();
        }
        if output.flush().await.is_err() {
            return;
        }
    }
}
