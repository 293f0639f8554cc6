# bash .dbg/s48/run_pr.sh <full sha>; carry .whl_min, .dbg
R=/tmp/respr; rm -rf $R; mkdir -p $R; trap 'cp /tmp/respr/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 400 python3 .dbg/s48/paged_read.py > $R/paged_read.log 2>&1 || echo "rc $?"
grep -E "point|Error|^r[0-9]|elapsed" $R/paged_read.log | cut -c1-160 | tail -100
