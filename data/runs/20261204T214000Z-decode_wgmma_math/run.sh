# bash .dbg/s68/run.sh <full sha>; carry .whl_nbl, .dbg/s68
R=/tmp/resp; rm -rf $R; mkdir -p $R; trap 'cp /tmp/resp/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_nbl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=uuid,vbios_version,clocks.sm,clocks.mem --format=csv,noheader
nvidia-smi -q | grep -E "Board Part" | head -1
python3 -m labkit device --json > $R/device.json
timeout 540 python3 .dbg/s68/wg_ab.py 2>&1 | tee $R/wg_ab.log | grep -v "^r[0-9]" ; grep "^r" $R/wg_ab.log | tail -80
