"""CTA scheduling: occupancy from a cubin, the wave model, and measured per-CTA timelines (pure Python)."""

from .occupancy import ARCHS, ArchLimits, Occupancy, cubin_occupancy, limits_for, occupancy
from .timeline import Timeline, TimelineStats
from .waves import Waves, tile_efficiency, waves

__all__ = ["ARCHS", "ArchLimits", "Occupancy", "Timeline", "TimelineStats", "Waves", "cubin_occupancy", "limits_for",
           "occupancy", "tile_efficiency", "waves"]
