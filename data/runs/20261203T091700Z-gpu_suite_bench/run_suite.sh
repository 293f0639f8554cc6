# bash .dbg/s50/run_suite.sh <full sha>; carry .whl_nb, .whl_peers, .whl_ncu, .dbg: the A/Bs of points2.txt, the whole
# GPU suite (the decode file beside sage2 + manifest, then ncu + timing + sched after them), then make bench's two tables
T0=$(date +%s)
R=/tmp/ress; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/ress -czf $OUT/res.tgz . ; cp /tmp/ress/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_peers/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
python3 .dbg/s50/prewarm.py .dbg/s50/points2.txt 14 > $R/prewarm.log 2>&1 || { echo prewarm failed; tail $R/prewarm.log; }
while read -r b n p rest; do
  [ -z "$b" ] && continue
  args=(); for s in $rest; do args+=(--build "$s"); done
  f=$R/cmp_${b}x${n}_p${p}
  timeout 60 python3 -m labkit decode compare --batch $b --kv-len $n --page-size $p "${args[@]}" --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $b x $n p$p"
  { echo "== $b x $n p$p ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$b +$n " $f.log | cut -c1-220; } | tee -a $R/summary.txt
done < .dbg/s50/points2.txt
s=$(date +%s)
timeout 330 python3 -m pytest -q -m gpu tests/gpu/test_decode_gpu.py -p no:cacheprovider -rs --durations=5 > $R/gpu_decode.log 2>&1 &
A=$!
timeout 330 python3 -m pytest -q -m gpu tests/gpu/test_sage2_gpu.py tests/gpu/test_manifest_gpu.py -p no:cacheprovider -rs --durations=5 > $R/gpu_sage2_manifest.log 2>&1 || echo "shard B rc $?"
wait $A || echo "shard A rc $?"
timeout 200 python3 -m pytest -q -m gpu tests/gpu/test_ncu_gpu.py tests/gpu/test_timing_gpu.py tests/gpu/test_sched_gpu.py -p no:cacheprovider -rs --durations=5 > $R/gpu_ncu_timing_sched.log 2>&1 || echo "shard C rc $?"
{ echo "== GPU suite ($(( $(date +%s) - s )) s)"; for f in $R/gpu_*.log; do echo "$(basename $f): $(tail -1 $f)"; grep -E "^(FAILED|ERROR)" $f | head -5; done; } | tee -a $R/summary.txt
left=$(( 575 - ($(date +%s) - T0) ))
if [ $left -gt 60 ]; then
  s=$(date +%s); timeout $left python3 -m labkit decode bench --peers --out $R/bench.json > $R/bench.log 2>&1 || echo "decode bench rc $?"
  { echo "== decode bench ($(( $(date +%s) - s )) s)"; tail -28 $R/bench.log | cut -c1-220; } | tee -a $R/summary.txt
fi
left=$(( 580 - ($(date +%s) - T0) ))
if [ $left -gt 40 ]; then
  s=$(date +%s); timeout $left python3 -m labkit bench --schedule sm90 > $R/sage2_bench.log 2>&1 || echo "sage2 bench rc $?"
  { echo "== sage2 bench ($(( $(date +%s) - s )) s)"; tail -20 $R/sage2_bench.log | cut -c1-200; } | tee -a $R/summary.txt
fi
echo "elapsed $(( $(date +%s) - T0 )) s"
