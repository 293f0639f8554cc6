# bash data/runs/20261203T180300Z-decode_uneven_units/run_n.sh <full sha>; carry .whl_nb, .dbg/s56/run_n.sh: the edges of a rule taken from run_m (one-split
# d128 calls of 133-237 units at 2 per SM, which leave some SMs two CTAs and some one: 2 splits of a one-stage build at
# 3 or 4 per SM, whichever fills its slots more): 136-232 units at 1k-8k, and pages of 32; two rounds, cold p50 of 20
T0=$(date +%s)
R=/tmp/resn; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resn -czf $OUT/res.tgz . ; cp /tmp/resn/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
for round in 1 2; do
for p in "17 2048 64" "17 8192 64" "18 2048 64" "18 8192 64" "19 8192 64" "21 8192 64" "22 2048 64" "22 8192 64" "26 8192 64" "29 2048 64" "29 8192 64" "20 1024 64" "20 2048 64" "28 1024 64" "28 2048 64" "24 2048 64" "24 8192 32" "20 8192 32" "28 8192 32"; do
  set -- $p; f=$R/cmp_${1}x${2}_p$3_r$round
  b="--build stages=1,splits=2 --build stages=1,qk_chains=1,splits=2"
  timeout 60 python3 -m labkit decode compare --batch $1 --kv-len $2 --page-size $3 $b --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== r$round $1 x $2 p$3 ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
  [ $(( $(date +%s) - T0 )) -gt 400 ] && break 2
done; done
echo "elapsed $(( $(date +%s) - T0 )) s"
