//! The interface gradient rules build on. A rule is MindSpore's `bprop`: given
//! the forward inputs, the output and the output's sensitivity `dout`, it builds
//! the sensitivities of the inputs out of primitives. The autodiff pass provides
//! a builder that emits IR; tests provide one that evaluates eagerly.

use ir::{AbsVal, AttrValue};

use crate::Attrs;

/// A value in the gradient being built (an IR node, or an eager value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GNode(pub u32);

pub trait GradBuilder {
    /// A call of primitive `name` (attributes not given take their defaults).
    fn prim(
        &mut self,
        name: &str,
        inputs: &[GNode],
        attrs: Vec<(&'static str, AttrValue)>,
    ) -> GNode;
    /// A weak `f32` scalar literal (it takes the dtype of the tensors it meets).
    fn scalar(&mut self, value: f64) -> GNode;
    /// An `i64` scalar literal.
    fn int(&mut self, value: i64) -> GNode;
    fn tuple_get(&mut self, tuple: GNode, index: usize) -> GNode;
    fn make_tuple(&mut self, items: &[GNode]) -> GNode;
}

/// What a gradient rule sees of the forward call.
pub struct GradCall<'a> {
    pub inputs: &'a [GNode],
    pub out: GNode,
    pub dout: GNode,
    pub attrs: &'a Attrs,
    /// What inference knew of each input (dtypes, static shapes when known).
    pub input_values: &'a [AbsVal],
}

/// One entry per input: its sensitivity, or `None` for no gradient (zeros).
pub type GradFn = fn(&mut dyn GradBuilder, &GradCall) -> Vec<Option<GNode>>;
