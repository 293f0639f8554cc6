"""A finished sweep read strictly, as a notebook needs it: every point of the grid present, each file a
point record of that sweep that succeeded; anything else is one line naming the file."""

from pathlib import Path

from ..errors import LabkitError
from .engine import SweepDir
from .grid import expand, point_id


def read_sweep(directory: Path | str, workload: str, grid: dict[str, list]):
    """One row per point, in grid order: the point's parameters, then its result's fields.

    Raises:
        LabkitError: no sweep here, a sweep of another workload or grid, a point missing, a point file
            that does not parse or is not a record of this point, or a point that failed (its error quoted).
    """
    import pandas as pd

    from .._json import load_document

    sweep = SweepDir(directory)
    m = sweep.manifest()
    if m.get("workload") != workload or m.get("grid") != grid:
        raise LabkitError(f"{sweep.manifest_path}: a sweep of {m.get('workload')} over {m.get('grid')}, "
                          f"not of {workload} over {grid}")
    rows = []
    for params in expand(grid):
        pid = point_id(params)
        f = sweep.points_dir / f"{pid}.json"
        if not f.is_file():
            raise LabkitError(f"{f}: missing; point {params} of the sweep has no record (run the sweep again to "
                              "finish it)")
        rec = load_document(f, what="sweep point").obj(("id", "params", "status", "result", "error"), any_keys=True)
        if rec["id"].value != pid or rec["params"].value != params:
            raise LabkitError(f"{f}: holds point {rec['params'].value!r}, expected {params!r}")
        if rec["status"].str() != "ok":
            raise LabkitError(f"{f}: point {params} failed: {rec['error'].value}")
        result = rec["result"].obj(any_keys=True).value
        rows.append({**params, **{k: v for k, v in result.items() if k not in params}})
    return pd.DataFrame(rows)
