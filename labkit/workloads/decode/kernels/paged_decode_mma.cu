// paged_decode_mma.cu: labkit's paged-KV, split-KV decode attention on tensor cores (sm_90, head_dim 128/256).
//
// Same ABI, grid, tensor maps and split reduction as paged_decode.cu (paged_decode.cuh), same math
// (bf16 in and out, fp32 exp2 online softmax), for up to 16 rows (q tokens x q heads per KV head).
// Each warp owns KEYS_PER_WARP keys of every stage and all 16 (padded) rows:
//   S = Q K^T   mma.m16n8k16 bf16 -> fp32; A = Q by ldmatrix (staged once, padded rows), B = K rows by ldmatrix
//   P = exp2(S * scale*log2e - m) per row; the S accumulators become P.V's A operand in registers. m moves (and O
//   is rescaled) only when a stage's max passes it by more than 2^8 in P: 1-2.4 % faster short calls on the H200
//   (1 x 8k d128 19.02 -> 18.58 us), level or faster at every other bench point
//   (data/runs/20261202T042300Z-decode_lazy_rescale)
//   O += P V    mma.m16n8k16; B = V by ldmatrix.trans (keys are the k dimension)
// Fragment layouts (PTX ISA, mma.m16n8k16): lane = 4 * g + t; C holds (row g | g + 8, col 2t, 2t + 1);
// A holds (row g | g + 8, k 2t, 2t + 1 | + 8); B holds (k 2t, 2t + 1 | + 8, col g).
// Keys past the sequence in the last chunk get zeroed V rows (P is 0 there, but 0 x NaN is NaN).
// DIM_WARPS 2 (8 warps, 16 keys each): warps w and w + 4 take the same keys and half of head_dim each: each
// computes Q K^T over its dims, the pair adds its halves through shared memory (a 64-thread named barrier; both
// add the same two numbers, so both hold the same S and the same softmax), and each accumulates O for its dims.
// At head_dim 256 the 4-warp build's loop was bound by this math (one warp per scheduler, every mma and
// ldmatrix latency exposed); the pairs halve each warp's chain (8 x 32k d256: 492 -> 483 us on the H200).
// The warps' (max, sum, O) meet in shared memory in [row][dim] order (the call's rows only); then the CTA
// stores the output (one split) or its partials, and the last CTA of the (sequence, kv head) reduces. With
// CLUSTER_SPLITS n (2, 4, 8; the launch has exactly n splits) the n CTAs of a (sequence, kv head) are one
// thread-block cluster instead: CTA c combines and stores 1/n of the dims, and each CTA pushes its merged O over
// them and its (max, sum) into c's shared memory by st.async, counted on c's mbarrier: no global partials, fence or
// counter (the seed-sized call in a graph: 12.0 -> 9.5 us with 8 one-stage 8-warp CTAs, 7.5 -> 6.8 pushed rather
// than read through DSMEM behind release barriers; labkit.workloads.decode.plan says when).
// More rows than 16 (up to 16 heads x 8 tokens): row blocks of 16, grid y = heads_kv x row blocks.
// TAIL_SPLITS n (2..16, no clusters): a 1-D grid of the units in p.head_splits splits each first, then the last units
// of the call in n (more) splits each, so the CTAs the hardware starts last are short and the last wave drains
// sooner (a plan knob for A/Bs; labkit.workloads.decode.plan says whether the plan uses it).
// PERSISTENT 1 (one split, q in registers): a 1-D grid of as many CTAs as the SMs hold; thread 0 of each claims whole
// units from a counter (the call's last claim resets it), queues them for the warps in shared memory and issues one
// stream of stages across them, a unit's q rows riding its first stage; the warps merge in a region of their own
// while the next unit loads. No CTA start or pipeline fill per unit, and a faster SM claims more units (64 x 1k d256:
// 142.3 -> 138.5 us on the H200; labkit.workloads.decode.plan says when).
// WIDE_BOXES 1: 5-D tensor maps, so one TMA load takes a page slice's every 64-dim part and a tile is
// [box][part][rows][128 B] (paged_decode.cuh). ROW_BOXES 1: the same loads with the parts before the rows, a tile
// [rows][part][128 B], each token row read whole and the rows in order. PAGE_PREFETCH 1: thread 0 loads a refill's
// page ids one stage ahead, right after issuing the refill before it, so their L2 round trip overlaps the math. All
// three bit-identical to the 4-D loads; which builds take them, and what they measured on the H200:
// labkit/workloads/decode/loads.py. PADDED_ROWS 1 (head_dim 128): no swizzle; one 4-D box per page slice lands
// each token row whole in a tile of 272-byte rows (the 16 bytes past head_dim zero-filled: paged_decode.cuh), as a 1-D
// bulk copy reads a slice; the same math on the same numbers, so bit-identical to the swizzled tiles (1-3 % slower
// on two H100s: data/runs/20261207T210400Z-h100_padded_rows_cba0996).
// Compile-time: PAGE_SIZE (16, 32, 64), KEYS_PER_WARP (16, 32), WARPS (4, 8), DIM_WARPS (1, 2), STAGES,
// QK_CHAINS (1, 2), CLUSTER_SPLITS, TAIL_SPLITS, PERSISTENT, WIDE_BOXES, ROW_BOXES, PAGE_PREFETCH, PADDED_ROWS,
// LABKIT_TIMELINE and KV_EVICT_FIRST (paged_decode.cuh).
// Launch: grid (splits, heads_kv x row blocks, batch), or (head units x head_splits + tail units x TAIL_SPLITS) with
// TAIL_SPLITS, or (CTAs) with PERSISTENT; block 32 x WARPS, dynamic smem 1024 + max(STAGES * stage, merge) (PERSISTENT:
// 1024 + STAGES * (stage + q rows) + merge).

