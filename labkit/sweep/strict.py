"""A finished sweep read strictly, as a notebook needs it: every point of the grid present, each file a
point record of that sweep that succeeded; anything else is one line naming the file."""

from pathlib import Path

from ..errors import LabkitError
from .engine import SweepDir
from .grid import expand, grid_within, point_id, same_grid


def read_sweep(directory: Path | str, workload: str, grid: dict[str, list], *, part: bool = False):
    """One row per point, in grid order: the point's parameters, then its result's fields.

    Args:
        part: ``grid`` may be a part of the sweep's own (a recorded sweep over more values than a notebook asks for):
            only its points are read.

    Raises:
        LabkitError: no sweep here, a sweep of another workload or grid, a point missing, a point file
            that does not parse or is not a record of this point, or a point that failed (its error quoted).
    """
    import pandas as pd

    sweep = SweepDir(directory)
    m = sweep.manifest()
    if m.get("workload") != workload or not (same_grid(m.get("grid"), grid)
                                             or part and grid_within(grid, m.get("grid"))):
        raise LabkitError(f"{sweep.manifest_path}: a sweep of {m.get('workload')} over {m.get('grid')}, "
                          f"not of {workload} over {grid}")
    records = sweep.records()  # each file read strictly, its id its name's
    rows = []
    for params in expand(grid):
        pid = point_id(params)
        f = sweep.points_dir / f"{pid}.json"
        rec = records.get(pid)
        if rec is None:
            raise LabkitError(f"{f}: missing; point {params} of the sweep has no record (run the sweep again to "
                              "finish it)")
        if rec["params"] != params:
            raise LabkitError(f"{f}: holds point {rec['params']!r}, expected {params!r}")
        if rec["status"] != "ok":
            raise LabkitError(f"{f}: point {params} failed: {rec['error']}")
        if not isinstance(rec["result"], dict):
            raise LabkitError(f"{f}: result = {rec['result']!r}: expected an object")
        rows.append({**params, **{k: v for k, v in rec["result"].items() if k not in params}})
    return pd.DataFrame(rows)
