//! Collective communication: what data-parallel training needs in a graph.
//!
//! mirdsl runs a program as one process, so every group has one member and a
//! collective is the identity on its input. The primitives are here so that a
//! training step written in the DSL carries them: `mirdsl export` writes them,
//! and MindSpore, launched on several workers (`msrun`, see the README's
//! "Scale out" section), runs them across the workers.

use crate::schema::{why, Override, Schema};
use crate::Traits;
use ir::{AbsVal, AttrValue};

use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef,
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

/// MindSpore's bprop of `AllReduce` (`grad_comm_ops.py`): the sensitivities
/// are always summed across the group (`AllReduce(sum)` in the same group,
/// whatever `op` is). For `sum` that is the gradient; for `prod` it is
/// `AllReduce(sum)(dout · out) / x`; for `max` and `min`, `AllReduce(sum)(dout)`
/// where `x` is the result and 0 elsewhere. (Reducing the sensitivities with
/// `op` itself, as for `sum`, is the same in one process but not across
/// workers.)
fn grad_all_reduce(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let group = c.attrs.str("group").to_string();
    let sum_over_group = |b: &mut dyn GradBuilder, g: GNode| {
        b.prim(
            "AllReduce",
            &[g],
            vec![
                ("op", AttrValue::Str("sum".into())),
                ("group", AttrValue::Str(group.clone())),
            ],
        )
    };
    let x = c.inputs[0];
    let dx = match c.attrs.str("op") {
        "prod" => {
            let dy = b.prim("Mul", &[c.dout, c.out], vec![]);
            let summed = sum_over_group(b, dy);
            b.prim("RealDiv", &[summed, x], vec![])
        }
        "max" | "min" => {
            let summed = sum_over_group(b, c.dout);
            let hit = b.prim("Equal", &[x, c.out], vec![]);
            let ones = b.prim("OnesLike", &[x], vec![]);
            let zeros = b.prim("ZerosLike", &[x], vec![]);
            let mask = b.prim("Select", &[hit, ones, zeros], vec![]);
            b.prim("Mul", &[summed, mask], vec![])
        }
        _ => sum_over_group(b, c.dout),
    };
    vec![Some(dx)]
}

pub const OPS: &[OpDef] = &[OpDef {
    name: "AllReduce",
    category: Category::Communication,
    doc: "Reduces `input_x` elementwise across the processes of `group` (`op`: sum, max, min or prod); every process gets the result. A mirdsl run is one process, so here it returns `input_x`; MindSpore launched on several workers (`msrun`) reduces across them. `group` is the world group of the backend the model will run on: `mccl_world_group` on CPU, `nccl_world_group` on GPU, `hccl_world_group` on Ascend.",
    schema: Schema::ms(
        &[
            Override::attr("op", AttrType::Str(&["sum", "max", "min", "prod"]), Some(AttrDefault::Str("sum")), why::STRINGS),
            Override::attr("group", AttrType::Str(&[]), Some(AttrDefault::Str("mccl_world_group")), "MindSpore's default is `GlobalComm.WORLD_COMM_GROUP`, an expression: the world group of the backend, the CPU's here"),
        ],
        &[
            ("input_x", "The tensor to reduce."),
            ("op", "The reduction."),
            ("group", "The communication group."),
            ("index", "MindSpore's fusion index (kept as given)."),
        ],
    ),
    variadic: false,
    output: OutputDef::Single,
    infer: infer_same,
    grad: Some(grad_all_reduce),
    kernel: Some(k_all_reduce),
    traits: Traits::NONE,
}];

/// (No `prod` sample: its gradient divides by `x`, and programs generated
/// from the samples may feed it zeros; the rule's form is checked below.)
pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let s = |v: &str| AttrValue::Str(v.to_string());
    vec![
        Sample::new("AllReduce", vec![random_f64(&[2, 3], 900, -1.0, 1.0)]),
        Sample::new("AllReduce", vec![random_f64(&[2, 3], 902, -1.0, 1.0)]).attr("op", s("max")),
        Sample::new("AllReduce", vec![random_f64(&[4], 903, -1.0, 1.0)]).attr("op", s("min")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Attrs;

    /// Writes what a gradient rule builds as nested calls (no shapes needed).
    #[derive(Default)]
    struct Text(Vec<String>);

    impl GradBuilder for Text {
        fn prim(
            &mut self,
            name: &str,
            inputs: &[GNode],
            attrs: Vec<(&'static str, AttrValue)>,
        ) -> GNode {
            let mut args: Vec<String> = inputs
                .iter()
                .map(|n| self.0[n.0 as usize].clone())
                .collect();
            args.extend(attrs.iter().map(|(k, v)| match v {
                AttrValue::Str(s) => format!("{k}={s}"),
                other => format!("{k}={other:?}"),
            }));
            self.0.push(format!("{name}({})", args.join(", ")));
            GNode(self.0.len() as u32 - 1)
        }
        fn scalar(&mut self, value: f64) -> GNode {
            self.0.push(value.to_string());
            GNode(self.0.len() as u32 - 1)
        }
        fn int(&mut self, value: i64) -> GNode {
            self.0.push(value.to_string());
            GNode(self.0.len() as u32 - 1)
        }
        fn tuple_get(&mut self, tuple: GNode, index: usize) -> GNode {
            self.0
                .push(format!("{}[{index}]", self.0[tuple.0 as usize]));
            GNode(self.0.len() as u32 - 1)
        }
        fn make_tuple(&mut self, items: &[GNode]) -> GNode {
            let items: Vec<&str> = items
                .iter()
                .map(|n| self.0[n.0 as usize].as_str())
                .collect();
            self.0.push(format!("({})", items.join(", ")));
            GNode(self.0.len() as u32 - 1)
        }
    }

    fn gradient(op: &str) -> String {
        let mut b = Text(vec!["x".into(), "out".into(), "dout".into()]);
        let attrs = Attrs::new(vec![
            ("op", AttrValue::Str(op.into())),
            ("group", AttrValue::Str("nccl_world_group".into())),
            ("index", AttrValue::Int(3)),
        ]);
        let call = GradCall {
            inputs: &[GNode(0)],
            out: GNode(1),
            dout: GNode(2),
            attrs: &attrs,
            input_values: &[AbsVal::Any],
        };
        let grads = grad_all_reduce(&mut b, &call);
        assert_eq!(grads.len(), 1);
        b.0[grads[0].expect("a gradient").0 as usize].clone()
    }

    /// As MindSpore's bprop: the sensitivities are summed across the same
    /// group whatever the forward reduction (a max or prod of gradients
    /// across workers would not be the gradient of anything).
    #[test]
    fn all_reduce_gradient_sums_the_sensitivities_across_the_group() {
        let sum = "AllReduce(dout, op=sum, group=nccl_world_group)";
        assert_eq!(gradient("sum"), sum);
        assert_eq!(
            gradient("prod"),
            "RealDiv(AllReduce(Mul(dout, out), op=sum, group=nccl_world_group), x)"
        );
        let masked = format!("Mul({sum}, Select(Equal(x, out), OnesLike(x), ZerosLike(x)))");
        assert_eq!(gradient("max"), masked);
        assert_eq!(gradient("min"), masked);
    }
}