#ifndef HEAD_DIM
#define HEAD_DIM 128
#endif
#ifndef PAGE_SIZE
#define PAGE_SIZE 64
#endif
#ifndef KEYS_PER_WARP
#define KEYS_PER_WARP 16
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef WARPS
#define WARPS 4
#endif
#ifndef CLUSTER_SPLITS  // 2, 4 or 8: the splits of a (sequence, KV head) form a cluster and combine in DSMEM
#define CLUSTER_SPLITS 0
#endif
#ifndef DIM_WARPS  // 2: warps w and w + WARPS / 2 take the same keys and half of head_dim each
#define DIM_WARPS 1
#endif
#ifndef TAIL_SPLITS  // n > 1: grid x = head units x p.head_splits, then tail units x n, over (sequence, KV head, row block)
#define TAIL_SPLITS 0
#endif
#ifndef PERSISTENT  // 1: gridDim.x CTAs claim whole (sequence, KV head, row block) units from a counter, one split each
#define PERSISTENT 0
#endif
#ifdef MIN_CTAS  // CTAs per SM the registers must allow (a tail-split build keeps its plain build's occupancy)
#define LAUNCH_BOUNDS __launch_bounds__(THREADS, MIN_CTAS)
#else
#define LAUNCH_BOUNDS __launch_bounds__(THREADS)
#endif
#ifndef WIDE_BOXES  // 1: 5-D tensor maps; one TMA load per page slice takes every 64-dim part (paged_decode.cuh)
#define WIDE_BOXES 0
#endif
#ifndef ROW_BOXES  // 1: 5-D tensor maps, head_dim's parts before the page rows (paged_decode.cuh)
#define ROW_BOXES 0
#endif
#ifndef PAGE_PREFETCH  // 1: thread 0 loads each refill's page ids a stage ahead (paged_decode.cuh)
#define PAGE_PREFETCH 0
#endif
#ifndef QK_CHAINS  // 2: odd k-steps of Q K^T accumulate apart (shorter dependent chains, more registers)
#define QK_CHAINS 2
#endif
#if QK_CHAINS == 2
#define QK_ODD sc_odd
#else
#define QK_ODD sc
#endif
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)  // NVRTC has no math.h
#endif

constexpr int THREADS = WARPS * 32;
constexpr float RESCALE_LOG2 = 8.f;  // P stays under 2^8 between rescales of a row's O (the stage loop's softmax)
constexpr int MAX_ROWS = 16;
constexpr int PARTS = HEAD_DIM / 64;
constexpr int KEY_WARPS = WARPS / DIM_WARPS;     // warps over a stage's keys
constexpr int WARP_DIMS = HEAD_DIM / DIM_WARPS;  // the dims of Q K^T and O one warp takes
constexpr int TOKENS_PER_STAGE = KEYS_PER_WARP * KEY_WARPS;
constexpr int BOX_ROWS = PAGE_SIZE < TOKENS_PER_STAGE ? PAGE_SIZE : TOKENS_PER_STAGE;
constexpr int BOXES = TOKENS_PER_STAGE / BOX_ROWS;
constexpr int TILE_ELEMS = TOKENS_PER_STAGE * HEAD_DIM;
#ifndef PADDED_ROWS  // 1 (head_dim 128): unswizzled tiles of 136-dim rows, the 8 past head_dim zero-filled by TMA
#define PADDED_ROWS 0
#endif
#if PADDED_ROWS
static_assert(HEAD_DIM == 128 && WIDE_BOXES == 0 && ROW_BOXES == 0,
              "padded rows: a 136-dim box (TMA boxes take <= 256), 4-D");
constexpr unsigned TILE_BYTES = TOKENS_PER_STAGE * (HEAD_DIM + 8) * 2;
#else
constexpr unsigned TILE_BYTES = TILE_ELEMS * 2;
#endif
constexpr unsigned STAGE_BYTES = 2 * TILE_BYTES;
// PERSISTENT: a stage slot also holds the q rows of a unit whose first stage it is (they arrive on its barrier)
constexpr unsigned Q_BYTES = MAX_ROWS * HEAD_DIM * 2;
constexpr unsigned SLOT_BYTES = STAGE_BYTES + (PERSISTENT ? Q_BYTES : 0);
constexpr unsigned MERGE_AT = PERSISTENT ? STAGES * SLOT_BYTES : 0;  // the next unit's stages load during a merge
constexpr int UNIT_QUEUE = 8;  // PERSISTENT: claimed units in flight between thread 0 and the warps (<= STAGES + 2)
constexpr int NT_S = KEYS_PER_WARP / 8;   // S n-tiles (8 keys each)
constexpr int NT_O = WARP_DIMS / 8;       // O n-tiles (8 dims each)
constexpr int KS_Q = WARP_DIMS / 16;      // k-steps of Q K^T
static_assert(HEAD_DIM == 128 || HEAD_DIM == 256, "head_dim 128 or 256");
constexpr int Q_STRIDE = HEAD_DIM + 8;    // bf16 per staged q row: +16 B keeps ldmatrix conflict-free
// head_dim 128: Q's A fragments stay in 32 registers for the whole call (a lone CTA, e.g. batch 1,
// ran 2x slower with q staged in shared memory); head_dim 256 with 4 warps needs those registers for O (a warp
// pair's 128 dims each hold theirs).
constexpr bool Q_IN_REGISTERS = WARP_DIMS <= 128;
static_assert(KEYS_PER_WARP == 16 || KEYS_PER_WARP == 32, "16 or 32 keys per warp");
static_assert(WARPS == 4 || WARPS == 8, "4 or 8 warps");
static_assert(!PERSISTENT || (TAIL_SPLITS == 0 && CLUSTER_SPLITS == 0 && Q_IN_REGISTERS && STAGES + 2 <= UNIT_QUEUE),
              "persistent CTAs: whole units (no tail or cluster splits), q in registers, a queue of STAGES + 2");
static_assert(TAIL_SPLITS == 0 || (TAIL_SPLITS >= 2 && TAIL_SPLITS <= 16 && CLUSTER_SPLITS == 0),
              "tail splits: 2..16, without split clusters");
