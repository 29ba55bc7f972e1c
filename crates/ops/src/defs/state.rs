//! State: MindIR's side-effect primitives (spec §11, `docs/language.md` §12).
//!
//! Weights (`param`s) are mutable state. `Load` reads a weight at a point of the
//! effect order, `UpdateState` advances the order's token (the `U` monad), and
//! the primitives of [`EFFECTS`] write weights: `Assign` and friends and the
//! optimizers. In MindIR every such call takes the current `U` as an extra last
//! input; the schemas here leave it out, as MindSpore's signatures do, and the
//! analyser, executor and exporter add or strip it.
//!
//! A writing primitive's kernel is pure: it receives the current values of all
//! inputs and returns `(output, new value of each written input...)` as a tuple;
//! the executor stores the new values into the weights. Its shape rule gives the
//! output alone. Outputs are MindSpore's: the updated variable (a tuple
//! `(var, m, v)` for `Adam`).
//!
//! Numerics follow MindSpore's CPU kernels (`apply_momentum_cpu_kernel.cc`,
//! `sgd_cpu_kernel.cc`, `adam_cpu_kernel.cc`...), computed in f64 and stored in
//! the variable's dtype.

use crate::schema::{why, Override, Schema};
use crate::Family;
use crate::Optimizer;
use crate::Traits;
use ir::{AbsVal, DType};
use tensor::Tensor;

use crate::infer::{broadcast_shapes, InferCall};
use crate::kernel::{KValue, KernelCall};
use crate::{Category, OpDef, OpError, OutputDef};

/// What a side-effecting primitive writes: the positions of the inputs (each
/// must be a weight) whose new values its kernel returns after its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effect {
    pub name: &'static str,
    pub writes: &'static [usize],
}

/// Every primitive that writes weights.
pub const EFFECTS: &[Effect] = &[
    Effect {
        name: "Assign",
        writes: &[0],
    },
    Effect {
        name: "AssignAdd",
        writes: &[0],
    },
    Effect {
        name: "AssignSub",
        writes: &[0],
    },
    Effect {
        name: "ApplyMomentum",
        writes: &[0, 1],
    },
    Effect {
        name: "SGD",
        writes: &[0, 3, 5],
    },
    Effect {
        name: "Adam",
        writes: &[0, 1, 2],
    },
    Effect {
        name: "AdamWeightDecay",
        writes: &[0, 1, 2],
    },
    Effect {
        name: "ApplyGradientDescent",
        writes: &[0],
    },
    Effect {
        name: "ApplyAdagrad",
        writes: &[0, 1],
    },
    Effect {
        name: "ApplyRMSProp",
        writes: &[0, 1, 2],
    },
];

/// The effect of primitive `name`, if it writes weights.
pub fn effect_of(name: &str) -> Option<&'static Effect> {
    EFFECTS.iter().find(|e| e.name == name)
}

/// Whether a call of `name` takes part in the effect order (in MindIR: takes a
/// `U` input): the writing primitives and `Load`.
pub fn is_ordered(name: &str) -> bool {
    name == "Load" || effect_of(name).is_some()
}

// ---------------------------------------------------------------------------
// Shape rules.

fn tensor_input(call: &InferCall, i: usize) -> Result<(DType, ir::Shape), OpError> {
    match &call.inputs[i] {
        AbsVal::Tensor { dtype, shape } => Ok((*dtype, shape.clone())),
        other => Err(OpError::input(
            i,
            format!(
                "`{}` of `{}` must be a tensor weight, not {other}",
                call.input_name(i),
                call.op.name
            ),
        )),
    }
}

