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
// Launch: grid (groups, H, B), block ROWS * HEAD_DIM / 16 (each thread: 16 channels of a row).
#include "sage2_common.cuh"

#ifndef WARP_Q
#define WARP_Q 32
#endif
#ifndef CTA_K
#define CTA_K 64
#endif
#define TPR (HEAD_DIM / 16)  // threads per row

template <int ROWS, bool SUB_MEAN>
__device__ __forceinline__ void quant_group(const u16* __restrict__ x, i64 s_b, i64 s_n, i64 s_h, int n, int d_in,
                                            const float* __restrict__ km, signed char* __restrict__ q8,
                                            float* __restrict__ scale) {
    const int g = blockIdx.x, h = blockIdx.y, b = blockIdx.z, H = gridDim.y;
    const int row = threadIdx.x / TPR, d0 = (threadIdx.x % TPR) * 16;
    const int t = g * ROWS + row;
    float v[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) v[i] = 0.f;
    if (t < n) {
#pragma unroll
        for (int half = 0; half < 2; ++half)
            if (d0 + 8 * half < d_in) load8(x + b * s_b + (i64)t * s_n + h * s_h + d0 + 8 * half, v + 8 * half);
        if (SUB_MEAN) {
            const float* m = km + ((i64)b * H + h) * HEAD_DIM + d0;
#pragma unroll
            for (int i = 0; i < 16; ++i) v[i] = (d0 + i < d_in) ? v[i] - m[i] : 0.f;
        }
    }
    float a = 0.f;
#pragma unroll
    for (int i = 0; i < 16; ++i) a = fmaxf(a, fabsf(v[i]));
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) a = fmaxf(a, __shfl_xor_sync(0xffffffff, a, o));
    __shared__ float warp_max[ROWS * TPR / 32];
    if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = a;
    __syncthreads();
    a = 1e-7f;
    for (int w = 0; w < ROWS * TPR / 32; ++w) a = fmaxf(a, warp_max[w]);
    const float inv = __fdiv_rn(127.f, a);
    unsigned packed[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        unsigned p = 0;
#pragma unroll
        for (int j = 0; j < 4; ++j) p |= (unsigned)(f32_to_s8(__fmul_rn(v[4 * i + j], inv)) & 0xff) << (8 * j);
        packed[i] = p;
    }
    const i64 npad = (i64)gridDim.x * ROWS;
    *reinterpret_cast<uint4*>(q8 + (((i64)b * H + h) * npad + t) * HEAD_DIM + d0) =
        make_uint4(packed[0], packed[1], packed[2], packed[3]);
    if (threadIdx.x == 0) scale[((i64)b * H + h) * gridDim.x + g] = __fdiv_rn(a, 127.f);
}

extern "C" __global__ void __launch_bounds__(WARP_Q * TPR) q_int8_quant(
    const u16* __restrict__ q, i64 s_b, i64 s_n, i64 s_h, int n, int d_in, signed char* __restrict__ q8,
    float* __restrict__ scale) {
    quant_group<WARP_Q, false>(q, s_b, s_n, s_h, n, d_in, nullptr, q8, scale);
}

extern "C" __global__ void __launch_bounds__(CTA_K * TPR) k_int8_sub_mean_quant(
    const u16* __restrict__ k, i64 s_b, i64 s_n, i64 s_h, int n, int d_in, const float* __restrict__ km,
    signed char* __restrict__ k8, float* __restrict__ scale) {
    quant_group<CTA_K, true>(k, s_b, s_n, s_h, n, d_in, km, k8, scale);
}
