"""Does the sm_90 cubin's .nv.shared.<entry> size include the 1 KB system reserve, and does the driver count it once?
Compile kernels with N bytes of static shared memory; print the ELF's size, the driver's SHARED_SIZE_BYTES, the largest
dynamic size cuFuncSetAttribute accepts, and cuOccupancy vs labkit's model over a sweep of dynamic sizes."""
import json, sys
from pathlib import Path
from cuda.bindings import driver as cu
from labkit.kernels import compile_cubin
from labkit.manifest.elf import read_cubin
from labkit.sched import occupancy
from labkit.cuda import cupy
from labkit.device import describe

cupy().cuda.Device().synchronize()
dev = describe()
out = {"device": dev.name, "arch": dev.arch, "rows": []}
ok = cu.CUresult.CUDA_SUCCESS
for n in (0, 8, 1000, 4096, 40000, 100000):
    body = (f"__shared__ char buf[{n}]; buf[threadIdx.x % {n}] = (char)threadIdx.x; __syncthreads(); "
            f"o[threadIdx.x] = buf[(threadIdx.x + 1) % {n}];") if n else "o[threadIdx.x] = 1;"
    p = Path(f"/tmp/smem_{n}.cu")
    p.write_text(f'extern "C" __global__ void __launch_bounds__(128) k(char* o) {{ {body} }}')
    cub = compile_cubin(p, arch=dev.arch)
    e = read_cubin(cub.image).entries["k"]
    err, mod = cu.cuModuleLoadData(cub.image); assert err == ok, err
    err, f = cu.cuModuleGetFunction(mod, b"k"); assert err == ok, err
    err, attr_static = cu.cuFuncGetAttribute(cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f)
    lo, hi = 0, 300000  # the largest dynamic size the driver accepts
    while lo < hi:
        mid = (lo + hi + 1) // 2
        (r,) = cu.cuFuncSetAttribute(f, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, mid)
        lo, hi = (mid, hi) if r == ok else (lo, mid - 1)
    max_dyn = lo
    (r,) = cu.cuFuncSetAttribute(f, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, max_dyn)
    mism, checked = [], 0
    for d in range(0, max_dyn + 1, 128):
        err, drv = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(f, 128, d)
        try:
            mod_n = occupancy(arch=dev.arch, threads_per_cta=128, registers_per_thread=e.registers,
                              static_smem_bytes=e.static_smem_bytes, dynamic_smem_bytes=d).ctas_per_sm
        except Exception as x:
            mod_n = f"refused: {x}"
        checked += 1
        if mod_n != drv:
            mism.append((d, drv, mod_n))
    row = {"declared": n, "elf_static": e.static_smem_bytes, "driver_static": attr_static, "regs": e.registers,
           "max_dynamic": max_dyn, "dyn_checked": checked, "mismatches": len(mism), "first_mismatches": mism[:6],
           "last_mismatches": mism[-3:]}
    out["rows"].append(row)
    print(json.dumps(row), flush=True)
err, optin = cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0)
err, reserved = cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, 0)
err, per_sm = cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 0)
out.update(optin=optin, reserved=reserved, per_sm=per_sm)
print(json.dumps({"optin": optin, "reserved": reserved, "per_sm": per_sm}))
Path(sys.argv[1]).write_text(json.dumps(out, indent=1))
