#!/usr/bin/env python3
"""Generate `crates/ms-schema/src/generated.rs`: every MindSpore primitive.

Usage:

    python3 crates/ms-schema/data/gen_mindspore_schemas.py MINDSPORE_PACKAGE_DIR [-o OUT.rs]

`MINDSPORE_PACKAGE_DIR` is an installed `mindspore` package (the directory
holding `ops/` and `include/`, e.g.
`.../site-packages/mindspore`). MindSpore is never imported: its sources are
read with Python's `ast` (and its C++ headers with regular expressions), so
the script runs with any Python 3.9+ and no dependencies.

What it reads:

- `ops/auto_generate/gen_ops_prim.py`: the *primitive functions* (every
  argument is a node input in MindIR, in the order of the list given to
  `pyboost_xxx(self, [...])` / `super().__call__(...)`); their `__init__`
  arguments, argument handlers (`dtype_to_type_id`, `str_to_enum`, `to_pair`,
  `type_it(..., OpDtype...)`, `_scalar_tensor_to_int`...), signatures
  (`__mindspore_signature__`: defaults, `RW_WRITE`) and docstrings;
- `ops/auto_generate/cpp_create_prim_instance_helper.py`: defaults
  (`op_args_default_value`) and labels (`op_labels`: `side_effect_mem`...);
- `ops/auto_generate/gen_ops_def.py`, `gen_extend_func.py`, `ops/function/*.py`:
  the functional forms' docstrings (argument types, first sentences) that the
  generated classes refer to;
- `ops/operations/*.py` and `ops/operations/manually_defined/*.py`: the
  old-style primitives (tensor inputs are node inputs, `__init__` arguments are
  attributes on the primitive), and hand-written primitive functions;
- `include/.../op_def/auto_generate/gen_ops_def.h`: which names have a C++
  `OpDef`, i.e. are primitive functions;
- `include/.../primitive/*_op_name.h`, `*_ops.h` and `include/.../ir/core_ops_*.h`:
  the names of primitives defined only in C++ (`MakeTuple`, `UpdateState`,
  ...), listed without a signature;
- `include/mindapi/base/types.h`, `format.h`, `include/.../op_enum.h`: the
  integer encodings of the enums `str_to_enum` produces.

The output is a Rust source file of static tables, sorted by name, one line per
argument, so that a new MindSpore version shows as a readable diff. A summary
goes to stderr.
"""

import argparse
import ast
import glob
import os
import re
import sys

# ---------------------------------------------------------------------------
# Small helpers.


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def rel(path, root):
    return os.path.relpath(path, root).replace(os.sep, "/")


