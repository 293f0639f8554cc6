# bash .dbg/s65/run_b.sh <full sha, given literally>; carry .whl_nbl, .dbg/s65: a diagnosis, no change: DRAM bytes
# written and read, and the kernel's duration, under ncu (one pass, no cache control) after labkit's cold pad, dirty or
# clean, for 1 x 8k d128 with and without L2 evict_first on K/V, and 16 x 4k d128 without and with it
T0=$(date +%s)
R=/tmp/resb; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resb -czf $OUT/res.tgz . ; cp /tmp/resb/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
NS="--nvtx --nvtx-include regex:labkit_.*/ --kernel-name regex:paged_decode"
for m in dirty clean; do
  left=$(( 560 - ($(date +%s) - T0) )); [ $left -lt 60 ] && { echo "no time left for $m" | tee -a $R/summary.txt; break; }
  timeout $left ncu $NS --metrics $M --cache-control none --clock-control none python3 .dbg/s65/ncu_ef.py $m 7 > $R/ncu_$m.log 2>&1 || echo "rc $? at $m" | tee -a $R/summary.txt
done
python3 .dbg/s65/ncu_sum.py $R/ncu_dirty.log $R/ncu_clean.log | tee -a $R/summary.txt
grep -E "^(ef|ne)" $R/ncu_dirty.log | cut -c1-300 | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
