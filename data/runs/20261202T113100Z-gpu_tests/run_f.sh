# As run on the device from the repository root (bash .dbg/fin/run_e.sh <full sha>): the GPU tests of the files this session changed after 9ec84dd touches (ncu, sched, Sage2, timing, manifest; not decode).
R=/tmp/resf; mkdir -p $R; trap 'cp /tmp/resf/*.log /tmp/resf/*.csv $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 330 python3 -m pytest -q -m gpu tests/gpu/test_ncu_gpu.py tests/gpu/test_sched_gpu.py tests/gpu/test_sage2_gpu.py tests/gpu/test_timing_gpu.py tests/gpu/test_manifest_gpu.py -p no:cacheprovider -rs --durations=5 > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; grep -E "FAILED|ERROR" $R/gpu_tests.log | head; tail -12 $R/gpu_tests.log
