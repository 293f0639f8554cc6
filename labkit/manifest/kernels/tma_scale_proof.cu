// tma_scale_proof.cu: a small kernel that exercises the manifest runner's whole ABI.
//
// Like trtllm-gen's FMHA kernels it takes ONE by-value parameter block (__grid_constant__,
// so the TMA descriptor inside it can be used in place) holding a tensor map, device
// pointers, i32 constants and a scratch counter. labkit.manifest.proof builds it with NVRTC,
// writes its schema_version 4 manifest, and runs it through labkit.manifest.Runner.
//
// Math:  out[r][c] = x[r][c] * scale + bias[c]          (x, out: f32 [rows, cols] row-major)
//        done[0]   = number of CTAs, written by the last CTA to finish (counter starts at 0)
// Layout of Params (192 B, offsets are what the manifest packs):
//     0  CUtensorMap x_map   2-D, dims {cols, rows}, box {32, 32}, no swizzle, OOB zero fill
//   128  float* out          144  int rows      152  int scale_bits (f32 bits)
//   136  const float* bias   148  int cols      160  unsigned* counter (scratch)   168  int* done
// Launch: grid (ceil(cols/32), ceil(rows/32), 1), block (128), 4 KB static shared memory.
// Thread 0 issues one cp.async.bulk.tensor load per CTA completing on an mbarrier; the tile's
// out-of-bounds part (row/col tails) is zero-filled by TMA and masked on store.

struct alignas(64) TensorMap { unsigned long long opaque[16]; };

struct Params {
    TensorMap x_map;
    float* out;
    const float* bias;
    int rows;
    int cols;
    int scale_bits;
    int pad_;
    unsigned int* counter;
    int* done;
};

constexpr int TILE = 32;

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

extern "C" __global__ void __launch_bounds__(128) tma_scale_proof(const __grid_constant__ Params p) {
    __shared__ alignas(128) float tile[TILE][TILE];
    __shared__ alignas(8) unsigned long long bar;
    const int c0 = blockIdx.x * TILE, r0 = blockIdx.y * TILE;

    // ---- TMA load of one 32x32 tile -------------------------------------------------
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bar)));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                     ::"r"(smem_addr(&bar)), "r"((int)sizeof(tile)) : "memory");
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3}], [%4];"
            ::"r"(smem_addr(&tile[0][0])), "l"(reinterpret_cast<unsigned long long>(&p.x_map)),
              "r"(c0), "r"(r0), "r"(smem_addr(&bar)) : "memory");
    }
    __syncthreads();  // barrier initialised before anyone waits on it
    unsigned ready = 0;
    while (!ready) {
        asm volatile("{ .reg .pred P; mbarrier.try_wait.parity.shared::cta.b64 P, [%1], 0; selp.u32 %0, 1, 0, P; }"
                     : "=r"(ready) : "r"(smem_addr(&bar)) : "memory");
    }

    // ---- scale, bias, masked store --------------------------------------------------
    const float scale = __int_as_float(p.scale_bits);
    for (int i = threadIdx.x; i < TILE * TILE; i += blockDim.x) {
        int r = r0 + i / TILE, c = c0 + i % TILE;
        if (r < p.rows && c < p.cols)
            p.out[(long long)r * p.cols + c] = tile[i / TILE][i % TILE] * scale + p.bias[c];
    }

    // ---- scratch counter: the last CTA reports how many CTAs arrived ------------------
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        unsigned total = gridDim.x * gridDim.y * gridDim.z;
        unsigned prev = atomicAdd(p.counter, 1u);
        if (prev == total - 1) *p.done = (int)(prev + 1);
    }
}
