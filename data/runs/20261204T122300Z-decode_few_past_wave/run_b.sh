# bash .dbg/s60/run_b.sh <full sha, given literally>; carry .whl_nbl (the notebook wheels without jedi, parso and
# debugpy, which IPython and ipykernel import only if present), .whl_peers, .dbg/s60: at the commit of the few-units-
# past-a-pipelined-wave rule (TAIL_PAST_WAVE_SHARE): (1) its GPU tests, the one-wave rule's and the tail knob's; (2)
# the plan against the one-wave rule's build it replaced, one round; (3) the rule's calls beside the peers;
# (4) notebooks 03 04 02 01 00 live with --record (05 in run_c.sh)
T0=$(date +%s)
R=/tmp/resb; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resb -czf $OUT/res.tgz . ; cp /tmp/resb/summary.txt $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markerb; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 170 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_decode_gpu.py -k "past_its_last_whole_wave or one_wave_of_a_one_stage or tail_splits_match or manifest_runner" > $R/gpu_rule.log 2>&1 || echo "tests rc $?"
{ echo "== rule GPU tests ($(( $(date +%s) - s )) s)"; tail -1 $R/gpu_rule.log; grep -E "^(FAILED|ERROR)" $R/gpu_rule.log | head; } | tee -a $R/summary.txt
mkdir -p $R/confirm
for p in "34 8192 64 8" "34 16384 64 8" "34 32768 64 8" "35 8192 64 8" "36 8192 64 8" "37 8192 64 8" "38 8192 64 8" "39 8192 64 8" "68 8192 64 4" "34 8192 32 8"; do
  set -- $p; f=$R/confirm/cmp_${1}x${2}_p${3}_kv$4
  timeout 60 python3 -m labkit decode compare --batch $1 --kv-len $2 --page-size $3 --heads-q $(( 4 * $4 )) --heads-kv $4 --build stages=1,qk_chains=2,splits=1 --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== confirm $p ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
done
tar -C $R -czf $OUT/res.tgz .
pts=""; for p in 34x8192 36x8192 38x8192 39x8192 34x16384 34x32768; do pts="$pts --point $p"; done
s=$(date +%s); timeout 120 python3 -m labkit decode bench --peers $pts --iterations 20 --out $R/rule_peers.json > $R/rule_peers.log 2>&1 || echo "bench rc $?"
{ echo "== the rule's calls beside the peers ($(( $(date +%s) - s )) s)"; grep -E "^ +[0-9]+ +[0-9]+ " $R/rule_peers.log | cut -c1-220; } | tee -a $R/summary.txt
tar -C $R -czf $OUT/res.tgz .
for nb in 03 04 02 01 00; do
  left=$(( 590 - ($(date +%s) - T0) ))
  [ $left -lt 60 ] && { echo "no time left for $nb ($left s)" | tee -a $R/summary.txt; continue; }
  s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run $nb --record > $R/run_$nb.log 2>&1 || echo "$nb rc $?"
  echo "$nb $(( $(date +%s) - s )) s (limit $left): $(tail -1 $R/run_$nb.log | cut -c1-160)" | tee -a $R/summary.txt
  mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markerb ] && cp -r $d $R/rec/; done
  tar -C $R -czf $OUT/res.tgz .
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
