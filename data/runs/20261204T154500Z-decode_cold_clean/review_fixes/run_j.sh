# bash .dbg/s62/run_j.sh <full sha, given literally>; carry .whl_nbl, .dbg/s62: decode bench --sweep-tails at 16 x 4k
# (skipped before the fix) in cold_clean and cold, and the decode GPU tail-sweep tests
T0=$(date +%s)
R=/tmp/resj; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resj -czf $OUT/res.tgz . ; cp /tmp/resj/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
for m in cold_clean cold; do
  timeout 120 python3 -m labkit decode bench --point 16x4096 --sweep-tails --mode $m --iterations 10 --out $R/tails_$m.json > $R/tails_$m.log 2>&1 || echo "rc $? at $m" | tee -a $R/summary.txt
  { echo "== $m"; grep -E "^ +(batch|[0-9]+) +|tail sweep|call:" $R/tails_$m.log | cut -c1-220; } | tee -a $R/summary.txt
done
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_decode_gpu.py -k "tail_sweep" > $R/gpu_tail_sweep.log 2>&1 || echo "rc $? tests" | tee -a $R/summary.txt
tail -1 $R/gpu_tail_sweep.log | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
