"""The sm90 mainloop (kernels/attn_fwd_sm90.cu, sm_90a): its tensor maps and 512-byte parameter block.

``Sm90Mainloop(plan)`` encodes the three tensor maps over the plan's quantized operands once (q8 and k8
as 2-D maps of 128-byte rows, v8 as a 3-D map of [tokens, kv heads, batch x dims]; 128-byte swizzle,
boxes of 192 q rows, 128 keys, 128 tokens) and launches the kernel with ``cuLaunchKernelEx`` on CuPy's
current stream, the block packed as the kernel's ``Params``.
"""

import ctypes
import math
import struct

from ...cuda import launch, load_function
from ...errors import ArgumentError
from ...kernels import compile_cubin, kernel_path
from ...manifest import tensormap
from ...manifest.model import TensorMapField

ENTRY = "attn_fwd_sm90"
SOURCE = kernel_path(__file__, "attn_fwd_sm90.cu")
PARAM_BYTES = 512  # sizeof(Params): 3 maps, 4 pointers, 3 strides, 6 ints and a float, padded to 64
ARCH = "sm_90a"  # wgmma and setmaxnreg exist only for the arch-specific target
# registers per thread after setmaxnreg (PRODUCER_REGS / CONSUMER_REGS of the kernel): the cubin records only
# the launch's 128 (512 threads, one CTA per SM)
SETMAXNREG = {"producer_warpgroup": 24, "consumer_warpgroups": 160}


def _map(address: int, dims: tuple[int, ...], strides: tuple[int, ...], box: tuple[int, ...]) -> bytes:
    tm = TensorMapField(at=0, param=0, dtype="u8", dims=dims, strides=strides, box=box, swizzle=128,
                        l2_promotion=256, element_strides=(1,) * len(dims))
    return tensormap.encode(tm, dims, address)


class Sm90Mainloop:
    """attn_fwd_sm90 over one Sage2Plan's buffers (built with ``Schedule.sm90()``)."""

    def __init__(self, plan, options: tuple[str, ...]):
        x = plan.inputs  # Sage2Plan checked the GPU (sm_90) before building this
        if plan.kernel_head_dim != 128:  # Sage2Plan pads every head_dim to 128 for this schedule
            raise ArgumentError(f"the sm90 mainloop runs 128-channel tiles, not {plan.kernel_head_dim}")
        self.plan = plan
        self.function, self._module = load_function(compile_cubin(SOURCE, arch=ARCH, options=options).image, ENTRY,
                                                    plan.schedule.dynamic_smem_bytes(128))
        b, hq, hk, nq, nk = x.batch, x.heads_q, x.heads_kv, plan.padded_q_len, plan.padded_kv_len
        self.maps = (_map(plan.q8.data.ptr, (128, b * hq * nq), (128,), (128, plan.schedule.cta_q)),
                     _map(plan.k8.data.ptr, (128, b * hk * nk), (128,), (128, 128)),
                     _map(plan.v8.data.ptr, (nk, hk, b * 128), (nk, hk * nk), (128, 1, 128)))
        self._blobs = {}

    def params(self, q_len: int, kv_len: int, out) -> bytes:
        p, x = self.plan, self.plan.inputs
        ob, on, oh = x.strides(out)
        tail = struct.pack("<QQQQqqqiiiiiif", p.q_scale.data.ptr, p.k_scale.data.ptr, p.v_scale.data.ptr,
                           out.data.ptr, ob, on, oh, q_len, kv_len, p.padded_q_len, p.padded_kv_len, x.heads_kv,
                           x.head_dim, p.sm_scale * math.log2(math.e))
        blob = b"".join(self.maps) + tail
        return blob + bytes(PARAM_BYTES - len(blob))

    def launch(self, q_len: int, kv_len: int, out) -> None:
        key = (q_len, kv_len, out.data.ptr)
        if key not in self._blobs:
            blob = (ctypes.c_ubyte * PARAM_BYTES).from_buffer_copy(self.params(q_len, kv_len, out))
            self._blobs[key] = (blob, (ctypes.c_void_p * 1)(ctypes.addressof(blob)))
        _, params = self._blobs[key]
        x, s = self.plan.inputs, self.plan.schedule
        launch(self.function, (-(-q_len // s.cta_q), x.heads_q, x.batch), (s.threads_per_cta, 1, 1),
               s.dynamic_smem_bytes(128), params, ENTRY)
