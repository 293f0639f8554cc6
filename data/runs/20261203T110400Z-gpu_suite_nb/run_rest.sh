# bash .dbg/s51/run_rest.sh <full sha>; carry .whl_nb, .whl_ncu, .dbg: the Sage2 + manifest and ncu + timing + sched GPU suites
T0=$(date +%s)
R=/tmp/resr; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resr -czf $OUT/res.tgz . ; cp /tmp/resr/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
timeout 290 python3 -m pytest -q -m gpu tests/gpu/test_sage2_gpu.py tests/gpu/test_manifest_gpu.py -p no:cacheprovider -rs > $R/gpu_sage2_manifest.log 2>&1 &
A=$!
timeout 290 python3 -m pytest -q -m gpu tests/gpu/test_ncu_gpu.py tests/gpu/test_timing_gpu.py tests/gpu/test_sched_gpu.py -p no:cacheprovider -rs > $R/gpu_ncu_timing_sched.log 2>&1 || echo "shard C rc $?"
wait $A || echo "shard B rc $?"
{ echo "== GPU suites ($(( $(date +%s) - T0 )) s)"; for f in $R/gpu_*.log; do echo "$(basename $f): $(tail -1 $f)"; grep -E "^(FAILED|ERROR)" $f | head -5; done; } | tee -a $R/summary.txt
