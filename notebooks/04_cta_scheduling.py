# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 04 - CTA scheduling: occupancy, the wave model, and measured per-CTA timelines
#
# How well labkit's kernels fill the GPU's CTA slots. The model (`labkit.sched`): CTAs per SM from
# the compiled cubin (registers, shared memory, threads), waves = CTAs / slots, wave efficiency
# CTAs / (ceil(waves) x slots), times the tile efficiency along q and kv (Sage2) or the padded last KV
# stage and the splits' balance (decode). The measurement: the kernels built with `-DLABKIT_TIMELINE`
# record per CTA its SM and its `%globaltimer` start and end; `labkit.sched.Timeline` turns those into
# slots, waves and the slot efficiency sum(busy) / (slots x makespan). Each sweep point is written to
# `data/sweeps/` as it finishes (`labkit.sweep`).

# %% tags=["parameters"]
from labkit.params import Choice, DecodeHeads, Int, IntList, Sage2Shape, Text  # parameter types: `labkit nb params 04`

source: Choice("auto", "live", "recorded") = "auto"  # auto (live if a GPU is usable, else recorded), live, recorded
out_dir: Text(measured=False) = ""  # where data/ and figs/ go (the runner sets it)
recorded_root: Text(measured=False) = ""  # recorded runs to show (default data/runs; relative: from the repo root)
workload: Choice("sage2", "decode", "both", covers={"both": ("sage2", "decode")}) = "both"  # which kernels to study
shape: Sage2Shape() = [1, 37810, 56, 128]  # Sage2 B,N,H,D of q, k and v
q_lens: IntList(1, at_most="shape[1]", tile=128, sweep_axis=True) = [37760, 37761, 37810]  # Sage2 q, kv_len = N
kv_lens: IntList(1, at_most="shape[1]", tile=64, sweep_axis=True) = [37760, 37761, 37810]  # Sage2 kv, q_len = N
gantt_q_len: Int(1, at_most="shape[1]") = 640  # Sage2 q_len (kv_len = N) drawn per CTA (seed: 5 q tiles x 56 heads)
decode_kv_lens: IntList(1, 1048576) = [8192]  # decode KV tokens per sequence
decode_batches: IntList(1, 4096, sweep_axis=True) = [1, 2, 4, 8, 16, 32, 64, 128]  # decode batches (heuristic splits)
decode_splits: IntList(1, 256, sweep_axis=True) = [1, 2, 3, 4, 6, 8, 16, 32]  # decode split sweep
decode_splits_batch: Int(1, 4096) = 8  # batch of the split sweep
decode_head_dim: Choice("128", "256") = "128"  # decode head_dim
decode_heads: DecodeHeads() = [32, 8]  # decode query heads, KV heads
decode_page_size: Choice("16", "32", "64") = "64"  # decode tokens per KV page
launches: Int(1, 100) = 3  # instrumented launches per point (the one with the median slot efficiency is kept)

# %%
from IPython.display import display

import labkit
from labkit.sched import measure as sched
from labkit.sched import study
from labkit.session import Session

labkit.setup_logging("WARNING")
session = Session.start("04_cta_scheduling", source=source, out_dir=out_dir, runs_root=recorded_root, parameters={
    "workload": workload, "shape": shape, "q_lens": q_lens, "kv_lens": kv_lens, "gantt_q_len": gantt_q_len,
    "decode_kv_lens": decode_kv_lens, "decode_batches": decode_batches, "decode_splits": decode_splits,
    "decode_splits_batch": decode_splits_batch, "decode_head_dim": decode_head_dim, "decode_heads": decode_heads,
    "decode_page_size": decode_page_size, "launches": launches})
n = shape[1]  # N: the length the tail studies hold fixed
do_sage2, do_decode = workload in ("sage2", "both"), workload in ("decode", "both")

# a part left out keeps its headings in the notebook: under them, say why nothing follows
not_studied = {part: f"{part}: not studied in this run (workload {workload!r}); -p workload {part.lower()} or both "
               "runs it" for part in ("Sage2", "Decode")}
