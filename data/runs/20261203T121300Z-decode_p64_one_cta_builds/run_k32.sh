# bash .dbg/s52/run_wb.sh; carry .whl_nb, .dbg: at pages of 64, the one-split 4-warp calls (one CTA per SM) in 128-key stages (32 keys per warp) against the plan
# boxes and/or page ids ahead against the plan, two rounds
T0=$(date +%s)
R=/tmp/resk; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resk -czf $OUT/res.tgz . ; cp /tmp/resk/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
for round in 1 2; do
for p in "16 4096" "16 2048" "16 8192" "32 4096" "4 16384"; do
  set -- $p; f=$R/cmp_${1}x${2}_r$round
  timeout 80 python3 -m labkit decode compare --batch $1 --kv-len $2 --build keys_per_warp=32,stages=2 --build keys_per_warp=32,stages=3 --build keys_per_warp=32,stages=2,qk_chains=1 --build warps=8,stages=2 --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== r$round $1 x $2 ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
  [ $(( $(date +%s) - T0 )) -gt 280 ] && break 2
done; done
echo "elapsed $(( $(date +%s) - T0 )) s"
