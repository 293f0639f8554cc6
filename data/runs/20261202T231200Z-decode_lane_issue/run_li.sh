# As run on the device from the repository root: bash .dbg/li/run_li.sh <full sha> (the kernel with the device-only
# LANE_ISSUE define of li.diff, not committed); carry .whl_min, .dbg
R=/tmp/resli; rm -rf $R; mkdir -p $R; trap 'cp /tmp/resli/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 200 python3 .dbg/li/ab_lane_issue.py > $R/ab_li.log 2>&1 || echo "rc $?"
grep -E "FAILED|Error|^check .*bit|^r[0-9]|elapsed|^ab " $R/ab_li.log | cut -c1-200 | tail -90
