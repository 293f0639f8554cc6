# bash data/runs/20261203T180300Z-decode_uneven_units/run_m.sh <full sha>; carry .whl_nb, .dbg/s56/run_m.sh: one-split d128 calls whose units leave the
# 2-per-SM wave uneven (16 x N: 128 units, one CTA on 128 SMs; 24 x N: 192, 60 SMs with two and 72 with one; 20, 28,
# 32 x N) against splits that fill the slots of a 3- or 4-per-SM build (2-stage or 1-stage 4-warp) or 4 splits of the
# plan's build (what FA2's heuristic picks at 192 units); two rounds, cold p50 of 20, outputs checked against the plan's
T0=$(date +%s)
R=/tmp/resm; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resm -czf $OUT/res.tgz . ; cp /tmp/resm/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
for round in 1 2; do
for p in "24 32768" "24 16384" "24 8192" "24 4096" "24 2048" "24 1024" "16 32768" "16 8192" "16 4096" "16 2048" "20 32768" "20 8192" "28 32768" "28 8192" "32 4096" "32 2048"; do
  set -- $p; f=$R/cmp_${1}x${2}_r$round
  case "$1" in
    24) b="--build stages=2,splits=2 --build stages=1,splits=2 --build splits=4";;
    16) b="--build stages=2,splits=3 --build stages=1,splits=3";;
    20) b="--build stages=2,splits=2 --build stages=1,splits=2";;
    *) b="--build stages=2,splits=3 --build stages=1,qk_chains=1,splits=2";;
  esac
  timeout 60 python3 -m labkit decode compare --batch $1 --kv-len $2 $b --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== r$round $1 x $2 ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
  [ $(( $(date +%s) - T0 )) -gt 400 ] && break 2
done; done
echo "elapsed $(( $(date +%s) - T0 )) s"
