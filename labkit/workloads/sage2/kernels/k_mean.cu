// k_mean.cu: phase k_mean_and_smoothing_preparation: K's per-channel mean (the smoothing) and V's
// per-channel |v| maximum (the FP8 scale's input), in one pass over K and V.
//
// km[b, h, d] = (1/N) * sum_n K[b, n, h, d] in fp32 and v_amax[b, h, d] = max_n |V[b, n, h, d]|, for every kv
// head h and channel d < HEAD_DIM (channels >= d_in are 0). Deterministic two-stage reduction, no
// atomics, so the one-shot and phase-by-phase paths give bitwise-equal results:
//   k_mean_partial  grid (ceil(N / CHUNK), H, B), block 256: 16 threads per token row read 8 channels
//                   (16 B) of K and of V each; 16 rows at a time; CHUNK tokens per CTA ->
//                   partial[b, h, chunk, d] (fp32 sums, fixed order) and amax_partial[b, h, chunk, d].
//   k_mean_finish   grid (H, B), block HEAD_DIM: sums the chunks in order, divides by N; the chunks' maximum.
// K and V are addressed by element strides (NHD or HND), last dim contiguous.
#include "sage2_common.cuh"

#define CHUNK 512
#define VEC_PER_ROW (HEAD_DIM / 8)
#define ROWS_PER_PASS (256 / VEC_PER_ROW)

extern "C" __global__ void __launch_bounds__(256) k_mean_partial(
    const u16* __restrict__ k, i64 s_b, i64 s_n, i64 s_h, const u16* __restrict__ v, i64 v_b, i64 v_n, i64 v_h,
    int n, int d_in, float* __restrict__ partial, float* __restrict__ amax_partial) {
    const int chunk = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
    const int vec = threadIdx.x % VEC_PER_ROW, row = threadIdx.x / VEC_PER_ROW;
    const int d0 = vec * 8;
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0}, mx[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const int t0 = chunk * CHUNK, t1 = min(n, t0 + CHUNK);
    if (d0 < d_in) {
        for (int t = t0 + row; t < t1; t += ROWS_PER_PASS) {
            float x[8], y[8];
            load8(k + b * s_b + (i64)t * s_n + h * s_h + d0, x);
            load8(v + b * v_b + (i64)t * v_n + h * v_h + d0, y);
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                acc[i] += x[i];
                mx[i] = fmaxf(mx[i], fabsf(y[i]));
            }
        }
    }
    __shared__ float red[ROWS_PER_PASS][HEAD_DIM], red_max[ROWS_PER_PASS][HEAD_DIM];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        red[row][d0 + i] = acc[i];
        red_max[row][d0 + i] = mx[i];
    }
    __syncthreads();
    if (threadIdx.x < HEAD_DIM) {
        float s = 0.f, m = 0.f;
        for (int r = 0; r < ROWS_PER_PASS; ++r) {  // fixed order
            s += red[r][threadIdx.x];
            m = fmaxf(m, red_max[r][threadIdx.x]);
        }
        const i64 at = (((i64)b * gridDim.y + h) * gridDim.x + chunk) * HEAD_DIM + threadIdx.x;
        partial[at] = s;
        amax_partial[at] = m;
    }
}

extern "C" __global__ void k_mean_finish(const float* __restrict__ partial, const float* __restrict__ amax_partial,
                                         int chunks, int n, float* __restrict__ km, float* __restrict__ v_amax) {
    const int h = blockIdx.x, b = blockIdx.y, d = threadIdx.x;
    const i64 first = ((i64)b * gridDim.x + h) * chunks * HEAD_DIM + d;
    float s = 0.f, m = 0.f;
    for (int c = 0; c < chunks; ++c) {
        s += partial[first + (i64)c * HEAD_DIM];
        m = fmaxf(m, amax_partial[first + (i64)c * HEAD_DIM]);
    }
    const i64 out = ((i64)b * gridDim.x + h) * HEAD_DIM + d;
    km[out] = s / (float)n;
    v_amax[out] = m;
}
