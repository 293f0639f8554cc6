# bash .dbg/s55/run_j.sh <full sha>; carry .whl_nb, .whl_ncu, .dbg:
# notebook 05 live with --record
T0=$(date +%s)
R=/tmp/resj; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resj -czf $OUT/res.tgz . ; cp /tmp/resj/summary.txt $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markerj; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); LABKIT_OUT=$R/nb timeout 215 python3 -m labkit nb run 05 --record > $R/run_05.log 2>&1 || echo "05 rc $?"
echo "05 $(( $(date +%s) - s )) s: $(tail -1 $R/run_05.log | cut -c1-160)" | tee -a $R/summary.txt
mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markerj ] && cp -r $d $R/rec/; done
echo "elapsed $(( $(date +%s) - T0 )) s"
