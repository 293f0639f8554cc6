"""The decode benchmark report: versioned, read strictly in one place, compared like Sage2 reports.

``labkit decode bench --out FILE`` writes it; ``labkit report show|diff`` read it (they tell the two
formats apart by ``decode_report_version``). Version 1 holds the copy rate, one row per timed call
(shape, splits, kernel, p50, TB/s, the peers' TB/s or why a peer did not run, and labkit's TB/s in the
peers' interleaved rounds), the split sweeps and the provenance of the run.
"""

import json
import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from ..._json import Node, document_kind, load_document, refuse_other_kind
from ..._text import counted
from ..._write import dumps, write_whole
from ...errors import FormatError
from ...provenance import read as read_provenance
from ...timing import MODES
from .geometry import HEAD_DIMS, PAGE_SIZES, call_kv_bytes
from .labels import legend
from .peers import PEERS as BENCHED_PEERS
from .peers import shown_reason

VERSION = 1
PEER_COLUMNS = dict(zip(BENCHED_PEERS, ("cudnn", "flash", "fa3", "flex")))  # show's short headers
# flex_paged and labkit_beside_peers (labkit's call timed in the peers' rounds) are absent from older reports
PEERS = (*BENCHED_PEERS, "labkit_beside_peers")


@dataclass(frozen=True)
class DecodePoint:
    """One timed call."""

    batch: int
    kv_len: int
    head_dim: int
    heads: str  # "32/8": query / KV heads (a suffix names a special geometry, e.g. "24/4 seed")
    splits: int
    kernel: str  # variant / row warps, e.g. "mma/1"
    mode: str  # labkit.timing's: cold, cold_clean (L2 flushed, then left clean) or graph
    kv_MB: float
    p50_us: float
    TBps: float
    peers: dict  # peer -> TB/s (float) or why it did not run (str)
    heuristic: bool | None = None  # split sweeps: whether this is the heuristic's split count
    x_best_peer: float | None = None  # labkit_beside_peers (older reports: TBps) / the best peer's
    # a 95 % interval of the median of that ratio taken round by round (peers.x_best_peer_interval; newer reports)
    x_best_peer_low: float | None = None
    x_best_peer_high: float | None = None
    build: str | None = None  # `decode compare`: the plan_call knobs of this row ("plan" for the plan's own call)

    @property
    def variant(self) -> str:
        """The kernel variant (``mma``, ``fma``) its label starts with (older labels: ``mma/1``)."""
        return self.kernel.split()[0].split("/")[0] if self.kernel.strip() else ""

    @property
    def key(self) -> tuple:
        """The call a row times: a bench with two --variant times each shape twice, one row per kernel variant."""
        return self.batch, self.kv_len, self.head_dim, self.heads, self.mode, self.variant


@dataclass(frozen=True)
class DecodeReport:
    copy_TBps: float
    points: tuple[DecodePoint, ...]
    split_sweeps: dict  # "BxN" -> tuple of DecodePoint
    provenance: dict
    version: int = VERSION

    def to_dict(self) -> dict:
        def row(p: DecodePoint) -> dict:
            d = {f.name: getattr(p, f.name) for f in fields(p) if f.name != "peers"}
            return {**{k: v for k, v in d.items() if v is not None}, **p.peers}

        return {"decode_report_version": self.version, "copy_read_plus_write_GBps": self.copy_TBps * 1e3,
                "rows": [row(p) for p in self.points],
                "split_sweeps": {k: [row(p) for p in v] for k, v in self.split_sweeps.items()},
                "provenance": self.provenance}

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame([{**{k: v for k, v in asdict(p).items() if k != "peers"}, **p.peers} for p in self.points])


ROW_KEYS = ("batch", "kv_len", "head_dim", "heads", "splits", "kernel", "mode", "kv_MB", "p50_us", "TBps")


