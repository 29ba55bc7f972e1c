"""The standard library (lib/nn/*.mir) against MindSpore 2.10's `nn`.

Each case builds a MindSpore `nn` cell (or runs an `nn` optimizer), with fixed
random inputs and weights, and records what MindSpore 2.10 (CPU, PyNative)
computes: the layer's outputs and, through the objective
`sum(outputs · ct)` with a fixed random cotangent `ct`, the gradients with
respect to every float input and weight (`mindspore.grad`). For optimizers it
records the weights and their state after each of two steps.

`cargo test -p mirdsl --test stdlib` replays every case: it builds the case's
model (`stdlib/<case>.mir`, which uses the library's graphs), runs it with the
executor on the recorded inputs and compares values and gradients.

Regenerate (MindSpore 2.10 installed, e.g. /work/venvs/ms/bin/python):
    python crates/mirdsl/tests/stdlib/gen_oracle.py
It writes `oracle.json` beside the script; commit both.
"""
import json
import os

import numpy as np
import mindspore as ms
from mindspore import Tensor, Parameter, nn, ops

ms.set_context(mode=ms.PYNATIVE_MODE)
ms.set_device("CPU")

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261125)

_DT = {"float32": "f32", "float64": "f64", "int32": "i32", "int64": "i64", "bool": "bool"}


def enc(v):
    """A tensor as {"dtype", "shape", "data"}; tuples as arrays."""
    if isinstance(v, (tuple, list)):
        return [enc(e) for e in v]
    if isinstance(v, Tensor):
        v = v.asnumpy()
    v = np.asarray(v)
    return {"dtype": _DT[str(v.dtype)], "shape": list(v.shape),
            "data": [float(e) if v.dtype.kind == "f" else int(e) for e in v.reshape(-1)]}


def rand(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def set_params(cell, weights):
    """Sets the cell's parameters (by name) to the given arrays."""
    params = {p.name: p for p in cell.get_parameters()}
    for name, value in weights.items():
        p = params[name]
        assert tuple(p.shape) == value.shape, (name, p.shape, value.shape)
        p.set_data(Tensor(value))
    return [params[name] for name in weights]


def flat(v):
    """The tensors of a (nested) tuple, in order."""
    return [t for e in v for t in flat(e)] if isinstance(v, (tuple, list)) else [v]


def layer_case(name, cell, inputs, weights, float_inputs, note="", tol=(1e-5, 1e-5), fd_only=()):
    """A layer: `cell(*inputs)` with `weights` (name -> array, in the order the
    model takes them). The model's `main` takes (inputs..., weights..., ct...)
    and returns (outputs, grads): grads with respect to the float inputs (by
    position in `float_inputs`) then every weight, of sum(outputs · ct)."""
    params = set_params(cell, weights)
    xs = [Tensor(x) for x in inputs]
    out = cell(*xs)
    outs = flat(out)
    cts = [rand(*o.shape) for o in outs]

    def objective(*args):
        o = flat(cell(*args))
        total = 0
        for oi, ct in zip(o, cts):
            total = total + (oi * Tensor(ct)).sum()
        return total

    if not params:
        gi, gw = ms.grad(objective, grad_position=tuple(float_inputs))(*xs), []
    elif float_inputs:
        gi, gw = ms.grad(objective, grad_position=tuple(float_inputs), weights=params)(*xs)
    else:
        gi, gw = [], ms.grad(objective, grad_position=None, weights=params)(*xs)
    gi = flat(gi)
    grads = [None if i in fd_only else enc(g) for i, g in zip(float_inputs, gi)]
    grads += [None if k in fd_only else enc(g) for k, g in zip(weights, gw)]
    return {
        "name": name,
        "note": note,
        "inputs": [enc(x) for x in inputs] + [enc(w) for w in weights.values()] + [enc(c) for c in cts],
        "expected": [enc(out) if isinstance(out, (tuple, list)) else enc(out),
                     grads],
        "wrt": list(float_inputs) + [len(inputs) + j for j in range(len(weights))],
        "rtol": tol[0],
        "atol": tol[1],
    }


cases = []

# --- dense ------------------------------------------------------------------
cell = nn.Dense(5, 4)
cases.append(layer_case("dense", cell, [rand(3, 5)],
                        {"weight": rand(4, 5), "bias": rand(4)}, [0]))
cell = nn.Dense(5, 4, activation="relu")
cases.append(layer_case("dense_act", cell, [rand(3, 5)],
                        {"weight": rand(4, 5), "bias": rand(4)}, [0]))
cell = nn.Dense(5, 4)
cases.append(layer_case("linear", cell, [rand(2, 3, 5)],
                        {"weight": rand(4, 5), "bias": rand(4)}, [0],
                        note="nn.Dense on a 3-D input"))

# --- conv + bn + relu -------------------------------------------------------


def bn_weights(prefix, c):
    return {f"{prefix}gamma": rand(c, lo=0.5, hi=1.5), f"{prefix}beta": rand(c),
            f"{prefix}moving_mean": rand(c, lo=-0.2, hi=0.2),
            f"{prefix}moving_variance": rand(c, lo=0.5, hi=1.5)}


class ConvBnRelu(nn.Cell):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, pad_mode="same")
        self.bn = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.relu(self.bn(self.conv(x)))


