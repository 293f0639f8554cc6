# bash .dbg/s59/run_a.sh <full sha, given literally>; carry .whl_nb, .whl_peers, .dbg/s59: the tail-wave rule's reach
# past the calls it was measured at: one-split d128 calls of 1328-5520 units (batch 166-690 at 8 KV heads, 2k-8k
# tokens, pages of 64), where the plan splits the units past its last whole wave (3-stage build at 2 per SM up to
# batch 210, one-stage builds at 3 and 4 per SM after), against the same build without the tail (the plan before
# the rule); then (next change, none made here) 17-24 x N (136-192 units) as one CTA per SM with the units past the
# SMs in tail splits, against the plan's 2 splits of a one-stage build; then some of the reach calls beside the peers;
# cold p50 of 20, round 1 at every point, round 2 in the time left
T0=$(date +%s)
R=/tmp/resa; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resa -czf $OUT/res.tgz . ; cp /tmp/resa/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
cmp() {  # batch kv_len round build...
  local b=$1 n=$2 r=$3; shift 3; local f=$R/cmp_${b}x${n}_r$r a=""
  for x in "$@"; do a="$a --build $x"; done
  timeout 60 python3 -m labkit decode compare --batch $b --kv-len $n $a --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $b x $n"
  { echo "== r$r $b x $n ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$b +$n " $f.log | cut -c1-200; } | tee -a $R/summary.txt
}
PTS=$(cat .dbg/s59/pts.txt)
for p in $PTS; do IFS=: read b n k u s <<< "$p"; cmp $b $n 1 $k; [ $(( $(date +%s) - T0 )) -gt 230 ] && break; done
tar -C $R -czf $OUT/res.tgz .
for p in 17:2048:4:16 17:8192:4:16 17:32768:4:16 18:8192:12:11 20:4096:28:4 20:8192:28:4 24:8192:60:2; do
  IFS=: read b n u s <<< "$p"; cmp $b $n 1 stages=3,splits=1,tail_units=$u,tail_splits=$s stages=3,splits=1; done
tar -C $R -czf $OUT/res.tgz .
pts=""; for p in 166x8192 204x8192 212x8192 228x8192 292x2048 400x2048 600x2048; do pts="$pts --point $p"; done
s=$(date +%s); timeout 140 python3 -m labkit decode bench --peers $pts --iterations 20 --out $R/reach_peers.json > $R/reach_peers.log 2>&1 || echo "bench rc $?"
{ echo "== the plan beside the peers ($(( $(date +%s) - s )) s)"; grep -E "^ +[0-9]+ +[0-9]+ " $R/reach_peers.log | cut -c1-220; } | tee -a $R/summary.txt
tar -C $R -czf $OUT/res.tgz .
for p in $PTS; do [ $(( $(date +%s) - T0 )) -gt 540 ] && break; IFS=: read b n k u s <<< "$p"; cmp $b $n 2 $k; done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
