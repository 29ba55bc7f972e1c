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
//! translate it the same way. Which MindSpore primitive is which registry
//! primitive is `ops::mindspore` (derived from MindSpore's own definitions);
//! [`ms_ops`] holds MindSpore's encodings of dtypes.

pub mod export;
pub mod export_dims;
mod export_grad;
mod export_lower;
pub mod ir_text;
pub mod mindir;
pub mod model;
pub mod ms_ops;

pub mod proto {
    //! `mind_ir.proto`, compiled by `build.rs` (prost + protox).
    #![allow(clippy::all, missing_docs)]
    include!(concat!(env!("OUT_DIR"), "/mind_ir.rs"));
}

pub use export_lower::lower as lower_gradient_helpers;
pub use model::{Imported, WeightOptions};

/// Why a file could not be imported.
#[derive(Debug, Clone, PartialEq)]
pub enum ImportError {
    /// Not a file of the expected format.
    Malformed(String),
    /// Primitives that are not MindSpore 2.10's and that the registry does
    /// not know, sorted.
    UnknownOps(Vec<String>),
    /// MindSpore 2.10 primitives the registry does not support yet, each with
    /// the nodes that use it (sorted by primitive); and unknown primitives
    /// besides, if any.
    UnsupportedOps {
        ops: Vec<(String, Vec<String>)>,
        unknown: Vec<String>,
    },
    /// Constructs the DSL cannot express (each named).
    Unsupported(String),
}

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImportError::Malformed(m) => write!(f, "malformed file: {m}"),
            ImportError::UnknownOps(ops) => write!(
                f,
                "unknown primitive{} (neither MindSpore {}'s nor the registry's): {}",
                if ops.len() == 1 { "" } else { "s" },
                ops::mindspore::SERIES,
                ops.join(", ")
            ),
            ImportError::UnsupportedOps { ops, unknown } => {
                let mut lines = Vec::new();
                for (op, nodes) in ops {
                    let more = match nodes.len() {
                        0 | 1 => String::new(),
                        2 => ", and 1 more".to_string(),
                        n => format!(", and {} more", n - 1),
                    };
                    let node = nodes.first().map_or("?", String::as_str);
                    lines.push(format!(
                        "`{op}` (node {node}{more}) is a MindSpore {} primitive mirdsl does not \
                         support yet",
                        ops::mindspore::SERIES
                    ));
                }
                if !unknown.is_empty() {
                    lines.push(format!(
                        "unknown primitive{}: {}",
                        if unknown.len() == 1 { "" } else { "s" },
                        unknown.join(", ")
                    ));
                }
                f.write_str(&lines.join("\n"))
            }
            ImportError::Unsupported(m) => write!(f, "cannot be expressed in the DSL:\n{m}"),
        }
    }
}

impl std::error::Error for ImportError {}
