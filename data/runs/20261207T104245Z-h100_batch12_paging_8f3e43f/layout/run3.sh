#!/usr/bin/env bash
# bash .dbg/s96/run3.sh <full sha>; carry .whl-all3, .dbg/s94, .dbg/s96. On an H200: .dbg/s94's phase 1 (#10 question 2).
# On an H100: ab_layout.py, the plan over three layouts of the same pool (plain, token-major, the seed's) beside cuDNN.
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  BUDGET=${BUDGET:-560} bash .dbg/s94/run.sh "$1" 1; exit
fi
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
{ nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv
  nvidia-smi -q | grep -E "Board Part" | head -1; } > $OUT/device.txt 2>&1; cat $OUT/device.txt
python3 -m labkit device --json > $OUT/device.json 2>&1
python3 -c "
import importlib.metadata as m, sys
print('python', sys.version.split()[0])
for n in ('cupy-cuda13x', 'cuda-bindings', 'nvidia-cuda-nvrtc', 'numpy', 'torch', 'triton', 'nvtx'):
    try: print(n, m.version(n))
    except Exception as e: print(n, 'absent')" > $OUT/versions.txt 2>&1; cat $OUT/versions.txt
R=$OUT timeout 220 python3 .dbg/s96/ab_layout.py > $OUT/ab_layout.log 2>&1; echo "ab_layout rc=$?"
grep -vE "^\s*\[[0-9]+\]" $OUT/ab_layout.log | cut -c1-160
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> $OUT/device.txt
echo "elapsed $(( $(date +%s) - T0 )) s"
