# As run on the device from the repository root (bash .dbg/fin3/run_suite_nb.sh <full sha>): the whole GPU suite,
# then notebooks 05, 01 and 00 live with --record (carry .whl_min, .whl_ncu).
T0=$(date +%s)
R=/tmp/ress; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/ress -czf $OUT/res.tgz . ; cp /tmp/ress/*.log /tmp/ress/*.csv $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markers; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 380 python3 -m pytest -q -m gpu tests/gpu -p no:cacheprovider -rs --durations=8 > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; grep -E "FAILED|ERROR" $R/gpu_tests.log | head; tail -4 $R/gpu_tests.log
for nb in 05 01 00; do
  left=$(( 570 - ($(date +%s) - T0) ))
  [ $left -lt 40 ] && { echo "no time left for $nb"; break; }
  s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run $nb --record > $R/run_$nb.log 2>&1 || echo "$nb rc $?"; echo "$nb $(( $(date +%s) - s )) s (limit $left)"; tail -3 $R/run_$nb.log | cut -c1-200
done
mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markers ] && cp -r $d $R/rec/; done; ls $R/rec | tail -8
