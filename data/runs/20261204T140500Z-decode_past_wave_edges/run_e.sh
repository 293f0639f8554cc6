# bash .dbg/s61/run_e.sh <full sha, given literally>; carry .whl_nb, .whl_ncu, .dbg/s61: at the commit that widens
# TAIL_PAST_WAVE_SHARE: (1) every GPU test file outside decode (manifest, ncu, sage2, sched, timing); (2) a probe for a
# later change, none made: 18-22 x 8k-32k with the units past one CTA per SM in tail splits (TAIL_PAST_SMS_SHARE's
# wider reach), and 72 / 80 x 8k (4.36-4.39 TB/s) in the one-stage build at 3 or 4 per SM with its own tail; each
# against the plan, cold p50 of 20, one round
T0=$(date +%s)
R=/tmp/rese; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/rese -czf $OUT/res.tgz . ; cp /tmp/rese/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 300 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_manifest_gpu.py tests/gpu/test_ncu_gpu.py tests/gpu/test_sage2_gpu.py tests/gpu/test_sched_gpu.py tests/gpu/test_timing_gpu.py > $R/gpu_rest.log 2>&1 || echo "rest rc $?"
{ echo "== GPU files outside decode ($(( $(date +%s) - s )) s)"; tail -1 $R/gpu_rest.log; grep -E "^(FAILED|ERROR)" $R/gpu_rest.log | head; } | tee -a $R/summary.txt
tar -C $R -czf $OUT/res.tgz .
mkdir -p $R/probe
for p in "18 8192 stages=3,splits=1,tail_units=12,tail_splits=11" "18 32768 stages=3,splits=1,tail_units=12,tail_splits=11" \
         "19 16384 stages=3,splits=1,tail_units=20,tail_splits=6" "20 8192 stages=3,splits=1,tail_units=28,tail_splits=4" \
         "20 32768 stages=3,splits=1,tail_units=28,tail_splits=4" "22 8192 stages=3,splits=1,tail_units=44,tail_splits=3" \
         "22 32768 stages=3,splits=1,tail_units=44,tail_splits=3" \
         "72 8192 stages=1,qk_chains=2,splits=1,tail_units=180,tail_splits=2" "72 8192 stages=1,qk_chains=1,splits=1,tail_units=48,tail_splits=11" \
         "80 8192 stages=1,qk_chains=1,splits=1,tail_units=112,tail_splits=4" \
         "18 8192 stages=3,splits=1,tail_units=12,tail_splits=11 _r2" "20 32768 stages=3,splits=1,tail_units=28,tail_splits=4 _r2"; do
  set -- $p; f=$R/probe/cmp_${1}x${2}$4
  left=$(( 560 - ($(date +%s) - T0) )); [ $left -lt 40 ] && { echo "no time left for $p" | tee -a $R/summary.txt; continue; }
  timeout 60 python3 -m labkit decode compare --batch $1 --kv-len $2 --build $3 --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== probe $p ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