/// The variable's type, after checking that `others` broadcast to it and that
/// every input is numeric.
fn infer_update(call: &InferCall, others: &[usize]) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, shape) = tensor_input(call, 0)?;
    if !dtype.is_float() && !matches!(call.op.name, "Assign" | "AssignAdd" | "AssignSub") {
        return Err(OpError::input(
            0,
            format!(
                "`{}` updates float weights; `{}` is {dtype}",
                call.op.name,
                call.input_name(0)
            ),
        ));
    }
    for &i in others {
        let s = call.inputs[i].shape().ok_or_else(|| {
            OpError::input(
                i,
                format!(
                    "`{}` of `{}` must be a tensor or a number, not {}",
                    call.input_name(i),
                    call.op.name,
                    call.inputs[i]
                ),
            )
        })?;
        let joined = broadcast_shapes(&shape, &s).map_err(|m| OpError::input(i, m))?;
        if joined != shape && s.rank().is_some() && shape.rank().is_some() {
            return Err(OpError::input(
                i,
                format!(
                    "`{}` of `{}` has shape {s}, which does not fit the variable's {shape}",
                    call.input_name(i),
                    call.op.name
                ),
            ));
        }
    }
    Ok(AbsVal::Tensor { dtype, shape })
}

fn infer_assign(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_update(call, &[1])
}

fn infer_load(call: &InferCall) -> Result<AbsVal, OpError> {
    Ok(call.inputs[0].clone())
}

fn infer_update_state(_: &InferCall) -> Result<AbsVal, OpError> {
    Ok(AbsVal::Monad)
}

fn infer_apply_momentum(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_update(call, &[1, 2, 3, 4])
}

fn infer_sgd(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_update(call, &[1, 2, 3, 4, 5])
}

fn infer_adam(call: &InferCall) -> Result<AbsVal, OpError> {
    let var = infer_update(call, &[1, 2, 3, 4, 5, 6, 7, 8, 9])?;
    Ok(AbsVal::Tuple(vec![var.clone(), var.clone(), var]))
}

fn infer_adam_weight_decay(call: &InferCall) -> Result<AbsVal, OpError> {
    let var = infer_update(call, &[1, 2, 3, 4, 5, 6, 7, 8])?;
    Ok(AbsVal::Tuple(vec![var.clone(), var.clone(), var]))
}

fn infer_gradient_descent(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_update(call, &[1, 2])
}

fn infer_adagrad(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_update(call, &[1, 2, 3])
}

fn infer_rms_prop(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_update(call, &[1, 2, 3, 4, 5, 6, 7])
}

// ---------------------------------------------------------------------------
// Kernels. Each works on f64 copies broadcast to the variable's shape.

/// Input `i` as f64 values broadcast to `n` elements (a scalar repeats).
fn values(c: &KernelCall, i: usize, n: usize) -> Result<Vec<f64>, OpError> {
    let t = c.tensor(i)?;
    let v = t.to_f64_vec();
    if v.len() == n {
        Ok(v)
    } else if v.len() == 1 {
        Ok(vec![v[0]; n])
    } else {
        Err(OpError::input(
            i,
            format!("input {i} has {} elements where {n} are needed", v.len()),
        ))
    }
}

/// A scalar input's value (its first element).
fn scalar(c: &KernelCall, i: usize) -> Result<f64, OpError> {
    c.tensor(i)?
        .to_f64_vec()
        .first()
        .copied()
        .ok_or_else(|| OpError::input(i, format!("input {i} is empty")))
}

fn like(var: &Tensor, data: Vec<f64>) -> Result<KValue, OpError> {
    let t = Tensor::from_f64(var.shape().to_vec(), data).map_err(|e| OpError::call(e.0))?;
    Ok(KValue::Tensor(t.cast(var.dtype())))
}

/// `(output, writes...)` where the output is the first written value.
fn updated(var: &Tensor, writes: Vec<Vec<f64>>, like_of: &[&Tensor]) -> Result<KValue, OpError> {
    let mut out = Vec::with_capacity(writes.len() + 1);
    for (data, t) in writes.into_iter().zip(like_of) {
        out.push(like(t, data)?);
    }
    let first = match out.first() {
        Some(v) => v.clone(),
        None => KValue::Tensor(var.clone()),
    };
    out.insert(0, first);
    Ok(KValue::Tuple(out))
}

fn k_assign(c: &KernelCall) -> Result<KValue, OpError> {
    let var = c.tensor(0)?;
    let value = values(c, 1, var.numel())?;
    updated(var, vec![value], &[var])
}

fn k_assign_add(c: &KernelCall) -> Result<KValue, OpError> {
    let var = c.tensor(0)?;
    let n = var.numel();
    let (w, v) = (values(c, 0, n)?, values(c, 1, n)?);
    let new = w.iter().zip(&v).map(|(a, b)| a + b).collect();
    updated(var, vec![new], &[var])
}

