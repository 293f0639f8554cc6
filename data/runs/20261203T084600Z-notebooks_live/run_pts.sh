# bash .dbg/s49/run_pts.sh <full sha>; carry .whl_min, .whl_peers, .whl_ncu, .dbg: the decode GPU tests at pages of 16
# and 32, the notebooks (NBS) through run_nb.sh, then bench --point with the peers at pages of 16 and 32
T0=$(date +%s)
R=/tmp/respt; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/respt -czf $OUT/pts.tgz . ; cp /tmp/respt/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site ${WHL:-.whl_min}/*.whl .whl_peers/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_decode_gpu.py -k "p16 or p32" > $R/gpu_tests.log 2>&1 || echo "tests rc $?"
{ echo "== tests ($(( $(date +%s) - T0 )) s)"; tail -3 $R/gpu_tests.log; } | tee -a $R/summary.txt
[ -n "$NBS" ] && T0=$T0 bash .dbg/s49/run_nb.sh $1 | tee -a $R/summary.txt
for ps in ${BENCH_PAGES-16 32}; do
  left=$(( 585 - ($(date +%s) - T0) )); [ $left -lt 30 ] && { echo "no time left for bench p$ps" | tee -a $R/summary.txt; break; }
  pts="--point 1x8192 --point 16x4096"; [ $ps = 16 ] && pts="$pts --point 8x8192 --point 256x1024"
  timeout $left python3 -m labkit decode bench $pts --page-size $ps --peers --iterations 20 --out $R/bench_p$ps.json > $R/bench_p$ps.log 2>&1 || echo "bench p$ps rc $?"
  { echo "== bench p$ps ($(( $(date +%s) - T0 )) s)"; grep -E "page $ps" $R/bench_p$ps.log | cut -c1-230; } | tee -a $R/summary.txt
done
