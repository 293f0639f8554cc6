"""One decode call across runs: how far its rate moves from run to run and GPU to GPU, and whether the peers timed
beside it move with it.

Decode reports hold one GPU's run each; the same call (batch x kv_len, head_dim, heads, cold mode) timed on several
H200s differs by more than the noise of one run. This gathers the plan's row of one call from many reports (files, or
every decode report under a directory, each once), of one GPU model where asked (an H100's rates sit a third under
an H200's: a step between models is not a state), slowest first, with each run's GPU, commit, build, copy rate and
best peer, and looks for a step between the rates that splits the runs into a slower and a faster group (``step``):
where it stands out, the two groups' medians say whether the peers and the copy probe of the same runs moved too (a
machine's state, not the kernel's). ``labkit report spread`` prints it and draws it (``labkit.plot.call_spread``);
``labkit decode bench`` places its own large calls among the recorded runs (``standings``). Nothing is timed here.
"""

import re
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path

from ..._text import counted
from ...errors import ArgumentError
from ...report.tables import provenance_traits
from ...timing import COLD_MODES
from .labels import legend
from .peers import best_peer
from .recorded_calls import Reports, builds_of, left_out, nearest_calls, read_reports
from .report import DecodePoint, DecodeReport
from .targets import LARGE_KV_MB, call_label, shape_label

RUN_DIR = re.compile(r"\d{8}T\d{6}Z")  # a run's folder: its UTC stamp first (rundirs.new_run_dir)

MIN_PER_SIDE = 3  # runs on each side of a step before it names two groups (two outliers are not a state)
MIN_MACHINES_PER_SIDE = 2  # GPUs (or run directories, where no GPU is named) on each side: one machine is not a state
MIN_FOR_GROUPS = 2 * MIN_PER_SIDE


@dataclass(frozen=True)
class RunRate:
    """The call in one run: labkit's rate (the plan's build, timed alone) and what the run says beside it."""

    TBps: float
    kernel: str  # the build's label: a commit may have changed the plan's build for the call
    copy_TBps: float  # the run's 1 GiB device-to-device copy, read + write
    best_peer: str | None  # the fastest peer timed beside it, None in a run without peers
    best_peer_TBps: float | None
    x_best_peer: float | None  # labkit in the peers' rounds / the best peer
    gpu: str  # NVML's GPU id, 'not recorded' in early records
    device: str  # the GPU model, as NVML names it ('NVIDIA H200'), 'not recorded' where the run names none
    vbios: str | None  # the board's firmware, recorded since the two states were found
    board: str | None  # the board's part number, recorded since the VBIOS was found the same in both states
    git: str
    created_utc: str
    source: str  # the report, as given or under the directory given
    path: str = ""  # the report's resolved path: its run's directory, however the reports were given

    @property
    def machine(self) -> str:
        """The GPU, or where no GPU is named the run's directory (early records): the stamped folder of the report's
        path, else its parent (``data/runs`` given or the files themselves, the same runs count the same)."""
        if self.gpu != "not recorded":
            return self.gpu
        where = Path(self.path or self.source)
        return next((part for part in where.parts if RUN_DIR.match(part)), where.parent.name or where.name)

    @property
    def beside_TBps(self) -> float | None:
        """labkit timed in the peers' rounds (what ``x_best_peer`` compares), None without peers."""
        if self.x_best_peer is None or self.best_peer_TBps is None:
            return None
        return self.x_best_peer * self.best_peer_TBps


@dataclass(frozen=True)
class Group:
    """Runs on one side of the largest step: their medians."""

    runs: int
    machines: int  # GPUs, or run directories where no GPU is named (what a step's sides are counted by)
    low: float
    high: float
    TBps: float
    best_peer_TBps: float | None  # over the runs of the group that have a peer
    peer_runs: int
    copy_TBps: float
    vbios: tuple[str, ...] = ()  # the VBIOS versions its runs recorded
    boards: tuple[str, ...] = ()  # the board part numbers its runs recorded
    gpus: int = 0  # the GPUs its runs name
    unnamed: int = 0  # its runs that name no GPU

    @property
    def where(self) -> str:
        """``21 runs on 14 GPUs (3 runs record no GPU id)``, as ``CallSpread.where`` counts them."""
        return _runs_on(self.runs, self.gpus, self.unnamed)


