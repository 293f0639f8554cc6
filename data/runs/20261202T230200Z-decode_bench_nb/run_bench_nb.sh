# As run on the device from the repository root (bash .dbg/fin3/run_bench_nb.sh <full sha>): `labkit decode bench
# --peers` (the issue's table), then notebooks 03, 04 and 02 live with --record (carry .whl_min, .whl_peers).
T0=$(date +%s)
R=/tmp/resb; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resb -czf $OUT/res.tgz . ; cp /tmp/resb/*.log /tmp/resb/*.csv /tmp/resb/*.json $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markerb; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 300 python3 -m labkit decode bench --peers --out $R/bench.json > $R/bench.log 2>&1 || echo "bench rc $?"; echo "bench $(( $(date +%s) - s )) s"; tail -26 $R/bench.log | cut -c1-200
for nb in 03 04 02; do
  left=$(( 570 - ($(date +%s) - T0) ))
  [ $left -lt 40 ] && { echo "no time left for $nb"; break; }
  s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run $nb --record > $R/run_$nb.log 2>&1 || echo "$nb rc $?"; echo "$nb $(( $(date +%s) - s )) s (limit $left)"; tail -3 $R/run_$nb.log | cut -c1-200
done
mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markerb ] && cp -r $d $R/rec/; done; ls $R/rec | tail -8
