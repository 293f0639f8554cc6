# As run on the device from the repository root: bash .dbg/lp2/run_ring.sh <full sha> (the kernel with ../20261202T184700Z-decode_issue_anatomy/loop.diff applied, not committed)
R=/tmp/resr; rm -rf $R; mkdir -p $R; trap 'cp /tmp/resr/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
git diff HEAD > $R/ring.diff
timeout ${2:-200} python3 .dbg/lp2/loop_ring.py > $R/loop_ring.log 2>&1 || echo "rc $?"
grep -E "FAILED|Error|check|^r[0-9]|loop|elapsed" $R/loop_ring.log | cut -c1-220 | tail -120
