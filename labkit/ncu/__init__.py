"""Nsight Compute: command lines (pure), report reading and per-phase source attribution (no GPU needed)."""

from .command import PRESETS, NcuOptions, argv, diagnose, find_ncu
from .report import Report, actions, join_timings, kernels, load, nvtx_path, rules
from .source import UNMAPPED, phase_map, phases

__all__ = ["PRESETS", "UNMAPPED", "NcuOptions", "Report", "actions", "argv", "diagnose", "find_ncu", "join_timings",
           "kernels", "load", "nvtx_path", "phase_map", "phases", "rules"]
