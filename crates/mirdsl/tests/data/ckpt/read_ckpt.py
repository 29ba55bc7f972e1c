"""Prints a checkpoint as mindspore.load_checkpoint reads it, one parameter a
line: NAME DTYPE SHAPE VALUES (values as float64 lists)."""
import sys

import mindspore as ms

for name, p in ms.load_checkpoint(sys.argv[1]).items():
    values = p.float().asnumpy() if p.dtype == ms.bfloat16 else p.asnumpy()
    print(name, p.dtype, list(p.shape), [float(x) for x in values.reshape(-1)])