def _gpus_named(rs) -> tuple[int, int]:
    """The GPUs ``rs`` name, and how many of them name none."""
    return len({r.gpu for r in rs if r.gpu != "not recorded"}), sum(r.gpu == "not recorded" for r in rs)


def _runs_on(runs: int, gpus: int, unnamed: int) -> str:
    """Runs and the GPUs they name; those that name none are said apart, not counted as GPUs (a review: each such run's
    directory had counted as a machine, and two groups' "17 machines" and "20 machines" outnumbered 28 GPUs)."""
    if not gpus:  # not "1 run on 0 GPUs (1 run names none)"
        return f"{counted(runs, 'run')} naming no GPU"
    return (f"{counted(runs, 'run')} on {counted(gpus, 'GPU')}"
            + (f" ({counted(unnamed, 'run')} record{'s' if unnamed == 1 else ''} no GPU id)" if unnamed else ""))


@dataclass(frozen=True)
class CallSpread:
    """One call's plan rows across runs, slowest first (``runs``), and the files read."""

    call: str  # "64 x 8k d128, 32/8 heads, cold"
    runs: tuple[RunRate, ...]
    reports: int  # decode reports read
    skipped: int  # other JSON files under the directories given
    copies: int = 0  # reports of a run already read, left out
    damaged: tuple[str, ...] = ()  # "name: why" of each decode report under the directories that does not read

    @property
    def gpus(self) -> int:
        return _gpus_named(self.runs)[0]

    @property
    def devices(self) -> tuple[str, ...]:
        """The GPU models the runs name (a run naming none is of no other model)."""
        return tuple(sorted({r.device for r in self.runs} - {"not recorded"}))

    @property
    def builds(self) -> tuple[str, ...]:
        """The build labels the runs name."""
        return tuple(sorted({r.kernel for r in self.runs}))

    @property
    def where(self) -> str:
        """``44 runs on 28 GPUs (10 runs record no GPU id)``: the runs that record no GPU are not among the GPUs
        counted (a new-user review read "10 runs name none" as naming no kernel)."""
        return _runs_on(len(self.runs), *_gpus_named(self.runs))

    def step(self) -> tuple[Group, Group] | None:
        """The runs below and above the largest ratio between two neighbouring rates that leaves ``MIN_PER_SIDE`` runs
        on each side, where that step stands out: larger than either side's interquartile spread (q75 / q25), and
        each side on ``MIN_MACHINES_PER_SIDE`` machines or more. None otherwise (too few runs, rates that spread
        evenly, a few runs of one machine apart from the rest, or runs on several GPU models or of several builds,
        whose step would be the models' or the builds': 24 x 8k's were the plan's old and new build)."""
        rs = self.runs
        if len(rs) < MIN_FOR_GROUPS or len(self.devices) > 1 or len(self.builds) > 1:
            return None
        at = max(range(MIN_PER_SIDE - 1, len(rs) - MIN_PER_SIDE), key=lambda i: rs[i + 1].TBps / rs[i].TBps)
        low, high = rs[: at + 1], rs[at + 1:]
        if rs[at + 1].TBps / rs[at].TBps <= max(_iqr_ratio(low), _iqr_ratio(high)):
            return None
        groups = _group(low), _group(high)
        return None if min(g.machines for g in groups) < MIN_MACHINES_PER_SIDE else groups

    def place(self, TBps: float) -> str:
        """Where a rate of the same call stands among the runs: how many it beats and how many it is level with at the
        0.001 TB/s shown (a run beaten by 0.0003 read as 'faster than' at the same printed rate), and which group's
        range holds it."""
        level = sum(round(r.TBps, 3) == round(TBps, 3) for r in self.runs)
        faster = sum(r.TBps < TBps and round(r.TBps, 3) != round(TBps, 3) for r in self.runs)
        line = (f"{TBps:.3f} TB/s: faster than {faster} of the {counted(len(self.runs), 'recorded run')}"
                + (f", level with {level} at this precision" if level else ""))
        step = self.step()
        if step is None:
            return line
        low, high = step
        where = ("in the slower group's range" if low.low <= TBps <= low.high else
                 "in the faster group's range" if high.low <= TBps <= high.high else
                 "between the two groups" if low.high < TBps < high.low else
                 "below both groups" if TBps < low.low else "above both groups")
        return f"{line}, {where} ({low.low:.3f}-{low.high:.3f} / {high.low:.3f}-{high.high:.3f})"

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame([asdict(r) for r in self.runs])


