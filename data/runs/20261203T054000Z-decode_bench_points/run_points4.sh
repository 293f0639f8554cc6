# bash .dbg/s48/run_points4.sh <full sha>; carry .whl_min, .dbg
R=/tmp/respt4; rm -rf $R; mkdir -p $R; trap 'cp -r /tmp/respt4/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
for pt in "16 8192" "32 2048" "16 2048"; do set -- $pt
  echo "== compare $1x$2"
  timeout 120 python3 -m labkit decode compare --batch $1 --kv-len $2 --build splits=1 --build splits=1,warps=8,stages=3,page_prefetch=1 --build splits=2,warps=8,stages=3,page_prefetch=1 --iterations 20 --out $R/cmp_$1x$2.json > $R/cmp_$1x$2.log 2>&1 || echo "rc $?"
  grep -E "^ +$1 +$2" $R/cmp_$1x$2.log | cut -c1-250
done
