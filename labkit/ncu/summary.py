"""The small JSON summary of notebook 05's ncu runs: everything the notebook plots, read from the reports
(pure: no GPU, no ncu). A recorded run keeps only this file; the ``.ncu-rep`` files stay in the run directory.

``counter_rows`` reads one row per profiled launch of the wanted cases (NVTX ``ncu/<case>``),
``rule_rows`` the tail-effect and imbalance rule results, ``phase_run`` one launch's per-phase samples and
stall reasons from its SourceCounters. ``NcuSummary`` holds them with the event timings and the reports'
sizes and command lines.
"""

import math
import re
from dataclasses import asdict, dataclass, field

from .._json import document_kind
from ..errors import NcuError
from .report import KERNEL_METRICS, kernels, rules
from .source import phase_names, phases, stalls

COUNTERS = {**KERNEL_METRICS,  # column -> metric; a metric the report lacks reads None
            "dram_read_bytes": "dram__bytes_read.sum", "dram_write_bytes": "dram__bytes_write.sum",
            "dram_throughput_pct": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
            "tensor_active_pct": "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
            "l2_hit_pct": "lts__t_sector_hit_rate.pct", "sm_count": "launch__sm_count",
            "limit_registers": "launch__occupancy_limit_registers",
            "limit_shared_mem": "launch__occupancy_limit_shared_mem",
            "limit_warps": "launch__occupancy_limit_warps", "limit_blocks": "launch__occupancy_limit_blocks"}
WANTED_RULES = re.compile(r"tail|imbalance", re.IGNORECASE)  # matched on a rule's id or its message's title


def is_tail_rule(rule, title) -> bool:
    """ncu's tail effect: a message titled "Tail Effect" of its LaunchConfiguration rule (or a rule named for it)."""
    return any(re.search("tail", str(x or ""), re.IGNORECASE) for x in (rule, title))
VERSION = 1


def _plain(v):
    """A JSON-safe scalar (NaN and numpy types become None / Python numbers)."""
    if v is None:
        return None
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v if isinstance(v, (int, float, str, bool)) else str(v)


def _case(nvtx: str, outer: str = "ncu") -> str | None:
    parts = nvtx.split("/")
    return parts[-1] if len(parts) >= 2 and parts[-2] == outer else None


def counter_rows(report, names, metrics: dict[str, str] | None = None, *, outer: str = "ncu") -> list[dict]:
    """One row per profiled launch inside ``ncu/<name>`` for ``name`` in ``names``: case, launch number,
    kernel and the counters (``COUNTERS`` plus ``metrics``, column -> metric)."""
    df = kernels(report, {**COUNTERS, **(metrics or {})})
    df["case"] = df["nvtx"].map(lambda n: _case(n, outer))
    df = df[df["case"].isin(set(names))].copy()
    df["launch"] = df.groupby("case").cumcount()
    cols = ["case", "launch", "kernel", *[c for c in df.columns if c not in ("case", "launch", "kernel", "range",
                                                                            "action", "nvtx")]]
    return [{k: _plain(v) for k, v in row.items()} for row in df[cols].to_dict("records")]


def rule_rows(report, names, *, outer: str = "ncu") -> list[dict]:
    """The tail-effect and imbalance rule results (rule ids matching ``WANTED_RULES``) of those launches."""
    found = rules(report)
    if found.empty:
        return []
    launches = kernels(report)[["range", "action", "nvtx"]].itertuples(index=False)
    case_of = {(r, a): _case(n, outer) for r, a, n in launches}
    found["case"] = [case_of.get((r, a)) for r, a in zip(found["range"], found["action"])]
    wanted = (found["rule"].fillna("").str.contains(WANTED_RULES)
              | found["title"].fillna("").str.contains(WANTED_RULES))  # the tail effect is LaunchConfiguration's
    found = found[found["case"].isin(set(names)) & wanted]
    cols = ["case", "kernel", "rule", "section", "title", "message", "speedup_pct"]
    return [{k: _plain(v) for k, v in row.items()} for row in found[cols].to_dict("records")]