cell = ConvBnRelu(3, 4)
cell.set_train(False)
w = {"conv.weight": rand(4, 3, 3, 3) * 0.5}
w.update(bn_weights("bn.", 4))
cases.append(layer_case("conv_bn_relu", cell, [rand(2, 3, 5, 5)], w, [0],
                        note="Conv2d(3, 4, 3, pad_mode='same'), BatchNorm2d eval, ReLU"))


class BasicBlock(nn.Cell):
    """ResNet basic block (torchvision layout: 3x3 convs with padding 1)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, pad_mode="pad", padding=1)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, pad_mode="pad", padding=1)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.SequentialCell([nn.Conv2d(cin, cout, 1, stride=stride, pad_mode="valid"),
                                           nn.BatchNorm2d(cout)])

    def construct(self, x):
        h = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(h))
        s = x if self.down is None else self.down(x)
        return self.relu(y + s)


cell = BasicBlock(4, 4, 1)
cell.set_train(False)
w = {"conv1.weight": rand(4, 4, 3, 3) * 0.4}
w.update(bn_weights("bn1.", 4))
w["conv2.weight"] = rand(4, 4, 3, 3) * 0.4
w.update(bn_weights("bn2.", 4))
cases.append(layer_case("basic_block", cell, [rand(2, 4, 5, 5)], w, [0],
                        note="identity shortcut, BatchNorm eval"))

cell = BasicBlock(3, 4, 2)
cell.set_train(False)
w = {"conv1.weight": rand(4, 3, 3, 3) * 0.4}
w.update(bn_weights("bn1.", 4))
w["conv2.weight"] = rand(4, 4, 3, 3) * 0.4
w.update(bn_weights("bn2.", 4))
w["down.0.weight"] = rand(4, 3, 1, 1)
w.update(bn_weights("down.1.", 4))
cases.append(layer_case("basic_block_down", cell, [rand(2, 3, 6, 6)], w, [0],
                        note="stride 2, 1x1 projection shortcut, BatchNorm eval"))



def bn_train_case():
    """`nn.BatchNorm2d(3)` in training mode: the output (batch statistics), the
    running statistics after that one call, and the gradients of sum(y · ct)
    with respect to x, gamma and beta."""
    cell = nn.BatchNorm2d(3, momentum=0.9)
    cell.set_train(True)
    w = {k.replace("moving_", ""): v for k, v in bn_weights("", 3).items()}
    params = set_params(cell, w)
    x = rand(4, 3, 2, 2) * 2 + 0.5
    y = cell(Tensor(x))
    after = [cell.moving_mean.asnumpy().copy(), cell.moving_variance.asnumpy().copy()]
    ct = rand(*y.shape)

    def objective(t):
        return (cell(t) * Tensor(ct)).sum()

    gx, gw = ms.grad(objective, grad_position=0, weights=params[:2])(Tensor(x))
    return {
        "name": "batch_norm_train",
        "note": "BatchNorm2d(3, momentum=0.9), set_train(True): output, running statistics after one call",
        "inputs": [enc(x)] + [enc(v) for v in w.values()] + [enc(ct)],
        "expected": [[enc(y), enc(after[0]), enc(after[1])], [enc(gx), enc(gw[0]), enc(gw[1])]],
        "wrt": [0, 1, 2],
        "rtol": 1e-5,
        "atol": 1e-5,
    }


cases.append(bn_train_case())

# --- attention --------------------------------------------------------------
cell = nn.MultiheadAttention(8, 2)
cell.set_train(False)
w = {"in_proj_weight": rand(24, 8) * 0.5, "in_proj_bias": rand(24) * 0.1,
     "out_proj.weight": rand(8, 8) * 0.5, "out_proj.bias": rand(8) * 0.1}
cases.append(layer_case("multi_head_attention", cell, [rand(4, 2, 8), rand(5, 2, 8), rand(5, 2, 8)],
                        w, [0, 1, 2],
                        note="MultiheadAttention(8, 2): (L, N, E) inputs; returns (output, head-averaged weights)"))



class MaskedMha(nn.Cell):
    def __init__(self, mask):
        super().__init__()
        self.mha = nn.MultiheadAttention(8, 2)
        self.mask = Tensor(mask)

    def construct(self, q, k, v):
        return self.mha(q, k, v, attn_mask=self.mask)


mask = np.where(rng.uniform(size=(4, 5)) < 0.3, -1e4, 0.0).astype(np.float32)
mask[:, 0] = 0.0  # every row keeps a key
cell = MaskedMha(mask)
cell.set_train(False)
w = {"mha.in_proj_weight": rand(24, 8) * 0.5, "mha.in_proj_bias": rand(24) * 0.1,
     "mha.out_proj.weight": rand(8, 8) * 0.5, "mha.out_proj.bias": rand(8) * 0.1}
case = layer_case("multi_head_attention_masked", cell, [rand(4, 2, 8), rand(5, 2, 8), rand(5, 2, 8)],
                  w, [0, 1, 2], note="a float attn_mask [L, S] (0 or -1e4)")
case["inputs"].insert(7, enc(mask))
cases.append(case)

cell = nn.MultiheadAttention(8, 2, batch_first=True)
cell.set_train(False)
w = {"in_proj_weight": rand(24, 8) * 0.5, "in_proj_bias": rand(24) * 0.1,
     "out_proj.weight": rand(8, 8) * 0.5, "out_proj.bias": rand(8) * 0.1}
cases.append(layer_case("multi_head_attention_batch_first", cell,
                        [rand(2, 4, 8), rand(2, 5, 8), rand(2, 5, 8)], w, [0, 1, 2],
                        note="batch_first=True: (N, L, E) inputs"))

# --- layer norm, MLP --------------------------------------------------------
cell = nn.LayerNorm((8,))
cases.append(layer_case("layer_norm", cell, [rand(2, 3, 8)],
                        {"gamma": rand(8, lo=0.5, hi=1.5), "beta": rand(8)}, [0]))


class LnMlp(nn.Cell):
    def __init__(self, d, h, residual):
        super().__init__()
        self.ln = nn.LayerNorm((d,))
        self.fc1 = nn.Dense(d, h)
        self.act = nn.GELU()
        self.fc2 = nn.Dense(h, d)
        self.residual = residual

    def construct(self, x):
        y = self.fc2(self.act(self.fc1(self.ln(x))))
        return x + y if self.residual else y


for residual in (False, True):
    cell = LnMlp(8, 16, residual)
    w = {"ln.gamma": rand(8, lo=0.5, hi=1.5), "ln.beta": rand(8),
         "fc1.weight": rand(16, 8) * 0.5, "fc1.bias": rand(16) * 0.1,
         "fc2.weight": rand(8, 16) * 0.5, "fc2.bias": rand(8) * 0.1}
    cases.append(layer_case("ln_mlp_residual" if residual else "ln_mlp", cell,
                            [rand(2, 3, 8)], w, [0]))

# --- embedding --------------------------------------------------------------
cell = nn.Embedding(10, 4)
ids = np.array([[1, 3, 3], [9, 0, 3]], dtype=np.int32)
cases.append(layer_case("embedding", cell, [ids], {"embedding_table": rand(10, 4)}, [],
                        note="ids repeat, so the table's gradient accumulates"))

# --- recurrent cells --------------------------------------------------------


class LstmCell(nn.Cell):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(3, 4)

    def construct(self, x, h, c):
        return self.cell(x, (h, c))


cell = LstmCell()
w = {"cell.weight_ih": rand(16, 3), "cell.weight_hh": rand(16, 4),
     "cell.bias_ih": rand(16), "cell.bias_hh": rand(16)}
cases.append(layer_case("lstm_cell", cell, [rand(2, 3), rand(2, 4), rand(2, 4)], w, [0, 1, 2]))

cell = nn.GRUCell(3, 4)
w = {"weight_ih": rand(12, 3), "weight_hh": rand(12, 4), "bias_ih": rand(12), "bias_hh": rand(12)}
cases.append(layer_case("gru_cell", cell, [rand(2, 3), rand(2, 4)], w, [0, 1]))



class SeqLstm(nn.Cell):
    """nn.LSTM(3, 4) on (T, N, 3) with (h0, c0) [N, 4]; the layer dimension
    of h0/c0/h_n/c_n added and removed here."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(3, 4)

    def construct(self, xs, h0, c0):
        out, (h, c) = self.rnn(xs, (h0.expand_dims(0), c0.expand_dims(0)))
        return out, (h.squeeze(0), c.squeeze(0))


