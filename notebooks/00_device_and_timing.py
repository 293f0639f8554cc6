# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 00 - Device and timing
#
# What GPU is this, how fast does it copy, what does an empty launch cost; and the user's
# Sage2 seed report, loaded and plotted. Live on a GPU; with none, the numbers come from the
# latest recorded run in `data/runs/` (the first output says which).

# %% tags=["parameters"]
source: str = "auto"  # auto (live if a GPU is usable, else recorded), live, or recorded
out_dir: str = ""  # where data/ and figs/ go (the runner sets it; empty: runs/<stamp>-<name>)
copy_mib: int = 1024  # size of the device-to-device copy probe, MiB
launches: int = 2000  # empty launches per launch-overhead measurement
seed_report: str = "data/sage2_report_seed.json"  # Sage2 report to plot, relative to the repo root

# %%
import labkit
from labkit.session import Session

labkit.setup_logging("WARNING")
session = Session.start("00_device_and_timing", source=source, out_dir=out_dir)

# %% [markdown]
# ## The device

# %%
device = session.measure("device", lambda: labkit.device.describe())
labkit.device.DeviceInfo.from_dict(device).to_frame()

# %% [markdown]
# ## Copy bandwidth (device to device, cold L2, bytes read + written)

# %%
copy = session.measure("copy_bandwidth", labkit.probes.copy_bandwidth, copy_mib << 20)
copy_table = labkit.probes.copy_table(copy)
session.save_table(copy_table, "copy_bandwidth")
copy_table

# %% [markdown]
# ## Empty-launch overhead
# Host enqueue cost, GPU time per launch back to back and in a CUDA graph, one isolated
# launch (enqueue hidden), and a launch-then-synchronize round trip.

# %%
overhead = session.measure("launch_overhead", labkit.probes.launch_overhead, launches)
fig = labkit.plot.value_bars({k: v for k, v in overhead.items() if k.endswith("_us")},
                             xlabel="time per launch [us]", title=f"empty kernel, {device['name']}")
session.save_figure(fig, "launch_overhead")

# %% [markdown]
# ## The Sage2 seed report

# %%
seed = labkit.report.load(labkit._env.repo_root() / seed_report)
print(labkit.report.phase_table(seed))
fig = labkit.plot.phase_bars({"seed": seed})
session.save_figure(fig, "seed_phase_bars")

# %% [markdown]
# Tail study: the mainloop's p50 with min..max bars, and the q-row efficiency
# `q_len / (q_ctas_per_head * cta_q)`. Run-to-run drift in the seed (the same
# configuration at 237.1, 239.8 and 240.4 ms) is larger than the tail effect.

# %%
fig = labkit.plot.tail_study(seed)
session.save_figure(fig, "seed_tail_study")
session.save_table(seed.tail_frame(), "seed_tail_study")
