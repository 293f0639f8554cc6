# bash .dbg/s61/run_c.sh <full sha, given literally>; carry .whl_nb, .whl_ncu, .dbg/s61: at the commit that widens
# TAIL_PAST_WAVE_SHARE: notebook 05 live with --record, then the whole decode GPU test file
T0=$(date +%s)
R=/tmp/resc; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resc -czf $OUT/res.tgz . ; cp /tmp/resc/summary.txt $OUT/ 2>/dev/null; true' EXIT
touch /tmp/markerc; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nb/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); LABKIT_OUT=$R/nb timeout 200 python3 -m labkit nb run 05 --record > $R/run_05.log 2>&1 || echo "05 rc $?"
echo "05 $(( $(date +%s) - s )) s: $(tail -1 $R/run_05.log | cut -c1-160)" | tee -a $R/summary.txt
mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/markerc ] && cp -r $d $R/rec/; done
tar -C $R -czf $OUT/res.tgz .
left=$(( 585 - ($(date +%s) - T0) ))
s=$(date +%s); timeout $left python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_decode_gpu.py > $R/gpu_decode.log 2>&1 || echo "tests rc $?"
{ echo "== decode GPU file ($(( $(date +%s) - s )) s, limit $left)"; tail -1 $R/gpu_decode.log; grep -E "^(FAILED|ERROR)" $R/gpu_decode.log | head; } | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