def _iqr_ratio(rs: tuple[RunRate, ...]) -> float:
    q25, _, q75 = statistics.quantiles([r.TBps for r in rs], n=4, method="inclusive")
    return q75 / q25


def _group(rs: tuple[RunRate, ...]) -> Group:
    peers = [r.best_peer_TBps for r in rs if r.best_peer_TBps is not None]
    return Group(len(rs), len({r.machine for r in rs}), rs[0].TBps, rs[-1].TBps, statistics.median(r.TBps for r in rs),
                 statistics.median(peers) if peers else None, len(peers), statistics.median(r.copy_TBps for r in rs),
                 tuple(sorted({r.vbios for r in rs if r.vbios})), tuple(sorted({r.board for r in rs if r.board})),
                 *_gpus_named(rs))


def call_spread(paths: list[str | Path] | Reports, batch: int, kv_len: int, head_dim: int, *, heads: str = "32/8",
                mode: str = "cold", kernel: str | None = None, device: str | None = None,
                ask: str = "--point {batch}x{kv_len}") -> CallSpread:
    """The plan's row of one call in every report (a report's rows are its plans' calls; ``decode compare`` keeps its
    other builds in a sweep), from paths (``read_reports``) or reports already read.
    ``kernel``: only rows of that build (its label, e.g. ``mma w4s1c1``), to hold the kernel fixed; ``device``: only
    runs on that GPU model (its name as the reports record it, e.g. ``NVIDIA H200``); ``ask``: how the refusal of a
    call no run holds says to ask for the nearest recorded one.

    Raises:
        ArgumentError: a mode that is not cold, a path that is not a decode report, or no such row anywhere.
        FormatError: a decode report that does not read.
    """
    if mode not in COLD_MODES:
        raise ArgumentError(f"--mode {mode!r}: expected one of {', '.join(COLD_MODES)} (machines differ in cold "
                            "calls, whose data come from DRAM)")
    reports = paths if isinstance(paths, Reports) else read_reports(paths)
    runs = []
    for (name, r), path in zip(reports.found, reports.paths):
        for p in r.points:
            call = (p.batch, p.kv_len, p.head_dim, p.heads, p.mode)
            if call == (batch, kv_len, head_dim, heads, mode) and kernel in (None, p.kernel):
                runs.append(_run(name, r, p, path))
    label = f"{shape_label(batch, kv_len, head_dim)}, {heads} heads, {mode}" + (f", {kernel}" if kernel else "")
    if device is not None:
        others = sorted({x.device for x in runs} - {device})
        runs = [x for x in runs if x.device == device]
        label += f", on {device}"
    skipped = f" ({counted(reports.skipped, 'other JSON file')} skipped)" if reports.skipped else ""
    if reports.damaged:  # named where the call is refused too: the damaged file may be the run asked for
        skipped += f" ({left_out(reports.damaged)})"
    if not reports.found:  # not "no row of this call in the 0 decode reports"
        given = "the reports given" if isinstance(paths, Reports) else ", ".join(map(str, paths)) or "no path"
        raise ArgumentError(f"no decode report in {given}{skipped}")
    if not runs:
        where = counted(len(reports.found), "decode report") + skipped
        if device is not None and others:
            raise ArgumentError(f"{label}: no run of this call on {device} in the {where}; it ran on "
                                + ", ".join(others))
        call = (batch, kv_len, head_dim, heads, mode)
        builds = builds_of(reports.found, call) if kernel else ""
        near = "" if builds else nearest_calls(reports.found, call, ask=ask)
        raise ArgumentError(f"{label}: no row of this call in the {where}; " + (
            f"its recorded builds: {builds}" if builds else f"the nearest recorded at d{head_dim}, {heads} heads, "
            f"{mode}: {near}" if near else "labkit report show FILE lists a report's calls"))
    return CallSpread(label, tuple(sorted(runs, key=lambda x: (x.TBps, x.source))), len(reports.found),
                      reports.skipped, reports.copies, reports.damaged)


