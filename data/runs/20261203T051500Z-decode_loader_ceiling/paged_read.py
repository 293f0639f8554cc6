"""paged_read.py: how fast can a CTA read its split's pages, by loader, at the plan's shapes (1 x 8k, 1 x 32k, 8 x 8k
d128; 32/8 heads, page 64, the bench's shuffled pool and page table)? Pure reads, no math, beside labkit's plan, cold,
interleaved, shuffled, p50 of 40, three rounds.
  bulk ef S   thread 0 issues two 1-D bulk copies (cp.async.bulk, 16 KB: a page's K slice and V slice) per slot of a
              ring of S slots (32 KB each), L2 evict_first hint; every thread waits the slot's mbarrier, a
              __syncthreads frees it (the plan's ring, with 1-D copies for its 4-D boxes)
  cpa ef S    the same ring, filled by cp.async.cg 16 B from all 256 threads (coalesced, 512 B per warp instruction),
              completion counted on the slot's mbarrier by cp.async.mbarrier.arrive.noinc
  ldg cs G    no shared memory: 256 threads, ld.global.cs 16 B, G pages' loads in flight per thread
  plan        labkit's own call (its math, merge and split reduction too)
The CTAs are the plan's: (split, KV head, sequence), each reading its split's pages in order."""
import json
import os
import sys
import time

sys.path.insert(0, os.getcwd())
from labkit.cuda import cupy  # noqa: E402
from labkit.timing import interleave  # noqa: E402
from labkit.workloads.decode import bench as B  # noqa: E402
from labkit.workloads.decode.geometry import kernel_label  # noqa: E402

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
template <int MODE>
__device__ __forceinline__ void ring(const char* __restrict__ k, const char* __restrict__ v, const int* __restrict__ table,
        int max_pages, int ppc, int hkv, long long page_stride, long long head_stride, int slots, int ef, unsigned* sink) {
    extern __shared__ __align__(1024) unsigned char ring_s[];
    __shared__ __align__(8) unsigned long long bar[8];
    const int head = blockIdx.x % hkv, split = blockIdx.x / hkv;
    const int* tb = table + (long long)blockIdx.y * max_pages + split * ppc;
    unsigned long long policy;
    if (ef) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    else asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(policy));
    if (threadIdx.x == 0) {
        for (int s = 0; s < slots; ++s)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sa(&bar[s])), "r"(MODE == 0 ? 1 : (int)blockDim.x));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    auto issue = [&](int i) {
        const int slot = i % slots;
        const long long at = (long long)tb[i] * page_stride + head * head_stride;
        unsigned char* dst = ring_s + slot * SLOT;
        if (MODE == 0) {
            if (threadIdx.x == 0) {
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(&bar[slot])), "r"(SLOT) : "memory");
                asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
                             ::"r"(sa(dst)), "l"(k + at), "r"(SLICE), "r"(sa(&bar[slot])), "l"(policy) : "memory");
                asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
                             ::"r"(sa(dst + SLICE)), "l"(v + at), "r"(SLICE), "r"(sa(&bar[slot])), "l"(policy) : "memory");
            }
        } else {
#pragma unroll
            for (int c = threadIdx.x; c < 2 * SLICE / 16; c += 256) {
                const char* src = (c < SLICE / 16 ? k : v - SLICE) + at + c * 16;
                asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;"
                             ::"r"(sa(dst + c * 16)), "l"(src), "l"(policy) : "memory");
            }
            asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(sa(&bar[slot])) : "memory");
        }
    };
    for (int i = 0; i < slots && i < ppc; ++i) issue(i);
    unsigned acc = 0;
    for (int i = 0; i < ppc; ++i) {
        wait_bar(&bar[i % slots], (i / slots) & 1);
        acc ^= reinterpret_cast<const unsigned*>(ring_s + (i % slots) * SLOT)[threadIdx.x * 4];
        __syncthreads();
        if (i + slots < ppc) issue(i + slots);
    }
    if (acc == 0x9e3779b9u) sink[0] = acc;
}
extern "C" __global__ void __launch_bounds__(256) bulk_ring(const char* k, const char* v, const int* table, int max_pages, int ppc,
        int hkv, long long ps, long long hs, int slots, int ef, unsigned* sink) {
    ring<0>(k, v, table, max_pages, ppc, hkv, ps, hs, slots, ef, sink);
}
extern "C" __global__ void __launch_bounds__(256) cpa_ring(const char* k, const char* v, const int* table, int max_pages, int ppc,
        int hkv, long long ps, long long hs, int slots, int ef, unsigned* sink) {
    ring<1>(k, v, table, max_pages, ppc, hkv, ps, hs, slots, ef, sink);
}
template <int G>
__device__ __forceinline__ void ldg_pages(const char* __restrict__ k, const char* __restrict__ v, const int* __restrict__ table,
        int max_pages, int ppc, int hkv, long long page_stride, long long head_stride, unsigned* sink) {
    const int head = blockIdx.x % hkv, split = blockIdx.x / hkv;
    const int* tb = table + (long long)blockIdx.y * max_pages + split * ppc;
    unsigned acc = 0;
    for (int i0 = 0; i0 < ppc; i0 += G) {
        uint4 r[G][8];
#pragma unroll
        for (int g = 0; g < G; ++g) {
            const long long at = (long long)tb[min(i0 + g, ppc - 1)] * page_stride + head * head_stride;
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const int c = threadIdx.x + 256 * j;
                r[g][j] = __ldcs(reinterpret_cast<const uint4*>((c < SLICE / 16 ? k : v - SLICE) + at + c * 16));
            }
        }
#pragma unroll
        for (int g = 0; g < G; ++g)
#pragma unroll
            for (int j = 0; j < 8; ++j) acc ^= r[g][j].x ^ r[g][j].y ^ r[g][j].z ^ r[g][j].w;
    }
    if (acc == 0x9e3779b9u) sink[0] = acc;
}
extern "C" __global__ void __launch_bounds__(256) ldg2(const char* k, const char* v, const int* table, int max_pages, int ppc,
        int hkv, long long ps, long long hs, unsigned* sink) { ldg_pages<2>(k, v, table, max_pages, ppc, hkv, ps, hs, sink); }