decode_geo = {"head_dim": int(decode_head_dim), "heads_q": decode_heads[0], "heads_kv": decode_heads[1],
              "page_size": int(decode_page_size)}
decode_name = f"paged decode d{decode_head_dim}, {decode_heads[0]}/{decode_heads[1]} heads, page {decode_page_size}"
if do_decode:  # every call of the decode sweeps below by the sweep's own check (the head group: decode_heads'), first
    study.check_decode_calls(decode_batches, decode_kv_lens, splits=decode_splits, splits_batch=decode_splits_batch,
                             launches=launches, **decode_geo)

# %% [markdown]
# ## Occupancy of each kernel, from its cubin
# Registers per thread and shared memory per CTA as compiled for the GPU that measured (this machine's live, the
# recorded run's in recorded mode: the line above the table names it); each limit's CTA count and the one that
# binds. The instrumented Sage2 build is listed too: the timeline is only a faithful picture of the plain kernel
# when both place as many CTAs on an SM.

# %%
device = session.measure("device", labkit.device.describe, load=labkit.device.DeviceInfo.from_dict)
decode_at = {"batch": decode_splits_batch, "kv_len": decode_kv_lens[0], **decode_geo} if do_decode else None
occ = study.studied_kernels(session.measure("occupancy", sched.occupancy_table, shape=shape, decode=decode_at,
                                            arch=device.arch), sage2=do_sage2, decode=do_decode)
session.save_table(occ, "occupancy")
sms = device.sm_count
print(labkit.wrapped(f"Occupancy for {device.arch} ({sms} SMs), {session.measured_on()}:"))
occ[["registers_per_thread", "smem_per_cta_bytes", "by_registers", "by_shared_memory", "by_threads", "ctas_per_sm",
     "limiter"]]

# %% [markdown]
# ## Sage2: the model at the seed's tail points

# %%
if do_sage2:
    k_sage2 = int(occ.loc["sage2 mainloop", "ctas_per_sm"])
    seed_model = study.sage2_tail_model(shape, q_lens, kv_lens, sms=sms, ctas_per_sm=k_sage2)
    session.save_table(seed_model, "sage2_model")
    display_cols = ["sweep", "q_len", "kv_len", "ctas", "waves", "last_wave_ctas", "wave_efficiency",
                    "q_tile_efficiency", "kv_tile_efficiency", "efficiency"]
    display(study.shown_points(seed_model, display_cols))  # rounded; data/sage2_model.csv keeps every digit
else:
    print(not_studied["Sage2"])

# %% [markdown]
# ## Sage2: one measured launch, CTA by CTA
# One row per (SM, slot), at most 64: those that ran a later wave's CTA first; bars coloured by the CTA's wave.

# %%
if do_sage2:
    tl = session.measure("sage2_timeline", sched.sage2_timeline, shape, gantt_q_len, n,
                         load=labkit.sched.Timeline.from_dict)
    fig = labkit.plot.cta_gantt(tl, title=session.title(f"Sage2 mainloop, q_len {gantt_q_len}, kv_len {n}, "
                                                        f"{len(tl.records)} CTAs"))
    session.save_figure(fig, "sage2_gantt")
    display(study.shown_stats(tl.stats()))  # times in us or ms; the saved timeline keeps ns
else:
    print(not_studied["Sage2"])

# %% [markdown]
# ## Sage2: efficiency along q and along kv, model and measured
# Lines: the model over a dense sweep that crosses q-tile (128 rows), k-tile (64 keys) and wave
# boundaries. Points: the measured slot efficiency of the instrumented launch, alone and times the
# tile efficiency (which the timeline cannot see: a padded tile keeps its CTA busy). The legend names the
# tables' columns (`q_tile_efficiency` and `kv_tile_efficiency` are the model table's above).

