# bash .dbg/s57/run_s.sh <full sha, given literally>; carry .whl_nb, .whl_peers, .dbg/s57/run_s.sh: a probe for the next
# plan change, none made here: one-split d128 calls of 265-448 units (batch 34-42 and 50-56 at 8 KV heads), whose CTAs
# the plan's 3-stage build at 2 per SM runs in 1.03-1.70 waves, against (a) the one-stage builds that hold them in one
# wave (3 per SM up to 396 units, 4 per SM up to 528) and (b) the same builds with every SM's first 2 (or 3) slots
# holding whole units and the rest of the units split across the spare slots (tail_units, tail_splits); cold p50 of
# 20, round 1 at every point, then the plan beside the peers, then round 2 in the time left
T0=$(date +%s)
R=/tmp/ress; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/ress -czf $OUT/res.tgz . ; cp /tmp/ress/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
point() {  # batch kv_len round
  local b=$1 n=$2 u=$(( $1 * 8 )) f=$R/cmp_${1}x${2}_r$3 builds t s
  if [ $u -le 396 ]; then
    builds="--build stages=1,splits=1 --build stages=1,qk_chains=1,splits=1"
    t=$(( u - 264 )); s=$(( 132 / t )); [ $s -gt 16 ] && s=16
    [ $s -ge 2 ] && builds="$builds --build stages=1,splits=1,tail_units=$t,tail_splits=$s"
  else
    builds="--build stages=1,qk_chains=1,splits=1"
    t=$(( u - 396 )); s=$(( 132 / t )); [ $s -gt 16 ] && s=16
    [ $s -ge 2 ] && builds="$builds --build stages=1,qk_chains=1,splits=1,tail_units=$t,tail_splits=$s"
  fi
  timeout 90 python3 -m labkit decode compare --batch $b --kv-len $n $builds --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $b x $n"
  { echo "== r$3 $b x $n ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$b +$n " $f.log | cut -c1-210; } | tee -a $R/summary.txt
}
P1="34:2048 34:8192 34:32768 36:8192 38:2048 38:8192 40:2048 40:8192 40:32768 42:8192 42:32768 50:2048 50:8192 52:8192 54:8192 56:2048 56:8192 56:32768"
for p in $P1; do point ${p%:*} ${p#*:} 1; [ $(( $(date +%s) - T0 )) -gt 230 ] && break; done
tar -C $R -czf $OUT/res.tgz .
pts=""; for p in 34x2048 34x8192 38x8192 40x2048 40x8192 42x32768 50x8192 56x8192 56x32768; do pts="$pts --point $p"; done
s=$(date +%s); timeout 120 python3 -m labkit decode bench --peers $pts --iterations 20 --out $R/probe_peers.json > $R/probe_peers.log 2>&1 || echo "bench rc $?"
{ echo "== the plan beside the peers ($(( $(date +%s) - s )) s)"; grep -E "^ +[0-9]+ +[0-9]+ " $R/probe_peers.log | cut -c1-220; } | tee -a $R/summary.txt
tar -C $R -czf $OUT/res.tgz .
for p in 34:8192 38:8192 40:2048 40:8192 42:32768 50:8192 54:8192 56:8192 34:2048 56:2048; do
  [ $(( $(date +%s) - T0 )) -gt 480 ] && break; point ${p%:*} ${p#*:} 2; done
echo "elapsed $(( $(date +%s) - T0 )) s"
