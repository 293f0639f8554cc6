"""The proof kernel: labkit's own cubin and its schema_version 4 manifest, generated here.

The H200 cannot run the seed's sm_100f cubin, so ``kernels/tma_scale_proof.cu`` exercises the
same runner path on sm_90: a by-value parameter block with a TMA tensor map, pointers, i32
constants and a scratch counter. ``build(dir, rows, cols)`` compiles it with NVRTC (no GPU
needed) into ``dir`` and returns the manifest path; ``reference()`` is its float64 result.
"""

import hashlib
import struct
from pathlib import Path

import numpy as np

from .._write import dumps
from ..kernels import compile_cubin, kernel_path

ENTRY = "tma_scale_proof"
TILE = 32
PARAM_BYTES = 192
SCALE = 0.5


def manifest_dict(cubin_name: str, sha256: str, rows: int, cols: int) -> dict:
    f32_bits = struct.unpack("<i", struct.pack("<f", SCALE))[0]
    return {
        "schema_version": 4,
        "model": "labkit-tma-scale-proof",
        "vars": {"rows": {"max": rows}, "cols": {"max": cols}, "batch": {"max": 1}},
        "buffers": {
            "x": {"dtype": "f32", "shape": [rows, cols], "kind": "input"},
            "bias": {"dtype": "f32", "shape": [cols], "kind": "input"},
            "out": {"dtype": "f32", "shape": [rows, cols], "kind": "output"},
            "done": {"dtype": "i32", "shape": [1], "kind": "output"},
        },
        "modules": {"proof": {"source": cubin_name, "sha256": sha256}},
        "ops": {"scale_rows": {
            "params": ["out buffer<f32>", "in buffer<f32>", "in buffer<f32>", "i32", "i32", "out buffer<i32>"],
            "impl": {
                "scratch": {"counter": {"dtype": "u32", "shape": [4]}},
                "launches": [{
                    "module": "proof", "entry": ENTRY, "params": [f"bytes<{PARAM_BYTES}>"],
                    "block": [128, 1, 1], "grid": [-(-cols // TILE), -(-rows // TILE), "batch"], "shared_mem": 0,
                    "args": [{"pack": {"size": PARAM_BYTES, "fields": [
                        {"at": 0, "tensormap": {"param": 1, "dtype": "f32", "dims": [cols, rows],
                                                "strides": [cols * 4], "box": [TILE, TILE], "swizzle": 0,
                                                "l2_promotion": 128}},
                        {"at": 128, "param": 0},
                        {"at": 136, "param": 2},
                        {"at": 144, "param": 3},
                        {"at": 148, "param": 4},
                        {"at": 152, "i32": f32_bits},
                        {"at": 160, "scratch": "counter"},
                        {"at": 168, "param": 5},
                    ]}}],
                }],
            },
        }},
        "programs": {"proof": {"calls": [{"label": "proof/tma_scale", "op": "scale_rows", "args": [
            {"buf": "out"}, {"buf": "x"}, {"buf": "bias"}, {"var": "rows"}, {"var": "cols"}, {"buf": "done"}]}]}},
    }


def build(directory: Path | str, rows: int, cols: int, arch: str = "sm_90") -> Path:
    """Compile the proof kernel for ``arch`` into ``directory`` and write its manifest there.

    ``cols * 4`` must be a multiple of 16 (TMA global stride rule).
    """
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    cubin = compile_cubin(kernel_path(__file__, "tma_scale_proof.cu"), arch=arch)
    name = f"{ENTRY}_{arch}.cubin"
    (d / name).write_bytes(cubin.image)
    sha = hashlib.sha256(cubin.image).hexdigest()
    path = d / f"{ENTRY}_{rows}x{cols}.json"
    path.write_text(dumps(manifest_dict(name, sha, rows, cols), indent=2) + "\n")
    return path


def reference(x: np.ndarray, bias: np.ndarray) -> np.ndarray:
    return x.astype(np.float64) * SCALE + bias.astype(np.float64)[None, :]
