# bash .dbg/ring/run_ring.sh <full sha>: ring_read.py (33.6 MB read ceilings beside the 1 x 8k d128 plan)
export R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
cp .dbg/ring/ring_read.py .dbg/ring/run_ring.sh $R/
timeout 400 python3 .dbg/ring/ring_read.py > $R/ring_read.log 2>&1 || echo "ring rc $?"
cat $R/ring_read.log | cut -c1-160
