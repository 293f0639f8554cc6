# bash .dbg/s64/run_c.sh <full sha, given literally>; carry .whl_nbl, .whl_ncu: the other GPU files (timing,
# manifest, sage2, sched, ncu) with the cold pads' persisting-L2 reset, then the sweep, labkit alone (the peers' wheels would pass the 64 MiB carry)
T0=$(date +%s)
R=/tmp/resc; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resc -czf $OUT/res.tgz . ; cp /tmp/resc/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 300 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_timing_gpu.py tests/gpu/test_manifest_gpu.py tests/gpu/test_sage2_gpu.py tests/gpu/test_sched_gpu.py tests/gpu/test_ncu_gpu.py --durations=5 > $R/gpu_rest.log 2>&1 || echo "tests rc $?"
{ echo "== other GPU files ($(( $(date +%s) - s )) s)"; tail -1 $R/gpu_rest.log; grep -E "^(FAILED|ERROR)" $R/gpu_rest.log | head; } | tee -a $R/summary.txt
left=$(( 570 - ($(date +%s) - T0) ))
[ $left -gt 60 ] && { s=$(date +%s); timeout $left python3 -m labkit decode bench --iterations 20 --out $R/sweep.json > $R/sweep.log 2>&1 || echo "bench rc $?"; { echo "== sweep, labkit alone ($(( $(date +%s) - s )) s)"; grep -E "^ +(batch|[0-9]+) +" $R/sweep.log; } | tee -a $R/summary.txt; }
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
