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


@pytest.fixture(autouse=True)
def _close_figures():
    """Each test's figures closed after it: pyplot keeps every open one (and warns past 20)."""
    yield
    import sys

    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


@pytest.fixture
def seed_report_path() -> Path:
    return ROOT / "data" / "sage2_report_seed.json"


def static_smem_kernel(declared: int) -> str:
    """CUDA source of ``k``, 128 threads, with ``declared`` bytes of static shared memory (none for 0) that it uses, so
    the compiler keeps them: the occupancy tests' kernel, CPU and GPU."""
    body = (f"__shared__ char buf[{declared}]; buf[threadIdx.x % {declared}] = (char)threadIdx.x; __syncthreads(); "
            f"o[threadIdx.x] = buf[(threadIdx.x + 1) % {declared}];") if declared else ""
    return f'extern "C" __global__ void __launch_bounds__(128) k(char* o) {{ {body} }}'


def as_read(text: str) -> str:
    """Printed text with each run of line breaks, indents and spaces as one space: what it says, wherever
    ``labkit.wrapped`` broke its lines for JupyterLab's pane."""
    return " ".join(text.split())


def execute_notebook_source(path: Path, params: dict) -> dict:
    """Run a notebook's percent-format source cell by cell in this process, ``params`` injected after its parameters
    cell (the notebook tests fake the GPU calls in this process, which papermill's kernel would not see)."""
    cells = path.read_text().split("\n# %%")
    ns: dict = {}
    for i, cell in enumerate(cells):
        exec(compile(cell if i == 0 else "# %%" + cell, str(path), "exec"), ns)
        if cell.startswith(' tags=["parameters"]'):
            ns.update(params)
    return ns
