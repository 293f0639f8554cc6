# bash .dbg/s59/run_b3.sh <full sha, given literally>; carry .whl_nb, .whl_peers, .dbg/s59: notebook 03 live with
# --record again, with FA3 this time (run_b2.sh carried no peer wheels: the tree limit left room for the ncu wheel only)
T0=$(date +%s)
R=/tmp/resb3; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resb3 --exclude=./nb -czf $OUT/res.tgz . ; cp -r /tmp/resb3/nb $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markerb3; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); LABKIT_OUT=$R/nb timeout 200 python3 -m labkit nb run 03 --record > $R/run_03.log 2>&1 || echo "03 rc $?"
echo "03 $(( $(date +%s) - s )) s: $(tail -1 $R/run_03.log | cut -c1-160)" | tee -a $R/summary.txt
mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markerb3 ] && cp -r $d $R/rec/; done
