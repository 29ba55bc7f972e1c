//! JSON-RPC over LSP's base protocol (`Content-Length` frames), tolerant of
//! anything a client sends: a frame that cannot be read is answered with the
//! error JSON-RPC calls for and reading goes on with the next frame.
//!
//! * a body that is not UTF-8 or not JSON: `-32700` (parse error), `id: null`;
//! * JSON that is not a request, notification or response (a bare value, a
//!   batch array, no `"jsonrpc": "2.0"`, a bad `id` or `method`): `-32600`
//!   (invalid request), with the request's `id` where it has a usable one;
//! * a header without a `Content-Length`: `-32700`, then the reader looks for
//!   the next header.
//!
//! Messages go out through an [`Outbox`]: whole frames, written in the order
//! they are sent, by the thread that sends them.

use std::io::{self, BufRead, Read, Write};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value as Json;

/// JSON-RPC and LSP error codes.
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    pub const SERVER_NOT_INITIALIZED: i64 = -32002;
    pub const REQUEST_FAILED: i64 = -32803;
    pub const CONTENT_MODIFIED: i64 = -32801;
    pub const REQUEST_CANCELLED: i64 = -32800;
}

/// A request id: a number or a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(pub Json);

impl std::hash::Hash for RequestId {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_string().hash(state)
    }
}

impl RequestId {
    fn from_json(v: &Json) -> Option<RequestId> {
        match v {
            Json::Number(n) if n.is_i64() || n.is_u64() => Some(RequestId(v.clone())),
            Json::String(_) => Some(RequestId(v.clone())),
            _ => None,
        }
    }
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A message that reads as one.
#[derive(Debug)]
pub enum Message {
    Request {
        id: RequestId,
        method: String,
        params: Json,
    },
    Notification {
        method: String,
        params: Json,
    },
    Response {
        id: RequestId,
        result: Option<Json>,
        error: Option<Json>,
    },
}

/// What the reader hands on: a message, or an error to answer with.
#[derive(Debug)]
pub enum Incoming {
    Message(Message),
    /// The frame was not a valid message: answer with this error.
    Invalid {
        id: Option<RequestId>,
        code: i64,
        message: String,
    },
}

/// The largest body read (bigger ones are skipped and answered with an error).
const MAX_BODY: usize = 1 << 30;

/// Reads the next frame's body. `Ok(None)` at the end of the input (also in
/// the middle of a frame); `Err` text for a header that has no length.
fn read_frame(input: &mut impl BufRead) -> io::Result<Option<Result<Vec<u8>, String>>> {
    let mut length: Option<usize> = None;
    let mut bad_length = None;
    let mut saw_header = false;
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if saw_header {
                break;
            }
            // Blank lines between frames are tolerated.
            continue;
        }
        saw_header = true;
        if let Some((name, value)) = text.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                match value.trim().parse::<usize>() {
                    Ok(n) => length = Some(n),
                    Err(_) => bad_length = Some(value.trim().to_string()),
                }
            }
        }
    }
    let Some(length) = length else {
        return Ok(Some(Err(match bad_length {
            Some(v) => format!("bad Content-Length `{v}`"),
            None => "a header without Content-Length".to_string(),
        })));
    };
    if length > MAX_BODY {
        io::copy(
            &mut io::Read::take(&mut *input, length as u64),
            &mut io::sink(),
        )?;
        return Ok(Some(Err(format!(
            "a body of {length} bytes is larger than {MAX_BODY}"
        ))));
    }
    // Grown as the bytes arrive: a header that promises a gigabyte and sends
    // a few bytes costs a few bytes.
    let mut body = Vec::with_capacity(length.min(1 << 20));
    (&mut *input).take(length as u64).read_to_end(&mut body)?;
    if body.len() < length {
        return Ok(None);
    }
    Ok(Some(Ok(body)))
}

