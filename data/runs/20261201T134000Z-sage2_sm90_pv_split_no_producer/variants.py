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
    landed = os.path.join(HERE, "attn_fwd_sm90_landed2.cu")
    allv = {"landed": (landed, (f"-I{kdir}",), 128),
            "w2": (new, (), 128),
            "w2s": (new, ("-DOVERLAP=0",), 128),
            "w3s": (new, ("-DCTA_Q=192", "-DOVERLAP=0"), 192),
            "w3s3": (new, ("-DCTA_Q=192", "-DOVERLAP=0", "-DSTAGES=3"), 192),
            "w2T": (new, ("-DSOFTMAX_TREE=1",), 128),
            "w3sT": (new, ("-DCTA_Q=192", "-DOVERLAP=0", "-DSOFTMAX_TREE=1"), 192),
            "w3s3T": (new, ("-DCTA_Q=192", "-DOVERLAP=0", "-DSTAGES=3", "-DSOFTMAX_TREE=1"), 192),
            "w2Tt": (new, ("-DSOFTMAX_TREE=1", "-DSM90_TRACE=5"), 128),
            "w3s3Tt": (new, ("-DCTA_Q=192", "-DOVERLAP=0", "-DSTAGES=3", "-DSOFTMAX_TREE=1", "-DSM90_TRACE=5"), 192),
            "w3s3P4": (new, ("-DCTA_Q=192", "-DOVERLAP=0", "-DSTAGES=3", "-DPOLY_N=4"), 192),
            "w3s3P8": (new, ("-DCTA_Q=192", "-DOVERLAP=0", "-DSTAGES=3", "-DPOLY_N=8"), 192),
            "w3s3P12": (new, ("-DCTA_Q=192", "-DOVERLAP=0", "-DSTAGES=3", "-DPOLY_N=12"), 192),
            "w3sP8": (new, ("-DCTA_Q=192", "-DOVERLAP=0", "-DPOLY_N=8"), 192),
            "w2P8": (new, ("-DPOLY_N=8",), 128),
            "w3s3P8t": (new, ("-DCTA_Q=192", "-DOVERLAP=0", "-DSTAGES=3", "-DPOLY_N=8", "-DSM90_TRACE=5"), 192),
            "w3s2": (new, ("-DCTA_Q=192", "-DOVERLAP=0", "-DSTAGES=2"), 192),
            "w3s3N": (new, ("-DCTA_Q=192", "-DOVERLAP=0", "-DSTAGES=3", "-DPRODUCER_SLEEP=200"), 192),
            "w3s2N": (new, ("-DCTA_Q=192", "-DOVERLAP=0", "-DSTAGES=2", "-DPRODUCER_SLEEP=200"), 192),
            "w3s3N50": (new, ("-DCTA_Q=192", "-DOVERLAP=0", "-DSTAGES=3", "-DPRODUCER_SLEEP=50"), 192),
            "w2t": (new, ("-DSM90_TRACE=5",), 128),
            "w2st": (new, ("-DSM90_TRACE=5", "-DOVERLAP=0"), 128),
            "w3st": (new, ("-DCTA_Q=192", "-DOVERLAP=0", "-DSM90_TRACE=5"), 192),
            "x": (XSRC, (f"-I{kdir}", "-DSTAGES=3"), 192),
            "xs4": (XSRC, (f"-I{kdir}", "-DSTAGES=3", "-DPV_SPLIT=4"), 192),
            "xs4p": (XSRC, (f"-I{kdir}", "-DSTAGES=3", "-DPV_SPLIT=4", "-DO_PRESCALE=1"), 192),
            "xp": (XSRC, (f"-I{kdir}", "-DSTAGES=3", "-DO_PRESCALE=1"), 192),
            "xnp": (XSRC, (f"-I{kdir}", "-DSTAGES=3", "-DNO_PRODUCER=1"), 192),
            "xnp4": (XSRC, (f"-I{kdir}", "-DSTAGES=4", "-DNO_PRODUCER=1"), 192),
            "xnp2": (XSRC, (f"-I{kdir}", "-DSTAGES=2", "-DNO_PRODUCER=1"), 192)}
    names = os.environ.get("SAGE2_VARIANTS", "landed,w3s3,w3s2,w3s3N,w3s2N,w3s3N50").split(",")
    return {n: allv[n] for n in names}


class VarLoop(sm90.Sm90Mainloop):
    def __init__(self, plan, src, opts, cta_q):
        x = plan.inputs
        self.plan, self.cta_q = plan, cta_q
        self.threads = 128 * (cta_q // 64 + (0 if "-DNO_PRODUCER=1" in opts else 1))
        stages = 3 if "-DSTAGES=3" in opts else 2 if "-DSTAGES=2" in opts else 4
        self.smem = 1024 + cta_q * 128 + stages * 2 * 128 * 128
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
