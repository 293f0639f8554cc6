"""GPU timing: NVTX ranges, CUDA-event sampling, statistics, pipelines.

``stats`` and ``nvtx`` import nothing GPU-related; ``time_gpu`` and ``Pipeline`` start CUDA
only when called.
"""

from .events import COLD_MODES, MODES, count_graph_nodes, flush_l2, time_gpu
from .interleave import interleave, round_orders
from .nvtx import DOMAIN, nvtx_range
from .pipeline import Pipeline, PipelineTiming
from .record import Timing
from .stats import STAT_FIELDS, Spread, Stats

__all__ = ["COLD_MODES", "DOMAIN", "MODES", "STAT_FIELDS", "Pipeline", "PipelineTiming", "Spread", "Stats", "Timing",
           "count_graph_nodes", "flush_l2", "interleave", "nvtx_range", "round_orders",
           "time_gpu"]