extern "C" __global__ void __launch_bounds__(256) ldg4(const char* k, const char* v, const int* table, int max_pages, int ppc,
        int hkv, long long ps, long long hs, unsigned* sink) { ldg_pages<4>(k, v, table, max_pages, ppc, hkv, ps, hs, sink); }
'''
mod = cp.RawModule(code=SRC, options=("-std=c++17",))
K = {n: mod.get_function(n) for n in ("bulk_ring", "cpa_ring", "ldg2", "ldg4")}
sink = cp.zeros(1, dtype=cp.uint32)
results = []
t0 = time.time()


def point(batch, kv_len, ef_rings):
    with B.shape_runner(batch, kv_len, 128) as (runner, plan, _):
        runner.run_once()
        hkv, P, D = 8, 64, 128
        kpool, vpool, table = runner.buffers["k_pool"], runner.buffers["v_pool"], runner.buffers["table"]
        max_pages = kv_len // P
        splits = plan.splits
        ppc = max_pages // splits
        ps, hs = hkv * P * D * 2, P * D * 2
        grid = (splits * hkv, batch)
        assert kpool.shape[1:] == (hkv, P, D), kpool.shape
        args = lambda: (kpool, vpool, table, cp.int32(max_pages), cp.int32(ppc), cp.int32(hkv), cp.int64(ps), cp.int64(hs))  # noqa
        fns = {"plan": lambda: runner.launch_call(0)}
        for name in ("bulk_ring", "cpa_ring"):
            K[name].max_dynamic_shared_size_bytes = 6 * 32768
        for ef, slots in ef_rings:
            for kind in ("bulk", "cpa"):
                fns[f"{kind} {'ef' if ef else 'nm'} {slots}"] = (
                    lambda kind=kind, ef=ef, slots=slots: K[f"{kind}_ring"](grid, (256,), args() + (cp.int32(slots), cp.int32(ef), sink),
                                                                           shared_mem=slots * 32768))
        fns["ldg cs 2"] = lambda: K["ldg2"](grid, (256,), args() + (sink,))
        fns["ldg cs 4"] = lambda: K["ldg4"](grid, (256,), args() + (sink,))
        nbytes = 2 * batch * kv_len * hkv * D * 2
        print(f"point {batch}x{kv_len} d128: plan {kernel_label(plan.kernel)} splits {splits}, CTAs {grid}, {ppc} pages each",
              flush=True)
        for rnd in range(3):
            timing = interleave(fns, iterations=40, warmup=1, mode="cold", order="shuffle", seed=rnd)
            base = timing["plan"].stats.p50_s
            for name, t in timing.items():
                row = {"point": f"{batch}x{kv_len} d128", "round": rnd, "variant": name, "p50_us": t.stats.p50_s * 1e6,
                       "TBps": nbytes / t.stats.p50_s / 1e12, "vs_plan_us": (t.stats.p50_s - base) * 1e6}
                results.append(row)
                print(f"r{rnd} {row['point']:14s} {name:10s} {row['p50_us']:8.2f} us {row['TBps']:6.3f} TB/s "
                      f"{row['vs_plan_us']:+7.2f} us", flush=True)
        del runner


for args in ((1, 8192, ((1, 4), (1, 6), (0, 6))), (1, 32768, ((1, 4), (1, 6))), (8, 8192, ((0, 4), (0, 6), (1, 4)))):
    try:
        point(*args)
    except Exception as exc:  # noqa: BLE001
        print(f"point {args[:2]}: {type(exc).__name__}: {exc}", flush=True)
    with open(f"{OUT}/paged_read.json", "w") as f:
        json.dump(results, f, indent=1)
    print(f"elapsed {time.time() - t0:.0f} s", flush=True)
