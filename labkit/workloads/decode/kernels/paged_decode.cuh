// paged_decode.cuh: what both decode kernels share: the parameter block (the manifest's ABI), bf16
// helpers, the swizzled stage layout and its TMA loads, and the last CTA's split reduction.
// Include after defining PAGE_SIZE, HEAD_DIM, MAX_ROWS, TOKENS_PER_STAGE, BOX_ROWS, BOXES, PARTS,
// TILE_ELEMS and STAGE_BYTES (see the kernels' headers).
// Each kernel writes out its own per-CTA setup (sequence, rows, stages, barrier init, first loads) rather
// than sharing a helper here: a shared prologue measured 2x slower for a lone CTA on the H200 (206 vs
// 109 us, A/B), so the duplication is deliberate; change it only with a device A/B.
// LABKIT_TIMELINE (compile-time; labkit.sched): Params gains a records pointer at byte 352 (inside the
// 384-B block's padding) and thread 0 of each CTA writes {cta, smid, %globaltimer at entry and exit,
// clock64 at both} as 6 x u64 at every CTA_RETURN; without the define CTA_RETURN is a plain return and
// the machine code is the same (tests/unit/test_decode_kernels.py compares the .text sections).

struct alignas(64) TensorMap { unsigned long long opaque[16]; };

struct Params {
    TensorMap k_map;
    TensorMap v_map;
    const unsigned short* q;
    unsigned short* out;
    const int* page_table;
    const int* seq_lens;
    const int* cu_seqlens_q;
    float* partial_o;
    float* partial_ml;
    unsigned int* counter;
    int batch;
    int heads_kv;
    int group;
    int max_pages;
    int max_q_len;
    int num_pages;
    int scale_log2_bits;
    int head_splits;  // TAIL_SPLITS builds (paged_decode_mma.cu): the splits of the units before the tail
#ifdef LABKIT_TIMELINE
    unsigned long long* timeline;  // [CTAs][6]: labkit.sched.Timeline's records
#endif
};

#ifdef LABKIT_TIMELINE
#define TIMELINE_START()                                                  \
    unsigned long long tl_t0, tl_c0 = clock64();                          \
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(tl_t0))
#define CTA_RETURN                                                        \
    do {                                                                  \
        __syncthreads(); /* the CTA ends when its last warp does */       \
        if (threadIdx.x == 0) timeline_record(p.timeline, tl_t0, tl_c0);  \
        return;                                                           \
    } while (0)
#endif
#ifndef LABKIT_TIMELINE
#define TIMELINE_START() do { } while (0)
#define CTA_RETURN return
#endif


#ifdef LABKIT_TIMELINE
__device__ __forceinline__ void timeline_record(unsigned long long* timeline, unsigned long long t0,
                                                unsigned long long c0) {
    unsigned long long t1;
    unsigned smid;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    const unsigned long long cta = blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
    unsigned long long* rec = timeline + cta * 6;
    rec[0] = cta; rec[1] = smid; rec[2] = t0; rec[3] = t1; rec[4] = c0; rec[5] = clock64();
}
#endif

// Programmatic dependent launch (the manifest's launch sets "pdl"): the next call may be scheduled as soon
// as every CTA of this one has started, and this call's CTAs wait for the previous kernel's memory before
// their first read of the inputs or scratch (without PDL both are no-ops).
__device__ __forceinline__ void allow_next_grid_and_wait_for_previous() {
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
}

