# bash .dbg/push/run_pairs.sh <full sha>: labkit decode compare at batch 8 d128 from 1k to 4k tokens: the plan against
# 2 clustered splits of one 8-warp CTA per SM with 2 or 3 stages, now that clusters push their partials
export R=/tmp/res; rm -rf $R; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
cp .dbg/push/run_pairs.sh $R/
for r in 1 2 3; do
  for n in 1024 2048 4096; do
    timeout 120 python3 -m labkit decode compare --batch 8 --kv-len $n --head-dim 128 \
      --build warps=8,stages=2,cluster=1,splits=2 --build warps=8,stages=3,cluster=1,splits=2 >> $R/compare_pairs.log 2>&1 || echo "compare rc $?"
  done
done
grep -E "^ +8 " $R/compare_pairs.log | cut -c1-175
