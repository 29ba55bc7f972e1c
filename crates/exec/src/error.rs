//! Run-time faults, with the source span of the node that failed.

use std::fmt;

use ir::TextRange;

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A primitive's shape or dtype rule rejected its inputs at run time.
    Shape,
    /// A value of the wrong kind (calling a non-function, indexing a non-tuple, ...).
    Type,
    /// An entry argument or an input file that cannot be used.
    Input,
    /// A weight that cannot be initialised (missing file, wrong shape or dtype).
    Weight,
    /// Graph calls nested deeper than the limit.
    Recursion,
    /// `--check-nan` found a NaN.
    NaN,
    /// Something the executor or autodiff cannot do (yet).
    Unsupported,
    /// More memory than the budget (`--max-memory`) allows, or than exists.
    Memory,
    /// A size or integer computation out of the range of 64-bit integers.
    Overflow,
    /// Stopped from outside (Ctrl-C, a cancelled request).
    Interrupted,
    /// Stopped at its deadline (`--timeout`).
    Timeout,
    /// A bug: a kernel panicked or the IR broke an invariant.
    Internal,
}

impl ErrorKind {
    /// A stable short name (JSON output, tests).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Shape => "shape",
            ErrorKind::Type => "type",
            ErrorKind::Input => "input",
            ErrorKind::Weight => "weight",
            ErrorKind::Recursion => "recursion",
            ErrorKind::NaN => "nan",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Memory => "memory",
            ErrorKind::Overflow => "overflow",
            ErrorKind::Interrupted => "interrupted",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Internal => "internal",
        }
    }
}

/// A call on the stack when a fault happened: the graph called and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceEntry {
    pub graph: String,
    pub call_site: Option<TextRange>,
}

/// A run-time fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunError {
    pub kind: ErrorKind,
    pub message: String,
    /// The node that failed (or, inside generated graphs, the nearest call site).
    pub span: Option<TextRange>,
    pub notes: Vec<String>,
    /// Calls in progress, innermost first.
    pub trace: Vec<TraceEntry>,
}

impl RunError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> RunError {
        RunError {
            kind,
            message: message.into(),
            span: None,
            notes: Vec::new(),
            trace: Vec::new(),
        }
    }

    pub fn internal(message: impl Into<String>) -> RunError {
        RunError::new(ErrorKind::Internal, message)
    }

    pub fn with_note(mut self, note: impl Into<String>) -> RunError {
        self.notes.push(note.into());
        self
    }

    /// Sets the span unless one is set already.
    pub fn at(mut self, span: Option<TextRange>) -> RunError {
        if self.span.is_none() {
            self.span = span;
        }
        self
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RunError {}
