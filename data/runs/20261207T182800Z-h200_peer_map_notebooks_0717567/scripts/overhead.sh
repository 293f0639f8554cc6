#!/usr/bin/env bash
# bash .dbg/s98/overhead.sh: the launch-overhead probe three times at this commit (carry .whl-all3: nvtx only)
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl-all3/nvtx-*.whl 2>&1 | tail -1
PYTHONPATH=/tmp/site:$PWD timeout 60 python3 -c "
from labkit import probes
for _ in range(3):
    o = probes.overhead_us(probes.launch_overhead())
    print({k: round(v, 2) for k, v in o.items()})
    print(probes.launch_overhead_note(o))
" 2>&1 | tail -8
