// paged_decode.cu: labkit's paged-KV, split-KV decode attention for sm_90 (bf16 in and out, fp32 softmax).
//
// One CTA per (kv split, kv head, sequence). A CTA walks its keys in stages of TOKENS_PER_STAGE
// tokens (32 per key warp), STAGES stages in flight: TMA copies each page slice of K and V as 64-dim
// boxes with the 128-byte swizzle (bank-conflict-free reads whichever row or column a warp walks).
// Scores: lane = key token, so each lane takes whole dot products (q rows read from shared memory as
// broadcasts; no shuffles). Softmax: one warp max per row and 32 keys, exp2 online rescaling. P.V:
// lane = 4 or 8 dims of the output, P broadcast by shuffles. With several splits, each CTA writes its
// un-normalised partial O and (max, sum) to scratch, and the last CTA of a (sequence, kv head), found
// with a self-resetting counter (count_in in paged_decode.cuh), reduces.
//
// Rows of a CTA: q token i of the sequence (i < q_len) times q head g of the kv head (g < G):
// row = i * G + g; q head = hkv * G + g. More rows than MAX_ROWS: row blocks, grid y = heads_kv x blocks. Causal: token i sits at position seq_len - q_len + i and
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
//   296 partial_o (f32 [batch, heads_kv x row blocks, splits, MAX_ROWS, HEAD_DIM])   304 partial_ml (f32 [.., 2])
//   312 counter (u32 [batch * heads_kv * row blocks], zero before the first launch)   320 batch   324 heads_kv
//   328 group (G)   332 max_pages   336 max_q_len   340 num_pages   344 scale_log2 (f32 bits)
// Compile-time: HEAD_DIM (128, 256), PAGE_SIZE (16, 32, 64), ROWS_PER_WARP (rows a warp owns),
// ROW_WARPS (warps that split the rows; the other 4 / ROW_WARPS split the keys, 32 each), STAGES.
// Launch: grid (splits, heads_kv x row blocks, batch), block 128, dynamic smem 1024 (alignment) + the larger of
// STAGES * 2 * TOKENS_PER_STAGE * HEAD_DIM * 2 and the key-warp merge (WARPS * ROWS_PER_WARP * (HEAD_DIM + 2) * 4).
// Tensor maps: box {64, min(PAGE_SIZE, TOKENS_PER_STAGE), 1, 1}, bf16, 128-byte swizzle.

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
constexpr int DPL = HEAD_DIM / 32;                        // output dims per lane in P.V
constexpr int PARTS = HEAD_DIM / 64;                      // 64-dim (128-byte) boxes per token row
constexpr int TOKENS_PER_STAGE = 32 * TOKEN_WARPS;
constexpr int BOX_ROWS = PAGE_SIZE < TOKENS_PER_STAGE ? PAGE_SIZE : TOKENS_PER_STAGE;
constexpr int BOXES = TOKENS_PER_STAGE / BOX_ROWS;        // page slices per stage
constexpr int TILE_ELEMS = TOKENS_PER_STAGE * HEAD_DIM;   // K (or V) of one stage
constexpr unsigned STAGE_BYTES = 2 * TILE_ELEMS * 2;      // K and V
static_assert(WARPS % ROW_WARPS == 0, "ROW_WARPS must divide 4");
static_assert(HEAD_DIM == 128 || HEAD_DIM == 256, "HEAD_DIM 128 or 256");
static_assert(TOKENS_PER_STAGE % BOX_ROWS == 0 && (BOX_ROWS * 128) % 1024 == 0, "swizzle atoms stay whole");

#include "paged_decode.cuh"