static_assert(DIM_WARPS == 1 || (DIM_WARPS == 2 && WARPS == 8 && KEYS_PER_WARP == 16), "dim pairs: 8 warps, 16 keys");
static_assert(!WIDE_BOXES || BOXES == 1 || DIM_WARPS == 1, "wide boxes: dim pairs only where a stage is one box");
static_assert(!PAGE_PREFETCH || !PERSISTENT, "page prefetch: per-unit CTAs");
static_assert(!ROW_BOXES || (!WIDE_BOXES && DIM_WARPS == 1), "row boxes: not with wide boxes or dim pairs");
static_assert(TOKENS_PER_STAGE % BOX_ROWS == 0 && (BOX_ROWS * 128) % 1024 == 0, "swizzle atoms stay whole");

#include "paged_decode.cuh"

// Helpers carry PHASE markers: ncu gives an inlined helper's instructions the helper's own lines.
// PHASE: mma_qk_and_pv
__device__ __forceinline__ void mma_bf16(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// PHASE: qk
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* row_addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(row_addr)));
}
// PHASE: pv
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const void* row_addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(row_addr)));
}
__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
#if TAIL_SPLITS
// PHASE: setup
// This CTA's unit (sequence b, KV head, row block) and split. Units go in that order; the grid's size says how
// many come before the tail (it launches head x head_splits + tail x TAIL_SPLITS CTAs), and the hardware starts
// CTAs in index order. Partials stay at (unit x splits + split): the tail's, with more splits, start past the head's.
__device__ __forceinline__ void tail_unit(const Params& p, int row_blocks, int& b, int& hkv, int& rb, int& split,
                                          int& splits) {
    const int cta = blockIdx.x, ctas = gridDim.x, s1 = p.head_splits;
    const int units = p.batch * p.heads_kv * row_blocks;
    const int head = (units * TAIL_SPLITS - ctas) / (TAIL_SPLITS - s1), tail = cta - head * s1;
    const int unit = tail < 0 ? cta / s1 : head + tail / TAIL_SPLITS;
    split = tail < 0 ? cta % s1 : tail % TAIL_SPLITS;
    splits = tail < 0 ? s1 : TAIL_SPLITS;
    b = unit / (p.heads_kv * row_blocks);
    hkv = unit / row_blocks % p.heads_kv;
    rb = unit % row_blocks;
}
// PHASE: end
#endif
#if PERSISTENT
// The next unit for this CTA. inc wraps to 0 at `wrap_at` = units + CTAs - 1: every CTA claims until it draws a number
// past the units, so the call's last claim is that one, and the counter is back at 0 for the next call.
// PHASE: setup
__device__ __forceinline__ int claim_unit(unsigned* counter, unsigned wrap_at) {
    unsigned old;
    asm volatile("atom.relaxed.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(counter), "r"(wrap_at) : "memory");
    return (int)old;
}
// `bytes` of global memory at `src` into shared memory at `dst`, counted on `bar` (16-byte aligned, whole 16 bytes)
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(src)), "r"(bytes),
                   "r"(smem_addr(bar)) : "memory");
}
// PHASE: end
#endif
#if CLUSTER_SPLITS > 1
static_assert(CLUSTER_SPLITS == 2 || CLUSTER_SPLITS == 4 || CLUSTER_SPLITS == 8, "a portable cluster dividing HEAD_DIM");
// PHASE: split_reduction
constexpr int SLICE = HEAD_DIM / CLUSTER_SPLITS;  // the dims each CTA of the cluster combines and stores
// `local`'s shared-memory offset in CTA `rank` of the cluster
__device__ __forceinline__ unsigned cluster_addr(const void* local, unsigned rank) {
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_addr(local)), "r"(rank));
    return remote;
}
// 4 or 2 floats into another CTA's shared memory, counted in bytes on its mbarrier `remote_bar`
__device__ __forceinline__ void st_async4(unsigned remote, float4 v, unsigned remote_bar) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];"
                 ::"r"(remote), "r"(__float_as_uint(v.x)), "r"(__float_as_uint(v.y)), "r"(__float_as_uint(v.z)),
                   "r"(__float_as_uint(v.w)), "r"(remote_bar) : "memory");
}
__device__ __forceinline__ void st_async2(unsigned remote, float a, float b, unsigned remote_bar) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [%0], {%1, %2}, [%3];"
                 ::"r"(remote), "r"(__float_as_uint(a)), "r"(__float_as_uint(b)), "r"(remote_bar) : "memory");
}
__device__ __forceinline__ void cluster_arrive_relaxed() {
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.aligned;" ::: "memory"); }
__device__ __forceinline__ void wait_bar_cluster(unsigned long long* bar, unsigned parity) {
    unsigned ready = 0;
    while (!ready)
        asm volatile("{ .reg .pred P; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 P, [%1], %2; "
                     "selp.u32 %0, 1, 0, P; }" : "=r"(ready) : "r"(smem_addr(bar)), "r"(parity) : "memory");
}
#define CLUSTER_ATTR __cluster_dims__(CLUSTER_SPLITS, 1, 1)
#else
#define CLUSTER_ATTR
#endif
// PHASE: end

extern "C" __global__ void CLUSTER_ATTR LAUNCH_BOUNDS paged_decode(const __grid_constant__ Params p) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ alignas(8) unsigned long long full[STAGES];
    __shared__ int last_cta;
#if CLUSTER_SPLITS > 1
    // what the cluster's CTAs push here: each split's merged O over this CTA's dims and (max, sum) per row, and
    // the barrier counting their bytes; apart from the stage ring, which a CTA may still use when a peer pushes
    __shared__ alignas(16) float cl_in_o[CLUSTER_SPLITS][MAX_ROWS][SLICE];
    __shared__ alignas(8) float cl_in_ml[CLUSTER_SPLITS][MAX_ROWS][2];
    __shared__ alignas(8) unsigned long long cl_in_bar;
#endif
    __shared__ alignas(16) unsigned short q_s[Q_IN_REGISTERS ? 8 : MAX_ROWS * Q_STRIDE];  // head_dim 256: q rows
#if PERSISTENT
    __shared__ int4 unit_queue[UNIT_QUEUE];  // (unit, seq_len, q_begin, q_len) in claim order; unit -1: no more
#endif
#if DIM_WARPS == 2
    __shared__ float s_half[KEY_WARPS][2][NT_S * 4][32];  // a pair's Q K^T halves, [value][lane]: no bank conflicts
#endif
    unsigned char* smem = reinterpret_cast<unsigned char*>((reinterpret_cast<unsigned long long>(smem_raw) + 1023) &
                                                           ~1023ull);  // swizzle atoms are 1024-B aligned

    // PHASE: setup
    TIMELINE_START();
#if TAIL_SPLITS
    const int row_blocks = (p.max_q_len * p.group + MAX_ROWS - 1) / MAX_ROWS;
    int b, hkv, rb, split, splits;
    tail_unit(p, row_blocks, b, hkv, rb, split, splits);
#endif
#if !TAIL_SPLITS && !PERSISTENT
    const int split = blockIdx.x, b = blockIdx.z, splits = gridDim.x;
    const int row_blocks = gridDim.y / p.heads_kv, hkv = blockIdx.y / row_blocks, rb = blockIdx.y % row_blocks;
#endif
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    // this warp's keys (kw) and dims (d0 + 0..WARP_DIMS-1; dims_at: their byte offset in a tile, whole 64-dim parts)
    const int kw = DIM_WARPS == 1 ? warp : warp % KEY_WARPS, dh = DIM_WARPS == 1 ? 0 : warp / KEY_WARPS;
    const int d0 = dh * WARP_DIMS;
#if PADDED_ROWS
    const unsigned dims_at = (unsigned)(d0 * 2);
#else
    const unsigned dims_at = (unsigned)(dh * (WARP_DIMS / 64) * TOKENS_PER_STAGE * 128);
#endif
    const int G = p.group, heads_q = p.heads_kv * G;
    const float scale_log2 = __int_as_float(p.scale_log2_bits);
    allow_next_grid_and_wait_for_previous();
#if PERSISTENT
    // Thread 0 produces one stream of stages over the units this CTA claims, and the warps consume it unit after
    // unit: the ring goes on across units (no CTA exit and start, no pipeline fill per unit), and a CTA on a faster
    // SM claims more units. A unit is claimed as its last stage is issued, so the atomic's round trip is off the
    // stream; its q rows come with its first stage. Units without rows are skipped, and those without keys get
    // their zero rows from thread 0, so every queued unit has stages (what bounds the queue).
    const int row_blocks = (p.max_q_len * G + MAX_ROWS - 1) / MAX_ROWS;
    const int units = p.batch * p.heads_kv * row_blocks;  // unit = (sequence, KV head, row block), in that order
    const unsigned wrap_at = (unsigned)units + gridDim.x - 1;
    int pr_next = 0, pr_queued = 0, pr_stage = 0, pr_n = 0, pr_hkv = 0, pr_valid = 0, pr_issued = 0;
    const int* pr_table = p.page_table;
    auto produce = [&]() {
        while (pr_stage >= pr_n) {  // this unit is all issued: take the claimed one
            if (pr_next < 0) return;  // no more units, and the warps know it
            const int unit = pr_next;
            if (unit >= units) {
                unit_queue[pr_queued++ % UNIT_QUEUE] = make_int4(-1, 0, 0, 0);
                pr_next = -1;
                return;
            }
            const int ub = unit / (p.heads_kv * row_blocks), uh = unit / row_blocks % p.heads_kv, urb = unit % row_blocks;
            int uq0 = ub * p.max_q_len, uq = p.max_q_len;
            if (p.cu_seqlens_q != nullptr) {
                uq0 = p.cu_seqlens_q[ub];
                uq = min(max(p.cu_seqlens_q[ub + 1] - uq0, 0), p.max_q_len);
            }
            const int urows = min(uq * G - urb * MAX_ROWS, MAX_ROWS);
            const int useq = min(max(p.seq_lens[ub], 0), p.max_pages * PAGE_SIZE);
            if (urows <= 0 || useq == 0) {  // no rows: nothing to do; no keys: zero rows, as the split build writes
                for (int i = 0; i < urows * (HEAD_DIM / 8); ++i) {
                    const int qr = urb * MAX_ROWS + i / (HEAD_DIM / 8), d = 8 * (i % (HEAD_DIM / 8));
                    *reinterpret_cast<uint4*>(p.out + ((long long)(uq0 + qr / G) * heads_q + uh * G + qr % G) * HEAD_DIM +
                                              d) = make_uint4(0, 0, 0, 0);
                }
                pr_next = claim_unit(p.counter, wrap_at);
                continue;
            }
            unit_queue[pr_queued++ % UNIT_QUEUE] = make_int4(unit, useq, uq0, uq);
            pr_n = (useq + TOKENS_PER_STAGE - 1) / TOKENS_PER_STAGE;
            pr_stage = 0;
            pr_hkv = uh;
            pr_valid = (useq + PAGE_SIZE - 1) / PAGE_SIZE;
            pr_table = p.page_table + (long long)ub * p.max_pages;
            // the unit's q rows, a token's heads at a time, into its first stage's slot, on that stage's barrier
            const int slot = pr_issued % STAGES;
            unsigned char* q_area = smem + slot * SLOT_BYTES + STAGE_BYTES;
            asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;"
                         ::"r"(smem_addr(&full[slot])), "r"((unsigned)(urows * HEAD_DIM * 2)) : "memory");
            for (int r = 0; r < urows;) {
                const int qr = urb * MAX_ROWS + r, h = qr % G, n = min(G - h, urows - r);
                bulk_copy(q_area + r * HEAD_DIM * 2, p.q + ((long long)(uq0 + qr / G) * heads_q + uh * G + h) * HEAD_DIM,
                          (unsigned)(n * HEAD_DIM * 2), &full[slot]);
                r += n;
            }
        }
        const int slot = pr_issued % STAGES;
        load_stage(p, &full[slot], smem + slot * SLOT_BYTES, pr_hkv, pr_table, pr_stage * TOKENS_PER_STAGE, pr_valid);
        ++pr_stage;
        ++pr_issued;
        if (pr_stage == pr_n) pr_next = claim_unit(p.counter, wrap_at);  // used a few stages from now
    };
    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&full[s])));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        pr_next = claim_unit(p.counter, wrap_at);
        for (int s = 0; s < STAGES; ++s) produce();
    }
    __syncthreads();  // the barriers and the first queued unit
    int stream = 0;  // the stream position of this unit's first stage
    for (int k = 0;; ++k) {
    const int4 queued = unit_queue[k % UNIT_QUEUE];
    if (queued.x < 0) break;
    const int unit = queued.x, split = 0, splits = 1, b = unit / (p.heads_kv * row_blocks);
    const int hkv = unit / row_blocks % p.heads_kv, rb = unit % row_blocks;
    const int q_begin = queued.z, q_len = queued.w;
#endif

    // ---- this CTA's sequence, rows and stages (as paged_decode.cu) -----------------------------
#if !PERSISTENT
    int q_begin = b * p.max_q_len, q_len = p.max_q_len;
    if (p.cu_seqlens_q != nullptr) {
        q_begin = p.cu_seqlens_q[b];
        q_len = min(max(p.cu_seqlens_q[b + 1] - q_begin, 0), p.max_q_len);
    }
#endif
    const int row0 = rb * MAX_ROWS;  // this CTA's rows: row0 + 0..rows-1 of the sequence's q_len * G
    const int rows = min(q_len * G - row0, MAX_ROWS);
#if PERSISTENT
    const int seq_len = queued.y;
#else
    if (rows <= 0) CTA_RETURN;  // a short query: the whole (sequence, head, row block) group leaves
    const int seq_len = min(max(p.seq_lens[b], 0), p.max_pages * PAGE_SIZE);
#endif
    const int valid_pages = (seq_len + PAGE_SIZE - 1) / PAGE_SIZE;
    const int n_stages = (seq_len + TOKENS_PER_STAGE - 1) / TOKENS_PER_STAGE;
    const int per_split = (n_stages + splits - 1) / splits;
    const int stage_begin = min(split * per_split, n_stages);
    const int my_stages = min(stage_begin + per_split, n_stages) - stage_begin;
    const int* table = p.page_table + (long long)b * p.max_pages;

#if !PERSISTENT
    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&full[s])));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (int s = 0; s < STAGES && s < my_stages; ++s)
            load_stage(p, &full[s], smem + s * SLOT_BYTES, hkv, table, (stage_begin + s) * TOKENS_PER_STAGE,
                       valid_pages);
    }
    constexpr int stream0 = 0;
