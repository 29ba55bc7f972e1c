#!/usr/bin/env python3
"""Check the enum encodings `gen_mindspore_schemas.py` writes against MindSpore.

The generator reads the enums from MindSpore's C++ headers and decides which
enum each `str_to_enum` argument holds by the argument's name. This script
(unlike the generator, it imports MindSpore) asks MindSpore's own
`op_enum.str_to_enum(op, arg, string)` for every string of every enum at
every place the enum is used, and fails on any difference.

    /work/venvs/ms/bin/python crates/ops/data/check_enums.py MINDSPORE_PACKAGE_DIR
"""

import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_mindspore_schemas as gen  # noqa: E402


def main():
    root = os.path.abspath(sys.argv[1])
    from mindspore._c_expression import op_enum  # pylint: disable=import-outside-toplevel

    enums = gen.parse_enums(root)
    src = gen.read(os.path.join(root, "ops/auto_generate/gen_ops_prim.py"))
    pairs = set(re.findall(r"str_to_enum\('(\w+)', '(\w+)'", src))
    cls = None
    for line in src.splitlines():
        m = re.match(r"class (\w+)\(", line)
        if m:
            cls = m.group(1)
        m = re.search(r'_set_prim_arg_with_handler\("(\w+)", \w+, str_to_enum', line)
        if m:
            pairs.add((cls, m.group(1)))
    bad = 0
    checked = 0
    for op, arg in sorted(pairs):
        name = gen.ENUM_OF_OP_ARG.get((op, arg)) or gen.ENUM_OF_ARG.get(arg)
        if name not in enums:
            print(f"{op}.{arg}: no enum (generator maps it to {name!r})")
            bad += 1
            continue
        for s, v in gen.enum_strings(name, enums[name]):
            checked += 1
            try:
                got = op_enum.str_to_enum(op, arg, s)
            except Exception as e:  # pylint: disable=broad-except
                got = f"error: {str(e).splitlines()[0]}"
            if got != v:
                print(f"{op}.{arg} ({name}): {s!r} is {got}, the table says {v}")
                bad += 1
    print(f"{len(pairs)} enum arguments, {checked} strings checked, {bad} differences")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