/// Classifies a frame's body.
pub fn classify(body: &[u8]) -> Incoming {
    let invalid = |id: Option<RequestId>, message: &str| Incoming::Invalid {
        id,
        code: code::INVALID_REQUEST,
        message: message.to_string(),
    };
    let value: Json = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            let why = if std::str::from_utf8(body).is_err() {
                "the message is not UTF-8".to_string()
            } else {
                format!("the message is not JSON: {e}")
            };
            return Incoming::Invalid {
                id: None,
                code: code::PARSE_ERROR,
                message: why,
            };
        }
    };
    let Json::Object(mut object) = value else {
        return invalid(
            None,
            if value.is_array() {
                "batches are not supported: send one message per frame"
            } else {
                "a message is a JSON object"
            },
        );
    };
    let id = match object.get("id") {
        None => None,
        Some(v) => match RequestId::from_json(v) {
            Some(id) => Some(id),
            None => return invalid(None, "`id` must be an integer or a string"),
        },
    };
    if object.get("jsonrpc").and_then(Json::as_str) != Some("2.0") {
        return invalid(id, "`jsonrpc` must be \"2.0\"");
    }
    match object.remove("method") {
        Some(Json::String(method)) => {
            let params = object.remove("params").unwrap_or(Json::Null);
            if !matches!(params, Json::Null | Json::Object(_) | Json::Array(_)) {
                return invalid(id, "`params` must be an object or an array");
            }
            Incoming::Message(match id {
                Some(id) => Message::Request { id, method, params },
                None => Message::Notification { method, params },
            })
        }
        Some(_) => invalid(id, "`method` must be a string"),
        None => {
            let (result, error) = (object.remove("result"), object.remove("error"));
            match id {
                Some(id) if result.is_some() != error.is_some() => {
                    Incoming::Message(Message::Response { id, result, error })
                }
                _ => invalid(id, "neither a request nor a response"),
            }
        }
    }
}

/// Reads frames until the end of the input, handing on each; stops early if
/// `sink` returns false. Read errors end the input.
pub fn read_messages(input: impl io::Read, mut sink: impl FnMut(Incoming) -> bool) {
    let mut input = io::BufReader::with_capacity(1 << 16, input);
    loop {
        let incoming = match read_frame(&mut input) {
            Ok(None) | Err(_) => return,
            Ok(Some(Err(why))) => Incoming::Invalid {
                id: None,
                code: code::PARSE_ERROR,
                message: why,
            },
            Ok(Some(Ok(body))) => classify(&body),
        };
        if !sink(incoming) {
            return;
        }
    }
}

/// Sends whole messages to the output, each written and flushed at once by
/// the thread that sends it (no hop through a writer thread: each hop is a
/// thread wake-up on the way to the client), in the order they are sent.
#[derive(Clone)]
pub struct Outbox(Arc<Mutex<Option<Output>>>);

/// The output (`None` once it failed or was closed).
type Output = io::BufWriter<Box<dyn Write + Send>>;

#[derive(Serialize)]
struct ResponseOk<'a, T: Serialize> {
    jsonrpc: &'static str,
    id: &'a Json,
    result: &'a T,
}

#[derive(Serialize)]
struct ErrorObject<'a> {
    code: i64,
    message: &'a str,
}

#[derive(Serialize)]
struct ResponseErr<'a> {
    jsonrpc: &'static str,
    id: &'a Json,
    error: ErrorObject<'a>,
}

#[derive(Serialize)]
struct Notification<'a, T: Serialize> {
    jsonrpc: &'static str,
    method: &'a str,
    params: &'a T,
}

#[derive(Serialize)]
struct Request<'a, T: Serialize> {
    jsonrpc: &'static str,
    id: &'a str,
    method: &'a str,
    params: &'a T,
}

impl Outbox {
    /// Sends one JSON-RPC message (its body; the header is added here). A
    /// failed output (the client is gone) drops this and later messages.
    pub fn send_message(&self, body: Vec<u8>) {
        let mut guard = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(output) = guard.as_mut() else { return };
        let written = write!(output, "Content-Length: {}\r\n\r\n", body.len())
            .and_then(|_| output.write_all(&body))
            .and_then(|_| output.flush());
        if written.is_err() {
            *guard = None;
        }
    }

    /// A successful response.
    pub fn respond<T: Serialize>(&self, id: &RequestId, result: &T) {
        let body = serde_json::to_vec(&ResponseOk {
            jsonrpc: "2.0",
            id: &id.0,
            result,
        });
        match body {
            Ok(body) => self.send_message(body),
            Err(e) => self.respond_error(
                Some(id.clone()),
                code::INTERNAL_ERROR,
                &format!("the result cannot be serialised: {e}"),
            ),
        }
    }

