# bash .dbg/ring/run_waterfall.sh <full sha>: the waterfall's diagnostic defines applied to the tree, then waterfall.py
export R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
patch -p1 < .dbg/ring/waterfall_diag.diff > $R/patch.log 2>&1 && echo "diag defines applied" || { cat $R/patch.log; exit 1; }
cp .dbg/ring/waterfall.py .dbg/ring/run_waterfall.sh .dbg/ring/waterfall_diag.diff $R/
MORE=1 timeout 500 python3 .dbg/ring/waterfall.py > $R/waterfall.log 2>&1 || echo "waterfall rc $?"
cut -c1-160 $R/waterfall.log
