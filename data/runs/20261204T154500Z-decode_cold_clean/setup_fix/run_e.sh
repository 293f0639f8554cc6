# bash .dbg/s62/run_e.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s62: the timing GPU tests at the
# setup-in-the-pad fix, and labkit decode bench --peers in cold_clean and cold at 17 x 4k (its scratch zeroing) and
# 1 x 8k, twice
T0=$(date +%s)
R=/tmp/rese; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/rese -czf $OUT/res.tgz . ; cp /tmp/rese/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_timing_gpu.py tests/gpu/test_manifest_gpu.py > $R/gpu_tests.log 2>&1; rc=$?
tail -3 $R/gpu_tests.log | tee -a $R/summary.txt
[ $rc -ne 0 ] && { echo "GPU tests failed (rc $rc): no bench" | tee -a $R/summary.txt; grep -E "Error|assert" $R/gpu_tests.log | head -20; exit 1; }
pts="--point 17x4096 --point 1x8192 --point 16x4096"
for m in cold_clean cold cold_clean_r2 cold_r2; do
  left=$(( 300 - ($(date +%s) - T0) )); [ $left -lt 40 ] && { echo "no time left for $m" | tee -a $R/summary.txt; continue; }
  timeout $left python3 -m labkit decode bench --mode ${m%_r2} --peers $pts --iterations 20 --out $R/$m.json > $R/$m.log 2>&1 || echo "rc $? at $m" | tee -a $R/summary.txt
  { echo "== $m ($(( $(date +%s) - T0 )) s)"; grep -E "^ +(batch|[0-9]+) +|^paged decode" $R/$m.log | cut -c1-240; } | tee -a $R/summary.txt
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
