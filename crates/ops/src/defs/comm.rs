//! Collective communication: what data-parallel training needs in a graph.
//!
//! mirdsl runs a program as one process, so every group has one member and a
//! collective is the identity on its input. The primitives are here so that a
//! training step written in the DSL carries them: `mirdsl export` writes them,
//! and MindSpore, launched on several workers (`msrun`, see the README's
//! "Scale out" section), runs them across the workers.

use ir::AbsVal;

use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef,
    ParamDef,
};

fn infer_same(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    match &call.inputs[0] {
        t @ AbsVal::Tensor { .. } => Ok(t.clone()),
        other => Err(OpError::input(
            0,
            format!("`AllReduce` reduces tensors, not {other}"),
        )),
    }
}

fn k_all_reduce(c: &KernelCall) -> Result<KValue, OpError> {
    // One process: the reduction over a group of one is the input itself.
    Ok(KValue::Tensor(c.tensor(0)?.clone()))
}

fn grad_all_reduce(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    // MindSpore's bprop of a sum: the sensitivities summed the same way.
    let attrs = c.attrs.iter().map(|(k, v)| (*k, v.clone())).collect();
    vec![Some(b.prim("AllReduce", &[c.dout], attrs))]
}

pub const OPS: &[OpDef] = &[OpDef {
    name: "AllReduce",
    category: Category::Communication,
    doc: "Reduces `input_x` elementwise across the processes of `group` (`op`: sum, max, min or prod); every process gets the result. A mirdsl run is one process, so here it returns `input_x`; MindSpore launched on several workers (`msrun`) reduces across them. `group` is the world group of the backend the model will run on: `mccl_world_group` on CPU, `nccl_world_group` on GPU, `hccl_world_group` on Ascend.",
    params: &[
        ParamDef::input("input_x", "The tensor to reduce."),
        ParamDef::attr(
            "op",
            AttrType::Str(&["sum", "max", "min", "prod"]),
            Some(AttrDefault::Str("sum")),
            "The reduction.",
        ),
        ParamDef::attr(
            "group",
            AttrType::Str(&[]),
            Some(AttrDefault::Str("mccl_world_group")),
            "The communication group.",
        ),
        ParamDef::attr(
            "index",
            AttrType::Int,
            Some(AttrDefault::Int(0)),
            "MindSpore's fusion index (kept as given).",
        ),
    ],
    variadic: false,
    output: OutputDef::Single,
    infer: infer_same,
    grad: Some(grad_all_reduce),
    kernel: Some(k_all_reduce),
}];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    vec![Sample::new(
        "AllReduce",
        vec![random_f64(&[2, 3], 900, -1.0, 1.0)],
    )]
}
