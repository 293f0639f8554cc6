# bash .dbg/s65/run_d.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s65: make bench's two commands
# at HEAD (no code change to the kernels or the plan since a0cd66e): the Sage2 bench, then the decode sweep and
# the seed-sized call beside the peers
T0=$(date +%s)
R=/tmp/resd; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resd -czf $OUT/res.tgz . ; cp /tmp/resd/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 200 python3 -m labkit bench --schedule sm90 > $R/sage2_bench.log 2>&1 || echo "rc $? sage2 bench" | tee -a $R/summary.txt
{ echo "== labkit bench --schedule sm90 ($(( $(date +%s) - s )) s)"; tail -25 $R/sage2_bench.log | cut -c1-220; } | tee -a $R/summary.txt
s=$(date +%s); left=$(( 560 - ($(date +%s) - T0) ))
timeout $left python3 -m labkit decode bench --peers --out $R/sweep.json > $R/sweep.log 2>&1 || echo "rc $? sweep" | tee -a $R/summary.txt
{ echo "== labkit decode bench --peers ($(( $(date +%s) - s )) s)"; grep -E "^ +(batch|[0-9]+) +|^paged decode|seed|graph|copy" $R/sweep.log | cut -c1-250; } | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
