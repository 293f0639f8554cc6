# bash .dbg/s67/probe_cmp.sh <full sha>; carry .whl_nbl, .dbg/s66, .dbg/s67: probe_lite.sh (board, state, device test),
# then decode compare at 16 x 32k and 16 x 8k d128: the plan's loads with wide boxes and/or page ids ahead
T0=$(date +%s)
bash .dbg/s67/probe_lite.sh $1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
mkdir -p $OUT/cmp
for n in 32768 8192; do
  timeout 150 python3 -m labkit decode compare --batch 16 --kv-len $n --build wide_boxes=1 --build page_prefetch=1 --build wide_boxes=1,page_prefetch=1 --iterations 40 --out $OUT/cmp/cmp_b16_n$n.json > $OUT/cmp/cmp_b16_n$n.log 2>&1 || echo "rc $? at $n"
  grep -E "plan|wide|page" $OUT/cmp/cmp_b16_n$n.log | tail -5 | cut -c1-190
done
echo "elapsed $(( $(date +%s) - T0 )) s"
