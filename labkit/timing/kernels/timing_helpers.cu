// timing_helpers.cu: tiny kernels the timing core launches around the code it measures.
//
//   spin_cycles   one thread spins for `cycles` SM clocks. Enqueued before every sample (after
//                 the L2 flush of a cold sample), it keeps the GPU busy while the host
//                 enqueues the start event and the launches, so the event pair times the
//                 kernels and not the host's enqueue cost. Touches no memory.
//   empty_kernel  does nothing; the notebook measures launch overhead with it.
//
// Launch geometry: grid (1), block (1) for both. Built by labkit.kernels (NVRTC, -lineinfo).

extern "C" __global__ void spin_cycles(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

extern "C" __global__ void empty_kernel() {}
