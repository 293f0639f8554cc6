# As run on the device from the repository root: bash .dbg/sp2/run_sp.sh <full sha>: the
# 16-split A/B (carry .whl_min, .dbg/sp2)
R=/tmp/ressp; rm -rf $R; mkdir -p $R; trap 'cp /tmp/ressp/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
git diff HEAD > $R/sp.diff
timeout ${2:-330} python3 .dbg/sp2/ab_split16.py > $R/ab_split16.log 2>&1 || echo "rc $?"
grep -E "FAILED|Error|correctness|^check |^r[0-9]|elapsed|^ab " $R/ab_split16.log | cut -c1-200 | tail -150
