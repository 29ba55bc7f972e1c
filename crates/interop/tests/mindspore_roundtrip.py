#!/usr/bin/env python3
"""Optional interop check against real MindSpore 2.10 (CPU).

Needs `pip install mindspore==2.10.0` (about 800 MB); run it with that
environment's python:

  # Export each DSL program, run it in MindSpore (mindspore.load + nn.GraphCell)
  # and compare with `mirdsl run --format json` on the same random inputs:
  python mindspore_roundtrip.py export --mirdsl target/debug/mirdsl [FILE.mir ...]

  # Import MindSpore's own .mindir files, run the DSL text with mirdsl and
  # compare with MindSpore running the original file:
  python mindspore_roundtrip.py import --mirdsl target/debug/mirdsl FILE.mindir ...

  # One prepared case (used by the Rust test `tests/mindspore.rs`): DIR holds
  # model.mindir, in0.npy, in1.npy, ... and expected.json.
  python mindspore_roundtrip.py case DIR

  # Many prepared cases in one process (each a subfolder of ROOT, as DIR
  # above): one line per case, `NAME ok` or `NAME FAIL: why`.
  python mindspore_roundtrip.py cases ROOT

Prints one line per file and exits 0 only when everything matches.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

RTOL, ATOL = 1e-4, 1e-5
HERE = os.path.dirname(os.path.abspath(__file__))

NP_DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 5: np.int16, 6: np.int32,
             7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64, 17: np.float64}
DSL_DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i64": np.int64,
              "i32": np.int32, "i16": np.int16, "i8": np.int8, "u8": np.uint8, "bool": np.bool_}


def mindspore():
    import mindspore as ms
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_device("CPU")
    return ms


def model_inputs(path):
    """(name, dtype, shape) of each input of a .mindir's entry graph."""
    from mindspore.train import mind_ir_pb2
    m = mind_ir_pb2.ModelProto()
    with open(path, "rb") as f:
        m.ParseFromString(f.read())
    out = []
    for i in m.graph.input:
        t = i.tensor[0]
        out.append((i.name.split(":")[-1], NP_DTYPES[t.data_type], tuple(t.dims)))
    return out


def random_inputs(specs, seed=0):
    rng = np.random.default_rng(seed)
    arrays = []
    for _, dtype, shape in specs:
        if np.issubdtype(dtype, np.floating):
            arrays.append(rng.standard_normal(shape).astype(dtype))
        elif dtype == np.bool_:
            arrays.append(rng.integers(0, 2, shape).astype(np.bool_))
        else:
            arrays.append(rng.integers(0, 5, shape).astype(dtype))
    return arrays


def run_mindspore(path, arrays):
    ms = mindspore()
    net = ms.nn.GraphCell(ms.load(path))
    return net(*[ms.Tensor(a) for a in arrays])


def to_py(v):
    """A MindSpore result in `mirdsl run --format json`'s shape."""
    if isinstance(v, (tuple, list)):
        return [to_py(x) for x in v]
    if v is None:
        return None
    a = v.asnumpy() if hasattr(v, "asnumpy") else np.asarray(v)
    return {"shape": list(a.shape), "data": a.astype(np.float64).ravel().tolist()}


def compare(got, want, path="out"):
    """None when `got` (MindSpore) matches `want` (mirdsl JSON), else why not."""
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return f"{path}: expected a tuple of {len(want)}, got {got!r:.80}"
        for i, (g, w) in enumerate(zip(got, want)):
            e = compare(g, w, f"{path}[{i}]")
            if e:
                return e
        return None
    if want is None:
        return None if got is None else f"{path}: expected none"
    if "value" in want:  # a scalar
        want = {"shape": [], "data": [want["value"]]}
    if list(got["shape"]) != list(want["shape"]):
        return f"{path}: shape {got['shape']} != {want['shape']}"
    g = np.array(got["data"], dtype=np.float64)
    w = np.array([float(x) for x in want["data"]], dtype=np.float64)
    if not np.allclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True):
        i = int(np.argmax(np.abs(g - w)))
        return f"{path}: element {i}: MindSpore {g[i]} vs mirdsl {w[i]}"
    return None


def mirdsl_run(mirdsl, mir, names, arrays, tmp):
    cmd = [mirdsl, "run", mir, "--format", "json"]
    for i, (name, a) in enumerate(zip(names, arrays)):
        npy = os.path.join(tmp, f"in{i}.npy")
        np.save(npy, a)
        cmd += ["--arg", f"{name}={npy}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"mirdsl run failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


def run_case(tmp, timeout=180):
    """MindSpore on a prepared case, in a child process (a compile can hang)."""
    try:
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "case", tmp],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"MindSpore did not finish in {timeout} s"
    lines = [l for l in r.stdout.splitlines() if l.strip()]
    if r.returncode == 0 and lines and lines[-1] == "ok":
        return None
    err = [l for l in (r.stdout + r.stderr).splitlines()
           if l.strip() and not l.startswith("[WARNING]")]
    return " | ".join(err[-3:])[:500] or f"exit code {r.returncode}"


