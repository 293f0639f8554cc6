"""Plain-text tables of reports for the terminal (``labkit report show/diff``)."""

import math

from .._text import duration
from .model import KNOWN_PHASES, PHASE_GROUPS, Sage2Report


def fmt_table(header: list[str], rows: list[list[str]], *, left: tuple[int, ...] = (0,), rule: bool = True) -> str:
    """Columns as wide as their widest cell: numbers flush right, the columns ``left`` (text) flush left; ``rule``:
    a line of dashes under the header."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    line = lambda cells: "  ".join(c.ljust(w) if i in left else c.rjust(w)  # noqa: E731
                                   for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return "\n".join([line(header), *([line(["-" * w for w in widths])] if rule else []), *(line(r) for r in rows)])


def ms(seconds: float) -> str:
    """A phase's time in ms: to the us, and under 0.1 ms to three significant digits (a 4 us phase had read 0.004)."""
    value = seconds * 1e3
    return f"{value:.3f}" if abs(value) >= 0.1 or value == 0 else f"{value:.3g}"


def _share(part: float, total: float) -> str:
    """``part`` of ``total`` in percent, to 0.1 %, and under it to two significant digits (not 0.0%)."""
    if total <= 0:  # every p50 zero: no shares
        return "-"
    pct = 100 * part / total
    return f"{pct:.1f}%" if pct >= 0.1 or pct == 0 else f"{pct:.2g}%"


def phase_table(r: Sage2Report) -> str:
    """phase, count, p50 ms, p90 ms, share of the total (members of a group are indented;
    the total is the sum of top-level phases' p50)."""
    top = r.top_level_phases()
    total = sum(r.phase_timings[p].p50_s for p in top)
    rows = []
    for name, st in r.phase_timings.items():
        label = name if name in top else f"  {name}"
        rows.append([label, str(st.count), ms(st.p50_s), ms(st.p90_s), _share(st.p50_s, total)])
    rows.append(["total (top-level p50)", "", ms(total), "", _share(total, total)])
    return "\n".join([fmt_table(["phase", "count", "p50 ms", "p90 ms", "share"], rows), *phase_notes(r)])


def phase_notes(r: Sage2Report) -> list[str]:
    """What in a report's phases does not add up, one line each: a member timed longer than the group timed around
    it, and a phase that is not one of Sage2's (counted in the total as a top-level phase). Shown, not refused: the
    report is still the user's measurement."""
    notes = []
    for group, members in PHASE_GROUPS.items():
        for member in (m for m in members if group in r.phase_timings and m in r.phase_timings):
            inner, outer = r.phase_timings[member].p50_s, r.phase_timings[group].p50_s
            if inner > outer:
                notes.append(f"note: {member} ({ms(inner)} ms) is longer than {group} ({ms(outer)} ms), the region "
                             "timed around it: one of the two was not timed as the seed times them")
    unknown = [p for p in r.phase_timings if p not in KNOWN_PHASES]
    if unknown:
        notes.append(f"note: {', '.join(unknown)}: not {'a phase' if len(unknown) == 1 else 'phases'} of Sage2's "
                     f"pipeline as the seed names them ({', '.join(KNOWN_PHASES)}); counted in the total as top-level")
    return notes


def _layout(r: Sage2Report) -> str:
    return str(r.metadata.get("layout", "NHD"))


def _bnhd(shape: tuple[int, ...], layout: str) -> tuple[int, int, int, int]:
    b, x, y, d = shape
    return (b, y, x, d) if layout == "HND" else (b, x, y, d)  # as the reader takes it: HND or else NHD


def _field(doc, *keys):
    """``doc[k1][k2]...`` or None where a level is missing or not an object (provenance is free-form)."""
    for k in keys:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(k)
    return doc


