# bash .dbg/s63/run_e.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s63: a diagnosis, no change.
# (1) survive.py: does a 268 MB read's data outlive labkit's cold flush (2 x L2 memset, 8 x L2 memset, cold_clean)?
# (2) CUPTI kernel durations of labkit and cuDNN with the peers sharing one K/V copy (as the bench) and each on its own
T0=$(date +%s)
R=/tmp/rese; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/rese -czf $OUT/res.tgz . ; cp /tmp/rese/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 120 python3 .dbg/s63/survive.py $R/survive.json > $R/survive.log 2>&1 || echo "rc $? survive" | tee -a $R/summary.txt
{ echo "== survive ($(( $(date +%s) - T0 )) s)"; cat $R/survive.log | tail -5; } | tee -a $R/summary.txt
for r in 1; do
  left=$(( 300 - ($(date +%s) - T0) )); [ $left -lt 40 ] && { echo "no time left for round $r" | tee -a $R/summary.txt; continue; }
  CTXS=bench4,bench4own,bench4,bench4own timeout $left python3 .dbg/s63/cupti_sync.py $R/own_r$r.json 16x4096 17x4096 64x1024 > $R/own_r$r.log 2>&1 || echo "rc $? at round $r" | tee -a $R/summary.txt
  { echo "== round $r ($(( $(date +%s) - T0 )) s)"; grep -E "labkit/cudnn|Error|error" $R/own_r$r.log; } | tee -a $R/summary.txt
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
