#!/usr/bin/env bash
# bash .dbg/s95/try3.sh <full sha>, carry .whl-all3, .dbg/s94, .dbg/s95: on an H200 run.sh's phase 1; on an H100 the
# bench beside the peers at batch 12-13 and 16 x 8k with L2 left dirty (cold) and clean (cold_clean), twice each in
# ABBA order, on one board: does the dirty L2 widen the plan's gap to cuDNN at the one-8-warp-CTA-per-SM calls?
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  BUDGET=560 bash .dbg/s94/run.sh "$1" 1; exit 0
fi
T0=$(date +%s)
R=/tmp/resc; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resc -czf $OUT/clean.tgz . ; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/*.whl 2>&1 | tail -2
python3 -c "import tarfile; tarfile.open('.whl-all3/fa3.tar.xz').extractall('/tmp/site')"
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
{ nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv
  nvidia-smi -q | grep -E "Board Part" | head -1; } > $R/device.txt 2>&1
i=0; for mode in cold cold_clean cold_clean cold; do i=$((i+1))
  timeout 100 python3 -m labkit decode bench --peers --iterations 20 --among none --mode $mode --point 12x8k \
    --point 12x16k --point 13x8k --point 16x8k --out $R/bench_${i}_$mode.json > $R/bench_${i}_$mode.log 2>&1
  echo "bench $i $mode rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
  grep -E "^ +1[236] " $R/bench_${i}_$mode.log | cut -c1-240 | tee -a $R/summary.txt
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader > $R/smi.csv
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
