# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 02 - Sage2 phases on the GPU, beside the seed report
#
# labkit's own 8-bit Sage2 pipeline (five prep kernels and the fused INT8-QK / FP8-PV
# mainloop, `labkit/workloads/sage2/kernels/`) profiled the way the user's seed report was:
# phase timings, the one-shot vs phase-by-phase check, checksums, accuracy against exact fp32
# attention, the scheduler and the q/kv tail study (configurations interleaved). The GPU is this machine's (live)
# or, in recorded mode, the recorded run's; the line above the phase table names it.

# %% tags=["parameters"]
from labkit.params import Choice, File, Int, IntList, Sage2Shape, Text  # parameter types: `labkit nb params 02`

source: Choice("auto", "live", "recorded") = "auto"  # auto (live if a GPU is usable, else recorded), live, recorded
out_dir: Text(measured=False) = ""  # where data/ and figs/ go (the runner sets it)
recorded_root: Text(measured=False) = ""  # recorded runs to show (default data/runs; relative: from the repo root)
shape: Sage2Shape() = [1, 37810, 56, 128]  # B,N,H,D of q, k and v (the same shape)
layout: Choice("NHD", "HND") = "NHD"  # memory layout of q, k, v
dtype: Choice("bf16", "fp16") = "bf16"  # 16-bit input type
schedule: Choice("seed", "sm90") = "seed"  # mainloop build: seed (mma.sync, the seed's tiles) or sm90 (wgmma + TMA)
warmup: Int(0, 1000) = 3  # untimed passes before the phase timings
iterations: Int(1, 10000) = 10  # timed phase-by-phase passes
q_tail: IntList(1, at_most="shape[1]", tile=128) = [37760, 37761, 37810]  # q lengths of the q-tail sweep (kv = N)
kv_tail: IntList(1, at_most="shape[1]", tile=64) = [37760, 37761, 37810]  # kv lengths of the kv-tail sweep (q = N)
tail_iterations: Int(1, 1000) = 5  # interleaved rounds of the tail study
precision_iterations: Int(1, 1000) = 5  # timed mainloop calls per P.V variant in the precision study
seed_report: File(measured=False, reads="sage2_report") = "data/sage2_report_seed.json"  # the user's report

# %%
import labkit
from labkit.report import Sage2Report
from labkit.session import Session, each
from labkit.workloads.sage2.precision import (
    PrecisionPoint,
    fastest_build,
    precision_frame,
    precision_study,
    shown_precision,
)
from labkit.workloads.sage2.profile import profile
from labkit.workloads.sage2.schedule import Schedule
from labkit.workloads.sage2.tails import tail_points

labkit.setup_logging("WARNING")
session = Session.start("02_sage2_phases", source=source, out_dir=out_dir, runs_root=recorded_root, parameters={
    "shape": shape, "layout": layout, "dtype": dtype, "schedule": schedule, "warmup": warmup, "iterations": iterations,
    "q_tail": q_tail, "kv_tail": kv_tail, "tail_iterations": tail_iterations,
    "precision_iterations": precision_iterations, "seed_report": seed_report})

# %% [markdown]
# The tail study's interleaved rounds run first, as a labkit sweep (`data/sweeps/tail_rounds/`, one
# file per finished round: an interrupted run keeps its rounds and a re-run resumes); the report
# takes them as its tail study.

# %%
build = Schedule.parse(schedule)
rounds = session.sweep("tail_rounds", "sage2.tail_round", {"round_index": list(range(tail_iterations))},
                       shape=shape, layout=layout, dtype=dtype, q_tails=q_tail, kv_tails=kv_tail, seed=0,
                       schedule=build.to_dict())
ours = session.measure("report", profile, tuple(shape), layout=layout, dtype=dtype, warmup=warmup,
                       iterations=iterations, q_tails=q_tail, kv_tails=kv_tail, tail_iterations=tail_iterations,
                       schedule=build, tails=tail_points(rounds.to_dict("records"), build), load=Sage2Report.from_dict)
seed = labkit.report.load(labkit.repo_path(seed_report))
print(labkit.wrapped(f"Sage2 phases, {session.measured_on()}:"))
print(labkit.report.phase_table(ours))

# %% [markdown]
# ## Phases beside the seed's
# p50 per call on a log axis (dots: only their position means something); each label gives the
# time and the share of that report's pipeline total. The comparison first names every way the
# two runs differ.

# %%
runs = {"seed report (device not recorded)": seed, f"labkit on {session.device_name}": ours}
fig = labkit.plot.phase_dots(runs, title=session.title(f"Sage2 phases, {labkit.report.label(ours)}"))
session.save_figure(fig, "phase_dots_vs_seed")
print(labkit.wrapped("A = {}, B = {}\n{}".format(*runs, labkit.report.diff_table(seed, ours))))  # only notes break

# %% [markdown]
# ## Correctness: the two call paths and the fp32 reference

# %%
checks = labkit.report.checks_frame(ours)
session.save_table(checks, "checks")
shown_checks, long_values = labkit.report.shown_checks(checks)  # data/checks.csv keeps the values as they are
print(labkit.wrapped("\n".join(long_values)))
shown_checks

# %% [markdown]
# ## Where the error comes from
# On N(0, 1) inputs attention is near uniform, so the output is a tiny average and every P and V
# element's e4m3 rounding shows in it (the public Sage2 kernels: rel-L1 0.0391 at the seed shape).
# The same inputs through the two-term P.V split (`pv_terms=2`, where the table has its row: P and
# V each as hi + lo/16 in e4m3, three MMAs) leave mostly the INT8 Q K^T error; its mainloop time is
# the price. The sm90 build (wgmma + TMA, 192 x 128 tiles, Q scales per 16 rows) does Sage2's
# math on Hopper's warpgroup MMAs: same error, its own time. TOPS counts attention's 4 B N^2 H D
# operations over the mainloop's p50, so the two-term row, whose three MMAs do more, does more than it counts.

# %%
points = session.measure("precision", precision_study, tuple(shape), layout=layout, dtype=dtype,
                         iterations=precision_iterations, load=each(PrecisionPoint.from_dict),
                         schedules=(Schedule(), Schedule(pv_terms=2),
                                    *((Schedule.sm90(),) if session.live and labkit.device.describe().arch == "sm_90"
                                      else ())))
precision = precision_frame(points)
session.save_table(precision, "precision")
print(labkit.wrapped(fastest_build(points, shown=build, on=session.device_name)))
shown_precision(precision)  # data/precision.csv keeps every digit

# %% [markdown]
# ## Scheduler (computed from the schedule and the shape)

# %%
sched = labkit.report.scheduler_frame(labkit=ours, seed=seed)
session.save_table(sched, "scheduler")
sched

# %% [markdown]
# ## Tail study
# Mainloop p50 with min..max bars against the swept length; right axis: the tile efficiency
# along it (q rows / scheduled q rows; kv tokens / (k iterations x cta_k)). In the table, `vs_full_pct` compares
# each point with its sweep's full shape and `beyond_noise` says whether their min..max ranges are apart. Fewer
# tiles should never be slower: the line under the figure names, for the build this run shows, each point apart
# from the full shape beyond noise and whether the tile model explains it (where it does not, neither has labkit
# yet).

# %%
fig = labkit.plot.tail_study(ours, title=session.title(f"Sage2 tail study, {labkit.report.label(ours)}"))
session.save_figure(fig, "tail_study")
print(labkit.wrapped(labkit.report.tail_note(ours)))
tails = labkit.report.tail_table(ours)
session.save_table(tails, "tail_study")
labkit.report.shown_tails(tails)  # data/tail_study.csv keeps every column
