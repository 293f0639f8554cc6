# bash .dbg/s62/run_b.sh <full sha, given literally>; carry .whl_nbl, .whl_peers, .dbg/s62: a diagnosis, no change:
# labkit's plan on its plain pool and on the same buffers read token-major, cuDNN on the bench's [B, N, H, D] view
# and on contiguous [B, H, N, D] K/V, in one set of shuffled cold rounds per point, twice
T0=$(date +%s)
R=/tmp/resb; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resb -czf $OUT/res.tgz . ; cp /tmp/resb/summary.txt $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
pts="16x4096 32x2048 17x4096 16x8192 64x1024 8x8192 64x8192 1x8192"
for r in 1 2; do
  left=$(( 420 - ($(date +%s) - T0) )); [ $left -lt 60 ] && { echo "no time left for round $r" | tee -a $R/summary.txt; continue; }
  timeout $left python3 .dbg/s62/layout_ab.py 20 $pts > $R/layout_r$r.log 2>&1 || echo "rc $? at round $r"
  cp $R/layout_ab.json $R/layout_r$r.json 2>/dev/null
  { echo "== round $r ($(( $(date +%s) - T0 )) s)"; grep -E "^ +[0-9]+ x" $R/layout_r$r.log; } | tee -a $R/summary.txt
done
tail -5 $R/layout_r1.log
echo "elapsed $(( $(date +%s) - T0 )) s" | tee -a $R/summary.txt