def _traits(r: Sage2Report) -> dict[str, str]:
    """What must match for two reports' times to be comparable, as text ('not recorded' if absent)."""
    sched = r.scheduler
    clocks = _field(r.provenance, "clocks", "sm_clock_hz")
    mainloop = _field(r.metadata, "schedule", "mainloop") or "seed"  # reports before the sm90 build ran the seed's
    return {
        "shape": f"q {list(r.q_shape)} k {list(r.k_shape)} v {list(r.v_shape)}",
        "dtype": str(r.metadata.get("dtype", "not recorded")),
        "layout": str(r.metadata.get("layout", "not recorded")),
        **provenance_traits(r.provenance),
        "schedule": (f"{mainloop} mainloop, cta {sched.cta_q}x{sched.cta_k}, "
                     f"warp_q {sched.warp_q}, {sched.explicit_pipeline_stages} stages, "
                     f"pv_terms {_field(r.metadata, 'schedule', 'pv_terms') or 1}"),
        # one NVML reading taken with the provenance, before the run: the idle boost clock, not the clock it ran at
        "clocks": (f"SM {clocks / 1e6:.0f} MHz before the run" if isinstance(clocks, (int, float)) and clocks > 0
                   else "not recorded"),
    }


def provenance_traits(provenance) -> dict[str, str]:
    """The device's name, the GPU's uuid (machines of one kind differ by a few %) and the git sha of a run's
    provenance, as text ('not recorded' where absent): what two reports' times must share to compare as code."""
    name, uuid, sha = (_field(provenance, *keys) for keys in (("device", "name"), ("device", "uuid"), ("git_sha",)))
    return {"device": str(name) if name else "not recorded", "gpu": str(uuid)[:12] if uuid else "not recorded",
            "git": str(sha)[:12] if sha else "not recorded"}


def where(traits: dict[str, str]) -> str:
    """The device, GPU, clocks and git sha of a report's traits in a few words:
    ``NVIDIA H200 (GPU-5b587789), SM 1980 MHz, git 9dc6c8f726c9``."""
    device = ("device not recorded" if traits["device"] == "not recorded"
              else traits["device"] + (f" ({traits['gpu']})" if traits["gpu"] != "not recorded" else ""))
    clocks = "clocks not recorded" if traits["clocks"] == "not recorded" else traits["clocks"]
    return f"{device}, {clocks}, git {traits['git']}"


def summary(r: Sage2Report) -> str:
    """What the report is a run of, in two lines: the shapes and iterations; where and how it ran."""
    t = _traits(r)
    kind = (f"{t['dtype']} {t['layout']}" if "not recorded" not in (t["dtype"], t["layout"])
            else f"dtype {t['dtype']}, layout {t['layout']}")
    return (f"{t['shape']}, {kind}, {r.iterations} iterations, report_version {r.report_version}\n"
            f"{where(t)}; {t['schedule']}")


NOT_RECORDED = "not recorded"


def differences(a: Sage2Report, b: Sage2Report) -> list[str]:
    """One line per trait in which A and B differ, both recording it (shape, dtype, layout, device, GPU, git,
    schedule). The clock read before each run is not one: it says nothing of the clock either ran at (the README's
    mainloop ran at 1665-1860 MHz under the power cap where that reading said 1980)."""
    return _differing(_traits(a), _traits(b), skip=("clocks",))


def _differing(ta: dict[str, str], tb: dict[str, str], skip: tuple[str, ...]) -> list[str]:
    return [f"{k}: A {ta[k]} | B {tb[k]}" for k in ta
            if k not in skip and ta[k] != tb[k] and NOT_RECORDED not in (ta[k], tb[k])]


def _join(names: list[str]) -> str:
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)


