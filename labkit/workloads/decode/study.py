"""Notebook 03's measurements, each one JSON-ready call: correctness over varied calls, the copy
ceiling, the split counts of a split sweep and its rows (the sweeps themselves are labkit.sweep's
``decode.point``), and the seed manifest's static check beside labkit's own manifest for the same geometry; and,
from the records rather than the GPU, one call across the recorded runs."""

from pathlib import Path

import numpy as np

from ..._text import counted, wrapped
from .build import build_plan
from .geometry import DecodeGeometry
from .inputs import make_inputs
from .plan import plan_call
from .reference import reference_and_bound
from .run import run_decode

CASES = {  # name: (geometry, seq_lens, q_lens)
    "G1 d128 page16, lengths 1 / 16 / 17": (DecodeGeometry(4, 4, 4, 128, 16, 12, 60), [1, 16, 17, 191], None),
    "G6 d256 page64 (seed geometry)": (DecodeGeometry(2, 24, 4, 256, 64, 11, 22), [704, 65], None),
    "G6 d256 interleaved pool": (DecodeGeometry(2, 24, 4, 256, 64, 11, 22, layout="interleaved"), [63, 704], None),
    "G8 d128 page32": (DecodeGeometry(3, 32, 4, 128, 32, 40, 130), [1279, 32, 33], None),
    "G4 d128, 3 causal q tokens": (DecodeGeometry(3, 16, 4, 128, 32, 10, 40, max_q_len=4), [300, 4, 97], [3, 3, 3]),
}


def correctness(splits: tuple[int, ...] = (1, 3)) -> list[dict]:
    """Every case and split count against exact float64 attention; every element checked."""
    rows = []
    for name, (g, lens, q_lens) in CASES.items():
        x = make_inputs(g, seq_lens=lens, q_lens=q_lens, seed=len(rows))
        ref, bound = reference_and_bound(x)
        used = int(x.cu_seqlens_q[-1])
        for s in splits:
            run = run_decode(x, splits=s)
            err = np.abs(run.out[:used] - ref[:used])
            nonfinite = int((~np.isfinite(err)).sum())  # NaN or inf written (or left unwritten): no max error
            rows.append({"case": name, "splits": s, "elements": int(err.size),
                         "max_abs_err": float(err.max()) if not nonfinite else None, "nonfinite": nonfinite,
                         "within_bound": bool((err <= bound[:used]).all()),
                         "unwritten_rows_untouched": bool(np.isnan(run.out[used:]).all())})
    return rows


def copy_ceiling() -> dict:
    """The device-to-device copy rate of 1 GiB (read + write), the bandwidth sweep's reference line."""
    from ...probes import copy_ceiling_GBps

    return {"TBps": copy_ceiling_GBps() / 1e3}


def split_counts(batch: int, kv_len: int, *, page_size: int = 64, head_dim: int = 128, heads_q: int = 32,
                 heads_kv: int = 8) -> list[int]:
    """The split counts a split sweep times: 0 (the heuristic's) and ``labkit.workloads.decode.bench``'s
    ``sweep_counts`` (powers of two up to one per page; fewer for calls over 1 GB)."""
    from .bench import sweep_counts
    from .run import geometry_for

    g = geometry_for(batch, kv_len, heads_q=heads_q, heads_kv=heads_kv, head_dim=head_dim, page_size=page_size)
    return [0, *sweep_counts(g)]


def split_rows(points) -> list[dict]:
    """A split sweep's points (``decode.point`` rows, ``splits`` 0 = the heuristic) as the plot's rows, sorted by
    split count: every power of two's own point, and the heuristic's marked at the count it picked. Where that count
    is also a power of two both stay: the plan may run another build there (e.g. a cluster), and the line's own
    point is the like-for-like comparison."""
    rows = [dict(r) for r in (points.to_dict("records") if hasattr(points, "to_dict") else points)]
    heuristic = [r for r in rows if r["splits"] == 0]
    if len(heuristic) != 1:
        raise ValueError(f"a split sweep holds {len(heuristic)} heuristic points (splits 0); expected 1")
    out = [{**r, "splits": int(r["splits"]), "heuristic": False} for r in rows if r["splits"] != 0]
    out.append({**heuristic[0], "splits": int(heuristic[0]["splits_used"]), "heuristic": True})
    return sorted(out, key=lambda r: (r["splits"], r["heuristic"]))


