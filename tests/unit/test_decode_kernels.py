"""The decode kernels' timeline switch: without it the machine code is the kernel without the recorder;
with it, per-CTA records at byte 352 of the same 384-byte parameter block."""

import re

import pytest

import labkit.workloads.decode as decode_package
from labkit.kernels import compile_cubin, kernel_path
from labkit.manifest.elf import _sections, read_cubin
from labkit.workloads.decode import DecodeGeometry, kernel_build

SEED_LIKE = DecodeGeometry(batch=2, heads_q=24, heads_kv=4, head_dim=256, page_size=64, max_pages=11, num_pages=22)
WIDE = DecodeGeometry(3, 16, 2, 128, 16, 9, 30, 8)


def _text(image: bytes) -> bytes:
    _, off, size, _ = _sections(image)[".text.paged_decode"]
    return image[off:off + size]


def _without_recorder(source_text: str, header_text: str) -> str:
    """The kernel as it would read with no recorder at all: the header inlined, every LABKIT_TIMELINE
    block and the macros gone, CTA_RETURN spelled ``return``."""
    header = re.sub(r"#ifdef LABKIT_TIMELINE\n.*?#endif\n", "", header_text, flags=re.S)
    header = re.sub(r"#ifndef LABKIT_TIMELINE\n.*?#endif\n", "", header, flags=re.S)
    text = source_text.replace('#include "paged_decode.cuh"', header)
    text = re.sub(r"^\s*TIMELINE_START\(\);\n", "", text, flags=re.M)
    out = text.replace("CTA_RETURN", "return")
    assert "TIMELINE" not in re.sub(r"//.*", "", out)
    return out


@pytest.mark.parametrize(("geometry", "knobs"), [(SEED_LIKE, {}), (SEED_LIKE, dict(warps=8, dim_warps=2)), (WIDE, {})],
                         ids=["mma", "mma-pairs", "fma"])
def test_uninstrumented_decode_kernel_is_the_code_without_the_recorder(geometry, knobs):
    kb = kernel_build(geometry, **knobs)
    src = kernel_path(decode_package.__file__, kb.source)
    header = src.with_name("paged_decode.cuh").read_text()
    now = compile_cubin(src, arch="sm_90", options=kb.options())
    bare = compile_cubin(src, arch="sm_90", options=kb.options(), code=_without_recorder(src.read_text(), header))
    assert _text(now.image) == _text(bare.image)
    timed = read_cubin(compile_cubin(src, arch="sm_90",
                                     options=kernel_build(geometry, timeline=True, **knobs).options()).image)
    plain = read_cubin(now.image)
    assert timed.entries["paged_decode"].param_bytes == plain.entries["paged_decode"].param_bytes == 384
    assert _text(now.image) != _text(compile_cubin(src, arch="sm_90", options=(*kb.options(),
                                                                                 "-DLABKIT_TIMELINE")).image)
