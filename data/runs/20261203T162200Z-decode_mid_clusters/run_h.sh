# bash .dbg/s55/run_h.sh <full sha>; carry .whl_nb, .dbg: the bounds of two candidate rules, two rounds, cold p50 of 20.
# (1) d128 calls of 16-56 units under 8k tokens (clusters of 8 do not fit at once; the plan runs 4-16 splits of the
# 4-warp build at 2 per SM): the 8-warp build in clusters of 4 (units x 4 <= 120) or 2, across kv_len, batch, pages of
# 32, 64/8 heads; (2) 133-263 units at 2 CTAs per SM: the last 2 x 132 - units units in 2 splits
T0=$(date +%s)
R=/tmp/resh; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resh -czf $OUT/res.tgz . ; cp /tmp/resh/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
c4s="--build warps=8,stages=2,splits=4,cluster=1 --build warps=8,stages=3,splits=4,cluster=1"
c2s="--build warps=8,stages=2,splits=2,cluster=1 --build warps=8,stages=3,splits=2,cluster=1"
for round in 1 2; do
for p in "2 512" "2 4096" "3 2048" "3 4096" "4 512" "4 2048" "4 4096" "5 1024" "5 4096" "6 2048" "6 4096" "7 1024" "7 4096" \
         "2 1024 32" "4 2048 32" "4 1024 64 64" "17 4096" "18 8192" "20 4096" "24 1024" "28 2048" "32 2048"; do
  set -- $p; ps=${3:-64}; hq=${4:-32}; f=$R/cmp_${1}x${2}_p${ps}_h${hq}_r$round
  u=$(( $1 * 8 ))
  if [ $u -gt 132 ]; then b="--build tail_units=$(( 264 - u )),tail_splits=2"
  elif [ $(( u * 4 )) -le 120 ]; then b="$c4s $c2s"; else b="$c2s"; fi
  timeout 100 python3 -m labkit decode compare --batch $1 --kv-len $2 --page-size $ps --heads-q $hq $b --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== r$round $p ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
  [ $(( $(date +%s) - T0 )) -gt 560 ] && break 2
done; done
echo "elapsed $(( $(date +%s) - T0 )) s"
