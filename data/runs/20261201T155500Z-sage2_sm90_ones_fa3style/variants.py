"""The sm90 mainloop builds an A/B compares: name -> (source, extra NVRTC options, CTA_Q). SAGE2_VARIANTS picks.
VarLoop launches any of them over a Sage2Plan built with Schedule.sm90() (q padded to 128 rows: a 192-row
tile's third warpgroup sits out where the padded q ends)."""
import ctypes, os
from labkit.cuda import launch, load_function
from labkit.kernels import compile_cubin
from labkit.workloads.sage2 import sm90

HERE = os.path.dirname(os.path.abspath(__file__))
XSRC = os.path.join(HERE, "attn_fwd_sm90_x.cu")


def variants(new, kdir):
    r = os.path.join(HERE, "attn_fwd_sm90_r.cu")
    v = os.path.join(HERE, "attn_fwd_sm90_v.cu")
    lk = os.path.join(HERE, "attn_fwd_sm90_l.cu")
    mg = os.path.join(HERE, "attn_fwd_sm90_m.cu")
    tl = os.path.join(HERE, "attn_fwd_sm90_t.cu")
    pp = os.path.join(HERE, "attn_fwd_sm90_p.cu")
    fa = os.path.join(HERE, "attn_fwd_sm90_f.cu")
    inc = (f"-I{kdir}",)
    allv = {"base": (new, ("-DONES=1",), 192),  # the landed kernel has the ones block since 9616cc1
            "f04": (fa, inc + ("-DSCHED=0", "-DSTAGES=4"), 128),
            "xf0n": (fa, inc + ("-DSCHED=0", "-DNOLOAD=1"), 128),
            "xf1n": (fa, inc + ("-DSCHED=1", "-DNOLOAD=1"), 128),
            "xbn": (os.path.join(HERE, "attn_fwd_sm90_n.cu"), inc + ("-DNOLOAD=1",), 192),
            "b2": (os.path.join(HERE, "attn_fwd_sm90_n.cu"), inc, 192),
            "no": (os.path.join(HERE, "attn_fwd_sm90_no.cu"), inc + ("-DONES=1",), 192),
            "fo0": (os.path.join(HERE, "attn_fwd_sm90_fo.cu"), inc + ("-DONES=1", "-DSCHED=0"), 128),
            "fo1": (os.path.join(HERE, "attn_fwd_sm90_fo.cu"), inc + ("-DONES=1", "-DSCHED=1"), 128),
            "fo04": (os.path.join(HERE, "attn_fwd_sm90_fo.cu"), inc + ("-DONES=1", "-DSCHED=0", "-DSTAGES=4"), 128),
            "dr": (os.path.join(HERE, "attn_fwd_sm90_d.cu"), inc + ("-DONES=1", "-DDRESET=1"), 192),
            "dr4": (os.path.join(HERE, "attn_fwd_sm90_d.cu"), inc + ("-DONES=1", "-DDRESET=1", "-DSTAGES=4"), 192),
            "fod": (os.path.join(HERE, "attn_fwd_sm90_fod.cu"), inc + ("-DONES=1", "-DSCHED=0", "-DDRESET=1"), 128),
            "ps": (os.path.join(HERE, "attn_fwd_sm90_ps.cu"), inc + ("-DONES=1", "-DPSMEM=1"), 192),
            "ps4": (os.path.join(HERE, "attn_fwd_sm90_ps.cu"), inc + ("-DONES=1", "-DPSMEM=1", "-DSTAGES=4"), 192),
            "f1": (fa, inc + ("-DSCHED=1",), 128),
            "f0": (fa, inc + ("-DSCHED=0",), 128),
            "f12": (fa, inc + ("-DSCHED=1", "-DSTAGES=2"), 128),
            "f14": (fa, inc + ("-DSCHED=1", "-DSTAGES=4"), 128),
            "r": (r, inc + ("-DRING=1",), 192),
            "r0": (r, inc + ("-DRING=0",), 192),
            "r4": (r, inc + ("-DRING=1", "-DSTAGES=4"), 192),
            "r2": (r, inc + ("-DRING=1", "-DSTAGES=2"), 192),
            "rs0": (r, inc + ("-DRING=1", "-DSKIP_WG=0"), 192),
            "b3": (new, (), 192), "b4": (new, (), 192),
            "m3": (v, inc + ("-DMAX3=1",), 192),
            "m3b": (v, inc + ("-DMAX3=1",), 192),
            "m34": (v, inc + ("-DMAX3=1", "-DSTAGES=4"), 192),
            "st": (v, inc + ("-DSTAGGER=1",), 192),
            "m3st": (v, inc + ("-DMAX3=1", "-DSTAGGER=1"), 192),
            "l1": (lk, inc + ("-DLOCK=1",), 192),
            "l1s": (lk, inc + ("-DLOCK=1", "-DLOCK_SLEEP=32"), 192),
            "l2": (lk, inc + ("-DLOCK=2",), 192),
            "l3": (lk, inc + ("-DLOCK=1", "-DLOCK_WARPID=1"), 192),
            "ml": (mg, inc + ("-DMAGIC_LDS=1",), 192),
            "mlb": (mg, inc + ("-DMAGIC_LDS=1",), 192),
            "ml4": (mg, inc + ("-DMAGIC_LDS=1", "-DSTAGES=4"), 192),
            "t1": (tl, inc + ("-DTLOCK=1",), 192),
            "t2": (tl, inc + ("-DTLOCK=2",), 192),
            "t1s": (tl, inc + ("-DTLOCK=1", "-DTLOCK_SLEEP=20"), 192),
            "t14": (tl, inc + ("-DTLOCK=1", "-DSTAGES=4"), 192),
            "pp1": (pp, inc + ("-DPP=1",), 192),
            "pp2": (pp, inc + ("-DPP=2",), 192),
            "pp14": (pp, inc + ("-DPP=1", "-DSTAGES=4"), 192),
            "pp3": (pp, inc + ("-DPP=3",), 192),
            "pp5": (pp, inc + ("-DPP=5",), 192),
            "pp54": (pp, inc + ("-DPP=5", "-DSTAGES=4"), 192)}
    names = os.environ.get("SAGE2_VARIANTS", "base,r,r0,r4,r2").split(",")
    return {n: allv[n] for n in names}


