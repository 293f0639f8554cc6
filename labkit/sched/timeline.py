"""Measured per-CTA timelines: where each CTA ran and when, turned into waves and efficiency.

A record per CTA is 6 x u64 ``{cta, smid, t0, t1, clk0, clk1}`` (``%globaltimer`` ns at entry and exit,
``clock64`` beside them), as an instrumented kernel writes it. ``Timeline`` places each CTA on a slot of
its SM (a slot holds one CTA at a time), and computes what the static wave model predicts only for
uniform CTAs: makespan, slot efficiency sum(busy) / (slots x makespan), SM efficiency (time some CTA
was resident), the waves (a CTA's position in its slot's sequence), the idle slot-time of the last
wave, the per-SM imbalance, and the timer's step as the launch's own stamps show it (the gcd of their
offsets: 32 ns for %globaltimer on the H200, so every duration is known to one step). ``chrome_trace``
writes the Chrome/Perfetto JSON (one track per slot).
"""

import reprlib
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .._text import counted
from .._write import dumps, write_text
from ..errors import ArgumentError
from ..values import check_int
from .occupancy import MAX_CTAS_PER_SM

FIELDS = ("cta", "sm", "start_ns", "end_ns", "clk0", "clk1")
MAX_SPAN_NS = 100e9  # the CTAs of one launch start within this of each other (%globaltimer, ns)
FAST_SM = 0.95  # an SM whose CTAs' median duration is under this share of the SMs' median (``per_sm``'s vs_median)


def _ranges(ids) -> str:
    """``24-25, 32-39, 42``: sorted integers as runs."""
    runs: list[list[int]] = []
    for i in sorted(int(x) for x in ids):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in runs)


@dataclass(frozen=True)
class TimelineStats:
    ctas: int
    sms_used: int
    slots: int
    makespan_ns: float
    busy_ns: float
    slot_efficiency: float  # sum(busy) / (slots x makespan)
    sm_efficiency: float  # sum over SMs of the time any CTA was resident / (SMs x makespan)
    waves: int
    ctas_per_wave: tuple[int, ...]
    last_wave_idle_slot_ns: float  # slot-time left idle after each slot's last CTA, before the makespan ends
    sm_imbalance: float  # max / mean busy time per SM
    timer_step_ns: int  # the timer step seen in this launch's own stamps (32 ns on the H200); 0: one stamp

    def to_dict(self) -> dict:
        return asdict(self)


