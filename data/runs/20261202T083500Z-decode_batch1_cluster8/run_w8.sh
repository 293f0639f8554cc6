# As run on the device from the repository root (bash .dbg/w8/run_w8.sh <full sha>): 8-warp builds at batch 1 d128.
R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 250 python3 .dbg/w8/${2:-ab_w8}.py > $R/${2:-ab_w8}.log 2>&1 || echo "rc $?"
grep -E "^AB|elapsed|Error|ok False" $R/${2:-ab_w8}.log | cut -c1-120
