# bash .dbg/s64/run_b.sh <full sha, given literally>; carry .whl_nbl, .whl_peers: the whole decode GPU file, with the
# cold pads' persisting-L2 reset (its timed paths ran at a0cd66e, 1c84c85; the rest last at a5bfeff)
T0=$(date +%s)
R=/tmp/resb; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resb -czf $OUT/res.tgz . ; cp /tmp/resb/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 560 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_decode_gpu.py --durations=5 > $R/gpu_decode.log 2>&1 || echo "tests rc $?"
{ echo "== decode GPU file ($(( $(date +%s) - s )) s)"; tail -1 $R/gpu_decode.log; grep -E "^(FAILED|ERROR)" $R/gpu_decode.log | head; } | tee -a $R/summary.txt
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
