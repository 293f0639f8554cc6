"""Notebook 04's tables: the wave model over the lengths a study sweeps, and the measured points beside it (pandas;
no GPU work here: the measured rows come from ``labkit.sched.measure`` through a sweep)."""

from .model import dense_lengths, frame, sage2_launch


def check_decode_calls(batches, kv_lens, *, splits=(), splits_batch: int | None = None, launches: int = 3,
                       **geometry) -> None:
    """Every call of notebook 04's decode sweeps by the ``decode.timeline`` sweep's own check, before anything runs:
    each of ``batches`` at each of ``kv_lens`` (the plan's splits), and each count of ``splits`` at ``splits_batch``
    (a review: a count past the call's pages passed here and stopped the split sweep, after the Sage2 part had run).

    Raises:
        ArgumentError: naming the call and the value.
    """
    from ..errors import ArgumentError
    from ..sweep.workloads import check_point

    calls = [(b, n, 0) for b in sorted(set(batches)) for n in kv_lens]
    calls += [(splits_batch, n, s) for n in kv_lens for s in splits]
    for b, n, s in calls:
        try:
            check_point("decode.timeline", batch=b, kv_len=n, splits=s, launches=launches, **geometry)
        except ArgumentError as exc:
            raise ArgumentError(f"decode call batch {b} x {n} tokens{f', {s} splits' if s else ''}: {exc}") from None


def studied_kernels(rows, *, sage2: bool, decode: bool):
    """``measure.occupancy_table``'s rows as a frame indexed by kernel, only those of the workloads a run studies: a
    recorded run of both holds every kernel's row, and a part not studied says so under its headings instead."""
    import pandas as pd

    occ = pd.DataFrame(rows).set_index("kernel")
    return occ[(occ.index.str.startswith("sage2 ") & sage2) | (occ.index.str.startswith("decode ") & decode)]


_SLOT_SUMS = ("busy_ns", "last_wave_idle_slot_ns")  # summed over every slot: many times the makespan


def shown_stats(stats):
    """A timeline's ``TimelineStats`` as the notebook shows them, one text column ``measured``: each ``*_ns`` field as
    a time in ns, us, ms or s (``busy`` 532.7 ms summed over slots, not ``busy_ns`` 532653152.0), other numbers at 4
    significant digits. What the run saves (the timeline itself) keeps its nanoseconds."""
    import pandas as pd

    from .._text import cell, duration

    shown = {}
    for name, value in stats.to_dict().items():
        if name.endswith("_ns"):  # a slot-time sum says so, or 536 ms of busy reads as longer than a 3 ms launch
            shown[name.removesuffix("_ns")] = duration(value) + (" summed over slots" if name in _SLOT_SUMS else "")
        else:
            shown[name] = f"{value:.4g}" if isinstance(value, float) else cell(value)
    return pd.Series(shown, dtype=object).to_frame("measured")


def sage2_tail_model(shape, q_lens, kv_lens, *, sms: int, ctas_per_sm: int):
    """The model at each tail point: every q length at kv = N, then every kv length at q = N (``sweep``: q or kv, as the
    measured points' table names them: the full shape is a point of both)."""
    batch, n, heads, _ = shape
    points = [("q", q, n) for q in q_lens] + [("kv", n, kv) for kv in kv_lens]
    return frame([sage2_launch(batch, heads, q, kv, sms=sms, ctas_per_sm=ctas_per_sm) for _, q, kv in points],
                 sweep=[s for s, _, _ in points], q_len=[q for _, q, _ in points], kv_len=[kv for _, _, kv in points])


def sage2_dense_models(shape, q_lens, kv_lens, *, sms: int, ctas_per_sm: int):
    """``(along q, along kv)``: the model over dense lengths around the tail points, crossing q-tile (128 rows), k-tile
    (64 keys) and wave boundaries, each at most N."""
    batch, n, heads, _ = shape
    dense_q = [q for q in dense_lengths(q_lens, step=8, span=2048) if q <= n]
    dense_kv = [kv for kv in dense_lengths(kv_lens, step=2, span=256) if kv <= n]
    return (frame([sage2_launch(batch, heads, q, n, sms=sms, ctas_per_sm=ctas_per_sm) for q in dense_q], q_len=dense_q),
            frame([sage2_launch(batch, heads, n, kv, sms=sms, ctas_per_sm=ctas_per_sm) for kv in dense_kv],
                  kv_len=dense_kv))


MODEL_SPLITS, MODEL_BATCHES = 32, 128  # the decode models' least reach: a sweep of a few points still shows the waves


def decode_models(batch: int, kv_len: int, max_splits: int, max_batch: int, *, sms: int, **geometry):
    """``(against the split count at batch, against the batch with the plan's own calls)``: the model at every count
    1..``max_splits`` and every batch 1..``max_batch``, each with the CTAs per SM of the build its call gets; at least
    to ``MODEL_SPLITS`` and ``MODEL_BATCHES`` (a sweep of one point had drawn no model line at all)."""
    from .measure import decode_model

    splits = list(range(1, max(max_splits, MODEL_SPLITS) + 1))
    batches = list(range(1, max(max_batch, MODEL_BATCHES) + 1))
    return (frame([decode_model(batch, kv_len, s, sms=sms, **geometry) for s in splits], splits=splits),
            frame([decode_model(b, kv_len, None, sms=sms, **geometry) for b in batches], batch=batches))


def measured_points(**sweeps):
    """The sweeps' measured rows as one table, a ``sweep`` column naming each, and ``measured_minus_model`` (the slot
    efficiency measured less the model's wave efficiency); a decode point asked for split count 0 (the heuristic's)
    shows the count its call ran with."""
    import pandas as pd

    points = pd.concat([rows.assign(sweep=name) for name, rows in sweeps.items()], ignore_index=True)
    points["measured_minus_model"] = points["measured_slot_efficiency"] - points["wave_efficiency"]
    if "heuristic_splits" in points:
        heuristic = points["splits"] == 0
        points.loc[heuristic, "splits"] = points.loc[heuristic, "heuristic_splits"]
    return points


def shown_points(table, columns):
    """``columns`` of a model or measured-points table as the notebook shows them, numbers rounded to what they
    resolve: efficiencies, their differences and ``sm_imbalance`` to 1e-4 (as ``report.shown_tails``), the model's
    fractional ``waves`` to 0.01 (as the notebook's text quotes them; ``measured_waves`` counts whole waves), times in
    us to 0.1 us (the ``%globaltimer`` steps 32 ns). The saved CSVs keep every digit: other code reads them."""
    from ..report.tables import rounded

    return rounded(table[list(columns)], (("efficiency", 4), ("measured_minus_model", 4), ("sm_imbalance", 4),
                                          ("waves", 2), ("_us", 1)))
