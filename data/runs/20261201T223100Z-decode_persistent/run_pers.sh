# As run on the device from the repository root (bash .dbg/run_pers.sh <full sha>); .whl_min = the notebook wheels
# less jedi and debugpy, plus jupytext and its needs. One tarball comes back.
R=/tmp/res; mkdir -p $R; trap 'tar -C /tmp/res -czf $OUT/res.tgz . ; cp /tmp/res/*.log $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 200 python3 -m pytest -q -m gpu tests/gpu/test_decode_gpu.py -k "persistent or manifest_runner" > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -15 $R/gpu_tests.log
s=$(date +%s); timeout 330 python3 .dbg/pers/ab3.py > $R/ab.log 2>&1 || echo "ab rc $?"; echo "ab $(( $(date +%s) - s )) s"; cut -c1-300 $R/ab.log
