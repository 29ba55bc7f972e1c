#!/usr/bin/env python3
"""A census of the zoo's MindIR: which primitives, in which form, how control flow
and side effects look. Writes CENSUS.md next to this script.

Needs mindspore==2.10.0 (for `mindspore.train.mind_ir_pb2`):
    .venv/bin/python testdata/zoo/census.py [--mirdsl target/debug/mirdsl]

With --mirdsl, each model is also given to `mirdsl import` and the primitives it
does not know yet are marked (a snapshot: it ages as support lands).
"""
import collections
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in testdata
sys.path.insert(0, HERE)
import gen_zoo  # noqa: E402 - the networks' descriptions

from mindspore.train import mind_ir_pb2  # noqa: E402

AT = mind_ir_pb2.AttributeProto
TP = mind_ir_pb2.TensorProto
PP = mind_ir_pb2.PrimitiveProto
ATTR_TYPE = {v: k for k, v in AT.AttributeType.items()}
DATA_TYPE = {v: k for k, v in TP.DataType.items()}
SHORT_DTYPE = {"FLOAT": "f32", "FLOAT16": "f16", "DOUBLE": "f64", "FLOAT64": "f64", "BFLOAT16": "bf16",
               "INT8": "i8", "INT16": "i16", "INT32": "i32", "INT64": "i64", "UINT8": "u8",
               "BOOL": "bool"}

# Primitives that only thread state through a graph (no state changes by themselves).
MONAD_PLUMBING = {"Load", "UpdateState", "Depend"}
# Control flow and higher-order primitives.
CONTROL = {"Switch", "SwitchLayer", "Partial", "J", "ForiLoop", "WhileLoop", "Scan"}


def dtype_of(tensor):
    return SHORT_DTYPE.get(DATA_TYPE.get(tensor.data_type, "?"), DATA_TYPE.get(tensor.data_type, "?"))


def scalar_field(a, single, repeated):
    """A scalar's value: top-level attributes use `i`/`f`/..., elements of a TUPLE
    or LIST use the repeated field (`ints: 1`) instead."""
    rep = getattr(a, repeated)
    return rep[0] if len(rep) else getattr(a, single)


def render_value(a, depth=0):
    """A constant's AttributeProto as short text."""
    t = ATTR_TYPE.get(a.type, str(a.type))
    if t == "FLOAT":
        return repr(float("%.6g" % scalar_field(a, "f", "floats")))
    if t == "DOUBLE":
        return repr(float("%.6g" % scalar_field(a, "d", "doubles")))
    if t == "BOOL":
        return "True" if scalar_field(a, "i", "ints") else "False"
    if t.startswith("INT") or t.startswith("UINT"):
        return str(scalar_field(a, "i", "ints"))
    if t == "STRING":
        return repr(scalar_field(a, "s", "strings").decode(errors="replace"))
    if t == "NONE":
        return "None"
    if t == "UMONAD":
        return "U"
    if t == "IOMONAD":
        return "IO"
    if t in ("TUPLE", "LIST"):
        if depth > 1:
            return "(...)" if t == "TUPLE" else "[...]"
        inner = ", ".join(render_value(v, depth + 1) for v in a.values[:8])
        if len(a.values) > 8:
            inner += ", ..."
        return f"({inner}{',' if len(a.values) == 1 else ''})" if t == "TUPLE" else f"[{inner}]"
    if t == "TENSOR":
        return f"tensor<{dtype_of(a.t)}{list(a.t.dims)}>"
    if t == "TENSORS" and a.tensors:
        return f"tensor<{dtype_of(a.tensors[0])}{list(a.tensors[0].dims)}>"
    return t


def const_kind(a):
    """The constant's type, for signatures: INT64, TUPLE, NONE..."""
    t = ATTR_TYPE.get(a.type, str(a.type))
    if t in ("TUPLE", "LIST") and a.values:
        kinds = sorted({ATTR_TYPE.get(v.type, "?") for v in a.values})
        return f"{t}<{'|'.join(kinds)}>"
    return t


