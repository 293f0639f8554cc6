# bash .dbg/s50/run_final.sh <full sha>; carry .whl_nb, .whl_peers, .whl_ncu, .dbg: the decode GPU tests of the pages
# of 16 and 32 (with the plans' batch-1 and page-16 cases, and the file's last tests, cut off in the call before),
# then all six notebooks live with --record
T0=$(date +%s)
R=/tmp/resf; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resf -czf $OUT/res.tgz . ; cp /tmp/resf/summary.txt $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markerf; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_peers/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s)
timeout 170 python3 -m pytest -q -p no:cacheprovider -rs --durations=5 -m gpu tests/gpu/test_decode_gpu.py -k "p16 or p32 or pages_of_16 or clusters_of_8_at_batch_1 or softmax_rescales or peers_run or cta_scheduling_point" > $R/gpu_tests.log 2>&1 || echo "tests rc $?"
{ echo "== decode GPU tests ($(( $(date +%s) - s )) s)"; tail -1 $R/gpu_tests.log; grep -E "^(FAILED|ERROR)" $R/gpu_tests.log | head; } | tee -a $R/summary.txt
for nb in 03 04 02 01 00 05; do
  left=$(( 585 - ($(date +%s) - T0) ))
  [ $left -lt 30 ] && { echo "no time left for $nb" | tee -a $R/summary.txt; break; }
  s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run $nb --record > $R/run_$nb.log 2>&1 || echo "$nb rc $?"
  echo "$nb $(( $(date +%s) - s )) s (limit $left): $(tail -1 $R/run_$nb.log | cut -c1-160)" | tee -a $R/summary.txt
  mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markerf ] && cp -r $d $R/rec/; done
  tar -C $R -czf $OUT/res.tgz .  # after each notebook: a call cut short keeps what finished
done
echo "elapsed $(( $(date +%s) - T0 )) s"
