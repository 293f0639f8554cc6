# bash .dbg/s63/run_k.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s63: at the commit whose cold
# pads reset persisting L2 lines: the other 107 calls of the peer map (run_j.sh timed the 46 behind), with
# labkit decode bench --peers (cold), the calls under 1 GB first
T0=$(date +%s)
R=/tmp/resk; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resk -czf $OUT/res.tgz . ; cp /tmp/resk/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
small="$(cat .dbg/s63/rest_small.txt)"
large="$(cat .dbg/s63/rest_large.txt)"
for set in small large; do
  left=$(( 540 - ($(date +%s) - T0) )); [ $left -lt 60 ] && { echo "no time left for $set" | tee -a $R/summary.txt; continue; }
  pts=$(for p in ${!set}; do echo -n "--point $p "; done)
  timeout $left python3 -m labkit decode bench --peers $pts --iterations 20 --out $R/rest_$set.json > $R/rest_$set.log 2>&1 || echo "rc $? at $set" | tee -a $R/summary.txt
  { echo "== $set ($(( $(date +%s) - T0 )) s)"; grep -E "^ +(batch|[0-9]+) +" $R/rest_$set.log | awk '{print $1, $2, $(NF-5), $(NF)}'; } | tee -a $R/summary.txt
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
