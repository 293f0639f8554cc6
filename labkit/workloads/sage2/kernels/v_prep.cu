// v_prep.cu: phases v_transpose_pad_permute and v_scale_fp8_quantization.
//
// v_transpose_pad_permute   V[b, n, h, d] (strided) -> vt[b, d, h, p] bf16/fp16, p < Npad =
//     ceil(N / 64) * 64; tokens >= N and channels >= d_in are physical zeros. Inside each
//     16-token group, position p holds token PERM16[p] = 0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7,
//     14, 15: the order in which an mma.sync m16n8k32 A fragment packed straight from the S
//     accumulator meets the keys (see attn_fwd.cu), so P.V needs no shuffles.
//     grid (Npad / 64, H, B), block 256: a 64-token x HEAD_DIM tile through shared memory. Each tile
//     also folds its per-channel |v| maximum into v_amax[b, h, d] (atomicMax on the float bits, after
//     v_amax_clear zeroed it in the same phase), so the quantizer reads V once.
// v_scale_fp8_quant   per (b, h, d): amax = v_amax (every token), v_scale = amax / 448,
//     v8 = cvt.rn.satfinite.e4m3(v * (448 / amax)) -> v8[b, d, h, p] (e4m3 bytes), scale[b, h, d].
//     grid (H, B, HEAD_DIM), block 256: one pass over one row, four 16-byte loads in flight per thread.
// v_scale_fp8x2_quant   the same, and also v8_lo = e4m3(16 x (v * (448 / amax) - v8)): the
//     second term of the two-term V the mainloop reads when built with PV_TERMS 2.
#include "sage2_common.cuh"

#define TILE_T 64

// The permutation keeps consecutive token pairs together (positions 2 q and 2 q + 1 hold tokens 2 k, 2 k + 1), so
// the tile goes through shared memory as 32-bit token pairs: slot INV_PAIR[k] of a 16-token group holds
// pair k. A thread reads two tokens' 16-byte rows, pairs their channels with byte permutes, and the output
// side reads 16-byte runs of four slots (8 tokens). Slots are XOR-swizzled by 4 x ((channel / 8) % 8),
// which keeps runs of four intact and spreads the pairing writes of one warp over the banks.
__constant__ int INV_PAIR[8] = {0, 2, 4, 6, 1, 3, 5, 7};
#define SLOTS (TILE_T / 2)

__device__ __forceinline__ int swizzled(int channel, int slot) { return slot ^ (4 * ((channel >> 3) & 7)); }

extern "C" __global__ void v_amax_clear(unsigned* __restrict__ v_amax, int count) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) v_amax[i] = 0u;
}

extern "C" __global__ void __launch_bounds__(256) v_transpose_pad_permute(
    const u16* __restrict__ v, i64 s_b, i64 s_n, i64 s_h, int n, int d_in, u16* __restrict__ vt,
    unsigned* __restrict__ v_amax) {
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
    for (int i = threadIdx.x; i < HEAD_DIM * (SLOTS / 4); i += 256) {
        const int d = i / (SLOTS / 4), q = (i % (SLOTS / 4)) * 4;
        *reinterpret_cast<uint4*>(vt + (((i64)b * HEAD_DIM + d) * H + h) * npad + tile * TILE_T + 2 * q) =
            *reinterpret_cast<const uint4*>(&s[d][swizzled(d, q)]);
    }
    // this tile's |v| maximum per channel (two threads a channel; 16-bit magnitudes order as integers) ->
    // v_amax[b, h, d] as float bits, which order as unsigned integers too
    const int d = threadIdx.x / 2, half = threadIdx.x % 2;
    unsigned mx = 0;
    if (d < HEAD_DIM) {
#pragma unroll
        for (int q = 0; q < SLOTS / 2; ++q) {
            const unsigned w = s[d][half * (SLOTS / 2) + q];
            mx = max(mx, max(w & 0x7FFFu, (w >> 16) & 0x7FFFu));
        }
    }
    mx = max(mx, __shfl_xor_sync(0xffffffff, mx, 1));
    if (d < HEAD_DIM && half == 0 && mx != 0) {
        atomicMax(v_amax + ((i64)b * H + h) * HEAD_DIM + d, __float_as_uint(in_to_f32((u16)mx)));
    }
}

__device__ __forceinline__ uint2 pack_u16x4(const u16 w[4]) {
    return make_uint2(w[0] | ((unsigned)w[1] << 16), w[2] | ((unsigned)w[3] << 16));
}

// One (b, d, h) row, quantized with the amax the transpose gathered; with ``v8_lo`` also the split's second term.
template <bool SPLIT>
__device__ __forceinline__ void v_scale_row(const u16* __restrict__ vt, int npad, const float* __restrict__ v_amax,
                                            unsigned char* __restrict__ v8, unsigned char* __restrict__ v8_lo,
                                            float* __restrict__ scale) {
    const int h = blockIdx.x, b = blockIdx.y, d = blockIdx.z, H = gridDim.x;
    const i64 row = (((i64)b * HEAD_DIM + d) * H + h) * npad;
    const u16* src = vt + row;
    const float a = fmaxf(1e-7f, v_amax[((i64)b * H + h) * HEAD_DIM + d]);
    const float inv = __fdiv_rn(448.f, a);
#pragma unroll 4
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
    const u16* __restrict__ vt, int npad, const float* __restrict__ v_amax, unsigned char* __restrict__ v8,
    float* __restrict__ scale) {
    v_scale_row<false>(vt, npad, v_amax, v8, nullptr, scale);
}

extern "C" __global__ void __launch_bounds__(256) v_scale_fp8x2_quant(
    const u16* __restrict__ vt, int npad, const float* __restrict__ v_amax, unsigned char* __restrict__ v8,
    unsigned char* __restrict__ v8_lo, float* __restrict__ scale) {
    v_scale_row<true>(vt, npad, v_amax, v8, v8_lo, scale);
}
