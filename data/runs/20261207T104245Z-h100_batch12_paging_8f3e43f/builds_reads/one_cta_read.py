"""(s96: the 20261204T202000Z record's script at the batch 12-13 calls of an H100, where the plan runs one 8-warp
2-stage CTA per unit and cuDNN leads by 3.5-6 %; 16 x 8k, one 4-warp 3-stage CTA per unit, as a control.)
one_cta_read.py: at the one-split d128 calls where labkit trails cuDNN by 2-3 % (16 x 2k-8k, 32 x 2k, and 64 x 1k's
one-stage build), is the ring's loader the difference? Pure reads of each unit's pages (no math) by the plan's CTAs,
beside labkit's plan and cuDNN (SDPA on the same K/V gathered contiguous), cold, interleaved, shuffled, p50 of 40,
three rounds.
  bulk S   thread 0 issues two 1-D bulk copies (cp.async.bulk, 16 KB: a page's K slice and V slice) per slot of a
           ring of S slots (32 KB each); every thread waits the slot's mbarrier, a __syncthreads frees it (the plan's
           ring, with 1-D copies for its 4-D boxes)
  cpa S    the same ring, filled by cp.async.cg 16 B from all 128 threads, counted on the slot's mbarrier
  cpa-c S  cp.async as cuDNN reads: from the contiguous [B, N, Hkv, D] copy, 64 tokens x 256 B per K or V slot
  plan     labkit's own call; cudnn: SDPA's cuDNN backend on the contiguous copy (its own kernels)
CTAs: one per (KV head, sequence), 128 threads, reading the unit's pages in order (the plan's decomposition here)."""
import json
import os
import sys
import time

sys.path.insert(0, os.getcwd())
from labkit.cuda import cupy, torch_on_cupy_stream  # noqa: E402
from labkit.timing import interleave  # noqa: E402
from labkit.workloads.decode import bench as B  # noqa: E402
from labkit.workloads.decode.geometry import kernel_label  # noqa: E402
from labkit.workloads.decode.peers import gather_contiguous  # noqa: E402

OUT = os.environ.get("R", "/tmp")
cp = cupy()
SRC = r'''
#define SLICE 16384
#define SLOT 32768
__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void wait_bar(unsigned long long* bar, unsigned parity) {
    unsigned ready = 0;
    while (!ready)
        asm volatile("{ .reg .pred P; mbarrier.try_wait.parity.shared::cta.b64 P, [%1], %2; selp.u32 %0, 1, 0, P; }"
                     : "=r"(ready) : "r"(sa(bar)), "r"(parity) : "memory");
}
// MODE 0: bulk from the pool; 1: cp.async from the pool; 2: cp.async from the contiguous copy
template <int MODE>
__device__ __forceinline__ void ring(const char* __restrict__ k, const char* __restrict__ v, const int* __restrict__ table,
        int max_pages, int hkv, long long page_stride, long long head_stride, int slots, unsigned* sink) {
    extern __shared__ __align__(1024) unsigned char ring_s[];
    __shared__ __align__(8) unsigned long long bar[8];
    const int head = blockIdx.x, seq = blockIdx.y;
    const int* tb = table + (long long)seq * max_pages;
    const int nt = blockDim.x;
    if (threadIdx.x == 0) {
        for (int s = 0; s < slots; ++s)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sa(&bar[s])), "r"(MODE == 0 ? 1 : nt));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    auto issue = [&](int i) {
        const int slot = i % slots;
        unsigned char* dst = ring_s + slot * SLOT;
        if (MODE == 0) {
            if (threadIdx.x == 0) {
                const long long at = (long long)tb[i] * page_stride + head * head_stride;
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(&bar[slot])), "r"(SLOT) : "memory");
                asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                             ::"r"(sa(dst)), "l"(k + at), "r"(SLICE), "r"(sa(&bar[slot])) : "memory");
                asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                             ::"r"(sa(dst + SLICE)), "l"(v + at), "r"(SLICE), "r"(sa(&bar[slot])) : "memory");
            }
        } else if (MODE == 1) {
            const long long at = (long long)tb[i] * page_stride + head * head_stride;
            for (int c = threadIdx.x; c < 2 * SLICE / 16; c += nt) {
                const char* src = (c < SLICE / 16 ? k : v - SLICE) + at + c * 16;
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa(dst + c * 16)), "l"(src) : "memory");
            }
            asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(sa(&bar[slot])) : "memory");
        } else {  // contiguous [B, N, Hkv, 128]: token t's row of this head at ((seq * N + t) * hkv + head) * 256 B
            const long long n = (long long)max_pages * 64;
            for (int c = threadIdx.x; c < 2 * SLICE / 16; c += nt) {
                const int kv = c / (SLICE / 16), r = (c % (SLICE / 16)) / 16, ch = c % 16;
                const long long t = (long long)i * 64 + r;
                const char* src = (kv ? v : k) + ((seq * n + t) * hkv + head) * 256 + ch * 16;
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa(dst + c * 16)), "l"(src) : "memory");
            }
            asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(sa(&bar[slot])) : "memory");
        }
    };
    for (int i = 0; i < slots && i < max_pages; ++i) issue(i);
    unsigned acc = 0;
    for (int i = 0; i < max_pages; ++i) {
        wait_bar(&bar[i % slots], (i / slots) & 1);
        acc ^= reinterpret_cast<const unsigned*>(ring_s + (i % slots) * SLOT)[threadIdx.x * 4];
        __syncthreads();
        if (i + slots < max_pages) issue(i + slots);
    }
    if (acc == 0x9e3779b9u) sink[0] = acc;
}
#define K_(name, M) extern "C" __global__ void __launch_bounds__(128) name(const char* k, const char* v, const int* table, \
        int max_pages, int hkv, long long ps, long long hs, int slots, unsigned* sink) { \
    ring<M>(k, v, table, max_pages, hkv, ps, hs, slots, sink); }
K_(bulk_ring, 0)
K_(cpa_ring, 1)
K_(cpac_ring, 2)
'''
mod = cp.RawModule(code=SRC, options=("-std=c++17",))
K = {n: mod.get_function(n) for n in ("bulk_ring", "cpa_ring", "cpac_ring")}
for f in K.values():
    f.max_dynamic_shared_size_bytes = 4 * 32768