fn k_assign_sub(c: &KernelCall) -> Result<KValue, OpError> {
    let var = c.tensor(0)?;
    let n = var.numel();
    let (w, v) = (values(c, 0, n)?, values(c, 1, n)?);
    let new = w.iter().zip(&v).map(|(a, b)| a - b).collect();
    updated(var, vec![new], &[var])
}

fn k_apply_momentum(c: &KernelCall) -> Result<KValue, OpError> {
    // accum = accum·momentum + grad·scale; var -= lr·accum (Nesterov:
    // var -= lr·grad + lr·momentum·accum).
    let (var, acc) = (c.tensor(0)?, c.tensor(1)?);
    let n = var.numel();
    let (mut w, mut a) = (values(c, 0, n)?, values(c, 1, n)?);
    let lr = scalar(c, 2)?;
    let g = values(c, 3, n)?;
    let momentum = scalar(c, 4)?;
    let nesterov = c.attrs.bool("use_nesterov");
    let scale = c.attrs.f64("gradient_scale");
    for i in 0..n {
        let grad = g[i] * scale;
        a[i] = a[i] * momentum + grad;
        if nesterov {
            w[i] -= grad * lr + a[i] * momentum * lr;
        } else {
            w[i] -= lr * a[i];
        }
    }
    updated(var, vec![w, a], &[var, acc])
}

fn k_sgd(c: &KernelCall) -> Result<KValue, OpError> {
    // MindSpore's SGD (as PyTorch's): weight decay, then momentum with
    // dampening; `stat` > 0 marks the first step, where accum starts at grad.
    let (var, acc, stat_t) = (c.tensor(0)?, c.tensor(3)?, c.tensor(5)?);
    let n = var.numel();
    let mut w = values(c, 0, n)?;
    let g = values(c, 1, n)?;
    let lr = scalar(c, 2)?;
    let mut a = values(c, 3, n)?;
    let momentum = scalar(c, 4)?;
    let mut stat = values(c, 5, n)?;
    let dampening = c.attrs.f64("dampening");
    let weight_decay = c.attrs.f64("weight_decay");
    let nesterov = c.attrs.bool("nesterov");
    for i in 0..n {
        let mut grad = g[i];
        if weight_decay != 0.0 {
            grad += w[i] * weight_decay;
        }
        if momentum != 0.0 {
            if stat[i] > 0.0 {
                a[i] = grad;
                stat[i] = 0.0;
            } else {
                a[i] = a[i] * momentum + (1.0 - dampening) * grad;
            }
            grad = if nesterov {
                grad + momentum * a[i]
            } else {
                a[i]
            };
        }
        w[i] -= lr * grad;
    }
    updated(var, vec![w, a, stat], &[var, acc, stat_t])
}

fn k_adam(c: &KernelCall) -> Result<KValue, OpError> {
    let (var, mt, vt) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let n = var.numel();
    let (mut w, mut m, mut v) = (values(c, 0, n)?, values(c, 1, n)?, values(c, 2, n)?);
    let (b1p, b2p, lr) = (scalar(c, 3)?, scalar(c, 4)?, scalar(c, 5)?);
    let (b1, b2, eps) = (scalar(c, 6)?, scalar(c, 7)?, scalar(c, 8)?);
    let g = values(c, 9, n)?;
    let nesterov = c.attrs.bool("use_nesterov");
    let lr_t = lr * (1.0 - b2p).sqrt() / (1.0 - b1p);
    for i in 0..n {
        m[i] += (g[i] - m[i]) * (1.0 - b1);
        v[i] += (g[i] * g[i] - v[i]) * (1.0 - b2);
        let num = if nesterov {
            m[i] * b1 + (1.0 - b1) * g[i]
        } else {
            m[i]
        };
        w[i] -= lr_t * num / (v[i].sqrt() + eps);
    }
    let out = updated(var, vec![w, m, v], &[var, mt, vt])?;
    // Adam's output is the tuple of all three.
    let KValue::Tuple(mut items) = out else {
        unreachable!("updated returns a tuple")
    };
    items[0] = KValue::Tuple(items[1..].to_vec());
    Ok(KValue::Tuple(items))
}