HEADS_FORM = r"([1-9]\d*)/([1-9]\d*)( .+)?"  # a report's heads: query / KV, then what names a special geometry
HEADS_EXPECTED = "query / KV heads, e.g. '32/8' (a suffix may name the geometry: '24/4 seed', '32/8 page 16')"


def heads_problem(heads: str) -> str | None:
    """What is wrong with a report's ``heads`` (``HEADS_FORM``, a whole number of query heads per KV head, a page
    size the kernels take), or None."""
    if not (m := re.fullmatch(HEADS_FORM, heads)):
        if (counts := re.fullmatch(r"(\d+)/(\d+)( .+)?", heads)) and 0 in (int(counts[1]), int(counts[2])):
            return f"{int(counts[1])} query heads on {int(counts[2])} KV heads; expected at least 1 of each"
        return f"expected {HEADS_EXPECTED}"
    q, kv, rest = m.group(1), m.group(2), m.group(3) or ""
    if int(q) % int(kv):
        return f"{q} query heads on {kv} KV heads; expected a multiple of the KV heads"
    if (page := re.fullmatch(r" page (\d+)", rest)) and int(page.group(1)) not in PAGE_SIZES:
        return f"page {page.group(1)}; expected page {', '.join(map(str, PAGE_SIZES))}"
    return None


def _kernel(n: Node) -> str:
    """A row's build label: never empty (every table and spread names the build by it)."""
    if not n.str().strip():
        raise n.fail("the build's label, e.g. 'mma w4s1c1'")
    return n.value


def _check_x_best_peer(node: Node, x_best: float, peers: dict, tbps: float) -> None:
    """x_best_peer is labkit's rate in the peers' rounds (older reports: its TBps) over the fastest peer's."""
    timed = [v for name, v in peers.items() if name in BENCHED_PEERS and isinstance(v, float)]
    if not timed:
        raise node.fail("'-': the row has no peer's rate to divide by")
    ours = peers.get("labkit_beside_peers")
    ours = ours if isinstance(ours, float) else tbps
    if abs(x_best - ours / max(timed)) > 1e-6 * x_best:
        raise node.fail(f"labkit's rate over the fastest peer's, {ours:.6g} / {max(timed):.6g} = "
                        f"{ours / max(timed):.6g}")


INTERVAL_KEYS = ("x_best_peer_low", "x_best_peer_high")


def _x_best_interval(n: Node, x_best: float | None) -> tuple[float | None, float | None]:
    """The round-by-round interval of x_best_peer: both ends or neither, only beside x_best_peer, low <= high."""
    given = [k for k in INTERVAL_KEYS if n.get(k) is not None]
    if not given:
        return None, None
    if len(given) == 1:
        missing = next(k for k in INTERVAL_KEYS if k not in given)
        raise n[given[0]].error(f"without {missing}: expected both ends of the interval or neither")
    if x_best is None:
        raise n[given[0]].error("an interval of x_best_peer in a row without x_best_peer")
    low, high = n["x_best_peer_low"].positive(1e3), n["x_best_peer_high"].positive(1e3)
    if low > high:
        raise n["x_best_peer_high"].fail(f"at least x_best_peer_low, {low!r}")
    return low, high


