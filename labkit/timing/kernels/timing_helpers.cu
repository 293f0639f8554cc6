// timing_helpers.cu: tiny kernels the timing core launches around the code it measures.
//
//   spin_cycles   one thread spins for `cycles` SM clocks. Enqueued before every sample (after
//                 the L2 flush of a cold sample), it keeps the GPU busy while the host
//                 enqueues the start event and the launches, so the event pair times the
//                 kernels and not the host's enqueue cost. Reads no memory. Where `stamps` is
//                 not null it writes %globaltimer at its start and end (ns) and the SM clocks it
//                 spun: the SM clock right before the sample is stamps[2] / (stamps[1] - stamps[0])
//                 per ns, which time_gpu checks per sample (a throttled sample is dropped).
//   empty_kernel  does nothing; the notebook measures launch overhead with it.
//
// Launch geometry: grid (1), block (1) for both. Built by labkit.kernels (NVRTC, -lineinfo).

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

extern "C" __global__ void spin_cycles(long long cycles, unsigned long long* stamps) {
    unsigned long long t0 = global_ns();
    long long start = clock64();
    long long now = start;
    while (now - start < cycles) {
        now = clock64();
    }
    unsigned long long t1 = global_ns();
    if (stamps != nullptr) {
        stamps[0] = t0;
        stamps[1] = t1;
        stamps[2] = (unsigned long long)(now - start);
    }
}

extern "C" __global__ void empty_kernel() {}
