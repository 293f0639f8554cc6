# bash .dbg/s57/run_t.sh <full sha, given literally>; carry .whl_nb, .whl_peers, .dbg/s57/run_t.sh: at the
# commit of the one-wave rule (265-528 units: the one-stage build whose one wave holds them): (1) its GPU tests and its
# neighbours'; (2) the plan against the build it replaced, one round; (3) the rule's calls beside the peers; (4)
# notebooks 03 04 02 01 00 live with --record; (5) for the next change, none made here: the rule's builds at 1k
# tokens and at pages of 32, which keep the old plan
T0=$(date +%s)
R=/tmp/rest; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/rest -czf $OUT/res.tgz . ; cp /tmp/rest/summary.txt $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markert; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 120 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_decode_gpu.py -k "265_to_528 or 133_to_237 or 72_units or one_8_warp_cta_per_sm" > $R/gpu_rule.log 2>&1 || echo "tests rc $?"
{ echo "== rule GPU tests ($(( $(date +%s) - s )) s)"; tail -1 $R/gpu_rule.log; grep -E "^(FAILED|ERROR)" $R/gpu_rule.log | head; } | tee -a $R/summary.txt
mkdir -p $R/confirm
for p in "34 8192 64 stages=3,splits=1" "40 2048 64 stages=3,splits=1" "42 32768 64 stages=3,splits=1" "50 8192 64 stages=3,splits=1" "56 32768 64 stages=3,splits=1"; do
  set -- $p; f=$R/confirm/cmp_${1}x${2}_p$3
  timeout 60 python3 -m labkit decode compare --batch $1 --kv-len $2 --page-size $3 --build $4 --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== confirm $p ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
done
pts=""; for p in 34x2048 34x8192 34x32768 38x8192 40x2048 40x8192 42x32768 50x2048 50x8192 54x8192 56x8192 56x32768; do pts="$pts --point $p"; done
s=$(date +%s); timeout 120 python3 -m labkit decode bench --peers $pts --iterations 20 --out $R/rule_peers.json > $R/rule_peers.log 2>&1 || echo "bench rc $?"
{ echo "== the rule's calls beside the peers ($(( $(date +%s) - s )) s)"; grep -E "^ +[0-9]+ +[0-9]+ " $R/rule_peers.log | cut -c1-220; } | tee -a $R/summary.txt
tar -C $R -czf $OUT/res.tgz .
for nb in 03 04 02 01 00; do
  left=$(( 585 - ($(date +%s) - T0) ))
  [ $left -lt 60 ] && { echo "no time left for $nb ($left s)" | tee -a $R/summary.txt; continue; }
  s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run $nb --record > $R/run_$nb.log 2>&1 || echo "$nb rc $?"
  echo "$nb $(( $(date +%s) - s )) s (limit $left): $(tail -1 $R/run_$nb.log | cut -c1-160)" | tee -a $R/summary.txt
  mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markert ] && cp -r $d $R/rec/; done
  tar -C $R -czf $OUT/res.tgz .
done
mkdir -p $R/next
for p in "34 1024 64" "40 1024 64" "56 1024 64" "34 8192 32" "40 2048 32" "50 8192 32"; do
  [ $(( $(date +%s) - T0 )) -gt 560 ] && break
  set -- $p; f=$R/next/cmp_${1}x${2}_p$3
  b="--build stages=1,splits=1 --build stages=1,qk_chains=1,splits=1"; [ $1 -gt 49 ] && b="--build stages=1,qk_chains=1,splits=1"
  timeout 40 python3 -m labkit decode compare --batch $1 --kv-len $2 --page-size $3 $b --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== next $p ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
done
echo "elapsed $(( $(date +%s) - T0 )) s"
