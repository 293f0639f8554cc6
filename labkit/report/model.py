"""The Sage2 profiling report: typed, frozen, in the field order of the user's seed file, and
its JSON form (``from_node`` validates every field, ``to_dict`` writes the seed's key order).
Files are read and written by ``io.py``, which imports this module (never the reverse).
"""

from dataclasses import dataclass, fields

from .._json import I32, Node, refuse_other_kind
from ..provenance import read as read_provenance
from ..timing.stats import Stats
from ..values import HEAD_DIMS

# Regions timed as one region around their members (the seed times both levels).
PHASE_GROUPS: dict[str, tuple[str, ...]] = {
    "qk_int8_quantization": ("q_int8_quantization", "k_int8_subtract_mean_quantization"),
    "v_fp8_transpose_scale_quantization": ("v_transpose_pad_permute", "v_scale_fp8_quantization"),
}


# Every phase the seed's report times (labkit's too): a name outside them is another tool's, or a misspelt one.
KNOWN_PHASES = ("k_mean_and_smoothing_preparation", *(n for g, ms in PHASE_GROUPS.items() for n in (g, *ms)),
                "fused_mainloop")


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
        return to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Sage2Report":
        """Validate a parsed JSON document (as ``load`` does for a file)."""
        return from_node(Node(d))

    def top_level_phases(self) -> list[str]:
        """Phases that are not members of a group the report times: their times add up to the pipeline (a member
        whose group is absent is one of them, or the total would leave it out)."""
        members = {m for group, ms in PHASE_GROUPS.items() if group in self.phase_timings for m in ms}
        return [p for p in self.phase_timings if p not in members]

    def to_frame(self):
        """Phase table: count, p50/p90 in ms, share of the pipeline total (top-level phases)."""
        from .. import _deps

        pd = _deps.require("pandas")
        top = self.top_level_phases()
        total = sum(self.phase_timings[p].p50_s for p in top)
        rows = []
        for name, st in self.phase_timings.items():  # share: NaN when every p50 is 0 (nothing to share)
            rows.append({"phase": name, "level": 0 if name in top else 1, "count": st.count,
                         "p50_ms": st.p50_s * 1e3, "p90_ms": st.p90_s * 1e3,
                         "share": st.p50_s / total if total > 0 else float("nan")})
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


# ---- the JSON form ------------------------------------------------------------------------
CURRENT_VERSION = 1
_SEED_KEYS = ("metadata", "q_shape", "k_shape", "v_shape", "warmup", "iterations", "phase_timings",
              "fused_mainloop_phases", "scheduler", "manual_decomposition_vs_public_sage2", "manual_checksum",
              "reference_checksum", "tail_study")
_V1_KEYS = ("accuracy", "checksum_definition")  # labkit's profile writes both; notebook 02 shows them
SWEEPS = ("q_tail_fixed_kv", "kv_tail_fixed_q", "custom")


def _check_labkit_metadata(n) -> None:
    """The fields labkit writes into a report's metadata and reads back (diff names them): dtype and layout from
    their choices, the schedule a Sage2 Schedule (a seed report's metadata is the user's own, not checked). An
    ``int3`` dtype or a schedule of strings had been shown, and diffed, as written."""
    from ..workloads.sage2.profile import LAYOUTS

    if n.get("dtype") is not None:
        n["dtype"].str(("bf16", "fp16"))
    if n.get("layout") is not None:
        n["layout"].str(tuple(LAYOUTS))
    if n.get("schedule") is not None:  # its fields and their kinds; the rules of the day (sm90's tiles) changed since
        from dataclasses import fields as dataclass_fields

        from ..workloads.sage2.schedule import Schedule

        names = [f.name for f in dataclass_fields(Schedule)]
        sched = n["schedule"].obj((), names)  # older reports lack the later fields (mainloop)
        for name, field in sched.items():
            field.str(("seed", "sm90")) if name == "mainloop" else field.int(1)


_MAY_BE_ZERO = ("dynamic_shared_memory_bytes", "q_tail_rows", "k_tail_rows")  # the rest count tiles, warps, CTAs