def bandwidth_table(points):
    """The bandwidth sweep's measured points (``decode.point`` rows with peers; skipped ones left out) as a table:
    integer split counts, each peer's TB/s a number (NaN where it did not run), and why a peer did not run in
    ``peers_not_run`` (a peer's row holds the reason as text, which would turn its column into text)."""
    import pandas as pd

    from .peers import FLEX_POINTS, PEERS

    table = (points[points["skipped"].isna()] if "skipped" in points else points).reset_index(drop=True)
    for col in ("splits", "splits_used"):
        if col in table:
            table[col] = table[col].astype("Int64")
    notes = [[] for _ in range(len(table))]
    for peer in (p for p in PEERS if p in table):
        for i, v in enumerate(table[peer]):
            if isinstance(v, str):
                notes[i].append(f"{peer}: {v}")
        table[peer] = pd.to_numeric(table[peer], errors="coerce")
    if {"batch", "kv_len", "head_dim"} <= set(table):  # FlexAttention compiles per shape: run at FLEX_POINTS only
        # a sweep with none of those points has no flex_paged column, though the peers were asked for
        flex = table["flex_paged"] if "flex_paged" in table else [float("nan")] * len(table)
        asked = table["peers"].map(lambda p: p is not None and p == p and bool(p)) if "peers" in table else \
            ["flex_paged" in table] * len(table)
        for i, (b, n, d, v, peers) in enumerate(zip(table["batch"], table["kv_len"], table["head_dim"], flex, asked)):
            if peers and (b, n, d) not in FLEX_POINTS and v != v:
                notes[i].append(f"flex_paged: run only at the {len(FLEX_POINTS)} points the targets name "
                                "(compiled per shape)")
    # one line per cell, its line breaks written \n: a compiler's traceback in it had broken the CSV's rows for
    # `column`, `cut` and most viewers (``peers_not_run`` reads them back as line breaks)
    table["peers_not_run"] = ["; ".join(n).replace("\n", "\\n") for n in notes]
    if "labkit_beside_peers" in table:  # as the bench's report: labkit in the peers' rounds over the best of them
        best = table[[p for p in PEERS if p in table]].max(axis=1, skipna=True)
        table["x_best_peer"] = pd.to_numeric(table["labkit_beside_peers"], errors="coerce") / best
        interval = [c for c in ("x_best_peer_low", "x_best_peer_high") if c in table]  # after the ratio they bound
        table = table[[c for c in table if c not in interval] + interval]
    return table.drop(columns=[c for c in ("skipped",) if c in table])


