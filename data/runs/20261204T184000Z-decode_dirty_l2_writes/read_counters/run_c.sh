# bash .dbg/s65/run_c.sh <full sha, given literally>; carry .whl_nbl, .dbg/s65: a diagnosis, no change: what ncu's
# dram__bytes_write counts after each of labkit's cold pads and none, for a plain 268 MB read and the 1 x 8k d128 plan
# with and without evict_first, under ncu without cache control and with its own (flush and invalidate)
T0=$(date +%s)
R=/tmp/resc; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resc -czf $OUT/res.tgz . ; cp /tmp/resc/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
NS="--nvtx --nvtx-include regex:labkit_.*/"
for cc in none all; do
  left=$(( 560 - ($(date +%s) - T0) )); [ $left -lt 60 ] && { echo "no time left for $cc" | tee -a $R/summary.txt; break; }
  timeout $left ncu $NS --metrics $M --cache-control $cc --clock-control none python3 .dbg/s65/ncu_rd.py 5 > $R/ncu_cc_$cc.log 2>&1 || echo "rc $? at $cc" | tee -a $R/summary.txt
done
python3 .dbg/s65/ncu_sum.py $R/ncu_cc_none.log $R/ncu_cc_all.log | tee -a $R/summary.txt
grep -E "^(ef|ne):" $R/ncu_cc_none.log | cut -c1-300 | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
