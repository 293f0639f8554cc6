# bash .dbg/s62/run_d.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s62: labkit's new timing mode
# cold_clean (the memset flush, then a read of 2 x L2 of other data, so L2 is clean): its GPU tests, then labkit
# decode bench --peers at the target calls and those furthest behind cuDNN in cold and cold_clean, alternating, twice;
# labkit manifest run in both modes; labkit report diff of the two
T0=$(date +%s)
R=/tmp/resd; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resd -czf $OUT/res.tgz . ; cp /tmp/resd/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_timing_gpu.py > $R/gpu_timing.log 2>&1; rc=$?
tail -3 $R/gpu_timing.log | tee -a $R/summary.txt
[ $rc -ne 0 ] && { echo "timing GPU tests failed (rc $rc): no bench" | tee -a $R/summary.txt; grep -E "Error|assert" $R/gpu_timing.log | head -20; exit 1; }
pts="--point 1x8192 --point 64x8192 --point 72x8192 --point 20x32768 --point 16x4096 --point 32x2048 --point 17x4096 --point 8x8192"
for m in cold cold_clean cold_r2 cold_clean_r2; do
  left=$(( 480 - ($(date +%s) - T0) )); [ $left -lt 60 ] && { echo "no time left for $m" | tee -a $R/summary.txt; continue; }
  timeout $left python3 -m labkit decode bench --mode ${m%_r2} --peers $pts --iterations 20 --out $R/$m.json > $R/$m.log 2>&1 || echo "rc $? at $m" | tee -a $R/summary.txt
  { echo "== $m ($(( $(date +%s) - T0 )) s)"; grep -E "^ +(batch|[0-9]+) +|^paged decode|^peer " $R/$m.log | cut -c1-240; } | tee -a $R/summary.txt
done
python3 -m labkit report diff $R/cold.json $R/cold_clean.json > $R/diff.log 2>&1; tail -4 $R/diff.log | tee -a $R/summary.txt
python3 -m labkit decode build --batch 1 --kv-len 8192 --out $R/m > $R/build.log 2>&1
for m in cold cold_clean; do
  python3 -m labkit manifest run $R/m/decode_*.json --iters 20 --mode $m --json $R/manifest_$m.json > $R/manifest_$m.log 2>&1 || echo "rc $? manifest $m" | tee -a $R/summary.txt
  { echo "== manifest run --mode $m"; tail -4 $R/manifest_$m.log; } | tee -a $R/summary.txt
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
