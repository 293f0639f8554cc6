# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 01 - Decode launch manifest
#
# Validate a schema_version 4 launch manifest, show its launch plan and the parameter block
# byte by byte, and run it when the GPU can: this machine's (live) or, in recorded mode, the recorded run's, which
# the GPU sections name. The seed's cubin is sm_100f (B200/B300 class), so on a Hopper GPU (H100, H200) the notebook
# says why it cannot run, and proves the same runner path with labkit's own TMA proof kernel instead.

# %% tags=["parameters"]
from labkit.params import Choice, File, Int, IntDict, Text  # parameter types: `labkit nb params 01` lists them

source: Choice("auto", "live", "recorded") = "auto"  # auto (live if a GPU is usable, else recorded), live, recorded
out_dir: Text(measured=False) = ""  # where data/ and figs/ go (the runner sets it)
recorded_root: Text(measured=False) = ""  # recorded runs to show (default data/runs; relative: from the repo root)
manifest: File(reads="manifest") = "data/trtllm_gen_decode_manifest_v4.json"  # manifest to check
manifest_vars: IntDict(1, 2147483647, vars_of="manifest") = {"tokens": 2}  # var values (name=N,...); others: their max
iterations: Int(1, 100000) = 50  # timed samples per call
proof_rows: Int(1, 1048576) = 4099  # proof kernel input rows (a tail on purpose)
proof_cols: Int(4, 65536, multiple_of=4) = 1000  # proof kernel input columns (rows of x 4 B, a multiple of 16 B)

# %%
import labkit
from labkit.manifest.report import render_check
from labkit.manifest.session import device_run_lines, field_frame, proof_line, run_proof, try_run
from labkit.session import Session

labkit.setup_logging("WARNING")
session = Session.start("01_decode_manifest", source=source, out_dir=out_dir, runs_root=recorded_root, parameters={
    "manifest": manifest, "manifest_vars": manifest_vars, "iterations": iterations, "proof_rows": proof_rows,
    "proof_cols": proof_cols})
path = labkit.repo_path(manifest)

# %% [markdown]
# ## Validation report and launch plan (no GPU needed)

# %%
result = labkit.manifest.check(labkit.manifest.load(path), vars=manifest_vars)
# the parameter block's size only: its table follows
print(labkit.wrapped(render_check(result, None, "static check: the device comes below", param_block=False)))

# %% [markdown]
# ## The parameter block

# %%
plan = result.plans[0]
title = f"{plan.entry}\nparameter block: {plan.pack_size} B (from the manifest, no GPU)"
fig = labkit.plot.param_block(plan.rows, plan.pack_size, title=title)
session.save_figure(fig, "param_block")
fields = field_frame(result)
session.save_table(fields, "param_block")
fields

# %% [markdown]
# ## Grid and scratch

# %%
launch = result.manifest.ops[plan.op].launches[plan.launch_index]
print(labkit.wrapped(f"grid {list(plan.grid)} = {plan.grid[0] * plan.grid[1] * plan.grid[2]} CTAs of "
                     f"{list(plan.block)} threads, {plan.shared_mem} B dynamic + {plan.static_smem} B static shared "
                     "memory"))
for s in result.manifest.ops[plan.op].scratch.values():
    print(f"scratch {s.name}: {s.dtype}{list(s.shape)} = {s.nbytes:,} B")

# %% [markdown]
# ## On the GPU

# %%
print(labkit.wrapped(f"The seed manifest, {session.measured_on()}:"))
device_run = session.measure("device_run", try_run, path, vars=manifest_vars, iterations=iterations,
                             load=device_run_lines)
print(labkit.wrapped("\n".join(device_run)))

# %% [markdown]
# ## The same runner path on the same GPU: labkit's TMA proof kernel
# One by-value parameter block with a TMA tensor map, pointers, i32 constants and a scratch
# counter, built with NVRTC and run from a generated schema_version 4 manifest; every output
# element is compared with a float64 reference.

# %%
proof = session.measure("proof_run", run_proof, proof_rows, proof_cols, iterations=iterations, load=proof_line)
print(labkit.wrapped(proof))