extern "C" __global__ void __launch_bounds__(THREADS) paged_decode(const __grid_constant__ Params p) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ alignas(8) unsigned long long full[STAGES];
    __shared__ int last_cta;
    __shared__ alignas(16) float q_s[MAX_ROWS * HEAD_DIM];  // q rows, scaled to the exp2 domain
    unsigned char* smem = reinterpret_cast<unsigned char*>((reinterpret_cast<unsigned long long>(smem_raw) + 1023) &
                                                           ~1023ull);  // swizzle atoms are 1024-B aligned

    // PHASE: setup
    TIMELINE_START();
    const int split = blockIdx.x, b = blockIdx.z, splits = gridDim.x;
    const int row_blocks = gridDim.y / p.heads_kv, hkv = blockIdx.y / row_blocks, rb = blockIdx.y % row_blocks;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int row_warp = warp % ROW_WARPS, token_warp = warp / ROW_WARPS;
    const int G = p.group, heads_q = p.heads_kv * G;
    const float scale_log2 = __int_as_float(p.scale_log2_bits);
    allow_next_grid_and_wait_for_previous();

    // ---- this CTA's sequence, rows and stages ---------------------------------------------------
    int q_begin = b * p.max_q_len, q_len = p.max_q_len;
    if (p.cu_seqlens_q != nullptr) {
        q_begin = p.cu_seqlens_q[b];
        q_len = min(max(p.cu_seqlens_q[b + 1] - q_begin, 0), p.max_q_len);
    }
    const int row0 = rb * MAX_ROWS;  // this CTA's rows: row0 + 0..rows-1 of the sequence's q_len * G
    const int rows = min(q_len * G - row0, MAX_ROWS);
    if (rows <= 0) CTA_RETURN;  // a short query: the whole (sequence, head, row block) group leaves
    const int seq_len = min(max(p.seq_lens[b], 0), p.max_pages * PAGE_SIZE);
    const int valid_pages = (seq_len + PAGE_SIZE - 1) / PAGE_SIZE;
    const int n_stages = (seq_len + TOKENS_PER_STAGE - 1) / TOKENS_PER_STAGE;
    const int per_split = (n_stages + splits - 1) / splits;
    const int stage_begin = min(split * per_split, n_stages);
    const int my_stages = min(stage_begin + per_split, n_stages) - stage_begin;
    const int* table = p.page_table + (long long)b * p.max_pages;

    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&full[s])));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (int s = 0; s < STAGES && s < my_stages; ++s)
            load_stage(p, &full[s], smem + s * STAGE_BYTES, hkv, table, (stage_begin + s) * TOKENS_PER_STAGE,
                       valid_pages);
    }
    for (int i = threadIdx.x; i < MAX_ROWS * HEAD_DIM; i += THREADS) {
        const int row = i / HEAD_DIM, d = i % HEAD_DIM, qr = row0 + row;
        float x = 0.f;
        if (row < rows)
            x = __uint_as_float((unsigned)p.q[((long long)(q_begin + qr / G) * heads_q + hkv * G + qr % G) * HEAD_DIM + d]
                                << 16) * scale_log2;
        q_s[i] = x;
    }

    float o[ROWS_PER_WARP][DPL], m[ROWS_PER_WARP], l[ROWS_PER_WARP];  // l: this lane's keys only
