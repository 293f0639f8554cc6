# bash .dbg/s48/run_cmp.sh <full sha>; carry .whl_min, .dbg
R=/tmp/rescmp; rm -rf $R; mkdir -p $R; trap 'cp /tmp/rescmp/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
C="python3 -m labkit decode compare --iterations 40"
P2="warps=8,stages=2,cluster=1,page_prefetch=1"
cmp() { local name=$1; shift; echo "== $name"; timeout 150 $C "$@" --out $R/$name.json > $R/$name.log 2>&1 || echo "rc $?"; cat $R/$name.log | tail -8; }
cmp b1_8k --batch 1 --kv-len 8192 --build splits=8,$P2,kv_evict_first=1
cmp b1_32k --batch 1 --kv-len 32768 --build splits=8,$P2,kv_evict_first=1
cmp b8_8k --batch 8 --kv-len 8192 --build splits=2,$P2,kv_evict_first=1
cmp b8_32k --batch 8 --kv-len 32768 --build splits=2,$P2,kv_evict_first=1
cmp b64_1k --batch 64 --kv-len 1024 --build warps=4,stages=1,qk_chains=1,kv_evict_first=1
cmp b256_1k --batch 256 --kv-len 1024 --build warps=4,stages=1,qk_chains=1,kv_evict_first=1
