# bash .dbg/s63/run_i.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s63: at the commit whose cold
# pads reset persisting L2 lines: the timing GPU tests, the reset's host cost, labkit decode bench --peers at the
# calls nearest cuDNN in cold and cold_clean, CUPTI kernel durations with the peers sharing one K/V copy and each on
# its own, then notebook 03 live with --record
T0=$(date +%s)
R=/tmp/resi; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resi -czf $OUT/res.tgz . ; cp /tmp/resi/summary.txt $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markeri; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 150 python3 -m pytest -q -p no:cacheprovider -rs -s tests/gpu/test_timing_gpu.py > $R/gpu_timing.log 2>&1; rc=$?
{ grep -E "MiB read" $R/gpu_timing.log; tail -1 $R/gpu_timing.log; } | tee -a $R/summary.txt
[ $rc -ne 0 ] && { echo "timing GPU tests failed (rc $rc): no bench" | tee -a $R/summary.txt; grep -E "^(FAILED|ERROR)|Error|assert" $R/gpu_timing.log | head -20; exit 1; }
python3 -c "
import time, cupy as cp
from labkit.timing.events import persisting_l2_reset
r = persisting_l2_reset(); s = cp.cuda.Stream(non_blocking=True)
t = time.perf_counter()
for _ in range(1000): s.synchronize(); r()
print(f'sync + cudaCtxResetPersistingL2Cache: {(time.perf_counter() - t) * 1e3:.2f} us of host time per pad')" 2>&1 | tee -a $R/summary.txt
pts="--point 16x4096 --point 32x2048 --point 17x4096 --point 64x1024 --point 1x8192 --point 8x8192 --point 64x8192"
for m in cold cold_clean; do
  left=$(( 420 - ($(date +%s) - T0) )); [ $left -lt 60 ] && { echo "no time left for $m" | tee -a $R/summary.txt; continue; }
  timeout $left python3 -m labkit decode bench --mode $m --peers $pts --iterations 20 --out $R/bench_$m.json > $R/bench_$m.log 2>&1 || echo "rc $? at $m" | tee -a $R/summary.txt
  { echo "== bench $m ($(( $(date +%s) - T0 )) s)"; grep -E "^ +(batch|[0-9]+) +|^paged decode" $R/bench_$m.log | cut -c1-240; } | tee -a $R/summary.txt
done
left=$(( 480 - ($(date +%s) - T0) ))
[ $left -gt 40 ] && { CTXS=bench4,bench4own,bench4,bench4own timeout $left python3 .dbg/s63/cupti_sync.py $R/own.json 16x4096 17x4096 64x1024 > $R/own.log 2>&1 || echo "rc $? at own" | tee -a $R/summary.txt; }
{ echo "== shared / own K/V copies ($(( $(date +%s) - T0 )) s)"; grep -E "labkit/cudnn|Error|error" $R/own.log; } | tee -a $R/summary.txt
left=$(( 580 - ($(date +%s) - T0) ))
s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run 03 --record > $R/run_03.log 2>&1 || echo "03 rc $?"
echo "03 $(( $(date +%s) - s )) s: $(tail -1 $R/run_03.log | cut -c1-160)" | tee -a $R/summary.txt
mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markeri ] && cp -r $d $R/rec/; done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
