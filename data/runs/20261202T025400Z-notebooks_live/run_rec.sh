# As run on the device from the repository root (bash .dbg/run_rec.sh <full sha>): `labkit nb run-all --record`,
# every notebook live with its defaults at this session's final code (notebook 03's table view and split sweep,
# 00's verdict, 02's scheduler index, 04's zoomed charts, 05's markdown; sweeps now checked whole before they start).
T0=$(date +%s)
R=/tmp/res2; mkdir -p $R; trap 'tar -C /tmp/res2 -czf $OUT/res.tgz . ; cp /tmp/res2/*.log /tmp/res2/*.csv $OUT/ 2>/dev/null; true' EXIT
touch /tmp/marker2; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
left=$(( 570 - ($(date +%s) - T0) ))
s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run-all --record > $R/run_all.log 2>&1 || echo "run-all rc $?"; echo "run-all $(( $(date +%s) - s )) s (limit $left)"; grep -E "ok;|FAILED|failed|error|recorded:" $R/run_all.log | head -30
mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/marker2 ] && cp -r $d $R/rec/; done; ls $R/rec | tail -8
