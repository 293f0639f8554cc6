# As run on the device from the repository root: bash .dbg/pp4/run_pp4.sh <full sha> (the committed kernel; the
# script sets page_prefetch and min_ctas on the plan's build); carry .whl_min, .dbg
R=/tmp/respp4; rm -rf $R; mkdir -p $R; trap 'cp /tmp/respp4/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 400 python3 .dbg/pp4/ab_pp_min_ctas.py > $R/ab_pp4.log 2>&1 || echo "rc $?"
grep -E "FAILED|Error|^check .*bit|^r[0-9]|elapsed|^ab |^build " $R/ab_pp4.log | cut -c1-200 | tail -90
