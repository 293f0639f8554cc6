# bash .dbg/s51/run_nb.sh <full sha>; carry .whl_nb, .whl_peers, .dbg (ncu_report from the ncu install): all six notebooks live with --record
T0=$(date +%s)
R=/tmp/resn; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resn -czf $OUT/res.tgz . ; cp /tmp/resn/summary.txt $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markerf; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
NCUPY=$(dirname "$(readlink -f "$(command -v ncu)")")/extras/python; ls $NCUPY/ncu_report.py && export PYTHONPATH=$PYTHONPATH:$NCUPY  # no room for the wheel
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
for nb in 03 04 02 01 00 05; do
  left=$(( 585 - ($(date +%s) - T0) ))
  [ $left -lt 30 ] && { echo "no time left for $nb" | tee -a $R/summary.txt; break; }
  s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run $nb --record > $R/run_$nb.log 2>&1 || echo "$nb rc $?"
  echo "$nb $(( $(date +%s) - s )) s (limit $left): $(tail -1 $R/run_$nb.log | cut -c1-160)" | tee -a $R/summary.txt
  mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markerf ] && cp -r $d $R/rec/; done
  tar -C $R -czf $OUT/res.tgz .  # after each notebook: a call cut short keeps what finished
done
left=$(( 585 - ($(date +%s) - T0) ))
if [ $left -gt 60 ]; then
  s=$(date +%s); timeout $left python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_decode_gpu.py -k "not p16 and not pages_of_16" > $R/gpu_rest.log 2>&1 || echo "tests rc $?"
  { echo "== decode GPU tests, the rest ($(( $(date +%s) - s )) s, limit $left)"; tail -1 $R/gpu_rest.log; grep -E "^(FAILED|ERROR)" $R/gpu_rest.log | head; } | tee -a $R/summary.txt
fi
echo "elapsed $(( $(date +%s) - T0 )) s"
