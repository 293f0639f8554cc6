# As run on the device from the repository root (bash .dbg/run_b.sh <full sha>): the decode GPU tests, the A/B of the
# batch-8 d128 plan, then labkit decode bench --peers. One tarball comes back.
R=/tmp/res; mkdir -p $R; trap 'tar -C /tmp/res -czf $OUT/res.tgz . ; cp /tmp/res/*.log $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 160 python3 -m pytest -q -m gpu tests/gpu/test_decode_gpu.py > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -4 $R/gpu_tests.log
s=$(date +%s); timeout 60 python3 .dbg/pf/ab_b8.py > $R/ab.log 2>&1 || echo "ab rc $?"; echo "ab $(( $(date +%s) - s )) s"; grep AB $R/ab.log
s=$(date +%s); timeout 290 python3 -m labkit decode bench --peers --out $R/bench.json > $R/bench.log 2>&1 || echo "bench rc $?"; echo "bench $(( $(date +%s) - s )) s"; tail -28 $R/bench.log | cut -c1-200
