# As run on the device (bash .dbg/run_sw2.sh <full sha>): SASS of the 1 x 8k d128 plan and its swapped build, and
# both timed warm in L2 (graph replays) and cold (.dbg/sw/ab_warm.py).
R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv

timeout 200 python3 .dbg/sw/ab_warm2.py > $R/ab_warm2.log 2>&1 || echo "rc $?"; cat $R/ab_warm2.log; head -c 300 $R/sass_b1_8k_plan.txt