def standings(r: DecodeReport, among: Reports, *, min_kv_MB: float = LARGE_KV_MB,
              exclude: Path | str | None = None) -> list[str]:
    """Where each cold call of ``r`` that reads ``min_kv_MB`` or more stands among the recorded runs of the same call
    and build (``exclude``: ``r``'s own file, where it lies among them): one line each, or for a build with fewer
    than ``MIN_FOR_GROUPS`` runs a line that says so (runs of other builds would place the build, not the machine);
    only runs on ``r``'s GPU model count. A bench prints them under its targets: on an H200 in the slower state the
    lines say so."""
    if exclude is not None:
        gone = Path(exclude).resolve()
        among = Reports(tuple(f for f, p in zip(among.found, among.paths) if p != gone), among.skipped,
                        tuple(p for p in among.paths if p != gone), among.copies, among.damaged)
    lines, device = [], provenance_traits(r.provenance)["device"]
    for p in r.points:
        if p.mode not in COLD_MODES or p.kv_MB < min_kv_MB:
            continue
        try:
            s = call_spread(among, p.batch, p.kv_len, p.head_dim, heads=p.heads, mode=p.mode, kernel=p.kernel,
                            device=device)
            runs = len(s.runs)
        except ArgumentError:  # no recorded run of this call and build on this GPU model
            s, runs = None, 0
        head = f"  {call_label(p)} ({p.kernel})"
        if runs < MIN_FOR_GROUPS:
            on = device if device != "not recorded" else "a GPU not recorded"
            lines.append(f"{head} {p.TBps:.3f} TB/s: {counted(runs, 'recorded run')} of this build on {on}, too few "
                         "to place it")
        else:
            lines.append(f"{head} {s.place(p.TBps)}")
    return lines


def _run(name: str, r: DecodeReport, p: DecodePoint, path: Path | None = None) -> RunRate:
    t = provenance_traits(r.provenance)
    best = best_peer(p.peers)
    device = r.provenance.get("device") or {}
    return RunRate(p.TBps, p.kernel, r.copy_TBps, best[0] if best else None, best[1] if best else None,
                   p.x_best_peer, t["gpu"], t["device"], device.get("vbios_version"), device.get("board_part_number"),
                   t["git"][:7], str(r.provenance.get("created_utc", "")), name, str(path or ""))


def _row_cells(s: CallSpread, r: RunRate) -> list[str]:
    peer = "-" if r.best_peer is None else f"{r.best_peer} {r.best_peer_TBps:.2f}"
    return [r.source, *([r.device] if len(s.devices) > 1 else []), r.gpu, r.git, r.kernel, f"{r.copy_TBps:.3f}",
            f"{r.TBps:.3f}", peer, "-" if r.x_best_peer is None else f"{r.x_best_peer:.3f}"]


