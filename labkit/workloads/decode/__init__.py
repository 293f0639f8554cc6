"""labkit's own paged-KV split-KV decode attention for sm_90, run through the manifest runner."""

from .build import build, build_plan, manifest_dict
from .geometry import DecodeGeometry, KernelBuild, default_splits, kernel_build
from .inputs import DecodeInputs, check_call, make_inputs
from .plan import CallPlan, plan_call
from .reference import decode_reference
from .run import DecodeRun, geometry_for, run_decode

# plan_call and build_plan too: an API walk found the plan and its build only in submodules
__all__ = ["CallPlan", "DecodeGeometry", "DecodeInputs", "DecodeRun", "KernelBuild", "build", "build_plan",
           "check_call", "decode_reference", "default_splits", "geometry_for", "kernel_build", "make_inputs",
           "manifest_dict", "plan_call", "run_decode"]