def traits_head(ta: dict[str, str], tb: dict[str, str], *, skip: tuple[str, ...] = ()) -> list[str]:
    """How two runs' traits compare, in lines: where both record a trait and differ; else what they match in and
    what neither records; then what one of them alone records. A trait only one records is not a difference: the
    user's seed report, which records no dtype, had read "differ in: dtype: A not recorded | B bf16" beside labkit's
    (its README says bf16)."""
    names = {k: {"gpu": "GPU uuid", "copy": "copy rate"}.get(k, k) for k in ta if k not in skip}  # beside "device"
    both = [k for k in names if NOT_RECORDED not in (ta[k], tb[k])]
    if differ := [f"  {d}" for d in _differing(ta, tb, skip)]:
        lines = ["A and B differ in:", *differ]
    else:
        neither = [names[k] for k in names if ta[k] == tb[k] == NOT_RECORDED]
        lines = [f"A and B match in {_join([names[k] for k in both]) or 'nothing both record'}"
                 + (f"; neither records its {_join(neither)}" if neither else "")]
    for side, mine, other in (("A", ta, tb), ("B", tb, ta)):
        alone = [f"{names[k]} {mine[k]}" for k in names if other[k] == NOT_RECORDED != mine[k]]
        if alone:
            lines.append(f"{side} alone records {', '.join(alone)}")
    return lines


NO_INPUT_WORK = ("v_scale_fp8_quantization",)  # the seed's phase that only writes V's scales


def phase_work(r: Sage2Report) -> dict[str, tuple[float, str]]:
    """Work per call of each phase: (amount, unit per second). Mainloop: 4 B H Nq Nkv D operations
    (TOPS); the others: bytes of the 16-bit tensor they read (GB/s); a group: what its members read (Q and K for
    qk_int8_quantization)."""
    b, nq, hq, d = _bnhd(r.q_shape, _layout(r))
    _, nkv, hkv, _ = _bnhd(r.k_shape, _layout(r))
    q_bytes, kv_bytes = 2 * b * nq * hq * d, 2 * b * nkv * hkv * d

    def work(name: str) -> tuple[float, str]:
        if name == "fused_mainloop":
            return 4 * b * hq * nq * nkv * d / 1e12, "TOPS"
        if name in NO_INPUT_WORK:  # no 16-bit tensor read to divide by its time (it came out at ~30x HBM's rate)
            return math.nan, "-"
        if name in PHASE_GROUPS:
            return sum(w for m in PHASE_GROUPS[name] if (w := work(m)[0]) == w), "GB/s"
        return (q_bytes if name.startswith("q") else kv_bytes) / 1e9, "GB/s"

    return {name: work(name) for name in r.phase_timings}


# labkit's Sage2 moves work between the seed's phases (plan.py): its V transpose quantizes V to e4m3 as it goes and its
# K-mean pass also takes V's per-channel max, so its v_scale_fp8_quantization only writes the scales; beside a report
# of another implementation these phases' ratios are the move's, not speed (a review read "0.001x" as one)
MOVED_WORK = ("k_mean_and_smoothing_preparation", "v_transpose_pad_permute", "v_scale_fp8_quantization")
MOVED_NOTE = ("* work moved between these phases: labkit's V transpose also quantizes V to e4m3 and its K-mean pass "
              "also takes V's per-channel max, so only v_fp8_transpose_scale_quantization as a whole compares")


def _made_by_labkit(r: Sage2Report) -> bool:
    return bool(_field(r.provenance, "git_sha"))  # the seed's report, and any other tool's, records no labkit commit


def work_moved(reports) -> bool:
    """Whether ``reports`` mix labkit's and another implementation's, so that the ``MOVED_WORK`` phases compare only
    as a whole (their tables star them; so does ``plot.phase_dots``)."""
    return len({_made_by_labkit(r) for r in reports}) > 1


