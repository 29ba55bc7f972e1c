//! The elementwise primitives' gradient rules (the table is in
//! `elementwise.rs`).

use super::*;
use crate::defs::elementwise::common::input_grad;

// ---------------------------------------------------------------------------
// Gradient rules.

type Grads = Vec<Option<GNode>>;

/// Whether input `i` can have a gradient (a float, or unknown).
pub(crate) fn is_float_input(c: &GradCall, i: usize) -> bool {
    c.input_values
        .get(i)
        .and_then(AbsVal::dtype)
        .is_none_or(DType::is_float)
}

pub(super) fn prim(b: &mut dyn GradBuilder, name: &str, inputs: &[GNode]) -> GNode {
    b.prim(name, inputs, vec![])
}

pub(super) fn unary_grad(
    b: &mut dyn GradBuilder,
    c: &GradCall,
    f: impl FnOnce(&mut dyn GradBuilder) -> GNode,
) -> Grads {
    vec![is_float_input(c, 0).then(|| f(b))]
}

pub(super) fn grad_add(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    vec![
        input_grad(b, c, 0, |_| c.dout),
        input_grad(b, c, 1, |_| c.dout),
    ]
}

pub(super) fn grad_sub(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    vec![
        input_grad(b, c, 0, |_| c.dout),
        input_grad(b, c, 1, |b| prim(b, "Neg", &[c.dout])),
    ]
}

pub(super) fn grad_mul(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    vec![
        input_grad(b, c, 0, |b| prim(b, "Mul", &[c.dout, c.inputs[1]])),
        input_grad(b, c, 1, |b| prim(b, "Mul", &[c.dout, c.inputs[0]])),
    ]
}

pub(super) fn grad_real_div(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // bc_x = dout / y; dx = bc_x; dy = -bc_x * out.
    if !is_float_input(c, 0) && !is_float_input(c, 1) {
        return vec![None, None];
    }
    let bc_x = prim(b, "RealDiv", &[c.dout, c.inputs[1]]);
    vec![
        input_grad(b, c, 0, |_| bc_x),
        input_grad(b, c, 1, |b| {
            let t = prim(b, "Mul", &[bc_x, c.out]);
            prim(b, "Neg", &[t])
        }),
    ]
}

pub(super) fn grad_pow(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // MindSpore: dx = power · x^(power-1) · dout;
    // dpower = out · log(x < 0 ? 1 : x) · dout.
    let (x, p) = (c.inputs[0], c.inputs[1]);
    vec![
        input_grad(b, c, 0, |b| {
            let one = b.scalar(1.0);
            let pm1 = prim(b, "Sub", &[p, one]);
            let xp = prim(b, "Pow", &[x, pm1]);
            let t = prim(b, "Mul", &[p, xp]);
            prim(b, "Mul", &[t, c.dout])
        }),
        input_grad(b, c, 1, |b| {
            let zero = b.scalar(0.0);
            let negative = prim(b, "Less", &[x, zero]);
            let ones = prim(b, "OnesLike", &[x]);
            let safe = prim(b, "Select", &[negative, ones, x]);
            let log = prim(b, "Log", &[safe]);
            let t = prim(b, "Mul", &[c.out, log]);
            prim(b, "Mul", &[t, c.dout])
        }),
    ]
}

/// MindSpore's `MinimumMaximumGrad`: the gradient goes to the operand the result
/// came from, split in half between tied operands.
pub(super) fn min_max_grad(b: &mut dyn GradBuilder, c: &GradCall, is_max: bool) -> Grads {
    if !is_float_input(c, 0) && !is_float_input(c, 1) {
        return vec![None, None];
    }
    let (x, y) = (c.inputs[0], c.inputs[1]);
    let half = b.scalar(0.5);
    let half_dout = prim(b, "Mul", &[c.dout, half]);
    let tie = prim(b, "Equal", &[x, y]);
    let dout_sel = prim(b, "Select", &[tie, half_dout, c.dout]);
    let zeros = prim(b, "ZerosLike", &[c.dout]);
    let (x_loses, y_loses) = if is_max {
        ("Less", "Greater")
    } else {
        ("Greater", "Less")
    };
    vec![
        input_grad(b, c, 0, |b| {
            let m = prim(b, x_loses, &[x, y]);
            prim(b, "Select", &[m, zeros, dout_sel])
        }),
        input_grad(b, c, 1, |b| {
            let m = prim(b, y_loses, &[x, y]);
            prim(b, "Select", &[m, zeros, dout_sel])
        }),
    ]
}

pub(super) fn grad_maximum(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    min_max_grad(b, c, true)
}

pub(super) fn grad_minimum(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    min_max_grad(b, c, false)
}

pub(super) fn grad_neg(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    unary_grad(b, c, |b| prim(b, "Neg", &[c.dout]))
}

pub(super) fn grad_exp(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    unary_grad(b, c, |b| prim(b, "Mul", &[c.dout, c.out]))
}

