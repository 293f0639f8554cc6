# bash .dbg/s61/run_b1.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s61: at the commit that widens
# TAIL_PAST_WAVE_SHARE (7/16 of the SMs from 8k tokens, 3/16 from 4k): (1) its GPU tests, the one-wave rule's and the
# tail knob's; (2) the plan against the one-wave rule's build it replaced, one round; (3) the new calls beside the peers
T0=$(date +%s)
R=/tmp/resb1; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resb1 -czf $OUT/res.tgz . ; cp /tmp/resb1/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 200 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_decode_gpu.py -k "past_its_last_whole_wave or one_wave_of_a_one_stage or tail_splits_match or manifest_runner" > $R/gpu_rule.log 2>&1 || echo "tests rc $?"
{ echo "== rule GPU tests ($(( $(date +%s) - s )) s)"; tail -1 $R/gpu_rule.log; grep -E "^(FAILED|ERROR)" $R/gpu_rule.log | head; } | tee -a $R/summary.txt
mkdir -p $R/confirm
for p in "40 8192 64 8" "40 16384 64 8" "40 32768 64 8" "34 4096 64 8" "35 4096 64 8" "36 4096 64 8" "80 8192 64 4" "40 8192 32 8" "40 8192 64 8 _r2" "34 4096 64 8 _r2" "36 4096 64 8 _r2"; do
  set -- $p; f=$R/confirm/cmp_${1}x${2}_p${3}_kv$4$5
  timeout 60 python3 -m labkit decode compare --batch $1 --kv-len $2 --page-size $3 --heads-q $(( 4 * $4 )) --heads-kv $4 --build stages=1,qk_chains=2,splits=1 --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== confirm $p ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
done
tar -C $R -czf $OUT/res.tgz .
pts=""; for p in 40x8192 40x16384 40x32768 34x4096 35x4096 36x4096; do pts="$pts --point $p"; done
s=$(date +%s); timeout 200 python3 -m labkit decode bench --peers $pts --iterations 20 --out $R/rule_peers.json > $R/rule_peers.log 2>&1 || echo "bench rc $?"
{ echo "== the new calls beside the peers ($(( $(date +%s) - s )) s)"; grep -E "^ +[0-9]+ +[0-9]+ " $R/rule_peers.log | cut -c1-220; } | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
