# bash .dbg/s65/run_e.sh <full sha, given literally>; carry .whl_nbl, .dbg/s65: at the large d128 calls that run the
# one-stage build at 4 CTAs per SM (64 x 1k-32k, 256 x 8k), pipelined persistent CTAs and the pipelined per-unit build
# against the plan: more K/V in flight per SM than one 32 KB stage per CTA
T0=$(date +%s)
R=/tmp/rese; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/rese -czf $OUT/res.tgz . ; cp /tmp/rese/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
B="--build persistent=1,stages=2 --build persistent=1,stages=3 --build persistent=1,warps=8,stages=2 --build stages=3"
for rnd in 1 2; do
for pt in "64 8192" "64 32768" "256 8192" "64 1024"; do
  set -- $pt; left=$(( 560 - ($(date +%s) - T0) )); [ $left -lt 40 ] && { echo "no time left for $pt" | tee -a $R/summary.txt; break; }
  tag=r${rnd}_b$1_n$2
  timeout $left python3 -m labkit decode compare --batch $1 --kv-len $2 --head-dim 128 $B --iterations 30 --out $R/cmp_$tag.json > $R/cmp_$tag.log 2>&1 || echo "rc $? at $tag" | tee -a $R/summary.txt
  { echo "== $tag ($(( $(date +%s) - T0 )) s)"; grep -E "^ +[0-9]+ " $R/cmp_$tag.log | cut -c1-200 | tail -5; } | tee -a $R/summary.txt
done
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
