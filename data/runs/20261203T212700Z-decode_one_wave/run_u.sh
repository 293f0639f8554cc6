# bash .dbg/s57/run_u.sh <full sha, given literally>; carry .whl_nb, .whl_peers, .dbg/s57/run_u.sh: at the commit that
# takes the one-wave rule to 1k tokens and pages of 32: (1) its GPU tests and the 133-237 unit rule's; (2) the plan
# against the build it replaced at the new calls, one round; (3) those calls beside the peers; (4) notebooks 03 04 02
# 01 00 live with --record
T0=$(date +%s)
R=/tmp/resu; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resu -czf $OUT/res.tgz . ; cp /tmp/resu/summary.txt $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markeru; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 120 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_decode_gpu.py -k "265_to_528 or 133_to_237" > $R/gpu_rule.log 2>&1 || echo "tests rc $?"
{ echo "== rule GPU tests ($(( $(date +%s) - s )) s)"; tail -1 $R/gpu_rule.log; grep -E "^(FAILED|ERROR)" $R/gpu_rule.log | head; } | tee -a $R/summary.txt
mkdir -p $R/confirm
for p in "34 1024 64" "56 1024 64" "34 8192 32" "40 2048 32" "50 8192 32" "42 32768 32"; do
  set -- $p; f=$R/confirm/cmp_${1}x${2}_p$3
  timeout 60 python3 -m labkit decode compare --batch $1 --kv-len $2 --page-size $3 --build stages=3,splits=1 --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== confirm $p ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
done
pts=""; for p in 34x1024 40x1024 56x1024; do pts="$pts --point $p"; done
s=$(date +%s); timeout 60 python3 -m labkit decode bench --peers $pts --iterations 20 --out $R/rule_peers_1k.json > $R/rule_peers_1k.log 2>&1 || echo "bench rc $?"
{ echo "== 1k beside the peers ($(( $(date +%s) - s )) s)"; grep -E "^ +[0-9]+ +[0-9]+ " $R/rule_peers_1k.log | cut -c1-220; } | tee -a $R/summary.txt
pts=""; for p in 34x8192 40x2048 50x8192; do pts="$pts --point $p"; done
s=$(date +%s); timeout 60 python3 -m labkit decode bench --peers --page-size 32 $pts --iterations 20 --out $R/rule_peers_p32.json > $R/rule_peers_p32.log 2>&1 || echo "bench rc $?"
{ echo "== pages of 32 beside the peers ($(( $(date +%s) - s )) s)"; grep -E "^ +[0-9]+ +[0-9]+ " $R/rule_peers_p32.log | cut -c1-220; } | tee -a $R/summary.txt
tar -C $R -czf $OUT/res.tgz .
for nb in 03 04 02 01 00; do
  left=$(( 585 - ($(date +%s) - T0) ))
  [ $left -lt 60 ] && { echo "no time left for $nb ($left s)" | tee -a $R/summary.txt; continue; }
  s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run $nb --record > $R/run_$nb.log 2>&1 || echo "$nb rc $?"
  echo "$nb $(( $(date +%s) - s )) s (limit $left): $(tail -1 $R/run_$nb.log | cut -c1-160)" | tee -a $R/summary.txt
  mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markeru ] && cp -r $d $R/rec/; done
  tar -C $R -czf $OUT/res.tgz .
done
echo "elapsed $(( $(date +%s) - T0 )) s"
