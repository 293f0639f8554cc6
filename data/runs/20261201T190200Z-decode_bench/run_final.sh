# As run on the device from the repository root (bash run_final.sh <sha>); .whl_min = the notebook wheels less jedi
# and debugpy, .whl_peers = fa3-fwd and einops; .dbg/dec/split_d256.py = ../20261201T180600Z-decode_bench/split_d256.py.
set -e
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $OUT/smi.csv
s=$(date +%s); timeout 150 python3 -m labkit decode bench --peers --out $OUT/bench.json > $OUT/bench.log 2>&1 || echo "bench rc $?"; echo "bench $(( $(date +%s) - s )) s"; tail -32 $OUT/bench.log
s=$(date +%s); timeout 290 python3 -m pytest -q -m gpu tests/gpu > $OUT/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -4 $OUT/gpu_tests.log
s=$(date +%s); timeout 80 python3 .dbg/dec/split_d256.py > $OUT/split_d256.log 2>&1 || echo "split rc $?"; echo "split $(( $(date +%s) - s )) s"; cat $OUT/split_d256.log
