"""Where a number came from: device, clocks, versions, git sha, time. One dict, JSON-ready."""

import datetime as _dt
import importlib.metadata
import os
import platform
import re
import subprocess

from . import _env, cuda
from .errors import ArgumentError

PACKAGES = ("labkit", "numpy", "cupy-cuda13x", "cuda-bindings", "nvidia-cuda-nvrtc", "pandas", "matplotlib",
            "nvtx", "papermill", "torch", "triton")


_SHA = re.compile(r"[0-9a-f]{7,64}(-dirty)?")  # a commit as git names it (SHA-1 or SHA-256), and a dirty tree


def given_git_sha() -> str | None:
    """``LABKIT_GIT_SHA`` checked (None when unset): the CLI asks before any command, so a typo is refused before a
    run, not recorded as its provenance.

    Raises:
        ArgumentError: not 7 to 64 hex digits (optionally with ``-dirty``), naming the variable and its value.
    """
    given = _env.getenv("LABKIT_GIT_SHA")
    if given and not _SHA.fullmatch(given):
        raise ArgumentError(f"LABKIT_GIT_SHA={given!r}: expected the commit's sha, 7 to 64 lowercase hex digits (git "
                            "rev-parse HEAD), optionally with -dirty; unset it to ask git")
    return given or None


def git_sha() -> str:
    """``LABKIT_GIT_SHA`` when set (a copied tree, e.g. on a GPU host, whose ``.git`` may be
    stale: it outranks what git says there); else the checkout's commit, with ``-dirty`` when
    tracked files differ; ``unknown`` outside git."""
    root = _env.repo_root()
    given = given_git_sha()
    if given:
        return given
    fallback = "unknown"
    try:
        head = subprocess.run(["git", "rev-parse", "--verify", "HEAD"], cwd=root, capture_output=True, text=True,
                              timeout=10)
        if head.returncode != 0:  # e.g. a copied tree whose .git cannot resolve HEAD
            return fallback
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return fallback
    return head.stdout.strip() + ("-dirty" if dirty else "")


def versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    if out["labkit"] is None:  # run from a source tree (PYTHONPATH), not installed
        from . import __version__

        out["labkit"] = __version__
    return out


def host() -> str:
    """This machine's name with its CPU model and core count: host-side costs (a launch, an event record) scale with
    the CPU, and two H200 hosts' bare launches differed 1.6x (4.5 and 7.4 us) with nothing in a record to say why."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{platform.node()} ({cpu}, {usable} CPUs)"  # the CPUs this process may use (a job's cgroup or taskset)


def collect(*, timing_mode: str | None = None) -> dict:
    """Provenance of a run on this machine now. Works without a GPU (device is then null)."""
    ok, reason = cuda.gpu_status()  # looked up per call: a test's fake of it is undone here too
    device = clocks = None
    if ok:
        from .device import describe, sm_clock_hz

        info = describe()
        device = info.to_dict()
        clocks = {"sm_clock_hz": sm_clock_hz(info.index), "sm_clock_max_hz": info.sm_clock_max_hz}
    return {
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "host": host(),
        "git_sha": git_sha(),
        "timing_mode": timing_mode,
        "device": device,
        "gpu_status": reason,
        "clocks": clocks,
        "versions": versions(),
    }


PROVENANCE_KEYS = ("created_utc", "host", "git_sha", "timing_mode", "device", "gpu_status", "clocks", "versions")


def read(node, *, any_keys: bool = False) -> dict:
    """A report's ``provenance`` (``collect``'s keys; ``any_keys``: a decode report's notes beside them), each value
    checked: a device is null or a whole device description, clocks null or positive integers, versions strings
    (or null: not installed). A wrong one had shown as 'not recorded' and made report diff name a difference that
    is the file's fault.

    Raises:
        FormatError: the key and what was expected.
    """
    n = node.obj(PROVENANCE_KEYS, any_keys=any_keys)
    try:  # report map --newest and the spreads order runs by it
        _dt.datetime.fromisoformat(n["created_utc"].str())
    except ValueError:
        raise n["created_utc"].fail("an ISO 8601 time (collect() writes 2026-12-04T22:27:40+00:00)") from None
    n["host"].str()
    n["gpu_status"].str()
    for key in ("git_sha", "timing_mode"):
        if n[key].value is not None:
            n[key].str()
    if n["device"].value is not None:
        from .device import DeviceInfo

        DeviceInfo.from_dict(n["device"])
    if n["clocks"].value is not None:
        for _, hz in n["clocks"].items():
            if hz.value is not None:
                hz.int(1)
    for _, version in n["versions"].items():
        if version.value is not None:  # null: the package is not installed
            version.str()
    return n.value
