"""wg_patch.py: labkit's decode builds, with -DWGMMA=1 compiled from .dbg/s68/wg.cu (the kernel with a wgmma stage
math for the 4-warp one-warpgroup d128 builds) for sm_90a; everything else through labkit's own path."""
import importlib
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))
from labkit.kernels import compile_cubin, kernel_path  # noqa: E402

decode_build = importlib.import_module("labkit.workloads.decode.build")
EXTRA: list[str] = []
WG_TEXT = (Path(__file__).parent / "wg.cu").read_text()


def compile_kernel(kb, arch="sm_90"):
    path = kernel_path(decode_build.__file__, kb.source)
    if kb.source != "paged_decode_mma.cu" or not EXTRA:
        return compile_cubin(path, arch=arch, options=kb.options())
    return compile_cubin(path, arch="sm_90a", options=(*kb.options(), *EXTRA), code=WG_TEXT)


decode_build.compile_kernel = compile_kernel
