"""Test tiers: tests/unit never touch CUDA; tests marked ``gpu`` skip without a usable GPU."""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("LABKIT_BATCH", "1")


def pytest_collection_modifyitems(config, items):
    from labkit.cuda import gpu_status

    ok, reason = gpu_status()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"needs a GPU: {reason}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def seed_report_path() -> Path:
    return ROOT / "data" / "sage2_report_seed.json"
