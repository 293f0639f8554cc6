"""Which calls and builds a set of recorded decode reports holds: what a spread names when the call asked for has no
row (the builds that timed it, or the recorded calls nearest to it)."""

import math
from collections import Counter

from ..._text import counted
from .targets import shape_label


def builds_of(found, call: tuple) -> str:
    """The builds ``found`` (``(name, report)`` pairs) time ``call`` with, most runs first: ``mma w4s1c1 (41 runs),
    mma/1 (2 runs)``."""
    kernels = Counter(p.kernel for _, r in found for p in r.points
                      if (p.batch, p.kv_len, p.head_dim, p.heads, p.mode) == call)
    return ", ".join(f"{k} ({counted(n, 'run')})" for k, n in kernels.most_common())


def nearest_calls(found, call: tuple, count: int = 4, ask: str = "--point {batch}x{kv_len}") -> str:
    """The ``count`` recorded calls at ``call``'s head_dim, heads and mode nearest to its batch and kv_len (by the
    ratio of each, so 24 x 6000 is nearer 24 x 8k than 16 x 6k is to 64 x 6k), with their runs, and how to ask for the
    nearest (``ask``, the CLI's option or a notebook's parameter): ``24 x 8k (11 runs), 26 x 8k (2 runs) (--point
    24x8192 for the first)``; '' where none is at that geometry."""
    batch, kv_len, *same = call
    # a run per report that times the call (a report of two kernel variants holds it twice)
    runs = Counter(bn for _, r in found for bn in {(p.batch, p.kv_len) for p in r.points
                                                     if [p.head_dim, p.heads, p.mode] == same})
    near = sorted(runs, key=lambda bn: (math.log(bn[0] / batch) ** 2 + math.log(bn[1] / kv_len) ** 2, bn))[:count]
    if not near:
        return ""
    calls = ", ".join(f"{shape_label(b, n, same[0]).removesuffix(f' d{same[0]}')} ({counted(runs[b, n], 'run')})"
                      for b, n in near)
    return f"{calls} ({ask.format(batch=near[0][0], kv_len=near[0][1])} for the first)"
