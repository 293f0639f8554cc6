# As run on the device from the repository root (bash .dbg/fin2/run_sweep.sh <full sha>): `labkit decode bench
# --sweep-splits all` (the bench without peers, then a split sweep at each of its 20 points and the seed call), to
# check the split heuristic against the best count under today's plans (carry .whl_min).
R=/tmp/resw; rm -rf $R; mkdir -p $R; trap 'cp /tmp/resw/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout ${2:-400} python3 -m labkit decode bench --sweep-splits all --out $R/sweep.json > $R/sweep.log 2>&1 || echo "bench rc $?"; echo "bench $(( $(date +%s) - s )) s"
grep -E "heuristic's|split heuristic|Error|error" $R/sweep.log | cut -c1-200
