# As run on the device from the repository root: bash .dbg/rf/run_rf.sh <full sha> (the kernel with the device-only
# DIAG_LOOP, DIAG_REFILL and HOIST_POLICY defines of rf.diff, not committed); carry .whl_min, .dbg/rf
R=/tmp/resrf; rm -rf $R; mkdir -p $R; trap 'cp /tmp/resrf/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 90 python3 .dbg/rf/refill_parts.py > $R/refill_parts.log 2>&1 || echo "rc $?"
timeout 150 python3 .dbg/rf/ab_hoist_policy.py > $R/ab_hoist.log 2>&1 || echo "rc $?"
grep -E "FAILED|Error|^check |^r[0-9]|loop|elapsed|^ab " $R/refill_parts.log $R/ab_hoist.log | cut -c1-220 | tail -80
