# bash .dbg/s55/run_k.sh <full sha, given literally: the device's git metadata may be older than the tree it is sent>;
# carry .whl_nb, .whl_peers, .dbg: notebooks 03 04 02 01 00 live with --record (run_i.sh's records carried the older
# sha that `git rev-parse HEAD` gave on the device)
T0=$(date +%s)
R=/tmp/resk; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resk -czf $OUT/res.tgz . ; cp /tmp/resk/summary.txt $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markerk; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
for nb in 03 04 02 01 00; do
  left=$(( 585 - ($(date +%s) - T0) ))
  [ $left -lt 60 ] && { echo "no time left for $nb ($left s)" | tee -a $R/summary.txt; continue; }
  s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run $nb --record > $R/run_$nb.log 2>&1 || echo "$nb rc $?"
  echo "$nb $(( $(date +%s) - s )) s (limit $left): $(tail -1 $R/run_$nb.log | cut -c1-160)" | tee -a $R/summary.txt
  mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markerk ] && cp -r $d $R/rec/; done
  tar -C $R -czf $OUT/res.tgz .
done
echo "elapsed $(( $(date +%s) - T0 )) s"
