"""Persisting L2 lines, which a cold sample's flush cannot evict.

Where a CUDA context sets L2 aside for persisting lines (``cudaLimitPersistingL2CacheSize`` > 0: 11.25 MiB by default
on the four H200s measured, driver 580, in a bare CuPy process), lines a kernel loads with L2::evict_last (FA3 loads K
and V so) stay in L2 through any memset or read of normal lines, so a later sample that reads the same data finds
them there. A cold pad resets them to normal first (docs/decode.md, "Persisting L2 lines, and which flush the issue's
peers had"). The reset is context-wide and not stream-ordered: labkit's samplers put the timed work on their own
stream and synchronize it before the reset, so a ``Pipeline`` pass now waits on the host between its phases.
"""

from collections.abc import Callable

from .. import _deps
from ..cuda import check, cupy

CUDA_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06  # cudaLimitPersistingL2CacheSize


def persisting_l2_bytes() -> int:
    """The L2 bytes this context sets aside for persisting lines; 0 where the device has no such limit (it came with
    sm_80)."""
    cp = cupy()
    try:
        return int(cp.cuda.runtime.deviceGetLimit(CUDA_LIMIT_PERSISTING_L2_CACHE_SIZE))
    except cp.cuda.runtime.CUDARuntimeError:  # cudaErrorUnsupportedLimit
        return 0


def persisting_l2_reset() -> Callable[[], None] | None:
    """``cudaCtxResetPersistingL2Cache`` as a call that raises on failure, where this context sets L2 aside for
    persisting lines; None where it sets none aside (not measured here: every H200 timed had 11.25 MiB). Read once:
    a limit some library sets later goes unseen.

    Raises:
        MissingDependency: a set-aside, but no cuda-bindings to reset it with (a cold sample could not be cold).
    """
    if persisting_l2_bytes() == 0:
        return None
    rt = _deps.require("cuda.bindings.runtime")
    return lambda: check(rt.cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache")
