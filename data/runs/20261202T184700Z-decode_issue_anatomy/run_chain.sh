# As run on the device from the repository root: bash .dbg/tlb/run_chain.sh <full sha>
R=/tmp/restl; rm -rf $R; mkdir -p $R; trap 'cp /tmp/restl/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
git diff HEAD > $R/chain.diff
timeout ${2:-480} python3 .dbg/tlb/chain.py > $R/chain.log 2>&1 || echo "rc $?"
grep -E "FAILED|Error|check|^r[0-9]|chain|elapsed" $R/chain.log | cut -c1-220 | tail -120
