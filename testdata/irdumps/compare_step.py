#!/usr/bin/env python3
"""Compares a checkpoint mirdsl wrote after running a dump's step with
MindSpore's own after the same step.

Usage: compare_step.py MINE.ckpt MINDSPORE_AFTER.ckpt [MINDSPORE_BEFORE.ckpt]

Prints one line per parameter: its largest difference relative to the
largest magnitude of MindSpore's value, and (with the before checkpoint)
whether the step changed it. Exits 1 when a parameter is missing.
"""
import sys

import numpy as np


def main(argv):
    import mindspore as ms
    mine = ms.load_checkpoint(argv[0])
    theirs = ms.load_checkpoint(argv[1])
    before = ms.load_checkpoint(argv[2]) if len(argv) > 2 else {}
    missing = sorted(set(theirs) - set(mine))
    for name in sorted(theirs):
        if name not in mine:
            continue
        a = mine[name].asnumpy().astype(np.float64)
        b = theirs[name].asnumpy().astype(np.float64)
        scale = max(np.abs(b).max(initial=0.0), 1e-12)
        rel = np.abs(a - b).max(initial=0.0) / scale
        changed = ""
        if name in before:
            c = before[name].asnumpy().astype(np.float64)
            changed = " updated" if np.abs(b - c).max(initial=0.0) > 0 else " unchanged"
        print(f"{rel:.3e} {name}{changed}")
    for name in missing:
        print(f"missing {name}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
