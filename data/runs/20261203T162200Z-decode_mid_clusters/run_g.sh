# bash .dbg/s55/run_g.sh <full sha>; carry .whl_nb, .whl_peers, .dbg: (1) the short d128 calls whose clusters of 8 do
# not fit at once (2-6 x 1k, 2 x 2k; the plan runs 11-16 splits of the 4-warp build there) against the 8-warp build in
# clusters of 4 or 2; (2) 24 x N (192 units at 2 CTAs per SM: 60 SMs hold two, 72 one) against its last 72 units in 2
# splits (264 CTAs, one per slot); two rounds, cold p50 of 20; (3) the 67-118 unit rule's calls beside the peers
T0=$(date +%s)
R=/tmp/resg; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resg -czf $OUT/res.tgz . ; cp /tmp/resg/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
for round in 1 2; do
for p in "2 1024" "3 1024" "4 1024" "6 1024" "2 2048" "24 2048" "24 8192" "24 32768"; do
  set -- $p; f=$R/cmp_${1}x${2}_r$round
  case "$1x$2" in
    2x1024) b="--build warps=8,stages=2,splits=4,cluster=1 --build warps=8,stages=3,splits=2,cluster=1 --build warps=8,stages=1,splits=8";;
    3x1024) b="--build warps=8,stages=2,splits=4,cluster=1 --build warps=8,stages=3,splits=2,cluster=1";;
    2x2048) b="--build warps=8,stages=3,splits=4,cluster=1 --build warps=8,stages=2,splits=8";;
    24x*) b="--build tail_units=72,tail_splits=2 --build tail_units=36,tail_splits=2";;
    *) b="--build warps=8,stages=3,splits=2,cluster=1 --build warps=8,stages=2,splits=4";;
  esac
  timeout 100 python3 -m labkit decode compare --batch $1 --kv-len $2 $b --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== r$round $1 x $2 ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
  [ $(( $(date +%s) - T0 )) -gt 380 ] && break 2
done; done
tar -C $R -czf $OUT/res.tgz .
left=$(( 585 - ($(date +%s) - T0) ))
pts=""; for p in 9x8192 10x2048 10x8192 11x1024 12x1024 12x2048 12x4096 12x8192 12x16384 12x32768 13x8192 14x4096; do pts="$pts --point $p"; done
s=$(date +%s); timeout $left python3 -m labkit decode bench --peers $pts --iterations 20 --out $R/rule_peers.json > $R/rule_peers.log 2>&1 || echo "bench rc $?"
{ echo "== rule's calls beside the peers ($(( $(date +%s) - s )) s)"; grep -E "^ +[0-9]+ +[0-9]+ " $R/rule_peers.log | cut -c1-220; } | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s"
