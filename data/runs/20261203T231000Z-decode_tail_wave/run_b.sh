# bash .dbg/s58/run_b.sh <full sha, given literally>; carry .whl_nb, .whl_peers, .dbg/s58/run_b.sh: at the commit of
# the tail-wave rule (a one-split call's units past its last whole wave in as many splits as a wave's slots take):
# (1) its GPU tests and the tail knob's; (2) the plan against the build it replaced, one round; (3) for the next
# change, none made here: the same tails at 1k tokens, which keep the old plan; (4) the rule's calls beside the peers;
# (5) notebooks 03 04 02 01 00 live with --record
T0=$(date +%s)
R=/tmp/resb; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resb -czf $OUT/res.tgz . ; cp /tmp/resb/summary.txt $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markerb; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 150 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_decode_gpu.py -k "past_its_last_whole_wave or tail_splits_match or manifest_runner" > $R/gpu_rule.log 2>&1 || echo "tests rc $?"
{ echo "== rule GPU tests ($(( $(date +%s) - s )) s)"; tail -1 $R/gpu_rule.log; grep -E "^(FAILED|ERROR)" $R/gpu_rule.log | head; } | tee -a $R/summary.txt
mkdir -p $R/confirm
for p in "76 8192 64" "80 8192 64" "110 8192 64" "72 8192 64" "76 2048 64" "80 16384 64" "110 16384 64" "104 4096 64" "200 8192 64" "210 4096 64" "76 8192 32" "80 2048 32"; do
  set -- $p; f=$R/confirm/cmp_${1}x${2}_p$3
  timeout 60 python3 -m labkit decode compare --batch $1 --kv-len $2 --page-size $3 --build stages=3,splits=1 --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== confirm $p ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
done
mkdir -p $R/next
for p in "76 1024 80 3" "80 1024 112 2" "110 1024 88 3"; do
  set -- $p; f=$R/next/cmp_${1}x${2}
  timeout 40 python3 -m labkit decode compare --batch $1 --kv-len $2 --build stages=3,splits=1,tail_units=$3,tail_splits=$4 --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== next $p ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
done
tar -C $R -czf $OUT/res.tgz .
pts=""; for p in 72x8192 76x2048 76x8192 76x16384 80x8192 80x16384 110x2048 110x8192 200x8192; do pts="$pts --point $p"; done
s=$(date +%s); timeout 150 python3 -m labkit decode bench --peers $pts --iterations 20 --out $R/rule_peers.json > $R/rule_peers.log 2>&1 || echo "bench rc $?"
{ echo "== the rule's calls beside the peers ($(( $(date +%s) - s )) s)"; grep -E "^ +[0-9]+ +[0-9]+ " $R/rule_peers.log | cut -c1-220; } | tee -a $R/summary.txt
tar -C $R -czf $OUT/res.tgz .
for nb in 03 04 02 01 00; do
  left=$(( 585 - ($(date +%s) - T0) ))
  [ $left -lt 60 ] && { echo "no time left for $nb ($left s)" | tee -a $R/summary.txt; continue; }
  s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run $nb --record > $R/run_$nb.log 2>&1 || echo "$nb rc $?"
  echo "$nb $(( $(date +%s) - s )) s (limit $left): $(tail -1 $R/run_$nb.log | cut -c1-160)" | tee -a $R/summary.txt
  mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markerb ] && cp -r $d $R/rec/; done
  tar -C $R -czf $OUT/res.tgz .
done
echo "elapsed $(( $(date +%s) - T0 )) s"
