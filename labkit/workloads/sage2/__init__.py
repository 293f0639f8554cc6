"""Sage2 (INT8 QK, FP8 PV) attention as labkit's own kernels: schedule, plan, references, report."""

from .schedule import Schedule, scheduler, tail_fields

__all__ = ["Schedule", "scheduler", "tail_fields"]
