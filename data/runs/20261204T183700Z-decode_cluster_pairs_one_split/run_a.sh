# bash .dbg/s65/run_a.sh <full sha, given literally>; carry .whl_nbl: clustered pairs of the 4-warp build at the
# one-split d128 calls of 16-17 x N (2 CTAs of one unit per cluster, combined in DSMEM), against the plan's one split
T0=$(date +%s)
R=/tmp/resa; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resa -czf $OUT/res.tgz . ; cp /tmp/resa/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
B="--build splits=2,cluster=1,warps=4,stages=3 --build splits=2,cluster=1,warps=4,stages=2"
for rnd in 1 2; do
for pt in "16 4096" "16 2048" "16 8192" "17 4096" "32 4096" "16 32768"; do
  set -- $pt; left=$(( 560 - ($(date +%s) - T0) )); [ $left -lt 30 ] && { echo "no time left for $pt" | tee -a $R/summary.txt; break; }
  tag=r${rnd}_b$1_n$2
  timeout $left python3 -m labkit decode compare --batch $1 --kv-len $2 --head-dim 128 $B --iterations 40 --out $R/cmp_$tag.json > $R/cmp_$tag.log 2>&1 || echo "rc $? at $tag" | tee -a $R/summary.txt
  { echo "== $tag ($(( $(date +%s) - T0 )) s)"; grep -E "^ +[0-9]+ " $R/cmp_$tag.log | cut -c1-200 | tail -3; } | tee -a $R/summary.txt
done
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
