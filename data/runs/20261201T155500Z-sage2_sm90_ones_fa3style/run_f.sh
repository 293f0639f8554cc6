#!/bin/bash
# usage: bash .dbg/run_f.sh  (env SAGE2_VARIANTS)
set -e
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 200 > $OUT/smi.csv 2>&1 &
SMI=$!
python3 .dbg/sage2_ab.py 2>&1 | tee $OUT/sage2_ab.log
kill $SMI || true
cp .dbg/attn_fwd_sm90_ps.cu .dbg/attn_fwd_sm90_d.cu .dbg/attn_fwd_sm90_fod.cu .dbg/attn_fwd_sm90_f.cu .dbg/attn_fwd_sm90_fo.cu .dbg/attn_fwd_sm90_no.cu .dbg/attn_fwd_sm90_n.cu .dbg/ones_patch.py .dbg/variants.py .dbg/sage2_ab.py $OUT/
