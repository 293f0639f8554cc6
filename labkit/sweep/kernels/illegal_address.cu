// illegal_address.cu: a kernel that loses its process's CUDA context on purpose, for demo.sleep's fail=cuda (try how
// a sweep goes on when a point's kernel faults: the point fails as cudaErrorIllegalAddress, and no later point runs
// in that process).
//
//   store_far_away  one thread stores 4 TiB past `p`, an address no allocation holds: the store faults, and the
//                   error is sticky, returned by every later CUDA call of the process.
//
// Launch geometry: grid (1), block (1). Built by labkit.kernels (NVRTC, -lineinfo).

extern "C" __global__ void store_far_away(int* p) {
    p[1ll << 40] = 1;
}