#if PAGE_PREFETCH
    // thread 0 loads the next refill's page ids right after issuing a refill: their L2 round trip (0.11 of a refill's
    // ~0.45 us at 1 x 8k d128) overlaps the next stage's math instead of holding the issue
    int next_pages[BOXES];
    auto fetch_pages = [&](int stage_index) {
#pragma unroll
        for (int bx = 0; bx < BOXES; ++bx) {
            const int j = (stage_index * TOKENS_PER_STAGE + bx * BOX_ROWS) / PAGE_SIZE;
            next_pages[bx] = j < valid_pages ? table[j] : -1;  // past the sequence: an all-OOB box, zero filled
        }
    };
    if (threadIdx.x == 0 && STAGES < my_stages) fetch_pages(stage_begin + STAGES);
#endif
#endif
#if CLUSTER_SPLITS > 1
    if (threadIdx.x == 0) {  // after the first stages are asked for: the peers push only after their stage loops
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&cl_in_bar)));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    cluster_arrive_relaxed();  // this CTA's barrier exists: the peers push once they have waited on this
#endif
#if PERSISTENT
    const int stream0 = stream;  // the unit's first stage: its q rows came with it
    wait_bar(&full[stream0 % STAGES], (stream0 / STAGES) & 1);
    const unsigned char* q_area = smem + (stream0 % STAGES) * SLOT_BYTES + STAGE_BYTES;