fn k_adam_weight_decay(c: &KernelCall) -> Result<KValue, OpError> {
    // m, v as Adam without bias correction; var -= lr·(m/(√v + ε) + decay·var).
    let (var, mt, vt) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let n = var.numel();
    let (mut w, mut m, mut v) = (values(c, 0, n)?, values(c, 1, n)?, values(c, 2, n)?);
    let (lr, b1, b2, eps, decay) = (
        scalar(c, 3)?,
        scalar(c, 4)?,
        scalar(c, 5)?,
        scalar(c, 6)?,
        scalar(c, 7)?,
    );
    let g = values(c, 8, n)?;
    for i in 0..n {
        m[i] = b1 * m[i] + (1.0 - b1) * g[i];
        v[i] = b2 * v[i] + (1.0 - b2) * g[i] * g[i];
        let update = m[i] / (v[i].sqrt() + eps) + decay * w[i];
        w[i] -= lr * update;
    }
    let out = updated(var, vec![w, m, v], &[var, mt, vt])?;
    let KValue::Tuple(mut items) = out else {
        unreachable!("updated returns a tuple")
    };
    items[0] = KValue::Tuple(items[1..].to_vec());
    Ok(KValue::Tuple(items))
}

fn k_gradient_descent(c: &KernelCall) -> Result<KValue, OpError> {
    let var = c.tensor(0)?;
    let n = var.numel();
    let mut w = values(c, 0, n)?;
    let alpha = scalar(c, 1)?;
    let delta = values(c, 2, n)?;
    for i in 0..n {
        w[i] -= alpha * delta[i];
    }
    updated(var, vec![w], &[var])
}

fn k_adagrad(c: &KernelCall) -> Result<KValue, OpError> {
    // accum += grad² (when update_slots); var -= lr·grad/√accum.
    let (var, acc) = (c.tensor(0)?, c.tensor(1)?);
    let n = var.numel();
    let (mut w, mut a) = (values(c, 0, n)?, values(c, 1, n)?);
    let lr = scalar(c, 2)?;
    let g = values(c, 3, n)?;
    let update_slots = c.attrs.bool("update_slots");
    for i in 0..n {
        if update_slots {
            a[i] += g[i] * g[i];
        }
        w[i] -= lr * g[i] / a[i].sqrt();
    }
    updated(var, vec![w, a], &[var, acc])
}

fn k_rms_prop(c: &KernelCall) -> Result<KValue, OpError> {
    // ms = decay·ms + (1 - decay)·grad²; mom = momentum·mom + lr·grad/√(ms + ε);
    // var -= mom.
    let (var, ms_t, mom_t) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let n = var.numel();
    let (mut w, mut ms, mut mom) = (values(c, 0, n)?, values(c, 1, n)?, values(c, 2, n)?);
    let lr = scalar(c, 3)?;
    let g = values(c, 4, n)?;
    let (decay, momentum, eps) = (scalar(c, 5)?, scalar(c, 6)?, scalar(c, 7)?);
    for i in 0..n {
        ms[i] = decay * ms[i] + (1.0 - decay) * g[i] * g[i];
        mom[i] = momentum * mom[i] + lr * g[i] / (ms[i] + eps).sqrt();
        w[i] -= mom[i];
    }
    updated(var, vec![w, ms, mom], &[var, ms_t, mom_t])
}

fn k_load(c: &KernelCall) -> Result<KValue, OpError> {
    Ok(KValue::Tensor(c.tensor(0)?.clone()))
}

// ---------------------------------------------------------------------------
// Schemas.

const fn state_op(
    name: &'static str,
    doc: &'static str,
    params: Schema,
    infer: crate::InferFn,
    kernel: crate::KernelFn,
) -> OpDef {
    OpDef {
        name,
        category: Category::State,
        doc,
        schema: params,
        variadic: false,
        output: OutputDef::Single,
        infer,
        grad: None,
        kernel: Some(kernel),
        traits: Traits::NONE,
    }
}

