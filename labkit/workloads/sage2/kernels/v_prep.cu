// v_prep.cu: phases v_transpose_pad_permute and v_scale_fp8_quantization.
//
// v_transpose_pad_permute   V[b, n, h, d] (strided) -> vt[b, d, h, p] bf16/fp16, p < Npad =
//     ceil(N / 64) * 64; tokens >= N and channels >= d_in are physical zeros. Inside each
//     16-token group, position p holds token PERM16[p]: the order in which an mma.sync
//     m16n8k32 A fragment packed straight from the S accumulator meets the keys (see
//     attn_fwd.cu), so P.V needs no shuffles.
//     grid (Npad / 64, H, B), block 256: a 64-token x HEAD_DIM tile through shared memory.
// v_scale_fp8_quant   per (b, h, d): amax over all Npad tokens, v_scale = amax / 448,
//     v8 = cvt.rn.satfinite.e4m3(v * (448 / amax)) -> v8[b, d, h, p] (e4m3 bytes), scale[b, h, d].
//     grid (H, B, HEAD_DIM), block 256: an amax pass and a quantize pass over one row.
// v_scale_fp8x2_quant   the same, and also v8_lo = e4m3(16 x (v * (448 / amax) - v8)): the
//     second term of the two-term V the mainloop reads when built with PV_TERMS 2.
#include "sage2_common.cuh"

#define TILE_T 64

__constant__ int PERM16[16] = {0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15};

extern "C" __global__ void __launch_bounds__(256) v_transpose_pad_permute(
    const u16* __restrict__ v, i64 s_b, i64 s_n, i64 s_h, int n, int d_in, u16* __restrict__ vt) {
    const int tile = blockIdx.x, h = blockIdx.y, b = blockIdx.z, H = gridDim.y;
    const i64 npad = (i64)gridDim.x * TILE_T;
    __shared__ u16 s[TILE_T][HEAD_DIM + 8];  // +8: keeps the transposed reads off one bank
    constexpr int VPR = HEAD_DIM / 8;         // 16-byte vectors per token row
    for (int i = threadIdx.x; i < TILE_T * VPR; i += 256) {
        int r = i / VPR, c = (i % VPR) * 8, t = tile * TILE_T + r;
        uint4 val = make_uint4(0, 0, 0, 0);
        if (t < n && c < d_in) val = *reinterpret_cast<const uint4*>(v + b * s_b + (i64)t * s_n + h * s_h + c);
        const u16* e = reinterpret_cast<const u16*>(&val);
#pragma unroll
        for (int j = 0; j < 8; ++j) s[r][c + j] = e[j];
    }
    __syncthreads();
    constexpr int VPT = TILE_T / 8;  // 16-byte vectors per output row (64 tokens)
    for (int i = threadIdx.x; i < HEAD_DIM * VPT; i += 256) {
        int d = i / VPT, p0 = (i % VPT) * 8;
        unsigned w[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            int pa = p0 + 2 * j, pb = pa + 1;
            int ta = (pa & ~15) | PERM16[pa & 15], tb = (pb & ~15) | PERM16[pb & 15];
            w[j] = (unsigned)s[ta][d] | ((unsigned)s[tb][d] << 16);
        }
        *reinterpret_cast<uint4*>(vt + (((i64)b * HEAD_DIM + d) * H + h) * npad + tile * TILE_T + p0) =
            make_uint4(w[0], w[1], w[2], w[3]);
    }
}

__device__ __forceinline__ uint2 pack_u16x4(const u16 w[4]) {
    return make_uint2(w[0] | ((unsigned)w[1] << 16), w[2] | ((unsigned)w[3] << 16));
}

// One (b, d, h) row: amax pass, then quantize; with ``v8_lo`` also the split's second term.
template <bool SPLIT>
__device__ __forceinline__ void v_scale_row(const u16* __restrict__ vt, int npad, unsigned char* __restrict__ v8,
                                            unsigned char* __restrict__ v8_lo, float* __restrict__ scale) {
    const int h = blockIdx.x, b = blockIdx.y, d = blockIdx.z, H = gridDim.x;
    const i64 row = (((i64)b * HEAD_DIM + d) * H + h) * npad;
    const u16* src = vt + row;
    float a = 0.f;
    for (int p = threadIdx.x * 8; p < npad; p += 256 * 8) {
        float x[8];
        load8(src + p, x);
#pragma unroll
        for (int j = 0; j < 8; ++j) a = fmaxf(a, fabsf(x[j]));
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) a = fmaxf(a, __shfl_xor_sync(0xffffffff, a, o));
    __shared__ float wm[8];
    if (threadIdx.x % 32 == 0) wm[threadIdx.x / 32] = a;
    __syncthreads();
    a = 1e-7f;
#pragma unroll
    for (int w = 0; w < 8; ++w) a = fmaxf(a, wm[w]);
    const float inv = __fdiv_rn(448.f, a);
    for (int p = threadIdx.x * 8; p < npad; p += 256 * 8) {
        float x[8];
        load8(src + p, x);
        u16 hi[4], lo[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            float x0 = __fmul_rn(x[2 * j], inv), x1 = __fmul_rn(x[2 * j + 1], inv);
            hi[j] = f32x2_to_e4m3x2(x0, x1);
            if (SPLIT) lo[j] = e4m3x2_residual16(x0, x1, hi[j]);
        }
        *reinterpret_cast<uint2*>(v8 + row + p) = pack_u16x4(hi);
        if (SPLIT) *reinterpret_cast<uint2*>(v8_lo + row + p) = pack_u16x4(lo);
    }
    if (threadIdx.x == 0) scale[((i64)b * H + h) * HEAD_DIM + d] = __fdiv_rn(a, 448.f);
}

extern "C" __global__ void __launch_bounds__(256) v_scale_fp8_quant(
    const u16* __restrict__ vt, int npad, unsigned char* __restrict__ v8, float* __restrict__ scale) {
    v_scale_row<false>(vt, npad, v8, nullptr, scale);
}

extern "C" __global__ void __launch_bounds__(256) v_scale_fp8x2_quant(
    const u16* __restrict__ vt, int npad, unsigned char* __restrict__ v8, unsigned char* __restrict__ v8_lo,
    float* __restrict__ scale) {
    v_scale_row<true>(vt, npad, v8, v8_lo, scale);
}
