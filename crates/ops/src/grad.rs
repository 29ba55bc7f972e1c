//! The interface gradient rules build on. A rule is MindSpore's `bprop`: given
//! the forward inputs, the output and the output's sensitivity `dout`, it builds
//! the sensitivities of the inputs out of primitives. The autodiff pass provides
//! a builder that emits IR; tests provide one that evaluates eagerly.

use ir::{AbsVal, AttrValue};

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

// ---------------------------------------------------------------------------
// Gradient rules derived from a decomposition.

use crate::Attrs;

/// What a decomposition sees of a call: its inputs (in the builder it is
/// given), attributes and what is known of the inputs.
pub struct DecompCall<'a> {
    pub inputs: &'a [GNode],
    pub attrs: &'a Attrs,
    pub input_values: &'a [AbsVal],
}

/// A primitive's value written with other (differentiable) primitives.
pub type DecompFn = fn(&mut dyn GradBuilder, &DecompCall) -> GNode;

#[derive(Debug, Clone)]
enum Step {
    Input(usize),
    Prim {
        name: String,
        inputs: Vec<usize>,
        attrs: Vec<(&'static str, AttrValue)>,
    },
    Scalar(f64),
    Int(i64),
    TupleGet(usize, usize),
    MakeTuple(Vec<usize>),
}

/// Records a decomposition, with what the registry's shape rules say of
/// every value it makes.
struct Tape {
    steps: Vec<Step>,
    values: Vec<AbsVal>,
}

impl Tape {
    fn push(&mut self, step: Step, value: AbsVal) -> GNode {
        self.steps.push(step);
        self.values.push(value);
        GNode(self.steps.len() as u32 - 1)
    }
}

fn resolved(op: &crate::OpDef, attrs: &[(&'static str, AttrValue)]) -> Attrs {
    let given: Vec<(String, AttrValue)> = attrs
        .iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                crate::check_attr(op, k, v).unwrap_or_else(|_| v.clone()),
            )
        })
        .collect();
    crate::resolve_attrs(op, &given)
}

