# bash .dbg/s63/run_f.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s63: a diagnosis, no change.
# (follow.py) what outlives the cold flush: labkit and cuDNN timed after the same call on the same data, on other
# buffers, or nothing, under memsets of 2 and 8 x L2 and cold_clean
T0=$(date +%s)
R=/tmp/resf; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resf -czf $OUT/res.tgz . ; cp /tmp/resf/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 400 python3 .dbg/s63/follow.py $R/follow.json 17x4096 16x4096 1x8192 > $R/follow.log 2>&1 || echo "rc $? follow" | tee -a $R/summary.txt
{ echo "== follow ($(( $(date +%s) - T0 )) s)"; grep -E "same/other|Error|error" $R/follow.log; } | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
