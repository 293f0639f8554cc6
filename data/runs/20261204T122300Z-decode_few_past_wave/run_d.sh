# bash .dbg/s60/run_d.sh <full sha, given literally>; carry .whl_nb, .whl_ncu, .dbg/s60: at the commit of the few-units-
# past-a-pipelined-wave rule: every GPU test file outside decode (manifest, ncu, sage2, sched, timing)
T0=$(date +%s)
R=/tmp/resd; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resd -czf $OUT/res.tgz . ; cp /tmp/resd/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 300 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_manifest_gpu.py tests/gpu/test_ncu_gpu.py tests/gpu/test_sage2_gpu.py tests/gpu/test_sched_gpu.py tests/gpu/test_timing_gpu.py > $R/gpu_rest.log 2>&1 || echo "rest rc $?"
{ echo "== GPU files outside decode ($(( $(date +%s) - s )) s)"; tail -1 $R/gpu_rest.log; grep -E "^(FAILED|ERROR)" $R/gpu_rest.log | head; } | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s"
