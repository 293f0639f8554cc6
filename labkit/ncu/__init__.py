"""Nsight Compute: command lines (pure), running under ncu, report reading, per-phase source attribution
and notebook 05's summary tables (reading needs no GPU)."""

from .command import PRESETS, NcuOptions, argv, diagnose, find_ncu
from .report import Report, actions, join_timings, kernels, load, nvtx_path, rules
from .runner import NcuRun, available, profile, profile_call, profile_notebook
from .source import UNMAPPED, phase_map, phase_names, phases, stalls

__all__ = ["PRESETS", "UNMAPPED", "NcuOptions", "NcuRun", "Report", "actions", "argv", "available", "diagnose",
           "find_ncu", "join_timings", "kernels", "load", "nvtx_path", "phase_map", "phase_names", "phases",
           "profile", "profile_call", "profile_notebook", "rules", "stalls"]
