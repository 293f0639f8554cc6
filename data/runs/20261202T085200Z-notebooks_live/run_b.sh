# As run on the device from the repository root (bash .dbg/fin/run_b.sh <full sha>): `labkit nb run-all --record`,
# every notebook live with its defaults, at the plan with batch-1 clusters of 8 and the clamped mean.
T0=$(date +%s)
R=/tmp/resb; mkdir -p $R; trap 'tar -C /tmp/resb -czf $OUT/res.tgz . ; cp /tmp/resb/*.log /tmp/resb/*.csv $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markerb; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
left=$(( 380 - ($(date +%s) - T0) ))
s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run-all --record > $R/run_all.log 2>&1 || echo "run-all rc $?"; echo "run-all $(( $(date +%s) - s )) s (limit $left)"; grep -E "ok;|FAILED|failed|error|recorded:|IPKernelApp" $R/run_all.log | head -30
mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markerb ] && cp -r $d $R/rec/; done; ls $R/rec | tail -8
