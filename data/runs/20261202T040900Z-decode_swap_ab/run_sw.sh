# As run on the device from the repository root (bash .dbg/run_sw.sh <full sha>): the swapped-operand GPU tests, then
# the plan against the plan with swapped operands at 15 bench points (.dbg/sw/ab_swap.py).
R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 240 python3 -m pytest -q -x -p no:cacheprovider tests/gpu/test_decode_gpu.py -k "swap" > $R/gpu_tests_swap.log 2>&1; echo "tests rc $? $(( $(date +%s) - s )) s"; tail -5 $R/gpu_tests_swap.log
s=$(date +%s); timeout 300 python3 .dbg/sw/ab_swap.py > $R/ab_swap.log 2>&1 || echo "ab rc $?"; echo "ab $(( $(date +%s) - s )) s"; grep -v "^check.*ok$" $R/ab_swap.log
