#!/usr/bin/env bash
# bash .dbg/s94/run.sh <full sha> <phase>, carry .whl-all3 and .dbg/s94; BUDGET s in all. On an H200 (#10's question 2):
# phase 1 the peer map's calls behind at a0cd66e with 95 % intervals, then the bench sweep beside the peers; phase 2 the
# map's other calls. The map is drawn here from both phases' reports. On an H100: phase 1 the batch 12-13 compare and
# split sweep (a board of the slower group, -0200-000, had them 4-7 % behind cuDNN), then the map's behind calls.
# Reports are tarred (a count limit on files under $OUT).
T0=$(date +%s)
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/*.whl 2>&1 | tail -2
python3 -c "import tarfile; tarfile.open('.whl-all3/fa3.tar.xz').extractall('/tmp/site')"
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
NCUPY=$(find /usr/local/cuda*/ /opt/nvidia -name ncu_report.py 2>/dev/null | head -1)
if ! python3 -c "import ncu_report" 2>/dev/null && [ -n "$NCUPY" ]; then export PYTHONPATH=$PYTHONPATH:$(dirname $NCUPY); fi
left() { echo $(( ${BUDGET:-560} - ($(date +%s) - T0) )); }
S=$OUT/summary.txt
{ nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv
  nvidia-smi -q | grep -E "Board Part" | head -1; } > $OUT/device.txt 2>&1; cat $OUT/device.txt
python3 -c "
import cupy as cp
for n in (1 << 20, 1 << 28):
    a = cp.random.rand(n, dtype=cp.float32); b = cp.empty_like(a); b[...] = a
    assert bool((a == b).all()), f'a copy of {n} float32 differs'
print('copy check ok')" 2>&1 | tail -1 | tee $OUT/copy_check.txt
grep -q "copy check ok" $OUT/copy_check.txt || { echo "this GPU corrupts copies: nothing else run"; exit 0; }
python3 -m labkit device --json > $OUT/device.json 2>&1
H200=0; grep -q "H200" $OUT/device.txt && H200=1
mkdir -p $OUT/map
behind_small="2x32768 4x32768 12x1024 12x4096 12x8192 13x8192 14x4096 16x1024 16x2048 16x4096 16x8192 16x16384 16x32768 17x2048 17x4096 17x8192 17x16384 20x2048 20x8192 24x1024 24x2048 32x1024 32x2048 32x4096 32x8192 56x1024 64x1024 64x2048 67x2048 96x1024 96x2048 128x1024"
behind_large="32x16384 64x4096 64x8192 96x4096 100x8192 104x8192 128x2048 200x8192 204x8192 256x1024 256x2048 292x2048 400x2048 600x2048"
rest_small="1x1024 1x2048 1x4096 1x8192 1x16384 1x32768 2x1024 2x2048 2x4096 2x8192 2x16384 3x1024 3x2048 3x4096 3x8192 3x16384 3x32768 4x1024 4x2048 4x4096 4x8192 4x16384 5x1024 5x2048 5x4096 6x1024 6x2048 6x4096 6x8192 6x16384 6x32768 7x1024 7x2048 7x4096 8x1024 8x2048 8x4096 8x8192 8x16384 9x8192 10x2048 10x8192 11x1024 12x2048 12x16384 24x4096 24x8192 28x8192 34x1024 34x2048 34x4096 35x4096 36x4096 40x1024 40x2048 48x1024 48x2048 48x4096 50x2048 76x2048 110x2048"
rest_large="8x32768 12x32768 17x32768 20x32768 24x16384 24x32768 28x32768 32x32768 34x8192 34x16384 34x32768 36x8192 38x8192 39x8192 40x8192 40x16384 40x32768 42x32768 48x8192 48x16384 48x32768 50x8192 54x8192 56x8192 56x32768 64x16384 64x32768 67x8192 67x32768 72x8192 76x8192 76x16384 80x8192 80x16384 84x8192 96x8192 96x16384 110x8192 128x4096 128x8192 128x16384 166x8192 212x8192 228x8192 256x4096 256x8192"
mapset() { for set in "$@"; do
  [ $(left) -gt 60 ] || { echo "map $set: not run (time)" | tee -a $S; continue; }
  pts=$(for p in ${!set}; do echo -n "--point $p "; done)
  timeout $(( $(left) - 15 )) python3 -m labkit decode bench --peers $pts --iterations 20 --among none --out $OUT/map/$set.json > $OUT/map/$set.log 2>&1
  echo "map $set rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $S
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> $OUT/map/smi.csv
done; }
b12() {
  [ $(left) -gt 90 ] || { echo "batch-12 split sweep: not run (time)" | tee -a $S; return; }
  timeout $(( $(left) < 200 ? $(left) - 10 : 200 )) python3 -m labkit decode bench --peers --sweep-splits --iterations 20 --among none \
    --point 12x4k --point 12x8k --point 12x16k --point 12x32k --point 13x8k --out $OUT/b12.json > $OUT/b12.log 2>&1
  echo "batch-12 split sweep rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $S
  grep -vE "^\s*\[[0-9]+\]" $OUT/b12.log | cut -c1-220 | head -60
}
cmp12() { for pt in 12x16k 12x8k 13x8k; do
  [ $(left) -gt 70 ] || { echo "compare $pt: not run (time)" | tee -a $S; continue; }
  b=${pt%x*}; n=${pt#*x}
  timeout $(( $(left) - 15 )) python3 -m labkit decode compare --batch $b --kv-len $n --iterations 30 --build splits=2 \
    --build warps=8,stages=3 --build warps=4,stages=3,splits=1 --build splits=11 --out $OUT/cmp_$pt.json > $OUT/cmp_$pt.log 2>&1
  echo "compare $pt rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $S; tail -12 $OUT/cmp_$pt.log | cut -c1-200
done; }
PHASE=${2:-1}
if [ $H200 = 1 ] && { [ $PHASE = 1 ] || [ $PHASE = 4 ]; }; then
  mapset behind_small behind_large
  timeout $(( $(left) < 230 ? $(left) - 10 : 230 )) python3 -m labkit decode bench --peers --sweep-splits --out $OUT/sweep.json > $OUT/sweep.log 2>&1
  echo "decode bench --peers --sweep-splits rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $S
  grep -vE "^\s*\[[0-9]+\]" $OUT/sweep.log | cut -c1-260 | sed -n '/paged decode, page/,/^report:/p' | head -50
elif [ $H200 = 1 ] || [ $PHASE = 3 ]; then
  mapset rest_small rest_large
elif [ $PHASE = 1 ]; then
  cmp12; b12; mapset behind_small behind_large
elif [ $PHASE = 4 ]; then
  mapset behind_small
else
  mapset behind_small behind_large
fi
(cd $OUT && tar -czf map.tgz map && rm -rf map)
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $S
