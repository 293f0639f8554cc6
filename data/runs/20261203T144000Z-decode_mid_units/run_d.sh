# bash .dbg/s54/run_d.sh; carry .whl_nb, .dbg: where one split (one CTA per unit: 4-warp 3-stage at 2 per SM, or one
# 8-warp 2-stage CTA per SM) beats the plan's 2 splits below the one-split rule's 0.9 x SMs units: 72-112 units at
# pages of 64 (batch 9-14, 32/8 heads, d128), 96 units with pages of 32 and 16 and with 64/16 heads; two rounds
T0=$(date +%s)
R=/tmp/resd; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resd -czf $OUT/res.tgz . ; cp /tmp/resd/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
for round in 1 2; do
for p in "9 8192 64 8" "10 8192 64 8" "11 8192 64 8" "13 8192 64 8" "14 8192 64 8" "10 2048 64 8" "10 32768 64 8" "11 1024 64 8" "14 4096 64 8" "12 8192 32 8" "12 8192 16 8" "6 8192 64 16"; do
  set -- $p; f=$R/cmp_${1}x${2}_p${3}_h${4}_r$round
  timeout 100 python3 -m labkit decode compare --batch $1 --kv-len $2 --page-size $3 --heads-q $(( 4 * $4 )) --heads-kv $4 --build splits=1 --build warps=8,stages=2,splits=1 --build splits=2 --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== r$round $1 x $2 p$3 h$4 ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
  [ $(( $(date +%s) - T0 )) -gt 400 ] && break 2
done; done
echo "elapsed $(( $(date +%s) - T0 )) s"
