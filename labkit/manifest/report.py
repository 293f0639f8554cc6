"""Text rendering of a CheckResult: validation report, then the launch plan."""

from pathlib import Path

from .._json import show_path
from .._text import counted
from ..timing import Timing
from .pack import FIELD_COLUMNS
from .validate import CheckResult


def _table(header, rows) -> list[str]:
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    fmt = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return [fmt(header), fmt(["-" * w for w in widths]), *(fmt(r) for r in rows)]


def render_check(res: CheckResult, device=None, gpu_reason: str = "", *, param_block: bool = True) -> str:
    """``manifest check``'s text: modules, vars, issues, then per call its grid, scratch, tensor maps and parameter
    block (``param_block=False``: its size only, where a table beside it shows the block, as in notebook 01)."""
    m = res.manifest
    out = [f"manifest {m.source} (schema_version {m.schema_version}, model {m.model}), program {res.program}"]
    out.append(f"device: {device.name} ({device.arch})" if device else
               f"device: none ({gpu_reason}); device limits and architecture not checked")
    for name, lm in res.modules.items():
        # the folder alone where the file is the one the manifest names: kernel names (and so cubin names) run to 100
        # characters and more, and the line had held the module's name three times
        where = lm.path.parent if lm.path.name == Path(m.modules[name].source).name else lm.path
        out.append(f"module {name}: in {show_path(where)}, sha256 ok, target {lm.info.target}")
        out += [f"  kernel {e.name} ({e.param_bytes} B params, {e.static_smem_bytes} B static smem"
                + (f" + the {e.reserved_smem_bytes} B system reserve in .nv.shared)" if e.reserved_smem_bytes else ")")
                for e in lm.info.entries.values()]
    out.append("vars: " + ", ".join(f"{k}={v} (max {m.vars[k].max})" for k, v in res.vars.items()))
    counts = {s: sum(i.severity == s for i in res.issues) for s in ("error", "warning", "note")}
    out.append(f"issues: {counts['error']} error(s), {counts['warning']} warning(s), {counts['note']} note(s)")
    out += [f"  {i}" for i in sorted(res.issues, key=lambda i: ("error", "warning", "note").index(i.severity))]
    for plan in res.plans:
        op = m.ops[plan.op]
        out.append("")
        out.append(f"call {plan.call!r}: op {plan.op}, launch {plan.launch_index}: {plan.entry}")
        launch = op.launches[plan.launch_index]
        named = [f"{g}={v}" for g, v in zip(launch.grid, plan.grid) if isinstance(g, str)]
        out.append(f"  grid {list(plan.grid)}{' (' + ', '.join(named) + ')' if named else ''} = "
                   f"{plan.grid[0] * plan.grid[1] * plan.grid[2]} CTAs, block {list(plan.block)}, shared memory "
                   f"{plan.shared_mem} B dynamic + {'?' if plan.static_smem is None else plan.static_smem} B static")
        for s in op.scratch.values():
            out.append(f"  scratch {s.name}: {s.dtype}{list(s.shape)} = {s.nbytes} B, zeroed before every launch")
        for fi, dims in plan.tensormap_dims.items():
            f = launch.args[0].fields[fi]
            out.append(f"  tensormap at {f.at}: dims {list(dims)} (inner first), strides {list(f.strides)} B, "
                       f"box {list(f.box)}, swizzle {f.swizzle} B, {f.dtype}")
        written = sum(r.size for r in plan.rows)
        if not param_block:
            out.append(f"  parameter block: {plan.pack_size} B, {written} B written, {plan.pack_size - written} B zero")
            continue
        out.append(f"  parameter block ({plan.pack_size} B):")
        out += ["    " + line for line in _table(FIELD_COLUMNS, [r.cells() for r in plan.rows])]
        out.append(f"    {written} B written, {plan.pack_size - written} B zero")
    out.append("")
    unchecked = "" if device else "; not checked against a GPU (its architecture and limits may still refuse it)"
    which = f", program {res.program}" if len(m.programs) > 1 else ""  # a file of several: the others' come after
    allowed = f" ({counted(counts['warning'], 'warning')} allowed)" if counts["warning"] else ""  # none: none said
    out.append(f"verdict{which}: " + (f"can run{allowed}{unchecked}" if res.ok
                              else f"CANNOT run: {counts['error']} error(s)"))
    return "\n".join(out)


def render_other_programs(others: dict[str, CheckResult], first: CheckResult) -> str:
    """The manifest's other programs, checked beside the first (``manifest check`` without ``--program``): each one's
    verdict and the issues the first's report did not already list (an op's are the same for every program)."""
    seen = {str(i) for i in first.issues}
    out = [f"other programs, checked too (--program NAME shows one whole; run runs {first.program!r} unless given "
           "one):"]
    for name, res in others.items():
        new = [i for i in res.issues if str(i) not in seen]
        counts = ", ".join(f"{sum(i.severity == s for i in new)} {s}(s)" for s in ("error", "warning", "note"))
        out.append(f"  program {name}: {'can run' if res.ok else 'CANNOT run'}; {counts} beyond program "
                   f"{first.program}'s")
        out += [f"    {i}" for i in sorted(new, key=lambda i: ("error", "warning", "note").index(i.severity))]
    cannot = [name for name, res in {first.program: first, **others}.items() if not res.ok]
    out.append("")  # the first program's verdict is above: this one, last, covers the file
    out.append(f"verdict, all {len(others) + 1} programs: " + (f"CANNOT run {', '.join(cannot)}" if cannot else
                                                               "each can run"))
    return "\n".join(out)


def render_timings(timings: dict[str, Timing]) -> str:
    rows = [[k, t.stats.count, f"{t.stats.p50_s * 1e6:.2f}", f"{t.stats.p90_s * 1e6:.2f}", f"{t.stats.min_s * 1e6:.2f}",
             f"{t.stats.max_s * 1e6:.2f}", t.mode, t.stop_reason] for k, t in timings.items()]
    return "\n".join(_table(["call", "count", "p50 us", "p90 us", "min us", "max us", "mode", "stop"], rows))
