# As run on the device from the repository root (bash .dbg/fin/run_d.sh <full sha>): `labkit nb run-all --record`,
# every notebook live with its defaults, then notebook 02 with -p schedule sm90 (its newest record was at 4364d8a).
T0=$(date +%s)
R=/tmp/resd; mkdir -p $R; trap 'tar -C /tmp/resd -czf $OUT/res.tgz . ; cp /tmp/resd/*.log /tmp/resd/*.csv $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markerd; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
left=$(( 420 - ($(date +%s) - T0) ))
s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run-all --record > $R/run_all.log 2>&1 || echo "run-all rc $?"; echo "run-all $(( $(date +%s) - s )) s (limit $left)"; grep -E "ok;|FAILED|failed|error|recorded:|IPKernelApp" $R/run_all.log | head -30
left=$(( 560 - ($(date +%s) - T0) ))
s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run 02 -p schedule sm90 --record > $R/run_02_sm90.log 2>&1 || echo "02 sm90 rc $?"; echo "02 sm90 $(( $(date +%s) - s )) s (limit $left)"; tail -6 $R/run_02_sm90.log
mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markerd ] && cp -r $d $R/rec/; done; ls $R/rec | tail -8
