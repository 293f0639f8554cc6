# As run on the device from the repository root (bash .dbg/run_fin4.sh <full sha>): after a review's fixes to the
# sweep checks: a decode sweep with a point over the byte cap (skipped by the workload, not refused), its resume,
# and the GPU tests of sweeps, compare and the tail sweep.
R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/*.log /tmp/res/*.csv $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
L=$R/cli.log
run() { echo "\$ labkit $*" >> $L; timeout 120 python3 -m labkit "$@" >> $L 2>&1; echo "rc=$?" >> $L; }
run sweep run --workload decode.point --grid batch=1,4096 --grid kv_len=1048576 --grid iterations=5 --out $R/sw
run sweep run --workload decode.point --grid batch=1,4096 --grid kv_len=1048576 --grid iterations=5 --out $R/sw
run sweep collect $R/sw --csv
cat $L | cut -c1-240
s=$(date +%s); timeout 300 python3 -m pytest -q -m gpu tests/gpu -k "sweep or dask or compare or tail or point" -p no:cacheprovider > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -3 $R/gpu_tests.log