def behind_best_peer(table) -> list[str]:
    """Where labkit, timed in the peers' rounds, is behind the best peer (``x_best_peer`` under 1) and by how much, the
    furthest first, and the range of the rest: the line a reader of the bandwidth table would otherwise count."""
    from .peer_map import under_one
    from .peers import PEERS, interval_label

    if "x_best_peer" not in table or not table["x_best_peer"].notna().any():
        return []
    rows = table[table["x_best_peer"].notna()]
    peer = rows[[p for p in PEERS if p in rows]].idxmax(axis=1)
    low, high = (rows[c] if c in rows else [float("nan")] * len(rows) for c in ("x_best_peer_low", "x_best_peer_high"))

    def rounds(lo, hi) -> str:  # the interval of the ratio's median, round by round (peers.x_best_peer_interval)
        return "" if lo != lo or hi != hi else f"; 95 % {interval_label(lo, hi)}"

    behind = sorted((x, f"{b} x {n} x {under_one(x, 4)} ({who}{rounds(lo, hi)})") for b, n, x, who, lo, hi in
                    zip(rows["batch"], rows["kv_len"], rows["x_best_peer"], peer, low, high) if x < 1)
    ahead = rows["x_best_peer"][rows["x_best_peer"] >= 1]
    rest = (f"; level or ahead at the other {len(ahead)} (x {ahead.min():.3f}-{ahead.max():.3f})" if len(ahead) > 1
            else f"; level or ahead at the other one (x {ahead.min():.3f})" if len(ahead) else "")
    head = f"x_best_peer: labkit timed in the peers' rounds over the best peer, at {counted(len(rows), 'call')}"
    if not behind:
        return [f"{head}: level or ahead at every one (x {ahead.min():.3f}-{ahead.max():.3f})"]
    return [f"{head}: behind at {len(behind)}, {', '.join(text for _, text in behind)}{rest}"]


def bandwidth_fit(table) -> tuple[tuple[float, float] | None, str]:
    """The bandwidth sweep's calls of ``cost_fit.MIN_FIT_MB`` or more fitted as a fixed part plus bytes at one rate
    (``cost_fit.fit_line``): (fixed_us, TBps) for the figure, or None, and the line the notebook prints."""
    from ..._text import counted
    from .cost_fit import MIN_FIT_MB, fit_line, fit_text
    from .targets import shape_label

    calls = [(mb, us, shape_label(b, n, d)) for mb, us, b, n, d in
             zip(table["kv_MB"], table["p50_us"], table["batch"], table["kv_len"], table["head_dim"])
             if mb >= MIN_FIT_MB] if len(table) else []  # every point skipped: no row, no columns
    fit = fit_line((mb, us) for mb, us, _ in calls)
    if fit is None:
        return None, (f"no fit: {counted(len(calls), 'call')} of {MIN_FIT_MB:g} MB or more, which one line of a fixed "
                      "part and a rate does not hold" if len(calls) >= 3 else
                      f"no fit: {counted(len(calls), 'call')} of {MIN_FIT_MB:g} MB or more (3 needed)")
    return fit, f"time per call, fitted over the calls of {MIN_FIT_MB:g} MB or more: {fit_text(fit, calls)}"


def skipped(points) -> list[str]:
    """One line per point of the bandwidth sweep that was not measured, and why (over the K+V bytes a point may
    read)."""
    if "skipped" not in points:
        return []
    rows = points[points["skipped"].notna()]
    return [f"skipped: batch {b} x {n}: {why}" for b, n, why in zip(rows["batch"], rows["kv_len"], rows["skipped"])]


SETTINGS = ("head_dim", "page_size", "heads_q", "heads_kv", "heads", "iterations", "peers", "mode")  # of a sweep's call


def shown(table, *, keep: tuple[str, ...] = ("batch", "kv_len", "splits", "kernel", "p50_us", "TBps")):
    """``table`` as a notebook shows it: columns that hold one value in every row left out (the figure's title and
    the parameters say them; the saved CSV keeps them), ``splits_used`` where it repeats ``splits``, and numbers
    rounded to what the timing resolves (us to 0.01, TB/s to 0.001). ``peers_not_run`` is left out too: its reasons
    (a compiler's error, say) made the table too wide to read; ``peers_not_run`` below lists them once each."""
    out = table.drop(columns=[c for c in ("peers_not_run",) if c in table])
    if "splits_used" in out and "splits" in out and (out["splits_used"] == out["splits"]).all():
        out = out.drop(columns=["splits_used"])
    # map(str): a missing value is "nan", one of the values (pandas 3's astype(str) keeps it missing, and a peer timed
    # at one point of the sweep read as one value in every row)
    # one row: every column holds one value, so only the call's settings go, as they would beside another row
    constant = ([c for c in out.columns if c not in keep and out[c].map(str).nunique() <= 1] if len(out) > 1 else
                [c for c in SETTINGS if c in out and c not in keep])
    from ...report.tables import rounded
    from .peers import PEERS

    out = rounded(out.drop(columns=constant), (("_us", 2),), default=3)
    for c in (*PEERS, "labkit_beside_peers"):  # a peer with no number there: "-", as the spread's table says it
        if c in out and out[c].isna().any():  # (NaN read as a failed number; the lines below say why)
            out[c] = out[c].astype(object).where(out[c].notna(), "-")
    return out