def const_str(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def dotted(node):
    """`a.b.c` as text, or None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def call_name(node):
    """The last component of a call's function (`validator.check_bool` -> `check_bool`)."""
    if not isinstance(node, ast.Call):
        return None
    f = node.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return None


def functions(cls):
    return {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}


def params_of(fn):
    """`[(name, default_node_or_None)]` of a function, without `self`, `*args`, `**kw`."""
    if fn is None:
        return []
    a = fn.args
    pos = a.posonlyargs + a.args
    defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
    out = [(p.arg, d) for p, d in zip(pos, defaults)]
    out += [(p.arg, d) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    return [(n, d) for n, d in out if n != "self"]


def has_varargs(fn):
    return fn is not None and fn.args.vararg is not None


# ---------------------------------------------------------------------------
# Docstrings.


def balanced(text, start):
    """The text inside the parenthesis opening at `start`, and the index after it."""
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return text[start + 1 : i], i + 1
    return None, None


SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Inputs|Keyword Args|Keyword Arguments):\s*$")
ANY_SECTION = re.compile(r"^\s*[A-Z][A-Za-z ]*:\s*$")


def doc_sections(doc):
    """`{section: [lines]}` of a Google-style docstring."""
    out = {}
    cur = None
    indent = None
    for line in (doc or "").splitlines():
        m = SECTION.match(line)
        if m:
            cur = m.group(1)
            if cur in ("Arguments", "Parameters"):
                cur = "Args"
            if cur.startswith("Keyword"):
                cur = "Args"
            out.setdefault(cur, [])
            indent = len(line) - len(line.lstrip())
            continue
        if cur is None:
            continue
        stripped = line.strip()
        if stripped and (len(line) - len(line.lstrip())) <= indent:
            cur = None
            if SECTION.match(line):
                continue
            continue
        out[cur].append(line)
    return out


ARG_LINE = re.compile(r"^\s*(?:-\s*)?\*{0,2}([A-Za-z_][A-Za-z_0-9]*)\*{0,2}\s*\(")


def doc_arg_types(doc):
    """`{name: declared type text}` from the Args and Inputs sections."""
    types = {}
    for lines in doc_sections(doc).values():
        for line in lines:
            m = ARG_LINE.match(line)
            if not m:
                continue
            inner, _ = balanced(line, m.end() - 1)
            if inner is None:
                continue
            name = m.group(1)
            types.setdefault(name, " ".join(inner.split()))
    return types


def doc_input_names(doc):
    """Names in the `Inputs:` section, in order (old-style primitives)."""
    names = []
    for line in doc_sections(doc).get("Inputs", []):
        m = re.match(r"^\s*-\s*\*\*([A-Za-z_][A-Za-z_0-9]*)\*\*", line)
        if m and m.group(1) not in names:
            names.append(m.group(1))
    return names


def clean_rst(text):
    text = re.sub(r":(?:func|class|math|attr|meth|obj|ref):`~?([^`]*)`", r"`\1`", text)
    text = text.replace("``", "`")
    text = re.sub(r"\s+", " ", text).strip()
    return text


def first_sentence(doc):
    """The first sentence of the first prose paragraph."""
    if not doc:
        return ""
    paras = re.split(r"\n\s*\n", doc.strip())
    for p in paras:
        s = p.strip()
        if not s or s.startswith("..") or s.startswith(">>>") or ANY_SECTION.match(s.splitlines()[0]):
            continue
        if s.startswith("Note:") or s.startswith("Warning:"):
            continue
        s = clean_rst(s)
        if s == "None":
            continue
        m = re.search(r"(?<![ .][a-z])(?<!e\.g)(?<!i\.e)\.(\s|$)", s)
        sentence = s[: m.start() + 1] if m else s
        if len(sentence) > 300:
            sentence = sentence[:297].rstrip() + "..."
        return sentence
    return ""


REFER = re.compile(r"Refer to :func:`(?:mindspore\.)?(?:ops\.)?(?:mint\.)?([A-Za-z_0-9.]+)`")


# ---------------------------------------------------------------------------
# Enums (`str_to_enum`).


def parse_enums(root):
    """`{EnumName: [(IDENT, value)]}` from MindSpore's C++ headers."""
    enums = {}
    files = [
        "include/mindapi/base/types.h",
        "include/mindapi/base/format.h",
        "include/mindspore/ops/include/op_enum.h",
    ]
    for f in files:
        path = os.path.join(root, f)
        if not os.path.exists(path):
            continue
        text = re.sub(r"//[^\n]*", "", read(path))
        for name, body in re.findall(r"enum\s+(?:class\s+)?(\w+)\s*:\s*int64_t\s*\{([^}]*)\}", text):
            values = []
            nxt = 0
            for item in body.split(","):
                item = item.strip()
                if not item:
                    continue
                if "=" in item:
                    ident, v = [x.strip() for x in item.split("=", 1)]
                    nxt = int(v, 0)
                else:
                    ident = item
                values.append((ident, nxt))
                nxt += 1
            enums.setdefault(name, values)
    return enums


# The enum each `str_to_enum` argument holds, by argument name: MindSpore's
# `StringToEnumImpl` (ops/op_def/op_enum.cc) keys its tables by argument name.
# (`check_enums.py` beside this script checks every string of every enum
# against MindSpore's own `op_enum.str_to_enum`.)
ENUM_OF_ARG = {
    "data_format": "Format",
    "format": "Format",
    "pad_mode": "PadMode",
    "padding": "PadMode",
    "reduction": "Reduction",
    "reduce": "Reduce",
    "reduce_op": "Reduction",
    "rounding_mode": "RoundingMode",
    "norm": "NormMode",
    "padding_mode": "GridSamplerPaddingMode",
    "interpolation_mode": "InterpolationMode",
    "indexing": "Indexing",
    "approximate": "Approximate",
    "input_layout": "FASInputLayoutMode",
    "layout": "FASInputLayoutMode",
    "layout_query": "FASInputLayoutMode",
    "layout_key": "FASInputLayoutMode",
    "layout_kv": "FASInputLayoutMode",
    "kv_cache_quant_mode": "PagedAttentionKVCacheQuantMode",
    "coordinate_transformation_mode": "CoordinateTransformMode",
    "activation": "ActivationType",
    "quant_mode": "QuantMode",
    "error_mode": "ErrorMode",
    "flip_mode": "FlipMode",
    "compare_op": "CompareOp",
    "signal_op": "SignalOpMode",
    "driver": "DriverName",
    "device": "Device",
    "mode": "LinalgQrMode",
    "direction": "Direction",
    "cell_type": "CellType",
    "group": "Group",
}

# Per-op exceptions to ENUM_OF_ARG.
ENUM_OF_OP_ARG = {
    ("PagedAttention", "mask_mode"): "PagedAttentionMaskMode",
    ("MlaPreprocess", "mask_mode"): "MLAMode",
    ("Mla", "mask_mode"): "MLAMode",
}

# Prefixes MindSpore's enum identifiers carry that their strings do not.
ENUM_PREFIX = {
    "Reduction": "REDUCTION_",
    "Reduce": "REDUCE_",
    "Device": "DEVICE_",
    "CellType": "CELL_TYPE_",
}


# Enum identifiers whose strings MindSpore spells otherwise, and those its
# `str_to_enum` does not accept (`check_enums.py` found these).
ENUM_SPELLING = {
    ("CompareOp", "EQUAL"): "eq",
    ("CompareOp", "GREATER_THAN"): "gt",
    ("CompareOp", "LESS_THAN"): "lt",
}
ENUM_NOT_ACCEPTED = {("InterpolationMode", "BICUBIC")}


def enum_strings(name, values):
    prefix = ENUM_PREFIX.get(name, "")
    out = []
    for ident, v in values:
        if ident.startswith("NUM_OF_") or (name, ident) in ENUM_NOT_ACCEPTED:
            continue
        if (name, ident) in ENUM_SPELLING:
            out.append((ENUM_SPELLING[(name, ident)], v))
            continue
        s = ident[len(prefix):] if prefix and ident.startswith(prefix) else ident
        out.append((s.lower(), v))
    if name == "Device":
        # `Device`'s strings are spelled as users write them: `DEVICE_ASCEND`
        # is "Ascend", `DEVICE_CPU` "CPU", and the `_LOWER` ones lower case.
        out = []
        for ident, v in values:
            s = ident[len("DEVICE_"):]
            if s.endswith("_LOWER"):
                s = s[: -len("_LOWER")].lower()
            elif s != "CPU":
                s = s.capitalize()
            out.append((s, v))
    return out


# ---------------------------------------------------------------------------
# Types.

TENSORISH = re.compile(r"\bTensor\b")
OPDTYPE = {
    "DT_BOOL": "bool",
    "DT_INT": "int",
    "DT_FLOAT": "float",
    "DT_NUMBER": "Number",
    "DT_TENSOR": "Tensor",
    "DT_STR": "str",
    "DT_TUPLE_INT": "tuple[int]",
    "DT_LIST_INT": "list[int]",
    "DT_TUPLE_FLOAT": "tuple[float]",
    "DT_LIST_FLOAT": "list[float]",
    "DT_TUPLE_BOOL": "tuple[bool]",
    "DT_TUPLE_TENSOR": "tuple[Tensor]",
    "DT_LIST_TENSOR": "list[Tensor]",
    "DT_TUPLE_ANY": "tuple",
    "DT_LIST_ANY": "list",
    "DT_TYPE": "mindspore.dtype",
    "DT_ANY": "Any",
}

# What MindSpore's argument handlers turn an argument into (`to_kernel_size`
# makes `k` `(k, k)` and `(1, 1, h, w)` `(h, w)`: a pair in MindIR).
HANDLER_TYPE = {
    "dtype_to_type_id": ("DType", "mindspore.dtype"),
    "to_pair": ("Pair", "Union[int, tuple[int]]"),
    "to_kernel_size": ("Pair", "Union[int, tuple[int]]"),
    "to_strides": ("Pair", "Union[int, tuple[int]]"),
    "to_rates": ("Pair", "Union[int, tuple[int]]"),
    "to_dilations": ("Pair", "Union[int, tuple[int]]"),
    "to_output_padding": ("Pair", "Union[int, tuple[int]]"),
    "to_2d_paddings": ("Pair", "Union[int, tuple[int]]"),
    "_scalar_tensor_to_int": ("Int", "int"),
    "_scalar_tensor_to_float": ("Float", "float"),
    "_scalar_tensor_to_scalar": ("Number", "Number"),
    "_normalize_int_sequence": ("Ints", "Union[int, tuple[int]]"),
}


def split_union(t):
    t = t.strip()
    m = re.match(r"^(?:Union|Optional)[\[(](.*)[\])]$", t)
    if not m:
        return [t]
    parts, depth, cur = [], 0, ""
    for c in m.group(1):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += c
    parts.append(cur.strip())
    out = []
    for p in parts:
        out.extend(split_union(p))
    return out


def classify_decl(text):
    """A declared type's class (`Tensor`, `Int`, ...), or None."""
    t = clean_rst(text)
    t = re.sub(r",\s*optional\s*$", "", t).strip()
    t = t.replace("`", "").replace("mindspore.dtype", "dtype").replace("mindspore.Type", "dtype")
    t = re.sub(r"\bmindspore\.", "", t)
    parts = [p.strip() for p in split_union(t)]
    parts = [p for p in parts if p.lower() not in ("none", "")]
    if not parts:
        return None
    low = [p.lower() for p in parts]

    def is_tensor(p):
        return p in ("tensor", "parameter") or p.startswith("tensor[") or p.startswith("tensor(") or p.startswith("parameter")

    def is_tensors(p):
        return re.match(r"^(tuple|list)[\[(](tensor|parameter)", p) is not None

    def is_int(p):
        return p in ("int", "int64", "int32")

    def is_float(p):
        return p in ("float", "float32", "float64")

    def is_number(p):
        return p in ("number", "scalar", "numbers.number", "number.number", "complex")

    def is_ints(p):
        return re.match(r"^(tuple|list)[\[(]int", p) is not None or p in ("tuple", "list")

    def is_floats(p):
        return re.match(r"^(tuple|list)[\[(]float", p) is not None

    if all(is_tensors(p) for p in low):
        return "Tensors"
    if any(is_tensor(p) for p in low):
        rest = [p for p in low if not is_tensor(p)]
        if not rest:
            return "Tensor"
        if all(is_number(p) or is_int(p) or is_float(p) or p == "bool" or p == "complex" for p in rest):
            return "TensorOrScalar"
        if all(is_tensors(p) for p in rest):
            return "Tensors"
        if any(is_ints(p) or is_int(p) for p in rest):
            return "Ints"
        return "Any"
    if all(p == "bool" for p in low):
        return "Bool"
    if all(is_int(p) for p in low):
        return "Int"
    if all(is_float(p) for p in low):
        return "Float"
    if all(is_int(p) or is_float(p) or is_number(p) or p == "bool" for p in low):
        return "Number"
    if all(p == "str" for p in low):
        return "Str"
    if all(p.startswith("dtype") or p == "type" for p in low):
        return "DType"
    if all(is_ints(p) or is_int(p) for p in low):
        if all(is_ints(p) for p in low):
            return "IntTuple"
        return "Ints"
    if all(is_floats(p) or is_float(p) for p in low):
        return "Floats"
    return None


def classify_default(v):
    if isinstance(v, bool):
        return "Bool"
    if isinstance(v, int):
        return "Int"
    if isinstance(v, float):
        return "Float"
    if isinstance(v, str):
        return "Str"
    if isinstance(v, (tuple, list)) and v and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        return "IntTuple"
    if isinstance(v, (tuple, list)) and v and all(isinstance(x, float) for x in v):
        return "Floats"
    return None


# ---------------------------------------------------------------------------
# Values.


class DTypeName(str):
    """A `mstype.xxx` default."""


def literal(node):
    """A default value: a Python value, a DTypeName, or an `Other` text."""
    if node is None:
        return None
    d = dotted(node)
    if d and (d.startswith("mstype.") or d.startswith("mindspore.")):
        return DTypeName(d.split(".")[-1])
    try:
        return ast.literal_eval(node)
    except Exception:
        return Other(ast.unparse(node))


class Other(str):
    """A default that is not a literal (shown as MindSpore wrote it)."""


# ---------------------------------------------------------------------------
# Records.


class Arg:
    def __init__(self, name, role):
        self.name = name
        self.role = role  # Call | Init | Input | Attr
        self.default = None  # (has, value)
        self.has_default = False
        self.handler = None
        self.typeit = None  # (src types, dst type)
        self.decl = ""
        self.ty = None
        self.enum = None


class Prim:
    def __init__(self, name, kind, source):
        self.name = name
        self.kind = kind  # Function | Primitive
        self.source = source
        self.args = []
        self.known = True
        self.effects = []
        self.doc = ""


def set_default(arg, node_or_value, is_node=True):
    if arg.has_default:
        return
    arg.has_default = True
    arg.default = literal(node_or_value) if is_node else node_or_value


# ---------------------------------------------------------------------------
# Parsing gen_ops_prim.py and friends.


def signature_info(cls):
    """`[(name, rw_write, default_node_or_MISSING)]` from `__mindspore_signature__`."""
    out = []
    for st in cls.body:
        if not (isinstance(st, ast.Assign) and any(dotted(t) == "__mindspore_signature__" for t in st.targets)):
            continue
        v = st.value
        items = v.elts if isinstance(v, (ast.Tuple, ast.List)) else [v]
        for it in items:
            if call_name(it) != "make_sig":
                continue
            name = const_str(it.args[0]) if it.args else None
            if name is None:
                for kw in it.keywords:
                    if kw.arg == "name":
                        name = const_str(kw.value)
            rw = any("RW_WRITE" in ast.unparse(a) for a in it.args[1:]) or any(
                kw.arg == "rw" and "RW_WRITE" in ast.unparse(kw.value) for kw in it.keywords
            )
            default = MISSING
            for kw in it.keywords:
                if kw.arg == "default":
                    default = kw.value
            if name:
                out.append((name, rw, default))
    return out


MISSING = object()


# Attributes `add_prim_attr` sets that are bookkeeping, not the primitive's
# arguments.
NOT_STORED_ATTRS = {
    "input_names",
    "output_names",
    "primitive_target",
    "cust_aicpu",
    "order_enforce_skip",
    "no_eliminate",
    "no_elimilate",
    "dyn_input_sizes",
    "bprop_return_sparse",
    "fusion",
}


def stored_attrs(init):
    """`[(name, value)]` of the attributes `__init__` sets to a literal with
    `add_prim_attr` (`DepthToSpace`'s `data_format="NCHW"`)."""
    out = []
    if init is None:
        return out
    for node in ast.walk(init):
        if call_name(node) != "add_prim_attr" or len(node.args) < 2:
            continue
        key = const_str(node.args[0])
        if not key or key.startswith("side_effect") or key.startswith("_") or key in NOT_STORED_ATTRS:
            continue
        try:
            value = ast.literal_eval(node.args[1])
        except Exception:
            continue
        if key not in [k for k, _ in out]:
            out.append((key, value))
    return out


def init_facts(init):
    """From `__init__`: handlers per arg, `type_it` per arg, prim attrs set to True."""
    handlers, typeits, labels, io_inputs, checks = {}, {}, [], None, {}
    if init is None:
        return handlers, typeits, labels, io_inputs, checks
    for node in ast.walk(init):
        if not isinstance(node, ast.Call):
            continue
        name = call_name(node)
        if name == "_set_prim_arg_with_handler" and len(node.args) >= 3:
            arg = const_str(node.args[0])
            h = node.args[2]
            handlers[arg] = dotted(h).split(".")[-1] if dotted(h) else None
            inner = node.args[1]
            if call_name(inner) == "type_it":
                typeits[arg] = typeit_of(inner)
        elif name == "add_prim_attr" and len(node.args) >= 2:
            key = const_str(node.args[0])
            if key and key.startswith("side_effect") and isinstance(node.args[1], ast.Constant) and node.args[1].value is True:
                labels.append(key)
        elif name == "init_prim_io_names":
            for kw in node.keywords:
                if kw.arg == "inputs" and isinstance(kw.value, (ast.List, ast.Tuple)):
                    # `Fmax` writes `['x1, x2']`: split such names.
                    io_inputs = [
                        n.strip() for e in kw.value.elts if const_str(e) for n in const_str(e).split(",")
                    ]
        elif name == "str_to_enum" and len(node.args) >= 3:
            arg = const_str(node.args[1])
            if arg:
                handlers.setdefault(arg, "str_to_enum")
        elif name in VALIDATORS and node.args:
            # validator.check_value_type("axis", axis, [int], name), check_bool(x, "x", name), ...
            var = None
            for a in node.args[:3]:
                if isinstance(a, ast.Name):
                    var = a.id
                    break
            if var:
                if name == "check_value_type" and len(node.args) >= 3:
                    types = node.args[2]
                    elts = types.elts if isinstance(types, (ast.List, ast.Tuple)) else [types]
                    checks.setdefault(var, "Union[" + ", ".join(ast.unparse(e) for e in elts) + "]")
                else:
                    checks.setdefault(var, VALIDATORS[name])
    return handlers, typeits, labels, io_inputs, checks


VALIDATORS = {
    "check_bool": "bool",
    "check_int": "int",
    "check_positive_int": "int",
    "check_non_negative_int": "int",
    "check_is_int": "int",
    "check_int_range": "int",
    "check_positive_float": "float",
    "check_non_negative_float": "float",
    "check_is_float": "float",
    "check_float_range": "float",
    "check_float": "float",
    "check_string": "str",
    "check_value_type": None,
}


def typeit_of(call):
    # type_it(op, arg, value, src, dst)
    if len(call.args) < 5:
        return None
    src = [OPDTYPE.get(x, x) for x in re.findall(r"DT_[A-Z_]+", ast.unparse(call.args[3]))]
    dst = [OPDTYPE.get(x, x) for x in re.findall(r"DT_[A-Z_]+", ast.unparse(call.args[4]))]
    return src, dst[0] if dst else None


def call_list(call_fn):
    """The argument list given to `pyboost_xxx(self, [...])` or `super().__call__(...)`."""
    if call_fn is None:
        return None
    for node in ast.walk(call_fn):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id.startswith("pyboost_") and len(node.args) >= 2:
            lst = node.args[1]
            if isinstance(lst, (ast.List, ast.Tuple)):
                return list(lst.elts)
        if isinstance(f, ast.Attribute) and f.attr == "__call__" and isinstance(f.value, ast.Call) and call_name(f.value) == "super":
            return list(node.args)
    return None


def element_arg(e):
    """`(name, from_init, handler, typeit)` of one element of the argument list."""
    if isinstance(e, ast.Starred):
        return ("*", False, None, None)
    if isinstance(e, ast.IfExp):
        inner = e.orelse if isinstance(e.orelse, ast.Call) else e.body
        return element_arg(inner)
    if isinstance(e, ast.Name):
        # `new_generated_x` is `x` after its handler (see `jit_handlers`).
        return (e.id[len("new_generated_"):] if e.id.startswith("new_generated_") else e.id, False, None, None)
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
        return (e.attr, True, None, None)
    if isinstance(e, ast.Call):
        h = call_name(e)
        if h == "type_it":
            name, init, _, _ = element_arg(e.args[2])
            return (const_str(e.args[1]) or name, init, None, typeit_of(e))
        if len(e.args) >= 3 and const_str(e.args[1]):
            name, init, _, _ = element_arg(e.args[2])
            return (const_str(e.args[1]), init, h, None)
        if e.args:
            name, init, _, ti = element_arg(e.args[0])
            return (name, init, h, ti)
    return (ast.unparse(e), False, None, None)


def jit_handlers(call_fn):
    """`{arg: handler}` from the `new_generated_x = handler('Op', 'x', x)` lines."""
    out = {}
    if call_fn is None:
        return out
    for node in ast.walk(call_fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            t = dotted(node.targets[0]) or ""
            if not t.startswith("new_generated_"):
                continue
            v = node.value
            if isinstance(v, ast.IfExp):
                v = v.orelse if isinstance(v.orelse, ast.Call) else v.body
            if isinstance(v, ast.Call) and len(v.args) >= 2 and const_str(v.args[1]):
                out[const_str(v.args[1])] = call_name(v)
    return out


class Sources:
    def __init__(self, root):
        self.root = root
        self.funcs = {}  # functional name -> docstring
        self.defaults = {}
        self.labels = {}
        helper = os.path.join(root, "ops/auto_generate/cpp_create_prim_instance_helper.py")
        for node in ast.parse(read(helper)).body:
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                tgt = node.targets[0].id
                if tgt not in ("op_args_default_value", "op_labels"):
                    continue
                table = {}
                for k, v in zip(node.value.keys, node.value.values):
                    table[const_str(k)] = {const_str(kk): vv for kk, vv in zip(v.keys, v.values)}
                if tgt == "op_args_default_value":
                    self.defaults = table
                else:
                    self.labels = table
        doc_files = [
            "ops/auto_generate/gen_ops_def.py",
            "ops/auto_generate/gen_extend_func.py",
        ] + sorted(rel(p, root) for p in glob.glob(os.path.join(root, "ops/function/*.py")))
        # `mint`'s documented forms of the `_ext` primitives, looked up last.
        doc_files += sorted(rel(p, root) for p in glob.glob(os.path.join(root, "mint/**/*.py"), recursive=True))
        for f in doc_files:
            path = os.path.join(root, f)
            if not os.path.exists(path):
                continue
            for node in ast.parse(read(path)).body:
                if isinstance(node, ast.FunctionDef):
                    doc = ast.get_docstring(node) or ""
                    if doc.strip() and (node.name not in self.funcs or not self.funcs[node.name].strip()):
                        self.funcs[node.name] = doc
                    elif node.name not in self.funcs:
                        self.funcs[node.name] = doc

    def functional_doc(self, name):
        doc = self.funcs.get(name, "")
        if not doc.strip() and name.endswith("_ext"):
            doc = self.funcs.get(name[: -len("_ext")], "")
        return doc


def docstring_of(cls):
    return ast.get_docstring(cls) or ""


def classes_with_instances(path):
    """`[(ClassDef, instance name)]` of a file: `sum_ext_op=SumExt()` names the
    functional form's op instance, hence the functional (`sum_ext`)."""
    tree = ast.parse(read(path))
    instance_of = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    instance_of.setdefault(node.value.func.id, t.id)
    return [(cls, instance_of.get(cls.name)) for cls in tree.body if isinstance(cls, ast.ClassDef)]


def build_function(cls, source, sources, instance):
    """A primitive function from its class."""
    p = Prim(cls.name, "Function", source)
    fns = functions(cls)
    init, call = fns.get("__init__"), fns.get("__call__")
    init_params = params_of(init)
    call_params = params_of(call)
    handlers, typeits, labels, io_inputs, checks = init_facts(init)
    sig = signature_info(cls)
    jit = jit_handlers(call)
    elements = call_list(call)
    names = []
    if elements is not None:
        for e in elements:
            name, from_init, h, ti = element_arg(e)
            if name == "*":
                # `super().__call__(*args, self.a, ...)`: the inputs come from
                # the signature or the io names.
                star = [n for n, _, _ in sig] or io_inputs or [n for n, _ in call_params]
                init_names = {n for n, _ in init_params}
                for s in star:
                    if s not in init_names:
                        names.append((s, False, None, None))
                continue
            names.append((name, from_init, h, ti))
    else:
        names = [(n, False, None, None) for n, _ in call_params] + [(n, True, None, None) for n, _ in init_params]
    init_defaults = dict(init_params)
    call_defaults = dict(call_params)
    sig_defaults = {n: d for n, _, d in sig if d is not MISSING}
    table_defaults = sources.defaults.get(cls.name, {})
    doc = docstring_of(cls)
    refer = REFER.search(doc)
    fdoc = ""
    fname = None
    if refer:
        fname = refer.group(1).split(".")[-1]
    elif instance and instance.endswith("_op"):
        fname = instance[: -len("_op")]
    if fname:
        fdoc = sources.functional_doc(fname)
    cls_types = doc_arg_types(doc)
    fn_types = doc_arg_types(fdoc)
    # The class's `Inputs:` often name the call arguments differently (`a`,
    # `b` for `input`, `mat2`): when the counts agree, match them by position.
    doc_inputs = doc_input_names(doc)
    call_names = [n for n, from_init, _, _ in names if not (from_init or (n in init_defaults and n not in call_defaults))]
    positional = {}
    if doc_inputs and len(doc_inputs) == len(call_names):
        positional = {n: cls_types.get(d, "") for n, d in zip(call_names, doc_inputs)}
    seen = set()
    for name, from_init, h, ti in names:
        if name in seen:
            continue
        seen.add(name)
        is_init = from_init or (name in init_defaults and name not in call_defaults)
        a = Arg(name, "Init" if is_init else "Call")
        a.handler = h or handlers.get(name) or jit.get(name)
        a.typeit = ti or typeits.get(name)
        for d in (init_defaults if is_init else call_defaults, sig_defaults, table_defaults):
            if name in d and d[name] is not None:
                set_default(a, d[name])
                break
        a.decl = cls_types.get(name) or fn_types.get(name) or positional.get(name) or checks.get(name) or ""
        p.args.append(a)
    p.effects = sorted(set(labels) | set(k for k, v in sources.labels.get(cls.name, {}).items() if k.startswith("side_effect") and const_true(v)))
    for n, rw, _ in sig:
        if rw:
            p.effects.append(f"writes:{n}")
    first = first_sentence(doc)
    if not first or doc.lstrip().startswith(".. code-block") or first.startswith("Refer to"):
        first = first_sentence(fdoc) or first
    if first.startswith(".. code-block") or first.startswith("prim = "):
        first = ""
    p.doc = first
    return p


def const_true(v):
    return isinstance(v, ast.Constant) and v.value is True


# ---------------------------------------------------------------------------
# Old-style primitives.

PRIMITIVE_BASES = {"Primitive", "PrimitiveWithInfer", "PrimitiveWithCheck"}


class OldClasses:
    def __init__(self, root, files):
        self.root = root
        self.classes = {}  # name -> (ClassDef, file)
        self.order = []
        for f in files:
            tree = ast.parse(read(f))
            for cls in tree.body:
                if isinstance(cls, ast.ClassDef) and cls.name not in self.classes:
                    self.classes[cls.name] = (cls, rel(f, root))
                    self.order.append(cls.name)

    def bases(self, cls):
        return [(dotted(b) or "").split(".")[-1] for b in cls.bases]

    def is_primitive(self, name, depth=0):
        if name in PRIMITIVE_BASES:
            return True
        if depth > 10 or name not in self.classes:
            return False
        return any(self.is_primitive(b, depth + 1) for b in self.bases(self.classes[name][0]))

    def mro(self, name):
        out = []
        while name in self.classes:
            cls = self.classes[name][0]
            out.append(cls)
            bs = [b for b in self.bases(cls) if b in self.classes or b in PRIMITIVE_BASES]
            name = bs[0] if bs else None
        return out

    def used_as_base(self):
        used = set()
        for cls, _ in self.classes.values():
            used.update(self.bases(cls))
        return used


# Old-style primitives whose sources say nothing true of their inputs: no
# signature, no `init_prim_io_names`, and an `Inputs:` section copied from
# another primitive. Their inputs as MindSpore's backend takes them.
INPUTS_OF = {
    # Its docstring lists Dropout's `shape`; its kernel and Dropout's bprop
    # give it `(dy, mask)`.
    "DropoutGrad": ["dy", "mask"],
}


def build_old(name, olds, sources, opdefs):
    cls, source = olds.classes[name]
    chain = olds.mro(name)
    fn = {}
    for c in reversed(chain):
        fn.update(functions(c))
    init, call = fn.get("__init__"), fn.get("__call__")
    if name in opdefs:
        # A hand-written primitive function (`Cast`, `BatchNorm`, `ScalarAdd`).
        return build_function(cls, source, sources, None)
    p = Prim(name, "Primitive", source)
    handlers, typeits, labels, io_inputs, checks = {}, {}, [], None, {}
    for c in reversed(chain):
        h, t, l, io, ch = init_facts(functions(c).get("__init__"))
        handlers.update(h)
        typeits.update(t)
        labels += l
        checks.update(ch)
        if io is not None:
            io_inputs = io
    if name in INPUTS_OF:
        io_inputs = INPUTS_OF[name]
    sig = []
    for c in chain:
        sig = signature_info(c)
        if sig:
            break
    doc = ""
    for c in chain:
        doc = docstring_of(c)
        if doc:
            break
    doc_types = doc_arg_types(doc)
    init_params = params_of(init)
    init_names = {n for n, _ in init_params}
    if sig:
        inputs = [(n, d) for n, _, d in sig]
    elif io_inputs is not None:
        inputs = [(n, MISSING) for n in io_inputs]
    elif call is not None and not has_varargs(call):
        inputs = [(n, d if d is not None else MISSING) for n, d in params_of(call)]
    else:
        inputs = [(n, MISSING) for n in doc_input_names(doc)]
        if call is None and not inputs and not sig:
            p.known = bool(init_params) or bool(doc)
    # The `Inputs:` section may name them otherwise (`weight` for `w`): when
    # the counts agree, match them by position.
    doc_inputs = doc_input_names(doc)
    kept = [n for n, _ in inputs if n not in init_names]
    positional = {}
    if len(doc_inputs) == len(kept):
        positional = {n: doc_types.get(d, "") for n, d in zip(kept, doc_inputs)}
    for n, d in inputs:
        if n in init_names:
            # An attribute the backend also takes as an input (`InTopK`'s
            # `k` in its io names): it is the attribute.
            continue
        a = Arg(n, "Input")
        if d is not MISSING and d is not None:
            set_default(a, d)
        a.decl = doc_types.get(n) or positional.get(n, "")
        p.args.append(a)
    for n, d in init_params:
        a = Arg(n, "Attr")
        if d is not None:
            set_default(a, d)
        a.handler = handlers.get(n)
        a.typeit = typeits.get(n)
        a.decl = doc_types.get(n) or checks.get(n) or ""
        p.args.append(a)
    # Attributes set to constants besides the `__init__` arguments: MindIR
    # holds them too.
    names = {a.name for a in p.args}
    for c in reversed(chain):
        for n, v in stored_attrs(functions(c).get("__init__")):
            if n in names:
                continue
            names.add(n)
            a = Arg(n, "Attr")
            set_default(a, v, is_node=False)
            p.args.append(a)
    p.effects = sorted(set(labels))
    for n, rw, _ in sig:
        if rw:
            p.effects.append(f"writes:{n}")
    p.doc = first_sentence(doc)
    return p


# ---------------------------------------------------------------------------
# Typing every argument.


def finish_types(p, enums):
    for a in p.args:
        ty = None
        enum = None
        h = a.handler
        if h == "str_to_enum":
            ename = ENUM_OF_OP_ARG.get((p.name, a.name)) or ENUM_OF_ARG.get(a.name)
            if ename in enums:
                ty, enum = "Enum", ename
            else:
                ty = "Str"
        elif a.typeit and a.typeit[1]:
            dst = a.typeit[1]
            src = a.typeit[0]
            # The type MindSpore converts to is what the node input holds
            # (`Softmax`'s `axis` is always a tuple in MindIR).
            ty = classify_decl(dst) or "Any"
            if not a.decl:
                a.decl = "Union[" + ", ".join(sorted(set(src + [dst]))) + "]" if src else dst
        elif h in HANDLER_TYPE:
            ty = HANDLER_TYPE[h][0]
            if not a.decl:
                a.decl = HANDLER_TYPE[h][1]
        if ty is None and a.decl:
            ty = classify_decl(a.decl)
        if ty is None and a.has_default:
            v = a.default
            if isinstance(v, DTypeName):
                ty = "DType"
            elif not isinstance(v, Other):
                ty = classify_default(v)
        if ty is None:
            ty = "Any"
        a.ty = ty
        a.enum = enum


# ---------------------------------------------------------------------------
# Rust output.


def rs_str(s):
    s = s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ").replace("\r", " ").replace("\t", " ")
    return f'"{s}"'


def rs_float(x):
    if x != x:
        return "f64::NAN"
    if x == float("inf"):
        return "f64::INFINITY"
    if x == float("-inf"):
        return "f64::NEG_INFINITY"
    r = repr(float(x))
    if "e" in r or "E" in r:
        mant, exp = r.lower().split("e")
        if "." not in mant:
            mant += ".0"
        return f"{mant}e{int(exp)}"
    return r


def rs_value(v):
    if isinstance(v, Other):
        return f"V::Other({rs_str(v)})"
    if isinstance(v, DTypeName):
        return f"V::DType({rs_str(str(v))})"
    if v is None:
        return "V::None"
    if isinstance(v, bool):
        return f"V::Bool({'true' if v else 'false'})"
    if isinstance(v, int):
        return f"V::Int({v})"
    if isinstance(v, float):
        return f"V::Float({rs_float(v)})"
    if isinstance(v, str):
        return f"V::Str({rs_str(v)})"
    if isinstance(v, (tuple, list)):
        if all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            return "V::Ints(&[" + ", ".join(str(x) for x in v) + "])"
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
            return "V::Floats(&[" + ", ".join(rs_float(float(x)) for x in v) + "])"
        if all(isinstance(x, bool) for x in v):
            return "V::Bools(&[" + ", ".join("true" if x else "false" for x in v) + "])"
    return f"V::Other({rs_str(repr(v))})"


def rs_ident(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()


def emit(prims, enums_used, enums, out, summary):
    w = out.write
    w("// @generated by crates/ms-schema/data/gen_mindspore_schemas.py: do not edit by hand.\n")
    w("//\n")
    w("// Every primitive of MindSpore " + summary["version"] + ", read from its own definitions\n")
    w("// (see the script's docstring for the files). Regenerate with\n")
    w("//\n")
    w("//     python3 crates/ms-schema/data/gen_mindspore_schemas.py \\\n")
    w("//         /path/to/site-packages/mindspore -o crates/ms-schema/src/generated.rs\n")
    w("//\n")
    for k, v in summary["counts"].items():
        w(f"// {k}: {v}\n")
    w("\n")
    w("#![allow(clippy::all)]\n\n")
    w("use crate::{MsArg as A, MsEnum, MsPrim as P, MsRole::*, MsTy::*, MsValue as V};\n")
    w("use crate::MsKind::{Function, Primitive};\n\n")
    w(f'/// The MindSpore version these tables describe.\npub const VERSION: &str = "{summary["version"]}";\n\n')
    series = ".".join(summary["version"].split(".")[:2])
    w(f'/// Its major and minor version (how messages name it).\npub const SERIES: &str = "{series}";\n\n')
    for e in sorted(enums_used):
        w(f"/// MindSpore's `{e}` (`str_to_enum`): each string and the integer it is written as.\n")
        w(f"pub static {rs_ident(e)}: MsEnum = MsEnum {{\n    name: {rs_str(e)},\n    values: &[\n")
        for s, v in enum_strings(e, enums[e]):
            w(f"        ({rs_str(s)}, {v}),\n")
        w("    ],\n};\n\n")
    w("/// Every MindSpore primitive, sorted by name.\n")
    w("pub static PRIMS: &[P] = &[\n")
    for p in prims:
        effects = "&[" + ", ".join(rs_str(e) for e in p.effects) + "]"
        w(f"    P::new(\n        {rs_str(p.name)},\n        {p.kind},\n        {rs_str(p.source)},\n")
        w(f"        {rs_str(p.doc)},\n        {effects},\n")
        if not p.known:
            w("        None,\n    ),\n")
            continue
        if not p.args:
            w("        Some(&[]),\n    ),\n")
            continue
        w("        Some(&[\n")
        for a in p.args:
            ty = f"Enum(&{rs_ident(a.enum)})" if a.ty == "Enum" else a.ty
            default = f"Some({rs_value(a.default)})" if a.has_default else "None"
            w(f"            A::new({rs_str(a.name)}, {a.role}, {ty}, {rs_str(a.decl)}, {default}),\n")
        w("        ]),\n    ),\n")
    w("];\n")


# ---------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mindspore", help="the installed mindspore package directory")
    ap.add_argument("-o", "--output", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "generated.rs"))
    args = ap.parse_args()
    root = os.path.abspath(args.mindspore)
    version = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", read(os.path.join(root, "version.py"))).group(1)
    enums = parse_enums(root)
    sources = Sources(root)

    opdefs_h = os.path.join(root, "include/mindspore/ops/op_def/auto_generate/gen_ops_def.h")
    opdefs = set(re.findall(r"extern OpDef g(\w+);", read(opdefs_h))) if os.path.exists(opdefs_h) else set()

    prims = {}
    per_file = {}

    def add(p):
        if p.name in prims:
            return
        prims[p.name] = p
        per_file[p.source] = per_file.get(p.source, 0) + 1

    # 1. Primitive functions.
    gen = os.path.join(root, "ops/auto_generate/gen_ops_prim.py")
    for cls, instance in classes_with_instances(gen):
        add(build_function(cls, rel(gen, root), sources, instance))

    # 2. ops/operations: old-style primitives, and hand-written primitive functions.
    files = sorted(glob.glob(os.path.join(root, "ops/operations/manually_defined/*.py"))) + sorted(
        glob.glob(os.path.join(root, "ops/operations/*.py"))
    )
    olds = OldClasses(root, files)
    used = olds.used_as_base()
    for name in olds.order:
        if name in prims or not olds.is_primitive(name):
            continue
        if name.startswith("_") and name in used:
            continue  # an abstract base (`_MathBinaryOp`)
        add(build_old(name, olds, sources, opdefs))

    # 3. Primitive functions with a C++ OpDef and no Python class (tensor
    #    methods such as `DeprecatedAdd`, view ops): names only.
    for name in sorted(opdefs):
        if name not in prims:
            p = Prim(name, "Function", rel(opdefs_h, root))
            p.known = False
            p.doc = ""
            add(p)

    # 4. Primitives defined only in C++ (`MakeTuple`, `UpdateState`, ...): names only.
    headers = sorted(glob.glob(os.path.join(root, "include/mindspore/core/include/ir/core_ops_*.h")))
    headers += sorted(glob.glob(os.path.join(root, "include/mindspore/ops/include/primitive/*_op*.h")))
    for h in headers:
        text = read(h)
        names = re.findall(r'constexpr auto k\w*OpName = "([A-Za-z_][A-Za-z_0-9]*)";', text)
        names += re.findall(r'make_shared<Primitive>\("([A-Za-z_][A-Za-z_0-9]*)"', text)
        for name in names:
            if name not in prims:
                p = Prim(name, "Primitive", rel(h, root))
                p.known = False
                add(p)

    out = sorted(prims.values(), key=lambda p: p.name)
    enums_used = set()
    for p in out:
        finish_types(p, enums)
        for a in p.args:
            if a.enum:
                enums_used.add(a.enum)

    by_kind = {}
    for p in out:
        key = f"{p.kind} ({'with' if p.known else 'without'} a Python signature)"
        by_kind[key] = by_kind.get(key, 0) + 1
    counts = {"primitives": len(out)}
    counts.update(sorted(by_kind.items()))
    summary = {"version": version, "counts": counts}
    with open(args.output, "w", encoding="utf-8") as f:
        emit(out, enums_used, enums, f, summary)
    print(f"MindSpore {version}: {len(out)} primitives -> {os.path.normpath(args.output)}", file=sys.stderr)
    for k, v in by_kind.items():
        print(f"  {k}: {v}", file=sys.stderr)
    for f, n in sorted(per_file.items(), key=lambda kv: -kv[1]):
        print(f"  {n:5d}  {f}", file=sys.stderr)
    untyped = sum(1 for p in out for a in p.args if a.ty == "Any")
    total = sum(len(p.args) for p in out)
    print(f"  arguments: {total}, without a known type: {untyped}", file=sys.stderr)


if __name__ == "__main__":
    main()
