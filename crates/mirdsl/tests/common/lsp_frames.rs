//! LSP base-protocol framing for the tests that drive a real `mirdsl lsp`
//! process: `Content-Length` frames out, and a thread that reads the server's
//! frames into a channel (closed when the server's output ends).

use std::io::{BufRead, BufReader, Read};
use std::process::ChildStdout;
use std::sync::mpsc::{self, Receiver};

use serde_json::Value as Json;

/// `body` as one frame.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(body);
    frame
}

/// The server's messages, read on a thread of their own.
pub fn read_messages(stdout: ChildStdout) -> Receiver<Json> {
    let (tx, messages) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        loop {
            let mut length = None;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(v) = line.strip_prefix("Content-Length:") {
                    length = v.trim().parse::<usize>().ok();
                }
            }
            let Some(n) = length else { return };
            let mut body = vec![0; n];
            if reader.read_exact(&mut body).is_err() {
                return;
            }
            if tx.send(serde_json::from_slice(&body).unwrap()).is_err() {
                return;
            }
        }
    });
    messages
}
