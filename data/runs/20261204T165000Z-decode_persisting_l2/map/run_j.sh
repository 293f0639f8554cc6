# bash .dbg/s63/run_j.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s63: at the commit whose cold
# pads reset persisting L2 lines: the 46 calls of the peer map that were behind the best peer, again with
# labkit decode bench --peers (cold), the calls under 1 GB first; then the decode GPU tests of the timed paths
T0=$(date +%s)
R=/tmp/resj; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resj -czf $OUT/res.tgz . ; cp /tmp/resj/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
small="2x32768 4x32768 12x1024 12x4096 12x8192 13x8192 14x4096 16x1024 16x2048 16x4096 16x8192 16x16384 16x32768 17x2048 17x4096 17x8192 17x16384 20x2048 20x8192 24x1024 24x2048 32x1024 32x2048 32x4096 32x8192 56x1024 64x1024 64x2048 67x2048 96x1024 96x2048 128x1024"
large="32x16384 64x4096 64x8192 96x4096 100x8192 104x8192 128x2048 200x8192 204x8192 256x1024 256x2048 292x2048 400x2048 600x2048"
for set in small large; do
  left=$(( 470 - ($(date +%s) - T0) )); [ $left -lt 60 ] && { echo "no time left for $set" | tee -a $R/summary.txt; continue; }
  pts=$(for p in ${!set}; do echo -n "--point $p "; done)
  timeout $left python3 -m labkit decode bench --peers $pts --iterations 20 --out $R/behind_$set.json > $R/behind_$set.log 2>&1 || echo "rc $? at $set" | tee -a $R/summary.txt
  { echo "== $set ($(( $(date +%s) - T0 )) s)"; grep -E "^ +(batch|[0-9]+) +" $R/behind_$set.log | awk '{print $1, $2, $(NF-5), $(NF)}'; } | tee -a $R/summary.txt
done
left=$(( 585 - ($(date +%s) - T0) ))
[ $left -gt 40 ] && { s=$(date +%s); timeout $left python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/gpu/test_decode_gpu.py -k "tail_sweep or compare_builds or bench_times or timed_calls or peers_run" > $R/gpu_decode.log 2>&1 || echo "tests rc $?"; { echo "== decode GPU timed paths ($(( $(date +%s) - s )) s)"; tail -1 $R/gpu_decode.log; grep -E "^(FAILED|ERROR)" $R/gpu_decode.log | head; } | tee -a $R/summary.txt; }
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
