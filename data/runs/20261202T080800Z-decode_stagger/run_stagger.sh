# As run on the device from the repository root (bash .dbg/stg/run_stagger.sh <full sha>): the staggered ring fill A/B.
R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 500 python3 .dbg/stg/ab_stagger.py cold > $R/ab_stagger.log 2>&1 || echo "rc $?"
grep -E "^AB r0|elapsed|Error|check .*False" $R/ab_stagger.log | cut -c1-150 | tail -60
