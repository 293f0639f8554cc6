"""The recorded decode reports a spread reads (``read_reports``: files, or every one under a directory, each run once),
and which calls and builds they hold: what a spread names when the call asked for has no row (the builds that timed it,
or the recorded calls nearest to it)."""

import json
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..._json import read_bytes
from ..._text import counted
from ...errors import ArgumentError, FormatError
from .report import DecodeReport, is_decode_report, load
from .targets import shape_label


def builds_of(found, call: tuple) -> str:
    """The builds ``found`` (``(name, report)`` pairs) time ``call`` with, most runs first: ``mma w4s1c1 (41 runs),
    mma/1 (2 runs)``."""
    kernels = Counter(p.kernel for _, r in found for p in r.points
                      if (p.batch, p.kv_len, p.head_dim, p.heads, p.mode) == call)
    return ", ".join(f"{k} ({counted(n, 'run')})" for k, n in kernels.most_common())


def nearest_calls(found, call: tuple, count: int = 4, ask: str = "--point {batch}x{kv_len}") -> str:
    """The ``count`` recorded calls at ``call``'s head_dim, heads and mode nearest to its batch and kv_len (by the
    ratio of each, so 24 x 6000 is nearer 24 x 8k than 16 x 6k is to 64 x 6k), with their runs, and how to ask for the
    nearest (``ask``, the CLI's option or a notebook's parameter): ``24 x 8k (11 runs), 26 x 8k (2 runs) (--point
    24x8192 for the first)``; '' where none is at that geometry."""
    batch, kv_len, *same = call
    # a run per report that times the call (a report of two kernel variants holds it twice)
    runs = Counter(bn for _, r in found for bn in {(p.batch, p.kv_len) for p in r.points
                                                     if [p.head_dim, p.heads, p.mode] == same})
    near = sorted(runs, key=lambda bn: (math.log(bn[0] / batch) ** 2 + math.log(bn[1] / kv_len) ** 2, bn))[:count]
    if not near:
        return ""
    calls = ", ".join(f"{shape_label(b, n, same[0]).removesuffix(f' d{same[0]}')} ({counted(runs[b, n], 'run')})"
                      for b, n in near)
    return f"{calls} ({ask.format(batch=near[0][0], kv_len=near[0][1])} for the first)"


@dataclass(frozen=True)
class Reports:
    """Decode reports read once (``read_reports``), for several calls' spreads."""

    found: tuple[tuple[str, DecodeReport], ...]  # (name as given or under its directory, report)
    skipped: int  # other JSON files under the directories
    paths: tuple[Path, ...]  # each report's resolved path, in ``found``'s order
    copies: int = 0  # reports of a run already read (a copied file), left out: a run counts once
    damaged: tuple[str, ...] = ()  # "name: why" of each decode report under a directory that does not read, left out


def read_reports(paths: list[str | Path]) -> Reports:
    """Every decode report among ``paths``, each once (paths that overlap, such as a directory and a file under it,
    give a report once): a file must be one; a directory gives those under it (other JSON there, such as provenance
    files, is counted as skipped).

    A damaged decode report under a directory (one that does not read, or a file that is not JSON but names
    ``decode_report_version``) is left out and named in ``damaged``, so one bad file among data/runs' hundreds does
    not stop a spread; given by name, it is an error.

    Raises:
        ArgumentError: a path that does not exist, or a file that is a Sage2 report. FormatError: a file given that
            is neither kind, or a decode report given that does not read.
    """
    skipped, seen, damaged = 0, {}, []
    for given in paths:
        path = Path(given)
        if not path.exists():
            raise ArgumentError(f"{path}: does not exist (a decode report, or a directory of them)")
        if not path.is_dir():
            if not is_decode_report(path):  # a Sage2 report; anything else raised naming both kinds
                raise ArgumentError(f"{path}: a Sage2 report; spread reads decode reports (labkit decode bench "
                                    "--out FILE)")
            seen.setdefault(path.resolve(), (str(path), load(path)))
            continue
        for f in sorted(path.rglob("*.json")):
            name = str(f.relative_to(path))
            try:
                decode = is_decode_report(f)
                if decode and f.resolve() not in seen:
                    seen[f.resolve()] = (name, load(f))
            except FormatError as exc:  # not a report, unless a damaged one (read as every file is: a FIFO never
                try:  # waited on)
                    named = b"decode_report_version" in read_bytes(f, what="decode report")
                except FormatError:  # not a regular file, or too large to be a report
                    named = False
                if named:
                    damaged.append(f"{name}: {exc}".replace(f"{f}: ", "", 1))  # the path once
                    continue
                decode = False
            if not decode:
                skipped += 1
    runs, kept = set(), {}
    for where, (name, r) in seen.items():  # the first file of each report, in the order given
        run = json.dumps(r.to_dict(), sort_keys=True)  # a copied file holds the same report: the same run
        if run in runs:
            continue
        runs.add(run)
        kept[where] = (name, r)
    return Reports(tuple(kept.values()), skipped, tuple(kept), len(seen) - len(kept), tuple(damaged))


def left_out(damaged: tuple[str, ...], *, shown: int = 3) -> str:
    """``1 damaged decode report left out: a/sweep.json: ...``, the first ``shown`` named."""
    more = f"; {len(damaged) - shown} more" if len(damaged) > shown else ""
    return f"{counted(len(damaged), 'damaged decode report')} left out: " + "; ".join(damaged[:shown]) + more
