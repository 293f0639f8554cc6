"""Issue #10's speed targets for labkit's decode kernel, read off a decode report: the calls each covers, met or not.

The issue set them against its peers' figures, which were timed cold with the L2 left dirty by the flush
(docs/decode.md, "Persisting L2 lines, and which flush the issue's peers had"), so only ``cold`` rows count, and the
seed-sized call's target is its CUDA-graph replay. The issue's three absolute numbers (4.4 and 2.0 TB/s, 10 us)
were set on the H200, so they are judged only on a run whose GPU is one; on another GPU (an H100's HBM3 peaks at 3.35
TB/s) they are shown, not judged, and the two relative targets (the peers, the split heuristic) hold everywhere.
``labkit decode bench`` prints them under its table and ``labkit report show`` under a decode report's; the numbers
are the report's own, nothing is timed here.
"""

import re
from dataclasses import asdict, dataclass, replace

from ..._text import counted, length_label
from .peers import best_peer, beyond_noise, interval_label
from .report import DecodePoint, DecodeReport

LARGE_KV_MB = 2000.0  # "whenever >= 2 GB of KV is read": 64 x 8k d128 reads 2 GiB, 2147 MB
MIN_TBPS_LARGE = 4.4
MIN_TBPS_BATCH1_8K = 2.0  # batch 1, 8k tokens, 8 KV heads, head_dim 128
SEED_GRAPH_MAX_US = 10.0
SPLIT_SLACK = 0.05  # the split heuristic within 5 % of a sweep's best split count
SHOWN = 5  # calls named per missed target, the furthest first
TARGET_GPU = "H200"  # the absolute targets' GPU (``labkit.device.is_h200``)


@dataclass(frozen=True)
class TargetResult:
    """One target over one report: ``met`` is None where the report has no call the target covers."""

    target: str  # what the issue asks, in words
    met: bool | None  # None: no call it covers, or an absolute target on a GPU it was not set on
    calls: int  # the report's calls (or split sweeps) it covers
    missed: int
    detail: str  # the calls that missed, furthest first, or the covered range; or how to run what it covers

    @property
    def verdict(self) -> str:
        if self.met is None:
            return f"not judged (set on the {TARGET_GPU})" if self.calls else "not in this run"
        return "met" if self.met else "MISSED"

    def to_dict(self) -> dict:
        return {**asdict(self), "verdict": self.verdict}


def shape_label(batch: int, kv_len: int, head_dim: int, heads: str = "32/8") -> str:
    """``64 x 8k d128`` (heads named when not the sweep's 32/8: ``2 x 704 d256 24/4 seed``)."""
    return f"{batch} x {length_label(kv_len)} d{head_dim}" + ("" if heads == "32/8" else f" {heads}")


def call_label(p: DecodePoint) -> str:
    """``shape_label`` of a report's row."""
    return shape_label(p.batch, p.kv_len, p.head_dim, p.heads)


def _shown(v: float, bound: float, digits: int = 2) -> str:
    """``v`` to ``digits`` decimals, more where those would round a miss up to the bound (4.396 is not 4.40, 4.39996 not
    4.400)."""
    while v < bound <= round(v, digits) and digits < 12:
        digits += 1
    return f"{v:.{digits}f}"


def target_gpu(r: DecodeReport) -> str | None:
    """``r``'s GPU where it is not the one the absolute targets were set on (its name, or 'not recorded'); None on
    an H200."""
    from ...device import is_h200

    name = (r.provenance.get("device") or {}).get("name")
    return None if name and is_h200(name) else name or "not recorded"


def _result(target: str, covered: list, missed: list, shown, met_detail: str, absent: str,
            other_gpu: str | None = None) -> TargetResult:
    if not covered:
        return TargetResult(target, None, 0, 0, absent)
    if other_gpu is not None:  # an absolute target off the H200: what the calls ran, unjudged
        return TargetResult(target, None, len(covered), 0, met_detail)
    if not missed:
        return TargetResult(target, True, len(covered), 0, met_detail)
    if len(covered) == 1:
        return TargetResult(target, False, 1, 1, shown(missed[0]))
    listed = len(missed) if len(missed) <= SHOWN + 1 else SHOWN  # not ", and 1 more": the one takes as much room
    more = f", and {len(missed) - listed} more" if len(missed) > listed else ""
    return TargetResult(target, False, len(covered), len(missed),
                        f"at {len(missed)} of {len(covered)}: " + ", ".join(map(shown, missed[:listed])) + more)


