# bash .dbg/s59/run_c.sh <full sha, given literally>; carry .whl_nb, .whl_ncu, .dbg/s59: at the commit of the
# few-units-past-the-SMs rule: the whole decode GPU test file (notebook 05 ran in run_b2.sh), then the other
# GPU files (manifest, ncu, sage2, sched, timing) in the time left
T0=$(date +%s)
R=/tmp/resc; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resc -czf $OUT/res.tgz . ; cp /tmp/resc/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $R/smi.csv; cat $R/smi.csv
tar -C $R -czf $OUT/res.tgz .
left=$(( 580 - ($(date +%s) - T0) ))
s=$(date +%s); timeout $left python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_decode_gpu.py > $R/gpu_decode.log 2>&1 || echo "tests rc $?"
{ echo "== decode GPU file ($(( $(date +%s) - s )) s, limit $left)"; tail -1 $R/gpu_decode.log; grep -E "^(FAILED|ERROR)" $R/gpu_decode.log | head; } | tee -a $R/summary.txt
tar -C $R -czf $OUT/res.tgz .
left=$(( 585 - ($(date +%s) - T0) ))
[ $left -gt 30 ] && { s=$(date +%s); timeout $left python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_manifest_gpu.py tests/gpu/test_ncu_gpu.py tests/gpu/test_sage2_gpu.py tests/gpu/test_sched_gpu.py tests/gpu/test_timing_gpu.py > $R/gpu_rest.log 2>&1 || echo "rest rc $?"
  { echo "== GPU files outside decode ($(( $(date +%s) - s )) s, limit $left)"; tail -1 $R/gpu_rest.log; grep -E "^(FAILED|ERROR)" $R/gpu_rest.log | head; } | tee -a $R/summary.txt; }
echo "elapsed $(( $(date +%s) - T0 )) s"
