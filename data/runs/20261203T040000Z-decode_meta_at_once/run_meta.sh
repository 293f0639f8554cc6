# As run on the device from the repository root: bash .dbg/meta/run_meta.sh <full sha>, with the working tree of
# meta_at_once.diff (switches off by default; ab_meta.py turns them on); carry .whl_min, .dbg. Run 2 as kept here (ab_meta2.log).
R=/tmp/resmeta; rm -rf $R; mkdir -p $R; trap 'cp /tmp/resmeta/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 480 python3 .dbg/meta/ab_meta.py > $R/ab_meta2.log 2>&1 || echo "rc $?"
grep -E "plain|probe|FAILED|Error|^check .*bit|^r[0-9]|elapsed|^ab |^build " $R/ab_meta2.log | cut -c1-200 | tail -90