def diff_table(a: Sage2Report, b: Sage2Report) -> str:
    """Differences between the two runs first; then per-phase p50 of A and B and the ratio B/A, or,
    when the shapes differ, work-normalized throughput (raw time ratios would mean nothing). Between labkit's report
    and another implementation's, the phases labkit splits differently (``MOVED_WORK``) are starred."""
    moved = work_moved((a, b))
    star = lambda name, ratio: f"{ratio}*" if moved and name in MOVED_WORK and ratio != "-" else ratio  # noqa: E731
    foot = [MOVED_NOTE] if moved and any(n in MOVED_WORK for n in (*a.phase_timings, *b.phase_timings)) else []
    head = traits_head(_traits(a), _traits(b), skip=("clocks",))
    same_shape = (a.q_shape, a.k_shape, a.v_shape) == (b.q_shape, b.k_shape, b.v_shape)
    rows = []
    top = set(a.top_level_phases())
    shown = lambda name: name if name in top else f"  {name}"  # noqa: E731 - members of a group indented, as in show
    if same_shape:
        for name, sa in a.phase_timings.items():
            sb = b.phase_timings.get(name)
            ratio = "-" if sb is None or sa.p50_s == 0 else f"{sb.p50_s / sa.p50_s:.3f}x"
            rows.append([shown(name), ms(sa.p50_s), "-" if sb is None else ms(sb.p50_s),
                         star(name, ratio) if sb is not None else "only in A"])
        rows += [[name, "-", ms(sb.p50_s), "only in B"]
                 for name, sb in b.phase_timings.items() if name not in a.phase_timings]
        ta, tb = (sum(r.phase_timings[p].p50_s for p in r.top_level_phases()) for r in (a, b))
        rows.append(["total (top-level p50)", ms(ta), ms(tb), f"{tb / ta:.3f}x" if ta else "-"])
        return "\n".join([*head, "B/A: B's time over A's (under 1: B is faster)",
                          fmt_table(["phase", "A p50 ms", "B p50 ms", "B/A"], rows), *foot])
    wa, wb = phase_work(a), phase_work(b)
    rate = lambda w, st: None if st is None or st.p50_s == 0 or w[0] != w[0] else w[0] / st.p50_s  # noqa: E731
    shown_rate = lambda v: "-" if v is None else f"{v:.4g}"  # 4 significant digits: 0.035 TOPS is not 0.0  # noqa: E731
    for name, sa in a.phase_timings.items():
        sb = b.phase_timings.get(name)
        ra, rb = rate(wa[name], sa), rate(wb.get(name, (0, "")), sb)
        r = rb / ra if ra and rb is not None else None  # from the unrounded rates
        ratio = "-" if r is None else f"{r:.3f}x" if r >= 0.001 else f"{r:.3g}x"
        rows.append([shown(name), wa[name][1], shown_rate(ra), shown_rate(rb),
                     star(name, ratio) if sb is not None else "only in A"])
    rows += [[name, wb[name][1], "-", shown_rate(rate(wb[name], sb)), "only in B"]
             for name, sb in b.phase_timings.items() if name not in a.phase_timings]
    note = ("shapes differ: raw times are not comparable, so this compares work-normalized throughput "
            "(mainloop: 4 B H Nq Nkv D ops per second; other phases: their 16-bit input bytes per second)")
    return "\n".join([*head, note, "B/A: B's rate over A's (over 1: B is faster)",
                      fmt_table(["phase", "unit", "A", "B", "B/A"], rows), *foot])


def tail_table(r: Sage2Report):
    """The tail study as a DataFrame in ms, with the tile efficiency along each swept length:
    q rows / scheduled q rows, and kv tokens / (k iterations x cta_k); and each point against its sweep's full shape
    (q and kv both the shape's N; NaN where a sweep has none): ``vs_full_pct``, its p50's difference, and
    ``beyond_noise``, whether the two points' min..max ranges are apart (a tail point slower than the full shape
    beyond noise is not what the tile model says)."""
    df = r.tail_frame()
    for col in [c for c in df.columns if c.startswith("mainloop_") and c.endswith("_s")]:
        df[col[:-2] + "_ms"] = df.pop(col) * 1e3
    df["kv_tile_efficiency"] = df["kv_len"] / (df["k_iterations_per_cta"] * r.scheduler.cta_k)
    df["vs_full_pct"], df["beyond_noise"] = math.nan, False
    n_q, n_kv = _bnhd(r.q_shape, _layout(r))[1], _bnhd(r.k_shape, _layout(r))[1]
    for _, part in df.groupby("sweep", sort=False):
        full = part[(part["q_len"] == n_q) & (part["kv_len"] == n_kv)]
        if full.empty:  # a sweep without the full shape (tails given without N): nothing to compare with
            continue
        f = full.iloc[0]
        df.loc[part.index, "vs_full_pct"] = 100 * (part["mainloop_p50_ms"] / f["mainloop_p50_ms"] - 1)
        df.loc[part.index, "beyond_noise"] = ((part["mainloop_min_ms"] > f["mainloop_max_ms"])
                                              | (part["mainloop_max_ms"] < f["mainloop_min_ms"]))
    return df