__device__ __forceinline__ unsigned smem_addr(const void* ptr) {
    return static_cast<unsigned>(__cvta_generic_to_shared(ptr));
}
__device__ __forceinline__ unsigned short f32_to_bf16(float x) {
    unsigned short r;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(x));
    return r;
}
__device__ __forceinline__ float lo_bf16(unsigned w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float hi_bf16(unsigned w) { return __uint_as_float(w & 0xffff0000u); }

// Byte offset of (token row t, dim d) in a stage tile: [PARTS][TOKENS_PER_STAGE][128 B], each 16-byte
// chunk of a 128-byte row stored at chunk ^ (row % 8) (TMA's 128B swizzle; tiles are 1024-B aligned).
// WIDE_BOXES (paged_decode_mma.cu): [BOXES][PARTS][BOX_ROWS][128 B], a box's parts together (the same when BOXES is 1).
// ROW_BOXES (paged_decode_mma.cu): [TOKENS_PER_STAGE][PARTS][128 B], a token row's parts together, as a 5-D box with
// the parts before the page rows lands them; so a box reads each row's head_dim whole and the rows in order, where
// the other boxes read a page slice's half-rows of one part, then the other's. Its 128-byte rows are t x PARTS + part,
// so 8 consecutive tokens of one part sit in only 8 / PARTS swizzle phases: ldmatrix meets 2-way bank conflicts at
// head_dim 128.
#ifndef WIDE_BOXES
#define WIDE_BOXES 0
#endif
#ifndef ROW_BOXES
#define ROW_BOXES 0
#endif
// PADDED_ROWS (paged_decode_mma.cu, head_dim 128): [TOKENS_PER_STAGE][HEAD_DIM + 8] unswizzled, as a 4-D box of
// HEAD_DIM + 8 dims lands it (the map's dims end at HEAD_DIM: TMA zero-fills the 8 past it and reads only the row's
// 256 B). Rows 272 B apart put 8 consecutive rows' same 16 bytes in 8 different bank groups: ldmatrix stays
// conflict-free without a swizzle.
#ifndef PADDED_ROWS
#define PADDED_ROWS 0
#endif
constexpr unsigned ROW_PITCH = (HEAD_DIM + 8) * 2;  // PADDED_ROWS: a token row's bytes in a tile
__device__ __forceinline__ unsigned tile_offset(int t, int d) {
    if constexpr (PADDED_ROWS != 0) return (unsigned)t * ROW_PITCH + (unsigned)d * 2u;
    const int part = d / 64, chunk = (d % 64) / 8;
#if WIDE_BOXES
    const unsigned row = (unsigned)(((t / BOX_ROWS) * PARTS + part) * BOX_ROWS + t % BOX_ROWS);
#else
    const unsigned row = ROW_BOXES ? (unsigned)(t * PARTS + part) : (unsigned)(part * TOKENS_PER_STAGE + t);
#endif
    const int phase = ROW_BOXES ? (int)(row & 7u) : (t & 7);  // row % 8 (= t % 8 where a part's rows run in t order)
    return row * 128u + (unsigned)((chunk ^ phase) * 16 + (d % 8) * 2);
}

// ---- TMA: one stage of K and V (BOXES page slices x PARTS 64-dim boxes each) --------------------
// KV_EVICT_FIRST 1: K and V, read once per call, enter L2 as evict_first, so a cold call evicts its own lines
// rather than writing back dirty ones (labkit.workloads.decode.plan sets it for calls up to 3 L2 sizes).
#ifndef KV_EVICT_FIRST
#define KV_EVICT_FIRST 0
#endif
#if KV_EVICT_FIRST
#define KV_POLICY policy
#else
#define KV_POLICY 0ull
#endif
// One 5-D box of a page slice: WIDE_BOXES, 64 dims x BOX_ROWS tokens x PARTS parts, [PARTS][BOX_ROWS][128 B];
// ROW_BOXES, 64 dims x PARTS parts x BOX_ROWS tokens, [BOX_ROWS][PARTS][128 B] (the row is the map's third coordinate)
__device__ __forceinline__ void load_box5(unsigned char* dst, const TensorMap* map, int row, int head, int page,
                                          unsigned long long* bar, unsigned long long policy) {
#if KV_EVICT_FIRST
    asm volatile(
        "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
        " [%0], [%1, {%2, %3, %4, %5, %6}], [%7], %8;"
        ::"r"(smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(0), "r"(ROW_BOXES ? 0 : row),
          "r"(ROW_BOXES ? row : 0), "r"(head),
          "r"(page), "r"(smem_addr(bar)), "l"(policy) : "memory");
#else
    asm volatile(
        "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
        ::"r"(smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(0), "r"(ROW_BOXES ? 0 : row),
          "r"(ROW_BOXES ? row : 0), "r"(head),
          "r"(page), "r"(smem_addr(bar)) : "memory");
#endif
}
// One 4-D box: 64 dims (part) x BOX_ROWS tokens of one page slice, [BOX_ROWS][128 B]
__device__ __forceinline__ void load_box4(unsigned char* dst, const TensorMap* map, int part, int row, int head,
                                          int page, unsigned long long* bar, unsigned long long policy) {
#if KV_EVICT_FIRST
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
        " [%0], [%1, {%2, %3, %4, %5}], [%6], %7;"
        ::"r"(smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(part * 64), "r"(row), "r"(head),
          "r"(page), "r"(smem_addr(bar)), "l"(policy) : "memory");
#else
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3, %4, %5}], [%6];"
        ::"r"(smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(part * 64), "r"(row), "r"(head),
          "r"(page), "r"(smem_addr(bar)) : "memory");
#endif
}
__device__ __forceinline__ void load_stage(const Params& p, unsigned long long* bar, unsigned char* stage, int head,
                                           const int* table, int tok0, int valid_pages) {
    // PHASE: tma_issue
#if KV_EVICT_FIRST
    unsigned long long policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
#endif
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 ::"r"(smem_addr(bar)), "r"(STAGE_BYTES) : "memory");
    const TensorMap* maps[2] = {&p.k_map, &p.v_map};
#pragma unroll
    for (int bx = 0; bx < BOXES; ++bx) {
        const int tok = tok0 + bx * BOX_ROWS, j = tok / PAGE_SIZE;
        const int page = j < valid_pages ? table[j] : -1;  // past the sequence: an all-OOB box, zero filled
#if WIDE_BOXES || ROW_BOXES
#pragma unroll
        for (int t = 0; t < 2; ++t)
            load_box5(stage + t * TILE_ELEMS * 2 + bx * PARTS * BOX_ROWS * 128, maps[t], tok % PAGE_SIZE, head, page,
                      bar, KV_POLICY);
        continue;
#endif
#if PADDED_ROWS
#pragma unroll
        for (int t = 0; t < 2; ++t)  // one box per page slice: all of head_dim and the zeroed pad
            load_box4(stage + t * TILE_BYTES + bx * BOX_ROWS * ROW_PITCH, maps[t], 0, tok % PAGE_SIZE, head, page,
                      bar, KV_POLICY);
        continue;
#endif
#pragma unroll
        for (int t = 0; t < 2; ++t)
#pragma unroll
            for (int part = 0; part < PARTS; ++part)
                load_box4(stage + t * TILE_ELEMS * 2 + (part * TOKENS_PER_STAGE + bx * BOX_ROWS) * 128, maps[t], part,
                          tok % PAGE_SIZE, head, page, bar, KV_POLICY);
    }
}