def short_graph(name):
    """`4303_4285_↵__main____while_cond__locals__WhileCond_construct_1492` -> `↵WhileCond_construct`."""
    s = re.sub(r"^(\d+_)+", "", name)
    s = re.sub(r"_\d+$", "", s)
    m = re.match(r"^([^\w]*)(.*)$", s)
    glyphs, rest = m.group(1), m.group(2)
    glyphs = glyphs.strip("_")
    if "__locals__" in rest:
        rest = rest.split("__locals__")[-1]
    rest = rest.replace("mindspore_nn_wrap_cell_wrapper_", "").replace("mindspore_nn_layer_", "")
    return (glyphs + rest) or name


class Model:
    """One parsed model.mindir with everything the census reports."""

    def __init__(self, name, path):
        self.name = name
        self.size = os.path.getsize(path)
        m = mind_ir_pb2.ModelProto()
        with open(path, "rb") as f:
            m.ParseFromString(f.read())
        self.proto = m
        self.graphs = [m.graph] + list(m.functions)
        self.graph_names = {g.name for g in self.graphs}
        self.prims = {p.name: p for p in m.primitives}
        self.calls = []  # (primitive op_type, PrimitiveProto or None, [input kinds], [input renders], graph)
        self.prim_count = collections.Counter()
        self.edges = collections.defaultdict(set)  # graph -> graphs it references
        self.direct_graph_calls = 0
        self.value_calls = 0  # calls of a value computed by a node (after Switch, of a partial...)
        self.value_call_sources = collections.Counter()
        self.monad_constants = collections.Counter()
        self.monad_params = 0
        self.ref_params = 0
        self.cnodes = 0
        for g in self.graphs:
            self._scan_graph(g)
        self.weights = list(m.graph.parameter)
        self.weight_bytes = sum(len(p.raw_data) for p in self.weights)

    def _scan_graph(self, g):
        nodes = {n.name: n for n in g.node}
        for n in g.node:
            for o in n.output:
                nodes.setdefault(o, n)
        inputs = {i.name for i in g.input}
        weights = {p.name for p in g.parameter}
        for i in g.input:
            if i.attr_info.type in (AT.UMONAD, AT.IOMONAD):
                self.monad_params += 1
            if i.tensor and i.tensor[0].ref_key:
                self.ref_params += 1
        for n in g.node:
            if n.op_type == "Constant":
                for a in n.attribute:
                    if a.name == "value" and a.type in (AT.UMONAD, AT.IOMONAD):
                        self.monad_constants[ATTR_TYPE[a.type]] += 1
                continue
            self.cnodes += 1
            kinds, renders = [], []
            for inp in n.input:
                if inp in self.graph_names:
                    self.edges[g.name].add(inp)
                    kinds.append("graph")
                    renders.append("@" + short_graph(inp))
                elif inp in inputs:
                    kinds.append("node")
                    renders.append("%in")
                elif inp in weights:
                    kinds.append("node")
                    renders.append("%weight")
                elif inp in nodes and nodes[inp].op_type == "Constant":
                    vals = [a for a in nodes[inp].attribute if a.name == "value"]
                    if vals:
                        kinds.append("const " + const_kind(vals[0]))
                        renders.append(render_value(vals[0]))
                    else:
                        kinds.append("const ?")
                        renders.append("?")
                else:
                    kinds.append("node")
                    renders.append("%")
            op = n.op_type
            target = op[5:] if op.startswith("REF::") else op
            if target in self.prims:
                p = self.prims[target]
                self.prim_count[p.op_type] += 1
                self.calls.append((p.op_type, p, kinds, renders, g.name))
            elif target in self.graph_names:
                self.direct_graph_calls += 1
                self.edges[g.name].add(target)
            elif op.startswith("REF::"):
                self.value_calls += 1
                src = nodes.get(target)
                src_op = "?"
                if src is not None:
                    s = src.op_type[5:] if src.op_type.startswith("REF::") else src.op_type
                    src_op = self.prims[s].op_type if s in self.prims else s
                self.value_call_sources[src_op] += 1
            else:
                # Older files: a bare primitive name.
                self.prim_count[op] += 1
                self.calls.append((op, None, kinds, renders, g.name))

    # -- summaries -----------------------------------------------------------

    def loops(self):
        """Strongly connected components of the graph-reference graph that are cycles."""
        index, low, on, stack, out = {}, {}, set(), [], []
        counter = [0]

        def visit(v):
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on.add(v)
            for w in self.edges.get(v, ()):
                if w not in index:
                    visit(w)
                    low[v] = min(low[v], low[w])
                elif w in on:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in self.edges.get(v, ()):
                    out.append(comp)

        sys.setrecursionlimit(10000)
        for g in self.graphs:
            if g.name not in index:
                visit(g.name)
        return out

    def writes(self):
        """Primitives that change state: Assign*, and any with side_effect_mem."""
        found = collections.Counter()
        for op, p, _, _, _ in self.calls:
            mem = p is not None and any(a.name == "side_effect_mem" and a.i for a in p.attribute)
            if op.startswith("Assign") or mem:
                found[op] += 1
        return found

    def side_effects(self):
        w = self.writes()
        plumbing = {k: self.prim_count[k] for k in sorted(MONAD_PLUMBING) if self.prim_count[k]}
        if w:
            return "writes state: " + ", ".join(f"{k} x{v}" for k, v in sorted(w.items()))
        if plumbing or self.monad_constants:
            return "reads weights through a monad (no writes)"
        return "none"

    def control_flow(self):
        parts = []
        sw = self.prim_count["Switch"]
        if sw:
            parts.append(f"Switch x{sw}")
        if self.prim_count["SwitchLayer"]:
            parts.append(f"SwitchLayer x{self.prim_count['SwitchLayer']}")
        if self.prim_count["Partial"]:
            parts.append(f"Partial x{self.prim_count['Partial']}")
        loops = self.loops()
        if loops:
            parts.append(f"{len(loops)} loop{'s' if len(loops) > 1 else ''} (recursive graphs)")
        elif len(self.graphs) > 1:
            parts.append("branches only")
        return ", ".join(parts) or "none (one graph)"

    def inputs_text(self):
        out = []
        for i in self.proto.graph.input:
            if i.tensor:
                t = i.tensor[0]
                out.append(f"{dtype_of(t)}{list(t.dims)}")
            else:
                out.append(ATTR_TYPE.get(i.attr_info.type, "?"))
        return ", ".join(out)


