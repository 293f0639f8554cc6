// paged_decode.cu: labkit's paged-KV, split-KV decode attention for sm_90 (bf16 in and out, fp32 softmax).
//
// One CTA per (kv split, kv head, sequence). Each CTA streams its pages of K and V into shared memory
// with TMA (one 4-D box per page and tensor, STAGES pages in flight), scores the q rows of its kv head
// against every key with CUDA-core FMAs (each lane owns HEAD_DIM/32 contiguous dims; a butterfly of
// shuffles gives every lane the full dot product), and keeps an exp2 online softmax per row. With
// several splits, each CTA writes its un-normalised partial O and (max, sum) to scratch, and the last
// CTA of a (sequence, kv head), found with a self-resetting counter (atomicInc wraps to 0), reduces.
//
// Rows of a CTA: q token i of the sequence (i < q_len) times q head g of the kv head (g < G):
// row = i * G + g; q head = hkv * G + g. Causal: token i sits at position seq_len - q_len + i and
// sees keys 0..that position. q and out are [q_tokens, heads_q, HEAD_DIM] bf16; sequence b's q tokens
// start at cu_seqlens_q[b] (or b * max_q_len when that pointer is null).
//
// The KV pool's layout lives only in the two tensor maps: dims {HEAD_DIM, PAGE_SIZE, heads_kv, pages}
// (innermost first) with any byte strides, so the plain [pages, heads_kv, page_size, head_dim] pool and
// trtllm-gen's interleaved kv[pages, 2, 64, heads_kv, 2, head_dim] (K and V at byte offsets) both work.
// Page ids come from page_table[b][j]; ids past the map's page dim read as zeros (TMA fill): the host
// refuses such tables before launching.
//
// Params (384 B = 352 B of fields padded to 64, by value, __grid_constant__ so the maps are used in place; offsets = the manifest's):
//     0 k_map    128 v_map    256 q    264 out    272 page_table    280 seq_lens    288 cu_seqlens_q
//   296 partial_o (f32 [batch, heads_kv, splits, MAX_ROWS, HEAD_DIM])   304 partial_ml (f32 [.., 2])
//   312 counter (u32 [batch * heads_kv], zero before the first launch)   320 batch   324 heads_kv
//   328 group (G)   332 max_pages   336 max_q_len   340 num_pages   344 scale_log2 (f32 bits)
// Compile-time: HEAD_DIM (128, 256), PAGE_SIZE (16, 32, 64), ROWS_PER_WARP (rows a warp owns),
// ROW_WARPS (warps that split the rows; the other 4 / ROW_WARPS split the keys), STAGES.
// Launch: grid (splits, heads_kv, batch), block 128, dynamic smem STAGES * 2 * PAGE_SIZE * HEAD_DIM * 2.

#ifndef HEAD_DIM
#define HEAD_DIM 128
#endif
#ifndef PAGE_SIZE
#define PAGE_SIZE 64
#endif
#ifndef ROWS_PER_WARP
#define ROWS_PER_WARP 4
#endif
#ifndef ROW_WARPS
#define ROW_WARPS 1
#endif
#ifndef STAGES
#define STAGES 2
#endif

#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)  // NVRTC has no math.h
#endif

constexpr int WARPS = 4;
constexpr int THREADS = WARPS * 32;
constexpr int TOKEN_WARPS = WARPS / ROW_WARPS;
constexpr int MAX_ROWS = ROWS_PER_WARP * ROW_WARPS;
constexpr int DPL = HEAD_DIM / 32;                      // dims per lane
constexpr int TILE_ELEMS = PAGE_SIZE * HEAD_DIM;       // one page of K (or V) of one head
constexpr unsigned TILE_BYTES = TILE_ELEMS * 2;
static_assert(WARPS % ROW_WARPS == 0, "ROW_WARPS must divide 4");
static_assert(HEAD_DIM == 128 || HEAD_DIM == 256, "HEAD_DIM 128 or 256");

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
};

__device__ __forceinline__ unsigned smem_addr(const void* ptr) {
    return static_cast<unsigned>(__cvta_generic_to_shared(ptr));
}
__device__ __forceinline__ float bf16_to_f32(unsigned short bits) { return __uint_as_float(((unsigned)bits) << 16); }
__device__ __forceinline__ unsigned short f32_to_bf16(float x) {
    unsigned short r;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(x));
    return r;
}

