# As run on the device from the repository root (bash .dbg/run_all.sh <full sha>); .whl_min = the notebook wheels
# less jedi and debugpy, plus jupytext and its needs; .whl_peers = fa3-fwd and einops. Everything comes back in one
# tarball ($OUT returns at most 8 files).
T0=$(date +%s)
mkdir -p /tmp/res; trap 'tar -C /tmp/res -czf $OUT/res.tgz . ; cp /tmp/res/*.log $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
R=/tmp/res
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); mkdir -p $R/nb; LABKIT_OUT=$R/nb timeout 70 python3 -m labkit nb run 04 > $R/nb04.log 2>&1 || echo "nb04 rc $?"; echo "nb04 $(( $(date +%s) - s )) s"; tail -3 $R/nb04.log
s=$(date +%s); timeout 240 python3 -m labkit decode bench --peers --sweep-tails --out $R/bench.json > $R/bench.log 2>&1 || echo "bench rc $?"; echo "bench $(( $(date +%s) - s )) s"; grep -E "copy|TBps|^ +[0-9]|tail sweep|peer " $R/bench.log | head -80
left=$(( 575 - ($(date +%s) - T0) ))
s=$(date +%s); timeout $left python3 -m pytest -q -m gpu tests/gpu > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s (limit $left)"; tail -6 $R/gpu_tests.log
