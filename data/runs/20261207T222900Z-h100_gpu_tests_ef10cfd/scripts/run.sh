#!/usr/bin/env bash
# bash .dbg/s101/run.sh <sha>: the same-bits GPU tests refactored at ef10cfd (26 cases), then on an H200 only
# the padded-rows and batch-16 compares of .dbg/s100/pad.sh.
T0=$(date +%s)
nvidia-smi --query-gpu=name,uuid,clocks.max.sm,clocks.max.mem,driver_version --format=csv,noheader
nvidia-smi -q | grep -E "Board Part" | head -1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/nvtx-*.whl 2>&1 | tail -1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
mkdir -p $OUT/t
timeout 300 python3 -m pytest -q -p no:cacheprovider -rA tests/gpu/test_decode_gpu.py -k bit_for_bit > $OUT/t/bit_for_bit.log 2>&1
echo "== bit_for_bit rc=$? at $(( $(date +%s) - T0 )) s"; tail -4 $OUT/t/bit_for_bit.log
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || exit 0
BUDGET=300 PEERS=100 IT=30 bash .dbg/s100/pad.sh $1 | sed 1,2d
