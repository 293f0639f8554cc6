"""A point that leaves its process's CUDA context unusable: a kernel's illegal address, trap or device-side assert is
a sticky error, returned by every later CUDA call of that process. The point is failed with the error's name; the
executors then run no further point in that process (the local executor stops the sweep, the process pool starts a new
pool, a Dask worker runs no more points, and the sweep says how many it left to a resume), where every later point
had failed with the same error, none of it theirs."""

import sys

from ..errors import LabkitError

# cudaErrorIllegalAddress, Assert, HardwareStackError, IllegalInstruction, MisalignedAddress, InvalidAddressSpace,
# InvalidPc, LaunchFailure (the driver API's CUDA_ERROR_* have the same numbers)
STICKY_CUDA_ERRORS = frozenset({700, 710, 714, 715, 716, 717, 718, 719})

_simulated: str | None = None  # demo.sleep fail=lost: a context lost without a GPU, to try how a sweep goes on


class SweepStopped(LabkitError):
    """A local sweep stopped early: a point lost this process's CUDA context, so the rest cannot run here (the CLI
    exits 1, as for a failed point). ``ends_process``: the context is really lost (not simulated), so the CLI ends the
    process at once after its line: tearing CUDA down at exit had printed CuPy's tracebacks under it."""

    exit_status = 1

    def __init__(self, message: str, *, ends_process: bool = False):
        super().__init__(message)
        self.ends_process = ends_process


class PointNotRun(Exception):  # noqa: N818 - a point's outcome, not an error of the sweep
    """A Dask worker whose CUDA context was lost refuses a point rather than fail it with another point's error."""


def simulate_lost(error_name: str) -> None:
    """Mark this process's context as lost (demo.sleep's ``fail=lost``); its later demo points fail as a GPU's would."""
    global _simulated
    _simulated = error_name


def simulated_lost() -> str | None:
    """The error ``simulate_lost`` marked this process with (None: none)."""
    return _simulated


def cuda_context_lost() -> str | None:
    """The sticky CUDA error this process's context holds, by name (``cudaErrorIllegalAddress``); None where it holds
    none, or CUDA was never used here (a synchronize then finds no driver or device: not a lost context)."""
    if _simulated is not None:
        return _simulated
    cp = sys.modules.get("cupy")
    if cp is None:
        return None
    try:
        cp.cuda.runtime.deviceSynchronize()
    except cp.cuda.runtime.CUDARuntimeError as exc:
        return str(exc).split(":")[0] if exc.status in STICKY_CUDA_ERRORS else None
    except Exception:  # noqa: BLE001 - whatever else a synchronize says, it is not a sticky error of a kernel
        return None
    return None
