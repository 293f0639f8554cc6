# bash .dbg/s61/run_b2.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s61: at the commit that widens
# TAIL_PAST_WAVE_SHARE: notebooks 03 04 02 01 00 live with --record (05 in run_c.sh)
T0=$(date +%s)
R=/tmp/resb2; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resb2 -czf $OUT/res.tgz . ; cp /tmp/resb2/summary.txt $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markerb2; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
for nb in 03 04 02 01 00; do
  left=$(( 590 - ($(date +%s) - T0) ))
  [ $left -lt 60 ] && { echo "no time left for $nb ($left s)" | tee -a $R/summary.txt; continue; }
  s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run $nb --record > $R/run_$nb.log 2>&1 || echo "$nb rc $?"
  echo "$nb $(( $(date +%s) - s )) s (limit $left): $(tail -1 $R/run_$nb.log | cut -c1-160)" | tee -a $R/summary.txt
  mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markerb2 ] && cp -r $d $R/rec/; done
  tar -C $R -czf $OUT/res.tgz .
done
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
