# bash .dbg/s53/run_d.sh <full sha> [fallback]; carry .whl_nb, .whl_ncu, .dbg: notebook 05 live with
# --record (fallback: plan.py of 3c86146, as run_c.sh recorded), then the rule's calls beside the peers
T0=$(date +%s)
R=/tmp/resd; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resd -czf $OUT/res.tgz . ; cp /tmp/resd/summary.txt $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markerd; sleep 1
[ "$2" = fallback ] && cp .dbg/s53/plan_3c86146.py labkit/workloads/decode/plan.py
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); LABKIT_OUT=$R/nb timeout 400 python3 -m labkit nb run 05 --record > $R/run_05.log 2>&1 || echo "05 rc $?"
echo "05 $(( $(date +%s) - s )) s: $(tail -1 $R/run_05.log | cut -c1-160)" | tee -a $R/summary.txt
mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markerd ] && cp -r $d $R/rec/; done
tar -C $R -czf $OUT/res.tgz .
left=$(( 585 - ($(date +%s) - T0) ))
if [ $left -gt 30 ]; then
  s=$(date +%s); timeout $left python3 -m labkit decode bench --peers --point 4x16384 --point 2x16384 --point 3x8192 --point 6x16384 --point 4x32768 --iterations 20 --out $R/bench_points.json > $R/bench_points.log 2>&1 || echo "bench rc $?"
  { echo "== bench points ($(( $(date +%s) - s )) s)"; tail -16 $R/bench_points.log | cut -c1-220; } | tee -a $R/summary.txt
fi
echo "elapsed $(( $(date +%s) - T0 )) s"
