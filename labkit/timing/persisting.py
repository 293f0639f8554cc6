"""Persisting L2 lines, which a cold sample's flush cannot evict.

Where a CUDA context sets L2 aside for persisting lines (``cudaLimitPersistingL2CacheSize`` > 0: 11.25 MiB on the
H200s measured, in a bare process), lines a kernel loads with L2::evict_last (FA3's K/V loads do) stay in L2 through any
memset or read of normal lines, so the next sample that reads the same data finds them there. A cold pad resets them
to normal first (docs/decode.md, "Persisting L2 lines, and which flush the issue's peers had").
"""

from collections.abc import Callable

from .. import _deps
from ..cuda import cupy
from ..errors import TimingError

CUDA_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06  # cudaLimitPersistingL2CacheSize


def persisting_l2_reset() -> Callable[[], None] | None:
    """``cudaCtxResetPersistingL2Cache`` as a call that raises on failure, where this context sets L2 aside for
    persisting lines (its ``cudaLimitPersistingL2CacheSize`` is above 0); None where it does not, since no line can
    then outlive a flush that way.

    Raises:
        TimingError: a set-aside, but no cuda-bindings to reset it with (a cold sample could not be cold).
    """
    cp = cupy()
    limit = int(cp.cuda.runtime.deviceGetLimit(CUDA_LIMIT_PERSISTING_L2_CACHE_SIZE))
    if limit == 0:
        return None
    rt = _deps.optional("cuda.bindings.runtime")
    if rt is None:
        raise TimingError(f"this GPU context sets {limit} bytes of L2 aside for persisting lines, which outlive the "
                          "cold flush; resetting them before each sample needs cuda-bindings (pip install "
                          "cuda-bindings)")

    def reset() -> None:
        (err,) = rt.cudaCtxResetPersistingL2Cache()
        if int(err) != 0:
            raise TimingError(f"cudaCtxResetPersistingL2Cache failed: {err}")
    return reset
