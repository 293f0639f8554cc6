"""patch.py: the decode kernel's text with three diagnostic switches, compiled through labkit's own build path.
  RUN_AHEAD 1      no __syncthreads per stage: each warp's lane 0 counts its release of slot s in shared memory, and
                   the warp that releases it last issues its refill, so a warp that finished early goes on to the next
                   stage (a __syncthreads after the loop: the merge reuses slot 0)
  EARLY_RELEASE 1  each warp loads its K and V fragments of a stage into registers (64 more), the stage is released
                   (and refilled) at once, and the math runs from registers: a slot is held for its ldmatrix only
  NO_MATH 1        the stage loop waits for each stage and releases it, but does no math (outputs wrong: a loader
                   ceiling of the plan's own TMA loads, barriers and refill issue)
Per-unit CTAs with page ids not loaded ahead (the one-split d128 builds)."""
import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))
from labkit.kernels import compile_cubin, kernel_path  # noqa: E402

decode_build = importlib.import_module("labkit.workloads.decode.build")
EXTRA: list[str] = []  # -D options of the builds made while set

HEAD = r"""#ifndef RUN_AHEAD
#define RUN_AHEAD 0
#endif
#ifndef EARLY_RELEASE
#define EARLY_RELEASE 0
#endif
#ifndef NO_MATH
#define NO_MATH 0
#endif
#if (RUN_AHEAD || EARLY_RELEASE) && (PERSISTENT || PAGE_PREFETCH || CLUSTER_SPLITS > 1 || TAIL_SPLITS || DIM_WARPS == 2)
#error run-ahead, early release: per-unit CTAs, page ids not ahead, no dim pairs
#endif
#if RUN_AHEAD
#define STAGE_RELEASE() do { __syncwarp(); if (lane == 0) { __threadfence_block(); \
    const unsigned before = atomicAdd(&released[s], 1u); \
    if (before % WARPS == WARPS - 1 && it + STAGES < my_stages) { __threadfence_block(); \
        load_stage(p, &full[s], smem + s * SLOT_BYTES, hkv, table, (stage_begin + it + STAGES) * TOKENS_PER_STAGE, \
                   valid_pages); } } } while (0)
#else
#define STAGE_RELEASE() do { __syncthreads(); if (threadIdx.x == 0 && it + STAGES < my_stages) \
    load_stage(p, &full[s], smem + s * SLOT_BYTES, hkv, table, (stage_begin + it + STAGES) * TOKENS_PER_STAGE, \
               valid_pages); } while (0)
#endif
"""
KB = ("unsigned kb[4];\n                        ldmatrix_x4(kb, kt_own + tile_offset(t0 + 8 * nt + lane % 8, 32 * kp + "
      "8 * (lane / 8)));\n")
VB = "unsigned vb[4];\n                    ldmatrix_x4_trans(vb, vt_own + tile_offset(key, 16 * np + 8 * (lane / 16)));\n"
PRELOAD = r"""#if EARLY_RELEASE
#pragma unroll
            for (int nt = 0; nt < NT_S; ++nt)
#pragma unroll
                for (int kp = 0; kp < KS_Q / 2; ++kp)
                    ldmatrix_x4(kpre[nt][kp], kt_own + tile_offset(t0 + 8 * nt + lane % 8, 32 * kp + 8 * (lane / 8)));
#pragma unroll
            for (int ks = 0; ks < KEYS_PER_WARP / 16; ++ks)
#pragma unroll
                for (int np = 0; np < NT_O / 2; ++np)
                    ldmatrix_x4_trans(vpre[ks][np], vt_own + tile_offset(t0 + 16 * ks + lane % 8 + 8 * ((lane / 8) & 1),
                                                                         16 * np + 8 * (lane / 16)));
        }
        STAGE_RELEASE();
        if (!NO_MATH && n_keys > 0) {
#endif
"""
SWAPS = [
    ("    __shared__ int last_cta;\n",
     "    __shared__ int last_cta;\n#if RUN_AHEAD\n    __shared__ unsigned released[STAGES];\n#endif\n", 1),
    ("        asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");\n"
     "        for (int s = 0; s < STAGES && s < my_stages; ++s)",
     "#if RUN_AHEAD\n        for (int s = 0; s < STAGES; ++s) released[s] = 0u;\n#endif\n"
     "        asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");\n"
     "        for (int s = 0; s < STAGES && s < my_stages; ++s)", 1),
    ("        if (n_keys > 0) {\n            if (n_keys < KEYS_PER_WARP) {",
     "#if EARLY_RELEASE\n        unsigned kpre[NT_S][KS_Q / 2][4], vpre[KEYS_PER_WARP / 16][NT_O / 2][4];\n#endif\n"
     "        if (!NO_MATH && n_keys > 0) {\n            if (n_keys < KEYS_PER_WARP) {", 1),
    ("                __syncwarp();\n            }\n            // PHASE: qk\n",
     "                __syncwarp();\n            }\n" + PRELOAD + "            // PHASE: qk\n", 1),
    (KB, "\n#if EARLY_RELEASE\n                        const unsigned (&kb)[4] = kpre[nt][kp];\n#else\n"
     "                        " + KB + "#endif\n", 2),
    (VB, "\n#if EARLY_RELEASE\n                    const unsigned (&vb)[4] = vpre[ks][np];\n#else\n"
     "                    " + VB + "#endif\n", 1),
    ("        // PHASE: stage_release\n        __syncthreads();  // stage s is free again\n",
     "        // PHASE: stage_release\n#if RUN_AHEAD || EARLY_RELEASE\n#if !EARLY_RELEASE\n        STAGE_RELEASE();\n"
     "#endif\n        continue;\n#endif\n        __syncthreads();  // stage s is free again\n", 1),
    ("    // ---- the warps meet in shared memory, [warp][row][dim] ---------------------------------------\n",
     "#if RUN_AHEAD || EARLY_RELEASE\n    __syncthreads();  // the merge reuses slot 0\n#endif\n"
     "    // ---- the warps meet in shared memory, [warp][row][dim] ---------------------------------------\n", 1),
]


def patched_text() -> str:
    src = kernel_path(decode_build.__file__, "paged_decode_mma.cu").read_text()
    for old, new, count in SWAPS:
        assert src.count(old) == count, (src.count(old), old[:80])
        src = src.replace(old, new)
    at = src.index("#include \"paged_decode.cuh\"\n") + len("#include \"paged_decode.cuh\"\n")
    return src[:at] + HEAD + src[at:]


def compile_kernel(kb, arch="sm_90"):
    path = kernel_path(decode_build.__file__, kb.source)
    if kb.source != "paged_decode_mma.cu" or not EXTRA:
        return compile_cubin(path, arch=arch, options=kb.options())
    return compile_cubin(path, arch=arch, options=(*kb.options(), *EXTRA), code=patched_text())


decode_build.compile_kernel = compile_kernel
