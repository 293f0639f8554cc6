# bash .dbg/s63/run_h.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s63: a diagnosis, no change.
# (follow3.py) are the lines that outlive the cold flush persisting ones? the persisting-L2 limit in a bare process,
# then cuDNN and labkit after various priors under the cold pad, with cudaCtxResetPersistingL2Cache, with an evict_last read + demote
T0=$(date +%s)
R=/tmp/resh; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resh -czf $OUT/res.tgz . ; cp /tmp/resh/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
{ echo "== env"; env | grep -i -E "cuda|nvidia|l2" | sed 's/=.*TOKEN.*/=<hidden>/' ; echo "== bare cupy: limit, max persisting"; python3 -c "import cupy; r=cupy.cuda.runtime; print(r.deviceGetLimit(6), r.deviceGetAttribute(108, 0))"; echo "== torch first"; python3 -c "import torch; torch.zeros(1, device='cuda'); import cupy; r=cupy.cuda.runtime; print(r.deviceGetLimit(6))"; } 2>&1 | tee -a $R/summary.txt
timeout 400 python3 .dbg/s63/follow3.py $R/follow3.json 17x4096 16x4096 > $R/follow3.log 2>&1 || echo "rc $? follow" | tee -a $R/summary.txt
{ echo "== follow3 ($(( $(date +%s) - T0 )) s)"; grep -E "after:|persisting|Error|error" $R/follow3.log; } | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
