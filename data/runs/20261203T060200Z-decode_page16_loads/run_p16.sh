# bash .dbg/s48/run_p16.sh <full sha>; carry .whl_min, .dbg
R=/tmp/resp16; rm -rf $R; mkdir -p $R; trap 'tar -C /tmp/resp16 -czf $OUT/res.tgz . ; cp /tmp/resp16/smi.csv $OUT/ 2>/dev/null; true' EXIT
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
for pt in "1 8192 16" "16 4096 16" "8 8192 16" "64 1024 16" "256 1024 16" "1 8192 32" "16 4096 32" "8 8192 32"; do set -- $pt
  left=$(( 300 - ($(date +%s) - T0) )); [ $left -lt 30 ] && { echo "no time left for $pt"; break; }
  timeout $left python3 -m labkit decode compare --batch $1 --kv-len $2 --page-size $3 --build wide_boxes=1 --iterations 20 --out $R/cmp_$1x$2_p$3.json > $R/cmp_$1x$2_p$3.log 2>&1 || echo "rc $?"
  grep -E "^ +$1 +$2 " $R/cmp_$1x$2_p$3.log | cut -c1-200
done
echo "elapsed $(( $(date +%s) - T0 )) s"
