//! The base protocol: messages framed by a `Content-Length` header.
//!
//! A malformed message (no length, a body that is not JSON) is reported and
//! skipped; only the end of the input ends the session.

use std::io::{self, BufRead, Read, Write};

use serde_json::Value as Json;

/// The largest message body read (bigger ones are skipped).
pub const MAX_MESSAGE: usize = 64 << 20;

/// One read: a message, a malformed one (why), or the end of the input.
pub enum Incoming {
    Message(Json),
    Malformed(String),
    End,
}

/// Reads the next message.
pub fn read_message(r: &mut impl BufRead) -> io::Result<Incoming> {
    let mut length: Option<usize> = None;
    let mut bad_header: Option<String> = None;
    let mut saw_header = false;
    loop {
        let mut line = Vec::new();
        if r.read_until(b'\n', &mut line)? == 0 {
            return Ok(Incoming::End);
        }
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if saw_header {
                break;
            }
            continue; // blank lines between messages
        }
        saw_header = true;
        match line.split_once(':') {
            Some((k, v)) if k.trim().eq_ignore_ascii_case("content-length") => {
                match v.trim().parse::<usize>() {
                    Ok(n) => length = Some(n),
                    Err(_) => bad_header = Some(format!("bad Content-Length `{}`", v.trim())),
                }
            }
            Some(_) => {}
            None => bad_header = Some(format!("not a header line: `{line}`")),
        }
    }
    let Some(n) = length else {
        return Ok(Incoming::Malformed(
            bad_header.unwrap_or_else(|| "a message without Content-Length".into()),
        ));
    };
    if n > MAX_MESSAGE {
        // Skip the body, to stay in step with the stream.
        io::copy(&mut r.take(n as u64), &mut io::sink())?;
        return Ok(Incoming::Malformed(format!(
            "a message of {n} bytes, more than the {MAX_MESSAGE} read"
        )));
    }
    let mut body = vec![0u8; n];
    r.read_exact(&mut body)?;
    match serde_json::from_slice::<Json>(&body) {
        Ok(v) if v.is_object() => Ok(Incoming::Message(v)),
        Ok(_) => Ok(Incoming::Malformed(
            "a message that is not a JSON object".into(),
        )),
        Err(e) => Ok(Incoming::Malformed(format!("a body that is not JSON: {e}"))),
    }
}

/// Writes one message.
pub fn write_message(w: &mut impl Write, msg: &Json) -> io::Result<()> {
    let body = serde_json::to_vec(msg).expect("JSON values serialise");
    write!(w, "Content-Length: {}\r\n\r\n", body.len())?;
    w.write_all(&body)?;
    w.flush()
}
