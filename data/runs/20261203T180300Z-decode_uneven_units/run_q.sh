# bash data/runs/20261203T180300Z-decode_uneven_units/run_q.sh <full sha, given literally>; carry .whl_nb, .whl_ncu, .dbg/s56/run_q.sh: (1) the GPU tests
# outside the decode file (manifest, ncu, sage2, sched, timing) at the commit of the 133-237 unit rule; (2) for the next
# plan change, none made here: 17-20 x N (136-160 units, a few more than the SMs) as one CTA per unit on every SM and
# the last units - 132 units split across the SMs' second slots (tail_units, tail_splits), against the rule's plan;
# two rounds, cold p50 of 20
T0=$(date +%s)
R=/tmp/resq; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resq -czf $OUT/res.tgz . ; cp /tmp/resq/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 200 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_manifest_gpu.py tests/gpu/test_ncu_gpu.py tests/gpu/test_sage2_gpu.py tests/gpu/test_sched_gpu.py tests/gpu/test_timing_gpu.py > $R/gpu_rest.log 2>&1 || echo "tests rc $?"
{ echo "== GPU tests outside decode ($(( $(date +%s) - s )) s)"; tail -1 $R/gpu_rest.log; grep -E "^(FAILED|ERROR)" $R/gpu_rest.log | head; } | tee -a $R/summary.txt
tar -C $R -czf $OUT/res.tgz .
for round in 1 2; do
for p in "17 2048 4 16" "17 8192 4 16" "17 32768 4 16" "18 2048 12 11" "18 8192 12 11" "19 8192 20 6" "20 8192 28 4"; do
  set -- $p; f=$R/cmp_${1}x${2}_r$round
  b="--build tail_units=$3,tail_splits=$4,splits=1 --build tail_units=$3,tail_splits=$4,splits=1,stages=1,qk_chains=1"
  timeout 60 python3 -m labkit decode compare --batch $1 --kv-len $2 $b --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $p"
  { echo "== r$round $1 x $2 ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$1 +$2 " $f.log | cut -c1-200; } | tee -a $R/summary.txt
  [ $(( $(date +%s) - T0 )) -gt 280 ] && break 2
done; done
echo "elapsed $(( $(date +%s) - T0 )) s"
