// v_prep.cu: phases v_transpose_pad_permute and v_scale_fp8_quantization.
//
// V's per-channel |v| maximum comes from k_mean.cu (phase k_mean_and_smoothing_preparation, one pass over K and
// V), so V is transposed and quantized in one more pass, with no 16-bit intermediate:
// v_transpose_pad_permute   V[b, n, h, d] (strided) -> v8[b, d, h, p] e4m3 = cvt.rn.satfinite.e4m3(v * (448 /
//     amax)), amax = max(1e-7, v_amax[b, h, d]); p < Npad = ceil(N / 64) * 64; tokens >= N and channels >=
//     d_in are zeros. Inside each 16-token group, position p holds token PERM16[p] = 0, 1, 8, 9, 2, 3, 10,
//     11, 4, 5, 12, 13, 6, 7, 14, 15: the order in which an mma.sync m16n8k32 A fragment packed straight
//     from the S accumulator meets the keys (see attn_fwd.cu), so P.V needs no shuffles.
//     grid (Npad / 64, H, B), block 256: a 64-token x HEAD_DIM tile through shared memory.
// v_transpose_pad_permute_x2   the same, and also v8_lo = e4m3(16 x (v * (448 / amax) - v8)): the second
//     term of the two-term V the mainloop reads when built with PV_TERMS 2.
// v_scale_fp8_quant   v_scale[b, h, d] = amax / 448, the mainloop's per-channel dequantization scale.
#include "sage2_common.cuh"

#define TILE_T 64

// The permutation keeps consecutive token pairs together (positions 2 q and 2 q + 1 hold tokens 2 k, 2 k + 1),
// so the tile goes through shared memory as 32-bit token pairs: slot INV_PAIR[k] of a 16-token group holds
// pair k. A thread reads two tokens' 16-byte rows, pairs their channels with byte permutes, and the output
// side reads 16-byte runs of four slots (8 tokens). Slots are XOR-swizzled by 4 x ((channel / 8) % 8),
// which keeps runs of four intact and spreads the pairing writes of one warp over the banks.
__constant__ int INV_PAIR[8] = {0, 2, 4, 6, 1, 3, 5, 7};
#define SLOTS (TILE_T / 2)

__device__ __forceinline__ int swizzled(int channel, int slot) { return slot ^ (4 * ((channel >> 3) & 7)); }

__device__ __forceinline__ float v_amax_floor(const float* v_amax, i64 at) { return fmaxf(1e-7f, v_amax[at]); }

template <bool SPLIT>
__device__ __forceinline__ void transpose_quant(const u16* __restrict__ v, i64 s_b, i64 s_n, i64 s_h, int n, int d_in,
                                                const float* __restrict__ v_amax, unsigned char* __restrict__ v8,
                                                unsigned char* __restrict__ v8_lo) {
    const int tile = blockIdx.x, h = blockIdx.y, b = blockIdx.z, H = gridDim.y;
    const i64 npad = (i64)gridDim.x * TILE_T;
    __shared__ alignas(16) unsigned s[HEAD_DIM][SLOTS];  // [channel][token-pair slot]
    constexpr int VPR = HEAD_DIM / 8;                     // 16-byte vectors per token row
    for (int i = threadIdx.x; i < SLOTS * VPR; i += 256) {
        const int k = i / VPR, c = (i % VPR) * 8, t = tile * TILE_T + 2 * k;
        uint4 r0 = make_uint4(0, 0, 0, 0), r1 = r0;
        const u16* src = v + b * s_b + (i64)t * s_n + h * s_h + c;
        if (c < d_in && t < n) r0 = *reinterpret_cast<const uint4*>(src);
        if (c < d_in && t + 1 < n) r1 = *reinterpret_cast<const uint4*>(src + s_n);
        const unsigned w0[4] = {r0.x, r0.y, r0.z, r0.w}, w1[4] = {r1.x, r1.y, r1.z, r1.w};
        const int slot = (k & ~7) | INV_PAIR[k & 7];
#pragma unroll
        for (int j = 0; j < 4; ++j) {  // channels c + 2 j (low halves) and c + 2 j + 1 (high halves)
            s[c + 2 * j][swizzled(c + 2 * j, slot)] = __byte_perm(w0[j], w1[j], 0x5410);
            s[c + 2 * j + 1][swizzled(c + 2 * j + 1, slot)] = __byte_perm(w0[j], w1[j], 0x7632);
        }
    }
    __syncthreads();
    // each output item: channel d, 16 positions (two runs of four slots) -> 16 e4m3 bytes
    for (int i = threadIdx.x; i < HEAD_DIM * (TILE_T / 16); i += 256) {
        const int d = i / (TILE_T / 16), q = (i % (TILE_T / 16)) * 8;
        const float inv = __fdiv_rn(448.f, v_amax_floor(v_amax, ((i64)b * H + h) * HEAD_DIM + d));
        const uint4 a = *reinterpret_cast<const uint4*>(&s[d][swizzled(d, q)]);
        const uint4 c = *reinterpret_cast<const uint4*>(&s[d][swizzled(d, q + 4)]);
        const unsigned w[8] = {a.x, a.y, a.z, a.w, c.x, c.y, c.z, c.w};
        unsigned hi[4], lo[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            u16 h2[2], l2[2];
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const unsigned word = w[2 * j + e];
                const float x0 = __fmul_rn(in_to_f32((u16)(word & 0xffff)), inv);
                const float x1 = __fmul_rn(in_to_f32((u16)(word >> 16)), inv);
                h2[e] = f32x2_to_e4m3x2(x0, x1);
                if (SPLIT) l2[e] = e4m3x2_residual16(x0, x1, h2[e]);
            }
            hi[j] = h2[0] | ((unsigned)h2[1] << 16);
            if (SPLIT) lo[j] = l2[0] | ((unsigned)l2[1] << 16);
        }
        const i64 at = (((i64)b * HEAD_DIM + d) * H + h) * npad + tile * TILE_T + 2 * q;
        *reinterpret_cast<uint4*>(v8 + at) = make_uint4(hi[0], hi[1], hi[2], hi[3]);
        if (SPLIT) *reinterpret_cast<uint4*>(v8_lo + at) = make_uint4(lo[0], lo[1], lo[2], lo[3]);
    }
}

extern "C" __global__ void __launch_bounds__(256) v_transpose_pad_permute(
    const u16* __restrict__ v, i64 s_b, i64 s_n, i64 s_h, int n, int d_in, const float* __restrict__ v_amax,
    unsigned char* __restrict__ v8) {
    transpose_quant<false>(v, s_b, s_n, s_h, n, d_in, v_amax, v8, nullptr);
}

extern "C" __global__ void __launch_bounds__(256) v_transpose_pad_permute_x2(
    const u16* __restrict__ v, i64 s_b, i64 s_n, i64 s_h, int n, int d_in, const float* __restrict__ v_amax,
    unsigned char* __restrict__ v8, unsigned char* __restrict__ v8_lo) {
    transpose_quant<true>(v, s_b, s_n, s_h, n, d_in, v_amax, v8, v8_lo);
}

extern "C" __global__ void v_scale_fp8_quant(const float* __restrict__ v_amax, int count, float* __restrict__ scale) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) scale[i] = __fdiv_rn(v_amax_floor(v_amax, i), 448.f);
}
