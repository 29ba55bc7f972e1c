//! Recurrent networks: `LSTM`, what MindSpore 2.10's `nn.LSTM` exports on CPU
//! (one primitive per layer and direction; `nn.GRU` and `nn.RNN` export
//! unrolled MatMul/Sigmoid/Tanh graphs on CPU, so they need no primitive).
//!
//! The primitive is MindSpore's CPU (oneDNN) LSTM: time-major `x` `[T, N,
//! I]`, states `[L·D, N, H]`, and one flat weight `[S, 1, 1]` laid out as the
//! CPU kernel reads it: first every `W_ih` (`[4H, I_l]` row-major, per layer
//! then direction), then every `W_hh` (`[4H, H]`), then (with `has_bias`) one
//! bias `[4H]` per layer and direction (`nn.LSTM` passes `b_ih + b_hh`). Gates
//! are in the order i, f, g, o: `c' = σ(f)·c + σ(i)·tanh(g)`, `h' =
//! σ(o)·tanh(c')`. A bidirectional layer concatenates the forward and the
//! (time-reversed) backward outputs; layer `l + 1` reads layer `l`'s output.
//!
//! The gradient is MindSpore's own CPU one, `LSTMGrad` (`dx, dh, dc, dw`):
//! backpropagation through time, which here recomputes the forward pass; `reserve` and `state` (oneDNN's workspace and random state in
//! MindSpore) are placeholders here.

use crate::schema::Schema;
use crate::Gradgen;
use crate::Traits;
use ir::{AbsVal, AttrValue, Dim};

use crate::defs::nn::common::{float_input, ktensor};
use crate::defs::shape::{dims_of, fmt_dims, tensor_abs};
use crate::infer::InferCall;
use crate::kernel::{gemm_f64, KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Attrs, Category, GNode, GradBuilder, GradCall, OpDef, OpError,
    OutputDef, ParamDef,
};

/// LSTM's attributes, checked.
#[derive(Debug, Clone, Copy)]
struct Cfg {
    input: usize,
    hidden: usize,
    layers: usize,
    bias: bool,
    dirs: usize,
}

impl Cfg {
    fn of(op: &str, attrs: &Attrs) -> Result<Cfg, OpError> {
        let pos = |name: &'static str| -> Result<usize, OpError> {
            let v = attrs.int(name);
            if v < 1 {
                return Err(OpError::attr(
                    name,
                    format!("`{op}`: `{name}` must be positive, got {v}"),
                ));
            }
            Ok(v as usize)
        };
        let (input, hidden, layers) = (pos("input_size")?, pos("hidden_size")?, pos("num_layers")?);
        let dropout = attrs.f64("dropout");
        if !(0.0..=1.0).contains(&dropout) {
            return Err(OpError::attr(
                "dropout",
                format!("`{op}`: `dropout` must lie in [0, 1], got {dropout}"),
            ));
        }
        let proj = attrs.int("proj_size");
        if proj != 0 {
            return Err(OpError::attr(
                "proj_size",
                format!("`{op}`: only proj_size=0 is supported (nn.LSTM never sets it on CPU), got {proj}"),
            ));
        }
        Ok(Cfg {
            input,
            hidden,
            layers,
            bias: attrs.bool("has_bias"),
            dirs: if attrs.bool("bidirectional") { 2 } else { 1 },
        })
    }

    /// The input size of layer `l`.
    fn layer_input(&self, l: usize) -> usize {
        if l == 0 {
            self.input
        } else {
            self.hidden * self.dirs
        }
    }

    /// `(offset of W_ih, offset of W_hh, offset of the bias)` of layer `l`,
    /// direction `d`, and the total weight size.
    fn offsets(&self, l: usize, d: usize) -> (usize, usize, Option<usize>) {
        let g = 4 * self.hidden;
        let blocks_before = l * self.dirs + d;
        let wih: usize = (0..l)
            .map(|k| g * self.layer_input(k) * self.dirs)
            .sum::<usize>()
            + d * g * self.layer_input(l);
        let wih_total: usize = (0..self.layers)
            .map(|k| g * self.layer_input(k) * self.dirs)
            .sum();
        let whh = wih_total + blocks_before * g * self.hidden;
        let whh_total = self.layers * self.dirs * g * self.hidden;
        let b = self.bias.then(|| wih_total + whh_total + blocks_before * g);
        (wih, whh, b)
    }

    fn weight_size(&self) -> usize {
        let g = 4 * self.hidden;
        let wih: usize = (0..self.layers)
            .map(|k| g * self.layer_input(k) * self.dirs)
            .sum();
        let whh = self.layers * self.dirs * g * self.hidden;
        wih + whh
            + if self.bias {
                self.layers * self.dirs * g
            } else {
                0
            }
    }
}

