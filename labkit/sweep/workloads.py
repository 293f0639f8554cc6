"""Sweep workloads: functions of a point's parameters that return a JSON-ready dict, registered by name."""

import os
import time
from collections.abc import Callable

from ..errors import ArgumentError

_REGISTRY: dict[str, Callable[..., dict]] = {}


def register(name: str):
    def wrap(fn):
        _REGISTRY[name] = fn
        return fn
    return wrap


def get(name: str) -> Callable[..., dict]:
    if name not in _REGISTRY:
        raise ArgumentError(f"workload {name!r}: known workloads are {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name]


def names() -> list[str]:
    return sorted(_REGISTRY)


@register("demo.sleep")
def demo_sleep(ms: float = 10, fail: str = "", **params) -> dict:
    """No GPU: sleeps ``ms`` milliseconds and returns its parameters (``fail=yes`` raises, to try retries)."""
    if fail == "yes":
        raise RuntimeError(f"demo.sleep asked to fail ({params})")
    time.sleep(float(ms) / 1e3)
    return {"ms": ms, **params, "pid": os.getpid(), "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}


@register("decode.point")
def decode_point(batch: int, kv_len: int, head_dim: int = 128, splits: int = 0, iterations: int = 20) -> dict:
    """One paged-decode timing (GPU): labkit.workloads.decode.bench.bench_point; ``splits`` 0 = heuristic."""
    from ..workloads.decode.bench import bench_point

    return bench_point(int(batch), int(kv_len), int(head_dim), splits=int(splits) or None,
                       iterations=int(iterations))
