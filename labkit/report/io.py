"""Read, validate and write Sage2 reports: the one place that knows the file format."""

import json
from dataclasses import fields
from pathlib import Path

from .._json import Node, load_document, parse_text
from ..provenance import PROVENANCE_KEYS
from ..timing.stats import STAT_FIELDS, Stats
from .model import DecompositionCheck, Sage2Report, Scheduler, TailPoint

CURRENT_VERSION = 1
_SEED_KEYS = ("metadata", "q_shape", "k_shape", "v_shape", "warmup", "iterations", "phase_timings",
              "fused_mainloop_phases", "scheduler", "manual_decomposition_vs_public_sage2", "manual_checksum",
              "reference_checksum", "tail_study")
_V1_OPTIONAL = ("accuracy", "checksum_definition")
_SWEEPS = ("q_tail_fixed_kv", "kv_tail_fixed_q", "custom")


def _stats(n: Node) -> Stats:
    n.obj(STAT_FIELDS)
    count = n["count"].int(1)
    vals = {k: n[k].num(0) for k in STAT_FIELDS if k != "count"}
    if not vals["min_s"] <= vals["p50_s"] <= vals["p90_s"] <= vals["p95_s"] <= vals["p99_s"] <= vals["max_s"]:
        raise n.error("expected min_s <= p50_s <= p90_s <= p95_s <= p99_s <= max_s")
    return Stats(count=count, **vals)


def _dataclass_ints(cls, n: Node):
    names = [f.name for f in fields(cls)]
    n.obj(names)
    return cls(**{k: n[k].int(0) for k in names})


def _tail(n: Node) -> TailPoint:
    names = [f.name for f in fields(TailPoint)]
    n.obj(names)
    return TailPoint(
        sweep=n["sweep"].str(_SWEEPS), q_len=n["q_len"].int(1), kv_len=n["kv_len"].int(1),
        q_ctas_per_head=n["q_ctas_per_head"].int(1), k_iterations_per_cta=n["k_iterations_per_cta"].int(1),
        q_tail_rows=n["q_tail_rows"].int(0), k_tail_rows=n["k_tail_rows"].int(0),
        scheduled_q_rows=n["scheduled_q_rows"].int(1), q_row_efficiency=n["q_row_efficiency"].num(0),
        mainloop=_stats(n["mainloop"]), checksum=n["checksum"].num())


def from_node(root: Node) -> Sage2Report:
    """Validate a parsed document and build the report (seed format or version 1)."""
    root.obj((), any_keys=True)
    version = root["report_version"].int(0) if root.get("report_version") is not None else 0
    if version == 0:
        root.obj(_SEED_KEYS)
    elif version == 1:
        root.obj(("report_version", *_SEED_KEYS, "provenance"), _V1_OPTIONAL)
    else:
        raise root["report_version"].fail(f"0 (seed format, no key) or {CURRENT_VERSION}")
    shapes = {k: root[k].ints(4, lo=1) for k in ("q_shape", "k_shape", "v_shape")}
    phases = {name: _stats(node) for name, node in root["phase_timings"].items()}
    fused = {name: node.str() for name, node in root["fused_mainloop_phases"].items()}
    dec = root["manual_decomposition_vs_public_sage2"].obj(("equal", "max_abs", "mean_abs"))
    prov = None
    if version >= 1:
        prov = root["provenance"].obj(PROVENANCE_KEYS).value
    return Sage2Report(
        metadata=root["metadata"].obj(any_keys=True).value,
        **shapes,
        warmup=root["warmup"].int(0),
        iterations=root["iterations"].int(1),
        phase_timings=phases,
        fused_mainloop_phases=fused,
        scheduler=_dataclass_ints(Scheduler, root["scheduler"]),
        decomposition=DecompositionCheck(equal=dec["equal"].bool(), max_abs=dec["max_abs"].num(0),
                                         mean_abs=dec["mean_abs"].num(0)),
        manual_checksum=root["manual_checksum"].num(),
        reference_checksum=root["reference_checksum"].num(),
        tail_study=tuple(_tail(t) for t in root["tail_study"].list()),
        report_version=version,
        provenance=prov,
        accuracy=root["accuracy"].obj(any_keys=True).value if root.get("accuracy") else None,
        checksum_definition=root["checksum_definition"].str() if root.get("checksum_definition") else None,
    )


def load(path: Path | str) -> Sage2Report:
    """Read and validate a report file.

    Raises:
        FormatError: one line naming the file, the JSON path and what was expected.
    """
    return from_node(load_document(path))


def loads(text: str, source: str | None = None) -> Sage2Report:
    return from_node(parse_text(text, source))


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


def dumps(r: Sage2Report) -> str:
    """The report as JSON text, formatted as the seed (2-space indent, no trailing newline)."""
    return json.dumps(to_dict(r), indent=2)


def save(r: Sage2Report, path: Path | str) -> Path:
    """Write ``r`` after validating it by a parse of its own output (never write a bad file)."""
    text = dumps(r)
    loads(text, source=str(path))
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text + "\n")
    return p
