"""How many CTAs in thread-block clusters the GPU at hand holds at once, one CTA per SM (GPU: the driver's count).

A cluster sits whole in one GPC and GPCs differ in size, so fewer SMs than all take clusters of 4 or 8: the H200
holds 66 clusters of 2, 30 of 4 and 15 of 8 (132, 120 and 120 CTAs). ``labkit.workloads.decode.plan`` forms a cluster
only where all of a call's clusters fit at once; ``plan_for_device`` asks here, the CPU plans take the H200's table.
"""

import functools

from ..cuda import cupy, load_function, max_active_clusters, require_gpu
from ..kernels import compile_cubin, kernel_path

PORTABLE_SIZES = (2, 4, 8)  # cluster sizes every GPU takes (larger ones need the non-portable attribute)


@functools.cache
def resident_cluster_ctas(device_index: int = 0) -> dict[int, int]:
    """{cluster size: CTAs in clusters of that size, one per SM, that device ``device_index`` holds at once}, for
    ``PORTABLE_SIZES``; asked once per device with an empty kernel that takes all of an SM's shared memory."""
    from ..device import describe

    require_gpu("the cluster count")
    dev = describe(device_index)
    with cupy().cuda.Device(device_index):
        image = compile_cubin(kernel_path(__file__, "cluster_probe.cu"), arch=dev.arch).image
        func, _module = load_function(image, "cluster_probe", dev.smem_per_block_optin_bytes)
        return {n: n * max_active_clusters(func, n, 32, dev.smem_per_block_optin_bytes, "cluster_probe")
                for n in PORTABLE_SIZES}