pub(super) fn grad_log(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    unary_grad(b, c, |b| prim(b, "RealDiv", &[c.dout, c.inputs[0]]))
}

pub(super) fn grad_sqrt(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // SqrtGrad: dout / (2 · out).
    unary_grad(b, c, |b| {
        let two = b.scalar(2.0);
        let t = prim(b, "Mul", &[c.out, two]);
        prim(b, "RealDiv", &[c.dout, t])
    })
}

pub(super) fn grad_rsqrt(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // RsqrtGrad: dout · (-0.5) · out³.
    unary_grad(b, c, |b| {
        let sq = prim(b, "Square", &[c.out]);
        let cube = prim(b, "Mul", &[sq, c.out]);
        let k = b.scalar(-0.5);
        let t = prim(b, "Mul", &[cube, k]);
        prim(b, "Mul", &[c.dout, t])
    })
}

pub(super) fn grad_square(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    unary_grad(b, c, |b| {
        let two = b.scalar(2.0);
        let t = prim(b, "Mul", &[c.inputs[0], two]);
        prim(b, "Mul", &[c.dout, t])
    })
}

pub(super) fn grad_abs(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // AbsGrad: dout · sign(x), with sign(0) = 0.
    unary_grad(b, c, |b| {
        let x = c.inputs[0];
        let zero = b.scalar(0.0);
        let zeros = prim(b, "ZerosLike", &[c.dout]);
        let positive = prim(b, "Greater", &[x, zero]);
        let pos = prim(b, "Select", &[positive, c.dout, zeros]);
        let negative = prim(b, "Less", &[x, zero]);
        let neg_dout = prim(b, "Neg", &[c.dout]);
        prim(b, "Select", &[negative, neg_dout, pos])
    })
}

pub(super) fn grad_sin(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    unary_grad(b, c, |b| {
        let cos = prim(b, "Cos", &[c.inputs[0]]);
        prim(b, "Mul", &[c.dout, cos])
    })
}

pub(super) fn grad_cos(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    unary_grad(b, c, |b| {
        let sin = prim(b, "Sin", &[c.inputs[0]]);
        let t = prim(b, "Mul", &[c.dout, sin]);
        prim(b, "Neg", &[t])
    })
}

pub(super) fn grad_tanh(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // MindSpore's bprop: TanhGrad(out, dout), `dout · (1 - out²)`.
    unary_grad(b, c, |b| prim(b, "TanhGrad", &[c.out, c.dout]))
}

pub(super) fn grad_sigmoid(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // MindSpore's bprop: SigmoidGrad(out, dout), `dout · out · (1 - out)`.
    unary_grad(b, c, |b| prim(b, "SigmoidGrad", &[c.out, c.dout]))
}

pub(super) fn grad_relu(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // ReluGrad: dout where the output is positive.
    unary_grad(b, c, |b| {
        let zero = b.scalar(0.0);
        let mask = prim(b, "Greater", &[c.out, zero]);
        let zeros = prim(b, "ZerosLike", &[c.dout]);
        prim(b, "Select", &[mask, c.dout, zeros])
    })
}

pub(super) fn grad_gelu(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // MindSpore's bprop: GeLUGrad(dout, x, out), of the tanh form.
    unary_grad(b, c, |b| prim(b, "GeLUGrad", &[c.dout, c.inputs[0], c.out]))
}

pub(super) fn grad_erf(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // dout · 2/√π · exp(-x²).
    unary_grad(b, c, |b| {
        let sq = prim(b, "Square", &[c.inputs[0]]);
        let neg = prim(b, "Neg", &[sq]);
        let e = prim(b, "Exp", &[neg]);
        let k = b.scalar(std::f64::consts::FRAC_2_SQRT_PI);
        let t = prim(b, "Mul", &[e, k]);
        prim(b, "Mul", &[c.dout, t])
    })
}

pub(super) fn grad_select(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    if !is_float_input(c, 1) && !is_float_input(c, 2) {
        return vec![None, None, None];
    }
    let cond = c.inputs[0];
    let zeros = prim(b, "ZerosLike", &[c.dout]);
    vec![
        None,
        input_grad(b, c, 1, |b| prim(b, "Select", &[cond, c.dout, zeros])),
        input_grad(b, c, 2, |b| prim(b, "Select", &[cond, zeros, c.dout])),
    ]
}

pub(super) fn grad_cast(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    // The sensitivity cast back to the input's dtype; none between a float
    // and an integer or bool.
    if !c.attrs.dtype("dtype").is_float() {
        return vec![None];
    }
    match c.input_values.first().and_then(AbsVal::dtype) {
        Some(src) if src.is_float() => vec![Some(b.prim(
            "Cast",
            &[c.dout],
            vec![("dtype", AttrValue::DType(src))],
        ))],
        Some(_) => vec![None],
        // Not known here (a value the analysis could not follow): decided
        // when it runs, never silently none.
        None => vec![Some(b.prim("_CastLike", &[c.dout, c.inputs[0]], vec![]))],
    }
}
