# bash .dbg/s55/run_l.sh <full sha>; carry .whl_nb, .dbg/s55/run_l.sh: measurements for the next plan change (none is
# made on them here): the 67-118 unit rule's 8-warp CTA per unit at pages of 32 (the rule takes pages of 64 only), and
# at pages of 64 the same CTA with 3 stages where batch 12-14 still trail cuDNN; two rounds, cold p50 of 20
T0=$(date +%s)
R=/tmp/resl; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resl -czf $OUT/res.tgz . ; cp /tmp/resl/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
for round in 1 2; do
for p in "12 1024 32" "12 4096 32" "12 8192 32" "10 2048 32" "14 4096 32" "12 4096 64" "12 8192 64" "13 8192 64" "14 4096 64"; do
  set -- $p; f=$R/cmp_${1}x${2}_p$3_r$round
  if [ $3 -eq 32 ]; then b="--build warps=8,stages=2,splits=1"; else b="--build warps=8,stages=3,splits=1 --build warps=4,stages=3,splits=1"; fi
  timeout 60 python3 -m labkit decode compare --batch $1 --kv-len $2 --page-size $3 $b --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== r$round $p ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
  [ $(( $(date +%s) - T0 )) -gt 190 ] && break 2
done; done
echo "elapsed $(( $(date +%s) - T0 )) s"
