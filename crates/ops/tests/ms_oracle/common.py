"""Shared helpers for the MindSpore op oracle.

Each `<family>.py` beside this file records cases: a registry primitive called on
inputs with attributes, and what MindSpore 2.10 (CPU, PyNative) computes for the
same call. `cargo test -p ops --test ms_oracle` replays every case with the
registry's kernel and compares (dtype and shape exactly, values within tolerance).

Regenerate one family (needs `pip install mindspore==2.10.0`, an 800 MB install):
    python crates/ops/tests/ms_oracle/<family>.py
It writes `<family>.json` beside the script; commit both.
"""
import json
import math
import os

import numpy as np
import mindspore as ms
from mindspore import Tensor

ms.set_context(mode=ms.PYNATIVE_MODE)
ms.set_device("CPU")

_DT = {
    "float16": "f16", "float32": "f32", "float64": "f64", "bfloat16": "bf16",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
    "bool": "bool",
}
_MS_DTYPES = {
    "f16": ms.float16, "f32": ms.float32, "f64": ms.float64, "bf16": ms.bfloat16,
    "i8": ms.int8, "i16": ms.int16, "i32": ms.int32, "i64": ms.int64, "u8": ms.uint8,
    "bool": ms.bool_,
}


def _num(x):
    """A JSON number, or a string for the values JSON cannot hold."""
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def enc(v):
    """A value in the form the Rust runner reads: tensors as
    {"dtype", "shape", "data"}, tuples and lists as arrays, Python scalars as
    rank-0 tensors of their MindSpore dtype (int64, float32, bool)."""
    if isinstance(v, (tuple, list)):
        return [enc(e) for e in v]
    if isinstance(v, Tensor):
        if v.dtype == ms.bfloat16:
            return {"dtype": "bf16", "shape": list(v.shape),
                    "data": [_num(e) for e in v.float().asnumpy().reshape(-1)]}
        v = v.asnumpy()
    if isinstance(v, (bool, np.bool_)):
        v = np.array(v, dtype=np.bool_)
    elif isinstance(v, (int, np.integer)) and not isinstance(v, np.ndarray):
        v = np.array(v, dtype=np.int64)
    elif isinstance(v, (float, np.floating)) and not isinstance(v, np.ndarray):
        v = np.array(v, dtype=np.float32)
    if isinstance(v, np.ndarray):
        return {"dtype": _DT[str(v.dtype)], "shape": list(v.shape),
                "data": [_num(e) for e in v.reshape(-1)]}
    raise TypeError(f"cannot encode {type(v)}")


def attr(v):
    """An attribute value: int, float, bool, str, a tuple of them, or a dtype."""
    if isinstance(v, (tuple, list)):
        return [attr(e) for e in v]
    for name, t in _MS_DTYPES.items():
        if v is t or (not isinstance(v, (int, float, str, bool)) and v == t):
            return {"dtype": name}
    if v is None:
        return None
    return _num(v) if not isinstance(v, str) else v


class Oracle:
    """Collects cases; `save()` writes `<family>.json` next to the script."""

    def __init__(self, family):
        self.family = family
        self.cases = []
        self.rng = np.random.default_rng(abs(hash(family)) % (2**32))

    def rand(self, *shape, lo=-1.0, hi=1.0, dtype=np.float32):
        return self.rng.uniform(lo, hi, size=shape).astype(dtype)

    def ints(self, *shape, lo=0, hi=10, dtype=np.int64):
        return self.rng.integers(lo, hi, size=shape).astype(dtype)

    def case(self, op, inputs, attrs, expected, rtol=1e-5, atol=1e-6, note="", outputs=None):
        """`op`: the registry's primitive name; `inputs`: numpy arrays (or
        tuples of them, or Python scalars) in the registry's input order;
        `attrs`: the registry's attribute names and values; `expected`: what
        MindSpore returned for the same call; `outputs`: for a tuple result,
        the indices of the elements to compare (default: all)."""
        case = {
            "op": op,
            "inputs": [enc(i) for i in inputs],
            "attrs": {k: attr(v) for k, v in attrs.items()},
            "expected": enc(expected),
            "rtol": rtol,
            "atol": atol,
            "note": note,
        }
        if outputs is not None:
            # Compare only these elements of a tuple result.
            case["outputs"] = list(outputs)
        self.cases.append(case)

    def save(self):
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, f"{self.family}.json")
        with open(path, "w") as f:
            json.dump({"mindspore": ms.__version__, "cases": self.cases}, f, indent=None,
                      separators=(",", ":"))
            f.write("\n")
        print(f"{path}: {len(self.cases)} cases")
