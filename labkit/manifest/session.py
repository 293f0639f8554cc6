"""Notebook-level helpers: run a manifest if this GPU can, the proof run, the field table."""

import tempfile
from pathlib import Path

import numpy as np

from .. import _deps
from ..cuda import cupy
from .pack import FIELD_COLUMNS
from .parse import load
from .validate import CheckResult, check


def try_run(path: str | Path, *, vars: dict[str, int] | None = None, iterations: int = 20,
            cubin_dirs: tuple = ()) -> dict:
    """Check ``path`` against this GPU and run it when it can; else say why not (JSON-ready)."""
    from ..device import describe
    from .runner import Runner

    dev = describe()
    res = check(load(path), vars=vars, device=dev, cubin_dirs=cubin_dirs)
    out = {"device": dev.name, "arch": dev.arch, "ran": False,
           "errors": [str(e) for e in res.errors], "warnings": [str(w) for w in res.issues if w.severity == "warning"]}
    if not res.ok:
        out["reason"] = f"{len(res.errors)} error(s) against {dev.name}; nothing launched"
        return out
    r = Runner(load(path), vars=vars, cubin_dirs=cubin_dirs)
    r.run_once()
    out["ran"] = True
    out["timings"] = {k: t.to_dict() for k, t in r.time(iterations=iterations).items()}
    return out


def run_proof(rows: int = 4099, cols: int = 1000, *, iterations: int = 50, seed: int = 0) -> dict:
    """Build the proof kernel for this GPU, run it through its manifest, check every element."""
    from ..device import describe
    from . import proof
    from .runner import Runner

    cp = cupy()
    dev = describe()
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    bias = rng.standard_normal(cols).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        path = proof.build(tmp, rows, cols, arch=dev.arch)
        r = Runner(load(path), cubin_dirs=(tmp,), fill=lambda n, a: a.set({"x": x, "bias": bias}[n]))
        r.run_once()
        out = cp.asnumpy(r.buffers["out"])
        err = np.abs(out.astype(np.float64) - proof.reference(x, bias))
        timings = r.time(iterations=iterations)
    t = timings["proof/tma_scale"]
    return {"rows": rows, "cols": cols, "device": dev.name, "elements_checked": int(out.size),
            "nan_or_unwritten": int(np.isnan(out).sum()),
            "max_abs_err": float(err.max()) if np.isfinite(err).all() else None,  # JSON holds no NaN
            "ctas": int(-(-rows // 32) * -(-cols // 32)), "done": int(r.buffers["done"][0]),
            "p50_us": t.stats.p50_s * 1e6, "GBps": 2 * x.nbytes / t.stats.p50_s / 1e9, "timing": t.to_dict()}


def field_frame(res: CheckResult, plan_index: int = 0):
    """The parameter-block map of one launch as a DataFrame, the columns of ``manifest check``'s table, indexed by
    the field as the check's messages name it (``fields[21]``), in byte order."""
    pd = _deps.require("pandas")
    plan = res.plans[plan_index]
    return pd.DataFrame([r.cells() for r in plan.rows], columns=FIELD_COLUMNS).set_index("field")


def device_run_lines(result: dict) -> list[str]:
    """What ``try_run`` found, in words: each timing's p50, or why nothing ran."""
    if result["ran"]:
        return [f"{label}: p50 {t['stats']['p50_s'] * 1e3:.4f} ms over {t['stats']['count']} samples"
                for label, t in result["timings"].items()]
    return [f"not run on {result['device']} ({result['arch']}): {result['reason']}", *map(str, result["errors"])]


def _error(max_abs_err: float | None) -> str:
    return "NaN or inf" if max_abs_err is None else f"{max_abs_err:.2e}"


def proof_line(p: dict) -> str:
    """The proof run in one line: elements checked, error, CTAs counted, time."""
    return (f"proof kernel on {p['device']}: {p['rows']} x {p['cols']}, {p['elements_checked']:,} elements checked, "
            f"max |err| {_error(p['max_abs_err'])}, unwritten {p['nan_or_unwritten']}, {p['done']}/{p['ctas']} CTAs "
            f"counted; p50 {p['p50_us'] / 1e3:.4f} ms = {p['GBps']:.0f} GB/s read + write")
