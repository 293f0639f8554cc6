# bash .dbg/s62/run_g.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s62: the GPU tests the timing
# changes touch: tests/gpu/test_timing_gpu.py, test_manifest_gpu.py, and the decode file's timed paths (timed calls
# in every mode, the bench with --peers and --mode cold_clean, compare, the tail sweep, the peers)
T0=$(date +%s)
R=/tmp/resg; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resg -czf $OUT/res.tgz . ; cp /tmp/resg/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_timing_gpu.py tests/gpu/test_manifest_gpu.py > $R/gpu_timing_manifest.log 2>&1 || echo "rc $?" | tee -a $R/summary.txt
tail -2 $R/gpu_timing_manifest.log | tee -a $R/summary.txt
timeout 300 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_decode_gpu.py -k "timed_calls or bench_times or compare_builds or tail_sweep or peers_run" > $R/gpu_decode_timed.log 2>&1 || echo "rc $?" | tee -a $R/summary.txt
tail -2 $R/gpu_decode_timed.log | tee -a $R/summary.txt
grep -E "^(FAILED|ERROR)" $R/*.log | head -10 | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
