#!/usr/bin/env bash
# bash .dbg/s99/b16.sh <sha>: batch 15-16 (120-128 units, the H200 map's furthest row behind cuDNN) run one 4-warp
# 3-stage CTA per unit (96 KB of K/V in flight per SM), the build that lost 2.7-15 % to one 8-warp CTA at 72-88 units.
# Time the plan against 8-warp 2- and 3-stage and 4-warp 4-stage builds, interleaved, outputs checked. Carry .whl-all3.
T0=$(date +%s)
nvidia-smi --query-gpu=name,uuid,clocks.max.sm --format=csv,noheader; nvidia-smi -q | grep -E "Board Part" | head -1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/nvtx-*.whl 2>&1 | tail -1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
mkdir -p $OUT/b16
for pt in 16x4096 16x32768 16x8192 15x8192 16x2048 16x16384; do
  left=$(( ${BUDGET:-330} - ($(date +%s) - T0) )); [ $left -gt 40 ] || { echo "$pt: not run (time)"; continue; }
  b=${pt%x*}; n=${pt#*x}
  timeout $(( left - 10 )) python3 -m labkit decode compare --batch $b --kv-len $n --iterations ${IT:-20} \
    --build warps=8,stages=2,splits=1 --build warps=8,stages=3,splits=1 --build warps=4,stages=4,splits=1 \
    --out $OUT/b16/$pt.json > $OUT/b16/$pt.log 2>&1
  echo "== $pt rc=$? at $(( $(date +%s) - T0 )) s"; grep -vE "^\s*\[[0-9]+\]" $OUT/b16/$pt.log | tail -8 | cut -c1-200
done
