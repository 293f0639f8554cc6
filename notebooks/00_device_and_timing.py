# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 00 - Device and timing
#
# What GPU is this, how fast does it copy, what does an empty launch cost; and the user's
# Sage2 seed report, loaded and plotted. Live on a GPU; with none, the numbers come from the
# recorded run in `data/runs/` measured with the same parameters (the first output says which).

# %% tags=["parameters"]
from labkit.params import Choice, File, Int, IntList, Text  # parameter types: `labkit nb params 00` lists them

source: Choice("auto", "live", "recorded") = "auto"  # auto (live if a GPU is usable, else recorded), live, recorded
out_dir: Text(measured=False) = ""  # where data/ and figs/ go (the runner sets it; empty: runs/<stamp>-<name>)
recorded_root: Text(measured=False) = ""  # recorded runs to show (default data/runs; relative: from the repo root)
copy_mib: Int(1, 16384) = 1024  # size of the device-to-device copy probe, MiB
launches: Int(10, 1000000) = 2000  # empty launches per launch-overhead measurement
cold_l2_mib: IntList(1, 16384, max_items=8) = [16, 48, 256, 1024]  # copy sizes of the cold-L2 probe, MiB
seed_report: File(measured=False, reads="sage2_report") = "data/sage2_report_seed.json"  # Sage2 report to plot

# %%
import labkit
from labkit.session import Session

labkit.setup_logging("WARNING")
session = Session.start("00_device_and_timing", source=source, out_dir=out_dir, runs_root=recorded_root,
                        parameters={"copy_mib": copy_mib, "launches": launches, "cold_l2_mib": cold_l2_mib,
                                    "seed_report": seed_report})

# %% [markdown]
# ## The device

# %%
device = session.measure("device", labkit.device.describe, load=labkit.device.DeviceInfo.from_dict)
device.shown()  # sizes, clocks and versions in their units; data/device.json keeps the numbers

# %% [markdown]
# ## Copy bandwidth (device to device, cold L2, bytes read + written)

# %%
copy_table = session.measure("copy_bandwidth", labkit.probes.copy_bandwidth, copy_mib << 20,
                             load=labkit.probes.copy_table)
session.save_table(copy_table, "copy_bandwidth")
labkit.probes.shown_copy(copy_table)  # data/copy_bandwidth.csv keeps every digit

# %% [markdown]
# ## A cold L2, left dirty or clean
# The copy again at sizes below and above the L2: with L2 warm; after the memset flush that `cold` timing (labkit's
# default, as NVBench's) leaves full of dirty lines, which the copy's misses write back to DRAM inside the sample; and
# after `cold_clean`'s flush, which reads other data after the memset so that L2 is clean. The gap between the two
# cold lines is what a cold sample pays for the flush's lines, at most an L2's worth of write-backs (1.8-4.1 µs on the
# H200s recorded, 4.1-6.6 µs on the H100), so a large share of a call of tens of MB and a small one of a call of a
# GB. A copy touches twice its size: from half the L2 on (the first dotted line: 30 MiB on an H200, 25 on an H100)
# its source and destination do not both fit, and "warm" is no longer warm: each hot copy then runs right after
# another whose written lines are still dirty in L2, so it pays write-backs as `cold` does and runs with it, slower
# than `cold_clean`.
# Both cold pads first reset L2 lines that kernels loaded as persisting (L2::evict_last), where the CUDA context sets
# L2 aside for them (11.25 MiB on the H200s measured): no memset or read of normal lines evicts those, and FA3 loads
# its K/V so. The table: p50 [µs].

# %%
cold_l2 = session.measure("cold_l2_copies", labkit.probes.cold_l2_copies, tuple(cold_l2_mib),
                          load=labkit.probes.cold_l2_table)
session.save_table(cold_l2, "cold_l2_copies")
fig = labkit.plot.cold_l2_copies(cold_l2, l2_mib=device.l2_bytes / 2**20,
                                 title=session.title("Device-to-device copy by L2 state"))
session.save_figure(fig, "cold_l2_copies")
cold_l2.pivot(index="MiB", columns="mode", values="p50_us")[["hot", "cold", "cold_clean"]].round(2)

# %% [markdown]
# ## Empty-launch overhead
# Host enqueue cost, GPU time per launch back to back and in a CUDA graph, one isolated
# launch (enqueue hidden), and a launch-then-synchronize round trip.

# %%
overhead = session.measure("launch_overhead", labkit.probes.launch_overhead, launches,
                           load=labkit.probes.overhead_us)
fig = labkit.plot.value_bars(overhead, xlabel="time per launch [µs]", labels=labkit.probes.LABELS,
                             title=session.title(f"Empty-kernel launch overhead, {launches} launches"))
session.save_figure(fig, "launch_overhead")
print(labkit.wrapped(labkit.probes.launch_overhead_note(overhead)))

# %% [markdown]
# ## What timing a launch costs the host
# Host time per launch of an empty kernel, enqueued back to back: bare; inside labkit's NVTX
# range; between a reused start/stop event pair; both (labkit's timed-launch path: target at most
# 3 µs over bare); and NVTX with a fresh event pair per launch (what `time_gpu` once did).
# These are host times, so they move with the host (the record's `host` names its CPU): read the added cost
# against the bare launch of the same run, and expect it to differ between hosts whose bare launch is the same.
# Where a bare launch took 4.5 µs, one host timed a launch for 2.8 µs more (`data/runs/20261201T044127Z-*`, the
# target met) and another for 6.2 µs more, 4.9 µs of it the event pair (`data/runs/20261206T012202Z-*`); an H100's
# host added 2.4 µs to a bare launch of 3.4 µs. Timing in cold mode hides these host costs behind the flush.

# %%
timing_cost = session.measure("timing_overhead", labkit.probes.timing_overhead, launches,
                              load=labkit.probes.timing_overhead_us)
fig = labkit.plot.value_bars(timing_cost, xlabel="host time per launch [µs]", labels=labkit.probes.LABELS,
                             title=session.title(f"Host cost of timing a launch, {launches} launches"))
session.save_figure(fig, "timing_overhead")
print(labkit.probes.timing_overhead_table({**timing_cost, "launches": launches}))

# %% [markdown]
# ## The Sage2 seed report
# The user's report (measured elsewhere; it records no device).

# %%
seed = labkit.report.load(labkit.repo_path(seed_report))
print(labkit.report.phase_table(seed))
fig = labkit.plot.phase_dots({"seed report": seed},
                             title=f"Sage2 phases, {labkit.report.label(seed)}: seed report (device not recorded)")
session.save_figure(fig, "seed_phase_dots")

# %% [markdown]
# Tail study: the mainloop's p50 with min..max bars against the swept length, and the tile
# efficiency along it. The line under the figure sets the seed's run-to-run drift (the full shape
# timed more than once) beside each tail point's difference from its own sweep's full shape.

# %%
fig = labkit.plot.tail_study(seed, title=f"Sage2 tail study, {labkit.report.label(seed)}: seed report "
                                         "(device not recorded)")
session.save_figure(fig, "seed_tail_study")
print(labkit.wrapped(labkit.report.tail_note(seed)))
seed_tails = labkit.report.tail_table(seed)
session.save_table(seed_tails, "seed_tail_study")
labkit.report.shown_tails(seed_tails)  # data/seed_tail_study.csv keeps every column