def check_targets(r: DecodeReport) -> tuple[TargetResult, ...]:
    """The issue's five targets over ``r``'s rows and split sweeps, in the issue's order."""
    cold = [p for p in r.points if p.mode == "cold"]
    other_gpu = target_gpu(r)
    large = sorted((p for p in cold if p.kv_MB >= LARGE_KV_MB), key=lambda p: p.TBps)
    low = [p for p in large if p.TBps < MIN_TBPS_LARGE]
    out = [_result(f">= {MIN_TBPS_LARGE} TB/s whenever >= 2 GB of K/V is read", large, low,
                   lambda p: f"{call_label(p)} {_shown(p.TBps, MIN_TBPS_LARGE)}",
                   f"all {len(large)} at {large[0].TBps:.2f}-{large[-1].TBps:.2f} TB/s" if large else "",
                   "no cold call of 2 GB or more", other_gpu)]
    paired = sorted((p for p in cold if p.x_best_peer is not None), key=lambda p: p.x_best_peer)
    behind = [p for p in paired if p.x_best_peer < 1.0]

    def against(p: DecodePoint) -> str:
        best = best_peer(p.peers)
        rounds = "" if p.x_best_peer_low is None else f"; 95 % {interval_label(p.x_best_peer_low, p.x_best_peer_high)}"
        return (f"{call_label(p)} x {_shown(p.x_best_peer, 1.0, 3)}"
                + (f" ({best[0]} {best[1]:.2f}{rounds})" if best else ""))

    peers = _result("at no size below the best peer", paired, behind, against,
                    f"ahead or level at all {len(paired)}, the closest {against(paired[0])}" if paired else "",
                    "no cold call beside the peers (labkit decode bench --peers)")
    noise = beyond_noise([p.x_best_peer_high for p in behind])  # the verdict stays the strict one
    out.append(replace(peers, detail=f"{peers.detail}; {noise}") if noise else peers)
    one = [p for p in cold if (p.batch, p.kv_len, p.head_dim) == (1, 8192, 128) and re.fullmatch(r"\d+/8", p.heads)]
    out.append(_result(f">= {MIN_TBPS_BATCH1_8K} TB/s at batch 1 x 8k, 8 KV heads, d128", one,
                       sorted((p for p in one if p.TBps < MIN_TBPS_BATCH1_8K), key=lambda p: p.TBps),  # furthest first
                       lambda p: f"{_shown(p.TBps, MIN_TBPS_BATCH1_8K)} TB/s ({p.p50_us:.2f} us; "
                                 f"{p.kv_MB / MIN_TBPS_BATCH1_8K:.2f} us needed)",  # MB / (TB/s) = us
                       ", ".join(f"{p.TBps:.2f} TB/s ({p.p50_us:.2f} us)" for p in one),
                       "no cold call of 1 x 8k d128 with 8 KV heads", other_gpu))
    seed = [p for p in r.points if p.mode == "graph" and p.heads.endswith(" seed")]
    out.append(_result(f"the seed-sized call in a CUDA graph <= {SEED_GRAPH_MAX_US:g} us", seed,
                       sorted((p for p in seed if p.p50_us > SEED_GRAPH_MAX_US), key=lambda p: -p.p50_us),
                       lambda p: f"{p.p50_us:.2f} us",
                       ", ".join(f"{p.p50_us:.2f} us" for p in seed), "no graph-replayed seed-sized call", other_gpu))
    # exactly 5 % off is within 5 %: 21.0 / 20.0 - 1 is 0.05 and an ulp, hence the relative slack on the bound
    off = sorted(((heur.p50_us / min(q.p50_us for q in sweep) - 1, key) for key, sweep in r.split_sweeps.items()
                  if not key.endswith((" tails", " compare")) and all(q.mode == "cold" for q in sweep)
                  and (heur := next((q for q in sweep if q.heuristic), None)) is not None), reverse=True)
    out.append(_result(f"the split heuristic within {SPLIT_SLACK:.0%} of a sweep's best split count", off,
                       [o for o in off if o[0] > SPLIT_SLACK * (1 + 1e-9)], lambda o: f"{o[1]} {o[0]:+.1%}",
                       f"at most {off[0][0]:+.1%} ({off[0][1]}) over {counted(len(off), 'sweep')}" if off else "",
                       "no cold split sweep (labkit decode bench --sweep-splits)"))
    return tuple(out)


def format_targets(r: DecodeReport) -> list[str]:
    """The lines ``bench`` and ``report show`` print for ``r``: a header, one line per target the run covers, then
    the ones it does not, in one line."""
    results = check_targets(r)
    lines = ["decode targets, issue #10 (cold calls; TB/s is labkit's alone, 'x best peer' its rate in the peers' "
             "rounds"
             + ("; 95 %: an interval of that ratio's median, round by round" if any(
                 p.x_best_peer_low is not None for p in r.points) else "") + "):"]
    if (gpu := target_gpu(r)) is not None and any(t.calls and t.met is None for t in results):
        lines.append(f"  this run's GPU: {gpu}; the absolute targets were set on the {TARGET_GPU}, so its numbers are "
                     "shown under them, not judged")
    lines += [f"  {t.target}: {t.verdict}, {t.detail}" for t in results if t.calls]
    absent = [t.detail for t in results if not t.calls]
    other = sorted({p.mode for p in r.points} - {"cold", "graph"})
    if absent:
        lines.append("  not in this run: " + "; ".join(absent)
                     + (f" (this run timed {'/'.join(other)})" if other and not any(p.mode == "cold" for p in r.points)
                        else ""))
    return lines


def to_frame(results: tuple[TargetResult, ...]):
    """The results as a pandas DataFrame, one row per target."""
    import pandas as pd

    return pd.DataFrame([t.to_dict() for t in results])
