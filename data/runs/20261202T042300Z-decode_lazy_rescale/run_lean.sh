# As run on the device from the repository root (bash .dbg/run_lean.sh <full sha>): the decode GPU tests (the lazy
# rescale is the default build), then the softmax A/B (.dbg/lean/ab_lean.py).
R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 300 python3 .dbg/lean/ab_lean.py > $R/ab_lean.log 2>&1 || echo "ab rc $?"; echo "ab $(( $(date +%s) - s )) s"; grep -v "^check.*ok$" $R/ab_lean.log
s=$(date +%s); timeout 270 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_decode_gpu.py -k "not peers" > $R/gpu_tests_decode.log 2>&1; echo "tests rc $? $(( $(date +%s) - s )) s"; tail -4 $R/gpu_tests_decode.log
