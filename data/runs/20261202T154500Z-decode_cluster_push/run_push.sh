# bash .dbg/push/run_push.sh <full sha>: ab_push.py (the cluster reduction pushed by st.async against the pull)
export R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
cp .dbg/push/ab_push.py .dbg/push/run_push.sh $R/; git diff > $R/push.diff 2>/dev/null
timeout 420 python3 .dbg/push/ab_push.py > $R/ab_push.log 2>&1 || echo "ab rc $?"
cut -c1-150 $R/ab_push.log
