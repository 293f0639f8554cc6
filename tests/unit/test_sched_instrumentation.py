"""The timeline switch leaves the uninstrumented Sage2 mainloop's machine code as it was."""

import re

from labkit.kernels import compile_cubin
from labkit.manifest.elf import _sections, read_cubin
from labkit.workloads.sage2.plan import KERNELS, build_options
from labkit.workloads.sage2.schedule import Schedule


def _text(image: bytes) -> bytes:
    _, off, size, _ = _sections(image)[".text.attn_fwd"]
    return image[off:off + size]


def test_uninstrumented_mainloop_is_the_code_without_the_switch():
    src = KERNELS["attn_fwd"]
    text = src.read_text()
    stripped = re.sub(r"#ifdef LABKIT_TIMELINE\n.*?#endif\n", "", text, flags=re.S)
    assert stripped != text and "LABKIT_TIMELINE" not in stripped.split("//")[0]
    opts = build_options(128, "bf16", Schedule())
    now = compile_cubin(src, arch="sm_90", options=opts)
    before = compile_cubin(src, arch="sm_90", options=opts, code=stripped)
    assert _text(now.image) == _text(before.image)
    assert read_cubin(now.image).entries["attn_fwd"].registers == read_cubin(before.image).entries["attn_fwd"].registers
    timed = compile_cubin(src, arch="sm_90", options=(*opts, "-DLABKIT_TIMELINE"))
    entry = read_cubin(timed.image).entries["attn_fwd"]
    assert entry.param_bytes == read_cubin(now.image).entries["attn_fwd"].param_bytes + 8  # the records pointer