#pragma unroll
    for (int r = 0; r < ROWS_PER_WARP; ++r) {
        m[r] = -INFINITY;
        l[r] = 0.f;
#pragma unroll
        for (int j = 0; j < DPL; ++j) o[r][j] = 0.f;
    }
    __syncthreads();  // barriers initialised and q staged before anyone reads them

    // ---- main loop: one stage per iteration, STAGES in flight ------------------------------------
    const int last_pos_base = seq_len - q_len;  // token i of the query sees keys 0..last_pos_base + i
    const float* qw = q_s + row_warp * ROWS_PER_WARP * HEAD_DIM;
    for (int it = 0; it < my_stages; ++it) {
        // PHASE: wait_kv
        const int s = it % STAGES;
        wait_bar(&full[s], (it / STAGES) & 1);
        const unsigned char* kt = smem + s * STAGE_BYTES;
        const unsigned char* vt = kt + TILE_ELEMS * 2;
        const int t0 = token_warp * 32;                                  // this warp's 32 rows of the stage
        const int pos0 = (stage_begin + it) * TOKENS_PER_STAGE + t0;
        const int n_keys = min(32, seq_len - pos0);                      // warp-uniform; may be <= 0
        if (n_keys > 0) {
            // PHASE: qk
            // scores: lane = key
            float score[ROWS_PER_WARP];
#pragma unroll
            for (int r = 0; r < ROWS_PER_WARP; ++r) score[r] = 0.f;
            const int t = t0 + lane;
#pragma unroll
            for (int d = 0; d < HEAD_DIM; d += 8) {
                const uint4 kw = *reinterpret_cast<const uint4*>(kt + tile_offset(t, d));
                const float k[8] = {lo_bf16(kw.x), hi_bf16(kw.x), lo_bf16(kw.y), hi_bf16(kw.y),
                                    lo_bf16(kw.z), hi_bf16(kw.z), lo_bf16(kw.w), hi_bf16(kw.w)};
#pragma unroll
                for (int r = 0; r < ROWS_PER_WARP; ++r) {
                    const float4 qa = *reinterpret_cast<const float4*>(qw + r * HEAD_DIM + d);
                    const float4 qb = *reinterpret_cast<const float4*>(qw + r * HEAD_DIM + d + 4);
                    score[r] = fmaf(qa.x, k[0], fmaf(qa.y, k[1], fmaf(qa.z, k[2], fmaf(qa.w, k[3], score[r]))));
                    score[r] = fmaf(qb.x, k[4], fmaf(qb.y, k[5], fmaf(qb.z, k[6], fmaf(qb.w, k[7], score[r]))));
                }
            }
            // PHASE: online_softmax
            // online softmax per row over these 32 keys (m stays warp-uniform)
            float pw[ROWS_PER_WARP];
#pragma unroll
            for (int r = 0; r < ROWS_PER_WARP; ++r) {
                const int row = row_warp * ROWS_PER_WARP + r;
                const bool seen = lane < n_keys && row < rows && pos0 + lane <= last_pos_base + (row0 + row) / G;
                float x = seen ? score[r] : -INFINITY;
                float mx = x;
#pragma unroll
                for (int off = 16; off > 0; off >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
                const float m_new = fmaxf(m[r], mx);
                const float alpha = m_new == -INFINITY ? 1.f : exp2f(m[r] - m_new);
                pw[r] = seen ? exp2f(x - m_new) : 0.f;
                l[r] = fmaf(l[r], alpha, pw[r]);
#pragma unroll
                for (int j = 0; j < DPL; ++j) o[r][j] *= alpha;
                m[r] = m_new;
            }
            // PHASE: pv
            // P.V: lane = DPL output dims; key k's weight broadcast from lane k
            const int d0 = lane * DPL;
            auto accumulate = [&](int k) {
                const int tk = t0 + k;
                float v[DPL];
                if constexpr (DPL == 4) {
                    const uint2 vw = *reinterpret_cast<const uint2*>(vt + tile_offset(tk, d0));
                    v[0] = lo_bf16(vw.x); v[1] = hi_bf16(vw.x); v[2] = lo_bf16(vw.y); v[3] = hi_bf16(vw.y);
                } else {
                    const uint4 vw = *reinterpret_cast<const uint4*>(vt + tile_offset(tk, d0));
                    v[0] = lo_bf16(vw.x); v[1] = hi_bf16(vw.x); v[2] = lo_bf16(vw.y); v[3] = hi_bf16(vw.y);
                    v[4] = lo_bf16(vw.z); v[5] = hi_bf16(vw.z); v[6] = lo_bf16(vw.w); v[7] = hi_bf16(vw.w);
                }
#pragma unroll
                for (int r = 0; r < ROWS_PER_WARP; ++r) {
                    const float w = __shfl_sync(0xffffffffu, pw[r], k);
#pragma unroll
                    for (int j = 0; j < DPL; ++j) o[r][j] = fmaf(w, v[j], o[r][j]);
                }
            };
            if (n_keys == 32) {  // a full chunk: unrolled, so loads and shuffles of later keys overlap
#pragma unroll 8
                for (int k = 0; k < 32; ++k) accumulate(k);
            } else {
                for (int k = 0; k < n_keys; ++k) accumulate(k);
            }
        }
        // PHASE: stage_release
        __syncthreads();  // stage s is free again
        if (threadIdx.x == 0 && it + STAGES < my_stages)
            load_stage(p, &full[s], smem + s * STAGE_BYTES, hkv, table,
                       (stage_begin + it + STAGES) * TOKENS_PER_STAGE, valid_pages);
    }
#pragma unroll
    for (int r = 0; r < ROWS_PER_WARP; ++r)
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) l[r] += __shfl_xor_sync(0xffffffffu, l[r], off);

    // PHASE: merge_and_store
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
    const long long group_at = ((long long)b * p.heads_kv + hkv) * row_blocks + rb;
    if (splits == 1) {
        if (token_warp == 0) {
#pragma unroll
            for (int r = 0; r < ROWS_PER_WARP; ++r) {
                const int row = row_warp * ROWS_PER_WARP + r;
                if (row >= rows) continue;
                const float inv = l[r] > 0.f ? 1.f / l[r] : 0.f;
                const int qr = row0 + row;
                unsigned short* dst = p.out + ((long long)(q_begin + qr / G) * heads_q + hkv * G + qr % G) * HEAD_DIM;
#pragma unroll
                for (int j = 0; j < DPL; ++j) dst[lane * DPL + j] = f32_to_bf16(o[r][j] * inv);
            }
        }
        CTA_RETURN;
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
    __syncthreads();
    if (threadIdx.x == 0) last_cta = count_in(p.counter + group_at, (unsigned)splits - 1) == (unsigned)splits - 1;
    __syncthreads();
    if (!last_cta) CTA_RETURN;
    reduce_splits(p, group_at, splits, rows, row0, q_begin, G, heads_q, hkv);
    CTA_RETURN;
}
