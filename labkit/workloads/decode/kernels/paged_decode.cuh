// paged_decode.cuh: what both decode kernels share: the parameter block (the manifest's ABI), bf16
// helpers, the swizzled stage layout and its TMA loads, and the last CTA's split reduction.
// Include after defining PAGE_SIZE, HEAD_DIM, MAX_ROWS, TOKENS_PER_STAGE, BOX_ROWS, BOXES, PARTS,
// TILE_ELEMS and STAGE_BYTES (see the kernels' headers).
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
    int pad_;
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
__device__ __forceinline__ unsigned tile_offset(int t, int d) {
    const int part = d / 64, chunk = (d % 64) / 8;
    return (unsigned)(part * TOKENS_PER_STAGE + t) * 128u + (unsigned)((chunk ^ (t & 7)) * 16 + (d % 8) * 2);
}

// ---- TMA: one stage of K and V (BOXES page slices x PARTS 64-dim boxes each) --------------------
__device__ __forceinline__ void load_stage(const Params& p, unsigned long long* bar, unsigned char* stage, int head,
                                           const int* table, int tok0, int valid_pages) {
    // PHASE: tma_issue
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 ::"r"(smem_addr(bar)), "r"(STAGE_BYTES) : "memory");
    const TensorMap* maps[2] = {&p.k_map, &p.v_map};
#pragma unroll
    for (int bx = 0; bx < BOXES; ++bx) {
        const int tok = tok0 + bx * BOX_ROWS, j = tok / PAGE_SIZE;
        const int page = j < valid_pages ? table[j] : -1;  // past the sequence: an all-OOB box, zero filled
#pragma unroll
        for (int t = 0; t < 2; ++t)
#pragma unroll
            for (int part = 0; part < PARTS; ++part) {
                unsigned char* dst = stage + t * TILE_ELEMS * 2 + (part * TOKENS_PER_STAGE + bx * BOX_ROWS) * 128;
                asm volatile(
                    "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                    " [%0], [%1, {%2, %3, %4, %5}], [%6];"
                    ::"r"(smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(maps[t])), "r"(part * 64),
                      "r"(tok % PAGE_SIZE), "r"(head), "r"(page), "r"(smem_addr(bar)) : "memory");
            }
    }
}

__device__ __forceinline__ void wait_bar(unsigned long long* bar, unsigned parity) {
    // PHASE: wait_kv
    unsigned ready = 0;
    while (!ready)
        asm volatile("{ .reg .pred P; mbarrier.try_wait.parity.shared::cta.b64 P, [%1], %2; selp.u32 %0, 1, 0, P; }"
                     : "=r"(ready) : "r"(smem_addr(bar)), "r"(parity) : "memory");
}

// ---- the last CTA of a (sequence, kv head, row block) combines every split's (max, sum, O) -------
// partial_o rows are [(group * splits + split) * MAX_ROWS + row][HEAD_DIM]; written before the counter.
// Row r of the block is row row0 + r of the sequence's q_len x G.
// Per row: the lanes take the splits to find the weights 2^(m_s - M) / L once (in shared memory),
// then take the dims, each summing its splits with independent loads.
constexpr int MAX_SPLITS = 256;  // labkit.workloads.decode.build refuses more

__device__ __forceinline__ void reduce_splits(const Params& p, long long group_at, int splits, int rows, int row0,
                                              int q_begin, int G, int heads_q, int hkv, int warp, int lane,
                                              int warps) {
    // PHASE: split_reduction
    __shared__ float weight[4][MAX_SPLITS];
    __threadfence();
    for (int row = warp; row < rows; row += warps) {
        const float* ml = p.partial_ml + (group_at * splits * MAX_ROWS + row) * 2;  // split s at ml[s * MAX_ROWS * 2]
        float mm = -INFINITY;
        for (int sp = lane; sp < splits; sp += 32) mm = fmaxf(mm, __ldcg(ml + (long long)sp * MAX_ROWS * 2));
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) mm = fmaxf(mm, __shfl_xor_sync(0xffffffffu, mm, off));
        float ll = 0.f;
        for (int sp = lane; sp < splits; sp += 32) {
            const float ms = __ldcg(ml + (long long)sp * MAX_ROWS * 2);
            const float f = ms == -INFINITY ? 0.f : exp2f(ms - mm);
            weight[warp][sp] = f;
            ll = fmaf(__ldcg(ml + (long long)sp * MAX_ROWS * 2 + 1), f, ll);
        }
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) ll += __shfl_xor_sync(0xffffffffu, ll, off);
        __syncwarp();
        const float inv = ll > 0.f ? 1.f / ll : 0.f;
        const float* po = p.partial_o + (group_at * splits * MAX_ROWS + row) * HEAD_DIM;
        const int qr = row0 + row;
        unsigned short* dst = p.out + ((long long)(q_begin + qr / G) * heads_q + hkv * G + qr % G) * HEAD_DIM;
        for (int d = lane; d < HEAD_DIM; d += 32) {
            float acc = 0.f;
#pragma unroll 8
            for (int sp = 0; sp < splits; ++sp) acc = fmaf(__ldcg(po + (long long)sp * MAX_ROWS * HEAD_DIM + d), weight[warp][sp], acc);
            dst[d] = f32_to_bf16(acc * inv);
        }
        __syncwarp();
    }
}