#endif

    // Q as A fragments: {(g, 2t), (g + 8, 2t), (g, 2t + 8), (g + 8, 2t + 8)} of each k-step. head_dim 128:
    // straight from global memory into registers, once; head_dim 256: staged in shared memory (zero past
    // `rows`) and read by ldmatrix per chunk.
    unsigned q_regs[Q_IN_REGISTERS ? KS_Q : 1][4];
    if constexpr (Q_IN_REGISTERS) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int row = g + 8 * half, qr = row0 + row;
#if PERSISTENT
            const unsigned* src = reinterpret_cast<const unsigned*>(q_area + row * HEAD_DIM * 2);
#else
            const unsigned* src = reinterpret_cast<const unsigned*>(
                p.q + ((long long)(q_begin + qr / G) * heads_q + hkv * G + qr % G) * HEAD_DIM);
#endif
#pragma unroll
            for (int ks = 0; ks < KS_Q; ++ks) {
                q_regs[ks][half] = row < rows ? src[(d0 + 16 * ks + 2 * t) / 2] : 0u;
                q_regs[ks][2 + half] = row < rows ? src[(d0 + 16 * ks + 8 + 2 * t) / 2] : 0u;
            }
        }
    } else {
        for (int i = threadIdx.x; i < MAX_ROWS * HEAD_DIM / 8; i += THREADS) {  // 16-byte pieces of q rows
            const int row = i / (HEAD_DIM / 8), d = 8 * (i % (HEAD_DIM / 8)), qr = row0 + row;
            uint4 w = make_uint4(0, 0, 0, 0);
            if (row < rows)
                w = *reinterpret_cast<const uint4*>(
                    p.q + ((long long)(q_begin + qr / G) * heads_q + hkv * G + qr % G) * HEAD_DIM + d);
            *reinterpret_cast<uint4*>(q_s + row * Q_STRIDE + d) = w;
        }
    }
    float o[NT_O][4], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};  // rows g and g + 8
