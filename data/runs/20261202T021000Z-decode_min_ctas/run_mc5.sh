# As run on the device from the repository root (bash .dbg/run_mc5.sh <full sha>): the one-stage d128 build bounded to 5 CTAs per SM
# against the plan at 64 x 1k, 256 x 1k, 64 x 8k and 256 x 8k d128 (.dbg/pf/ab_mc5.py).
R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 300 python3 .dbg/pf/ab_mc5.py > $R/ab_min_ctas5.log 2>&1 || echo "ab rc $?"; echo "ab $(( $(date +%s) - s )) s"; cat $R/ab_min_ctas5.log
