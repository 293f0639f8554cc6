# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 03 - Paged-KV decode on the GPU
#
# labkit's own split-KV decode kernels (`labkit/workloads/decode/kernels/`: tensor cores for up to
# 16 query rows per KV head, CUDA cores beyond), run through the manifest runner like any cubin:
# the seed's manifest beside ours, correctness against exact attention, K+V bandwidth beside a
# 1 GiB copy's rate and the peers (torch SDPA, FlashAttention-3 on labkit's own K/V gathered contiguous, timed
# in the same shuffled rounds as labkit's call: the black dots; torch's FlexAttention on a paged pool of its own,
# compiled per shape, so at the five points only), and a split sweep. The GPU is this machine's (live) or,
# in recorded mode, the recorded run's; the line above the correctness table names it.

# %% tags=["parameters"]
from labkit.params import Choice, DecodeHeads, File, Int, IntList, Text  # types: `labkit nb params 03` lists them

source: Choice("auto", "live", "recorded") = "auto"  # auto (live if a GPU is usable, else recorded), live, recorded
out_dir: Text(measured=False) = ""  # where data/ and figs/ go (the runner sets it)
recorded_root: Text(measured=False) = ""  # recorded runs to show (default data/runs; relative: from the repo root)
batch: IntList(1, 4096, sweep_axis=True) = [1, 8, 64, 256]  # sequences per call, swept
kv_lens: IntList(1, 1048576, sweep_axis=True) = [1024, 8192, 32768]  # KV tokens per sequence (calls over 9 GB skipped)
head_dim: Choice("128", "256") = "128"  # head_dim of the sweep
page_size: Choice("16", "32", "64") = "64"  # tokens per KV page
heads: DecodeHeads() = [32, 8]  # query heads, KV heads
splits_at: IntList(1, 1048576, length=2) = [8, 8192]  # batch, kv_len of the split sweep
iterations: Int(1, 1000) = 20  # timed calls per point
spread_at: IntList(1, 1048576, length=2, measured=False) = [64, 8192]  # batch, kv_len to find in the recorded runs
seed_manifest: File(measured=False, reads="manifest") = "data/trtllm_gen_decode_manifest_v4.json"  # the user's manifest

# %%
import pandas as pd
from IPython.display import display

import labkit
from labkit.session import Session
from labkit.workloads.decode import study
from labkit.workloads.decode.spread import spread_frame, spread_table

labkit.setup_logging("WARNING")
session = Session.start("03_decode", source=source, out_dir=out_dir, runs_root=recorded_root, parameters={
    "batch": batch, "kv_lens": kv_lens, "head_dim": head_dim, "page_size": page_size, "heads": heads,
    "splits_at": splits_at, "iterations": iterations, "seed_manifest": seed_manifest})
geo = {"head_dim": int(head_dim), "page_size": int(page_size), "heads_q": heads[0], "heads_kv": heads[1]}  # each call

# %% [markdown]
# ## The seed's manifest beside labkit's, for the seed's geometry (static checks, no GPU)

# %%
manifests = pd.DataFrame(study.manifest_comparison(labkit.repo_path(seed_manifest), session.out_dir / "manifest"))
session.save_table(manifests, "manifests")  # the entry names whole
study.shown_manifests(manifests)

# %% [markdown]
# ## Correctness: every element against exact float64 attention
# Shuffled page tables with a shared page, lengths 1 and page boundaries, GQA 1/4/6/8, both pool
# layouts, causal multi-token queries; one split and three. Bound per element:
# 2^-8 (|ref| + sum p|v|) + 1e-3 (bf16 output, bf16 P in the tensor-core P.V).

# %%
print(labkit.wrapped(f"Decode, {session.measured_on()}:"))
checks = pd.DataFrame(session.measure("correctness", study.correctness))
session.save_table(checks, "correctness")
study.shown_correctness(checks)

