#!/usr/bin/env bash
# bash .dbg/s95/try2.sh <full sha>, carry .whl-all3, .dbg/s94, .dbg/s95: on an H200 run.sh's phase 1; on an H100 the
# PDL A/B at batch 12-13 (pdl_ab.py). One tar comes back.
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  BUDGET=560 bash .dbg/s94/run.sh "$1" 1; exit 0
fi
T0=$(date +%s)
R=/tmp/resp; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resp -czf $OUT/pdl.tgz . ; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
{ nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv
  nvidia-smi -q | grep -E "Board Part" | head -1; } > $R/device.txt 2>&1
timeout 300 python3 .dbg/s95/pdl_ab.py > $R/pdl_ab.log 2>&1; echo "pdl_ab rc=$?" >> $R/pdl_ab.log
grep -v "^\s*\[" $R/pdl_ab.log | cut -c1-220
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader > $R/smi.csv
echo "elapsed $(( $(date +%s) - T0 )) s"
