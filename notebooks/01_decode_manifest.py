# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 01 - Decode launch manifest
#
# Validate a schema_version 4 launch manifest, show its launch plan and the parameter block
# byte by byte, and run it when this GPU can. The seed's cubin is sm_100f (B200/B300 class),
# so on an H200 the notebook says why it cannot run, and proves the same runner path with
# labkit's own TMA proof kernel instead.

# %% tags=["parameters"]
source: str = "auto"  # auto (live if a GPU is usable, else recorded), live, or recorded
out_dir: str = ""  # where data/ and figs/ go (the runner sets it)
manifest: str = "data/trtllm_gen_decode_manifest_v4.json"  # manifest to check, relative to the repo root
manifest_vars: dict = {"tokens": 2}  # values of manifest vars; the others take their max
iterations: int = 50  # timed samples per call
proof_rows: int = 4099  # proof kernel input rows (a tail on purpose)
proof_cols: int = 1000  # proof kernel input columns (x 4 B must be a multiple of 16)

# %%
import labkit
from labkit.manifest.report import render_check
from labkit.manifest.session import field_frame, run_proof, try_run
from labkit.session import Session

labkit.setup_logging("WARNING")
session = Session.start("01_decode_manifest", source=source, out_dir=out_dir)
path = labkit._env.repo_root() / manifest
values = {k: int(v) for k, v in manifest_vars.items()}

# %% [markdown]
# ## Validation report and launch plan (no GPU needed)

# %%
result = labkit.manifest.check(labkit.manifest.load(path), vars=values)
print(render_check(result, None, "static check: the device comes below"))

# %% [markdown]
# ## The parameter block

# %%
plan = result.plans[0]
fig = labkit.plot.param_block(plan.rows, plan.pack_size, title=f"{plan.entry[:60]}: {plan.pack_size} B")
session.save_figure(fig, "param_block")
fields = field_frame(result)
session.save_table(fields, "param_block")
fields

# %% [markdown]
# ## Grid and scratch

# %%
launch = result.manifest.ops[plan.op].launches[plan.launch_index]
print(f"grid {list(plan.grid)} = {plan.grid[0] * plan.grid[1] * plan.grid[2]} CTAs of {list(plan.block)} threads, "
      f"{plan.shared_mem} B dynamic + {plan.static_smem} B static shared memory")
for s in result.manifest.ops[plan.op].scratch.values():
    print(f"scratch {s.name}: {s.dtype}{list(s.shape)} = {s.nbytes:,} B")

# %% [markdown]
# ## On this GPU

# %%
device_run = session.measure("device_run", try_run, path, vars=values, iterations=iterations)
if device_run["ran"]:
    for label, t in device_run["timings"].items():
        print(f"{label}: p50 {t['stats']['p50_s'] * 1e6:.2f} us over {t['stats']['count']} samples")
else:
    print(f"not run on {device_run['device']} ({device_run['arch']}): {device_run['reason']}")
    print("\n".join(device_run["errors"]))

# %% [markdown]
# ## The same runner path on this GPU: labkit's TMA proof kernel
# One by-value parameter block with a TMA tensor map, pointers, i32 constants and a scratch
# counter, built with NVRTC and run from a generated schema_version 4 manifest; every output
# element is compared with a float64 reference.

# %%
proof = session.measure("proof_run", run_proof, proof_rows, proof_cols, iterations=iterations)
print(f"proof kernel on {proof['device']}: {proof['rows']} x {proof['cols']}, {proof['elements_checked']:,} elements "
      f"checked, max |err| {proof['max_abs_err']:.2e}, unwritten {proof['nan_or_unwritten']}, "
      f"{proof['done']}/{proof['ctas']} CTAs counted; p50 {proof['p50_us']:.2f} us = {proof['GBps']:.0f} GB/s")
