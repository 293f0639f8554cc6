# As run on the device (bash .dbg/paging/run_probe.sh <full sha>): ab_paging.py's first cuDNN call of a revisited
# shape, without and with a sync after the K/V gather (SYNC_PROBE prints the reads).
export R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
(patch -p1 < .dbg/paging/paging_diag.diff || git apply .dbg/paging/paging_diag.diff) > $R/patch.log 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 SYNC_PROBE=1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 200 python3 .dbg/paging/ab_paging.py 64x1024d128 8x8192d128 > $R/probe_nosync.log 2>&1 || echo "rc $?"
GATHER_SYNC=1 timeout 200 python3 .dbg/paging/ab_paging.py 64x1024d128 8x8192d128 > $R/probe_sync.log 2>&1 || echo "rc $?"
grep -H probe $R/probe_*.log | cut -c1-200
