"""What an existing file at an output's path is, and whether the command may replace it: only a file of the kind it
writes (a report over an older report of its kind, a figure over a figure labkit drew), or an empty one. A user's
file that happens to sit there (a package.json, a notebook, a NumPy array, a training log) is never replaced.

``writes`` names the output's kind:
  ``json:<kind>``   a JSON output: one of labkit's documents (``_json.document_kind``) or outputs (``OUTPUTS``) whose
                    name starts with ``<kind>``;
  ``binary[:N]``    a parameter block (``manifest pack``): not text, none of the formats below, N bytes where given;
  ``figure``        ``plot.save``'s PNG (its Software text says labkit or Matplotlib) or SVG (Matplotlib's);
  ``ncu log``       the log ``ncu --log-file`` writes (its ``==PROF==`` lines);
  ``cubin``         an ELF file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

MAGIC = ((b"\x7fELF", "an ELF file (a cubin or a program)"), (b"\x89PNG", "a PNG image"),
         (b"PK\x03\x04", "a zip archive (.npz, .whl)"), (b"\x1f\x8b", "a gzip file"),
         (b"\x93NUMPY", "a NumPy array (.npy)"), (b"\x89HDF\r\n\x1a\n", "an HDF5 file"),
         (b"SQLite format 3\0", "an SQLite database"), (b"%PDF", "a PDF document"))
LARGEST_JSON_OUTPUT = 256 << 20
PNG_SOFTWARE = "labkit"  # the tEXt Software of plot.save's PNGs: what marks one as a figure labkit may redraw


def _records(v, keys: set[str]) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(r, dict) and keys <= r.keys() for r in v)


# labkit's JSON outputs that are no document of their own (no version key): each told apart by its shape
OUTPUTS = (
    ("a Chrome trace (labkit sched timeline --trace)", lambda v: isinstance(v, dict) and "traceEvents" in v),
    ("Sage2 bench results (labkit bench --out)",
     lambda v: isinstance(v, dict) and {"shape", "layout", "copy_GBps", "phases"} <= v.keys()),
    ("a manifest run's timings (labkit manifest run --json)",
     lambda v: isinstance(v, dict) and bool(v) and all(isinstance(t, dict) and {"samples_s", "stats"} <= t.keys()
                                                      for t in v.values())),
    ("instrumented launches (labkit sched launches --out)",
     lambda v: _records(v, {"shape", "ctas", "model_waves", "slot_efficiency"})),
    ("a timeline overhead (labkit sched overhead --out)",
     lambda v: isinstance(v, dict) and {"shape", "plain_p50_ms", "timeline_p50_ms", "overhead"} <= v.keys()),
    ("Sage2 precision points (labkit sage2 precision --out)",
     lambda v: _records(v, {"pv_terms", "cta_q", "cta_k", "rel_l1", "mainloop"})),
)


def json_kind(value) -> str | None:
    """Which of labkit's documents or outputs ``value`` is, in words, or None."""
    from ._json import document_kind

    return document_kind(value) or next((kind for kind, holds in OUTPUTS if holds(value)), None)


def other_kind(p: Path, writes: str) -> str | None:
    """What the existing file ``p`` is, in words, where it is not what a command that ``writes`` would write there
    or is a recorded run's; None where the command may replace it."""
    other = _kind_unless_own(p, writes)
    return other if other is not None else _recorded_run(p)


def _kind_unless_own(p: Path, writes: str) -> str | None:
    with open(p, "rb") as f:
        head = f.read(1 << 16)
    if not head:
        return None  # an empty file holds nothing to lose
    form, _, detail = writes.partition(":")
    magic = next((what for sig, what in MAGIC if head.startswith(sig)), None)
    if form == "figure":
        return _other_figure(p, head, magic)
    if form == "cubin":
        return None if head.startswith(b"\x7fELF") else (magic or "not an ELF file (a cubin)")
    if magic or p.suffix in (".ncu-rep", ".nsys-rep"):
        return magic or f"a profiler report ({p.suffix})"
    if form == "ncu log":
        return None if re.search(rb"^==(PROF|ERROR|WARNING)==", head, re.M) else "not a log that ncu wrote"
    if form == "binary":
        if b"\0" not in head and _utf8(head):  # no NUL alone: 1000 random bytes had none 2 % of the time
            return "a text file, not a parameter block"
        size = p.stat().st_size
        return None if not detail or size == int(detail) else f"{size} bytes, not this {detail}-byte parameter block"
    size = p.stat().st_size
    if size > LARGEST_JSON_OUTPUT:  # read whole below: a multi-GB file is no output of labkit's
        return f"a file of {size / 2**20:.0f} MiB, not a JSON file labkit wrote"
    try:
        value = json.loads(p.read_bytes())
    except (ValueError, UnicodeDecodeError, RecursionError):
        return "not a JSON file"
    kind = json_kind(value)
    if kind is not None and kind.startswith(detail):
        # the user's seed report has no provenance: a reference, which `sage2 profile --out` would have replaced
        return "a Sage2 report labkit did not write (no provenance: a reference)" if (
            kind.startswith("a Sage2 report") and "provenance" not in value) else None
    return kind or f"a JSON file that is not {detail or 'one labkit wrote'}"


def _utf8(head: bytes) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _recorded_run(p: Path) -> str | None:
    """Where ``p`` is a file of a recorded run (``data/runs`` of this checkout), which is kept as it ran."""
    from ._env import data_dir

    runs = data_dir() / "runs"
    try:
        inside = p.resolve().is_relative_to(runs.resolve())
    except OSError:
        return None
    return f"a file of a recorded run ({runs.name}/ under {runs.parent}), kept as it ran" if inside else None


def _other_figure(p: Path, head: bytes, magic: str | None) -> str | None:
    if p.suffix.lower() == ".svg":
        return None if b"<dc:title>Matplotlib v" in head else (magic or "not an SVG that labkit drew")
    if magic != "a PNG image":
        return magic or "not a PNG image"
    software = re.search(rb"tEXtSoftware\0([^\0]{0,80})", head)
    drawn = software is not None and software.group(1).startswith((PNG_SOFTWARE.encode(), b"Matplotlib"))
    return None if drawn else "a PNG image that labkit did not draw"
