//! The semantics of the MindIR DSL: lowering to MindIR, name resolution, type
//! and shape inference, and the diagnostics of `mirdsl check`.

pub mod composite;
pub mod diagnostic;
pub mod effects;
pub mod infer;
pub mod limits;
pub mod link;
pub mod lower;
pub mod modules;

pub use diagnostic::{Code, Diagnostic, Fix, Related, Severity};
pub use lower::{Def, ItemIndex, LoweredGraph, SourceMap};
pub mod file;

pub use file::{analyze, FileAnalysis, FileSource};
