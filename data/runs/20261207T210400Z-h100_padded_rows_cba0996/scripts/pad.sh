#!/usr/bin/env bash
# bash .dbg/s100/pad.sh <sha>: padded rows (unswizzled 4-D boxes of 136 dims, one per page slice) on the GPU:
# the GPU test (exact attention, bit-identical to the swizzled loads), then `decode compare` against the plan.
T0=$(date +%s)
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,clocks.max.mem --format=csv,noheader; nvidia-smi -q | grep -E "Board Part" | head -1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/nvtx-*.whl 2>&1 | tail -1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
mkdir -p $OUT/pad
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_decode_gpu.py -k "padded_rows" > $OUT/pad/gpu_test.log 2>&1
echo "== gpu test rc=$? at $(( $(date +%s) - T0 )) s"; tail -3 $OUT/pad/gpu_test.log
W8="--build warps=8,stages=2,splits=1 --build warps=8,stages=2,splits=1,padded_rows=1"
for spec in "16x32768:$W8" "16x4096:$W8" "16x8192:$W8" "32x2048:" "64x1024:" "8x8192:" "64x8192:" "16x2048:" \
            "32x4096:" "256x8192:"; do
  pt=${spec%%:*}; extra=${spec#*:}
  left=$(( ${BUDGET:-420} - ($(date +%s) - T0) )); [ $left -gt 40 ] || { echo "$pt: not run (time)"; continue; }
  b=${pt%x*}; n=${pt#*x}
  timeout $(( left - 10 )) python3 -m labkit decode compare --batch $b --kv-len $n --iterations ${IT:-30} \
    --build padded_rows=1 $extra --out $OUT/pad/$pt.json > $OUT/pad/$pt.log 2>&1
  echo "== $pt rc=$? at $(( $(date +%s) - T0 )) s"; grep -vE "^\s*\[[0-9]+\]" $OUT/pad/$pt.log | tail -7 | cut -c1-160
done
# the plan beside cuDNN, flash and FA3 at the one-split calls on the same board (padded / plan from the compares)
left=$(( ${BUDGET:-420} + ${PEERS:-120} - ($(date +%s) - T0) ))
if [ $left -gt 80 ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/*.whl 2>&1 | tail -2
  python3 -c "import tarfile; tarfile.open('.whl-all3/fa3.tar.xz').extractall('/tmp/site')"
  timeout $(( left - 10 )) python3 -m labkit decode bench --peers --point 16x4k --point 16x8k --point 16x32k --point 32x2k \
    --iterations 20 --among none --out $OUT/pad/peers.json > $OUT/pad/peers.log 2>&1
  echo "== peers rc=$? at $(( $(date +%s) - T0 )) s"; grep -vE "^\s*\[[0-9]+\]" $OUT/pad/peers.log | tail -14 | cut -c1-170
fi
cd $OUT && tar czf pad.tgz pad && rm -rf pad
