set -e
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
sleep 90
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu,temperature.memory --format=csv > $OUT/smi.csv
s=$(date +%s); timeout 280 python3 -m labkit decode bench --peers --out $OUT/bench.json > $OUT/bench.log 2>&1 || echo "bench rc $?"; echo "bench $(( $(date +%s) - s )) s"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,temperature.memory --format=csv >> $OUT/smi.csv
tail -26 $OUT/bench.log
