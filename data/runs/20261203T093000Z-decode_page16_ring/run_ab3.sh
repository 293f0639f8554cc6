# bash .dbg/s50/run_ab3.sh <full sha>; carry .whl_nb, .dbg: the A/Bs of points3.txt (the plan against stages=3, the
# plan before 5a52289 at pages of 16)
T0=$(date +%s)
R=/tmp/resa; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resa -czf $OUT/res.tgz . ; cp /tmp/resa/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
python3 .dbg/s50/prewarm.py .dbg/s50/points3.txt 14 > $R/prewarm.log 2>&1 || { echo prewarm failed; tail $R/prewarm.log; }
while read -r b n p rest; do
  [ -z "$b" ] && continue
  args=(); for s in $rest; do args+=(--build "$s"); done
  f=$R/cmp_${b}x${n}_p${p}
  timeout 60 python3 -m labkit decode compare --batch $b --kv-len $n --page-size $p "${args[@]}" --iterations 20 --out $f.json > $f.log 2>&1 || echo "rc $? at $b x $n p$p"
  { echo "== $b x $n p$p ($(( $(date +%s) - T0 )) s)"; grep -E "^ +$b +$n " $f.log | cut -c1-220; } | tee -a $R/summary.txt
done < .dbg/s50/points3.txt
echo "elapsed $(( $(date +%s) - T0 )) s"
