"""Where labkit stands against its best peer over batch x kv_len: the cold calls of decode reports that were timed
beside the peers (``labkit decode bench --peers [--point ...]``), as one grid per geometry (head_dim, heads) and cold
mode (``cold``, L2 left dirty by the flush, or ``cold_clean``: calls timed in different modes are not comparable).
``labkit report map`` prints it and draws it (``labkit.plot.peer_map``)."""

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..._text import counted, length_label
from ...errors import ArgumentError
from ...report.tables import provenance_traits
from ...timing import COLD_MODES
from .peers import best_peer, beyond_noise, inside_noise
from .report import PERSISTING_NOTE, PERSISTING_RESET, DecodeReport, is_decode_report, load, persisting_note

NOISE_MARK = "*: behind by less than the rounds can tell (its 95 % interval holds 1)"


@dataclass(frozen=True)
class MapCell:
    """One call: labkit beside the peers / the fastest peer, which peer that was, labkit's build and its report."""

    x_best_peer: float
    best_peer: str
    kernel: str
    splits: int
    source: str
    x_best_peer_high: float | None = None  # the top of its rounds' 95 % interval (reports since a1d3d88)

    @property
    def behind_inside_noise(self) -> bool:
        """Behind the best peer by less than its rounds can tell (its 95 % interval holds 1)."""
        return self.x_best_peer < 1.0 and inside_noise(self.x_best_peer_high)

    @property
    def label(self) -> str:
        """Its ratio as the table and the figure show it, marked ``*`` where it is behind inside its rounds' noise: a
        pale 0.99 and a resolved 0.99 had read the same."""
        return f"{self.x_best_peer:.2f}{'*' if self.behind_inside_noise else ''}"


@dataclass(frozen=True)
class PeerMap:
    """One geometry's calls in one cold mode: ``cells[(batch, kv_len)]``, on the batches and lengths any of them
    has."""

    head_dim: int
    heads: str
    cells: dict  # (batch, kv_len) -> MapCell
    runs: tuple[tuple[str, str], ...] = ()  # where its cells were timed: (device and GPU, git sha), one per run
    replaced: int = 0  # calls timed in two reports whose later timing the map shows (``newest``)
    mode: str = "cold"  # labkit.timing's cold mode of every cell
    before_reset: tuple[tuple[str, str], ...] = ()  # its runs whose peers may have read FA3's persisting L2 lines
    device: str = "not recorded"  # the GPU model of every cell: an H100's and an H200's calls are two maps
    variant: str | None = None  # the kernel variant of every cell, where the reports timed more than one

    @property
    def what(self) -> str:
        """The map's geometry, its kernel variant where there are several and, where L2 was left clean, its cold mode:
        one line for a title."""
        clean = ", L2 left clean" if self.mode == "cold_clean" else ""
        variant = f", {self.variant} kernel" if self.variant else ""
        return f"d{self.head_dim}, {self.heads} heads{variant}{clean}"

    @property
    def where(self) -> str:
        """One line for a title: the run, or how many runs on how many GPUs (machines differ by a few %)."""
        if len(self.runs) == 1:
            return "{}, git {}".format(*self.runs[0])
        return f"{len(self.runs)} runs on {counted(len({gpu for gpu, _ in self.runs}), 'GPU')} ({self.device})"

    @property
    def noise_note(self) -> str:
        """The line saying what the ``*`` of a cell's label means, where a cell has one; else ''."""
        return NOISE_MARK if any(c.behind_inside_noise for c in self.cells.values()) else ""

    @property
    def batches(self) -> tuple[int, ...]:
        return tuple(sorted({b for b, _ in self.cells}))

    @property
    def kv_lens(self) -> tuple[int, ...]:
        return tuple(sorted({n for _, n in self.cells}))

    @property
    def kv_labels(self) -> tuple[str, ...]:
        """The lengths as a table's or a figure's column heads: 8k for 8192."""
        return tuple(map(length_label, self.kv_lens))

    def behind(self, below: float = 1.0) -> list[tuple[tuple[int, int], MapCell]]:
        """The calls under ``below`` x the best peer, furthest behind first."""
        under = [(k, c) for k, c in self.cells.items() if c.x_best_peer < below]
        return sorted(under, key=lambda kc: kc[1].x_best_peer)

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame([{"head_dim": self.head_dim, "heads": self.heads, "batch": b, "kv_len": n,
                              "x_best_peer": c.x_best_peer, "best_peer": c.best_peer, "kernel": c.kernel,
                              "splits": c.splits, "source": c.source} for (b, n), c in sorted(self.cells.items())])