/// The logistic function (the formulas' helper).
fn sigmoid(x: f64) -> f64 {
    crate::formula::fns::sigm(x)
}

/// One direction of one layer over a sequence: the activations it keeps for
/// backpropagation.
struct Run {
    /// Per step (in processing order): the gate activations `[N, 4H]` (i, f,
    /// g, o after σ/tanh), the cell state and the hidden state after the step.
    gates: Vec<Vec<f64>>,
    c: Vec<Vec<f64>>,
    h: Vec<Vec<f64>>,
}

/// Runs one direction: `x` `[T, N, I]`, initial `h0`/`c0` `[N, H]`; steps in
/// reverse time when `reverse`.
#[allow(clippy::too_many_arguments)]
fn run_direction(
    x: &[f64],
    t_len: usize,
    n: usize,
    i_size: usize,
    h: usize,
    w: &[f64],
    (wih, whh, b): (usize, usize, Option<usize>),
    h0: &[f64],
    c0: &[f64],
    reverse: bool,
) -> Run {
    let g = 4 * h;
    // Input projections of every step at once: [T·N, 4H] = x · W_ihᵀ.
    let mut xw = vec![0.0; t_len * n * g];
    gemm_f64(
        t_len * n,
        g,
        i_size,
        x,
        i_size as isize,
        1,
        &w[wih..],
        1,
        i_size as isize,
        &mut xw,
    );
    let mut run = Run {
        gates: Vec::with_capacity(t_len),
        c: Vec::with_capacity(t_len),
        h: Vec::with_capacity(t_len),
    };
    let (mut hp, mut cp) = (h0.to_vec(), c0.to_vec());
    let mut hw = vec![0.0; n * g];
    for s in 0..t_len {
        let t = if reverse { t_len - 1 - s } else { s };
        gemm_f64(
            n,
            g,
            h,
            &hp,
            h as isize,
            1,
            &w[whh..],
            1,
            h as isize,
            &mut hw,
        );
        let mut gates = vec![0.0; n * g];
        let (mut c, mut hn) = (vec![0.0; n * h], vec![0.0; n * h]);
        for b_ in 0..n {
            for k in 0..g {
                let mut a = xw[(t * n + b_) * g + k] + hw[b_ * g + k];
                if let Some(b) = b {
                    a += w[b + k];
                }
                gates[b_ * g + k] = if k / h == 2 { a.tanh() } else { sigmoid(a) };
            }
            for k in 0..h {
                let gi = &gates[b_ * g..];
                let (ig, fg, gg, og) = (gi[k], gi[h + k], gi[2 * h + k], gi[3 * h + k]);
                let cv = fg * cp[b_ * h + k] + ig * gg;
                c[b_ * h + k] = cv;
                hn[b_ * h + k] = og * cv.tanh();
            }
        }
        run.gates.push(gates);
        run.c.push(c.clone());
        run.h.push(hn.clone());
        hp = hn;
        cp = c;
    }
    run
}

/// The whole network's forward pass: per layer, the layer's input and the
/// runs of its directions.
struct Forward {
    inputs: Vec<Vec<f64>>,
    runs: Vec<Vec<Run>>,
    y: Vec<f64>,
    hy: Vec<f64>,
    cy: Vec<f64>,
}

