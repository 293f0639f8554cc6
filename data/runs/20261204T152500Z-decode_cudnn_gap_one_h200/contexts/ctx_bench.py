"""labkit decode bench --peers with one thing of its context changed, for a diagnosis (not a timing mode of labkit):
`dirty`: as shipped (memset flush, L2 left dirty); `clean`: the flush, then a read of another 2 x L2 bytes, so L2
holds clean lines; `nopdl`: as shipped, but labkit's calls launch without programmatic dependent launch (the plan turns
it on where one CTA fills an SM, as at these calls). Usage: python3 ctx_bench.py dirty|clean|nopdl -- <labkit args>"""
import dataclasses
import sys

import labkit.timing.events as ev
import labkit.workloads.decode.run as run
from labkit.cli import main

mode, args = sys.argv[1], sys.argv[3:]
if mode == "clean":
    plain_pad = ev._Sampler.pad

    def pad(self):
        plain_pad(self)
        if self._flush is not None:
            cp = ev.cupy()
            if not hasattr(self, "_clean"):
                self._clean = cp.ones(self.flush_bytes // 4, dtype=cp.float32)
            with self.stream:
                self._clean.sum()  # reads 2 x L2: the memset's dirty lines go back to DRAM, clean ones stay

    ev._Sampler.pad = pad
elif mode == "nopdl":
    plain_plan = run.plan_for_device

    def plan_for_device(g, **kw):
        return dataclasses.replace(plain_plan(g, **kw), pdl=False)

    run.plan_for_device = plan_for_device
sys.exit(main(args))