// ---- TMA: one page of K and V for kv head `head` into a stage -----------------------------------
__device__ __forceinline__ void load_page(const Params& p, unsigned long long* bar, unsigned short* k_dst,
                                          unsigned short* v_dst, int head, int page) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 ::"r"(smem_addr(bar)), "r"(2 * TILE_BYTES) : "memory");
    const TensorMap* maps[2] = {&p.k_map, &p.v_map};
    unsigned short* dst[2] = {k_dst, v_dst};
#pragma unroll
    for (int t = 0; t < 2; ++t)
        asm volatile(
            "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3, %4, %5}], [%6];"
            ::"r"(smem_addr(dst[t])), "l"(reinterpret_cast<unsigned long long>(maps[t])), "r"(0), "r"(0),
              "r"(head), "r"(page), "r"(smem_addr(bar)) : "memory");
}

__device__ __forceinline__ void wait_bar(unsigned long long* bar, unsigned parity) {
    unsigned ready = 0;
    while (!ready)
        asm volatile("{ .reg .pred P; mbarrier.try_wait.parity.shared::cta.b64 P, [%1], %2; selp.u32 %0, 1, 0, P; }"
                     : "=r"(ready) : "r"(smem_addr(bar)), "r"(parity) : "memory");
}

// DPL bf16 of a row, starting at this lane's first dim, as floats
__device__ __forceinline__ void load_slice(const unsigned short* row, int lane, float (&x)[DPL]) {
    const unsigned short* src = row + lane * DPL;
    if constexpr (DPL == 4) {
        uint2 w = *reinterpret_cast<const uint2*>(src);
        unsigned u[2] = {w.x, w.y};
#pragma unroll
        for (int j = 0; j < 2; ++j) { x[2 * j] = __uint_as_float(u[j] << 16); x[2 * j + 1] = __uint_as_float(u[j] & 0xffff0000u); }
    } else {
        uint4 w = *reinterpret_cast<const uint4*>(src);
        unsigned u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
        for (int j = 0; j < 4; ++j) { x[2 * j] = __uint_as_float(u[j] << 16); x[2 * j + 1] = __uint_as_float(u[j] & 0xffff0000u); }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS) paged_decode(const __grid_constant__ Params p) {
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ alignas(8) unsigned long long full[STAGES];
    __shared__ int last_cta;
    unsigned short* tiles = reinterpret_cast<unsigned short*>(smem);  // [STAGES][K, V][PAGE_SIZE][HEAD_DIM]

    const int split = blockIdx.x, hkv = blockIdx.y, b = blockIdx.z, splits = gridDim.x;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int row_warp = warp % ROW_WARPS, token_warp = warp / ROW_WARPS;
    const int G = p.group, heads_q = p.heads_kv * G;
    const float scale_log2 = __int_as_float(p.scale_log2_bits);

    // ---- this CTA's sequence, rows and pages ----------------------------------------------------
    int q_begin = b * p.max_q_len, q_len = p.max_q_len;
    if (p.cu_seqlens_q != nullptr) {
        q_begin = p.cu_seqlens_q[b];
        q_len = min(max(p.cu_seqlens_q[b + 1] - q_begin, 0), p.max_q_len);
    }
    const int rows = q_len * G;  // <= MAX_ROWS (the host checks G * max_q_len)
    const int seq_len = min(max(p.seq_lens[b], 0), p.max_pages * PAGE_SIZE);
    const int n_pages = (seq_len + PAGE_SIZE - 1) / PAGE_SIZE;
    const int per_split = (n_pages + splits - 1) / splits;
    const int page_begin = min(split * per_split, n_pages);
    const int my_pages = min(page_begin + per_split, n_pages) - page_begin;
    const int* table = p.page_table + (long long)b * p.max_pages + page_begin;

    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&full[s])));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (int s = 0; s < STAGES && s < my_pages; ++s)
            load_page(p, &full[s], tiles + (2 * s) * TILE_ELEMS, tiles + (2 * s + 1) * TILE_ELEMS, hkv, table[s]);
    }

    // q rows of this warp, pre-scaled by scale * log2(e) so that scores are in the exp2 domain
    float q[ROWS_PER_WARP][DPL], o[ROWS_PER_WARP][DPL], m[ROWS_PER_WARP], l[ROWS_PER_WARP];