#pragma unroll
    for (int n = 0; n < NT_O; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
    __syncthreads();  // barriers initialised and q staged before anyone reads them
    const unsigned short* q_row = q_s + (lane % 8 + 8 * ((lane / 8) & 1)) * Q_STRIDE + 8 * (lane / 16) + d0;

    const int last_pos_base = seq_len - q_len;
#if PERSISTENT
    // the last key each of this thread's rows sees (causal; -1: a padding row), once per unit: computed inside the
    // stage loop, the division by G and the short-circuit tests made the softmax the persistent loop's bottleneck
    int row_limit[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        const int row = g + 8 * half;
        row_limit[half] = row < rows ? last_pos_base + (row0 + row) / G : -1;
        asm volatile("" : "+r"(row_limit[half]));  // kept in a register, not recomputed per stage
    }
#endif
    for (int it = 0; it < my_stages; ++it) {
        // PHASE: wait_kv
        const int s = (stream0 + it) % STAGES;
        wait_bar(&full[s], ((stream0 + it) / STAGES) & 1);
        unsigned char* kt = smem + s * SLOT_BYTES;
        unsigned char* vt = kt + TILE_BYTES;
        unsigned char* kt_own = kt + dims_at;  // this warp's dims of K and V
        unsigned char* vt_own = vt + dims_at;
        const int t0 = kw * KEYS_PER_WARP;
        const int pos0 = (stage_begin + it) * TOKENS_PER_STAGE + t0;
        const int n_keys = min(KEYS_PER_WARP, seq_len - pos0);  // warp-uniform
        if (n_keys > 0) {
            if (n_keys < KEYS_PER_WARP) {  // zero V past the sequence: P is 0 there but 0 x NaN is not
                for (int i = lane; i < (KEYS_PER_WARP - n_keys) * (WARP_DIMS / 8); i += 32) {
                    const int key = t0 + n_keys + i / (WARP_DIMS / 8), d = d0 + 8 * (i % (WARP_DIMS / 8));
                    *reinterpret_cast<uint4*>(vt + tile_offset(key, d)) = make_uint4(0, 0, 0, 0);
                }
                // before TMA (the async proxy) refills this slot: a persistent CTA's next unit does
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                __syncwarp();
            }
            // PHASE: qk
            // S = Q K^T: each 8-key n-tile's B for two k-steps by one ldmatrix.x4
            // QK_CHAINS 2: odd k-steps accumulate apart from even ones (sc_odd), two half-length chains of
            // dependent mmas: a lone CTA's time per stage is bound by them (-2 to -3 % at batch 1-8, H200).
            float sc[NT_S][4], sc_odd[NT_S][4];
#pragma unroll
            for (int nt = 0; nt < NT_S; ++nt)
#pragma unroll
                for (int i = 0; i < 4; ++i) sc[nt][i] = sc_odd[nt][i] = 0.f;
            if constexpr (Q_IN_REGISTERS) {  // n-tile outer (measured 2x faster for a lone CTA than k outer)
#pragma unroll
                for (int nt = 0; nt < NT_S; ++nt)
#pragma unroll
                    for (int kp = 0; kp < KS_Q / 2; ++kp) {
                        unsigned kb[4];
                        ldmatrix_x4(kb, kt_own + tile_offset(t0 + 8 * nt + lane % 8, 32 * kp + 8 * (lane / 8)));
                        mma_bf16(sc[nt], q_regs[2 * kp], kb[0], kb[1]);
                        mma_bf16(QK_ODD[nt], q_regs[2 * kp + 1], kb[2], kb[3]);
                    }
            } else {
#pragma unroll
                for (int kp = 0; kp < KS_Q / 2; ++kp) {
                    unsigned qa[2][4];  // k-steps 2kp and 2kp + 1, read once for every n-tile
#pragma unroll
                    for (int h = 0; h < 2; ++h) ldmatrix_x4(qa[h], q_row + 32 * kp + 16 * h);
#pragma unroll
                    for (int nt = 0; nt < NT_S; ++nt) {
                        unsigned kb[4];
                        ldmatrix_x4(kb, kt_own + tile_offset(t0 + 8 * nt + lane % 8, 32 * kp + 8 * (lane / 8)));
                        mma_bf16(sc[nt], qa[0], kb[0], kb[1]);
                        mma_bf16(QK_ODD[nt], qa[1], kb[2], kb[3]);
                    }
                }
            }
#if QK_CHAINS == 2
#pragma unroll
            for (int nt = 0; nt < NT_S; ++nt)
#pragma unroll
                for (int i = 0; i < 4; ++i) sc[nt][i] += sc_odd[nt][i];
#endif
#if DIM_WARPS == 2
            // the pair's halves of Q K^T meet: both warps add the same two numbers, so both hold the same S
#pragma unroll
            for (int nt = 0; nt < NT_S; ++nt)
#pragma unroll
                for (int i = 0; i < 4; ++i) s_half[kw][dh][nt * 4 + i][lane] = sc[nt][i];
            asm volatile("bar.sync %0, 64;" ::"r"(1 + kw) : "memory");
#pragma unroll
            for (int nt = 0; nt < NT_S; ++nt)
#pragma unroll
                for (int i = 0; i < 4; ++i) sc[nt][i] += s_half[kw][1 - dh][nt * 4 + i][lane];
#endif
            // PHASE: online_softmax
            float mx[2];
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int row = g + 8 * half;
                mx[half] = -INFINITY;
#pragma unroll
                for (int nt = 0; nt < NT_S; ++nt)
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        const int key = 8 * nt + 2 * t + e;
#if PERSISTENT
                        const bool seen = (key < n_keys) & (pos0 + key <= row_limit[half]);
#else
                        const bool seen = key < n_keys && row < rows && pos0 + key <= last_pos_base + (row0 + row) / G;
#endif
                        sc[nt][2 * half + e] = seen ? sc[nt][2 * half + e] * scale_log2 : -INFINITY;
                        mx[half] = fmaxf(mx[half], sc[nt][2 * half + e]);
                    }
                mx[half] = fmaxf(mx[half], __shfl_xor_sync(0xffffffffu, mx[half], 1));
                mx[half] = fmaxf(mx[half], __shfl_xor_sync(0xffffffffu, mx[half], 2));
            }
            // Lazy rescale: a row's running max moves only when a stage's max passes it by more than RESCALE_LOG2, so
            // P = exp2(s - m) stays under 2^RESCALE_LOG2 (bf16 and the fp32 sums hold that) and most stages skip O's
            // rescale (64 multiplies a lane at head_dim 128). Softmax does not depend on m: the same output up to
            // rounding. A warp pair (DIM_WARPS 2) holds the same S, so both warps decide alike.
            if (__any_sync(0xffffffffu, (mx[0] > m[0] + RESCALE_LOG2) | (mx[1] > m[1] + RESCALE_LOG2))) {
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    const float m_new = fmaxf(m[half], mx[half]);
                    const float alpha = m_new == -INFINITY ? 1.f : exp2f(m[half] - m_new);
                    l[half] *= alpha;
                    m[half] = m_new;
#pragma unroll
                    for (int n = 0; n < NT_O; ++n) { o[n][2 * half] *= alpha; o[n][2 * half + 1] *= alpha; }
                }
            }
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const float m_use = m[half] == -INFINITY ? 0.f : m[half];  // no key yet: every s is -inf, P is 0
                float sum = 0.f;
