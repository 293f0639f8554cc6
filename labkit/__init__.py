"""labkit: profiling notebooks and helpers for GPU attention kernels.

``import labkit`` does no GPU work: submodules load on first attribute access.
"""

import importlib

__version__ = "0.1.0"

# every package a notebook reaches as labkit.NAME (an API walk found labkit.sweep, .manifest and .workloads missing,
# though the README calls labkit.sweep.run)
_SUBMODULES = ("cuda", "device", "errors", "kernels", "manifest", "ncu", "notebooks", "params", "plot", "probes",
               "provenance", "recorded_runs", "report", "sched", "session", "sweep", "timing", "values", "workloads")
__all__ = [*_SUBMODULES, "setup_logging", "progress", "repo_path", "wrapped", "__version__"]


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in ("setup_logging", "progress", "repo_path"):
        return getattr(importlib.import_module("._env", __name__), name)
    if name == "wrapped":  # what a notebook prints, in lines JupyterLab's pane does not break mid-word
        return importlib.import_module("._text", __name__).wrapped
    raise AttributeError(f"module 'labkit' has no attribute {name!r}")