// PAGE_PREFETCH 1 (paged_decode_mma.cu): a refill whose page ids thread 0 loaded a stage earlier, so their L2 round trip
// is off the issuing thread's path. The same loads (load_box4, or load_box5 with WIDE_BOXES) in the same order as
// load_stage; a loop of its own so that builds without it keep load_stage's machine code (their measured timings;
// test_decode_kernels.py).
#ifndef PAGE_PREFETCH
#define PAGE_PREFETCH 0
#endif
#if PAGE_PREFETCH
__device__ __forceinline__ void load_stage_pages(const Params& p, unsigned long long* bar, unsigned char* stage, int head,
                                                 const int (&pages)[BOXES], int tok0) {
    // PHASE: tma_issue
    unsigned long long policy = 0;
    if constexpr (KV_EVICT_FIRST != 0) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 ::"r"(smem_addr(bar)), "r"(STAGE_BYTES) : "memory");
    const TensorMap* maps[2] = {&p.k_map, &p.v_map};
#pragma unroll
    for (int bx = 0; bx < BOXES; ++bx) {
        const int tok = tok0 + bx * BOX_ROWS, page = pages[bx];
        if constexpr (WIDE_BOXES != 0 || ROW_BOXES != 0) {  // not an #if: the loop is one PAGE_PREFETCH block
#pragma unroll
            for (int t = 0; t < 2; ++t)
                load_box5(stage + t * TILE_ELEMS * 2 + bx * PARTS * BOX_ROWS * 128, maps[t], tok % PAGE_SIZE, head,
                          page, bar, policy);
        } else if constexpr (PADDED_ROWS != 0) {
#pragma unroll
            for (int t = 0; t < 2; ++t)
                load_box4(stage + t * TILE_BYTES + bx * BOX_ROWS * ROW_PITCH, maps[t], 0, tok % PAGE_SIZE, head, page,
                          bar, policy);
        } else {
#pragma unroll
            for (int t = 0; t < 2; ++t)
#pragma unroll
                for (int part = 0; part < PARTS; ++part)
                    load_box4(stage + t * TILE_ELEMS * 2 + (part * TOKENS_PER_STAGE + bx * BOX_ROWS) * 128, maps[t],
                              part, tok % PAGE_SIZE, head, page, bar, policy);
        }
    }
}
#endif

__device__ __forceinline__ void wait_bar(unsigned long long* bar, unsigned parity) {
    // PHASE: wait_kv
    unsigned ready = 0;
    while (!ready)
        asm volatile("{ .reg .pred P; mbarrier.try_wait.parity.shared::cta.b64 P, [%1], %2; selp.u32 %0, 1, 0, P; }"
                     : "=r"(ready) : "r"(smem_addr(bar)), "r"(parity) : "memory");
}

