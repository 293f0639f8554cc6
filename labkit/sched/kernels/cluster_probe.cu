// cluster_probe.cu: an empty kernel that is never launched. labkit.sched.clusters asks the driver
// (cuOccupancyMaxActiveClusters) how many thread-block clusters of it the GPU holds at once when each
// CTA takes all of an SM's opt-in shared memory, so one CTA per SM: clusters sit whole in one GPC, and
// GPCs differ in size, so that count is a property of the chip, not of SMs / cluster size.
// Launch geometry (for the query only): grid (cluster size), block (32), dynamic smem = the opt-in limit.

extern "C" __global__ void cluster_probe() {}