def _point(n: Node) -> DecodePoint:
    n.obj(ROW_KEYS, (*PEERS, "x_best_peer", *INTERVAL_KEYS, "heuristic", "build"))
    peers = {}
    for name in PEERS:
        if (v := n.get(name)) is not None:
            peers[name] = v.str() if isinstance(v.value, str) else v.num(0, 100)
    if (head_dim := n["head_dim"].int()) not in HEAD_DIMS:
        raise n["head_dim"].fail(f"one of the kernels' head_dims, {', '.join(map(str, HEAD_DIMS))}")
    heads = n["heads"].str()
    if (problem := heads_problem(heads)) is not None:
        raise n["heads"].error(f"{heads!r}: {problem}")
    batch, kv_len = n["batch"].int(1, 1 << 20), n["kv_len"].int(1, 1 << 31)
    kv_mb, p50_us, tbps = n["kv_MB"].positive(1e7), n["p50_us"].positive(1e9), n["TBps"].positive(100)
    heads_kv = int(re.fullmatch(HEADS_FORM, heads).group(2))
    kv_read_mb = call_kv_bytes(batch, kv_len, heads_kv, head_dim) / 1e6
    if abs(kv_mb - kv_read_mb) > 1e-9 * kv_read_mb:  # every rate of the row divides these bytes
        raise n["kv_MB"].fail(f"the MB of K and V that batch {batch} x {kv_len} tokens, {heads_kv} KV heads, "
                              f"d{head_dim} read in bf16: {kv_read_mb:.6g}")
    if abs(tbps - kv_mb / p50_us) > 1e-9 * tbps:  # a rate the bytes and time beside it do not give was edited
        raise n["TBps"].fail(f"kv_MB / p50_us = {kv_mb} / {p50_us} = {kv_mb / p50_us:.6g}")
    x_best = x.positive(1e3) if (x := n.get("x_best_peer")) is not None and x.value != "-" else None
    if x_best is not None:  # as TBps is held to its bytes and time (a review: an edited 5.0 was shown as read)
        _check_x_best_peer(n["x_best_peer"], x_best, peers, tbps)
    low, high = _x_best_interval(n, x_best)
    return DecodePoint(batch=batch, kv_len=kv_len,
                       head_dim=head_dim, heads=heads,
                       splits=n["splits"].int(1, 65535), kernel=_kernel(n["kernel"]),
                       mode=n["mode"].str(MODES), kv_MB=kv_mb, p50_us=p50_us, TBps=tbps,
                       peers=peers, heuristic=h.bool() if (h := n.get("heuristic")) is not None else None,
                       x_best_peer=x_best, x_best_peer_low=low, x_best_peer_high=high,
                       build=b.str() if (b := n.get("build")) is not None else None)


def from_node(n: Node) -> DecodeReport:
    refuse_other_kind(n, "decode_report_version", "a decode report")  # a Sage2 report had read as missing keys
    n.obj(("decode_report_version", "copy_read_plus_write_GBps", "rows", "split_sweeps", "provenance"))
    n["decode_report_version"].version(VERSION)
    sweeps = {k: tuple(_point(p) for p in v.list(1)) for k, v in n["split_sweeps"].items()}
    for k, sweep in sweeps.items():  # the plan's own call is one row of its sweep, which "time vs plan" divides by
        if sum(1 for p in sweep if p.heuristic) > 1:
            raise n["split_sweeps"][k].error("more than one row marked heuristic: expected the plan's call once")
    points, seen = [], {}
    for i, row in enumerate(n["rows"].list(1)):
        p = _point(row)
        if p.key in seen:  # report diff pairs rows by their call: a second row of one call is not a run's
            raise row.error(f"the call of rows[{seen[p.key]}] again (batch {p.batch} x {p.kv_len}, d{p.head_dim}, "
                            f"{p.heads}, {p.mode}, {p.variant}): expected one row per call")
        seen[p.key] = i
        points.append(p)
    return DecodeReport(copy_TBps=n["copy_read_plus_write_GBps"].positive(1e5) / 1e3,
                        points=tuple(points), split_sweeps=sweeps,
                        provenance=read_provenance(n["provenance"], any_keys=True))


# the first commit whose cold pads reset persisting L2 lines (labkit.timing.persisting): before it, the peers, which
# share one K/V copy, could read up to the context's set-aside (11.25 MiB on the H200s) of it from L2 after FA3
PERSISTING_RESET_SINCE = "e0af6be9b0d75c3dbd26dbfb64bac3353e54ded7"
PERSISTING_RESET = "labkit's L2 flush reset persisting lines (e0af6be)"
PERSISTING_NOTE = "the peers may have read K/V from L2 that FA3 left there (docs/decode.md, \"Persisting L2 lines\")"


