"""ncu command lines from labkit's NVTX names and a few named presets (pure: no process is started)."""

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .. import _env
from ..errors import NcuError, NcuUnavailable

PRESETS = {  # replay passes each costs: timing 1-2, sol about 10-15, source about 15-23
    "timing": {"metrics": ("gpu__time_duration.sum", "gpc__cycles_elapsed.max", "gpc__cycles_elapsed.avg.per_second",
                           "dram__bytes_read.sum", "dram__bytes_write.sum")},
    "sol": {"sections": ("SpeedOfLight", "LaunchStats", "Occupancy", "WarpStateStats"),
            "metrics": ("lts__t_sector_hit_rate.pct",
                        "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active")},
    "source": {"sections": ("SourceCounters", "WarpStateStats", "LaunchStats"), "import_source": True},
    "sched": {"sections": ("LaunchStats", "Occupancy", "WorkloadDistribution"),
              "metrics": ("sm__ctas_launched.sum", "sm__ctas_launched.max", "sm__ctas_launched.min",
                          "sm__cycles_active.avg", "sm__cycles_active.max", "sm__cycles_active.min",
                          "gpc__cycles_elapsed.max")},
}


@dataclass(frozen=True)
class NcuOptions:
    """One ncu run. ``nvtx_ranges``: labkit range paths (``bench`` or ``sage2/fused_mainloop``) whose
    kernels are profiled; ``clock_control`` ``none`` keeps boost clocks so counters match event timings."""

    output: Path
    nvtx_ranges: tuple[str, ...] = ()
    preset: str | None = "sol"
    sections: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    clock_control: str = "none"
    replay_mode: str = "kernel"
    source_folders: tuple[Path, ...] = ()
    kernel_name: str | None = None
    launch_count: int | None = None
    extra: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self):
        if self.preset is not None and self.preset not in PRESETS:
            raise NcuError(f"ncu preset {self.preset!r}: expected one of {', '.join(PRESETS)}")
        if self.clock_control not in ("none", "base"):
            raise NcuError(f"clock_control {self.clock_control!r}: expected none or base")
        if self.replay_mode not in ("kernel", "application", "range", "app-range"):
            raise NcuError(f"replay_mode {self.replay_mode!r}: expected kernel, application, range or app-range")
        if self.kernel_name is not None and not self.kernel_name.removeprefix("regex:").strip():
            # '' had been dropped as no filter at all, so every kernel was profiled; --range '' is refused alike
            raise NcuError(f"kernel name {self.kernel_name!r}: expected a kernel's name or regex:PATTERN (ncu syntax, "
                           "e.g. regex:attn_fwd); leave it out to profile every kernel")
        for r in self.nvtx_ranges:
            if not r or r.startswith("/") or "@" in r:
                raise NcuError(f"NVTX range {r!r}: expected a labkit range path such as 'bench' or 'sage2/phase'")


def argv(opts: NcuOptions, target: list[str], *, ncu: str = "ncu") -> list[str]:
    """The full ncu command line for profiling ``target`` (a command and its arguments)."""
    preset = PRESETS.get(opts.preset or "", {})
    sections = (*preset.get("sections", ()), *opts.sections)
    metrics = (*preset.get("metrics", ()), *opts.metrics)
    out = [ncu, "--target-processes", "all", "--clock-control", opts.clock_control, "--replay-mode", opts.replay_mode,
           "-f", "-o", str(opts.output.with_suffix("")), "--log-file", str(opts.output.with_suffix(".log"))]
    if opts.nvtx_ranges:
        out.append("--nvtx")
        for r in opts.nvtx_ranges:  # a single push/pop range needs the trailing '/'; labkit's domain is named
            out += ["--nvtx-include", f"labkit@{r.rstrip('/')}/"]
    for s in dict.fromkeys(sections):
        out += ["--section", s]
    if metrics:
        out += ["--metrics", ",".join(dict.fromkeys(metrics))]
    if preset.get("import_source") or opts.source_folders:
        out += ["--import-source", "yes"]
        for folder in opts.source_folders:
            out += ["--source-folders", str(folder)]
    if opts.kernel_name is not None:
        out += ["--kernel-name", opts.kernel_name]
    if opts.launch_count is not None:
        out += ["--launch-count", str(opts.launch_count)]
    return [*out, *opts.extra, *target]


def find_ncu() -> str:
    """The ncu executable: ``$LABKIT_NCU``, then PATH, then /usr/local/cuda/bin/ncu.

    Raises:
        NcuUnavailable: none found (the message says where labkit looked and what to set); NcuError: LABKIT_NCU names
            no file.
    """
    given = _env.getenv("LABKIT_NCU")
    if given and not Path(given).is_file():  # asked for that ncu: another one found on PATH would not be it
        raise NcuError(f"Nsight Compute (ncu) not found: LABKIT_NCU={given} is no file (unset it to search PATH and "
                       "/usr/local/cuda/bin/ncu)")
    for candidate in (given, shutil.which("ncu"), "/usr/local/cuda/bin/ncu"):
        if candidate and Path(candidate).is_file():
            return candidate
    raise NcuUnavailable("Nsight Compute (ncu) not found: looked at $LABKIT_NCU, PATH and /usr/local/cuda/bin/ncu; "
                         "install Nsight Compute or set LABKIT_NCU to its ncu")


# what ncu's log says when the machine, not the command, kept it from profiling
DRIVER_RESOURCE = "Profiling failed because a driver resource was unavailable"
LOCK_FILE = "Failed to open/create lock file"
MACHINE_FAULTS = ("ERR_NVGPUCTRPERM", "LibraryNotLoaded", DRIVER_RESOURCE, LOCK_FILE)


def diagnose(log: str) -> str | None:
    """One line for the known ways an ncu run fails, from its log (None when none applies)."""
    if "ERR_NVGPUCTRPERM" in log:
        return ("ncu may not read the GPU's performance counters here (ERR_NVGPUCTRPERM): run as root, or set "
                "NVreg_RestrictProfilingToAdminUsers=0 for the nvidia module")
    if "LibraryNotLoaded" in log:
        return "ncu could not load its profiler library here (LibraryNotLoaded): a sandboxed runtime cannot profile"
    if DRIVER_RESOURCE in log:  # ncu-automation.md 8: another client holds the counters
        return ("ncu found the GPU's counters taken (a driver resource was unavailable): another profiler or DCGM "
                "holds them; stop it (e.g. dcgmi profile --pause) and run again")
    if LOCK_FILE in log:  # one profiler per device: its lock file lives under $TMPDIR
        return ("ncu could not create its lock file (under $TMPDIR/nvidia/nsight_compute): set TMPDIR to a writable "
                "directory")
    if m := re.search(r"The application returned an error code \((-?\d+)\)", log):  # before its "No kernels"
        return (f"the profiled program failed (exit code {m.group(1)}) before or while ncu profiled it: run it "
                "without ncu to see why")
    if "No kernels were profiled" in log:
        return ("ncu profiled no kernel: check the NVTX filter (labkit ranges live in domain 'labkit') and that the "
                "program launched kernels inside it")
    return None
