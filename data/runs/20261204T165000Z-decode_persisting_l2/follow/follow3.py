"""Are the lines that outlive labkit's cold flush persisting ones (the device's persisting-L2 set-aside)? cuDNN and labkit
timed (events, as a cold sample) after cuDNN on the same K/V copy, FA3 on the same copy, FA3 on another copy, or
labkit. Shuffled, 14 samples of each, under five pads (each ends with labkit's spin):
  cold              labkit's: a memset of 2 x L2
  reset+cold        cudaCtxResetPersistingL2Cache (the host synced after the sample before), then that memset
  el+demote+cold    a read of 1 x L2 of another buffer with L2::evict_last loads, applypriority evict_normal on its
                    lines, then the memset
  cold_clean        labkit's: the memset, then CuPy's sum over 2 x L2 of another buffer
  reset+cold_clean  the reset, then cold_clean's pad
Usage: python3 follow3.py OUT.json BxN ..."""
import json
import random
import statistics
import sys

import numpy as np
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

import labkit.timing.events as ev
from labkit.cuda import cupy, torch_on_cupy_stream
from labkit.device import describe
from labkit.workloads.decode.bench import shape_runner
from labkit.workloads.decode.peers import gather_contiguous

cp = cupy()
l2 = describe().l2_bytes
SRC = r'''
extern "C" __global__ void read_evict_last(const uint4* __restrict__ p, unsigned long long n16, unsigned* sink) {
    unsigned long long pol;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
    unsigned acc = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n16;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        unsigned a, b, c, d;
        asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                     : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(p + i), "l"(pol));
        acc ^= a ^ b ^ c ^ d;
    }
    if (acc == 0x9e3779b9u) sink[0] = acc;
}
extern "C" __global__ void demote_lines(const unsigned char* p, unsigned long long lines) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < lines;
         i += (unsigned long long)gridDim.x * blockDim.x)
        asm volatile("applypriority.global.L2::evict_normal [%0], 128;" :: "l"(p + i * 128) : "memory");
}
'''
mod = cp.RawModule(code=SRC)
read_el, demote = mod.get_function("read_evict_last"), mod.get_function("demote_lines")
EL_BYTES = l2
from cuda.bindings import runtime as cudart
el_buf = cp.ones(EL_BYTES // 4, dtype=cp.uint32)
sink = cp.zeros(1, dtype=cp.uint32)
print("persisting L2 limit before:", cp.cuda.runtime.deviceGetLimit(0x06), flush=True)
rows = []
for b, n in [tuple(map(int, p.split("x"))) for p in sys.argv[2:]]:
    with shape_runner(b, n, 128) as (ra, _, _):
        ra.run_once()
        t = lambda a: torch.from_dlpack(a.view(cp.int16)).view(torch.bfloat16)
        q4 = t(ra.buffers["q"]).view(b, 1, 32, 128)
        q = q4.transpose(1, 2)
        kv = [tuple(t(gather_contiguous(ra.buffers[x], ra.buffers["table"], b, n)) for x in ("k_pool", "v_pool"))
              for _ in range(2)]
        cp.cuda.Device().synchronize()
        from fa3_fwd_interface import flash_attn_func

        def sdpa(k, v, backend):
            def call():
                with sdpa_kernel([backend]):
                    return torch.nn.functional.scaled_dot_product_attention(q, k.transpose(1, 2), v.transpose(1, 2),
                                                                            enable_gqa=True)
            return torch_on_cupy_stream(call)
        fa3 = lambda k, v: torch_on_cupy_stream(lambda: flash_attn_func(q4, k, v, num_splits=0))
        calls = {"labkit": lambda: ra.launch_call(0), "cudnn": sdpa(*kv[0], SDPBackend.CUDNN_ATTENTION),
                 "fa3": fa3(*kv[0]), "fa3_other": fa3(*kv[1])}
        for c in calls.values():
            c()
        cp.cuda.Device().synchronize()
        print("persisting L2 limit after the peers:", cp.cuda.runtime.deviceGetLimit(0x06), flush=True)
        timed = ("cudnn", "labkit")
        priors = ("cudnn", "fa3", "fa3_other", "labkit")
        for label in ("cold", "reset+cold", "el+demote+cold", "cold_clean", "reset+cold_clean"):
            smp = ev._Sampler.create("cold_clean" if label.endswith("cold_clean") else "cold")
            sms = describe().sm_count

            def pad():
                if label.startswith("reset"):
                    smp.stream.synchronize()
                    assert int(cudart.cudaCtxResetPersistingL2Cache()[0]) == 0
                if label.startswith("el+demote"):
                    read_el((sms * 4,), (512,), (el_buf, np.uint64(EL_BYTES // 16), sink), stream=smp.stream)
                    demote((sms * 4,), (512,), (el_buf, np.uint64(EL_BYTES // 128)), stream=smp.stream)
                smp.pad()
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            times = {(w, p): [] for w in timed for p in priors}
            order = [k for k in times for _ in range(14)]
            random.Random(5).shuffle(order)
            with smp.stream:
                for who, prior in order:
                    calls[prior]()
                    pad()
                    e0.record(smp.stream)
                    calls[who]()
                    e1.record(smp.stream)
                    e1.synchronize()
                    times[(who, prior)].append(cp.cuda.get_elapsed_time(e0, e1) * 1e3)
            for who in timed:
                med = {p: statistics.median(times[(who, p)][2:]) for p in priors}
                print(f"{b:3d} x {n:5d} {label:16s} {who:7s} after: " + "  ".join(f"{p} {med[p]:7.2f}" for p in priors),
                      flush=True)
                rows.append({"batch": b, "kv_len": n, "pad": label, "who": who, "median_us": med,
                             "samples_us": {p: times[(who, p)] for p in priors}})
            del smp
        del q, q4, kv, calls, ra
    torch.cuda.empty_cache()
json.dump(rows, open(sys.argv[1], "w"))
