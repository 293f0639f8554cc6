#!/usr/bin/env bash
# bash .dbg/s83/run.sh <full sha>; carry .whl-fa3, .dbg/s83. The wgmma stage math with one barrier per stage
# (wg1) and with the slot's release deferred to the next stage's barrier (wg1d), against the plan, the two-barrier
# wgmma build (wg) and cuDNN at the one-split 4-warp d128 calls.
R=/tmp/resp; rm -rf $R; mkdir -p $R; trap 'cp /tmp/resp/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-fa3/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
{ nvidia-smi --query-gpu=name,uuid,vbios_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
  nvidia-smi -q | grep -E "Board Part" | head -1; } | tee $R/device.txt
if [ -n "${REQUIRE_H200:-}" ] && ! grep -q H200 $R/device.txt; then echo "not an H200: nothing run"; exit 0; fi
python3 -m labkit device --json > $R/device.json
timeout ${WG_BUDGET:-400} python3 .dbg/s83/wg_ab.py 2>&1 | tee $R/wg_ab.log | grep -v "^r[0-9]" | grep -v "^check.*ok" | cut -c1-300
grep "^r" $R/wg_ab.log | tail -100
