# bash .dbg/s48/run_points.sh <full sha>; carry .whl_min, .whl_peers, .dbg
R=/tmp/respt; rm -rf $R; mkdir -p $R; trap 'cp -r /tmp/respt/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
echo "== bench --point 64x1024 --point 256x1024 --peers"
timeout 200 python3 -m labkit decode bench --point 64x1024 --point 256x1024 --peers --iterations 40 --out $R/points_d128.json > $R/points_d128.log 2>&1 || echo "rc $?"
tail -8 $R/points_d128.log | cut -c1-250
echo "== bench --point 16x4096 64/8 heads page 16 --peers"
timeout 150 python3 -m labkit decode bench --point 16x4096 --point 1x8192 --heads-q 64 --heads-kv 8 --page-size 16 --peers --iterations 20 --out $R/points_64x8_p16.json > $R/points_64x8_p16.log 2>&1 || echo "rc $?"
tail -8 $R/points_64x8_p16.log | cut -c1-250
echo "== GPU tests: decode"
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_decode_gpu.py -x > $R/gpu_decode_tests.log 2>&1 || echo "rc $?"
tail -5 $R/gpu_decode_tests.log
