# As run on the device from the repository root (bash .dbg/run_final6.sh <full sha>): the GPU tests the session's last
# changes touch: the cluster table and the one-wave call (test_sched_gpu.py), the decode tests of clusters, the
# scheduling point and the plan's clustered splits.
R=/tmp/res8; mkdir -p $R; trap 'cp /tmp/res8/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 150 python3 -m pytest -q -rA -p no:cacheprovider tests/gpu/test_sched_gpu.py tests/gpu/test_decode_gpu.py -k "sched_gpu or scheduling_point or plans_clustered or (cluster_split_reduction and g1_d128)" > $R/gpu_tests.log 2>&1; echo "tests rc $? $(( $(date +%s) - s )) s"; grep -E "passed|failed|PASSED|FAILED|Error" $R/gpu_tests.log | tail -25
