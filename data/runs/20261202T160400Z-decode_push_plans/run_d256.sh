# bash .dbg/push/run_d256.sh <full sha>: labkit decode compare, now that clusters push their partials, at the split
# calls whose plans reduce through global memory: 1 x 8k and 1 x 32k d256 (16 splits) against clusters of 8, and
# 8 x 1k d128 (4 splits of 4 warps, two CTAs per SM) against clustered 8-warp builds
export R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
cp .dbg/push/run_d256.sh $R/
for r in 1 2 3; do
  for n in 8192 32768; do
    timeout 150 python3 -m labkit decode compare --batch 1 --kv-len $n --head-dim 256 --build cluster=1 \
      --build warps=8,dim_warps=2,stages=2,cluster=1,splits=8 --build warps=8,dim_warps=2,stages=1,cluster=1,splits=8 \
      --out $R/compare_1x${n}_d256_r$r.json > $R/compare_1x${n}_d256_r$r.log 2>&1 || echo "compare rc $?"
    cut -c1-200 $R/compare_1x${n}_d256_r$r.log | tail -5
  done
  timeout 150 python3 -m labkit decode compare --batch 8 --kv-len 1024 --head-dim 128 --build cluster=1 \
    --build warps=8,stages=3,cluster=1,splits=2 --build warps=8,stages=1,cluster=1,splits=2 \
    --build warps=8,stages=1,cluster=1,splits=4 \
    --out $R/compare_8x1024_d128_r$r.json > $R/compare_8x1024_d128_r$r.log 2>&1 || echo "compare rc $?"
  cut -c1-200 $R/compare_8x1024_d128_r$r.log | tail -6
done
