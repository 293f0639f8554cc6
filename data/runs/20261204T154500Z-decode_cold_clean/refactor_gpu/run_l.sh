# bash .dbg/s62/run_l.sh <full sha, given literally>; carry .whl_nbl, .dbg/s62: after flush_l2 became one sampler pad
# and the copy probes shared their code: the timing GPU file (both copy probes) and the decode tail-sweep tests (the
# timelines' one-off flush in cold and cold_clean)
T0=$(date +%s)
R=/tmp/resl; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resl -czf $OUT/res.tgz . ; cp /tmp/resl/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 170 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_timing_gpu.py tests/gpu/test_decode_gpu.py -k "probe or cold or tail_sweep or flush" > $R/gpu.log 2>&1 || echo "rc $?" | tee -a $R/summary.txt
tail -1 $R/gpu.log | tee -a $R/summary.txt; grep -E "^(FAILED|ERROR)" $R/gpu.log | head | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