# %%
if do_sage2:
    q_sweep = session.sweep("sage2_q", "sage2.timeline", {"q_len": q_lens}, shape=shape, kv_len=n, launches=launches)
    kv_sweep = session.sweep("sage2_kv", "sage2.timeline", {"kv_len": kv_lens}, shape=shape, q_len=n,
                             launches=launches)
    q_model, kv_model = study.sage2_dense_models(shape, q_lens, kv_lens, sms=sms, ctas_per_sm=k_sage2)
    fig = labkit.plot.sage2_sched(q_model, q_sweep, kv_model, kv_sweep, fixed={"q_len": n, "kv_len": n},
                                  title=session.title(f"Sage2 mainloop {list(shape)}: CTA-scheduling efficiency"))
    session.save_figure(fig, "sage2_efficiency")
    sage2_points = study.measured_points(q=q_sweep, kv=kv_sweep)
    session.save_table(sage2_points, "sage2_points")
    display(study.shown_points(sage2_points, [  # rounded; data/sage2_points.csv keeps every digit
        "sweep", "q_len", "kv_len", "ctas", "waves", "wave_efficiency", "measured_slot_efficiency",
        "measured_minus_model", "measured_sm_efficiency", "efficiency", "measured_efficiency", "measured_waves",
        "makespan_us", "sm_imbalance"]))
else:
    print(not_studied["Sage2"])

# %% [markdown]
# ## Decode: one measured call, CTA by CTA (the split sweep's batch, heuristic splits)
# The Gantt chart, the CTAs resident over the call with a tick where each SM went idle for good, and each SM's median
# CTA duration. The CTAs of this call are equal, so SMs whose CTAs run shorter most likely read memory faster (the Sage2
# mainloop, bound by its math, shows none where this run studies it). On the H200s at the default geometry (8 x 8k d128,
# 32/8 heads), with two CTAs per SM (4 splits of the 4-warp build, the plan until 3cd9afd), 12-28 SMs did so by 9-17 %,
# with SMs 34-39 and 78-83 among them nearly every time, and the call ended when the other SMs finished; with one CTA
# per SM (the plan's clustered pair) it depends on the machine: before page ids a stage ahead (`pp`), six of seven runs
# had no SM's median CTA under 0.95 of the median and one had 6; with them (the plan's build now) runs have had 4 to 19
# such SMs, often among the same 34-45 and 78-91 as with two CTAs per SM (docs/decode.md, "Tail splits, and SMs of
# uneven speed"). On the first H100 (`data/runs/20261205T053000Z-h100_first_run/`, the clustered pair, one CTA per SM)
# 32 of 128 SMs ran their CTAs about 11 % faster, ids 32-47, 78-91 and 126-127. The last chart and the line under the
# table show this run's SMs.

# %%
if do_decode:
    dtl = session.measure("decode_timeline", sched.decode_timeline, decode_splits_batch, decode_kv_lens[0],
                          load=labkit.sched.Timeline.from_dict, **decode_geo)
    # the plan's own call (split count and build) on this device: the titles name it
    decode_call = sched.decode_call_label(decode_splits_batch, decode_kv_lens[0], sms=sms, arch=device.arch,
                                          l2_bytes=device.l2_bytes, **decode_geo)
    call = f"{decode_name}, batch {decode_splits_batch} x {decode_kv_lens[0]} tokens"
    which = f"the plan's call: {decode_call}"
    fig = labkit.plot.cta_gantt(dtl, title=session.title(f"{call}, {len(dtl.records)} CTAs\n{which}"))
    session.save_figure(fig, "decode_gantt")
    fig = labkit.plot.cta_activity(dtl, title=session.title(f"{call}: CTAs resident, SMs going idle\n{which}"))
    session.save_figure(fig, "decode_activity")
    # equal CTAs: those on SMs that read faster end first, and the call waits for the rest
    fig = labkit.plot.sm_speed(dtl, title=session.title(f"{call}: CTA duration by SM\n{which}"))
    session.save_figure(fig, "decode_sm_speed")
    display(study.shown_stats(dtl.stats()))  # times in us or ms; the saved timeline keeps ns
    print(labkit.wrapped(dtl.fast_sms()))
