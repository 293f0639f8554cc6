# bash .dbg/s63/run_b.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s63: a diagnosis, no change.
# labkit beside the peers in the bench's shuffled cold rounds, traced by CUPTI (torch.profiler): the kernels' own
# durations in the bench's context, against the event-timed p50s of the same rounds; twice, then once in cold_clean
T0=$(date +%s)
R=/tmp/resb; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resb -czf $OUT/res.tgz . ; cp /tmp/resb/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
pts="16x4096 32x2048 17x4096 1x8192 8x8192 64x1024"
for run in cold:r1 cold:r2 cold_clean:r1; do
  m=${run%:*}; left=$(( 400 - ($(date +%s) - T0) )); [ $left -lt 60 ] && { echo "no time left for $run" | tee -a $R/summary.txt; continue; }
  timeout $left python3 .dbg/s63/cupti_ctx.py $R/cupti_${m}_${run#*:}.json $m $pts > $R/cupti_${m}_${run#*:}.log 2>&1 || echo "rc $? at $run" | tee -a $R/summary.txt
  { echo "== $run ($(( $(date +%s) - T0 )) s)"; grep -E "^==|median" $R/cupti_${m}_${run#*:}.log | grep -v -i "memset\|spin\|reduce_sum\|elementwise\|gather" | cut -c1-170; } | tee -a $R/summary.txt
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
