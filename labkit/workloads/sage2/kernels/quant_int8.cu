// quant_int8.cu: phases q_int8_quantization and k_int8_subtract_mean_quantization.
//
// One CTA quantizes one group of ROWS consecutive tokens x HEAD_DIM channels of one head:
//   x'     = x - km[b, h, :]            (K only; km from k_mean.cu, fp32)
//   amax   = max(1e-7, max |x'|)        over the group
//   scale  = amax / 127                 -> scale[b, h, group]            (fp32)
//   q      = cvt.rni.sat.s8(x' * (127 / amax))   round to nearest even, saturate
// Output q8[b, h, t, d] for t < Npad (= groups x ROWS): rows t >= N and channels >= d_in are 0,
// so the mainloop loads whole tiles without predication.
//   q_int8_quant          ROWS = WARP_Q (32): one scale per warp tile of the mainloop
//   k_int8_sub_mean_quant ROWS = CTA_K (64): one scale per KV block
// Launch: grid (groups, H, B), block min(ROWS, 64) * HEAD_DIM / 16 (each thread: 16 channels of ROWS / 64 rows,
// or of one row up to 64).
#include "sage2_common.cuh"

#ifndef WARP_Q
#define WARP_Q 32
#endif
#ifndef CTA_K
#define CTA_K 64
#endif
#define TPR (HEAD_DIM / 16)  // threads per row

// Rows per thread: above 64 rows a thread takes ROWS / 64 of them, so a block stays at 64 x TPR threads
// (the sm90 schedule's 128-key groups ran 2.26 x their floor as 1024-thread blocks on the H200).
template <int ROWS>
struct Rows {
    static constexpr int per_thread = ROWS > 64 ? ROWS / 64 : 1;
    static constexpr int threads = ROWS / per_thread * TPR;
};

template <int ROWS, bool SUB_MEAN>
__device__ __forceinline__ void quant_group(const u16* __restrict__ x, i64 s_b, i64 s_n, i64 s_h, int n, int d_in,
                                            const float* __restrict__ km, signed char* __restrict__ q8,
                                            float* __restrict__ scale) {
    constexpr int RPT = Rows<ROWS>::per_thread, THREAD_ROWS = ROWS / RPT;
    const int g = blockIdx.x, h = blockIdx.y, b = blockIdx.z, H = gridDim.y;
    const int row = threadIdx.x / TPR, d0 = (threadIdx.x % TPR) * 16;
    // The rows stay in registers as their 16-bit words (8 registers a row, not 16 floats), and each value is
    // formed twice, for the maximum and for the rounding: 128-row groups ran at half occupancy otherwise.
    uint4 raw[RPT][2];
    bool live[RPT];
    float m[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) m[i] = SUB_MEAN && d0 + i < d_in ? km[((i64)b * H + h) * HEAD_DIM + d0 + i] : 0.f;
#pragma unroll
    for (int r = 0; r < RPT; ++r) {
        const int t = g * ROWS + row + r * THREAD_ROWS;
        live[r] = t < n;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            raw[r][half] = make_uint4(0, 0, 0, 0);
            if (live[r] && d0 + 8 * half < d_in)
                raw[r][half] = *reinterpret_cast<const uint4*>(x + b * s_b + (i64)t * s_n + h * s_h + d0 + 8 * half);
        }
    }
    // value i of row r: the input (minus K's mean for the channels < d_in of a live row), 0 elsewhere
    auto value = [&](int r, int i) {
        const uint4 w = raw[r][i / 8];
        const unsigned word = (i % 8 < 2) ? w.x : (i % 8 < 4) ? w.y : (i % 8 < 6) ? w.z : w.w;
        const float f = in_to_f32((u16)(i % 2 ? word >> 16 : word & 0xffff));
        return SUB_MEAN ? ((live[r] && d0 + i < d_in) ? f - m[i] : 0.f) : f;
    };
    float a = 0.f;
#pragma unroll
    for (int r = 0; r < RPT; ++r)
#pragma unroll
        for (int i = 0; i < 16; ++i) a = fmaxf(a, fabsf(value(r, i)));
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) a = fmaxf(a, __shfl_xor_sync(0xffffffff, a, o));
    __shared__ float warp_max[THREAD_ROWS * TPR / 32];
    if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = a;
    __syncthreads();
    a = 1e-7f;
    for (int w = 0; w < THREAD_ROWS * TPR / 32; ++w) a = fmaxf(a, warp_max[w]);
    const float inv = __fdiv_rn(127.f, a);
    const i64 npad = (i64)gridDim.x * ROWS;
#pragma unroll
    for (int r = 0; r < RPT; ++r) {
        unsigned packed[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            unsigned p = 0;
#pragma unroll
            for (int j = 0; j < 4; ++j) p |= (unsigned)(f32_to_s8(__fmul_rn(value(r, 4 * i + j), inv)) & 0xff) << (8 * j);
            packed[i] = p;
        }
        const int t = g * ROWS + row + r * THREAD_ROWS;
        *reinterpret_cast<uint4*>(q8 + (((i64)b * H + h) * npad + t) * HEAD_DIM + d0) =
            make_uint4(packed[0], packed[1], packed[2], packed[3]);
    }
    if (threadIdx.x == 0) scale[((i64)b * H + h) * gridDim.x + g] = __fdiv_rn(a, 127.f);
}

extern "C" __global__ void __launch_bounds__(Rows<WARP_Q>::threads) q_int8_quant(
    const u16* __restrict__ q, i64 s_b, i64 s_n, i64 s_h, int n, int d_in, signed char* __restrict__ q8,
    float* __restrict__ scale) {
    quant_group<WARP_Q, false>(q, s_b, s_n, s_h, n, d_in, nullptr, q8, scale);
}

extern "C" __global__ void __launch_bounds__(Rows<CTA_K>::threads, 1536 / Rows<CTA_K>::threads) k_int8_sub_mean_quant(
    const u16* __restrict__ k, i64 s_b, i64 s_n, i64 s_h, int n, int d_in, const float* __restrict__ km,
    signed char* __restrict__ k8, float* __restrict__ scale) {
    quant_group<CTA_K, true>(k, s_b, s_n, s_h, n, d_in, km, k8, scale);
}
