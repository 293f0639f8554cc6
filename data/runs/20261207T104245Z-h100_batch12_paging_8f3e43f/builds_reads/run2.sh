#!/usr/bin/env bash
# bash .dbg/s96/run2.sh <full sha>; carry .whl-all3, .dbg/s94, .dbg/s96. On an H200: .dbg/s94's phase 1 (#10 question 2).
# On an H100: the batch 12-13 calls (cuDNN 3.4-6.7 % ahead with the same CTAs) in builds of 32-128 KB of K/V in
# flight per CTA against the plan's one 8-warp 2-stage CTA (128 KB): does less in flight read DRAM better here? Then
# one_cta_read.py: pure reads at the same CTAs by 1-D bulk copies and by cp.async, beside the plan and cuDNN.
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
for pt in 12x8192 12x16384 13x8192; do
  b=${pt%x*}; n=${pt#*x}
  timeout 150 python3 -m labkit decode compare --batch $b --kv-len $n --iterations 30 \
    --build warps=4,stages=1,splits=1 --build warps=4,stages=2,splits=1 --build warps=8,stages=1,splits=1 \
    --build warps=4,stages=3,splits=1 --build warps=4,stages=4,splits=1 --out $OUT/cmp_$pt.json > $OUT/cmp_$pt.log 2>&1
  echo "compare $pt rc=$? at $(( $(date +%s) - T0 )) s"; grep -vE "^\s*\[[0-9]+\]" $OUT/cmp_$pt.log | tail -14 | cut -c1-200
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> $OUT/device.txt
# pure reads of each unit's pages by one 128-thread CTA per unit (no math): 1-D bulk copies (TMA's engine) or cp.async
# from the pool, cp.async from the contiguous copy as cuDNN reads it; beside the plan and cuDNN
R=$OUT timeout $(( 420 - ($(date +%s) - T0) )) python3 .dbg/s96/one_cta_read.py > $OUT/one_cta_read.log 2>&1; echo "one_cta_read rc=$?"
grep -vE "^\s*\[[0-9]+\]" $OUT/one_cta_read.log | cut -c1-140
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> $OUT/device.txt
echo "elapsed $(( $(date +%s) - T0 )) s"