class SeqGru(nn.Cell):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(3, 4)

    def construct(self, xs, h0):
        out, h = self.rnn(xs, h0.expand_dims(0))
        return out, h.squeeze(0)


cell = SeqLstm()
w = {"rnn.weight_ih_l0": rand(16, 3), "rnn.weight_hh_l0": rand(16, 4),
     "rnn.bias_ih_l0": rand(16), "rnn.bias_hh_l0": rand(16)}
cases.append(layer_case("lstm", cell, [rand(5, 2, 3), rand(2, 4), rand(2, 4)], w, [0, 1, 2],
                        note="nn.LSTM(3, 4), sequence first, 5 steps"))
cell = SeqGru()
w = {"rnn.weight_ih_l0": rand(12, 3), "rnn.weight_hh_l0": rand(12, 4),
     "rnn.bias_ih_l0": rand(12), "rnn.bias_hh_l0": rand(12)}
cases.append(layer_case("gru", cell, [rand(5, 2, 3), rand(2, 4)], w, [0, 1],
                        note="nn.GRU(3, 4), sequence first, 5 steps"))

# --- losses -----------------------------------------------------------------


def loss_case(name, loss, inputs, float_inputs, note="", fd_only=()):
    class L(nn.Cell):
        def __init__(self):
            super().__init__()
            self.loss = loss

        def construct(self, *a):
            return self.loss(*a)

    return layer_case(name, L(), inputs, {}, float_inputs, note=note, fd_only=fd_only)