else:
    print(not_studied["Decode"])

# %% [markdown]
# ## Decode: waves and efficiency against the split count and against the batch
# One CTA per (split, KV head, row block, sequence). Lines: the model at every split count and batch (the batch sweep
# with the plan's own call for each), each with the CTAs per SM of the build that call gets (at the default geometry, 8k
# tokens on an H200: 1, 2 or 4, depending on the batch; a count asked for in the split sweep takes the build `plan_call`
# gives that count, which can differ from the plan's own at the same count); a call whose splits form clusters (`cl` in
# its kernel) takes its waves from the CTAs the GPU holds in whole clusters (120 of 132 SMs in clusters of 4 or 8 on the
# H200s and the H100 labkit ran on); points: measured. The table's `kernel` column names each point's build. Efficiency
# is a share of all the slots, so a call that leaves slots empty by design reads low: at 8k tokens, batch 16's 128 units
# run one split of the two-per-SM build, one CTA on each of 128 SMs (slot efficiency about 0.47, its SMs busy about 0.93
# of the call), since that ran 1.7-1.9 % faster than two splits filling the second slots (docs/decode.md, "How a call is
# planned"). `waves` is the model's (CTAs / slots, fractional); `measured_waves` is the timeline's, the most CTAs any
# one slot ran, a whole number. Even placement would make it the model's waves rounded up; where it is more (64 beside
# 62.79 at the seed's Sage2 shape; 5 beside 3.88 at 16 splits of batch 8 at 8k on the H200s, 9 beside 7.76 at 32), the
# hardware gave some slots more CTAs than others, and the call ends with those. Where a lone CTA of a last wave runs
# faster than a full wave's (as the Sage2 Gantt chart shows, where this run draws it), the model's efficiency is not an
# upper bound on the measured one. The efficiency panels' legend names the table's columns: the model's
# `wave_efficiency` times `kv_tile_efficiency` (KV tokens over the tokens of the stages they take: the last stage's
# padding) and `split_efficiency` (stages over splits x the longest split's stages: how evenly the splits share them);
# the points are the timeline's `measured_slot_efficiency`, alone and times the same two.

# %%
if do_decode:
    split_sweep = session.sweep("decode_splits", "decode.timeline", {"kv_len": decode_kv_lens, "splits": decode_splits},
                                batch=decode_splits_batch, launches=launches, **decode_geo)
    batch_sweep = session.sweep("decode_batch", "decode.timeline", {"kv_len": decode_kv_lens, "batch": decode_batches},
                                splits=0, launches=launches, **decode_geo)
    for kv in decode_kv_lens:
        split_model, batch_model = study.decode_models(decode_splits_batch, kv, max(decode_splits), max(decode_batches),
                                                       sms=sms, l2_bytes=device.l2_bytes, **decode_geo)
        fig = labkit.plot.decode_sched(split_model, split_sweep[split_sweep["kv_len"] == kv], batch_model,
                                       batch_sweep[batch_sweep["kv_len"] == kv], title=session.title(
                                           f"{decode_name}, {kv} tokens per sequence (split sweep at batch "
                                           f"{decode_splits_batch})"))
        session.save_figure(fig, f"decode_sched_{kv}")
    decode_points = study.measured_points(splits=split_sweep, batch=batch_sweep)  # splits 0 shown as the count run
    session.save_table(decode_points, "decode_points")
    display(study.shown_points(decode_points, [  # rounded; data/decode_points.csv keeps every digit
        "sweep", "batch", "kv_len", "splits", "heuristic_splits", "kernel", "ctas", "waves", "wave_efficiency",
        "measured_slot_efficiency", "measured_minus_model", "kv_tile_efficiency", "split_efficiency", "measured_waves",
        "makespan_us"]))
else:
    print(not_studied["Decode"])