#pragma unroll
                for (int nt = 0; nt < NT_S; ++nt)
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        const float w = exp2f(sc[nt][2 * half + e] - m_use);
                        sc[nt][2 * half + e] = w;
                        sum += w;
                    }
                l[half] += sum;
            }
            // PHASE: pv
            // O += P V: two S n-tiles make one A operand (16 keys); ldmatrix.x4.trans gives two O n-tiles
#pragma unroll
            for (int ks = 0; ks < KEYS_PER_WARP / 16; ++ks) {
                const unsigned pa[4] = {pack_bf16(sc[2 * ks][0], sc[2 * ks][1]), pack_bf16(sc[2 * ks][2], sc[2 * ks][3]),
                                        pack_bf16(sc[2 * ks + 1][0], sc[2 * ks + 1][1]),
                                        pack_bf16(sc[2 * ks + 1][2], sc[2 * ks + 1][3])};
                const int key = t0 + 16 * ks + lane % 8 + 8 * ((lane / 8) & 1);
#pragma unroll
                for (int np = 0; np < NT_O / 2; ++np) {
                    unsigned vb[4];
                    ldmatrix_x4_trans(vb, vt_own + tile_offset(key, 16 * np + 8 * (lane / 16)));
                    mma_bf16(o[2 * np], pa, vb[0], vb[1]);
                    mma_bf16(o[2 * np + 1], pa, vb[2], vb[3]);
                }
            }
        }
        // PHASE: stage_release
        __syncthreads();  // stage s is free again
#if PERSISTENT
        if (threadIdx.x == 0) produce();
#else
#if PAGE_PREFETCH
        if (threadIdx.x == 0 && it + STAGES < my_stages) {
            load_stage_pages(p, &full[s], smem + s * SLOT_BYTES, hkv, next_pages,
                             (stage_begin + it + STAGES) * TOKENS_PER_STAGE);
            if (it + STAGES + 1 < my_stages) fetch_pages(stage_begin + it + STAGES + 1);
        }
#else
        if (threadIdx.x == 0 && it + STAGES < my_stages)
            load_stage(p, &full[s], smem + s * SLOT_BYTES, hkv, table,
                       (stage_begin + it + STAGES) * TOKENS_PER_STAGE, valid_pages);
#endif
#endif
    }

    // ---- the warps meet in shared memory, [warp][row][dim] ---------------------------------------
    // PHASE: merge_and_store
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        l[half] += __shfl_xor_sync(0xffffffffu, l[half], 1);
        l[half] += __shfl_xor_sync(0xffffffffu, l[half], 2);
    }
    float* merge_o = reinterpret_cast<float*>(smem + MERGE_AT);  // [KEY_WARPS][MAX_ROWS][HEAD_DIM]
    float* merge_ml = merge_o + KEY_WARPS * MAX_ROWS * HEAD_DIM; // [KEY_WARPS][MAX_ROWS][2]
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        const int row = g + 8 * half;
        if (row >= rows) continue;  // nobody reads the padding rows (a G = 6 call writes 6 of 16)
        float* dst = merge_o + (kw * MAX_ROWS + row) * HEAD_DIM + d0;
#pragma unroll
        for (int n = 0; n < NT_O; ++n) *reinterpret_cast<float2*>(dst + 8 * n + 2 * t) = make_float2(o[n][2 * half], o[n][2 * half + 1]);
        if (t == 0 && dh == 0) { merge_ml[(kw * MAX_ROWS + row) * 2] = m[half]; merge_ml[(kw * MAX_ROWS + row) * 2 + 1] = l[half]; }
    }
    __syncthreads();
#if CLUSTER_SPLITS > 1
    cluster_wait();  // every CTA of the cluster has initialised its barrier (they arrived at the start)