# %% [markdown]
# ## Bandwidth: K+V bytes read per second, beside a 1 GiB copy's rate and the peers
# A labkit.sweep: each (batch, kv_len) point is written to `data/sweeps/bandwidth/` as it finishes, so an
# interrupted run keeps what it measured and a re-run resumes. Points over 9 GB of K+V are skipped (named under the
# figure), and why a peer has no number at a point is printed above the table.
#
# `x_best_peer` is labkit's rate over the best peer's, both timed in the same shuffled rounds; `x_best_peer_low` and
# `x_best_peer_high` (runs recorded since 6 December 2026) bound its median round by round (95 %, whatever the samples'
# distribution): where that interval holds 1, the rounds cannot tell labkit from the peer, and where it lies under 1,
# labkit is behind beyond their noise.
#
# Every sample is cold: L2 is flushed before it by a memset of twice its size (NVBench's flush), which leaves L2
# full of dirty lines that the call's reads write back, and an event pair also times the launch. Both are part of
# the rates here, for labkit and the peers alike. How much: on the H200s of docs/decode.md ("A cold L2 left dirty or
# clean"), with L2 left clean (`labkit decode bench --mode cold_clean`) calls of 268 MB took 11-14 % less (8 x 8k
# d128 about 67 us, what ncu reads for it, against 76.5 cold) and 1 x 8k 1.5-2.1 us less; notebook 05 reads the
# gap on its own GPU.
#
# The `kernel` column names the build the plan chose (`kernel_label` in `labkit/workloads/decode/geometry.py`):
# `mma w8s3ef cl8 pp` is the tensor-core kernel with 8 warps and 3 K/V stages (`s`), K/V loaded with L2 evict_first
# (`ef`), its splits merged inside a cluster of 8 (`cl8`), page ids read a stage ahead (`pp`); `c1` is one Q K^T
# chain instead of two, `P` persistent CTAs, `tail/4` the call's last units in 4 splits each.
#
# The thin grey line ("fit from 100 MB" in the legend) is each call's time fitted as a fixed part plus its bytes at one
# rate, over the calls of 100 MB or more (`labkit/workloads/decode/cost_fit.py`; the line above the table gives it): the
# fixed part (launch, the flush's dirty lines written back, the first stage's latency, the last CTAs' drain) is why
# short calls read slower, and the rate is what the plan streams at once a call is long.

# %%
copy = session.measure("copy_ceiling", study.copy_ceiling)
points = session.sweep("bandwidth", "decode.point", {"batch": batch, "kv_len": kv_lens}, **geo, iterations=iterations,
                       peers=True)
table = study.bandwidth_table(points)
fit, fit_line = study.bandwidth_fit(table)
fig = labkit.plot.decode_bandwidth(table.to_dict("records"), copy["TBps"], fit=fit, title=session.title(
    f"Paged decode, {heads[0]}/{heads[1]} heads, head_dim {head_dim}, page {page_size}, cold L2"))
session.save_figure(fig, "decode_bandwidth")
saved = session.save_table(table, "bandwidth")
print(labkit.wrapped("\n".join([fit_line, *study.behind_best_peer(table), *study.skipped(points),
                                *study.peers_not_run(table, saved_in=f"data/{saved.name}, peers_not_run")])))
study.shown(table)  # TB/s of K+V read for labkit and each peer; data/bandwidth.csv keeps every column

# %% [markdown]
# ## Split sweep: K+V TB/s against the split count, and the heuristic's choice
# The line forces each split count on one build (the legend names it); the star is the plan's own call, its split
# count and the build the plan picks for it (clusters, stages, page ids ahead), so where the star sits above the line
# at its own count, the difference is the build's, not the count's.

# %%
counts = study.split_counts(splits_at[0], splits_at[1], **geo)
sweep_splits = study.split_rows(session.sweep(
    "splits", "decode.point", {"splits": counts}, batch=splits_at[0], kv_len=splits_at[1], **geo,
    iterations=iterations))
fig = labkit.plot.split_sweep(sweep_splits, title=session.title(
    f"Split sweep, batch {splits_at[0]} x {splits_at[1]} tokens, head_dim {head_dim}"))
session.save_figure(fig, "split_sweep")
study.shown(pd.DataFrame(sweep_splits))

# %% [markdown]
# ## Across GPUs of this model: one call in every recorded decode report
# The H200s lent to labkit run calls of 2 GB or more in two states about 2 % apart, and the peers timed beside labkit
# move with it (`docs/decode.md`, "Two states of the H200s"). The plan's row of the `spread_at` call from every decode
# report under `data/runs` on this notebook's GPU model (`labkit report spread --device`; the bench's and the GPU
# suites' reports, not this notebook's own records), of the build the plan picks for that call, slowest first:
# left, labkit against the best peer in the same rounds; right, both against that run's 1 GiB copy rate.

# %%
spread = study.recorded_spread(*spread_at, **geo, kernel=study.spread_kernel(table, *spread_at, **geo),
                               device=session.device_name)
if spread is not None:
    print(labkit.wrapped(spread_table(spread, rows=False)))  # the runs' rows follow as a table
    display(spread_frame(spread))
    print(labkit.wrapped("this notebook's call: " + study.this_run_among(spread, table, *spread_at)))
    session.save_figure(labkit.plot.call_spread(spread, this_run=study.table_rate(table, *spread_at),
                                                this_run_beside=study.table_rate(table, *spread_at, beside_peers=True)),
                        "spread")
