// sage2_common.cuh: header-free helpers shared by the Sage2 kernels (NVRTC has no CUDA
// headers on machines without a toolkit, so conversions are bit operations or PTX).
//
// Compile-time parameters, set by labkit.workloads.sage2.plan (build_options) with -D:
//   HEAD_DIM   padded head dim of the kernels (64 or 128); channels >= d_in read as 0
//   IN_BF16    1: inputs/outputs are bf16, 0: fp16
#pragma once

#ifndef HEAD_DIM
#define HEAD_DIM 128
#endif
#ifndef IN_BF16
#define IN_BF16 1
#endif

#define INFINITY __int_as_float(0x7f800000)

typedef unsigned short u16;
typedef long long i64;

__device__ __forceinline__ float in_to_f32(u16 bits) {
#if IN_BF16
    return __uint_as_float(((unsigned)bits) << 16);  // bf16 is the top half of an f32
#else
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
    return f;
#endif
}

__device__ __forceinline__ u16 f32_to_out(float x) {  // round to nearest even
    u16 r;
#if IN_BF16
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(x));
#else
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(x));
#endif
    return r;
}

// int8 with round-to-nearest-even and saturation, as cvt.rni.sat.s8.f32
__device__ __forceinline__ int f32_to_s8(float x) {
    int r;
    asm("cvt.rni.sat.s8.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}

// two f32 -> two e4m3 (RNE, saturate to +-448), packed low = lo, high = hi
__device__ __forceinline__ u16 f32x2_to_e4m3x2(float lo, float hi) {
    u16 r;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
    return r;
}

// two e4m3 (packed as above) -> two f32, exactly (every e4m3 value is an f16 value)
__device__ __forceinline__ void e4m3x2_to_f32x2(u16 bits, float& lo, float& hi) {
    unsigned h2;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(bits));
    asm("cvt.f32.f16 %0, %1;" : "=f"(lo) : "h"((u16)(h2 & 0xffff)));
    asm("cvt.f32.f16 %0, %1;" : "=f"(hi) : "h"((u16)(h2 >> 16)));
}

// 16 x (x - e4m3(x)) for two values whose e4m3 pair is ``rounded``: the second term of the
// two-term fp8 split x ~ hi + lo / 16 (PV_TERMS 2). The residual is at most half an e4m3
// step, |x| / 16, so the factor 16 keeps it inside e4m3's range.
__device__ __forceinline__ u16 e4m3x2_residual16(float lo, float hi, u16 rounded) {
    float rlo, rhi;
    e4m3x2_to_f32x2(rounded, rlo, rhi);
    return f32x2_to_e4m3x2(__fmul_rn(__fsub_rn(lo, rlo), 16.f), __fmul_rn(__fsub_rn(hi, rhi), 16.f));
}

// 8 input elements from one 16-byte load (caller guarantees 16-byte alignment)
__device__ __forceinline__ void load8(const u16* p, float out[8]) {
    uint4 v = *reinterpret_cast<const uint4*>(p);
    unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        out[2 * i] = in_to_f32((u16)(w[i] & 0xffff));
        out[2 * i + 1] = in_to_f32((u16)(w[i] >> 16));
    }
}