def mirdsl_unknown(mirdsl, path):
    """The primitives `mirdsl import` reports unknown, or None if it imports, or the error."""
    r = subprocess.run([mirdsl, "import", path, "-o", os.devnull], capture_output=True, text=True)
    if r.returncode == 0:
        return set(), None
    m = re.search(r"unknown primitives? \([^)]*\): (.*)", r.stderr)
    if m:
        return {p.strip() for p in m.group(1).split(",")}, None
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    return set(), (lines[0] if lines else f"exit {r.returncode}")


def md_escape(s):
    return s.replace("|", "\\|")


def main(argv):
    mirdsl = None
    if "--mirdsl" in argv:
        mirdsl = os.path.abspath(argv[argv.index("--mirdsl") + 1])
    names = sorted(d for d in os.listdir(HERE) if os.path.isfile(os.path.join(HERE, d, "model.mindir")))
    models = [Model(n, os.path.join(HERE, n, "model.mindir")) for n in names]
    unknown, import_errors = {}, {}
    if mirdsl:
        for mo in models:
            u, err = mirdsl_unknown(mirdsl, os.path.join(HERE, mo.name, "model.mindir"))
            unknown[mo.name] = u
            if err:
                import_errors[mo.name] = err
    all_unknown = set().union(*unknown.values()) if unknown else set()

    # Per primitive.
    users = collections.defaultdict(set)
    uses = collections.Counter()
    forms = collections.defaultdict(collections.Counter)
    attrs = collections.defaultdict(dict)
    arities = collections.defaultdict(collections.Counter)
    positions = collections.defaultdict(lambda: collections.defaultdict(collections.Counter))
    examples = collections.defaultdict(list)
    for mo in models:
        for op, p, kinds, renders, _ in mo.calls:
            users[op].add(mo.name)
            uses[op] += 1
            form = "?"
            if p is not None:
                form = {PP.PRIMITIVE: "old", PP.PRIMITIVE_FUNCTION: "func"}.get(p.prim_type, "?")
                for a in p.attribute:
                    if a.name not in attrs[op]:
                        attrs[op][a.name] = render_value(a) if a.name not in (
                            "input_names", "output_names") else "..."
            forms[op][form] += 1
            arities[op][len(kinds)] += 1
            for i, k in enumerate(kinds):
                positions[op][i][k] += 1
            ex = f"{op}({', '.join(renders)})"
            score = sum(1 for r in renders if not r.startswith("%")) - len(ex) / 1000
            if not examples[op] or score > examples[op][0][0]:
                examples[op] = [(score, ex)]

    lines = []
    w = lines.append
    w("# Census of the zoo's MindIR (MindSpore 2.10.0)")
    w("")
    w("Generated by `census.py` from every `*/model.mindir` here (parsed with "
      "`mindspore.train.mind_ir_pb2`); do not edit by hand. What each network is: "
      "[README.md](README.md).")
    if mirdsl:
        commit = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        w("")
        w(f"The **mirdsl** columns are a snapshot: `mirdsl import` as built at commit `{commit}` "
          "(rerun `census.py --mirdsl target/debug/mirdsl` to refresh). "
          "`EXPECTED_FAILURES` is the live list.")
    w("")
    w("## Summary")
    w("")
    w(f"- {len(models)} networks, {len(uses)} distinct primitives, "
      f"{sum(len(mo.graphs) for mo in models)} graphs, {sum(mo.cnodes for mo in models)} CNodes, "
      f"{sum(mo.size for mo in models) // 1024} KiB of `.mindir`.")
    n_func = sum(1 for op in uses if forms[op].get("func") and not forms[op].get("old"))
    n_old = sum(1 for op in uses if forms[op].get("old") and not forms[op].get("func"))
    w(f"- Forms: {n_func} primitives appear only as primitive functions (`prim_type: "
      f"PRIMITIVE_FUNCTION`, every argument a node input, constants as `Constant` nodes), "
      f"{n_old} only as old-style primitives (`prim_type: PRIMITIVE`, arguments in the "
      f"`PrimitiveProto`'s attributes), {len(uses) - n_func - n_old} both ways.")
    if mirdsl:
        ranked = sorted(all_unknown, key=lambda p: (-len([m for m in unknown if p in unknown[m]]), p))
        w(f"- Unknown to `mirdsl import` (snapshot): {len(all_unknown)} primitives; by the "
          "number of networks they block: " + ", ".join(
              f"{p} ({len([m for m in unknown if p in unknown[m]])})" for p in ranked) + ".")
        blocked = sorted(m for m in unknown if unknown[m])
        w(f"- Networks blocked at import by unknown primitives: {len(blocked)} of {len(models)}.")
    loops = [mo.name for mo in models if mo.loops()]
    branchy = [mo.name for mo in models if len(mo.graphs) > 1 and not mo.loops()]
    w(f"- Networks with loops (cycles of graphs): {', '.join(loops) or 'none'}; with branch "
      f"graphs only: {', '.join(branchy) or 'none'}; every other network is one graph.")
    writers = [mo.name for mo in models if mo.writes()]
    w(f"- Networks that write state: {', '.join(writers) or 'none'}. Nearly every network "
      "reads its weights with `Load(weight, U)` and ends with `UpdateState`/`Depend` (see below).")
    w("")
    w("## How control flow appears")
    w("")
    w(CONTROL_FLOW_TEXT)
    w("")
    w("## How training cells appear")
    w("")
    w(TRAINING_TEXT)
    w("")
    w("## Side effects and monads in inference networks")
    w("")
    w(MONAD_TEXT)
    w("")
    w("## Networks")
    w("")
    cols = "| network | graphs | CNodes | weights | inputs | control flow | side effects | .mindir |"
    if mirdsl:
        cols += " unknown to mirdsl import |"
    w(cols)
    w("|" + "---|" * (cols.count("|") - 1))
    for mo in models:
        row = (f"| [{mo.name}](#{mo.name}) | {len(mo.graphs)} | {mo.cnodes} | {len(mo.weights)} "
               f"({mo.weight_bytes // 1024} KiB) | {mo.inputs_text()} | {mo.control_flow()} | "
               f"{mo.side_effects()} | {mo.size // 1024} KiB |")
        if mirdsl:
            u = ", ".join(sorted(unknown[mo.name])) or (
                "(imports)" if mo.name not in import_errors else md_escape(import_errors[mo.name]))
            row += f" {u} |"
        w(row)
    w("")
    w("## Primitives")
    w("")
    w("Sorted by the number of networks that use them. **form**: `func` = primitive function "
      "(`PRIMITIVE_FUNCTION`: all arguments are node inputs, defaults included, as `Constant` "
      "nodes), `old` = old-style primitive (`PRIMITIVE`: arguments are attributes of the "
      "primitive). **inputs**: the node inputs per call (`node` = a computed value, parameter "
      "or weight; `const T` = a `Constant` node of AttributeType T; `graph` = a FuncGraph), "
      "with alternatives seen separated by `/`. **attributes**: the `PrimitiveProto` "
      "attributes with one value seen.")
    w("")
    head = "| primitive | form | networks | calls | inputs | attributes | example |"
    if mirdsl:
        head = "| primitive | mirdsl | form | networks | calls | inputs | attributes | example |"
    w(head)
    w("|" + "---|" * (head.count("|") - 1))
    for op in sorted(uses, key=lambda o: (-len(users[o]), o)):
        form = "/".join(f for f in ("func", "old", "?") if forms[op].get(f))
        ar = sorted(arities[op])
        if len(ar) > 3 or ar[-1] > 12:
            kinds = sorted({k for i in positions[op] for k in positions[op][i]})
            sig = f"variadic, {ar[0]} to {ar[-1]} inputs: " + "/".join(kinds)
        elif len(ar) == 1:
            sig = ", ".join("/".join(sorted(positions[op][i])) for i in range(ar[0]))
        else:
            sig = ("/".join(str(n) for n in ar) + " inputs: "
                   + ", ".join("/".join(sorted(positions[op][i])) for i in range(ar[-1])))
        at = ", ".join(f"{k}={v}" for k, v in sorted(attrs[op].items()))
        nets = sorted(users[op])
        nets_text = f"{len(nets)}: " + (", ".join(nets) if len(nets) <= 8 else
                                        ", ".join(nets[:8]) + f", +{len(nets) - 8}")
        ex = md_escape(examples[op][0][1]) if examples[op] else ""
        if len(ex) > 160:
            ex = ex[:157] + "..."
        cells = [f"`{op}`"]
        if mirdsl:
            cells.append("**unknown**" if op in all_unknown else "known")
        cells += [form, nets_text, str(uses[op]), md_escape(sig) or "(none)", md_escape(at) or "",
                  f"`{ex}`" if ex else ""]
        w("| " + " | ".join(cells) + " |")
    w("")
    w("Dtype arguments of primitive functions (`Cast`'s `dtype`, `ScalarToTensor`'s, ...) are "
      "`INT64` constants holding MindSpore TypeIds: " + TYPEID_TEXT + ".")
    w("")
    w("## Per network")
    for mo in models:
        w("")
        w(f"### {mo.name}")
        w("")
        desc = gen_zoo.NETS[mo.name][0] if mo.name in gen_zoo.NETS else ""
        if desc:
            w(desc + ".")
            w("")
        w(f"- graphs: {len(mo.graphs)} ({', '.join('`' + short_graph(g.name) + '`' for g in mo.graphs)})")
        w(f"- CNodes: {mo.cnodes}; weights: {len(mo.weights)} ({mo.weight_bytes} bytes); inputs: "
          f"{mo.inputs_text()}; .mindir: {mo.size} bytes")
        w("- primitives: " + ", ".join(f"{k} x{v}" if v > 1 else k
                                       for k, v in sorted(mo.prim_count.items())))
        w(f"- control flow: {mo.control_flow()}")
        calls = []
        if mo.direct_graph_calls:
            calls.append(f"{mo.direct_graph_calls} direct call{'s' if mo.direct_graph_calls > 1 else ''} of graphs (`REF::<graph>`)")
        if mo.value_calls:
            src = ", ".join(f"{k} x{v}" for k, v in sorted(mo.value_call_sources.items()))
            calls.append(f"{mo.value_calls} call{'s' if mo.value_calls > 1 else ''} of computed functions (`REF::<node>`, of: {src})")
        if calls:
            w("- calls: " + "; ".join(calls))
        for comp in mo.loops():
            members = [short_graph(g) for g in comp]
            w(f"- loop: {' -> '.join(sorted(members))} call each other")
        se = [mo.side_effects()]
        if mo.monad_constants:
            se.append("monad constants: " + ", ".join(f"{k} x{v}" for k, v in sorted(mo.monad_constants.items())))
        if mo.monad_params:
            se.append(f"{mo.monad_params} graph parameters of monad type")
        if mo.ref_params:
            se.append(f"{mo.ref_params} graph parameters that are weights passed by reference (`ref_key`)")
        plumbing = [f"{k} x{mo.prim_count[k]}" for k in sorted(MONAD_PLUMBING) if mo.prim_count[k]]
        if plumbing:
            se.append("state plumbing: " + ", ".join(plumbing))
        w("- side effects: " + "; ".join(se))
        if mirdsl:
            if mo.name in import_errors:
                w(f"- `mirdsl import` (snapshot): {import_errors[mo.name]}")
            else:
                w("- `mirdsl import` (snapshot): " + (
                    "unknown " + ", ".join(sorted(unknown[mo.name])) if unknown[mo.name] else "imports"))
    with open(os.path.join(HERE, "CENSUS.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote CENSUS.md: {len(models)} networks, {len(uses)} primitives")
    return 0


def typeid_text():
    try:
        import mindspore as ms
        from mindspore._c_expression import typing
        pairs = [(int(typing.type_to_type_id(t)), str(t)) for t in
                 (ms.bool_, ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8, ms.float16,
                  ms.float32, ms.float64, ms.bfloat16)]
        return ", ".join(f"{i} = {n}" for i, n in pairs)
    except Exception:  # noqa: BLE001 - informative only
        return "(not available)"


TYPEID_TEXT = typeid_text()

CONTROL_FLOW_TEXT = """\
MindSpore 2.10 writes no loop primitive into a `.mindir`: every loop is a set of
**mutually recursive FuncGraphs** chosen by `Switch`, and `if` is `Switch` between
branch graphs. `SwitchLayer` does not occur in the zoo.

- **`if` on a tensor** (`nested_if`): the condition is computed (`Greater`, `LessScalar`
  on a `SumExt`...), then `Switch(cond, ✓branch, ✗branch)` picks a graph (with captured
  values the operands are `Partial(graph, captured...)`), and the next node calls the
  picked value: its `op_type` is `REF::<the Switch node's name>` with no inputs (or the
  call arguments). Nested `if`s give nested branch graphs (`✓✗`, `2✓`...); the code after
  the `if` stays in the outer graph. 7 graphs for two levels of `if`.
- **`while` in Python** (`while_tensor_cond`, `while_tensor_state`): four graphs. The
  entry graph calls the **header** `↵` (`REF::<header>` with the initial values, the
  loop-carried variables become its parameters, named `фx`, `фacc`...). The header
  computes the condition and does `Switch(cond, Partial(↻body, state...), Partial(↓after,
  state...))`, then calls the result. The **body** `↻` computes the next state and calls
  the header again (a tail call `REF::<header>`), so the loop is header -> body -> header
  recursion; **after** `↓` returns the final values. Weights used in the loop are passed
  into the header and body as parameters with a `ref_key` (by reference), together with
  a `U` monad parameter `u` when they are `Load`ed there.
- **`ops.WhileLoop` / `ops.ForiLoop`** (`while_loop_op`, `fori_loop`): the primitive is
  expanded at compile time into the same shape: graphs `while_loop`, `loop_func`,
  `return_func`, with `Switch` + two `Partial`s in `while_loop`; `loop_func` calls
  `while_loop` back. In `fori_loop` the counter is a **Python int scalar** carried
  across the recursion (`ScalarAdd`, then `ScalarToTensor` + `Cast` to compare it with
  the tensor bound): loop state is not always a tensor. `ForiLoop` with a constant
  bound and `unroll=False` does not compile in 2.10 on CPU, so the zoo's bound is a tensor.
- **`for` over `range(constant)` or a `CellList`** (`for_loop`, `bert_encoder`): unrolled
  by the compiler; one graph, no trace of the loop.
- **`nn.LSTM`** on CPU is one old-style `LSTM` primitive per layer on time-major input
  (`Transpose`), fed a flat weight vector built in the graph (`Reshape` of `weight_ih`,
  `weight_hh` and `bias_ih + bias_hh`, then `Concat`) and the layer's slice of h0/c0
  (`StridedSlice` + `ExpandDims`); its outputs are taken with `TupleGetItem` and the
  layers' h_n/c_n `Concat`ed. **`nn.GRU`** is unrolled over the 5 time steps into
  `MatMul`/`Split`/`Sigmoid`/`Tanh`/`Mul`, gathered by `make_list` + `Stack` (no loop,
  no GRU primitive). Neither gives control flow in the file."""

TRAINING_TEXT = """\
An exported `nn.TrainOneStepCell` (`train_sgd`, `train_momentum`, `train_adam`) is **one
graph** with the forward pass, the **backward pass already differentiated** by MindSpore
(`ReluGrad`, `BiasAddGrad`, `Conv2DBackpropFilter`, `MatMul` with transposes,
`SparseSoftmaxCrossEntropyWithLogits` with `is_grad=True` for the loss gradient), and
the **update**. Its inputs are the data and labels only; every weight and optimizer
slot is a `GraphProto.parameter` (the file's initial values): `accum.*` (SGD),
`moments.*` (Momentum), `moment1.*`, `moment2.*`, `beta1_power`, `beta2_power`
(Adam), `learning_rate`, `momentum`, `global_step`... The update is done by
side-effecting primitives with `side_effect_mem=True` that write their first input in
place: old-style `SGD`, `ApplyMomentum`, `Adam` (one per weight, with the weight and its
slots as inputs), plus the primitive functions `AssignAdd(global_step, 1)` and, for
Adam, `Assign(beta1_power, ...)`/`Assign(beta2_power, ...)`. Ordering is carried by a `U`
monad: `Load(param, U)` reads, each write takes the current `UpdateState` chain, and
`UpdateState(u, write)` threads it on; the loss is returned through `Depend(loss,
MakeTuple(successes...))` and a final `Depend(..., UpdateState(...))`. Running the file
twice in MindSpore (`GraphCell`) gives a different loss the second time: the weights
persist in the loaded graph. The zoo records both losses and the weights after two
steps."""

MONAD_TEXT = """\
Even pure inference networks are not pure in the file: MindSpore reads every weight with
`Load(weight, U)` where `U` is a `UMONAD` constant, collects the loads in a
`MakeTuple`, makes `UpdateState(U, that tuple)` and returns `Depend(result,
UpdateState(...))`. An importer can treat `Load(w, u)` as `w`, `UpdateState` as a
token, and `Depend(x, ...)` as `x` when nothing writes state (no `Assign*`, no primitive
with `side_effect_mem`). Inside loops the monad is a graph parameter (`u`, type
`UMonadType`) threaded through the recursion."""


if __name__ == "__main__":
    sys.exit(main(sys.argv))
