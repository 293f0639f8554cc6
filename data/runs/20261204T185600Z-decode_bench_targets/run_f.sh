# bash .dbg/s65/run_f.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s65: the decode bench beside
# the peers with its split sweeps, at the commit that prints issue #10's targets under the table; then report show
T0=$(date +%s)
R=/tmp/resf; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resf -czf $OUT/res.tgz . ; cp /tmp/resf/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 540 python3 -m labkit decode bench --peers --sweep-splits --out $R/sweep.json > $R/sweep.log 2>&1 || echo "rc $? sweep" | tee -a $R/summary.txt
{ echo "== labkit decode bench --peers --sweep-splits ($(( $(date +%s) - s )) s)"; grep -E "^ +(batch|[0-9]+) +|^paged decode|seed|graph|copy|split heuristic|targets|^  [a>]|^  the|^  not" $R/sweep.log | cut -c1-300; } | tee -a $R/summary.txt
[ -f $R/sweep.json ] && python3 -m labkit report show $R/sweep.json > $R/show.txt 2>&1
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
