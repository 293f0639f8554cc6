# bash .dbg/s48/run_points2.sh <full sha>; carry .whl_min, .whl_peers, .dbg
R=/tmp/respt2; rm -rf $R; mkdir -p $R; trap 'cp -r /tmp/respt2/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
echo "== GPU tests touched by --point and the compare split"
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_decode_gpu.py -k "tail_sweep or compare_builds or named_points or peers_run" > $R/gpu_tests_points.log 2>&1 || echo "rc $?"
tail -3 $R/gpu_tests_points.log
for geo in "64 8 64" "32 8 16" "64 8 32" "32 8 32"; do set -- $geo
  echo "== bench --point 16x4096 --point 1x8192 $1/$2 heads page $3"
  timeout 120 python3 -m labkit decode bench --point 16x4096 --point 1x8192 --heads-q $1 --heads-kv $2 --page-size $3 --peers --iterations 20 --out $R/points_$1x$2_p$3.json > $R/points_$1x$2_p$3.log 2>&1 || echo "rc $?"
  grep -E "^ +(16|1) +(4096|8192)" $R/points_$1x$2_p$3.log | cut -c1-250
done
echo "== compare 16x4096 64/8 page 16"
timeout 100 python3 -m labkit decode compare --batch 16 --kv-len 4096 --heads-q 64 --heads-kv 8 --page-size 16 --build wide_boxes=1 --build warps=8,stages=2,splits=2 --iterations 20 > $R/cmp_p16.log 2>&1 || echo "rc $?"
tail -5 $R/cmp_p16.log | cut -c1-250
