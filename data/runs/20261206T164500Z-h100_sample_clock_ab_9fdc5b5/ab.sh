#!/usr/bin/env bash
# bash .dbg/s89/ab.sh <full sha>, carry .whl-all3 and .dbg/s89: the timing loop before (61eeb80, .dbg/s89/old) and after
# the per-sample clock (HEAD), alternated 3 x on one GPU: labkit decode bench at 1x8k, 8x8k, 64x8k d128, cold.
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/*.whl 2>&1 | tail -2
export PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache
{ nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm --format=csv,noheader; nvidia-smi -q | grep -E "Board Part" | head -1; } | tee $OUT/device_ab.txt
i=0
for v in ${ORDER:-old new old new old new}; do
  i=$((i+1))
  {
    if [ $v = old ]; then P=/tmp/site:$PWD/.dbg/s89/old; else P=/tmp/site:$PWD; fi
    PYTHONPATH=$P LABKIT_GIT_SHA=$1 timeout 100 python3 -m labkit decode bench --point 1x8192 --point 8x8192 --point 64x8192 --among none --out $OUT/ab_${v}_$i.json > /tmp/ab_${v}_$i.log 2>&1 || { echo "$v $i failed"; tail -3 /tmp/ab_${v}_$i.log; }
    python3 -c "
import json; d=json.load(open('$OUT/ab_${v}_$i.json'))
print('$v $i', ' '.join(f\"{r['batch']}x{r['kv_len']}:{r['p50_us']:.2f}us\" for r in d['rows']))" | tee -a $OUT/ab.txt
  }
done
echo "elapsed $(( $(date +%s) - T0 )) s"
