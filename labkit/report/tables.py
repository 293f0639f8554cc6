"""Plain-text tables of reports for the terminal (``labkit report show/diff``)."""

from .model import Sage2Report


def _fmt_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    line = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w)  # noqa: E731
                                   for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def phase_table(r: Sage2Report) -> str:
    """phase, count, p50 ms, p90 ms, share of the total (members of a group are indented;
    the total is the sum of top-level phases' p50)."""
    top = r.top_level_phases()
    total = sum(r.phase_timings[p].p50_s for p in top)
    rows = []
    for name, st in r.phase_timings.items():
        label = name if name in top else f"  {name}"
        share = f"{100 * st.p50_s / total:.1f}%" if total > 0 else "-"  # every p50 zero: no shares
        rows.append([label, str(st.count), f"{st.p50_s * 1e3:.3f}", f"{st.p90_s * 1e3:.3f}", share])
    rows.append(["total (top-level p50)", "", f"{total * 1e3:.3f}", "", "100.0%" if total > 0 else "-"])
    return _fmt_table(["phase", "count", "p50 ms", "p90 ms", "share"], rows)


def diff_table(a: Sage2Report, b: Sage2Report) -> str:
    """Per-phase p50 of A and B and the ratio B/A (phases present in both, in A's order)."""
    rows = []
    for name, sa in a.phase_timings.items():
        sb = b.phase_timings.get(name)
        if sb is None:
            rows.append([name, f"{sa.p50_s * 1e3:.3f}", "-", "only in A"])
            continue
        ratio = f"{sb.p50_s / sa.p50_s:.3f}x" if sa.p50_s > 0 else "-"  # A's p50 is 0: no ratio
        rows.append([name, f"{sa.p50_s * 1e3:.3f}", f"{sb.p50_s * 1e3:.3f}", ratio])
    rows += [[name, "-", f"{sb.p50_s * 1e3:.3f}", "only in B"]
             for name, sb in b.phase_timings.items() if name not in a.phase_timings]
    return _fmt_table(["phase", "A p50 ms", "B p50 ms", "B/A"], rows)