labels = np.eye(5, dtype=np.float32)[[0, 3, 4, 1]]
cases.append(loss_case("softmax_cross_entropy", nn.SoftmaxCrossEntropyWithLogits(),
                       [rand(4, 5, lo=-3, hi=3), labels], [0, 1],
                       note="MindSpore (and mirdsl) give the labels a zero gradient"))
cases.append(loss_case("softmax_cross_entropy_mean", nn.SoftmaxCrossEntropyWithLogits(reduction="mean"),
                       [rand(4, 5, lo=-3, hi=3), labels], [0]))
cases.append(loss_case("sparse_softmax_cross_entropy",
                       nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                       [rand(4, 5, lo=-3, hi=3), np.array([0, 3, 4, 1], dtype=np.int32)], [0]))
cases.append(loss_case("mse_loss", nn.MSELoss(), [rand(3, 4), rand(3, 4)], [0, 1]))
cases.append(loss_case("l1_loss", nn.L1Loss(), [rand(3, 4), rand(3, 4)], [0, 1]))
cases.append(loss_case("bce_with_logits", nn.BCEWithLogitsLoss(),
                       [rand(3, 4, lo=-4, hi=4), rng.uniform(0, 1, (3, 4)).astype(np.float32)], [0, 1]))
cases.append(loss_case("smooth_l1_loss", nn.SmoothL1Loss(reduction="mean"),
                       [rand(3, 4, lo=-2, hi=2), rand(3, 4, lo=-2, hi=2)], [0, 1]))
cases.append(loss_case("nll_loss", nn.NLLLoss(),
                       [np.log(rng.dirichlet(np.ones(5), 4)).astype(np.float32),
                        np.array([0, 3, 4, 1], dtype=np.int32)], [0]))

# --- optimizers -------------------------------------------------------------


