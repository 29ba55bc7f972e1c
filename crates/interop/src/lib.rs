//! MindSpore's file formats for the MindIR DSL.
//!
//! - [`mindir`]: `.mindir` model files (protobuf `mind_ir.ModelProto`, schema in
//!   `proto/mind_ir.proto`): [`mindir::import`] turns one into DSL text whose
//!   entry graph is `main` (weights go to a `.safetensors` file), and
//!   [`mindir::export`] writes a DSL program as a model MindSpore 2.10 loads
//!   and runs (`mindspore.load` + `nn.GraphCell`).
//! - [`ir_text`]: the text dumps MindSpore writes with `save_graphs`
//!   (`*.ir`), read into DSL text.
//!
//! Both importers read into one model of a MindSpore graph ([`model`]) and
//! translate it the same way; [`ms_ops`] says how MindSpore spells each
//! primitive of the registry.

pub mod export;
pub mod ir_text;
pub mod mindir;
pub mod model;
pub mod ms_ops;

pub mod proto {
    //! `mind_ir.proto`, compiled by `build.rs` (prost + protox).
    #![allow(clippy::all, missing_docs)]
    include!(concat!(env!("OUT_DIR"), "/mind_ir.rs"));
}

pub use model::{Imported, WeightOptions};

/// Why a file could not be imported.
#[derive(Debug, Clone, PartialEq)]
pub enum ImportError {
    /// Not a file of the expected format.
    Malformed(String),
    /// Primitives neither the registry nor the name table knows, sorted.
    UnknownOps(Vec<String>),
    /// Constructs the DSL cannot express (each named).
    Unsupported(String),
}

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImportError::Malformed(m) => write!(f, "malformed file: {m}"),
            ImportError::UnknownOps(ops) => write!(
                f,
                "unknown primitive{} (not in the registry nor in ops::mindspore_names): {}",
                if ops.len() == 1 { "" } else { "s" },
                ops.join(", ")
            ),
            ImportError::Unsupported(m) => write!(f, "cannot be expressed in the DSL:\n{m}"),
        }
    }
}

impl std::error::Error for ImportError {}
