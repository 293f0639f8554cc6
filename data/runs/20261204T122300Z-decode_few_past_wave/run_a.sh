# bash run_a.sh <full sha, given literally>; carry .whl_min (nvtx, fa3-fwd, einops), .dbg/s60: the second round of the
# probe for a few units past two pipelined CTAs per SM (34-42 x N, 8-72 units past 264 slots). Each call: the plan at
# 6f0f882 (the one-wave rule's build: one stage, 2 chains, 3 per SM, one split) against the pipelined build at 2 per SM
# with the units past its wave in the tail-wave rule's splits (min(16, pages, 264 // past)); cold p50 of 20, shuffled;
# then a repeat of five calls. (Its first call also named the one-wave build as a --build, which compare refuses as
# the plan itself, so only that call's peers step ran: first/.)
T0=$(date +%s)
R=/tmp/resa; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resa -czf $OUT/res.tgz . ; cp /tmp/resa/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
probe() {  # batch kv_len page heads_kv past tail_splits tag
  f=$R/cmp_${1}x${2}_p${3}_kv${4}$7
  timeout 90 python3 -m labkit decode compare --batch $1 --kv-len $2 --page-size $3 --heads-q $(( 4 * $4 )) --heads-kv $4 --build stages=3,splits=1,tail_units=$5,tail_splits=$6 --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $*"
  { echo "== $* ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
}
for p in "34 8192 64 8 8 16" "36 8192 64 8 24 11" "37 8192 64 8 32 8" "38 8192 64 8 40 6" "40 8192 64 8 56 4" \
         "42 8192 64 8 72 3" "35 8192 64 8 16 16" "34 4096 64 8 8 16" "36 4096 64 8 24 11" "34 2048 64 8 8 16" \
         "34 16384 64 8 8 16" "34 32768 64 8 8 16" "36 32768 64 8 24 11" "38 32768 64 8 40 6" \
         "34 8192 32 8 8 16" "68 8192 64 4 8 16" "17 8192 64 16 8 16" "37 4096 64 8 32 8"; do
  probe $p ""; [ $(( $(date +%s) - T0 )) -gt 330 ] && break
done
tar -C $R -czf $OUT/res.tgz .
for p in "34 8192 64 8 8 16" "36 8192 64 8 24 11" "37 8192 64 8 32 8" "38 8192 64 8 40 6" "34 4096 64 8 8 16"; do
  [ $(( $(date +%s) - T0 )) -gt 400 ] && break; probe $p "_r2"
done
tar -C $R -czf $OUT/res.tgz .
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
