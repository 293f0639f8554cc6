# bash .dbg/s63/run_a.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s63: which cold L2 issue #10's
# peer numbers assume. triton.testing.do_bench (its flush is a 256 MB memset) at the peer points, for cuDNN,
# flash, FA3 and labkit; then labkit decode bench --peers in cold and cold_clean at three of them, on the same H200
T0=$(date +%s)
R=/tmp/resa; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resa -czf $OUT/res.tgz . ; cp /tmp/resa/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
python3 -c "import torch, triton, cupy; print('torch', torch.__version__, 'triton', triton.__version__, 'cupy', cupy.__version__)" | tee $R/versions.txt
timeout 300 python3 .dbg/s63/dobench.py $R/dobench.json > $R/dobench.log 2>&1 || echo "rc $? dobench" | tee -a $R/summary.txt
{ echo "== do_bench ($(( $(date +%s) - T0 )) s)"; grep -E " us |skipped|absent|triton" $R/dobench.log; } | tee -a $R/summary.txt
pts=""
for m in ; do
  left=$(( 560 - ($(date +%s) - T0) )); [ $left -lt 60 ] && { echo "no time left for $m" | tee -a $R/summary.txt; continue; }
  timeout $left python3 -m labkit decode bench --mode $m --peers $pts --iterations 20 --out $R/bench_$m.json > $R/bench_$m.log 2>&1 || echo "rc $? at $m" | tee -a $R/summary.txt
  { echo "== bench $m ($(( $(date +%s) - T0 )) s)"; grep -E "^ +(batch|[0-9]+) +|^paged decode" $R/bench_$m.log | cut -c1-240; } | tee -a $R/summary.txt
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
