# As run on the device from the repository root: bash .dbg/launch/run_launch.sh <full sha>, with the working tree of
# empty_probe.diff (LABKIT_EMPTY_PROBE, off by default; ab_launch.py turns it on); carry .whl_min, .dbg
R=/tmp/reslaunch; rm -rf $R; mkdir -p $R; trap 'cp /tmp/reslaunch/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 400 python3 .dbg/launch/ab_launch.py > $R/ab_launch.log 2>&1 || echo "rc $?"
grep -E "^build|^check|^r[0-9]|elapsed|^ab |^probe|Error" $R/ab_launch.log | cut -c1-220 | tail -80