def _row_header(s: CallSpread) -> list[str]:
    return ["run", *(["model"] if len(s.devices) > 1 else []), "GPU", "git", "build", "copy", "TB/s", "best peer",
            "x peer"]


def spread_frame(s: CallSpread):
    """``spread_table``'s rows as a DataFrame, the run as its index: what a notebook shows, where the text table's
    lines (some 140 characters, the run's path among them) each broke in two in JupyterLab's pane."""
    import pandas as pd

    return pd.DataFrame([_row_cells(s, r) for r in s.runs], columns=_row_header(s)).set_index("run")


def spread_table(s: CallSpread, *, rows: bool = True) -> str:
    """One line per run, slowest first, then the range and, where a step stands out (``CallSpread.step``), the two
    groups' medians; ``rows=False``: without the runs' lines (a notebook shows ``spread_frame`` under it)."""
    from ...report.tables import fmt_table

    models = len(s.devices) > 1  # then each row names its model, and no step is sought
    rates = [r.TBps for r in s.runs]
    peers = [r.best_peer_TBps for r in s.runs if r.best_peer_TBps is not None]
    builds = len(s.builds)
    lines = [f"{s.call}: the plan's call in {s.where}"
             + (f" ({counted(builds, 'build')}: --kernel holds one)" if builds > 1 else "")
             + (f"; {s.copies} {'copy' if s.copies == 1 else 'copies'} of a report already read left out" if s.copies
                else "") + (f"; {left_out(s.damaged)}" if s.damaged else ""),
             *([fmt_table(_row_header(s), [_row_cells(s, r) for r in s.runs], rule=False)] if rows else []),
             "TB/s: labkit timed alone, K+V bytes read over p50; copy: the run's 1 GiB device-to-device copy, TB/s "
             "read + write; x peer: labkit / the best peer, both timed in the peers' rounds",
             *legend(r.kernel for r in s.runs),
             f"labkit {min(rates):.3f}-{max(rates):.3f} TB/s (median {statistics.median(rates):.3f}, "
             f"{max(rates) / min(rates) - 1:+.1%} from slowest to fastest)"
             + (f"; the best peer {min(peers):.3f}-{max(peers):.3f} in {counted(len(peers), 'run')} with peers"
                if peers else "")]
    step = s.step()
    if models:
        lines.append(f"runs on {counted(len(s.devices), 'GPU model')} ({', '.join(s.devices)}): no step sought, as one "
                     "between models is not a state; --device NAME holds one")
    elif len(s.builds) > 1 and len(s.runs) >= MIN_FOR_GROUPS:
        lines.append(f"runs of {counted(len(s.builds), 'build')}: no step sought, as one between builds may be the "
                     "builds', not the machines' state; --kernel holds one")
    elif step is None and len(s.runs) >= MIN_FOR_GROUPS:
        lines.append(f"no step with {MIN_PER_SIDE} or more runs on each side stands out from the spread on either side "
                     f"of it, on {MIN_MACHINES_PER_SIDE} or more machines each")
    if step:
        low, high = step
        lines.append(f"two groups: the largest step with {MIN_PER_SIDE} or more runs on each side, {low.high:.3f} -> "
                     f"{high.low:.3f} TB/s ({high.low / low.high - 1:+.1%}), is more than either side's interquartile "
                     "spread; medians each side:")
        for g in step:
            lines.append(f"  {g.where} at {g.low:.3f}-{g.high:.3f}: "
                         f"labkit {g.TBps:.3f}, "
                         + (f"best peer {g.best_peer_TBps:.3f} ({counted(g.peer_runs, 'run')}), "
                            if g.best_peer_TBps is not None else "")
                         + f"copy {g.copy_TBps:.3f} TB/s" + (f"; VBIOS {', '.join(g.vbios)}" if g.vbios else "")
                         + (f"; board {', '.join(g.boards)}" if g.boards else ""))
    return "\n".join(lines)