SHOWN_TAIL_COLUMNS = ("sweep", "q_len", "kv_len", "q_ctas_per_head", "k_iterations_per_cta", "q_row_efficiency",
                      "kv_tile_efficiency", "mainloop_p50_ms", "mainloop_min_ms", "mainloop_max_ms", "vs_full_pct",
                      "beyond_noise")


def shown_tails(tails):
    """``tail_table`` as a notebook shows it: each point's tiles, its efficiency along q and kv, the mainloop's p50 and
    min..max and how it stands against its sweep's full shape, numbers rounded to what they resolve (ms to the us,
    efficiencies to 1e-4, percent to 0.01); the saved CSV keeps every column. All 21 columns (counts, mean, p90-p99,
    rows scheduled, checksums) had run over two widths of JupyterLab's pane in notebook 00."""
    return rounded(tails[list(SHOWN_TAIL_COLUMNS)], (("_ms", 3), ("_efficiency", 4), ("_pct", 2)))


def rounded(frame, rules, *, default: int | None = None):
    """A copy of ``frame`` for a notebook to show, its float columns rounded to what they resolve: to the digits of the
    first ``(suffix, digits)`` rule whose suffix ends the column's name, else to ``default`` (None: as they are); a
    column of whole numbers becomes text with those digits, and a column of True / False reads yes / no. The tables the
    notebooks show use it; the files they save keep every digit and the booleans."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype.kind == "b":
            out[col] = out[col].map({True: "yes", False: "no"})
        if out[col].dtype.kind != "f":
            continue
        digits = next((d for suffix, d in rules if str(col).endswith(suffix)), default)
        if digits is not None:
            out[col] = out[col].round(digits) + 0.0  # + 0.0: a -0.0 left by rounding shows as 0.00, not -0.00
            if digits > 0 and (out[col].dropna() % 1 == 0).all():  # pandas shows a column of whole numbers as 1.0,
                out[col] = [f"{v:.{digits}f}" if v == v else "NaN" for v in out[col]]  # beside 0.9697: 1.0000
    return out


def build_label(r: Sage2Report) -> str:
    """The mainloop build a labkit report ran, for titles and prose: ``sm90 mainloop 192x128``, ``seed mainloop
    128x64`` (``, pv_terms 2`` where two); "" for a report that records no schedule (the user's seed report)."""
    if _field(r.metadata, "schedule") is None:
        return ""
    pv_terms = _field(r.metadata, "schedule", "pv_terms") or 1
    return (f"{_field(r.metadata, 'schedule', 'mainloop') or 'seed'} mainloop {r.scheduler.cta_q}x{r.scheduler.cta_k}"
            + (f", pv_terms {pv_terms}" if pv_terms != 1 else ""))


def tail_note(r: Sage2Report) -> str:
    """What the tail study shows, in words from its own numbers (found by a notebook review: fixed sentences had named
    the seed build's points under an sm90 run, and called run-to-run drift larger than "the tail effect" above a
    point flagged beyond noise): the full shape's mainloop p50 wherever it was timed (the phase timing, each sweep)
    against the largest tail point's difference from its own sweep's full shape; then, named by the build, how many
    tail points lie beyond noise there, and for each its tiles (q CTAs x k iterations) against the full shape's and
    whether the tile model explains it."""
    df = tail_table(r)
    n_q, n_kv = _bnhd(r.q_shape, _layout(r))[1], _bnhd(r.k_shape, _layout(r))[1]
    is_full = (df["q_len"] == n_q) & (df["kv_len"] == n_kv)
    tails = df[~is_full & df["vs_full_pct"].notna()]
    if tails.empty:
        return "No tail point has its sweep's full shape beside it to compare with."
    # each in its own unit: a small shape's 0.043 ms had read "0.0" (a live notebook on an H100)
    same = [(f"{duration(df.at[i, 'mainloop_p50_ms'] * 1e6)} ({df.at[i, 'sweep']})", df.at[i, "mainloop_p50_ms"])
            for i in df.index[is_full]]
    if "fused_mainloop" in r.phase_timings:
        same.insert(0, (f"{duration(r.phase_timings['fused_mainloop'].p50_s * 1e9)} (phase timing)",
                        r.phase_timings["fused_mainloop"].p50_s * 1e3))
    largest = tails["vs_full_pct"].abs().max()
    out = []
    if len(same) >= 2:
        values = [v for _, v in same]
        drift = 100 * (max(values) / min(values) - 1)
        times = ", ".join(t for t, _ in same[:-1]) + f" and {same[-1][0]}"
        # against the largest difference: "no larger than any" had been said of a drift larger than some of them
        out.append(f"The full shape (q {n_q}, kv {n_kv}), timed {len(same)} times: {times}, {drift:.2f} % apart: "
                   + (f"run-to-run drift larger than any tail point's difference from its own sweep's full shape (at "
                      f"most {largest:.2f} %), so tail points compare within their sweep only." if drift > largest else
                      f"run-to-run drift no larger than the largest tail point's difference from its own sweep's full "
                      f"shape ({largest:.2f} %)."))
    beyond = tails[tails["beyond_noise"]]
    out.append(f"{build_label(r) or 'This report'}: within its sweep, {len(beyond)} of {len(tails)} tail points "
               f"{'lies' if len(beyond) == 1 else 'lie'} beyond noise (min..max apart from the full shape's)"
               + (":" if len(beyond) else "."))
    for _, p in beyond.iterrows():
        full = df[is_full & (df["sweep"] == p["sweep"])].iloc[0]
        full_tiles = int(full["q_ctas_per_head"] * full["k_iterations_per_cta"])
        tiles = int(p["q_ctas_per_head"] * p["k_iterations_per_cta"])
        along = "q" if p["sweep"].startswith("q") else "kv"  # q_tail_fixed_kv, kv_tail_fixed_q
        more = "fewer" if tiles < full_tiles else "as many" if tiles == full_tiles else "more"
        slower = p["vs_full_pct"] > 0
        explained = (not slower and more == "fewer") or (slower and more == "more")
        out.append(f"  {p['sweep']} {int(p[f'{along}_len'])}: {p['vs_full_pct']:+.2f} % against {along} "
                   f"{n_q if along == 'q' else n_kv}, with {more} tiles ({tiles} vs {full_tiles} per head): "
                   f"{'as the tile model says' if explained else 'the tile model does not explain it'}")
    return "\n".join(out)


def label(r: Sage2Report) -> str:
    """The workload in a few words for titles: ``q=k=v [1, 37810, 56, 128] bf16 NHD``, and the mainloop build where
    the report records it (``, sm90 mainloop 192x128``): two builds' figures differ only by their numbers else."""
    shapes = (f"q=k=v {list(r.q_shape)}" if r.q_shape == r.k_shape == r.v_shape
              else f"q {list(r.q_shape)} k {list(r.k_shape)} v {list(r.v_shape)}")
    extra = " ".join(str(r.metadata[k]) for k in ("dtype", "layout") if k in r.metadata)
    build = build_label(r)
    return f"{shapes} {extra}".strip() + (f", {build}" if build else "")


def board_label(provenance: dict) -> str:
    """``board 692-2G520-0282-001, VBIOS 96.00.A5.00.1A`` from a run's provenance, what of it was recorded (the board
    matched the streaming state on every H200 read so far); '' for neither."""
    device = provenance.get("device") or {}
    parts = [f"board {device['board_part_number']}" if device.get("board_part_number") else "",
             f"VBIOS {device['vbios_version']}" if device.get("vbios_version") else ""]
    return ", ".join(x for x in parts if x)