def persisting_note(r: DecodeReport) -> str | None:
    """Why ``r``'s peer rates may have had FA3's persisting L2 lines in them, in one line: its commit (a dirty tree's
    too) predates the reset, or is not in this checkout's history; None where it timed no FA3, or since the reset."""
    from ...staleness import has_commit

    if not any(isinstance(p.peers.get("fa3"), float) for p in r.points):
        return None
    sha = r.provenance.get("git_sha") if isinstance(r.provenance, dict) else None
    sha = sha.removesuffix("-dirty") if isinstance(sha, str) else None
    after = has_commit(PERSISTING_RESET_SINCE, sha) if sha else None
    if after:
        return None
    when = (f"timed before {PERSISTING_RESET}" if after is False else f"timed at {sha or 'no recorded commit'}, "
            f"which this checkout cannot place before or after {PERSISTING_RESET}")
    return f"{when}: {PERSISTING_NOTE}"


def is_decode_report(path: Path | str) -> bool:
    """True for a decode report, False for a Sage2 one (reads the document once, checks its keys); anything else is
    refused naming both kinds, so a reader's 'missing key metadata' is not read as if every report were Sage2's.

    Raises:
        FormatError: neither kind of report.
    """
    doc = load_document(path, what="report").value
    if isinstance(doc, dict) and "decode_report_version" in doc:
        return True
    if isinstance(doc, dict) and ("metadata" in doc or "report_version" in doc):
        return False
    json_kind = {type(None): "null", list: "a list", str: "a string", bool: "a boolean", int: "a number",
                 float: "a number"}
    keys = ", ".join(list(doc)[:6]) if isinstance(doc, dict) else f"no keys: it is {json_kind.get(type(doc), 'JSON')}"
    what = f"this is {document_kind(doc)}" if document_kind(doc) else f"this has {keys or 'nothing'}"
    raise FormatError("", f"not a labkit report: a Sage2 report (labkit sage2 profile --out) has 'metadata' and "
                      f"'phase_timings', a decode report (labkit decode bench|compare --out) 'decode_report_version'; "
                      f"{what}", source=str(path))


def load(path: Path | str) -> DecodeReport:
    """Read and validate a decode report.

    Raises:
        FormatError: one line naming the file, the JSON path and what was expected.
    """
    return from_node(load_document(path, what="decode report"))


def save(r: DecodeReport, path: Path | str) -> Path:
    """Write ``r`` after a parse of its own output (never write a bad file)."""
    text = dumps(r.to_dict(), indent=2, source=str(path))
    from ..._json import parse_text

    from_node(parse_text(text, source=str(path)))
    # the bench rewrites its report after every point: a reader never sees half of one
    return write_whole(path, (text + "\n").encode())


def from_rows(rows: list[dict], split_sweeps: dict, copy_GBps: float, provenance: dict,
              source: str = "the benchmark's rows") -> DecodeReport:
    """The benchmark's rows as a report, read as a file of them would be (a row that does not fit raises)."""
    doc = {"decode_report_version": VERSION, "copy_read_plus_write_GBps": copy_GBps, "rows": rows,
           "split_sweeps": split_sweeps, "provenance": provenance}
    return from_node(Node(json.loads(dumps(doc, source=source)), "", source))


def write(rows: list[dict], split_sweeps: dict, copy_GBps: float, provenance: dict, path: Path | str) -> Path:
    """The benchmark's rows as a validated report file (a row that does not fit the format raises first)."""
    return save(from_rows(rows, split_sweeps, copy_GBps, provenance, str(path)), path)


