# bash .dbg/s60/run_f.sh <full sha, given literally>; carry .whl_min, .dbg/s60: a probe for the next change, none made:
# the edges of TAIL_PAST_WAVE_SHARE (40-41 x N, 56-64 units past; 34-36 x 4k, under its 8k bound) and 20 x 16k-32k's
# 28 units past the SMs in 4 tail splits, each against the plan at 2cb91e0; cold p50 of 20, shuffled, one round
T0=$(date +%s)
R=/tmp/resf; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resf -czf $OUT/res.tgz . ; cp /tmp/resf/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
for p in "40 8192 56 4" "40 32768 56 4" "41 8192 64 4" "34 4096 8 16" "35 4096 16 16" "36 4096 24 11" "20 32768 28 4" "20 16384 28 4" "40 8192 56 4 _r2" "34 4096 8 16 _r2"; do
  set -- $p; f=$R/cmp_${1}x${2}$5
  timeout 90 python3 -m labkit decode compare --batch $1 --kv-len $2 --build stages=3,splits=1,tail_units=$3,tail_splits=$4 --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== $p ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