def peer_maps(reports: list[tuple[str, DecodeReport]], *, newest: bool = False) -> list[PeerMap]:
    """One map per GPU model, geometry and cold mode from ``(name, report)`` pairs, their cold rows that have
    ``x_best_peer``.
    ``newest``: a
    call in two reports takes the later one's timing (by its provenance's ``created_utc``), as after a plan change
    some calls of a grid are timed again.

    Raises:
        ArgumentError: no such row in any report, or one call in two of them without ``newest`` (which one to draw
            is not the map's choice), or with it in two reports created at the same time.
    """
    found: dict[tuple, dict] = {}  # (model, geometry, mode) -> {(batch, kv_len): (cell, created, run)}
    replaced: dict[tuple, int] = {}
    early: set[tuple[str, str]] = set()
    for name, r in reports:
        t = provenance_traits(r.provenance)
        run = (f"{t['device']} ({t['gpu']})", t["git"])
        if persisting_note(r):
            early.add(run)
        created = _created(name, r) if newest else None
        for p in r.points:
            best = best_peer(p.peers)
            if p.mode not in COLD_MODES or p.x_best_peer is None or best is None:
                continue
            key = (t["device"], p.head_dim, p.heads, p.mode, p.variant)  # --variant mma --variant fma: two maps
            cells = found.setdefault(key, {})
            call = f"batch {p.batch} x {p.kv_len}, d{p.head_dim}, {p.heads}, {p.mode}"
            if (p.batch, p.kv_len) in cells:
                other, other_created, _ = cells[p.batch, p.kv_len]
                if not newest:
                    raise ArgumentError(f"{call}: in both {other.source} and {name}; give one report per call, or "
                                        "--newest to show the later one's")
                if created == other_created:
                    raise ArgumentError(f"{call}: in both {other.source} and {name}, created at the same time "
                                        f"({created.isoformat()}); give one report per call")
                replaced[key] = replaced.get(key, 0) + 1
                if created < other_created:
                    continue
            cell = MapCell(p.x_best_peer, best[0], p.kernel, p.splits, name, p.x_best_peer_high)
            cells[p.batch, p.kv_len] = (cell, created, run)
    if not found:
        raise ArgumentError(f"{', '.join(name for name, _ in reports)}: no cold call timed beside the peers (write "
                            "one with labkit decode bench --peers --out FILE)")
    maps = []
    several = len({key[-1] for key in found}) > 1  # name the variant only where the maps differ in it
    for key, cells in sorted(found.items()):
        device, d, heads, mode, variant = key
        runs = tuple(sorted({v[2] for v in cells.values()}))
        maps.append(PeerMap(d, heads, {k: c for k, (c, _, _) in cells.items()}, runs, replaced.get(key, 0), mode,
                            tuple(run for run in runs if run in early), device, variant if several else None))
    return maps


def _created(name: str, r: DecodeReport) -> datetime:
    """When the report was written (provenance ``created_utc``; UTC where it names no zone), which ``newest``
    compares."""
    try:
        created = datetime.fromisoformat(r.provenance["created_utc"])
        return created if created.tzinfo is not None else created.replace(tzinfo=timezone.utc)
    except (KeyError, TypeError, ValueError):
        raise ArgumentError(f"{name}: provenance.created_utc {r.provenance.get('created_utc')!r}: expected an ISO "
                            "time, which --newest compares") from None