#pragma unroll
    for (int r = 0; r < ROWS_PER_WARP; ++r) {
        const int row = row_warp * ROWS_PER_WARP + r;
        m[r] = -INFINITY;
        l[r] = 0.f;
#pragma unroll
        for (int j = 0; j < DPL; ++j) { q[r][j] = 0.f; o[r][j] = 0.f; }
        if (row < rows) {
            const long long at = ((long long)(q_begin + row / G) * heads_q + hkv * G + row % G) * HEAD_DIM;
            load_slice(p.q + at, lane, q[r]);
#pragma unroll
            for (int j = 0; j < DPL; ++j) q[r][j] *= scale_log2;
        }
    }
    __syncthreads();  // barriers initialised before anyone waits

    // ---- main loop: one page per iteration, STAGES in flight -------------------------------------
    const int last_pos_base = seq_len - q_len;  // token i of the query sees keys 0..last_pos_base + i
    for (int it = 0; it < my_pages; ++it) {
        const int s = it % STAGES;
        wait_bar(&full[s], (it / STAGES) & 1);
        const unsigned short* kt = tiles + (2 * s) * TILE_ELEMS;
        const unsigned short* vt = kt + TILE_ELEMS;
        const int tok0 = (page_begin + it) * PAGE_SIZE;
        for (int t = token_warp; t < PAGE_SIZE && tok0 + t < seq_len; t += TOKEN_WARPS) {
            const int pos = tok0 + t;
            float k[DPL], v[DPL];
            load_slice(kt + t * HEAD_DIM, lane, k);
            load_slice(vt + t * HEAD_DIM, lane, v);
#pragma unroll
            for (int r = 0; r < ROWS_PER_WARP; ++r) {
                const int row = row_warp * ROWS_PER_WARP + r;
                float score = 0.f;
#pragma unroll
                for (int j = 0; j < DPL; ++j) score = fmaf(q[r][j], k[j], score);
#pragma unroll
                for (int off = 16; off > 0; off >>= 1) score += __shfl_xor_sync(0xffffffffu, score, off);
                const bool seen = row < rows && pos <= last_pos_base + row / G;
                if (!seen) continue;  // uniform across the warp: every lane has the same row and pos
                const float m_new = fmaxf(m[r], score);
                const float alpha = exp2f(m[r] - m_new);  // m = -inf on the first key: alpha = 0
                const float w = exp2f(score - m_new);
                l[r] = fmaf(l[r], alpha, w);
#pragma unroll
                for (int j = 0; j < DPL; ++j) o[r][j] = fmaf(o[r][j], alpha, w * v[j]);
                m[r] = m_new;
            }
        }
        __syncthreads();  // stage s is free again
        if (threadIdx.x == 0 && it + STAGES < my_pages)
            load_page(p, &full[s], tiles + (2 * s) * TILE_ELEMS, tiles + (2 * s + 1) * TILE_ELEMS, hkv,
                      table[it + STAGES]);
    }

    // ---- merge the key-splitting warps of each row block (through the now idle stage memory) -----
    float* merge_o = reinterpret_cast<float*>(smem);                 // [WARPS][ROWS_PER_WARP][HEAD_DIM]
    float* merge_ml = merge_o + WARPS * ROWS_PER_WARP * HEAD_DIM;    // [WARPS][ROWS_PER_WARP][2]
    if (TOKEN_WARPS > 1) {
#pragma unroll
        for (int r = 0; r < ROWS_PER_WARP; ++r) {
#pragma unroll
            for (int j = 0; j < DPL; ++j) merge_o[(warp * ROWS_PER_WARP + r) * HEAD_DIM + lane * DPL + j] = o[r][j];
            if (lane == 0) {
                merge_ml[(warp * ROWS_PER_WARP + r) * 2] = m[r];
                merge_ml[(warp * ROWS_PER_WARP + r) * 2 + 1] = l[r];
            }
        }
        __syncthreads();
        if (token_warp == 0) {
#pragma unroll
            for (int r = 0; r < ROWS_PER_WARP; ++r) {
                float mm = -INFINITY;
                for (int tw = 0; tw < TOKEN_WARPS; ++tw) mm = fmaxf(mm, merge_ml[((tw * ROW_WARPS + row_warp) * ROWS_PER_WARP + r) * 2]);
                float ll = 0.f, acc[DPL];
#pragma unroll
                for (int j = 0; j < DPL; ++j) acc[j] = 0.f;
                for (int tw = 0; tw < TOKEN_WARPS; ++tw) {
                    const int at = (tw * ROW_WARPS + row_warp) * ROWS_PER_WARP + r;
                    const float mw = merge_ml[at * 2];
                    const float f = mw == -INFINITY ? 0.f : exp2f(mw - mm);
                    ll = fmaf(merge_ml[at * 2 + 1], f, ll);
#pragma unroll
                    for (int j = 0; j < DPL; ++j) acc[j] = fmaf(merge_o[at * HEAD_DIM + lane * DPL + j], f, acc[j]);
                }
                m[r] = mm;
                l[r] = ll;
#pragma unroll
                for (int j = 0; j < DPL; ++j) o[r][j] = acc[j];
            }
        }
    }

    // ---- one split: normalise and store ----------------------------------------------------------
    const long long group_at = (long long)b * p.heads_kv + hkv;
    if (splits == 1) {
        if (token_warp == 0) {
#pragma unroll
            for (int r = 0; r < ROWS_PER_WARP; ++r) {
                const int row = row_warp * ROWS_PER_WARP + r;
                if (row >= rows) continue;
                const float inv = l[r] > 0.f ? 1.f / l[r] : 0.f;
                unsigned short* dst = p.out + ((long long)(q_begin + row / G) * heads_q + hkv * G + row % G) * HEAD_DIM;
#pragma unroll
                for (int j = 0; j < DPL; ++j) dst[lane * DPL + j] = f32_to_bf16(o[r][j] * inv);
            }
        }
        return;
    }

    // ---- several splits: partials to scratch, the last CTA of the group reduces -----------------
    if (token_warp == 0) {
#pragma unroll
        for (int r = 0; r < ROWS_PER_WARP; ++r) {
            const int row = row_warp * ROWS_PER_WARP + r;
            const long long at = (group_at * splits + split) * MAX_ROWS + row;
#pragma unroll
            for (int j = 0; j < DPL; ++j) p.partial_o[at * HEAD_DIM + lane * DPL + j] = o[r][j];
            if (lane == 0) { p.partial_ml[at * 2] = m[r]; p.partial_ml[at * 2 + 1] = l[r]; }
        }
    }
    __threadfence();  // partials visible device-wide before this CTA counts itself in
    __syncthreads();
    if (threadIdx.x == 0) last_cta = atomicInc(p.counter + group_at, (unsigned)splits - 1) == (unsigned)splits - 1;
    __syncthreads();
    if (!last_cta) return;
    __threadfence();
    for (int row = warp; row < rows; row += WARPS) {
        float mm = -INFINITY;
        for (int sp = 0; sp < splits; ++sp) mm = fmaxf(mm, __ldcg(p.partial_ml + ((group_at * splits + sp) * MAX_ROWS + row) * 2));
        float ll = 0.f, acc[DPL];
#pragma unroll
        for (int j = 0; j < DPL; ++j) acc[j] = 0.f;
        for (int sp = 0; sp < splits; ++sp) {
            const long long at = (group_at * splits + sp) * MAX_ROWS + row;
            const float ms = __ldcg(p.partial_ml + at * 2);
            const float f = ms == -INFINITY ? 0.f : exp2f(ms - mm);
            ll = fmaf(__ldcg(p.partial_ml + at * 2 + 1), f, ll);
#pragma unroll
            for (int j = 0; j < DPL; ++j) acc[j] = fmaf(__ldcg(p.partial_o + at * HEAD_DIM + lane * DPL + j), f, acc[j]);
        }
        const float inv = ll > 0.f ? 1.f / ll : 0.f;
        unsigned short* dst = p.out + ((long long)(q_begin + row / G) * heads_q + hkv * G + row % G) * HEAD_DIM;
#pragma unroll
        for (int j = 0; j < DPL; ++j) dst[lane * DPL + j] = f32_to_bf16(acc[j] * inv);
    }
}
