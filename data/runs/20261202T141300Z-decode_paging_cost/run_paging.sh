# As run on the device from the repository root (bash .dbg/paging/run_paging.sh <full sha> [seconds] [points]):
# applies the diagnostic defines (paging_diag.diff; the plan's builds are unchanged) and times ab_paging.py.
export R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
(patch -p1 < .dbg/paging/paging_diag.diff || git apply .dbg/paging/paging_diag.diff) > $R/patch.log 2>&1; cat $R/patch.log
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout ${2:-540} python3 .dbg/paging/ab_paging.py ${@:3} > $R/ab_paging.log 2>&1 || echo "rc $?"
grep -E "^AB|elapsed|Error|differs|check|absent" $R/ab_paging.log | cut -c1-140