def peers_not_run(table, *, saved_in: str | None = None) -> list[str]:
    """Why a peer has no number, one line per peer and reason, the points first: ``flex_paged: no number at 1 x
    1024, 8 x 1024: run at ...``, the reason as ``peers.shown_reason`` prints it (a compile error said as one, cut at a
    word, and ``saved_in`` named where it is cut: the table's CSV keeps it whole)."""
    import re

    from .peers import PEERS, shown_reason

    if "peers_not_run" not in table:
        return []
    note_start = re.compile(rf"; (?=(?:{'|'.join(PEERS)}): )")  # a compiler's message may hold '; ' itself
    where: dict[tuple[str, str], list[str]] = {}
    for b, n, notes in zip(table["batch"], table["kv_len"], table["peers_not_run"]):
        for note in filter(None, note_start.split(str(notes).replace("\\n", "\n"))):
            peer, _, why = note.strip().partition(": ")
            where.setdefault((peer, shown_reason(peer, why, saved_in=saved_in)), []).append(f"{b} x {n}")
    return [f"{peer}: no number at {', '.join(points)}" + (f": {why}" if why else "")
            for (peer, why), points in where.items()]


def manifest_comparison(seed_manifest: Path | str, directory: Path | str) -> list[dict]:
    """The seed's manifest and labkit's own for the seed's geometry, both checked statically."""
    from ...manifest import check, load

    seed = check(load(seed_manifest))
    g = DecodeGeometry(2, 24, 4, 256, 64, 11, 22)
    plan = plan_call(g)
    ours_path = build_plan(g, plan, directory)
    ours = check(load(ours_path), cubin_dirs=(directory,))
    out = []
    for label, res in (("seed (trtllm-gen, sm_100f)", seed), ("labkit paged_decode (sm_90)", ours)):
        plan = res.plans[0] if res.plans else None
        out.append({"manifest": label, "entry": plan.entry if plan else "-",
                    "pack_bytes": plan.pack_size if plan else None, "grid": list(plan.grid) if plan else None,
                    "block": list(plan.block) if plan else None, "dynamic_smem": plan.shared_mem if plan else None,
                    "errors": len(res.errors), "warnings": sum(i.severity == "warning" for i in res.issues),
                    "static_check_ok": res.ok})
    return out


ENTRY_SHOWN = 48  # characters of a kernel's entry name the notebook's table shows


def shown_manifests(frame):
    """``manifest_comparison``'s rows as notebook 03 shows them: an entry name over ``ENTRY_SHOWN`` characters cut
    there and marked with an ellipsis (the seed's runs to 130; cut with no mark, it read as another kernel's whole
    name); the saved table keeps it whole. ``ok`` reads yes / no."""
    from ...report.tables import rounded

    out = rounded(frame, ())
    out["entry"] = [e if len(e) <= ENTRY_SHOWN else e[:ENTRY_SHOWN] + "…" for e in out["entry"]]
    return out


def shown_correctness(frame):
    """``correctness``'s rows as notebook 03 shows them: the largest error to 4 significant digits (bf16 resolves
    fewer), and yes / no for the checks; the saved CSV keeps every digit."""
    from ...report.tables import rounded

    out = rounded(frame, ())
    out["max_abs_err"] = [f"{v:.4g}" if v == v and v is not None else "none (non-finite)" for v in frame["max_abs_err"]]
    return out