// ---- the last CTA of a (sequence, kv head, row block) combines every split's (max, sum, O) -------
// partial_o rows are [(group * splits + split) * MAX_ROWS + row][HEAD_DIM]; written before the counter.
// Row r of the block is row row0 + r of the sequence's q_len x G. Every thread takes (row, 4 dims)
// items and reads the splits REDUCE_BATCH at a time, (m, l, o) all independent loads, merged online: a few L2
// round trips per item (one warp per row walking the dims made the seed-sized call reduction-bound,
// ~20 us of its ~30, measured with the per-CTA timeline).
constexpr int MAX_SPLITS = 256;  // labkit.workloads.decode.build refuses more
#ifndef REDUCE_BATCH
#define REDUCE_BATCH 16  // splits read per round trip: the seed-sized call's 11 in one
#endif

// Thread 0 counts the CTA in after a barrier: the atomic's release covers every thread's partials (ordered
// before it by the barrier), and for the last CTA its acquire covers the others' (the threads' reads follow a
// barrier). inc wraps to 0 at `wrap_at`, so the counter is back at 0 for the next call. One atomic instead of
// __threadfence (MEMBAR.SC) in every thread: 1-3 % faster d128 split calls on the H200 (three interleaved rounds).
__device__ __forceinline__ unsigned count_in(unsigned* counter, unsigned wrap_at) {
    // PHASE: merge_and_store
    unsigned old;
    asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(counter), "r"(wrap_at) : "memory");
    return old;
}

__device__ __forceinline__ void reduce_splits(const Params& p, long long group_at, int splits, int rows, int row0,
                                              int q_begin, int G, int heads_q, int hkv) {
    // PHASE: split_reduction
    const long long base = group_at * splits * MAX_ROWS;  // (split s, row r) at base + s * MAX_ROWS + r
    for (int item = threadIdx.x; item < rows * (HEAD_DIM / 4); item += blockDim.x) {
        const int row = item / (HEAD_DIM / 4), d = 4 * (item % (HEAD_DIM / 4));
        float mm = -INFINITY, ll = 0.f;
        float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
        for (int s0 = 0; s0 < splits; s0 += REDUCE_BATCH) {
            float ms[REDUCE_BATCH], ls[REDUCE_BATCH];
            float4 os[REDUCE_BATCH];
#pragma unroll
            for (int j = 0; j < REDUCE_BATCH; ++j) {
                const long long at = base + (long long)(s0 + j) * MAX_ROWS + row;
                const bool in = s0 + j < splits;
                ms[j] = in ? __ldcg(p.partial_ml + at * 2) : -INFINITY;
                ls[j] = in ? __ldcg(p.partial_ml + at * 2 + 1) : 0.f;
                os[j] = in ? __ldcg(reinterpret_cast<const float4*>(p.partial_o + at * HEAD_DIM + d))
                           : make_float4(0.f, 0.f, 0.f, 0.f);
            }
            float m_new = mm;
#pragma unroll
            for (int j = 0; j < REDUCE_BATCH; ++j) m_new = fmaxf(m_new, ms[j]);
            if (m_new == -INFINITY) continue;  // no keys in any split so far
            const float alpha = exp2f(mm - m_new);  // 0 while mm is -inf
            ll *= alpha; acc.x *= alpha; acc.y *= alpha; acc.z *= alpha; acc.w *= alpha;
#pragma unroll
            for (int j = 0; j < REDUCE_BATCH; ++j) {
                const float f = ms[j] == -INFINITY ? 0.f : exp2f(ms[j] - m_new);
                ll = fmaf(ls[j], f, ll);
                acc.x = fmaf(os[j].x, f, acc.x); acc.y = fmaf(os[j].y, f, acc.y);
                acc.z = fmaf(os[j].z, f, acc.z); acc.w = fmaf(os[j].w, f, acc.w);
            }
            mm = m_new;
        }
        const float inv = ll > 0.f ? 1.f / ll : 0.f;
        const int qr = row0 + row;
        unsigned short* dst = p.out + ((long long)(q_begin + qr / G) * heads_q + hkv * G + qr % G) * HEAD_DIM + d;
        *reinterpret_cast<uint2*>(dst) =
            make_uint2((unsigned)f32_to_bf16(acc.x * inv) | ((unsigned)f32_to_bf16(acc.y * inv) << 16),
                       (unsigned)f32_to_bf16(acc.z * inv) | ((unsigned)f32_to_bf16(acc.w * inv) << 16));
    }
}