def _traits(r: DecodeReport) -> dict[str, str]:
    from ...report.tables import provenance_traits

    prov = r.provenance if isinstance(r.provenance, dict) else {}
    clocks = prov.get("clocks") if isinstance(prov.get("clocks"), dict) else {}
    return {**provenance_traits(prov),
            "clocks": f"SM {clocks['sm_clock_hz'] / 1e6:.0f} MHz" if isinstance(clocks.get("sm_clock_hz"), (int, float))
            else "not recorded", "copy": f"{r.copy_TBps:.2f} TB/s"}


def _fits(r: DecodeReport) -> list[str]:
    from .cost_fit import format_fits  # it reads this module's rows

    return format_fits(r)


def show_table(r: DecodeReport) -> str:
    """The run (device, GPU, git, clocks, copy rate), one line per call: p50 [us] and TB/s, then, where the run
    timed peers, labkit's TB/s in the peers' rounds, each peer's and labkit beside them / the best peer (peers that
    did not run: "-", their reasons below); then each sweep against the plan's own call (*)."""
    from ...report.tables import fmt_table, where

    t = _traits(r)
    head = [f"decode report v{r.version}: {where(t)}, copy {t['copy']} (read+write)"]
    peers = [p for p in PEER_COLUMNS if any(p in q.peers for q in r.points)]
    beside = any("labkit_beside_peers" in q.peers for q in r.points)
    header = ["batch", "kv_len", "d", "heads", "splits", "kernel", "mode", "p50 us", "TB/s",
              *(["beside peers"] if beside else []), *(PEER_COLUMNS[p] for p in peers),
              *(["x best peer"] if peers else [])]
    rows, not_run = [], []
    for p in r.points:
        cells = [str(p.batch), str(p.kv_len), str(p.head_dim), p.heads, str(p.splits), p.kernel, p.mode,
                 f"{p.p50_us:.2f}", f"{p.TBps:.2f}"]
        for name in (["labkit_beside_peers"] if beside else []) + peers:
            v = p.peers.get(name)
            cells.append(f"{v:.2f}" if isinstance(v, float) else "-")
            if isinstance(v, str):  # why it did not run, on one line ("...in a subprocess:" says nothing alone)
                not_run.append(f"  {PEER_COLUMNS.get(name, name)} at {p.batch} x {p.kv_len} d{p.head_dim}: "
                               + (shown_reason(name, v, saved_in="this report's row") if v.strip()
                                  else "no reason recorded"))
        if peers:
            cells.append(f"{p.x_best_peer:.3f}" if p.x_best_peer is not None else "-")
        rows.append(cells)
    # None without FA3 among the peers; above the table whose peer columns it qualifies (under the legend, a new-user
    # review read past it)
    note = persisting_note(r)
    lines = [*head, *([note] if note else []), *fmt_table(header, rows, left=(5,), rule=False).splitlines()]
    if peers:
        lines.append("TB/s of K+V read; 'beside peers' is labkit's call timed in the peers' shuffled rounds, and "
                     "'x best peer' divides it by the fastest peer's")
    lines += legend([p.kernel for p in r.points] + [p.kernel for sweep in r.split_sweeps.values() for p in sweep])
    if not_run:
        lines += ["peers that did not run:", *not_run]
    for key, sweep in r.split_sweeps.items():  # split, tail and compare sweeps: * marks the plan's own call
        base = next((p.p50_us for p in sweep if p.heuristic), None)
        builds = any(p.build for p in sweep)  # a compare sweep's builds; a split sweep's column would stay empty
        rows = [["*" if p.heuristic else "", str(p.splits), p.kernel, f"{p.p50_us:.2f}", f"{p.TBps:.2f}",
                 f"{p.p50_us / base - 1:+.2%}" if base else "-", *([p.build or ""] if builds else [])] for p in sweep]
        lines += ["", f"sweep {key} (* the plan's call; time vs plan: + is slower):",
                  *fmt_table(["", "splits", "kernel", "p50 us", "TB/s", "time vs plan", *(["build"] if builds else [])],
                             rows, left=(0, 2, 6), rule=False).splitlines()]
    if fits := _fits(r):
        lines += ["", *fits]
    if not any(p.build for p in r.points):  # a compare report's one call is the plan's, no run of the sweep
        from .targets import format_targets

        lines += ["", *format_targets(r)]  # last, as the bench prints them: they read the table and the sweeps
    return "\n".join(lines)


