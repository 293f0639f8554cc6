# bash .dbg/s63/run_l.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s63: at the commit whose cold
# pads reset persisting L2 lines, on the H200 of run_j/run_k: the sweep and the seed-sized call with the peers
T0=$(date +%s)
R=/tmp/resl; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resl -czf $OUT/res.tgz . ; cp /tmp/resl/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 380 python3 -m labkit decode bench --peers --iterations 20 --out $R/sweep.json > $R/sweep.log 2>&1 || echo "rc $? sweep" | tee -a $R/summary.txt
{ grep -E "^ +(batch|[0-9]+) +|^paged decode|seed|graph" $R/sweep.log | cut -c1-250; } | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
