# bash .dbg/s59/run_d.sh <full sha, given literally>; carry .whl_nb, .dbg/s59: a probe for the next change, none made
# here: 34-36 x N (272-288 units, 8-24 past two per SM), which the one-wave rule runs as one wave of the one-stage
# build at 3 per SM, against (A) that build with the units past two per SM in tail splits across its spare slots and
# (B) the pipelined build at 2 per SM with the same tail (what the tail-wave rule would run); cold p50 of 20, one round
T0=$(date +%s)
R=/tmp/resd; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resd -czf $OUT/res.tgz . ; cp /tmp/resd/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
for p in "34 2048 64 8 16" "34 8192 64 8 16" "34 32768 64 8 16" "35 8192 64 16 8" "36 8192 64 24 5" "34 8192 32 8 16"; do
  set -- $p; f=$R/cmp_${1}x${2}_p$3
  timeout 60 python3 -m labkit decode compare --batch $1 --kv-len $2 --page-size $3 --build stages=1,qk_chains=2,splits=1,tail_units=$4,tail_splits=$5 --build stages=3,splits=1,tail_units=$4,tail_splits=$5 --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== $p ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
  [ $(( $(date +%s) - T0 )) -gt 200 ] && break
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
