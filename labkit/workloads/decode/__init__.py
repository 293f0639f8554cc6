"""labkit's own paged-KV split-KV decode attention for sm_90, run through the manifest runner."""

from .build import build, manifest_dict
from .geometry import DecodeGeometry, KernelBuild, default_splits, kernel_build
from .inputs import DecodeInputs, check_call, make_inputs
from .reference import decode_reference
from .run import DecodeRun, geometry_for, run_decode

__all__ = ["DecodeGeometry", "DecodeInputs", "DecodeRun", "KernelBuild", "build", "check_call", "decode_reference",
           "default_splits", "geometry_for", "kernel_build", "make_inputs", "manifest_dict", "run_decode"]
