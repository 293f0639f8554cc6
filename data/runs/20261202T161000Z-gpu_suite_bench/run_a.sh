# As run on the device from the repository root (bash .dbg/fin/run_a.sh <full sha>): the whole GPU suite
# at the plan with batch-1 clusters of 8, then `labkit decode bench --peers` (the issue's table).
T0=$(date +%s)
R=/tmp/resa; mkdir -p $R; trap 'cp /tmp/resa/*.log /tmp/resa/*.csv /tmp/resa/*.json $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 400 python3 -m pytest -q -m gpu tests/gpu -p no:cacheprovider -rs --durations=8 > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; grep -E "FAILED|ERROR" $R/gpu_tests.log | head; tail -12 $R/gpu_tests.log
left=$(( 585 - ($(date +%s) - T0) ))
s=$(date +%s); timeout $left python3 -m labkit decode bench --peers --out $R/bench.json > $R/bench.log 2>&1 || echo "bench rc $?"; echo "bench $(( $(date +%s) - s )) s (limit $left)"; tail -30 $R/bench.log | cut -c1-200
