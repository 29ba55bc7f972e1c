//! `Opaque`: a node of a MindSpore graph that mirdsl cannot compute, kept as
//! it is. `mirdsl import` of a compile dump (`.ir`) writes one for each node
//! whose primitive the registry does not implement (MindSpore's internal
//! `EnvironGet`, `DoUnpackCall`, a backend kernel's fused primitive...), so that
//! the dump imports whole and checks, navigates and draws:
//!
//! ```text
//! %5: f32[8, 3, 3, 3] = Opaque(%4, key, name="EnvironGet")
//! ```
//!
//! Its value is unknown to inference; the binding's annotation (the type
//! MindSpore dumped for the node) stands for it. It has no kernel: running a
//! graph that reaches one stops there, with an error at that node (whose
//! `name` says which MindSpore primitive it is).

use crate::schema::Schema;
use crate::Traits;
use ir::AbsVal;

use crate::infer::InferCall;
use crate::{AttrType, Category, OpDef, OpError, OutputDef, ParamDef};

fn infer_opaque(_: &InferCall) -> Result<AbsVal, OpError> {
    // Unknown: the binding's annotation (MindSpore's dumped type) stands for it.
    Ok(AbsVal::Any)
}

pub const OPS: &[OpDef] = &[OpDef {
    name: "Opaque",
    category: Category::Structure,
    doc: "A MindSpore node that mirdsl cannot compute, kept from an imported graph: `Opaque(inputs..., name=\"EnvironGet\")` stands for MindSpore's primitive `name` applied to the inputs. Its type is the binding's annotation (what MindSpore dumped); inference knows nothing more. It has no kernel and no gradient: running it is an error at its node.",
    schema: Schema::own(&[ParamDef::attr(
        "name",
        AttrType::Str(&[]),
        None,
        "MindSpore's name of the primitive.",
    )]),
    variadic: true,
    output: OutputDef::Single,
    infer: infer_opaque,
    grad: None,
    // No kernel: the executor stops at it, at its node, naming MindSpore's primitive
    // ("no kernel for MindSpore primitive `TensorMove` (imported as Opaque)").
    kernel: None,
    traits: Traits::NONE,
}];