def phase_run(report, case: str, source: str, *, outer: str = "ncu", launch: int = 0) -> dict:
    """Per-phase samples, shares and stall-reason samples of launch ``launch`` of ``case`` whose kernel
    source ``source`` (a basename) carries ``// PHASE:`` markers.

    Raises:
        NcuError: no launch of ``case`` in the report, or no per-PC samples in it.
    """
    hits = [act for _, _, act in report.actions if _case(_nvtx(act), outer) == case]
    if len(hits) <= launch:
        raise NcuError(f"{report.path}: no launch {launch} in NVTX range {outer}/{case} ({len(hits)} launches)")
    act = hits[launch]
    table, stall = phases(act, source), stalls(act, source)
    return {"kernel": act.name(), "duration_ns": _plain(table["est_time_ns"].sum()),
            "phases": list(table.index), "samples": [int(v) for v in table["samples"]],
            "share": [float(v) for v in table["share"]],
            "stalls": {p: {r: float(v) for r, v in stall.loc[p].items() if v} for p in stall.index}}


def _nvtx(act) -> str:
    from .report import nvtx_path

    return nvtx_path(act)


@dataclass(frozen=True)
class Attribution:
    """Phase attribution of one kernel: its source, the phases its markers name, and one ``phase_run``
    per ncu run; ``skipped`` says why there is none (e.g. the source has no markers)."""

    case: str
    source: str
    markers: tuple[str, ...]
    runs: tuple[dict, ...] = ()
    skipped: str | None = None


def attribution_of(case: str, source_path, reports, *, outer: str = "ncu") -> Attribution:
    """Attribute ``case``'s kernel to the phases of ``source_path`` in each report (one per ncu run);
    a source without markers gives a skipped Attribution naming the file."""
    from pathlib import Path

    path = Path(source_path)
    names = tuple(phase_names(path.read_text()))
    if not names:
        return Attribution(case, path.name, (), (), f"{path.name} has no // PHASE: markers; no phase attribution")
    return Attribution(case, path.name, names, tuple(phase_run(r, case, path.name, outer=outer) for r in reports))


