# bash data/runs/20261203T180300Z-decode_uneven_units/run_o.sh <full sha, given literally>; carry .whl_nb, .whl_peers, .dbg/s56/run_o.sh: at the commit of the
# 133-237 unit rule and the 67-118 unit rule at pages of 32: (1) their GPU tests and the rules' neighbours'; (2) the
# plan against the builds it replaced, one round; (3) the rule's calls beside the peers; (4) notebooks 03 04 02 01 00
# live with --record
T0=$(date +%s)
R=/tmp/reso; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/reso -czf $OUT/res.tgz . ; cp /tmp/reso/summary.txt $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markero; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 120 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_decode_gpu.py -k "133_to_237 or 72_units or clusters_of_4_or_2 or one_8_warp_cta_per_sm or cluster_split_reduction" > $R/gpu_rule.log 2>&1 || echo "tests rc $?"
{ echo "== rule GPU tests ($(( $(date +%s) - s )) s)"; tail -1 $R/gpu_rule.log; grep -E "^(FAILED|ERROR)" $R/gpu_rule.log | head; } | tee -a $R/summary.txt
mkdir -p $R/confirm
for p in "24 8192 64 stages=3,splits=1" "20 32768 64 stages=3,splits=1" "17 4096 64 stages=3,splits=1" "28 16384 64 stages=3,splits=1" "12 4096 32 stages=3,splits=2" "14 8192 32 stages=3,splits=2"; do
  set -- $p; f=$R/confirm/cmp_${1}x${2}_p$3
  timeout 60 python3 -m labkit decode compare --batch $1 --kv-len $2 --page-size $3 --build $4 --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== confirm $p ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
done
pts=""; for p in 17x2048 17x8192 20x2048 20x8192 20x32768 24x2048 24x4096 24x8192 24x16384 24x32768 28x8192 28x32768; do pts="$pts --point $p"; done
s=$(date +%s); timeout 120 python3 -m labkit decode bench --peers $pts --iterations 20 --out $R/rule_peers.json > $R/rule_peers.log 2>&1 || echo "bench rc $?"
{ echo "== the rule's calls beside the peers ($(( $(date +%s) - s )) s)"; grep -E "^ +[0-9]+ +[0-9]+ " $R/rule_peers.log | cut -c1-220; } | tee -a $R/summary.txt
tar -C $R -czf $OUT/res.tgz .
for nb in 03 04 02 01 00; do
  left=$(( 585 - ($(date +%s) - T0) ))
  [ $left -lt 60 ] && { echo "no time left for $nb ($left s)" | tee -a $R/summary.txt; continue; }
  s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run $nb --record > $R/run_$nb.log 2>&1 || echo "$nb rc $?"
  echo "$nb $(( $(date +%s) - s )) s (limit $left): $(tail -1 $R/run_$nb.log | cut -c1-160)" | tee -a $R/summary.txt
  mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markero ] && cp -r $d $R/rec/; done
  tar -C $R -czf $OUT/res.tgz .
done
echo "elapsed $(( $(date +%s) - T0 )) s"