sink = cp.zeros(1, dtype=cp.uint32)
results = []
t0 = time.time()


def point(batch, kv_len, slot_counts):
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    with B.shape_runner(batch, kv_len, 128) as (runner, plan, _):
        runner.run_once()
        hkv, P, D = 8, 64, 128
        kpool, vpool, table = runner.buffers["k_pool"], runner.buffers["v_pool"], runner.buffers["table"]
        max_pages = kv_len // P
        assert kpool.shape[1:] == (hkv, P, D), kpool.shape
        kc, vc = (gather_contiguous(runner.buffers[n], table, batch, kv_len) for n in ("k_pool", "v_pool"))
        as_t = lambda a: torch.from_dlpack(a.view(cp.int16)).view(torch.bfloat16)  # noqa: E731
        q = as_t(runner.buffers["q"]).view(batch, 1, 32, D).transpose(1, 2)
        kt, vt = (as_t(x).transpose(1, 2) for x in (kc, vc))
        cp.cuda.get_current_stream().synchronize()

        def sdpa():
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                return torch.nn.functional.scaled_dot_product_attention(q, kt, vt, enable_gqa=True)
        ps, hs = hkv * P * D * 2, P * D * 2
        grid = (hkv, batch)
        fns = {"plan": lambda: runner.launch_call(0), "cudnn": torch_on_cupy_stream(sdpa)}
        for s in slot_counts:
            for kind, src in (("bulk", (kpool, vpool)), ("cpa", (kpool, vpool)), ("cpac", (kc, vc))):
                fns[f"{kind} {s}"] = (lambda kind=kind, s=s, src=src: K[f"{kind}_ring"](
                    grid, (128,), (*src, table, cp.int32(max_pages), cp.int32(hkv), cp.int64(ps), cp.int64(hs),
                                   cp.int32(s), sink), shared_mem=s * 32768))
        for f in fns.values():
            f()
        cp.cuda.get_current_stream().synchronize()
        nbytes = 2 * batch * kv_len * hkv * D * 2
        print(f"point {batch}x{kv_len} d128: plan {kernel_label(plan.kernel)} splits {plan.splits}, CTAs {grid}",
              flush=True)
        for rnd in range(3):
            timing = interleave(fns, iterations=40, warmup=1, mode="cold", order="shuffle", seed=rnd)
            base = timing["plan"].stats.p50_s
            for name, t in timing.items():
                row = {"point": f"{batch}x{kv_len} d128", "round": rnd, "variant": name, "p50_us": t.stats.p50_s * 1e6,
                       "TBps": nbytes / t.stats.p50_s / 1e12, "vs_plan": t.stats.p50_s / base - 1}
                results.append(row)
                print(f"r{rnd} {row['point']:14s} {name:8s} {row['p50_us']:8.2f} us {row['TBps']:6.3f} TB/s "
                      f"{100 * row['vs_plan']:+6.1f} %", flush=True)
        del runner, kc, vc, kt, vt, q


for args in ((12, 8192, (2, 3, 4)), (12, 16384, (2, 3, 4)), (13, 8192, (2, 4)), (12, 32768, (2, 4)),
             (16, 8192, (2, 4))):
    try:
        point(*args)
    except Exception as exc:  # noqa: BLE001
        print(f"point {args[:2]}: {type(exc).__name__}: {exc}", flush=True)
    with open(f"{OUT}/one_cta_read.json", "w") as f:
        json.dump(results, f, indent=1)
    print(f"elapsed {time.time() - t0:.0f} s", flush=True)
