"""PyTorch (eager and torch.compile) on CUDA: the models of `bench run --device gpu`.

Prints one line per step, `NAME EAGER_MS COMPILED_MS` (median of RUNS timed steps
after warm-up, each ended by torch.cuda.synchronize()), which `bench run --device
gpu` reads; run it alone for the figures:

    python crates/bench/torch_gpu.py [RUNS]

The models are those of crates/bench/models/*.mir: a training step is the loss
and the gradients of every weight (value_and_grad), with no optimizer update.
MatMul in full f32 (TF32 off, PyTorch's default for matmul), as mirdsl's cuBLAS
calls.
"""

import statistics
import sys
import time

import torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = torch.device("cuda")
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 15


def param(*shape, std=None, value=None):
    if std is not None:
        t = torch.randn(*shape, device=dev) * std
    else:
        t = torch.full(shape, value, device=dev)
    return t.requires_grad_(True)


def mlp_model():
    w = {
        "w1": param(256, 784, std=0.05), "b1": param(256, value=0.0),
        "w2": param(256, 256, std=0.05), "b2": param(256, value=0.0),
        "w3": param(10, 256, std=0.05), "b3": param(10, value=0.0),
    }

    def loss(x, labels):
        h1 = F.relu(F.linear(x, w["w1"], w["b1"]))
        h2 = F.relu(F.linear(h1, w["w2"], w["b2"]))
        return F.cross_entropy(F.linear(h2, w["w3"], w["b3"]), labels)

    return w, loss, (torch.rand(1024, 784, device=dev) - 0.5, torch.arange(1024, device=dev) % 10)


def transformer_model():
    d, heads, seq, ff = 256, 4, 128, 1024
    w = {}
    for n in "qkvo":
        w[n + "w"] = param(d, d, std=0.06)
        w[n + "b"] = param(d, value=0.0)
    w.update({
        "g1": param(d, value=1.0), "be1": param(d, value=0.0),
        "w1": param(ff, d, std=0.06), "b1": param(ff, value=0.0),
        "w2": param(d, ff, std=0.03), "b2": param(d, value=0.0),
        "g2": param(d, value=1.0), "be2": param(d, value=0.0),
        "hw": param(10, d, std=0.06), "hb": param(10, value=0.0),
    })

    def split(t):
        return t.reshape(-1, seq, heads, d // heads).permute(0, 2, 1, 3)

    def loss(x, labels):
        h = x.reshape(-1, d)
        q, k, v = (split(F.linear(h, w[n + "w"], w[n + "b"])) for n in "qkv")
        p = torch.softmax(q @ k.transpose(-1, -2) * 0.125, dim=-1)
        a = (p @ v).permute(0, 2, 1, 3).reshape(-1, d)
        o = F.linear(a, w["ow"], w["ob"])
        h1 = F.layer_norm(h + o, (d,), w["g1"], w["be1"], eps=1e-5)
        f = F.gelu(F.linear(h1, w["w1"], w["b1"]), approximate="tanh")
        h2 = F.layer_norm(h1 + F.linear(f, w["w2"], w["b2"]), (d,), w["g2"], w["be2"], eps=1e-5)
        pooled = h2.reshape(-1, seq, d).mean(dim=1)
        return F.cross_entropy(F.linear(pooled, w["hw"], w["hb"]), labels)

    return w, loss, (torch.rand(8, seq, d, device=dev) - 0.5, torch.arange(8, device=dev) % 10)


def resnet_model():
    w = {}
    for b in ("b1", "b2"):
        for c in ("1", "2"):
            w[f"{b}c{c}"] = param(64, 64, 3, 3, std=0.06)
            w[f"{b}g{c}"] = param(64, value=1.0)
            w[f"{b}be{c}"] = param(64, value=0.0)
    w["hw"] = param(10, 64, std=0.1)
    w["hb"] = param(10, value=0.0)

    def block(x, b):
        y = F.conv2d(x, w[f"{b}c1"], padding=1)
        y = F.relu(F.batch_norm(y, None, None, w[f"{b}g1"], w[f"{b}be1"], training=True))
        y = F.conv2d(y, w[f"{b}c2"], padding=1)
        y = F.batch_norm(y, None, None, w[f"{b}g2"], w[f"{b}be2"], training=True)
        return F.relu(y + x)

    def loss(x, labels):
        pooled = block(block(x, "b1"), "b2").mean(dim=(2, 3))
        return F.cross_entropy(F.linear(pooled, w["hw"], w["hb"]), labels)

    return w, loss, (torch.rand(16, 64, 32, 32, device=dev) - 0.5, torch.arange(16, device=dev) % 10)


def timed(fn, runs=RUNS):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t) * 1e3)
    return statistics.median(samples)


def step_fn(weights, loss, inputs):
    params = list(weights.values())

    def step():
        value = loss(*inputs)
        return value, torch.autograd.grad(value, params)

    return step


def main():
    torch.manual_seed(0)
    for name, make in (("mlp", mlp_model), ("transformer", transformer_model), ("resnet", resnet_model)):
        weights, loss, inputs = make()
        eager = timed(step_fn(weights, loss, inputs))
        try:
            compiled = timed(step_fn(weights, torch.compile(loss), inputs))
        except Exception as e:  # torch.compile needs a working Triton
            print(f"# torch.compile failed on {name}: {e}", file=sys.stderr)
            compiled = float("nan")
        print(f"{name} {eager:.4f} {compiled:.4f}", flush=True)
    n = 4096
    a, b = torch.randn(n, n, device=dev), torch.randn(n, n, device=dev)
    eager = timed(lambda: a @ b)
    compiled_mm = torch.compile(lambda x, y: x @ y)
    compiled = timed(lambda: compiled_mm(a, b))
    print(f"gemm {eager:.4f} {compiled:.4f}", flush=True)
    print(f"# gemm: {2 * n ** 3 / eager / 1e6:.0f} GFLOP/s eager on {torch.cuda.get_device_name()}", file=sys.stderr)


if __name__ == "__main__":
    main()
