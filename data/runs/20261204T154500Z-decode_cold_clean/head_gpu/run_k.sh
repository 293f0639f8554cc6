# bash .dbg/s62/run_k.sh <full sha, given literally>; carry .whl_nbl, .dbg/s62: the sched and sage2 GPU files at HEAD
# (their timing runs through Pipeline and time_gpu, whose pad changed), within what is left of the device time
T0=$(date +%s)
R=/tmp/resk; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resk -czf $OUT/res.tgz . ; cp /tmp/resk/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $R/smi.csv; cat $R/smi.csv
for f in sched sage2; do
  left=$(( 270 - ($(date +%s) - T0) )); [ $left -lt 30 ] && { echo "no time left for $f" | tee -a $R/summary.txt; continue; }
  timeout $left python3 -m pytest -q -p no:cacheprovider tests/gpu/test_${f}_gpu.py > $R/gpu_$f.log 2>&1 || echo "rc $? at $f" | tee -a $R/summary.txt
  echo "== $f: $(tail -1 $R/gpu_$f.log | cut -c1-200)" | tee -a $R/summary.txt
done
grep -E "^(FAILED|ERROR)" $R/*.log | head | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
