# bash .dbg/s54/run_c.sh; carry .whl_nb, .dbg: at 96 and 192 (sequence, KV head) units (batch 12 and 24, d128, 32/8
# heads, pages of 64), where the dense grid put labkit 2-10 % behind cuDNN, the plan against split counts that fill
# whole waves (11 splits: 96 x 11 = 4 x 264 slots) and one CTA per unit or per SM; two rounds, cold p50 of 20
T0=$(date +%s)
R=/tmp/resc; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resc -czf $OUT/res.tgz . ; cp /tmp/resc/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
for round in 1 2; do
for p in "12 8192" "12 4096" "12 16384" "24 8192" "24 2048" "12 1024"; do
  set -- $p; f=$R/cmp_${1}x${2}_r$round
  if [ $1 -eq 12 ]; then b="--build splits=1 --build splits=3 --build splits=11 --build warps=8,stages=2,splits=1 --build warps=8,stages=2,splits=11 --build stages=1,qk_chains=1,splits=11"
  else b="--build splits=4 --build splits=11 --build stages=1,qk_chains=1,splits=11 --build warps=8,stages=2,splits=11"; fi
  timeout 100 python3 -m labkit decode compare --batch $1 --kv-len $2 $b --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== r$round $1 x $2 ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
  [ $(( $(date +%s) - T0 )) -gt 450 ] && break 2
done; done
echo "elapsed $(( $(date +%s) - T0 )) s"