def prepare(mirdsl, mir, model, tmp):
    """Random inputs for `model`'s entry, and mirdsl's result on them."""
    specs = model_inputs(model)
    arrays = random_inputs(specs)
    want = mirdsl_run(mirdsl, mir, [s[0] for s in specs], arrays, tmp)
    with open(os.path.join(tmp, "expected.json"), "w") as f:
        json.dump(want, f)


def check_files(mirdsl, files, convert):
    """`convert(mirdsl, path, tmp)` gives (mir, model) or raises; compares."""
    ok = 0
    for path in files:
        name = os.path.basename(path)
        with tempfile.TemporaryDirectory() as tmp:
            try:
                mir, model = convert(mirdsl, path, tmp)
                prepare(mirdsl, mir, model, tmp)
                if model != os.path.join(tmp, "model.mindir"):
                    shutil.copy(model, os.path.join(tmp, "model.mindir"))
            except Exception as e:  # noqa: BLE001 - report and go on
                print(f"FAIL {name}: {str(e).strip()[:400]}", flush=True)
                continue
            e = run_case(tmp)
            print(f"{'ok  ' if e is None else 'FAIL'} {name}{'' if e is None else ': ' + e}",
                  flush=True)
            ok += e is None
    return ok


def exported(mirdsl, mir, tmp):
    model = os.path.join(tmp, "model.mindir")
    r = subprocess.run([mirdsl, "export", mir, "-o", model], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"export: {r.stderr.strip()}")
    return mir, model


def imported(mirdsl, model, tmp):
    mir = os.path.join(tmp, "imported.mir")
    r = subprocess.run([mirdsl, "import", model, "-o", mir], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"import: {r.stderr.strip()}")
    return mir, model


def export_mode(mirdsl, files):
    ok = check_files(mirdsl, files, exported)
    print(f"{ok}/{len(files)} exported programs match MindSpore")
    return ok == len(files)


def import_mode(mirdsl, files):
    ok = check_files(mirdsl, files, imported)
    print(f"{ok}/{len(files)} imported models match MindSpore")
    return ok == len(files)


def case_mode(case):
    """One output against expected.json; with expected_steps.json (a training
    step), the model runs once per recorded step in one process, each run
    seeing the weights the one before updated, and every output must match."""
    arrays = [np.load(p) for p in sorted(glob.glob(os.path.join(case, "in*.npy")),
                                         key=lambda p: int(os.path.basename(p)[2:-4]))]
    steps_path = os.path.join(case, "expected_steps.json")
    if os.path.exists(steps_path):
        with open(steps_path) as f:
            wants = json.load(f)["steps"]
    else:
        with open(os.path.join(case, "expected.json")) as f:
            wants = [json.load(f)]
    ms = mindspore()
    net = ms.nn.GraphCell(ms.load(os.path.join(case, "model.mindir")))
    for k, want in enumerate(wants):
        got = to_py(net(*[ms.Tensor(a) for a in arrays]))
        e = compare(got, want)
        if e is not None:
            print(f"FAIL: step {k}: {e}" if len(wants) > 1 else f"FAIL: {e}")
            return False
    print("ok")
    return True


def cases_mode(root):
    """Every case folder of `root` in this process; a failure goes on."""
    ok = True
    for case in sorted(glob.glob(os.path.join(root, "*", ""))):
        name = os.path.basename(os.path.dirname(case))
        try:
            arrays = [np.load(p) for p in sorted(glob.glob(os.path.join(case, "in*.npy")),
                                                 key=lambda p: int(os.path.basename(p)[2:-4]))]
            with open(os.path.join(case, "expected.json")) as f:
                want = json.load(f)
            ms = mindspore()
            net = ms.nn.GraphCell(ms.load(os.path.join(case, "model.mindir")))
            e = compare(to_py(net(*[ms.Tensor(a) for a in arrays])), want)
        except Exception as ex:  # noqa: BLE001 - report and go on
            lines = [l for l in str(ex).splitlines() if l.strip()]
            e = (lines[0] if lines else type(ex).__name__)[:300]
        print(f"{name} ok" if e is None else f"{name} FAIL: {e}", flush=True)
        ok = ok and e is None
    return ok


def main(argv):
    if len(argv) < 2 or argv[1] not in ("export", "import", "case", "cases"):
        print(__doc__)
        return 2
    mode = argv[1]
    if mode == "case":
        return 0 if case_mode(argv[2]) else 1
    if mode == "cases":
        return 0 if cases_mode(argv[2]) else 1
    args = argv[2:]
    mirdsl = "mirdsl"
    if args[:1] == ["--mirdsl"]:
        mirdsl, args = os.path.abspath(args[1]), args[2:]
    if mode == "export":
        files = args or sorted(glob.glob(os.path.join(HERE, "..", "test_data", "export", "*.mir")))
        return 0 if export_mode(mirdsl, files) else 1
    return 0 if import_mode(mirdsl, args) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
