# As run on the device from the repository root: bash .dbg/ppf/run_ppf.sh <full sha> (page_prefetch as in the working
# tree of that call, kept as ppf.diff); carry .whl_min, .dbg/ppf
R=/tmp/resppf; rm -rf $R; mkdir -p $R; trap 'cp /tmp/resppf/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 130 python3 .dbg/ppf/check_pp.py > $R/check_pp.log 2>&1 || echo "rc $?"
grep -E "FAILED|Error|correctness|^check [0-9]|^r[0-9]|elapsed|^ab |skip" $R/check_pp.log | cut -c1-200 | tail -60