fn forward(
    cfg: &Cfg,
    x: &[f64],
    t_len: usize,
    n: usize,
    h0: &[f64],
    c0: &[f64],
    w: &[f64],
) -> Forward {
    let h = cfg.hidden;
    let mut layer_in = x.to_vec();
    let mut fw = Forward {
        inputs: Vec::new(),
        runs: Vec::new(),
        y: Vec::new(),
        hy: vec![0.0; cfg.layers * cfg.dirs * n * h],
        cy: vec![0.0; cfg.layers * cfg.dirs * n * h],
    };
    for l in 0..cfg.layers {
        let isz = cfg.layer_input(l);
        let mut out = vec![0.0; t_len * n * cfg.dirs * h];
        let mut runs = Vec::new();
        for d in 0..cfg.dirs {
            let st = (l * cfg.dirs + d) * n * h;
            let run = run_direction(
                &layer_in,
                t_len,
                n,
                isz,
                h,
                w,
                cfg.offsets(l, d),
                &h0[st..st + n * h],
                &c0[st..st + n * h],
                d == 1,
            );
            for s in 0..t_len {
                let t = if d == 1 { t_len - 1 - s } else { s };
                for b in 0..n {
                    out[(t * n + b) * cfg.dirs * h + d * h..][..h]
                        .copy_from_slice(&run.h[s][b * h..(b + 1) * h]);
                }
            }
            if t_len > 0 {
                fw.hy[st..st + n * h].copy_from_slice(&run.h[t_len - 1]);
                fw.cy[st..st + n * h].copy_from_slice(&run.c[t_len - 1]);
            } else {
                fw.hy[st..st + n * h].copy_from_slice(&h0[st..st + n * h]);
                fw.cy[st..st + n * h].copy_from_slice(&c0[st..st + n * h]);
            }
            runs.push(run);
        }
        fw.inputs.push(std::mem::replace(&mut layer_in, out));
        fw.runs.push(runs);
    }
    fw.y = layer_in;
    fw
}

/// Checks the shapes of a kernel call: `(T, N)`.
fn check_shapes(
    cfg: &Cfg,
    x: &[usize],
    h: &[usize],
    c: &[usize],
    w: &[usize],
) -> Result<(usize, usize), OpError> {
    if x.len() != 3 || x[2] != cfg.input {
        return Err(OpError::input(
            0,
            format!("`LSTM` needs `input` [T, N, {}], got {x:?}", cfg.input),
        ));
    }
    let state = [cfg.layers * cfg.dirs, x[1], cfg.hidden];
    if h != state {
        return Err(OpError::input(
            1,
            format!("`LSTM` needs `h` {state:?}, got {h:?}"),
        ));
    }
    if c != state {
        return Err(OpError::input(
            2,
            format!("`LSTM` needs `c` {state:?}, got {c:?}"),
        ));
    }
    if w.iter().product::<usize>() != cfg.weight_size() {
        return Err(OpError::input(
            3,
            format!(
                "`LSTM` needs `w` of {} elements for these attributes, got {w:?}",
                cfg.weight_size()
            ),
        ));
    }
    Ok((x[0], x[1]))
}