pub const OPS: &[OpDef] = &[
    state_op(
        "Load",
        "Reads weight `variable` at this point of the effect order: the value after every earlier update, before every later one. In source, every use of a weight in a graph with effects is a `Load`; write `Load(w)` to name the value before an update.",
        Schema::ms(&[], &[("variable", "The weight to read.")]),
        infer_load,
        k_load,
    )
    .in_family(Family::View),
    OpDef {
        name: "UpdateState",
        category: Category::Structure,
        doc: "Advances the effect order's token (MindIR's `U` monad) past `x`. Made by lowering and import; not written in source.",
        schema: Schema::own_because(&[], "variadic: the token and any number of values"),
        variadic: true,
        output: OutputDef::Single,
        infer: infer_update_state,
        grad: None,
        kernel: None,
        traits: Traits::NONE,
    },
    state_op(
        "Assign",
        "Stores `value` into weight `variable`; later reads see it. Returns the new value.",
        Schema::ms(
            &[],
            &[
                ("variable", "The weight to update (a `param`)."),
                ("value", "The new value, broadcast to the weight's shape."),
            ],
        ),
        infer_assign,
        k_assign,
    ),
    state_op(
        "AssignAdd",
        "Adds `value` to weight `variable` in place (`variable += value`). Returns the new value.",
        Schema::ms(
            &[],
            &[
                ("variable", "The weight to update (a `param`)."),
                ("value", "What to add, broadcast to the weight's shape."),
            ],
        ),
        infer_assign,
        k_assign_add,
    ),
    state_op(
        "AssignSub",
        "Subtracts `value` from weight `variable` in place (`variable -= value`). Returns the new value.",
        Schema::ms(
            &[],
            &[
                ("variable", "The weight to update (a `param`)."),
                ("value", "What to subtract, broadcast to the weight's shape."),
            ],
        ),
        infer_assign,
        k_assign_sub,
    ),
    state_op(
        "ApplyMomentum",
        "Momentum update: `accumulation = accumulation * momentum + gradient * gradient_scale`, then `variable -= learning_rate * accumulation` (Nesterov: `variable -= learning_rate * (gradient + momentum * accumulation)`). Updates both weights; returns the new `variable`.",
        Schema::ms(
            &[],
            &[
                ("variable", "The weight to update (a `param`)."),
                ("accumulation", "The momentum buffer, a `param` of the weight's shape."),
                ("learning_rate", "The learning rate, a scalar."),
                ("gradient", "The gradient of the weight."),
                ("momentum", "The momentum, a scalar."),
                ("use_nesterov", "Use Nesterov momentum."),
                ("use_locking", "Ignored (updates are never concurrent here); kept for MindSpore's signature."),
                ("gradient_scale", "A factor on the gradient."),
            ],
        ),
        infer_apply_momentum,
        k_apply_momentum,
    )
    .in_family(Family::Optimizer(Optimizer::Momentum)),
    state_op(
        "SGD",
        "Stochastic gradient descent with optional momentum, dampening, weight decay and Nesterov, as `mindspore.nn.SGD` uses it. `stat` > 0 marks the first step (the buffer starts at the gradient) and is cleared. Updates `parameters`, `accum` and `stat`; returns the new `parameters`.",
        Schema::ms(
            &[],
            &[
                ("parameters", "The weight to update (a `param`)."),
                ("gradient", "The gradient of the weight."),
                ("learning_rate", "The learning rate, a scalar."),
                ("accum", "The momentum buffer, a `param` of the weight's shape."),
                ("momentum", "The momentum, a scalar."),
                ("stat", "The first-step flags, a `param` of the weight's shape (ones at the start)."),
                ("dampening", "Dampening of the momentum."),
                ("weight_decay", "L2 penalty added to the gradient."),
                ("nesterov", "Use Nesterov momentum."),
            ],
        ),
        infer_sgd,
        k_sgd,
    )
    .in_family(Family::Optimizer(Optimizer::Sgd)),
    state_op(
        "Adam",
        "Adam update: `m += (g - m)(1 - beta1)`, `v += (g² - v)(1 - beta2)`, `var -= lr·√(1 - beta2_power)/(1 - beta1_power) · m/(√v + epsilon)`. Updates `var`, `m` and `v`; returns the three.",
        Schema::ms(
            &[],
            &[
                ("var", "The weight to update (a `param`)."),
                ("m", "The first-moment buffer, a `param` of the weight's shape."),
                ("v", "The second-moment buffer, a `param` of the weight's shape."),
                ("beta1_power", "`beta1` to the power of the step, a scalar."),
                ("beta2_power", "`beta2` to the power of the step, a scalar."),
                ("lr", "The learning rate, a scalar."),
                ("beta1", "The first-moment decay, a scalar."),
                ("beta2", "The second-moment decay, a scalar."),
                ("epsilon", "Added to the denominator, a scalar."),
                ("gradient", "The gradient of the weight."),
                ("use_locking", "Ignored (updates are never concurrent here); kept for MindSpore's signature."),
                ("use_nesterov", "Use Nesterov momentum."),
            ],
        ),
        infer_adam,
        k_adam,
    )
    .in_family(Family::Optimizer(Optimizer::Adam)),
    state_op(
        "AdamWeightDecay",
        "AdamW: `m = beta1·m + (1 - beta1)·g`, `v = beta2·v + (1 - beta2)·g²`, `var -= lr·(m/(√v + epsilon) + decay·var)`. Updates `var`, `m` and `v`; returns the three.",
        Schema::ms(
            &[
                Override::input("lr", why::TO_INPUT),
                Override::input("beta1", why::TO_INPUT),
                Override::input("beta2", why::TO_INPUT),
                Override::input("epsilon", why::TO_INPUT),
                Override::input("decay", why::TO_INPUT),
            ],
            &[
                ("var", "The weight to update (a `param`)."),
                ("m", "The first-moment buffer, a `param` of the weight's shape."),
                ("v", "The second-moment buffer, a `param` of the weight's shape."),
                ("lr", "The learning rate, a scalar."),
                ("beta1", "The first-moment decay, a scalar."),
                ("beta2", "The second-moment decay, a scalar."),
                ("epsilon", "Added to the denominator, a scalar."),
                ("decay", "The weight decay, a scalar."),
                ("gradient", "The gradient of the weight."),
                ("use_locking", "Ignored (updates are never concurrent here); kept for MindSpore's signature."),
            ],
        ),
        infer_adam_weight_decay,
        k_adam_weight_decay,
    ),
    state_op(
        "ApplyGradientDescent",
        "Plain gradient descent: `var -= alpha * delta`. Returns the new `var`.",
        Schema::ms(
            &[],
            &[
                ("var", "The weight to update (a `param`)."),
                ("alpha", "The step size, a scalar."),
                ("delta", "The change (a gradient), of the weight's shape."),
            ],
        ),
        infer_gradient_descent,
        k_gradient_descent,
    ),
    state_op(
        "ApplyAdagrad",
        "Adagrad: `accum += grad²` (when `update_slots`), `var -= lr·grad/√accum`. Updates `var` and `accum`; returns the new `var`.",
        Schema::ms(
            &[],
            &[
                ("var", "The weight to update (a `param`)."),
                ("accum", "The accumulator, a `param` of the weight's shape."),
                ("lr", "The learning rate, a scalar."),
                ("grad", "The gradient of the weight."),
                ("update_slots", "Whether to update `accum`."),
            ],
        ),
        infer_adagrad,
        k_adagrad,
    ),
    state_op(
        "ApplyRMSProp",
        "RMSProp: `mean_square = rho·mean_square + (1 - rho)·grad²`, `moment = momentum·moment + learning_rate·grad/√(mean_square + epsilon)`, `var -= moment`. Updates the three; returns the new `var`.",
        Schema::ms(
            &[],
            &[
                ("var", "The weight to update (a `param`)."),
                ("mean_square", "The mean-square buffer, a `param` of the weight's shape."),
                ("moment", "The moment buffer, a `param` of the weight's shape."),
                ("learning_rate", "The learning rate, a scalar."),
                ("grad", "The gradient of the weight."),
                ("rho", "The decay rate of the mean square, a scalar."),
                ("momentum", "The momentum, a scalar."),
                ("epsilon", "Added under the square root, a scalar."),
                ("use_locking", "Ignored (updates are never concurrent here); kept for MindSpore's signature."),
            ],
        ),
        infer_rms_prop,
        k_rms_prop,
    ),
];
