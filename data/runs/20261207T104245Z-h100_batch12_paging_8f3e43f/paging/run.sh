#!/usr/bin/env bash
# bash .dbg/s96/run.sh <full sha>; carry .whl-all3, .dbg/s94, .dbg/s96. On an H200: .dbg/s94's phase 1 (#10 question 2:
# the peer map's behind calls with intervals, then the bench sweep). On an H100: what the paging costs the plan at the
# batch 12-13 calls where cuDNN leads (ab_paging.py: shuffled pool, pages in order, page id computed, no global
# load before the first TMA; cuDNN / flash / FA3 on the same K/V gathered contiguous).
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  BUDGET=${BUDGET:-560} bash .dbg/s94/run.sh "$1" 1; exit
fi
T0=$(date +%s)
export R=$OUT
git apply .dbg/s96/paging_diag.diff > $R/patch.log 2>&1 || { cat $R/patch.log; echo "diag patch failed"; exit 1; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/*.whl 2>&1 | tail -2
python3 -c "import tarfile; tarfile.open('.whl-all3/fa3.tar.xz').extractall('/tmp/site')"
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 GATHER_SYNC=1
{ nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv
  nvidia-smi -q | grep -E "Board Part" | head -1; } > $R/device.txt 2>&1; cat $R/device.txt
ROUNDS=${ROUNDS:-4} timeout ${SECS:-480} python3 .dbg/s96/ab_paging.py > $R/ab_paging.log 2>&1 || echo "rc $?"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> $R/device.txt
grep -E "^AB|elapsed|Error|differs|check|absent" $R/ab_paging.log | cut -c1-140
echo "elapsed $(( $(date +%s) - T0 )) s"
