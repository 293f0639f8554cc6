# As run on the device from the repository root (bash .dbg/run_gap.sh <full sha>); .whl_min = the notebook wheels
# less jedi and debugpy, plus jupytext and its needs; .whl_ncu = ncu-report. One tarball comes back.
T0=$(date +%s)
R=/tmp/res; mkdir -p $R; trap 'tar -C /tmp/res -czf $OUT/res.tgz . ; cp /tmp/res/*.log $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); mkdir -p $R/nb; LABKIT_OUT=$R/nb timeout 70 python3 -m labkit nb run 04 > $R/nb04.log 2>&1 || echo "nb04 rc $?"; echo "nb04 $(( $(date +%s) - s )) s"; tail -3 $R/nb04.log
s=$(date +%s); timeout 150 python3 -m pytest -q -m gpu tests/gpu/test_ncu_gpu.py tests/gpu/test_decode_gpu.py -k "ncu or tail or timeline or Timeline" > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -4 $R/gpu_tests.log
s=$(date +%s); timeout 200 python3 .dbg/gap/gap.py > $R/gap.log 2>&1 || echo "gap rc $?"; echo "gap $(( $(date +%s) - s )) s"; cat $R/gap.log | cut -c1-400
