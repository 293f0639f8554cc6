"""The Sage2 profiling report: typed, frozen, in the field order of the user's seed file."""

from dataclasses import dataclass, fields

from ..timing.stats import Stats

# Regions timed as one region around their members (the seed times both levels).
PHASE_GROUPS: dict[str, tuple[str, ...]] = {
    "qk_int8_quantization": ("q_int8_quantization", "k_int8_subtract_mean_quantization"),
    "v_fp8_transpose_scale_quantization": ("v_transpose_pad_permute", "v_scale_fp8_quantization"),
}


@dataclass(frozen=True)
class Scheduler:
    """Launch geometry of the fused mainloop (seed ``scheduler``)."""

    cta_q: int
    cta_k: int
    warp_q: int
    warp_k: int
    warps_per_cta: int
    threads_per_cta: int
    dynamic_shared_memory_bytes: int
    q_ctas_per_head: int
    heads: int
    grid_ctas: int
    k_iterations_per_cta: int
    q_tail_rows: int
    k_tail_rows: int
    explicit_pipeline_stages: int


@dataclass(frozen=True)
class DecompositionCheck:
    """Phase-by-phase output vs one-shot output (seed ``manual_decomposition_vs_public_sage2``)."""

    equal: bool
    max_abs: float
    mean_abs: float


@dataclass(frozen=True)
class TailPoint:
    """One (sweep, q_len, kv_len) point of the tail study."""

    sweep: str
    q_len: int
    kv_len: int
    q_ctas_per_head: int
    k_iterations_per_cta: int
    q_tail_rows: int
    k_tail_rows: int
    scheduled_q_rows: int
    q_row_efficiency: float
    mainloop: Stats
    checksum: float


@dataclass(frozen=True)
class Sage2Report:
    """A Sage2 profiling report.

    ``report_version`` 0 is the user's seed format (no version key, no provenance); version 1
    is what labkit writes: the same fields plus ``report_version``, ``provenance`` and, when
    measured, ``accuracy`` and ``checksum_definition``.
    """

    metadata: dict
    q_shape: tuple[int, ...]
    k_shape: tuple[int, ...]
    v_shape: tuple[int, ...]
    warmup: int
    iterations: int
    phase_timings: dict[str, Stats]
    fused_mainloop_phases: dict[str, str]
    scheduler: Scheduler
    decomposition: DecompositionCheck
    manual_checksum: float
    reference_checksum: float
    tail_study: tuple[TailPoint, ...]
    report_version: int = 0
    provenance: dict | None = None
    accuracy: dict | None = None
    checksum_definition: str | None = None

    def to_dict(self) -> dict:
        """The JSON document (seed key order)."""
        from .io import to_dict

        return to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Sage2Report":
        """Validate a parsed JSON document (as ``load`` does for a file)."""
        from .._json import Node
        from .io import from_node

        return from_node(Node(d))

    def top_level_phases(self) -> list[str]:
        """Phases that are not members of a group: their times add up to the pipeline."""
        members = {m for ms in PHASE_GROUPS.values() for m in ms}
        return [p for p in self.phase_timings if p not in members]

    def to_frame(self):
        """Phase table: count, p50/p90 in ms, share of the pipeline total (top-level phases)."""
        from .. import _deps

        pd = _deps.require("pandas")
        top = self.top_level_phases()
        total = sum(self.phase_timings[p].p50_s for p in top)
        rows = []
        for name, st in self.phase_timings.items():
            rows.append({"phase": name, "level": 0 if name in top else 1, "count": st.count,
                         "p50_ms": st.p50_s * 1e3, "p90_ms": st.p90_s * 1e3, "share": st.p50_s / total})
        return pd.DataFrame(rows).set_index("phase")

    def tail_frame(self):
        from .. import _deps

        pd = _deps.require("pandas")
        rows = []
        for t in self.tail_study:
            d = {f.name: getattr(t, f.name) for f in fields(t) if f.name != "mainloop"}
            d.update({f"mainloop_{k}": v for k, v in t.mainloop.to_dict().items()})
            rows.append(d)
        return pd.DataFrame(rows)