NOTHING_COMPARED = "A and B time no call in common (same batch, kv_len, head_dim, heads and mode): nothing was compared"


def calls_in_both(a: DecodeReport, b: DecodeReport) -> int:
    """How many calls (shape and timing mode) both reports time: the rows ``diff_table`` can pair."""
    return len({p.key[:-1] for p in a.points} & {q.key[:-1] for q in b.points})


def diff_table(a: DecodeReport, b: DecodeReport) -> str:
    """What differs between the runs (device, GPU, git, clocks, copy rate), then the calls both timed: p50 of A
    and B [us], B/A, TB/s of each and the builds ("same" where both ran one)."""
    from ...report.tables import fmt_table, traits_head

    ta, tb = _traits(a), _traits(b)
    head = traits_head(ta, tb)
    if ta["gpu"] != tb["gpu"] and ta["device"] == tb["device"] and "not recorded" not in (ta["gpu"], tb["gpu"]):
        head.append("  (another GPU of the same kind: the same kernels differ by a few % from machine to machine)")
    bk = {p.key: p for p in b.points}
    exact = {p.key: bk.pop(p.key) for p in a.points if p.key in bk}  # first, so no fallback takes a row's twin
    unpaired_a: dict[tuple, int] = {}  # a call's shape and mode -> A's rows of it with no twin in B
    for p in a.points:
        if p.key not in exact:
            unpaired_a[p.key[:-1]] = unpaired_a.get(p.key[:-1], 0) + 1
    rows, only_a, shown = [], [], []  # shown: the builds the rows name
    for p in a.points:
        q = exact.get(p.key)
        if (q is None and unpaired_a[p.key[:-1]] == 1
                and len(same := [k for k in bk if k[:-1] == p.key[:-1]]) == 1):
            q = bk.pop(same[0])  # one other kernel at the same call on each side: the builds column says which
        if q is None:
            only_a.append(p.key)
            continue
        # the split count spelled out: "s8" after a label read as its stages (mma w4s1c1 s1)
        builds = (f"same: {p.kernel}, {counted(p.splits, 'split')}" if (p.kernel, p.splits) == (q.kernel, q.splits)
                  else f"{p.kernel}, {counted(p.splits, 'split')} | {q.kernel}, {counted(q.splits, 'split')}")
        shown += [p.kernel, q.kernel]
        rows.append([str(p.batch), str(p.kv_len), str(p.head_dim), p.heads, p.mode, f"{p.p50_us:.2f}",
                     f"{q.p50_us:.2f}", f"{q.p50_us / p.p50_us:.3f}x", f"{p.TBps:.2f}", f"{q.TBps:.2f}", builds])
    lines = ["B/A: B's time over A's (under 1: B is faster)", *fmt_table(
        ["batch", "kv_len", "d", "heads", "mode", "A us", "B us", "B/A", "A TB/s", "B TB/s", "builds"], rows,
        left=(10,), rule=False).splitlines()] if rows else ["no call in both"]
    lines += legend(shown)
    tail = ([f"only in A: {counted(len(only_a), 'call')}", f"only in B: {counted(len(bk), 'call')}"]
            if only_a or bk else [])
    modes_a, modes_b = sorted({p.mode for p in a.points}), sorted({q.mode for q in b.points})
    if only_a and bk and modes_a != modes_b:  # e.g. one run with L2 left dirty by the flush, one left clean
        tail.append(f"  (calls pair within one timing mode: A's are {'/'.join(modes_a)}, B's {'/'.join(modes_b)})")
    return "\n".join([*head, *lines, *tail])
