//! MindIR's data model for the DSL: FuncGraphs of ANF nodes (CNodes, Parameters,
//! ValueNodes), types and abstract values, and printers to DSL text.

pub mod abs;
pub mod batching;
pub mod graph;
pub mod print;
pub mod print_dot;
pub mod print_ms;
pub mod ty;
pub mod value;

pub use abs::AbsVal;
pub use graph::{
    Body, FuncGraph, GraphId, GraphOrigin, Node, NodeId, NodeKind, Program, WeightDef, WeightInit,
};
pub use text_size::{TextRange, TextSize};
pub use ty::{DType, Dim, FnTy, Shape, Ty};
pub use value::{AttrValue, BatchAxes, MetaFn, PrimRef, ScalarConst, Value, WrtItem};
