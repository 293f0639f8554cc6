# bash .dbg/s62/run_c.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s62: a measurement, no change:
# the target calls (1 x 8k d128, 64 x 8k, and 72 x 8k and 20 x 32k, under 4.4 TB/s on some H200s) beside the peers
# with the cold samples' L2 left dirty by the memset flush (labkit's and NVBench's cold) and left clean, alternating
T0=$(date +%s)
R=/tmp/resc; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resc -czf $OUT/res.tgz . ; cp /tmp/resc/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
pts="--point 1x8192 --point 64x8192 --point 72x8192 --point 20x32768"
for m in dirty clean dirty_r2 clean_r2; do
  left=$(( 400 - ($(date +%s) - T0) )); [ $left -lt 50 ] && { echo "no time left for $m" | tee -a $R/summary.txt; continue; }
  timeout $left python3 .dbg/s62/ctx_bench.py ${m%_r2} -- decode bench --peers $pts --iterations 20 --out $R/$m.json > $R/$m.log 2>&1 || echo "rc $? at $m"
  { echo "== $m ($(( $(date +%s) - T0 )) s)"; grep -E "^ +(batch|[0-9]+) +" $R/$m.log | cut -c1-230; } | tee -a $R/summary.txt
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
