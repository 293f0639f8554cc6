"""The kernels' ``tile_offset`` (paged_decode.cuh) against where TMA puts each element: the function is compiled for
the host (a C++ compiler, no GPU) and every (token, dim) of a stage compared with a model of the boxes that
``load_stage`` asks for, each written densely in box order (dim 0 fastest) and moved by the 128-byte swizzle (the
16-byte chunk XOR the 128-byte line, within 1024-byte atoms). A layout that reads an element from anywhere else gives
wrong attention on the GPU; here it fails without one. The 4-D and wide boxes' layouts ran exact attention on the H200
(tests/gpu/test_decode_gpu.py), so they also check the model; the row boxes' had not run on a GPU when this caught
their first tile_offset taking the swizzle phase from the token. Padded rows (no swizzle, 272-byte rows) are checked
the same way, and for what they are for: ldmatrix's 8 rows of one 16-byte column in 8 different bank groups."""

import re
import shutil
import subprocess

import numpy as np
import pytest

import labkit.workloads.decode as decode_package
from labkit.kernels import kernel_path

CXX = shutil.which("g++") or shutil.which("clang++")


def _tile_offsets(tmp_path, head_dim: int, tokens: int, box_rows: int, wide: bool, rows: bool,
                  padded: bool = False) -> np.ndarray:
    """tile_offset(t, d) for every token t of a stage and every dim d, from the header's own function text."""
    header = kernel_path(decode_package.__file__, "paged_decode.cuh").read_text()
    body = re.search(r"__device__ __forceinline__ unsigned tile_offset\(int t, int d\) \{\n.*?\n\}\n", header, re.S)
    assert body, "paged_decode.cuh no longer defines tile_offset(int t, int d) as this test reads it"
    src = tmp_path / "tile.cpp"
    src.write_text(f"""#include <cstdio>
#define __device__
#define __forceinline__ inline
#define WIDE_BOXES {int(wide)}
#define ROW_BOXES {int(rows)}
#define PADDED_ROWS {int(padded)}
constexpr unsigned ROW_PITCH = ({head_dim} + 8) * 2;
constexpr int PARTS = {head_dim // 64}, TOKENS_PER_STAGE = {tokens}, BOX_ROWS = {box_rows};
{body.group(0)}
int main() {{
    for (int t = 0; t < TOKENS_PER_STAGE; ++t)
        for (int d = 0; d < {head_dim}; ++d) std::printf("%u\\n", tile_offset(t, d));
}}
""")
    exe = tmp_path / "tile"
    subprocess.run([CXX, "-std=c++17", "-O1", "-o", str(exe), str(src)], check=True, capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return np.array(out.split(), dtype=np.int64).reshape(tokens, head_dim)


def _tma_placement(head_dim: int, tokens: int, box_rows: int, wide: bool, rows: bool) -> np.ndarray:
    """Byte offset in the stage tile of (token, dim) as load_stage's boxes land: 4-D boxes [part][rows], wide boxes
    [box][part][rows], row boxes [box][rows][part], 128 bytes per (row, part) line, then the 128-byte swizzle."""
    parts = head_dim // 64
    t, d = np.meshgrid(np.arange(tokens), np.arange(head_dim), indexing="ij")
    part, box, r = d // 64, t // box_rows, t % box_rows
    if rows:
        line = box * box_rows * parts + r * parts + part
    elif wide:
        line = box * parts * box_rows + part * box_rows + r
    else:
        line = part * tokens + box * box_rows + r
    linear = line * 128 + (d % 64) * 2
    return linear ^ (((linear >> 7) & 7) << 4)


@pytest.mark.skipif(CXX is None, reason="no host C++ compiler (g++ or clang++) to run tile_offset on the CPU")
@pytest.mark.parametrize(("head_dim", "tokens", "box_rows"), [(128, 64, 64), (128, 128, 64), (128, 64, 16),
                                                              (128, 128, 32), (256, 64, 64), (256, 32, 32)])
@pytest.mark.parametrize("layout", ["4d", "wide", "rows"])
def test_tile_offset_reads_each_element_where_the_tma_boxes_put_it(tmp_path, head_dim, tokens, box_rows, layout):
    wide, rows = layout == "wide", layout == "rows"
    got = _tile_offsets(tmp_path, head_dim, tokens, box_rows, wide, rows)
    want = _tma_placement(head_dim, tokens, box_rows, wide, rows)
    bad = np.argwhere(got != want)
    assert bad.size == 0, (f"{len(bad)} of {got.size} (token, dim) read from the wrong byte; first {tuple(bad[0])}: "
                           f"tile_offset {got[tuple(bad[0])]}, TMA put it at {want[tuple(bad[0])]}")
    assert sorted(got.ravel() // 2) == list(range(got.size))  # every element once, the tile dense


@pytest.mark.skipif(CXX is None, reason="no host C++ compiler (g++ or clang++) to run tile_offset on the CPU")
@pytest.mark.parametrize(("tokens", "box_rows"), [(64, 64), (128, 64), (64, 16), (128, 32)])
def test_padded_rows_read_where_the_unswizzled_boxes_put_them_without_bank_conflicts(tmp_path, tokens, box_rows):
    """PADDED_ROWS: 4-D boxes of 136 dims x box_rows land dense, unswizzled, one after another, so token t's dim d is at
    t x 272 + 2d; and the 16 bytes at one column of any 8 consecutive tokens (what one ldmatrix phase reads: keys for
    K, dims for V) fall in 8 different 16-byte bank groups."""
    got = _tile_offsets(tmp_path, 128, tokens, box_rows, False, False, padded=True)
    t, d = np.meshgrid(np.arange(tokens), np.arange(128), indexing="ij")
    want = (t // box_rows) * box_rows * 272 + (t % box_rows) * 272 + d * 2
    bad = np.argwhere(got != want)
    assert bad.size == 0, f"{len(bad)} of {got.size} (token, dim) read from the wrong byte; first {tuple(bad[0])}"
    assert len(np.unique(got)) == got.size and got.max() < tokens * 272
    groups = (got[:, ::8] // 16) % 8  # the bank group of each 16-byte column, per token
    for t0 in range(0, tokens, 8):
        for col in range(groups.shape[1]):
            assert len(set(groups[t0:t0 + 8, col])) == 8, (t0, col, groups[t0:t0 + 8, col])