    /// An error response (`id: null` when the request's id is unknown).
    pub fn respond_error(&self, id: Option<RequestId>, code: i64, message: &str) {
        let id = id.map_or(Json::Null, |i| i.0);
        let body = serde_json::to_vec(&ResponseErr {
            jsonrpc: "2.0",
            id: &id,
            error: ErrorObject { code, message },
        })
        .expect("an error serialises");
        self.send_message(body);
    }

    pub fn notify<T: Serialize>(&self, method: &str, params: &T) {
        let body = serde_json::to_vec(&Notification {
            jsonrpc: "2.0",
            method,
            params,
        })
        .expect("a notification serialises");
        self.send_message(body);
    }

    /// A request to the client (its answer is read and dropped).
    pub fn request<T: Serialize>(&self, id: &str, method: &str, params: &T) {
        let body = serde_json::to_vec(&Request {
            jsonrpc: "2.0",
            id,
            method,
            params,
        })
        .expect("a request serialises");
        self.send_message(body);
    }

    /// `window/logMessage`.
    pub fn log(&self, kind: u8, message: &str) {
        self.notify(
            "window/logMessage",
            &serde_json::json!({"type": kind, "message": message}),
        );
    }

    /// Flushes and lets go of the output.
    pub fn close(&self) {
        let mut guard = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(mut output) = guard.take() {
            let _ = output.flush();
        }
    }
}

/// The outbox that writes to `output`.
pub fn outbox(output: impl Write + Send + 'static) -> Outbox {
    let output: Box<dyn Write + Send> = Box::new(output);
    Outbox(Arc::new(Mutex::new(Some(io::BufWriter::with_capacity(
        1 << 16,
        output,
    )))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(body: &[u8]) -> String {
        match classify(body) {
            Incoming::Message(Message::Request { method, .. }) => format!("request {method}"),
            Incoming::Message(Message::Notification { method, .. }) => {
                format!("notification {method}")
            }
            Incoming::Message(Message::Response { id, .. }) => format!("response {id}"),
            Incoming::Invalid { id, code, .. } => match id {
                Some(id) => format!("{code} {id}"),
                None => format!("{code}"),
            },
        }
    }

    #[test]
    fn classifies_what_a_client_may_send() {
        for (body, expected) in [
            (
                &br#"{"jsonrpc":"2.0","id":1,"method":"x"}"#[..],
                "request x",
            ),
            (br#"{"jsonrpc":"2.0","id":"a","method":"x"}"#, "request x"),
            (br#"{"jsonrpc":"2.0","method":"y"}"#, "notification y"),
            (br#"{"jsonrpc":"2.0","id":3,"result":null}"#, "response 3"),
            (br#"{"jsonrpc":"2.0","id":1,"meth"#, "-32700"),
            (b"\xff\xfe{}", "-32700"),
            (b"42", "-32600"),
            (br#"[{"jsonrpc":"2.0","method":"y"}]"#, "-32600"),
            (br#"{"id":1,"method":"x"}"#, "-32600 1"),
            (br#"{"jsonrpc":"2.0","id":{},"method":"x"}"#, "-32600"),
            (br#"{"jsonrpc":"2.0","id":1,"method":7}"#, "-32600 1"),
            (
                br#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#,
                "-32600 1",
            ),
            (br#"{"jsonrpc":"2.0"}"#, "-32600"),
        ] {
            assert_eq!(kind(body), expected, "{}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn reads_frames_past_bad_ones() {
        let mut input = Vec::new();
        for body in [
            &b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}"[..],
            b"42",
            b"{\"jsonrpc\":\"2.0\",\"method\":\"b\"}",
        ] {
            input.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
            input.extend_from_slice(body);
        }
        input.extend_from_slice(b"X-Nothing: 1\r\n\r\n");
        input
            .extend_from_slice(b"Content-Length: 30\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"c\"}");
        input.extend_from_slice(b"Content-Length: 99\r\n\r\n{\"truncated");
        let mut seen = Vec::new();
        read_messages(&input[..], |m| {
            seen.push(match m {
                Incoming::Message(Message::Notification { method, .. }) => method,
                Incoming::Invalid { code, .. } => code.to_string(),
                other => format!("{other:?}"),
            });
            true
        });
        assert_eq!(seen, ["a", "-32600", "b", "-32700", "c"]);
    }
}
