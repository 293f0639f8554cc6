"""CTA scheduling: occupancy from a cubin and the wave model (pure Python, no GPU)."""

from .occupancy import ARCHS, ArchLimits, Occupancy, cubin_occupancy, limits_for, occupancy
from .waves import Waves, tile_efficiency, waves

__all__ = ["ARCHS", "ArchLimits", "Occupancy", "Waves", "cubin_occupancy", "limits_for", "occupancy",
           "tile_efficiency", "waves"]
