# bash .dbg/s63/run_g.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s63: a diagnosis, no change.
# (follow2.py) does FA3 leave K/V lines in L2 that the cold flush does not evict? cuDNN, labkit and FA3 timed after
# FA3 / cuDNN / flash on the same or another K/V copy, under the cold pad, with an evict_last read, with a discard
T0=$(date +%s)
R=/tmp/resg; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resg -czf $OUT/res.tgz . ; cp /tmp/resg/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 400 python3 .dbg/s63/follow2.py $R/follow2.json 17x4096 16x4096 > $R/follow2.log 2>&1 || echo "rc $? follow" | tee -a $R/summary.txt
{ echo "== follow2 ($(( $(date +%s) - T0 )) s)"; grep -E "after:|persisting|Error|error" $R/follow2.log; } | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
