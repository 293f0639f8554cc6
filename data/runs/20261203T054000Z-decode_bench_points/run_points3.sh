# bash .dbg/s48/run_points3.sh <full sha>; carry .whl_min, .whl_peers, .dbg
R=/tmp/respt3; rm -rf $R; mkdir -p $R; trap 'cp -r /tmp/respt3/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
echo "== bench, calls between the sweep's points, 32/8 heads page 64"
timeout 240 python3 -m labkit decode bench --point 16x4096 --point 16x2048 --point 32x4096 --point 4x16384 --point 32x2048 --point 128x2048 --point 16x8192 --peers --iterations 20 --out $R/between.json > $R/between.log 2>&1 || echo "rc $?"
grep -E "^ +[0-9]+ +[0-9]+ +128" $R/between.log | cut -c1-250
echo "== compare 16x4096 32/8 page 64"
timeout 150 python3 -m labkit decode compare --batch 16 --kv-len 4096 --build splits=1,warps=8,stages=3,page_prefetch=1 --build splits=1 --build splits=2,warps=8,stages=2,cluster=1,page_prefetch=1 --build splits=4 --build wide_boxes=1 --iterations 20 --out $R/cmp_16x4k.json > $R/cmp_16x4k.log 2>&1 || echo "rc $?"
tail -8 $R/cmp_16x4k.log | cut -c1-250