@dataclass(frozen=True)
class NcuSummary:
    """What notebook 05 shows, measured once (live) and re-rendered from JSON (recorded)."""

    device: str
    ncu: str
    cases: dict  # CasePlan.to_dict()
    timings: dict  # case -> {p50_ns, min_ns, max_ns, count}
    counters: tuple[dict, ...]
    rules: tuple[dict, ...]
    attributions: tuple[Attribution, ...]
    reports: dict  # name -> {bytes, elapsed_s, command}
    version: int = field(default=VERSION)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["counters"], d["rules"] = list(self.counters), list(self.rules)
        d["attributions"] = [{**asdict(a), "markers": list(a.markers), "runs": list(a.runs)}
                             for a in self.attributions]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "NcuSummary":
        """Strictly: every field the notebook and ``labkit ncu summary`` read is checked, and a bad one is named
        by its place (``counters[3].kernel``)."""
        def need(ok: bool, where: str, what: str) -> None:
            if not ok:
                raise NcuError(f"summary {where}: expected {what}")

        need(isinstance(d, dict), "$", "an object (a notebook 05 ncu_summary.json)")
        if "version" not in d:  # another labkit document is named, as its other readers name it
            kind = document_kind(d)
            raise NcuError("summary $: missing key 'version'" + (f": this is {kind}, not a notebook 05 ncu_summary.json"
                           if kind else f" (a notebook 05 ncu_summary.json has version {VERSION})"))
        if type(d["version"]) is not int or d["version"] != VERSION:  # true and 1.0 are == 1 in Python
            raise NcuError(f"summary version {d['version']!r}: expected {VERSION}")
        missing = [k for k in ("device", "ncu", "cases", "timings", "counters", "rules", "attributions", "reports")
                   if k not in d]
        if missing:
            raise NcuError(f"summary lacks {', '.join(missing)}")
        for key, kind in (("cases", dict), ("timings", dict), ("reports", dict), ("counters", list), ("rules", list),
                          ("attributions", list)):
            need(isinstance(d[key], kind), key, f"a JSON {'object' if kind is dict else 'list'}")
        for key in ("device", "ncu"):  # the closing note's first line
            need(isinstance(d[key], str) and d[key], key, f"a non-empty string, not {d[key]!r}")
        for case, t in d["timings"].items():
            need(isinstance(t, dict) and all(isinstance(t.get(k), (int, float)) and not isinstance(t.get(k), bool)
                                             for k in ("p50_ns", "min_ns", "max_ns"))
                 and t["p50_ns"] > 0 and 0 < t["min_ns"] <= t["p50_ns"] <= t["max_ns"],
                 f"timings.{case}", "p50_ns, min_ns and max_ns numbers, 0 < min <= p50 <= max")
            need(type(t.get("count")) is int and t["count"] >= 1, f"timings.{case}.count",
                 f"the samples' count (an integer >= 1), not {t.get('count')!r}")
            need(isinstance(t.get("clock_dropped", False), bool), f"timings.{case}.clock_dropped",  # "no" reads True
                 f"true or false, not {t.get('clock_dropped')!r}")
        for name, r in d["reports"].items():
            need(isinstance(r, dict) and isinstance(r.get("bytes"), int) and not isinstance(r["bytes"], bool),
                 f"reports.{name}.bytes", "an integer")
        for kind, rows in d["cases"].items():
            if kind == "repeat":
                continue
            need(isinstance(rows, list) and all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in rows),
                 f"cases.{kind}", "a list of cases, each with a name")
        for i, r in enumerate(d["rules"]):
            need(isinstance(r, dict) and all(isinstance(r.get(k), str) for k in ("case", "kernel", "rule", "title")),
                 f"rules[{i}]", "an object with case, kernel, rule and title")
            need(r.get("speedup_pct") is None or isinstance(r["speedup_pct"], (int, float))
                 and not isinstance(r["speedup_pct"], bool), f"rules[{i}].speedup_pct", "a number or null")
        for i, row in enumerate(d["counters"]):
            need(isinstance(row, dict), f"counters[{i}]", "an object")
            for k in ("case", "kernel"):
                need(isinstance(row.get(k), str) and row[k], f"counters[{i}].{k}", "a string")
            need(_number(row.get("duration_ns")) and row["duration_ns"] > 0, f"counters[{i}].duration_ns",
                 f"a number above 0, not {row.get('duration_ns')!r}")
            need(isinstance(row.get("launch"), int) and not isinstance(row["launch"], bool) and row["launch"] >= 0,
                 f"counters[{i}].launch", "the launch's index in its case (an integer >= 0)")
            for k, v in row.items():  # the counters: ncu may lack one (null), never a negative or non-finite one
                need(k in ("case", "kernel", "launch") or v is None or _number(v) and 0 <= v < math.inf,
                     f"counters[{i}].{k}", f"a finite number >= 0 or null, not {v!r}")
            need(row.get("clock_hz") is None or row["clock_hz"] > 0, f"counters[{i}].clock_hz", "a clock above 0 Hz")
        for i, a in enumerate(d["attributions"]):
            need(isinstance(a, dict), f"attributions[{i}]", "an object")
            for k in ("case", "source"):
                need(isinstance(a.get(k), str), f"attributions[{i}].{k}", "a string")
            need(isinstance(a.get("markers"), list) and isinstance(a.get("runs"), list), f"attributions[{i}]",
                 "markers and runs lists")
            for j, run in enumerate(a["runs"]):
                at = f"attributions[{i}].runs[{j}]"
                need(isinstance(run, dict), at, "an object")
                need(isinstance(run.get("phases"), list) and isinstance(run.get("share"), list)
                     and isinstance(run.get("samples"), list)
                     and len(run["phases"]) == len(run["share"]) == len(run["samples"]), at,
                     "phases, samples and share lists of one length")
                need(all(isinstance(x, str) for x in run["phases"]) and len(set(run["phases"])) == len(run["phases"]),
                     f"{at}.phases", "distinct phase names")
                need(all(_number(x) for x in run["share"] + run["samples"]), at, "numbers in samples and share")
                # a share is of all samples (a review: 5 had printed as 500.00 %), a sample count is not negative
                bad = next((x for x in run["share"] if not 0 <= x <= 1), None)
                need(bad is None, f"{at}.share", f"fractions 0..1 of the samples, not {bad!r}")
                bad = next((x for x in run["samples"] if x < 0), None)
                need(bad is None, f"{at}.samples", f"sample counts >= 0, not {bad!r}")
                need(isinstance(run.get("stalls"), dict) and all(
                    isinstance(v, dict) and all(_number(x) for x in v.values()) for v in run["stalls"].values()),
                     f"{at}.stalls", "an object of phase -> {reason: samples}")
                need(_number(run.get("duration_ns")), f"{at}.duration_ns", "a number")
        _check_consistent(d, need)
        atts = tuple(Attribution(a["case"], a["source"], tuple(a["markers"]), tuple(a["runs"]), a.get("skipped"))
                     for a in d["attributions"])
        return cls(d["device"], d["ncu"], dict(d["cases"]), dict(d["timings"]), tuple(d["counters"]),
                   tuple(d["rules"]), atts, dict(d["reports"]), d["version"])


