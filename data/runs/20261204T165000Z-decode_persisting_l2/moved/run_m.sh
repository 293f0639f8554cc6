# bash .dbg/s63/run_m.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s63: after the persisting-L2
# reset moved to labkit/timing/persisting.py: the timing GPU file and the decode file's timed paths
T0=$(date +%s)
R=/tmp/resm; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resm -czf $OUT/res.tgz . ; cp /tmp/resm/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 150 python3 -m pytest -q -p no:cacheprovider -rs -s tests/gpu/test_timing_gpu.py > $R/gpu_timing.log 2>&1
{ grep -E "MiB read" $R/gpu_timing.log; tail -1 $R/gpu_timing.log; grep -E "^(FAILED|ERROR)" $R/gpu_timing.log; } | tee -a $R/summary.txt
timeout 200 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_decode_gpu.py -k "tail_sweep or compare_builds or bench_times or timed_calls or peers_run" > $R/gpu_decode.log 2>&1
{ tail -1 $R/gpu_decode.log; grep -E "^(FAILED|ERROR)" $R/gpu_decode.log | head; } | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