impl GradBuilder for Tape {
    fn prim(
        &mut self,
        name: &str,
        inputs: &[GNode],
        attrs: Vec<(&'static str, AttrValue)>,
    ) -> GNode {
        let value = match crate::lookup(name) {
            Some(op) => {
                let ins: Vec<AbsVal> = inputs
                    .iter()
                    .map(|n| self.values[n.0 as usize].clone())
                    .collect();
                let a = resolved(op, &attrs);
                (op.infer)(&crate::InferCall {
                    op,
                    inputs: &ins,
                    attrs: &a,
                })
                .unwrap_or(AbsVal::Any)
            }
            None => AbsVal::Any,
        };
        let step = Step::Prim {
            name: name.to_string(),
            inputs: inputs.iter().map(|n| n.0 as usize).collect(),
            attrs,
        };
        self.push(step, value)
    }

    fn scalar(&mut self, value: f64) -> GNode {
        let v = AbsVal::constant(ir::ScalarConst::Float(value), ir::DType::F32, true);
        self.push(Step::Scalar(value), v)
    }

    fn int(&mut self, value: i64) -> GNode {
        let v = AbsVal::constant(ir::ScalarConst::Int(value), ir::DType::I64, true);
        self.push(Step::Int(value), v)
    }

    fn tuple_get(&mut self, tuple: GNode, index: usize) -> GNode {
        let v = match &self.values[tuple.0 as usize] {
            AbsVal::Tuple(items) => items.get(index).cloned().unwrap_or(AbsVal::Any),
            _ => AbsVal::Any,
        };
        self.push(Step::TupleGet(tuple.0 as usize, index), v)
    }

    fn make_tuple(&mut self, items: &[GNode]) -> GNode {
        let v = AbsVal::Tuple(
            items
                .iter()
                .map(|n| self.values[n.0 as usize].clone())
                .collect(),
        );
        self.push(
            Step::MakeTuple(items.iter().map(|n| n.0 as usize).collect()),
            v,
        )
    }
}

/// A sensitivity while the decomposition is walked backwards.
#[derive(Debug, Clone)]
enum Sens {
    Zero,
    Node(GNode),
    Tuple(Vec<Sens>),
}

fn add(b: &mut dyn GradBuilder, x: Sens, y: Sens) -> Sens {
    match (x, y) {
        (Sens::Zero, s) | (s, Sens::Zero) => s,
        (Sens::Node(p), Sens::Node(q)) => Sens::Node(b.prim("Add", &[p, q], vec![])),
        (Sens::Tuple(ps), Sens::Tuple(qs)) => {
            Sens::Tuple(ps.into_iter().zip(qs).map(|(p, q)| add(b, p, q)).collect())
        }
        (Sens::Node(p), Sens::Tuple(qs)) | (Sens::Tuple(qs), Sens::Node(p)) => {
            let ps = (0..qs.len())
                .map(|i| Sens::Node(b.tuple_get(p, i)))
                .collect();
            add(b, Sens::Tuple(ps), Sens::Tuple(qs))
        }
    }
}

/// A sensitivity as one node, zeros (like the forward value `fwd`, of
/// abstract value `v`) where it has none.
fn materialize(b: &mut dyn GradBuilder, s: Sens, fwd: GNode, v: &AbsVal) -> GNode {
    match s {
        Sens::Node(n) => n,
        Sens::Zero => match v {
            AbsVal::Tuple(items) => {
                let parts: Vec<GNode> = (0..items.len())
                    .map(|i| {
                        let f = b.tuple_get(fwd, i);
                        materialize(b, Sens::Zero, f, &items[i])
                    })
                    .collect();
                b.make_tuple(&parts)
            }
            _ => b.prim("ZerosLike", &[fwd], vec![]),
        },
        Sens::Tuple(items) => {
            let n = items.len();
            let parts: Vec<GNode> = items
                .into_iter()
                .enumerate()
                .map(|(i, s)| {
                    let f = b.tuple_get(fwd, i);
                    let vi = match v {
                        AbsVal::Tuple(vs) if vs.len() == n => vs[i].clone(),
                        _ => AbsVal::Any,
                    };
                    materialize(b, s, f, &vi)
                })
                .collect();
            b.make_tuple(&parts)
        }
    }
}

/// The gradient rule of a primitive whose value `decompose` writes with
/// other primitives: the decomposition is recomputed in `b` and walked
/// backwards through those primitives' own gradient rules (reverse mode on
/// a small tape). A rule written this way is as differentiable as the
/// primitives it uses, so it serves higher-order differentiation.
pub fn grad_by_decomposition(
    b: &mut dyn GradBuilder,
    c: &GradCall,
    decompose: DecompFn,
) -> Vec<Option<GNode>> {
    let n = c.inputs.len();
    let mut tape = Tape {
        steps: Vec::new(),
        values: Vec::new(),
    };
    let ins: Vec<GNode> = (0..n)
        .map(|i| {
            let v = c.input_values.get(i).cloned().unwrap_or(AbsVal::Any);
            tape.push(Step::Input(i), v)
        })
        .collect();
    let out = decompose(
        &mut tape,
        &DecompCall {
            inputs: &ins,
            attrs: c.attrs,
            input_values: c.input_values,
        },
    );
    // Forward: the decomposition in the real builder.
    let mut fwd: Vec<GNode> = Vec::with_capacity(tape.steps.len());
    for step in &tape.steps {
        let node = match step {
            Step::Input(i) => c.inputs[*i],
            Step::Prim {
                name,
                inputs,
                attrs,
            } => {
                let args: Vec<GNode> = inputs.iter().map(|&i| fwd[i]).collect();
                b.prim(name, &args, attrs.clone())
            }
            Step::Scalar(x) => b.scalar(*x),
            Step::Int(i) => b.int(*i),
            Step::TupleGet(t, i) => b.tuple_get(fwd[*t], *i),
            Step::MakeTuple(items) => {
                let args: Vec<GNode> = items.iter().map(|&i| fwd[i]).collect();
                b.make_tuple(&args)
            }
        };
        fwd.push(node);
    }
    // Backward.
    let mut sens: Vec<Sens> = vec![Sens::Zero; tape.steps.len()];
    sens[out.0 as usize] = Sens::Node(c.dout);
    for k in (0..tape.steps.len()).rev() {
        let s = std::mem::replace(&mut sens[k], Sens::Zero);
        if matches!(s, Sens::Zero) {
            continue;
        }
        match &tape.steps[k] {
            Step::Input(_) => sens[k] = s,
            Step::Scalar(_) | Step::Int(_) => {}
            Step::TupleGet(t, i) => {
                let len = match &tape.values[*t] {
                    AbsVal::Tuple(items) => items.len(),
                    _ => i + 1,
                };
                let mut items = vec![Sens::Zero; len];
                items[*i] = s;
                let old = std::mem::replace(&mut sens[*t], Sens::Zero);
                sens[*t] = add(b, old, Sens::Tuple(items));
            }
            Step::MakeTuple(items) => {
                for (j, &m) in items.iter().enumerate() {
                    let part = match &s {
                        Sens::Tuple(ss) => ss.get(j).cloned().unwrap_or(Sens::Zero),
                        Sens::Node(node) => Sens::Node(b.tuple_get(*node, j)),
                        Sens::Zero => Sens::Zero,
                    };
                    let old = std::mem::replace(&mut sens[m], Sens::Zero);
                    sens[m] = add(b, old, part);
                }
            }
            Step::Prim {
                name,
                inputs,
                attrs,
            } => {
                let Some(op) = crate::lookup(name) else {
                    continue;
                };
                let Some(rule) = op.grad else { continue };
                let dout = materialize(b, s, fwd[k], &tape.values[k]);
                let args: Vec<GNode> = inputs.iter().map(|&i| fwd[i]).collect();
                let values: Vec<AbsVal> = inputs.iter().map(|&i| tape.values[i].clone()).collect();
                let a = resolved(op, attrs);
                let grads = rule(
                    b,
                    &GradCall {
                        inputs: &args,
                        out: fwd[k],
                        dout,
                        attrs: &a,
                        input_values: &values,
                    },
                );
                for (j, g) in grads.into_iter().enumerate() {
                    if let (Some(g), Some(&m)) = (g, inputs.get(j)) {
                        let old = std::mem::replace(&mut sens[m], Sens::Zero);
                        sens[m] = add(b, old, Sens::Node(g));
                    }
                }
            }
        }
    }
    (0..n)
        .map(|i| match std::mem::replace(&mut sens[i], Sens::Zero) {
            Sens::Zero => None,
            s => Some(materialize(b, s, c.inputs[i], &tape.values[i])),
        })
        .collect()
}