def _check_consistent(d: dict, need) -> None:
    """The summary's parts against each other (found by a CLI review: each printed NaN rows or an empty table): its
    cases as a case plan reads them, every counter row and timing of one of them, a timing for every profiled case,
    and at least one profiled launch."""
    from .._json import Node
    from ..errors import FormatError
    from .cases import CasePlan

    try:
        names = CasePlan.from_node(Node(d["cases"], "cases")).names
    except FormatError as exc:
        raise NcuError(f"summary {exc}") from None
    shown = ", ".join(names) or "none"
    need(len(d["counters"]) > 0, "counters", "at least one profiled launch")
    for i, row in enumerate(d["counters"]):
        need(row["case"] in names, f"counters[{i}].case", f"one of the summary's cases ({shown}), not {row['case']!r}")
    for case in d["timings"]:
        need(case in names, f"timings.{case}", f"a timing of one of the summary's cases ({shown})")
    for case in dict.fromkeys(row["case"] for row in d["counters"]):
        need(case in d["timings"], "timings", f"an entry for {case}, whose counters are here")
    seen = set()
    for i, a in enumerate(d["attributions"]):  # each read by its case; a kept one has runs to show
        need(a["case"] in names and a["case"] not in seen, f"attributions[{i}].case",
             f"one of the summary's cases ({shown}) not attributed before, not {a['case']!r}")
        seen.add(a["case"])
        need(a.get("skipped") is None or isinstance(a["skipped"], str) and a["skipped"], f"attributions[{i}].skipped",
             "null or why the attribution was skipped")
        need(a.get("skipped") is not None or len(a["runs"]) > 0, f"attributions[{i}].runs",
             "at least one ncu run (or skipped saying why)")


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def timing_entry(timing: dict) -> dict:
    """The part of a ``Timing.to_dict()`` the summary keeps, in ns."""
    s = timing["stats"]
    return {"p50_ns": s["p50_s"] * 1e9, "min_ns": s["min_s"] * 1e9, "max_ns": s["max_s"] * 1e9,
            "count": s["count"], "clock_dropped": bool(timing.get("clock_dropped", False))}
