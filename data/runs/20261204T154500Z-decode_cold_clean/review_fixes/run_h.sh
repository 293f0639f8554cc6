# bash .dbg/s62/run_h.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s62: after the review fixes,
# the GPU tests of what they touch (timing, the decode file's timed paths with the tail sweep in both modes, the ncu
# file, whose cases time with a setup), and the CLI: decode compare and decode bench --sweep-tails in cold_clean
T0=$(date +%s)
R=/tmp/resh; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resh -czf $OUT/res.tgz . ; cp /tmp/resh/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
t() { local name=$1 lim=$2; shift 2; timeout $lim "$@" > $R/$name.log 2>&1 || echo "rc $? at $name" | tee -a $R/summary.txt; echo "== $name: $(tail -1 $R/$name.log | cut -c1-200)" | tee -a $R/summary.txt; }
t gpu_timing 150 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_timing_gpu.py
t gpu_decode_timed 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_decode_gpu.py -k "timed_calls or bench_times or compare_builds or tail_sweep or peers_run"
t compare_clean 80 python3 -m labkit decode compare --batch 64 --kv-len 1024 --build stages=2 --iterations 10 --mode cold_clean --out $R/compare_clean.json
t bench_tails_clean 100 python3 -m labkit decode bench --point 16x4096 --sweep-tails --mode cold_clean --iterations 10 --out $R/tails_clean.json
left=$(( 540 - ($(date +%s) - T0) )); [ $left -gt 60 ] && t gpu_ncu $left python3 -m pytest -q -p no:cacheprovider tests/gpu/test_ncu_gpu.py
grep -E "^(FAILED|ERROR)" $R/*.log | head -10 | tee -a $R/summary.txt
grep -E "compare, batch|tail sweep|one cold_clean call|paged decode" $R/compare_clean.log $R/bench_tails_clean.log | cut -c1-200 | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