def load_maps(paths: list[str | Path], *, newest: bool = False) -> list[PeerMap]:
    """``peer_maps`` of decode report files, each read strictly first (a bad file is the one error)."""
    seen: dict[Path, str | Path] = {}
    for p in paths:  # one file twice had read as two reports timing the same calls ("in both F and F")
        if Path(p).resolve() in seen:
            first = seen[Path(p).resolve()]
            same = "given twice" if str(first) == str(p) else f"given twice (as {first} and {p})"
            raise ArgumentError(f"{p}: {same}; give each report once")
        seen[Path(p).resolve()] = p
    sage2 = next((p for p in paths if not is_decode_report(p)), None)
    if sage2 is not None:
        raise ArgumentError(f"{sage2}: a Sage2 report; the map reads decode reports (labkit decode bench --peers --out "
                            "FILE)")
    return peer_maps([(str(p), load(p)) for p in paths], newest=newest)


def under_one(x: float, digits: int = 3) -> str:
    """A ratio under 1 to ``digits`` decimals, more where those show it under 1 (0.973, 0.9998): "behind ... x 1.000"
    read as level."""
    while round(x, digits) >= 1 and digits < 6:
        digits += 1
    return f"{x:.{digits}f}"


def map_table(m: PeerMap) -> str:
    """x_best_peer by batch (rows) and kv_len (columns), then how many calls are behind and the furthest."""
    from ...report.tables import fmt_table

    rows = [[str(b), *(m.cells[b, n].label if (b, n) in m.cells else "-" for n in m.kv_lens)] for b in m.batches]
    behind = m.behind()
    label = dict(zip(m.kv_lens, m.kv_labels))
    worst = ", ".join(f"{b} x {label[n]} x {under_one(c.x_best_peer)} ({c.best_peer})" for (b, n), c in behind[:3])
    return "\n".join([f"labkit beside the peers / the best peer, {m.what} (under 1: behind)",
                      *(f"  {gpu}, git {git}" for gpu, git in m.runs),
                      *([f"  {counted(m.replaced, 'call')} in two reports: the later one's"] if m.replaced else []),
                      *([f"  {len(m.before_reset)} of {counted(len(m.runs), 'run')} timed before {PERSISTING_RESET}, "
                         f"or at a commit this checkout cannot place: {PERSISTING_NOTE}"] if m.before_reset else []),
                      fmt_table(["batch", *m.kv_labels], rows, rule=False),
                      *([m.noise_note] if m.noise_note else []),
                      f"behind at {len(behind)} of {len(m.cells)} calls"
                      + "".join(f"; {x}" for x in (beyond_noise([c.x_best_peer_high for _, c in behind]), worst and
                                                   f"furthest: {worst}") if x)])


def figure_names(maps: list[PeerMap], out: Path) -> list[Path]:
    """Where ``labkit report map --out OUT`` draws each map: OUT for one; for several OUT_d128_32-8 (the geometry),
    with the GPU model first where the maps are of two (OUT_H200_d128_...), a variant after, and _clean for a map of
    calls timed with L2 left clean (a geometry's two cold modes are two maps)."""
    import re

    if len(maps) == 1:
        return [out]
    two_models = len({m.device for m in maps}) > 1
    stem = out.with_suffix("").name if out.suffix.lower() in (".png", ".svg") else out.name  # as given, less .png
    names = []
    for m in maps:
        model = "_" + re.sub(r"\W+", "_", m.device.removeprefix("NVIDIA ")).strip("_") if two_models else ""
        variant = f"_{m.variant}" if m.variant else ""
        clean = "_clean" if m.mode == "cold_clean" else ""
        names.append(out.with_name(f"{stem}{model}_d{m.head_dim}_{m.heads.replace('/', '-').replace(' ', '_')}"
                                   f"{variant}{clean}"))
    return names
