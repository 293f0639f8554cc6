"""Code-shape budgets, checked in CI like tinygrad's sz.py: small modules, lint-clean."""

import shutil
import subprocess
import sys

import pytest

from ..conftest import ROOT

LINE_BUDGET = 400  # lines per module; split at the second concern


def test_modules_stay_small():
    big = {str(p.relative_to(ROOT)): n for p in (ROOT / "labkit").rglob("*.py")
           if (n := len(p.read_text().splitlines())) > LINE_BUDGET}
    assert not big, f"modules over {LINE_BUDGET} lines: {big}"


def test_lint_clean():
    ruff = shutil.which("ruff") or (None if not (ROOT / ".venv/bin/ruff").exists() else str(ROOT / ".venv/bin/ruff"))
    if ruff is None:
        pytest.skip("ruff not installed")
    out = subprocess.run([ruff, "check", "labkit", "tests", *map(str, (ROOT / "notebooks").glob("*.py"))],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_kernels_have_headers():
    for cu in (ROOT / "labkit").rglob("*.cu"):
        first = cu.read_text().splitlines()[0]
        assert first.startswith(f"// {cu.name}:"), f"{cu}: the first line should say what the file is"


def test_python_version():
    assert sys.version_info >= (3, 11)
