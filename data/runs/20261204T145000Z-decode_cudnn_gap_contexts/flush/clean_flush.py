"""labkit decode bench --peers at the calls where cuDNN leads, with each cold sample's L2 left clean: after the
memset flush (which leaves L2 full of dirty lines), a read of another 2 x L2 bytes writes those back and leaves
L2 holding clean lines of data no call uses. A diagnosis, not a timing mode of labkit: run as
`python3 clean_flush.py clean|dirty -- <labkit args>`."""
import sys

import labkit.timing.events as ev
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
sys.exit(main(args))
