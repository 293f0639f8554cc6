"""Workloads: each declares its shapes, inputs, reference, kernels and checks."""

import importlib

__all__ = ["decode", "sage2"]


def __getattr__(name: str):
    if name in __all__:  # labkit.workloads.decode from ``import labkit``, as the other packages load
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'labkit.workloads' has no attribute {name!r}")