class Timeline:
    """CTAs of one launch on ``sms`` SMs with ``ctas_per_sm`` slots each."""

    def __init__(self, records, *, sms: int, ctas_per_sm: int):
        if not 1 <= ctas_per_sm <= MAX_CTAS_PER_SM:  # here, not only in the reader: a saved timeline reads back
            raise ArgumentError(f"ctas_per_sm {ctas_per_sm}: expected 1..{MAX_CTAS_PER_SM} (the most CTAs an SM of "
                                "sm_80..sm_100 holds)")
        not_rows = ArgumentError(f"timeline records {reprlib.repr(records)}: expected rows of six integers "
                                 f"({', '.join(FIELDS)})")
        try:  # a generator's rows too
            raw = np.asarray(records if isinstance(records, (np.ndarray, list, tuple)) else list(records))
            # integers only: floats had been cut (10.7 -> 10) and digit strings parsed
            rec = np.asarray(raw, dtype=np.int64) if not raw.size or raw.dtype.kind in "iuO" else None
        except OverflowError:  # a stamp past int64 (numpy's own message was a traceback's)
            raise ArgumentError("timeline stamps outside [0, 2**62): not %globaltimer / clock64 readings") from None
        except (TypeError, ValueError):  # e.g. dicts per CTA (a docs review: numpy's TypeError, a traceback)
            raise not_rows from None
        if rec is None:
            raise not_rows
        if rec.ndim != 2 or rec.shape[1] != len(FIELDS) or rec.shape[0] == 0:
            raise ArgumentError(f"timeline records of shape {list(rec.shape)}: expected [ctas, 6] "
                                f"({', '.join(FIELDS)})")
        if (rec[:, 2:] < 0).any() or (rec[:, 2:] >= 1 << 62).any():  # u64 stamps read as i64; sums must not wrap
            raise ArgumentError("timeline stamps outside [0, 2**62): not %globaltimer / clock64 readings")
        if not rec[:, 2:].any():  # a buffer the kernel never wrote (one such record among real ones: `far` below)
            raise ArgumentError(f"every record's four stamps are 0 ({counted(len(rec), 'CTA')}): records the kernel "
                                "never wrote, not a launch's timeline")
        far = np.abs(rec[:, 2] - np.median(rec[:, 2]))
        if far.max() > MAX_SPAN_NS:  # e.g. a record left unwritten (zeros) among real stamps
            i = int(np.argmax(far))
            raise ArgumentError(f"records[{i}]: starts {far[i] / 1e9:.3g} s from the other CTAs' median start: not a "
                                f"stamp of the same launch (an unwritten record?); a launch spans under "
                                f"{MAX_SPAN_NS / 1e9:g} s")
        if (rec[:, 3] < rec[:, 2]).any():
            first = int(np.argmax(rec[:, 3] < rec[:, 2]))
            raise ArgumentError(f"records[{first}]: {int((rec[:, 3] < rec[:, 2]).sum())} CTA(s) end before they "
                                "start, this the first: not a timeline")
        if (rec[:, 1] < 0).any() or (rec[:, 1] >= sms).any():
            first = int(np.argmax((rec[:, 1] < 0) | (rec[:, 1] >= sms)))
            n_out = int(((rec[:, 1] < 0) | (rec[:, 1] >= sms)).sum())
            raise ArgumentError(f"records[{first}]: SM id {rec[first, 1]}: expected 0..{sms - 1} (sms = {sms}); "
                                f"{counted(n_out, 'record')} out of range, this the first")
        ids, first, counts = np.unique(rec[:, 0], return_index=True, return_counts=True)
        if (counts > 1).any():
            cta = int(ids[counts > 1][0])
            again = int(np.flatnonzero(rec[:, 0] == cta)[1])
            raise ArgumentError(f"records[{again}]: CTA {cta} again (records[{int(first[counts > 1][0])}]; "
                                f"{int((counts > 1).sum())} CTA id(s) recorded more than once): a timeline records "
                                "each CTA once")
        self.sms, self.ctas_per_sm = sms, ctas_per_sm
        self.records = rec
        self.slot, self.wave = self._place()

    def _place(self) -> tuple[np.ndarray, np.ndarray]:
        """Each CTA onto the first free slot of its SM in start order; its wave is its index on that slot."""
        rec = self.records
        slot = np.full(len(rec), -1)
        wave = np.zeros(len(rec), dtype=int)
        for sm in np.unique(rec[:, 1]):
            idx = np.flatnonzero(rec[:, 1] == sm)
            # by start, then end: a CTA that started and ended in the timer step another starts in frees its slot first
            idx = idx[np.lexsort((rec[idx, 0], rec[idx, 3], rec[idx, 2]))]
            free_at = [np.iinfo(np.int64).min] * self.ctas_per_sm
            count = [0] * self.ctas_per_sm
            for i in idx:
                s = next((k for k in range(self.ctas_per_sm) if free_at[k] <= rec[i, 2]), None)
                if s is None:  # more CTAs resident than slots: the occupancy given is wrong
                    raise ArgumentError(f"SM {sm} holds more than {self.ctas_per_sm} CTAs at "
                                        f"{rec[i, 2]} ns: ctas_per_sm is too small")
                slot[i], wave[i] = s, count[s]
                free_at[s], count[s] = rec[i, 3], count[s] + 1
        return slot, wave

    def frame(self):
        import pandas as pd

        df = pd.DataFrame(self.records, columns=list(FIELDS))
        df["slot"], df["wave"] = self.slot, self.wave
        df["busy_ns"] = df["end_ns"] - df["start_ns"]
        return df

    def stats(self) -> TimelineStats:
        rec = self.records
        t0, t1 = rec[:, 2].min(), rec[:, 3].max()
        makespan = float(t1 - t0)
        busy = (rec[:, 3] - rec[:, 2]).astype(float)
        slots = self.sms * self.ctas_per_sm
        per_sm_busy = np.bincount(rec[:, 1], weights=busy, minlength=self.sms)
        resident = 0.0
        for sm in np.unique(rec[:, 1]):
            iv = sorted(zip(rec[rec[:, 1] == sm, 2], rec[rec[:, 1] == sm, 3]))
            end = iv[0][0]
            for a, b in iv:  # length of the union of the SM's intervals
                resident += max(0, b - max(a, end))
                end = max(end, b)
        last_end = {}
        for i in range(len(rec)):
            key = (rec[i, 1], self.slot[i])
            last_end[key] = max(last_end.get(key, t0), rec[i, 3])
        idle = sum(t1 - e for e in last_end.values()) + (slots - len(last_end)) * makespan
        waves = int(self.wave.max()) + 1
        used = per_sm_busy[np.unique(rec[:, 1])]  # the SMs that ran a CTA, busy for less than a timer step or not
        return TimelineStats(
            ctas=len(rec), sms_used=len(used), slots=slots, makespan_ns=makespan,
            busy_ns=float(busy.sum()),
            slot_efficiency=float(busy.sum() / (slots * makespan)) if makespan else 1.0,
            sm_efficiency=float(resident / (self.sms * makespan)) if makespan else 1.0, waves=waves,
            ctas_per_wave=tuple(int((self.wave == w).sum()) for w in range(waves)),
            last_wave_idle_slot_ns=float(idle),
            sm_imbalance=float(used.max() / used.mean()) if used.mean() > 0 else 1.0,
            timer_step_ns=self.timer_step_ns)

    def active_ctas(self, bins: int = 20) -> np.ndarray:
        """CTAs resident at the middle of each of ``bins`` equal slices of the makespan: how the launch filled
        the GPU and how its last wave drained."""
        bins = check_int(bins, what="bins", lo=1)
        # from t0 in int64 first: a float64 of %globaltimer's ~1.8e18 ns steps by 256 ns
        t0 = self.records[:, 2].min()
        start, end = (self.records[:, 2] - t0)[:, None], (self.records[:, 3] - t0)[:, None]
        mids = (np.arange(bins) + 0.5) * float(end.max()) / bins
        return ((start <= mids) & (end > mids)).sum(axis=0)

    def sm_drain_ns(self) -> np.ndarray:
        """For each SM that ran a CTA, how long before the launch's end its last CTA ended, shortest first: the
        SMs that sat idle while the last CTAs ran."""
        end = self.records[:, 3].max()
        last = np.full(self.sms, -1, dtype=np.int64)
        np.maximum.at(last, self.records[:, 1], self.records[:, 3])
        return np.sort(end - last[last >= 0])

    def per_sm(self):
        """One row per SM that ran a CTA (a DataFrame indexed by ``sm``): ``ctas``, ``median_cta_ns`` (its CTAs'
        median duration), ``vs_median`` (that over the median of all SMs' medians), ``busy_ns`` (their sum) and
        ``idle_before_end_ns`` (launch end minus its last CTA's end). Equal CTAs that run shorter on some SMs than
        on others show which SMs a launch waits for."""
        import pandas as pd

        df = self.frame()
        end = df["end_ns"].max()
        g = df.groupby("sm")
        median = g["busy_ns"].median()
        return pd.DataFrame({"ctas": g.size(), "median_cta_ns": median, "vs_median": median / median.median(),
                             "busy_ns": g["busy_ns"].sum(), "idle_before_end_ns": end - g["end_ns"].max()})

    def fast_sms(self) -> str:
        """One line on ``per_sm``: the SMs' median CTA duration and the SMs whose CTAs run under ``FAST_SM`` x that
        (``24-25, 32-39``), with their median against it."""
        per = self.per_sm()
        if not per["median_cta_ns"].median() > 0:  # CTAs shorter than the timer's step: nothing to compare to
            return "per SM: median CTA 0.0 us, under the timer's step: no SM's CTAs compared"
        quick = per[per["vs_median"] < FAST_SM]
        which = (f" (ids {_ranges(quick.index)}; their median {quick['vs_median'].median() - 1:+.0%})"
                 if len(quick) else "")
        return (f"per SM: median CTA {per['median_cta_ns'].median() / 1e3:.1f} us; {len(quick)} of {len(per)} SMs "
                f"under {FAST_SM:g} x that{which}; the lowest {per['vs_median'].min():.3f} x")

    @property
    def timer_step_ns(self) -> int:
        """The timer's step as this launch saw it: the greatest common divisor of every start and end stamp's
        offset from the first (each is a whole number of steps); durations are known to +-1 step."""
        stamps = np.concatenate([self.records[:, 2], self.records[:, 3]])
        offsets = np.unique(stamps - stamps.min())
        return int(np.gcd.reduce(offsets[offsets > 0])) if (offsets > 0).any() else 0

    def to_dict(self) -> dict:
        """The records and the launch's slots as JSON-ready data (``from_dict`` reads it back)."""
        return {"timeline_version": 1, "sms": self.sms, "ctas_per_sm": self.ctas_per_sm, "fields": list(FIELDS),
                "records": self.records.tolist()}

    def save(self, path: Path | str) -> Path:
        """The records and the slots they were placed on, as JSON a notebook or ``labkit sched timeline`` reloads."""
        return write_text(path, dumps(self.to_dict(), indent=None, source=str(path)) + "\n")

    @classmethod
    def from_dict(cls, doc, *, source: str | None = None) -> "Timeline":
        """A timeline from ``to_dict``'s data, checked field by field (errors name the field and ``source``)."""
        from .._json import Node, refuse_other_kind

        n = doc if isinstance(doc, Node) else Node(doc, source=source)
        refuse_other_kind(n, "timeline_version", "a per-CTA timeline")
        n = n.obj(("timeline_version", "sms", "ctas_per_sm", "fields", "records"))
        n["timeline_version"].version(1)
        if n["fields"].value != list(FIELDS):
            raise n["fields"].fail(f"the fields {list(FIELDS)}")
        records = [r.ints(len(FIELDS), 0) for r in n["records"].list(1)]
        try:
            # as sched waves --ctas-per-sm takes it: the most CTAs an SM of sm_80..sm_100 holds (64 had passed)
            return cls(records, sms=n["sms"].int(1, 4096), ctas_per_sm=n["ctas_per_sm"].int(1, MAX_CTAS_PER_SM))
        except ArgumentError as exc:  # the file and where in it
            raise n.error(str(exc)) from None

    @classmethod
    def load(cls, path: Path | str) -> "Timeline":
        from .._json import load_document

        return cls.from_dict(load_document(path, what="CTA timeline"))

    def chrome_trace(self, path: Path | str, *, names=None) -> Path:
        """Chrome/Perfetto trace JSON: pid = SM, tid = slot, one complete ('X') slice per CTA (times in us
        from the first start). ``names``: optional per-CTA labels (e.g. its tile or split)."""
        rec = self.records
        t0 = rec[:, 2].min()
        events = [{"name": names[i] if names is not None else f"cta {rec[i, 0]}", "ph": "X", "pid": int(rec[i, 1]),
                   "tid": int(self.slot[i]), "ts": (rec[i, 2] - t0) / 1e3, "dur": (rec[i, 3] - rec[i, 2]) / 1e3,
                   "args": {"cta": int(rec[i, 0]), "wave": int(self.wave[i])}} for i in range(len(rec))]
        meta = [{"name": "process_name", "ph": "M", "pid": int(sm), "args": {"name": f"SM {int(sm)}"}}
                for sm in np.unique(rec[:, 1])]
        return write_text(path, dumps({"traceEvents": meta + events, "displayTimeUnit": "ns"}, indent=None,
                                      source=str(path)) + "\n")
