"""How fast can 33.6 MB (the K+V of 1 x 8k d128, 8 KV heads) be read under the bench's cold timing, by how many
CTAs, with what in flight? Interleaved with labkit's plan for that call (shuffled rounds, p50), so the plan's
18.5-19 us stands beside the pure data movement of its shape:
  tma [ef] G x S x C   G CTAs, each a contiguous 1/G of the buffer through a ring of S slots of C KB (1-D cp.async.bulk
                  into shared memory, one thread, mbarrier per slot; nothing computed; ef: with an L2 evict_first
                  policy, as the plan's K/V loads): the plan's own movement is
                  64 CTAs x 12 slots x 16 KB (8 splits in clusters of 8, 3 stages of 128 tokens of K and V)
  ldg [cs] G x T  G CTAs of T threads, 16-B loads, 4 in flight per thread (cs: __ldcs, read_ceiling.py's kernel)
  empty           an empty kernel (the launch under this timing)
  plan            labkit's plan for 1 x 8k d128 (the bench's shuffled page table)"""
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
template <bool EF>
__device__ __forceinline__ void tma_read_body(const unsigned char* __restrict__ src, unsigned long long total,
        unsigned long long per_cta, unsigned chunk, int slots, unsigned* sink) {
    extern __shared__ __align__(128) unsigned char ring[];
    __shared__ __align__(8) unsigned long long bar[16];
    if (threadIdx.x != 0) return;
    const unsigned long long begin = (unsigned long long)blockIdx.x * per_cta;
    if (begin >= total) return;
    const unsigned long long end = begin + per_cta < total ? begin + per_cta : total;
    const int n = (int)((end - begin + chunk - 1) / chunk);
    for (int s = 0; s < slots; ++s) {
        unsigned b = (unsigned)__cvta_generic_to_shared(&bar[s]);
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    unsigned acc = 0;
    unsigned long long policy = 0;
    if (EF) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    auto issue = [&](int i) {
        const int s = i % slots;
        const unsigned long long at = begin + (unsigned long long)i * chunk;
        const unsigned bytes = (unsigned)(end - at < chunk ? end - at : chunk);
        unsigned b = (unsigned)__cvta_generic_to_shared(&bar[s]);
        unsigned d = (unsigned)__cvta_generic_to_shared(ring + (size_t)s * chunk);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(bytes) : "memory");
        if (EF)
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
                         :: "r"(d), "l"(src + at), "r"(bytes), "r"(b), "l"(policy) : "memory");
        else
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                         :: "r"(d), "l"(src + at), "r"(bytes), "r"(b) : "memory");
    };
    for (int i = 0; i < n && i < slots; ++i) issue(i);
    for (int i = 0; i < n; ++i) {
        const int s = i % slots;
        const unsigned parity = (unsigned)((i / slots) & 1);
        unsigned b = (unsigned)__cvta_generic_to_shared(&bar[s]);
        unsigned done = 0;
        while (!done)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(b), "r"(parity) : "memory");
        acc ^= *(volatile unsigned*)(ring + (size_t)s * chunk);
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        if (i + slots < n) issue(i + slots);
    }
    if (acc == 0x9e3779b9u) sink[0] = acc;
}
extern "C" __global__ void __launch_bounds__(32) tma_read(const unsigned char* __restrict__ src, unsigned long long total,
        unsigned long long per_cta, unsigned chunk, int slots, unsigned* sink) {
    tma_read_body<false>(src, total, per_cta, chunk, slots, sink);
}
extern "C" __global__ void __launch_bounds__(32) tma_read_ef(const unsigned char* __restrict__ src, unsigned long long total,
        unsigned long long per_cta, unsigned chunk, int slots, unsigned* sink) {
    tma_read_body<true>(src, total, per_cta, chunk, slots, sink);
}
template <bool CS>
__device__ __forceinline__ uint4 ld16(const uint4* p) { return CS ? __ldcs(p) : *p; }
template <bool CS>
__device__ __forceinline__ void ldg_body(const uint4* __restrict__ p, unsigned long long n16, unsigned* sink) {
    unsigned acc = 0;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n16; i += 4 * stride) {
        uint4 a = ld16<CS>(p + i), b = ld16<CS>(p + i + stride), c = ld16<CS>(p + i + 2 * stride), d = ld16<CS>(p + i + 3 * stride);
        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < n16; i += stride) { uint4 a = ld16<CS>(p + i); acc ^= a.x ^ a.y ^ a.z ^ a.w; }
    if (acc == 0x9e3779b9u) sink[0] = acc;
}
extern "C" __global__ void ldg_plain(const uint4* __restrict__ p, unsigned long long n16, unsigned* sink) {
    ldg_body<false>(p, n16, sink);
}
extern "C" __global__ void ldg_read(const uint4* __restrict__ p, unsigned long long n16, unsigned* sink) {
    unsigned acc = 0;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n16; i += 4 * stride) {
        uint4 a = __ldcs(p + i), b = __ldcs(p + i + stride), c = __ldcs(p + i + 2 * stride), d = __ldcs(p + i + 3 * stride);
        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < n16; i += stride) { uint4 a = __ldcs(p + i); acc ^= a.x ^ a.y ^ a.z ^ a.w; }
    if (acc == 0x9e3779b9u) sink[0] = acc;
}
extern "C" __global__ void empty() {}
'''
mod = cp.RawModule(code=SRC, options=("-std=c++17",))
tma, tma_ef, ldg, ldg_plain, empty = (mod.get_function(n) for n in ("tma_read", "tma_read_ef", "ldg_read", "ldg_plain",
                                                                     "empty"))
N = 2 * 8192 * 8 * 128 * 2
buf = cp.random.randint(0, 2**31, size=N // 4, dtype=cp.int32)
sink = cp.zeros(1, dtype=cp.uint32)
TMA = [(64, 12, 16), (64, 8, 16), (128, 6, 16), (264, 6, 16)]
LDG = [(528, 512), (128, 512), (64, 1024)]


def tma_fn(k, g, s, c):
    per = -(-N // g // 16) * 16
    smem = s * c * 1024
    k.max_dynamic_shared_size_bytes = 200 * 1024
    return lambda: k((g,), (32,), (buf, cp.uint64(N), cp.uint64(per), cp.uint32(c * 1024), cp.int32(s), sink),
                     shared_mem=smem)


fns = {f"tma {g:3d} x {s:2d} x {c} KB": tma_fn(tma, g, s, c) for g, s, c in TMA}
fns.update({f"tma ef {g:3d} x {s:2d} x {c} KB": tma_fn(tma_ef, g, s, c) for g, s, c in TMA})
fns.update({f"ldg cs {g:3d} x {t}": (lambda g=g, t=t: ldg((g,), (t,), (buf, cp.uint64(N // 16), sink))) for g, t in LDG})
fns.update({f"ldg {g:3d} x {t}": (lambda g=g, t=t: ldg_plain((g,), (t,), (buf, cp.uint64(N // 16), sink)))
            for g, t in LDG})
fns["empty"] = lambda: empty((1,), (32,), ())
for f in fns.values():
    f()
cp.cuda.Device().synchronize()
rows = []
t0 = time.time()
with B.shape_runner(1, 8192, 128) as (runner, plan, _):
    runner.run_once()
    fns["plan"] = lambda: runner.launch_call(0)
    print("plan:", kernel_label(plan.kernel), "splits", plan.splits, flush=True)
    for rnd in range(3):
        timing = interleave(fns, iterations=40, warmup=1, mode="cold", order="shuffle", seed=rnd)
        for name, t in timing.items():
            p50 = t.stats.p50_s
            rows.append({"round": rnd, "variant": name, "p50_us": p50 * 1e6, "TBps": N / p50 / 1e12})
            print(f"r{rnd} {name:22s} {p50 * 1e6:8.2f} us {N / p50 / 1e12:6.3f} TB/s", flush=True)
        json.dump(rows, open(f"{OUT}/ring_read.json", "w"), indent=1)
        print(f"elapsed {time.time() - t0:.0f} s", flush=True)
