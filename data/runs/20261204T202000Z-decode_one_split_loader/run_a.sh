# bash .dbg/s67/run_a.sh <full sha, given literally>; carry .whl_nbl, .dbg/s66, .dbg/s67: run_ahead.py (patch.py's
# run-ahead and no-math builds of the plan beside it, the bulk pure read and cuDNN) at 16 x 2k-8k, 32 x 2k, 64 x 1k, 64 x 8k
T0=$(date +%s)
R=/tmp/resa; rm -rf $R; mkdir -p $R; trap 'cp /tmp/resa/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
python3 -m labkit device --json > $R/device.json
timeout 500 python3 .dbg/s67/run_ahead.py > $R/run_ahead.log 2>&1 || echo "rc $?"
grep -E "check|point|^r1|Error|elapsed" $R/run_ahead.log | cut -c1-170
echo "elapsed $(( $(date +%s) - T0 )) s"
