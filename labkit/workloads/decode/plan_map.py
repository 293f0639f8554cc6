"""The plan over a grid of calls: the build, split count and CTAs per SM that ``plan.plan_call`` gives each batch x
kv_len of one geometry, with no GPU (the cubins' occupancy comes from NVRTC). ``labkit decode plans`` prints it; the
README's Decode section shows the default grid, so that a reader sees which calls each rule of the plan takes."""

from dataclasses import dataclass

from ..._text import length_label, wrapped
from ...errors import ArgumentError
from .geometry import DecodeGeometry
from .labels import legend, plan_label
from .plan import plan_call
from .run import H200_PLANNED, geometry_for, plan_here

DEFAULT_BATCHES = (1, 2, 4, 8, 16, 17, 24, 32, 64, 128, 256)
DEFAULT_KV_LENS = (1024, 2048, 8192, 32768)
MIN_LINE = 100  # the text lines wrap at the table's width, at least this


@dataclass(frozen=True)
class PlannedCall:
    """One call's plan: its build as decode tables name it (``geometry.kernel_label``, with a tail's unit count after
    it as the bench writes it), its KV splits per (sequence, KV head) unit and its CTAs per SM."""

    batch: int
    kv_len: int
    kernel: str
    splits: int
    ctas_per_sm: int


@dataclass(frozen=True)
class PlanMap:
    """The plans of ``batches`` x ``kv_lens`` at one geometry, and what they were planned for (the H200's defaults,
    or the GPU at hand)."""

    head_dim: int
    heads_q: int
    heads_kv: int
    page_size: int
    planned_for: str
    calls: tuple[PlannedCall, ...]

    @property
    def batches(self) -> tuple[int, ...]:
        return tuple(dict.fromkeys(c.batch for c in self.calls))

    @property
    def kv_lens(self) -> tuple[int, ...]:
        return tuple(dict.fromkeys(c.kv_len for c in self.calls))

    def to_frame(self):
        """One row per call: its geometry, build, splits and CTAs per SM."""
        import pandas as pd

        shape = {"head_dim": self.head_dim, "heads": f"{self.heads_q}/{self.heads_kv}", "page_size": self.page_size}
        frame = pd.DataFrame([{**shape, "batch": c.batch, "kv_len": c.kv_len, "kernel": c.kernel, "splits": c.splits,
                               "ctas_per_sm": c.ctas_per_sm} for c in self.calls])
        frame.attrs["planned_for"] = self.planned_for  # a saved or shown frame still says which GPU it was planned for
        return frame


def plan_map(batches=DEFAULT_BATCHES, kv_lens=DEFAULT_KV_LENS, *, heads_q: int = 32, heads_kv: int = 8,
             head_dim: int = 128, page_size: int = 64, here: bool = False) -> PlanMap:
    """The plan of every call of ``batches`` sequences of ``kv_lens`` tokens: for the H200 (``plan_call``'s defaults)
    or, with ``here``, as ``decode build`` plans (this GPU, else the H200).

    Raises:
        ArgumentError: an empty or repeated list, or a geometry the kernel does not take (the heads, head_dim or page
            size once; then the first call that cannot be one, named).
    """
    batches, kv_lens = tuple(batches), tuple(kv_lens)
    for what, values in (("batches", batches), ("kv_lens", kv_lens)):
        if not values or len(set(values)) != len(values):
            raise ArgumentError(f"{what} {list(values)}: expected one or more values, each once")
    DecodeGeometry(1, heads_q, heads_kv, head_dim, page_size, 1, 1)  # the shape's own refusal, before any call's
    calls, planned_for = [], H200_PLANNED
    for b in batches:
        for n in kv_lens:
            try:
                g = geometry_for(b, n, heads_q=heads_q, heads_kv=heads_kv, head_dim=head_dim, page_size=page_size)
            except ArgumentError as exc:
                raise ArgumentError(f"batch {b} x kv_len {n}: {exc}") from None
            plan, planned_for = plan_here(g) if here else (plan_call(g), H200_PLANNED)
            calls.append(PlannedCall(b, n, plan_label(plan), plan.splits, plan.ctas_per_sm))
    return PlanMap(head_dim, heads_q, heads_kv, page_size, planned_for, tuple(calls))


def plan_table(m: PlanMap) -> str:
    """The map as text: what it shows, batch (rows) by kv_len (columns), then the legend of its builds; the lines of
    words wrap at the table's width (at least ``MIN_LINE``)."""
    from ...report.tables import fmt_table

    # every build a tensor-core one (the usual case): the cells leave the word off, so that four columns fit a line
    short = all(c.kernel.startswith("mma ") for c in m.calls)
    cell = {(c.batch, c.kv_len): f"{c.kernel.removeprefix('mma ') if short else c.kernel} x{c.splits} "
                                 f"{c.ctas_per_sm}/SM" for c in m.calls}
    table = fmt_table(["batch", *map(length_label, m.kv_lens)], [[str(b), *(cell[b, n] for n in m.kv_lens)]
                                                                 for b in m.batches],
                      left=tuple(range(1, len(m.kv_lens) + 1)), rule=False)
    fit = max(MIN_LINE, *map(len, table.splitlines()))
    words = [f"decode plans: d{m.head_dim}, {m.heads_q}/{m.heads_kv} heads, pages of {m.page_size}, {m.planned_for}",
             f"each call's build as decode tables name it{' (every one mma, left off)' if short else ''}, then xN = N "
             "KV splits per (sequence, KV head) unit and N/SM = CTAs per SM"]
    legend_lines = legend(c.kernel for c in m.calls)
    return "\n".join([wrapped("\n".join(words), fit, phrase_ends=True), table,
                      wrapped("\n".join(legend_lines), fit, phrase_ends=True)])
