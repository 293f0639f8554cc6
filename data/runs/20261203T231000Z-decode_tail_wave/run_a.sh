# bash .dbg/s58/run_a.sh <full sha, given literally>; carry .whl_nb, .whl_peers, .dbg/s58/run_a.sh: a probe for the next
# plan change, none made here: one-split d128 calls of 536-672 and 800-896 units (batch 67-84 and 100-112 at 8 KV heads),
# which the plan's 3-stage build at 2 per SM runs in 2.03-2.55 and 3.03-3.39 waves of 264 slots (the last one part
# filled), against (A) that build with the units past its whole waves split across the slots (tail_units, tail_splits),
# (B) the one-stage build of the most CTAs per SM whose whole waves hold all but a few units, the rest in tail splits,
# (C/D) the one-stage builds alone; and 17 x N (136 units) with its last 4 units in 16 splits, again on another H200;
# cold p50 of 20, round 1 at every point, then the plan beside the peers, then round 2 in the time left
T0=$(date +%s)
R=/tmp/ress; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/ress -czf $OUT/res.tgz . ; cp /tmp/ress/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
min() { [ $1 -lt $2 ] && echo $1 || echo $2; }
tailb() {  # build knobs, whole units per wave, units left: the build with its last units split across one wave's slots
  local s=$(min 16 $(( $2 / $3 ))); [ $s -ge 2 ] && echo "--build $1,splits=1,tail_units=$3,tail_splits=$s"; }
point() {  # batch kv_len round
  local b=$1 n=$2 u=$(( $1 * 8 )) f=$R/cmp_${1}x${2}_r$3 builds
  if [ $u -le 140 ]; then
    builds="--build stages=3,splits=1,tail_units=$(( u - 132 )),tail_splits=16"
  elif [ $u -le 792 ]; then  # 2 whole waves at 2 per SM, 1 at 4 per SM
    builds="$(tailb stages=3 264 $(( u - 528 ))) $(tailb stages=1,qk_chains=1 528 $(( u - 528 ))) --build stages=1,qk_chains=2,splits=1 --build stages=1,qk_chains=1,splits=1"
  else  # 3 whole waves at 2 per SM, 2 at 3 per SM
    builds="$(tailb stages=3 264 $(( u - 792 ))) $(tailb stages=1,qk_chains=2 396 $(( u - 792 ))) --build stages=1,qk_chains=1,splits=1"
  fi
  timeout 100 python3 -m labkit decode compare --batch $b --kv-len $n $builds --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $b x $n"
  { echo "== r$3 $b x $n ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$b +$n " $f.log | cut -c1-230; } | tee -a $R/summary.txt
}
P1="67:8192 72:8192 76:8192 80:8192 84:8192 100:8192 104:8192 110:8192 67:2048 67:32768 100:2048 17:8192 17:2048 80:32768"
for p in $P1; do point ${p%:*} ${p#*:} 1; [ $(( $(date +%s) - T0 )) -gt 300 ] && break; done
tar -C $R -czf $OUT/res.tgz .
pts=""; for p in 67x8192 72x8192 80x8192 84x8192 100x8192 104x8192 67x2048 67x32768 17x8192; do pts="$pts --point $p"; done
s=$(date +%s); timeout 140 python3 -m labkit decode bench --peers $pts --iterations 20 --out $R/probe_peers.json > $R/probe_peers.log 2>&1 || echo "bench rc $?"
{ echo "== the plan beside the peers ($(( $(date +%s) - s )) s)"; grep -E "^ +[0-9]+ +[0-9]+ " $R/probe_peers.log | cut -c1-220; } | tee -a $R/summary.txt
tar -C $R -czf $OUT/res.tgz .
for p in 67:8192 76:8192 100:8192 80:8192 104:8192 67:2048 84:8192 17:8192; do
  [ $(( $(date +%s) - T0 )) -gt 500 ] && break; point ${p%:*} ${p#*:} 2; done
echo "elapsed $(( $(date +%s) - T0 )) s"