def recorded_spread(batch: int, kv_len: int, *, head_dim: int = 128, page_size: int = 64, heads_q: int = 32,
                    heads_kv: int = 8, kernel: str | None = None, device: str | None = None,
                    runs: Path | str = "data/runs"):
    """The plan's call in every decode report under ``runs`` on the GPU model ``device`` (``spread.call_spread``: where
    a number of this run stands among the same GPUs'), of the build ``kernel`` where it has ``MIN_FOR_GROUPS``
    recorded runs, else of every build (said in a printed line: other builds place the build as much as the machine);
    None, its reason printed in one line, where no recorded run has the call."""
    from ..._env import repo_path
    from ...errors import ArgumentError
    from .bench import heads_label
    from .recorded_calls import read_reports
    from .spread import MIN_FOR_GROUPS, call_spread

    try:
        found = read_reports([repo_path(runs)])
        shape = {"heads": heads_label(heads_q, heads_kv, page_size), "device": device,
                 "ask": "-p spread_at {batch},{kv_len}"}  # this notebook's parameter, not the CLI's --point
        on = f" on {device}" if device else ""
        if kernel is not None:
            try:
                own = call_spread(found, batch, kv_len, head_dim, kernel=kernel, **shape)
                if len(own.runs) >= MIN_FOR_GROUPS:
                    return own
                print(wrapped(f"only {counted(len(own.runs), 'recorded run')} of {kernel}{on} (a run is placed "
                              f"among {MIN_FOR_GROUPS} or more): the runs of every build are shown"))
            except ArgumentError:
                print(wrapped(f"no recorded run of {kernel}{on}: the runs of every build are shown"))
        return call_spread(found, batch, kv_len, head_dim, **shape)
    except ArgumentError as exc:
        print(wrapped(f"no recorded run to place this call among: {exc}"))
        return None


def table_kernel(table, batch: int, kv_len: int) -> str | None:
    """The bandwidth table's build label for ``batch`` x ``kv_len``, None where the sweep did not time that call."""
    row = table[(table["batch"] == batch) & (table["kv_len"] == kv_len)] if len(table) else table
    return None if row.empty else str(row["kernel"].iloc[0])


def spread_kernel(table, batch: int, kv_len: int, **geometry) -> str:
    """The build whose recorded runs the spread of ``batch`` x ``kv_len`` places this run among: the one the bandwidth
    sweep ran there, else the one the plan picks for that call (on an H200; ``geometry``: ``geometry_for``'s), so
    that a sweep that leaves the call out (``-p batch 8``) does not pool every build's runs."""
    from .labels import plan_label
    from .run import geometry_for

    return table_kernel(table, batch, kv_len) or plan_label(plan_call(geometry_for(batch, kv_len, **geometry)))


def table_rate(table, batch: int, kv_len: int, *, beside_peers: bool = False) -> float | None:
    """The bandwidth table's labkit TB/s of ``batch`` x ``kv_len`` timed alone (``beside_peers``: in the peers'
    rounds), None where the sweep did not time that call (or no peers beside it)."""
    row = table[(table["batch"] == batch) & (table["kv_len"] == kv_len)] if len(table) else table
    column = "labkit_beside_peers" if beside_peers else "TBps"
    if row.empty or column not in row or row[column].isna().iloc[0]:
        return None
    return float(row[column].iloc[0])


def this_run_among(spread, table, batch: int, kv_len: int) -> str:
    """Where the bandwidth table's rate of ``batch`` x ``kv_len`` stands in ``spread`` (``CallSpread.place``), or why
    there is none: the sweep did not time that call."""
    rate = table_rate(table, batch, kv_len)
    if rate is None:
        return f"batch {batch} x {kv_len} is not in this notebook's bandwidth sweep (its batch and kv_lens)"
    return spread.place(rate)
