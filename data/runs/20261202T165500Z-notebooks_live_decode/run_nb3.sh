# As run on the device from the repository root (bash .dbg/fin/run_nb3.sh <full sha>): the decode compare GPU test
# (its builds moved with the 8 x 1k plan), then notebook 03 live with --record, then 04 if time is left (a session's
# last device minutes: the decode kernel and plans changed, pushed cluster partials and new cluster plans).
T0=$(date +%s)
R=/tmp/resn; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resn -czf $OUT/res.tgz . ; cp /tmp/resn/*.log /tmp/resn/*.csv $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markern; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 60 python3 -m pytest -q -m gpu tests/gpu/test_decode_gpu.py -k "compare_builds" -p no:cacheprovider -rs > $R/gpu_compare_test.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -2 $R/gpu_compare_test.log
for nb in 03 04; do
  left=$(( 165 - ($(date +%s) - T0) ))
  [ $left -lt 30 ] && { echo "no time left for $nb"; break; }
  s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run $nb --record > $R/run_$nb.log 2>&1 || echo "$nb rc $?"; echo "$nb $(( $(date +%s) - s )) s (limit $left)"; tail -3 $R/run_$nb.log | cut -c1-200
done
mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markern ] && cp -r $d $R/rec/; done; ls $R/rec | tail -8