def optim_case(name, make, state_names, note="", reference=None):
    """Two steps of an `nn` optimizer on two weights, with given gradients.
    Records the weights and every state parameter (by the model's names) after
    each step."""
    w0 = Parameter(Tensor(rand(2, 3)), name="w0")
    w1 = Parameter(Tensor(rand(4)), name="w1")
    opt = make([w0, w1])
    init = {"w0": w0.asnumpy().copy(), "w1": w1.asnumpy().copy()}
    grads = [[rand(2, 3), rand(4)], [rand(2, 3), rand(4)]]
    steps = []
    for g in grads:
        if reference is None:
            opt(tuple(Tensor(x) for x in g))
        else:
            reference(opt, g)
        after = {"w0": enc(w0.asnumpy()), "w1": enc(w1.asnumpy())}
        for model_name, ms_name in state_names.items():
            p = [q for q in opt.get_parameters() if q.name == ms_name][0]
            after[model_name] = enc(p.asnumpy())
        steps.append(after)
    return {"name": name, "note": note, "optimizer": True,
            "init": {k: enc(v) for k, v in init.items()},
            "grads": [[enc(x) for x in g] for g in grads],
            "steps": steps, "rtol": 1e-5, "atol": 1e-6}


cases.append(optim_case("sgd", lambda p: nn.SGD(p, learning_rate=0.1), {}))
cases.append(optim_case("sgd_momentum",
                        lambda p: nn.SGD(p, learning_rate=0.1, momentum=0.9, dampening=0.1),
                        {"accum.w0": "accum.w0", "accum.w1": "accum.w1"}))
cases.append(optim_case("sgd_nesterov",
                        lambda p: nn.SGD(p, learning_rate=0.1, momentum=0.9, nesterov=True),
                        {"accum.w0": "accum.w0", "accum.w1": "accum.w1"}))
cases.append(optim_case("momentum", lambda p: nn.Momentum(p, learning_rate=0.1, momentum=0.9),
                        {"moments.w0": "moments.w0", "moments.w1": "moments.w1"}))


def nesterov_by_hand(opt, grads):
    """MindSpore's documented Nesterov momentum (`ApplyMomentum` with
    use_nesterov): `m' = mu·m + g`, `w' = w - lr·(g + mu·m')`. MindSpore
    2.10's CPU kernel ignores `use_nesterov` (it computes plain momentum), so
    the documented formula is applied here to MindSpore's parameters."""
    mu, lr = 0.9, 0.1
    for p, g in zip(opt.parameters, grads):
        m = [q for q in opt.get_parameters() if q.name == "moments." + p.name][0]
        m2 = (mu * m.asnumpy() + g).astype(np.float32)
        p.set_data(Tensor((p.asnumpy() - lr * (g + mu * m2)).astype(np.float32)))
        m.set_data(Tensor(m2))


cases.append(optim_case("momentum_nesterov",
                        lambda p: nn.Momentum(p, learning_rate=0.1, momentum=0.9, use_nesterov=True),
                        {"moments.w0": "moments.w0", "moments.w1": "moments.w1"},
                        note="the documented formula in NumPy: MindSpore 2.10's CPU ApplyMomentum ignores use_nesterov",
                        reference=nesterov_by_hand))
cases.append(optim_case("adam", lambda p: nn.Adam(p, learning_rate=0.01),
                        {"moment1.w0": "moment1.w0", "moment1.w1": "moment1.w1",
                         "moment2.w0": "moment2.w0", "moment2.w1": "moment2.w1",
                         "beta1_power": "beta1_power", "beta2_power": "beta2_power"}))
cases.append(optim_case("adamw", lambda p: nn.AdamWeightDecay(p, learning_rate=0.01, weight_decay=0.01),
                        {"adam_m.w0": "adam_m.w0", "adam_m.w1": "adam_m.w1",
                         "adam_v.w0": "adam_v.w0", "adam_v.w1": "adam_v.w1"}))
cases.append(optim_case("sgd_weight_decay", lambda p: nn.SGD(p, learning_rate=0.1, weight_decay=0.01), {},
                        note="weight decay applies to every parameter here (names without beta/gamma/bias)"))

out = {"mindspore": ms.__version__, "cases": cases}
with open(os.path.join(HERE, "oracle.json"), "w") as f:
    json.dump(out, f, indent=None, separators=(",", ":"))
    f.write("\n")
print(f"wrote {len(cases)} cases to oracle.json")
