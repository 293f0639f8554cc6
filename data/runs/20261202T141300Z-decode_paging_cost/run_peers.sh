# As run on the device from the repository root (bash .dbg/paging/run_peers.sh <full sha>): the stream-order
# reproduction (repro_order.py: cupy, cupy_nowrap, cupy_stream), the peers' GPU test, then `labkit decode bench --peers`
# (every peer's output now checked against labkit's at every point before it is timed).
T0=$(date +%s)
export R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
for v in cupy cupy_nowrap cupy_stream; do timeout 60 python3 .dbg/paging/repro_order.py $v >> $R/repro_order.log 2>&1 || echo "$v rc $?"; done
grep -v "^torch" $R/repro_order.log | cut -c1-120
s=$(date +%s); timeout 120 python3 -m pytest -q -m gpu tests/gpu/test_decode_gpu.py -k peers -p no:cacheprovider -rs > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -3 $R/gpu_tests.log
left=$(( 585 - ($(date +%s) - T0) ))
s=$(date +%s); timeout $left python3 -m labkit decode bench --peers --out $R/bench.json > $R/bench.log 2>&1 || echo "bench rc $?"; echo "bench $(( $(date +%s) - s )) s (limit $left)"; grep -E "^peer|Error|wrong" $R/bench.log | cut -c1-200; tail -25 $R/bench.log | cut -c1-200