def _scheduler(n: Node, batch: int, q_len: int, kv_len: int, heads: int) -> Scheduler:
    """The launch geometry, against itself and the shapes it was planned for (a review: heads 7 beside q_shape's 56,
    1 q CTA per head for 37810 rows, 5 threads for 4 warps had all been shown as they stood)."""
    names = [f.name for f in fields(Scheduler)]
    n.obj(names)
    s = Scheduler(**{k: n[k].int(0 if k in _MAY_BE_ZERO else 1, I32[1]) for k in names})
    for key, want, how in (("heads", heads, "q_shape's heads"),
                           ("q_ctas_per_head", -(-q_len // s.cta_q), f"ceil(N {q_len} / cta_q {s.cta_q})"),
                           ("k_iterations_per_cta", -(-kv_len // s.cta_k), f"ceil(kv N {kv_len} / cta_k {s.cta_k})"),
                           ("threads_per_cta", 32 * s.warps_per_cta, f"32 x warps_per_cta {s.warps_per_cta}")):
        if getattr(s, key) != want:
            raise n[key].fail(f"{how} = {want}")
    if s.grid_ctas != s.q_ctas_per_head * s.heads * batch:  # the grid: the q tiles of every head of every sequence
        raise n["grid_ctas"].fail(f"q_ctas_per_head x heads x batch = {s.q_ctas_per_head} x {s.heads} x {batch}")
    return s


def _tail_tiles(t: "TailPoint", s: Scheduler, where: Node) -> None:
    """A tail point's tiles as the scheduler cuts its lengths."""
    for key, want, how in (("q_ctas_per_head", -(-t.q_len // s.cta_q), f"ceil(q_len {t.q_len} / cta_q {s.cta_q})"),
                           ("k_iterations_per_cta", -(-t.kv_len // s.cta_k),
                            f"ceil(kv_len {t.kv_len} / cta_k {s.cta_k})")):
        if getattr(t, key) != want:
            raise where[key].fail(f"{how} = {want}")


def _tail(n: Node, q_max: int, kv_max: int, layout: str) -> TailPoint:
    """One tail point, its lengths checked against the report's shapes before the fields derived from them (so a
    q_len past the shape is blamed, not the scheduled rows that follow from it)."""
    names = [f.name for f in fields(TailPoint)]
    n.obj(names)
    i32 = I32[1]
    q_len, kv_len = n["q_len"].int(1, i32), n["kv_len"].int(1, i32)
    for key, value, most in (("q_len", q_len, q_max), ("kv_len", kv_len, kv_max)):
        if value > most:
            raise n[key].fail(f"at most the shapes' {q_max} / {kv_max} (q / kv, {layout})")
    scheduled = n["scheduled_q_rows"].int(q_len, i32)  # the CTAs cover every query row
    eff = n["q_row_efficiency"].num(0, 1)
    if abs(eff - q_len / scheduled) > 1e-6:
        raise n["q_row_efficiency"].fail(f"q_len / scheduled_q_rows = {q_len}/{scheduled} = {q_len / scheduled:.6g}")
    return TailPoint(
        sweep=n["sweep"].str(SWEEPS), q_len=q_len, kv_len=kv_len,
        q_ctas_per_head=n["q_ctas_per_head"].int(1, i32), k_iterations_per_cta=n["k_iterations_per_cta"].int(1, i32),
        q_tail_rows=n["q_tail_rows"].int(0, i32), k_tail_rows=n["k_tail_rows"].int(0, i32),
        scheduled_q_rows=scheduled, q_row_efficiency=eff, mainloop=Stats.from_node(n["mainloop"]),
        checksum=n["checksum"].num())


def _accuracy(n: Node) -> dict:
    """The output against the fp32 reference: measures by name, each a number, and what the reference was."""
    n.obj(("reference",), any_keys=True)
    n["reference"].str()
    for name, value in n.items():
        if name != "reference":
            value.num()
    return n.value


def _check_batch_and_head_dim(root: Node, shapes: dict) -> None:
    """One batch and one head_dim (first and last, in NHD and HND alike) for q, k and v. The shape that differs is
    blamed: q_shape where k_shape and v_shape agree without it."""
    def key(name):
        return shapes[name][0], shapes[name][3]

    q, k, v = key("q_shape"), key("k_shape"), key("v_shape")
    if q == k == v:
        return
    odd, like = (("q_shape", ("k_shape", "v_shape")) if k == v else ("v_shape", ("q_shape", "k_shape")) if q == k
                 else ("k_shape", ("q_shape", "v_shape")) if q == v else ("k_shape", ("q_shape",)))
    want, owners = key(like[0]), " and ".join(f"{name}'s" for name in like)
    raise root[odd].fail(f"{owners} batch and head_dim ({want[0]}, {want[1]}) first and last")


def from_node(root: Node) -> Sage2Report:
    """Validate a parsed document and build the report (seed format or version 1)."""
    root.obj((), any_keys=True)
    refuse_other_kind(root, "metadata", "a Sage2 report")  # a decode report had read as 13 missing keys
    version = root["report_version"].int(0) if root.get("report_version") is not None else 0
    if version == 0:
        root.obj(_SEED_KEYS)
    elif version == 1:
        root.obj(("report_version", *_SEED_KEYS, "provenance", *_V1_KEYS))
    else:
        raise root["report_version"].fail(f"0 (seed format, no key) or {CURRENT_VERSION}")
    shapes = {k: root[k].ints(4, lo=1, hi=I32[1]) for k in ("q_shape", "k_shape", "v_shape")}
    _check_batch_and_head_dim(root, shapes)
    phases = {name: Stats.from_node(node) for name, node in root["phase_timings"].items(1)}
    if "fused_mainloop" not in phases:  # every report times the mainloop; its tables and diffs are about it
        raise root["phase_timings"].error(f"missing key 'fused_mainloop' (has: {', '.join(phases)})")
    fused = {name: node.str() for name, node in root["fused_mainloop_phases"].items()}
    dec = root["manual_decomposition_vs_public_sage2"].obj(("equal", "max_abs", "mean_abs"))
    if dec["equal"].bool() and (dec["max_abs"].num(0) != 0 or dec["mean_abs"].num(0) != 0):  # bitwise equal: no error
        raise dec.error(f"equal with max_abs {dec['max_abs'].value} and mean_abs {dec['mean_abs'].value}: expected "
                        "both 0 for outputs that are bitwise equal")
    layout = root["metadata"].value.get("layout", "NHD") if isinstance(root["metadata"].value, dict) else "NHD"
    n_of = 1 if layout != "HND" else 2  # the sequence axis of [B, N, H, D] or [B, H, N, D]
    tail_nodes = root["tail_study"].list()
    tails = [_tail(t, shapes["q_shape"][n_of], shapes["k_shape"][n_of], layout) for t in tail_nodes]
    seen = set()
    for t, where in zip(tails, tail_nodes):  # each point once
        if (t.sweep, t.q_len, t.kv_len) in seen:
            raise where.error(f"{t.sweep} q_len {t.q_len} kv_len {t.kv_len} again: expected each point once")
        seen.add((t.sweep, t.q_len, t.kv_len))
    heads, q_n = (shapes["q_shape"][2], shapes["q_shape"][1]) if n_of == 1 else shapes["q_shape"][1:3]
    if shapes["q_shape"][3] not in HEAD_DIMS:
        raise root["q_shape"].fail(f"a head_dim the Sage2 kernels take ({', '.join(map(str, HEAD_DIMS))}) last")
    scheduler = _scheduler(root["scheduler"], shapes["q_shape"][0], q_n, shapes["k_shape"][n_of], heads)
    for t, where in zip(tails, tail_nodes):
        _tail_tiles(t, scheduler, where)
    iterations = root["iterations"].int(1, I32[1])
    for name, st in phases.items():  # every phase timed the report's iterations
        if st.count != iterations:
            raise root["phase_timings"][name]["count"].fail(f"the report's iterations, {iterations}")
    prov = None
    if version >= 1:
        prov = read_provenance(root["provenance"])
    metadata = root["metadata"].obj(any_keys=True)
    if version >= 1:
        _check_labkit_metadata(metadata)
    return Sage2Report(
        metadata=metadata.value,
        **shapes,
        warmup=root["warmup"].int(0, I32[1]),
        iterations=iterations,
        phase_timings=phases,
        fused_mainloop_phases=fused,
        scheduler=scheduler,
        decomposition=DecompositionCheck(equal=dec["equal"].bool(), max_abs=dec["max_abs"].num(0),
                                         mean_abs=dec["mean_abs"].num(0)),
        manual_checksum=root["manual_checksum"].num(),
        reference_checksum=root["reference_checksum"].num(),
        tail_study=tuple(tails),
        report_version=version,
        provenance=prov,
        accuracy=_accuracy(root["accuracy"]) if version >= 1 else None,
        checksum_definition=(root["checksum_definition"].str() if root.get("checksum_definition") is not None
                             else None),
    )


def to_dict(r: Sage2Report) -> dict:
    """JSON-ready dict in the seed's key order (plus version-1 keys when present)."""
    d: dict = {}
    if r.report_version >= 1:
        d["report_version"] = r.report_version
    d.update({
        "metadata": r.metadata,
        "q_shape": list(r.q_shape), "k_shape": list(r.k_shape), "v_shape": list(r.v_shape),
        "warmup": r.warmup, "iterations": r.iterations,
        "phase_timings": {k: v.to_dict() for k, v in r.phase_timings.items()},
        "fused_mainloop_phases": dict(r.fused_mainloop_phases),
        "scheduler": {f.name: getattr(r.scheduler, f.name) for f in fields(Scheduler)},
        "manual_decomposition_vs_public_sage2": {"equal": r.decomposition.equal, "max_abs": r.decomposition.max_abs,
                                                 "mean_abs": r.decomposition.mean_abs},
        "manual_checksum": r.manual_checksum,
        "reference_checksum": r.reference_checksum,
        "tail_study": [
            {**{f.name: getattr(t, f.name) for f in fields(TailPoint) if f.name not in ("mainloop", "checksum")},
             "mainloop": t.mainloop.to_dict(), "checksum": t.checksum}
            for t in r.tail_study
        ],
    })
    if r.report_version >= 1:
        if r.accuracy is not None:
            d["accuracy"] = r.accuracy
        if r.checksum_definition is not None:
            d["checksum_definition"] = r.checksum_definition
        d["provenance"] = r.provenance
    return d