class VarLoop(sm90.Sm90Mainloop):
    def __init__(self, plan, src, opts, cta_q):
        x = plan.inputs
        self.plan, self.cta_q = plan, cta_q
        self.threads = 128 * (cta_q // 64 + (0 if "-DNO_PRODUCER=1" in opts else 1))
        stages = 4 if "-DSTAGES=4" in opts else 2 if "-DSTAGES=2" in opts else 3
        self.smem = 1024 + cta_q * 128 + stages * (2 * 128 * 128 + (1024 if "-DONES=1" in opts else 0)) + \
            ((cta_q // 64) * 8192 if "-DPSMEM=1" in opts else 0)
        base = tuple(o for o in plan._options if not o.startswith("-DCTA_Q="))
        self.function, self._module = load_function(
            compile_cubin(src, arch=sm90.ARCH, options=base + (f"-DCTA_Q={cta_q}",) + opts).image, sm90.ENTRY,
            self.smem)
        b, hq, hk, nq, nk = x.batch, x.heads_q, x.heads_kv, plan.padded_q_len, plan.padded_kv_len
        self.maps = (sm90._map(plan.q8.data.ptr, (128, b * hq * nq), (128,), (128, cta_q)),
                     sm90._map(plan.k8.data.ptr, (128, b * hk * nk), (128,), (128, 128)),
                     sm90._map(plan.v8.data.ptr, (nk, hk, b * 128), (nk, hk * nk), (128, 1, 128)))
        self._blobs = {}
        self.trace = None
        if any(o.startswith("-DSM90_TRACE") for o in opts):
            from labkit.cuda import cupy
            self.trace = cupy().zeros((cta_q // 64 + 1, 64, 8), dtype=cupy().uint64)

    def params(self, q_len, kv_len, out):
        blob = super().params(q_len, kv_len, out)
        if self.trace is None:
            return blob
        import struct
        return blob[:472] + struct.pack("<Q", self.trace.data.ptr) + blob[480:]

    def launch(self, q_len, kv_len, out):
        key = (q_len, kv_len, out.data.ptr)
        if key not in self._blobs:
            blob = (ctypes.c_ubyte * sm90.PARAM_BYTES).from_buffer_copy(self.params(q_len, kv_len, out))
            self._blobs[key] = (blob, (ctypes.c_void_p * 1)(ctypes.addressof(blob)))
        _, params = self._blobs[key]
        x = self.plan.inputs
        launch(self.function, (-(-q_len // self.cta_q), x.heads_q, x.batch), (self.threads, 1, 1),
               self.smem, params, sm90.ENTRY)
