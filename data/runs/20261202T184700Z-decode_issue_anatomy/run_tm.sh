# As run on the device from the repository root: bash .dbg/tm/run_tm.sh <full sha>
R=/tmp/restm; rm -rf $R; mkdir -p $R; trap 'cp /tmp/restm/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
git diff HEAD > $R/tmap.diff
timeout ${2:-480} python3 .dbg/tm/ab_tmap.py > $R/ab_tmap.log 2>&1 || echo "rc $?"
grep -E "FAILED|Error|check|^r[0-9]|stamps|elapsed" $R/ab_tmap.log | cut -c1-220 | tail -120
