"""CTA scheduling: occupancy from a cubin, the wave model, and measured per-CTA timelines (pure Python)."""

from .model import LaunchModel, decode_launch, dense_lengths, sage2_launch
from .occupancy import ARCHS, ArchLimits, Occupancy, cubin_occupancy, limits_for, occupancy
from .timeline import Timeline, TimelineStats
from .waves import Waves, tile_efficiency, waves

__all__ = ["ARCHS", "ArchLimits", "LaunchModel", "Occupancy", "Timeline", "TimelineStats", "Waves", "cubin_occupancy",
           "decode_launch", "dense_lengths", "limits_for", "occupancy", "sage2_launch", "tile_efficiency", "waves"]
