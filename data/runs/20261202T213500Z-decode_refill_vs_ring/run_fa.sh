# As run on the device from the repository root: bash .dbg/fa/run_fa.sh <full sha>: the
# first-stage-alone A/B (carry .whl_min, .dbg/fa)
R=/tmp/resfa; rm -rf $R; mkdir -p $R; trap 'cp /tmp/resfa/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
git diff HEAD > $R/fa.diff
timeout ${2:-330} python3 .dbg/fa/ab_first_alone.py > $R/ab_fa.log 2>&1 || echo "rc $?"
grep -E "FAILED|Error|correctness|^check |^r[0-9]|elapsed|^ab " $R/ab_fa.log | cut -c1-200 | tail -150
