# bash .dbg/s61/run_g.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s61: a diagnosis, no change:
# labkit decode bench --peers at 16 x 4k, 32 x 2k, 17 x 4k and 16 x 8k d128 with the cold samples' L2 left dirty by
# the memset flush (labkit's cold timing) and left clean (the flush, then a read of 2 x L2 of other data), twice each
T0=$(date +%s)
R=/tmp/resg; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resg -czf $OUT/res.tgz . ; cp /tmp/resg/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
pts="--point 16x4096 --point 32x2048 --point 17x4096 --point 16x8192"
for m in dirty clean dirty_r2 clean_r2; do
  left=$(( 330 - ($(date +%s) - T0) )); [ $left -lt 40 ] && { echo "no time left for $m" | tee -a $R/summary.txt; continue; }
  timeout $left python3 .dbg/s61/clean_flush.py ${m%_r2} -- decode bench --peers $pts --iterations 20 --out $R/$m.json > $R/$m.log 2>&1 || echo "rc $? at $m"
  { echo "== $m ($(( $(date +%s) - T0 )) s)"; grep -E "^ +(batch|[0-9]+) +" $R/$m.log | cut -c1-230; } | tee -a $R/summary.txt
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
