# bash .dbg/s63/run_c.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s63: a diagnosis, no change.
# labkit's and cuDNN's kernel durations (CUPTI) in the bench's interleave, after a synced pad, and after a synced pad
# and 2 ms idle, at the one-split calls where cuDNN leads and at 1 x 8k; twice
T0=$(date +%s)
R=/tmp/resc; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resc -czf $OUT/res.tgz . ; cp /tmp/resc/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
for r in 1 2; do
  left=$(( 300 - ($(date +%s) - T0) )); [ $left -lt 40 ] && { echo "no time left for round $r" | tee -a $R/summary.txt; continue; }
  timeout $left python3 .dbg/s63/cupti_sync.py $R/sync_r$r.json 16x4096 32x2048 64x1024 1x8192 > $R/sync_r$r.log 2>&1 || echo "rc $? at round $r" | tee -a $R/summary.txt
  { echo "== round $r ($(( $(date +%s) - T0 )) s)"; grep -E "labkit/cudnn|Error|error" $R/sync_r$r.log; } | tee -a $R/summary.txt
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
