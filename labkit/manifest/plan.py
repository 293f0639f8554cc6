"""Launch plans: the checked launches turned into geometry and parameter bytes.

Runs after ``check()`` and only on launches it found no error in (``LaunchCheck.ok``), so
packing never meets a value it cannot write. Offline (no driver) pointers and tensor maps
are zero; ``Runner`` packs again with real ones.
"""

from dataclasses import dataclass

from .families import member_names
from .model import BufArg, VarArg
from .pack import Bindings, FieldRow, pack_bytes
from .validate import CheckResult, LaunchCheck


@dataclass(frozen=True)
class LaunchPlan:
    call: str
    op: str
    launch_index: int
    module: str
    entry: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem: int
    static_smem: int | None
    pack_size: int
    rows: tuple[FieldRow, ...]
    tensormap_dims: dict[int, tuple[int, ...]]  # field index -> dims with 0s derived
    call_args: tuple
    offline_blob: bytes  # the parameter block with pointers and tensor maps zero (no driver)


def _plan(lc: LaunchCheck, values: dict[str, int]) -> LaunchPlan:
    bound = lc.bound
    params = tuple(values[a.var] if isinstance(a, VarArg) else 0 for a in bound)
    names = tuple(f"var {a.var} = {values[a.var]}" if isinstance(a, VarArg) else
                  f"{a.buf}+{a.offset}" if isinstance(a, BufArg) else "?" for a in bound)
    pack = lc.launch.args[0]
    blob, rows = pack_bytes(pack, lc.op, Bindings(params, names, {}, {}), member_names(lc.launch))
    return LaunchPlan(lc.call.label, lc.op.name, lc.launch_index, lc.launch.module, lc.launch.entry, lc.grid,
                      lc.launch.block, lc.launch.shared_mem, lc.static_smem, pack.size, tuple(rows),
                      lc.tensormap_dims, bound, blob)


def plan_launches(res: CheckResult) -> list[LaunchPlan]:
    """Plans of the launches without errors, in program order."""
    return [_plan(lc, res.vars) for lc in res.launches if lc.ok]