fn infer_lstm(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let cfg = Cfg::of(op, call.attrs)?;
    let (dtype, xd) = float_input(call, 0)?;
    let (t, n) = match &xd {
        Some(d) if d.len() != 3 => {
            return Err(OpError::input(
                0,
                format!(
                    "`{op}` needs a 3-D `input` [seq_len, batch, input_size], got {}",
                    fmt_dims(d)
                ),
            ))
        }
        Some(d) => {
            if let Dim::Known(i) = d[2] {
                if i as usize != cfg.input {
                    return Err(OpError::attr(
                        "input_size",
                        format!(
                            "`{op}`: `input_size` is {} but `input` {} has {i} features",
                            cfg.input,
                            fmt_dims(d)
                        ),
                    ));
                }
            }
            (d[0].clone(), d[1].clone())
        }
        None => (Dim::Unknown, Dim::Unknown),
    };
    let state = vec![
        Dim::Known((cfg.layers * cfg.dirs) as i64),
        n.clone(),
        Dim::Known(cfg.hidden as i64),
    ];
    for i in 1..4 {
        let (d, dims) = dims_of(call, i)?;
        if d != dtype {
            return Err(OpError::input(
                i,
                format!(
                    "`{op}` needs `{}` of the dtype of `input`, {dtype}, got {d}",
                    call.input_name(i)
                ),
            ));
        }
        let Some(dims) = dims else { continue };
        if i < 3 {
            let fits = dims.len() == 3
                && dims
                    .iter()
                    .zip(&state)
                    .all(|(a, b)| crate::defs::shape::dims_may_equal(a, b));
            if !fits {
                return Err(OpError::input(
                    i,
                    format!(
                        "`{op}` needs `{}` of shape {} (num_layers·directions, batch, hidden_size), got {}",
                        call.input_name(i),
                        fmt_dims(&state),
                        fmt_dims(&dims)
                    ),
                ));
            }
        } else if dims.iter().all(|d| matches!(d, Dim::Known(_))) {
            let size: i64 = dims
                .iter()
                .map(|d| if let Dim::Known(k) = d { *k } else { 1 })
                .product();
            if size as usize != cfg.weight_size() {
                return Err(OpError::input(
                    3,
                    format!(
                        "`{op}` needs `w` of {} elements (the weights of {} layer(s), {} direction(s){}), got {}",
                        cfg.weight_size(),
                        cfg.layers,
                        cfg.dirs,
                        if cfg.bias { ", with biases" } else { "" },
                        fmt_dims(&dims)
                    ),
                ));
            }
        }
    }
    let one = tensor_abs(dtype, vec![Dim::Known(1), Dim::Known(1)]);
    Ok(AbsVal::Tuple(vec![
        tensor_abs(
            dtype,
            vec![t, n, Dim::Known((cfg.dirs * cfg.hidden) as i64)],
        ),
        tensor_abs(dtype, state.clone()),
        tensor_abs(dtype, state),
        one.clone(),
        one,
    ]))
}

fn kernel_lstm(c: &KernelCall) -> Result<KValue, OpError> {
    let cfg = Cfg::of("LSTM", c.attrs)?;
    let (x, h, cc, w) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?, c.tensor(3)?);
    let (t, n) = check_shapes(&cfg, x.shape(), h.shape(), cc.shape(), w.shape())?;
    let fw = forward(
        &cfg,
        &x.to_f64_vec(),
        t,
        n,
        &h.to_f64_vec(),
        &cc.to_f64_vec(),
        &w.to_f64_vec(),
    );
    let d = x.dtype();
    let state = vec![cfg.layers * cfg.dirs, n, cfg.hidden];
    Ok(KValue::Tuple(vec![
        ktensor(d, vec![t, n, cfg.dirs * cfg.hidden], fw.y),
        ktensor(d, state.clone(), fw.hy),
        ktensor(d, state, fw.cy),
        ktensor(d, vec![1, 1], vec![0.0]),
        ktensor(d, vec![1, 1], vec![0.0]),
    ]))
}

