# bash .dbg/s55/run_i.sh <full sha>; carry .whl_nb, .whl_peers, .dbg (and .whl_ncu for notebook 05, where it fits): at the commit of the 16-56 unit
# clusters: (1) their GPU tests and the cluster reduction's; (2) the rule's plan against the build it replaced at calls
# the A/Bs did not time, one round; (3) the batch 2-7 calls beside the peers; (4) notebooks 03 04 02 01 00 05 live
# with --record, each as time allows
T0=$(date +%s)
R=/tmp/resi; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resi -czf $OUT/res.tgz . ; cp /tmp/resi/summary.txt $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markeri; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_peers/*.whl $(ls .whl_ncu/*.whl 2>/dev/null) 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 150 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_decode_gpu.py -k "clusters_of_4_or_2 or cluster_split_reduction or 72_units or one_8_warp_cta_per_sm" > $R/gpu_rule.log 2>&1 || echo "tests rc $?"
{ echo "== rule GPU tests ($(( $(date +%s) - s )) s)"; tail -1 $R/gpu_rule.log; grep -E "^(FAILED|ERROR)" $R/gpu_rule.log | head; } | tee -a $R/summary.txt
mkdir -p $R/confirm
for p in "2 2048 splits=16" "3 1024 splits=11" "5 2048 splits=6" "6 1024 splits=5" "7 2048 splits=4" "4 1024 splits=8"; do
  set -- $p; f=$R/confirm/cmp_${1}x${2}
  timeout 60 python3 -m labkit decode compare --batch $1 --kv-len $2 --build $3 --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== confirm $p ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
done
pts=""; for b in 2 3 4 5 6 7; do for kv in 1024 2048 4096; do pts="$pts --point ${b}x$kv"; done; done
s=$(date +%s); timeout 120 python3 -m labkit decode bench --peers $pts --iterations 20 --out $R/mid_peers.json > $R/mid_peers.log 2>&1 || echo "bench rc $?"
{ echo "== batch 2-7 beside the peers ($(( $(date +%s) - s )) s)"; grep -E "^ +[0-9]+ +[0-9]+ " $R/mid_peers.log | cut -c1-220; } | tee -a $R/summary.txt
tar -C $R -czf $OUT/res.tgz .
for nb in 03 04 02 01 00 05; do
  left=$(( 585 - ($(date +%s) - T0) ))
  need=60; [ $nb = 05 ] && need=150
  [ $nb = 05 ] && [ ! -d .whl_ncu ] && { echo "05 needs .whl_ncu: not carried" | tee -a $R/summary.txt; continue; }
  [ $left -lt $need ] && { echo "no time left for $nb ($left s)" | tee -a $R/summary.txt; continue; }
  s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run $nb --record > $R/run_$nb.log 2>&1 || echo "$nb rc $?"
  echo "$nb $(( $(date +%s) - s )) s (limit $left): $(tail -1 $R/run_$nb.log | cut -c1-160)" | tee -a $R/summary.txt
  mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markeri ] && cp -r $d $R/rec/; done
  tar -C $R -czf $OUT/res.tgz .
done
echo "elapsed $(( $(date +%s) - T0 )) s"
