"""Optional dependencies, imported lazily through one function that names the extra."""

import importlib
from types import ModuleType

from .errors import MissingDependency

# import name -> (pip distribution, labkit extra)
_EXTRAS = {
    "nvtx": ("nvtx", "nvtx"),
    "matplotlib": ("matplotlib", "plot"),
    "pandas": ("pandas", "plot"),
    "papermill": ("papermill", "nb"),
    "jupytext": ("jupytext", "nb"),
    "nbformat": ("nbformat", "nb"),
    "pynvml": ("nvidia-ml-py", "driver"),
    "cuda.bindings.driver": ("cuda-bindings", "driver"),
    "cuda.bindings.runtime": ("cuda-bindings", "driver"),
    "cupy": ("cupy-cuda13x", "core"),
    "ncu_report": ("ncu-report", "ncu"),
    "distributed": ("distributed", "scale"),
    "dask_cuda": ("dask-cuda", "scale"),
}


def require(module: str) -> ModuleType:
    """Import ``module`` or raise MissingDependency naming the pip extra that brings it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        dist, extra = _EXTRAS.get(module, (module, None))
        hint = f"pip install 'labkit[{extra}]'" if extra and extra != "core" else f"pip install {dist}"
        raise MissingDependency(f"{module} is not installed ({exc}); install it with: {hint}") from None


def optional(module: str) -> ModuleType | None:
    """Import ``module`` if it is installed, else None (for features that degrade to no-ops)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None
