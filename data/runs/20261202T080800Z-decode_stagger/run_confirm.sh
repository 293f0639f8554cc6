# As run on the device from the repository root (bash .dbg/stg/run_confirm.sh <full sha>): the plan's staggered ring
# against the ring at once (ab_confirm.py), then the whole GPU suite.
R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 150 python3 .dbg/stg/ab_confirm.py > $R/ab_confirm.log 2>&1 || echo "ab rc $?"; echo "ab $(( $(date +%s) - s )) s"
s=$(date +%s); timeout 400 python3 -m pytest -q -m gpu tests/gpu -p no:cacheprovider -rs > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; grep -E "FAILED|ERROR" $R/gpu_tests.log | head; tail -3 $R/gpu_tests.log
grep -E "^AB|check|elapsed|Error" $R/ab_confirm.log | cut -c1-140
