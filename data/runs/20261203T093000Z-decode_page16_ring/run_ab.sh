# bash .dbg/s50/run_ab.sh <full sha>; carry .whl_min, .dbg
R=/tmp/res50; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/res50 -czf $OUT/res.tgz . ; cp /tmp/res50/smi.csv /tmp/res50/summary.txt $OUT/ 2>/dev/null; true' EXIT
T0=$(date +%s); pwd
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
python3 .dbg/s50/prewarm.py .dbg/s50/points.txt 14 > $R/prewarm.log 2>&1 || { echo prewarm failed; tail $R/prewarm.log; }
echo "prewarm done $(( $(date +%s) - T0 )) s"
while read -r b n p rest; do
  [ -z "$b" ] && continue
  left=$(( ${BUDGET:-480} - ($(date +%s) - T0) )); [ $left -lt 20 ] && { echo "no time left for $b x $n p$p"; break; }
  args=(); for s in $rest; do args+=(--build "$s"); done
  f=$R/cmp_${b}x${n}_p${p}
  timeout $left python3 -m labkit decode compare --batch $b --kv-len $n --page-size $p "${args[@]}" --iterations ${ITERS:-20} --out $f.json > $f.log 2>&1 || echo "rc $? at $b x $n p$p"
  { echo "== $b x $n p$p ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$b +$n " $f.log | cut -c1-220; } | tee -a $R/summary.txt
done < .dbg/s50/${POINTS:-points.txt}
if [ -n "$TESTS" ]; then
  timeout 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_decode_gpu.py -k "$TESTS" > $R/gpu_tests.log 2>&1 || echo "tests rc $?"
  tail -4 $R/gpu_tests.log | tee -a $R/summary.txt
fi
echo "elapsed $(( $(date +%s) - T0 )) s"
