# As run on the device from the repository root at d8d4a4e with ml_slot.diff in the working tree (bash run_ab.sh <full sha>):
# .dbg/dec/head = the kernels at d8d4a4e, .dbg/dec/dec_ml.py = the harness (sh regenerate.sh), .dbg/dec/tail_ml.py =
# tail_exit_gaps.py here; .whl_min = the notebook wheels less jedi and debugpy.
set -e
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee $OUT/gpu.txt
s=$(date +%s); timeout 150 python3 .dbg/dec/tail_ml.py > $OUT/tail_ml.out 2>&1 || echo "tail rc $?"; echo "tail $(( $(date +%s) - s )) s"; cat $OUT/tail_ml.out | tail -9
s=$(date +%s); timeout 270 python3 .dbg/dec/dec_ml.py > $OUT/dec_ml.out 2>&1 || echo "dec_ml rc $?"; echo "ab $(( $(date +%s) - s )) s"; tail -20 $OUT/dec_ml.out
s=$(date +%s); timeout 120 python3 -m pytest -q -m gpu tests/gpu/test_decode_gpu.py > $OUT/gpu_tests_decode.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -3 $OUT/gpu_tests_decode.log
