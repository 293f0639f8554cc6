# bash .dbg/s63/run_n.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s63: after the review fixes to
# labkit/timing/persisting.py (cuda.check, the unsupported limit read as 0): the timing GPU file, then one bench call
# beside the peers
T0=$(date +%s)
R=/tmp/resn; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resn -czf $OUT/res.tgz . ; cp /tmp/resn/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 100 python3 -m pytest -q -p no:cacheprovider -rs -s tests/gpu/test_timing_gpu.py > $R/gpu_timing.log 2>&1
{ grep -E "MiB read" $R/gpu_timing.log; tail -1 $R/gpu_timing.log; grep -E "^(FAILED|ERROR)" $R/gpu_timing.log; } | tee -a $R/summary.txt
timeout 60 python3 -m labkit decode bench --peers --point 16x4096 --iterations 20 --out $R/bench.json > $R/bench.log 2>&1 || echo "rc $? bench" | tee -a $R/summary.txt
grep -E "^ +(batch|[0-9]+) +" $R/bench.log | cut -c1-240 | tee -a $R/summary.txt
python3 -m labkit report show $R/bench.json > $R/show.txt 2>&1; { echo "report show, its persisting-L2 line if any (a checkout without git history cannot place the commit):"; grep "FA3 left" $R/show.txt; } | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