#endif
    const long long group_at = ((long long)b * p.heads_kv + hkv) * row_blocks + rb;
    // Each thread merges (row, 4 dims): every warp's (m, l, o) loaded at once, then combined in warp order (the
    // same arithmetic per element as one dim at a time, so the same bits). One dim per item chained shared-memory
    // round trips: loop end to partials stored took 0.93 us at 1 x 8k d128 on the H200, 0.51 this way.
    for (int i = threadIdx.x; i < rows * (HEAD_DIM / 4); i += THREADS) {
        const int row = i / (HEAD_DIM / 4), d = 4 * (i % (HEAD_DIM / 4)), qr = row0 + row;
        float mw[KEY_WARPS], lw[KEY_WARPS];
        float4 ow[KEY_WARPS];
#pragma unroll
        for (int w = 0; w < KEY_WARPS; ++w) {
            mw[w] = merge_ml[(w * MAX_ROWS + row) * 2];
            lw[w] = merge_ml[(w * MAX_ROWS + row) * 2 + 1];
            ow[w] = *reinterpret_cast<const float4*>(merge_o + (w * MAX_ROWS + row) * HEAD_DIM + d);
        }
        float mm = -INFINITY;
#pragma unroll
        for (int w = 0; w < KEY_WARPS; ++w) mm = fmaxf(mm, mw[w]);
        float ll = 0.f;
        float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
        for (int w = 0; w < KEY_WARPS; ++w) {
            const float f = mw[w] == -INFINITY ? 0.f : exp2f(mw[w] - mm);
            ll = fmaf(lw[w], f, ll);
            acc.x = fmaf(ow[w].x, f, acc.x); acc.y = fmaf(ow[w].y, f, acc.y);
            acc.z = fmaf(ow[w].z, f, acc.z); acc.w = fmaf(ow[w].w, f, acc.w);
        }
        if (splits == 1) {
            unsigned short* dst = p.out + ((long long)(q_begin + qr / G) * heads_q + hkv * G + qr % G) * HEAD_DIM + d;
            const bool any = ll > 0.f;
            *reinterpret_cast<uint2*>(dst) =
                make_uint2((unsigned)f32_to_bf16(any ? acc.x / ll : 0.f) | ((unsigned)f32_to_bf16(any ? acc.y / ll : 0.f) << 16),
                           (unsigned)f32_to_bf16(any ? acc.z / ll : 0.f) | ((unsigned)f32_to_bf16(any ? acc.w / ll : 0.f) << 16));
        } else if (CLUSTER_SPLITS > 1) {
#if CLUSTER_SPLITS > 1
            // to the CTA that owns these dims, with the row's (max, sum) once per owner
            const unsigned owner = (unsigned)(d / SLICE), at_bar = cluster_addr(&cl_in_bar, owner);
            st_async4(cluster_addr(&cl_in_o[split][row][d % SLICE], owner), acc, at_bar);
            if (d % SLICE == 0) st_async2(cluster_addr(&cl_in_ml[split][row][0], owner), mm, ll, at_bar);
#endif
        } else {
            const long long at = (group_at * splits + split) * MAX_ROWS + row;
            *reinterpret_cast<float4*>(p.partial_o + at * HEAD_DIM + d) = acc;
            if (d == 0) { p.partial_ml[at * 2] = mm; p.partial_ml[at * 2 + 1] = ll; }
        }
    }
#if PERSISTENT
    stream += my_stages;
    __syncthreads();  // the merge buffer is the next unit's
    continue;  // whole units: the split reduction below is the split builds'
#endif
    if (splits == 1) CTA_RETURN;
#if CLUSTER_SPLITS > 1
    // the cluster's CTAs (its splits) meet: each pushed its merged O over CTA c's dims [c, c + 1) x SLICE and every
    // row's (max, sum) into CTA c's shared memory by st.async; here once the barrier has counted their bytes. The
    // pull this replaced (a cluster barrier with release, which ptxas makes a MEMBAR.GPU, DSMEM loads, a second
    // barrier after the output's stores) cost 3-6 % of the batch-1 calls and 0.4-0.8 % of 8 x 8k d128
    // (data/runs/20261202T154500Z-decode_cluster_push)
    if (threadIdx.x == 0)
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                     ::"r"(smem_addr(&cl_in_bar)), "r"((unsigned)(CLUSTER_SPLITS * rows * (SLICE * 4 + 8))) : "memory");
    wait_bar_cluster(&cl_in_bar, 0);
    for (int i = threadIdx.x; i < rows * SLICE; i += THREADS) {
        const int row = i / SLICE, dd = i % SLICE, d = split * SLICE + dd, qr = row0 + row;
        float ms[CLUSTER_SPLITS], mm = -INFINITY;
#pragma unroll
        for (int c = 0; c < CLUSTER_SPLITS; ++c) mm = fmaxf(mm, ms[c] = cl_in_ml[c][row][0]);
        float ll = 0.f, acc = 0.f;
#pragma unroll
        for (int c = 0; c < CLUSTER_SPLITS; ++c) {
            const float f = ms[c] == -INFINITY ? 0.f : exp2f(ms[c] - mm);
            ll = fmaf(cl_in_ml[c][row][1], f, ll);
            acc = fmaf(cl_in_o[c][row][dd], f, acc);
        }
        p.out[((long long)(q_begin + qr / G) * heads_q + hkv * G + qr % G) * HEAD_DIM + d] =
            f32_to_bf16(ll > 0.f ? acc / ll : 0.f);
    }
    // no CTA leaves before every push has landed: each arrives once its own have; relaxed, as nothing is published
    cluster_arrive_relaxed();
    cluster_wait();
    CTA_RETURN;
#endif
    __syncthreads();
    if (threadIdx.x == 0) last_cta = count_in(p.counter + group_at, (unsigned)splits - 1) == (unsigned)splits - 1;
    __syncthreads();
    if (!last_cta) CTA_RETURN;
    reduce_splits(p, group_at, splits, rows, row0, q_begin, G, heads_q, hkv);
#if PERSISTENT
    }  // the CTA's units
#endif
    CTA_RETURN;
}
