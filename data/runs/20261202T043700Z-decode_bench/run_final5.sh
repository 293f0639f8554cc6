# As run on the device from the repository root (bash .dbg/run_final5.sh <full sha>): after the lazy rescale, the whole
# `labkit decode bench --peers` (the issue's table, the seed call in a graph), then notebook 03 live and recorded.
T0=$(date +%s)
R=/tmp/res5; mkdir -p $R; trap 'tar -C /tmp/res5 -czf $OUT/res.tgz . ; cp /tmp/res5/*.log /tmp/res5/*.csv /tmp/res5/*.json $OUT/ 2>/dev/null; true' EXIT
touch /tmp/marker5; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 330 python3 -m labkit decode bench --peers --out $R/bench.json > $R/bench.log 2>&1 || echo "bench rc $?"; echo "bench $(( $(date +%s) - s )) s"; tail -30 $R/bench.log | cut -c1-220
left=$(( 580 - ($(date +%s) - T0) ))
s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run 03 --record > $R/nb03.log 2>&1 || echo "nb03 rc $?"; echo "nb03 $(( $(date +%s) - s )) s (limit $left)"; tail -4 $R/nb03.log
mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/marker5 ] && cp -r $d $R/rec/; done; ls $R/rec
