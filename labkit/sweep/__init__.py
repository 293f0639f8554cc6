"""Sweeps that survive interruption: a workload times a parameter grid, one file per finished point,
run in this process, in a process pool (one GPU per process) or on Dask."""

from .engine import SweepDir, collect, run, run_point, status
from .executors import EXECUTORS
from .grid import expand, parse_axis, point_id
from .strict import read_sweep
from .workloads import names as workload_names
from .workloads import register

__all__ = ["EXECUTORS", "SweepDir", "collect", "expand", "parse_axis", "point_id", "read_sweep", "register", "run",
           "run_point", "status", "workload_names"]