/// `LSTMGrad(x, hx, cx, w, y, hy, cy, dy, dhy, dcy, reserve)`: `(dx, dhx,
/// dcx, dw)` by backpropagation through time.
fn kernel_lstm_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let cfg = Cfg::of("LSTM", c.attrs)?;
    let (x, hx, cx, w) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?, c.tensor(3)?);
    let (t_len, n) = check_shapes(&cfg, x.shape(), hx.shape(), cx.shape(), w.shape())?;
    let (dy, dhy, dcy) = (c.tensor(7)?, c.tensor(8)?, c.tensor(9)?);
    let h = cfg.hidden;
    if dy.shape() != [t_len, n, cfg.dirs * h]
        || dhy.shape() != hx.shape()
        || dcy.shape() != cx.shape()
    {
        return Err(OpError::call("`LSTMGrad`: the output gradients do not fit"));
    }
    let (h0, c0, wv) = (hx.to_f64_vec(), cx.to_f64_vec(), w.to_f64_vec());
    let fw = forward(&cfg, &x.to_f64_vec(), t_len, n, &h0, &c0, &wv);
    let (dhy, dcy) = (dhy.to_f64_vec(), dcy.to_f64_vec());
    let mut dw = vec![0.0; wv.len()];
    let mut dh0 = vec![0.0; h0.len()];
    let mut dc0 = vec![0.0; c0.len()];
    let g = 4 * h;
    // The gradient of the current layer's output, [T, N, D·H].
    let mut dout = dy.to_f64_vec();
    for l in (0..cfg.layers).rev() {
        let isz = cfg.layer_input(l);
        let xin = &fw.inputs[l];
        let mut dxin = vec![0.0; t_len * n * isz];
        for d in 0..cfg.dirs {
            let run = &fw.runs[l][d];
            let (wih, whh, b) = cfg.offsets(l, d);
            let st = (l * cfg.dirs + d) * n * h;
            let mut dh_next = dhy[st..st + n * h].to_vec();
            let mut dc_next = dcy[st..st + n * h].to_vec();
            // Pre-activation gradients of every step, [T·N, 4H] in time order.
            let mut da_all = vec![0.0; t_len * n * g];
            for s in (0..t_len).rev() {
                let t = if d == 1 { t_len - 1 - s } else { s };
                let gates = &run.gates[s];
                let cs = &run.c[s];
                let c_prev = if s == 0 {
                    &c0[st..st + n * h]
                } else {
                    &run.c[s - 1][..]
                };
                let da = &mut da_all[t * n * g..(t + 1) * n * g];
                for bb in 0..n {
                    for k in 0..h {
                        let e = bb * h + k;
                        let gi = &gates[bb * g..];
                        let (ig, fg, gg, og) = (gi[k], gi[h + k], gi[2 * h + k], gi[3 * h + k]);
                        let tc = cs[e].tanh();
                        let dh = dout[(t * n + bb) * cfg.dirs * h + d * h + k] + dh_next[e];
                        let dc = dc_next[e] + dh * og * (1.0 - tc * tc);
                        da[bb * g + k] = dc * gg * ig * (1.0 - ig);
                        da[bb * g + h + k] = dc * c_prev[e] * fg * (1.0 - fg);
                        da[bb * g + 2 * h + k] = dc * ig * (1.0 - gg * gg);
                        da[bb * g + 3 * h + k] = dh * tc * og * (1.0 - og);
                        dc_next[e] = dc * fg;
                    }
                }
                // dh_prev = da · W_hh ([N, 4H]·[4H, H]).
                let mut dhp = vec![0.0; n * h];
                gemm_f64(
                    n,
                    h,
                    g,
                    da,
                    g as isize,
                    1,
                    &wv[whh..],
                    h as isize,
                    1,
                    &mut dhp,
                );
                dh_next = dhp;
                // dW_hh += daᵀ · h_prev.
                let h_prev: Vec<f64> = if s == 0 {
                    h0[st..st + n * h].to_vec()
                } else {
                    run.h[s - 1].clone()
                };
                let mut tmp = vec![0.0; g * h];
                gemm_f64(g, h, n, da, 1, g as isize, &h_prev, h as isize, 1, &mut tmp);
                for (acc, v) in dw[whh..whh + g * h].iter_mut().zip(&tmp) {
                    *acc += v;
                }
                if let Some(b) = b {
                    for bb in 0..n {
                        for k in 0..g {
                            dw[b + k] += da[bb * g + k];
                        }
                    }
                }
            }
            dh0[st..st + n * h].copy_from_slice(&dh_next);
            dc0[st..st + n * h].copy_from_slice(&dc_next);
            // dW_ih += daᵀ · x ([4H, T·N]·[T·N, I]); dx += da · W_ih.
            let mut tmp = vec![0.0; g * isz];
            gemm_f64(
                g,
                isz,
                t_len * n,
                &da_all,
                1,
                g as isize,
                xin,
                isz as isize,
                1,
                &mut tmp,
            );
            for (acc, v) in dw[wih..wih + g * isz].iter_mut().zip(&tmp) {
                *acc += v;
            }
            let mut dxd = vec![0.0; t_len * n * isz];
            gemm_f64(
                t_len * n,
                isz,
                g,
                &da_all,
                g as isize,
                1,
                &wv[wih..],
                isz as isize,
                1,
                &mut dxd,
            );
            for (acc, v) in dxin.iter_mut().zip(&dxd) {
                *acc += v;
            }
        }
        dout = dxin;
    }
    let dt = x.dtype();
    Ok(KValue::Tuple(vec![
        ktensor(dt, x.shape().to_vec(), dout),
        ktensor(dt, hx.shape().to_vec(), dh0),
        ktensor(dt, cx.shape().to_vec(), dc0),
        ktensor(dt, w.shape().to_vec(), dw),
    ]))
}

fn grad_lstm(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let y = b.tuple_get(c.out, 0);
    let hy = b.tuple_get(c.out, 1);
    let cy = b.tuple_get(c.out, 2);
    let reserve = b.tuple_get(c.out, 3);
    let dy = b.tuple_get(c.dout, 0);
    let dhy = b.tuple_get(c.dout, 1);
    let dcy = b.tuple_get(c.dout, 2);
    let attrs: Vec<(&'static str, AttrValue)> =
        c.attrs.iter().map(|(k, v)| (*k, v.clone())).collect();
    let r = b.prim(
        "LSTMGrad",
        &[
            c.inputs[0],
            c.inputs[1],
            c.inputs[2],
            c.inputs[3],
            y,
            hy,
            cy,
            dy,
            dhy,
            dcy,
            reserve,
        ],
        attrs,
    );
    (0..4).map(|i| Some(b.tuple_get(r, i))).collect()
}

const LSTM_ATTRS: [ParamDef; 7] = [
    ParamDef::attr("input_size", AttrType::Int, None, "The features of `input`, `I`."),
    ParamDef::attr("hidden_size", AttrType::Int, None, "The features of the hidden state, `H`."),
    ParamDef::attr("num_layers", AttrType::Int, None, "The number of stacked layers, `L`."),
    ParamDef::attr("has_bias", AttrType::Bool, None, "Whether `w` ends with one bias `[4H]` per layer and direction."),
    ParamDef::attr("bidirectional", AttrType::Bool, None, "Run a second, time-reversed direction per layer and concatenate (`D = 2`)."),
    ParamDef::attr("dropout", AttrType::Float, None, "Dropout between layers, in [0, 1]; MindSpore's CPU kernel (oneDNN) applies none, nor does this one."),
    ParamDef::attr("proj_size", AttrType::Int, Some(AttrDefault::Int(0)), "Projection size; only 0 (no projection) is supported."),
];

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "LSTM",
        category: Category::NeuralNetwork,
        doc: "A multi-layer (optionally bidirectional) LSTM over a time-major sequence, as MindSpore's CPU kernel (what `nn.LSTM` exports, one call per layer and direction): `input` `[T, N, I]`, `h`/`c` `[L·D, N, H]`, one flat weight `w` (every `W_ih`, then every `W_hh`, then the biases; gates i, f, g, o). Returns `(output [T, N, D·H], h_n, c_n, reserve, state)`; `reserve` and `state` are `[1, 1]` placeholders for MindSpore's oneDNN workspace and random state.",
        schema: Schema::ms(
            &[],
            &[
                ("input", "The sequence, `[seq_len, batch, input_size]`, float."),
                ("h", "The initial hidden states, `[num_layers·D, batch, hidden_size]`."),
                ("c", "The initial cell states, `[num_layers·D, batch, hidden_size]`."),
                ("w", "All weights, flat (`[S, 1, 1]` in MindSpore)."),
                ("input_size", "The features of `input`, `I`."),
                ("hidden_size", "The features of the hidden state, `H`."),
                ("num_layers", "The number of stacked layers, `L`."),
                ("has_bias", "Whether `w` ends with one bias `[4H]` per layer and direction."),
                ("bidirectional", "Run a second, time-reversed direction per layer and concatenate (`D = 2`)."),
                ("dropout", "Dropout between layers, in [0, 1]; MindSpore's CPU kernel (oneDNN) applies none, nor does this one."),
                ("proj_size", "Projection size; only 0 (no projection) is supported."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["output", "h_n", "c_n", "reserve", "state"]),
        infer: infer_lstm,
        grad: Some(grad_lstm),
        kernel: Some(kernel_lstm),
        traits: Traits::NONE.gradgen(Gradgen::Avoid),
    },
    OpDef {
        name: "LSTMGrad",
        category: Category::Backward,
        doc: "The gradients of LSTM with respect to `x`, `hx`, `cx` and `w`, as MindSpore's CPU bprop emits it (`LSTMGrad(x, hx, cx, w, y, hy, cy, dy, dhy, dcy, reserve)`), by backpropagation through time (recomputing the forward pass: `reserve` is not read).",
        schema: Schema::own_because(&[
            ParamDef::input("x", "LSTM's input."),
            ParamDef::input("hx", "LSTM's initial hidden states."),
            ParamDef::input("cx", "LSTM's initial cell states."),
            ParamDef::input("w", "LSTM's weights."),
            ParamDef::input("y", "LSTM's output."),
            ParamDef::input("hy", "LSTM's final hidden states."),
            ParamDef::input("cy", "LSTM's final cell states."),
            ParamDef::input("dy", "The gradient of `output`."),
            ParamDef::input("dhy", "The gradient of `h_n`."),
            ParamDef::input("dcy", "The gradient of `c_n`."),
            ParamDef::input("reserve", "LSTM's `reserve` (unused)."),
            LSTM_ATTRS[0],
            LSTM_ATTRS[1],
            LSTM_ATTRS[2],
            LSTM_ATTRS[3],
            LSTM_ATTRS[4],
            LSTM_ATTRS[5],
            LSTM_ATTRS[6],
        ], "MindSpore's table names no inputs for it (its `__call__` takes `*args`): they are those of its CPU bprop, in order"),
        variadic: false,
        output: OutputDef::Tuple(&["dx", "dhx", "dcx", "dw"]),
        infer: |call| {
            if call.any_unknown() {
                return Ok(AbsVal::Any);
            }
            Ok(AbsVal::Tuple((0..4).map(|i| call.inputs[i].widen()).collect()))
        },
        grad: None,
        kernel: Some(kernel_lstm_grad),
        traits: Traits::NONE,
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let i = AttrValue::Int;
    let b = AttrValue::Bool;
    let f = AttrValue::float;
    let lstm = |t: usize,
                n: usize,
                isz: usize,
                h: usize,
                layers: usize,
                bias: bool,
                bidi: bool,
                seed: u64| {
        let cfg = Cfg {
            input: isz,
            hidden: h,
            layers,
            bias,
            dirs: if bidi { 2 } else { 1 },
        };
        Sample::new(
            "LSTM",
            vec![
                random_f64(&[t, n, isz], seed, -1.0, 1.0),
                random_f64(&[layers * cfg.dirs, n, h], seed + 1, -1.0, 1.0),
                random_f64(&[layers * cfg.dirs, n, h], seed + 2, -1.0, 1.0),
                random_f64(&[cfg.weight_size(), 1, 1], seed + 3, -0.6, 0.6),
            ],
        )
        .attr("input_size", i(isz as i64))
        .attr("hidden_size", i(h as i64))
        .attr("num_layers", i(layers as i64))
        .attr("has_bias", b(bias))
        .attr("bidirectional", b(bidi))
        .attr("dropout", f(0.0))
    };
    vec![
        lstm(3, 2, 3, 2, 1, true, false, 800),
        lstm(2, 1, 2, 3, 1, false, true, 810),
        lstm(3, 2, 2, 2, 2, true, true, 820),
    ]
}
