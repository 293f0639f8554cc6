# As run on the device (bash .dbg/run_check.sh <full sha>): the GPU tests the last refactor touches (the manifest
# Runner's own inputs, persistent CTAs), and manifest run from the CLI.
R=/tmp/res3; mkdir -p $R; trap 'cp /tmp/res3/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
s=$(date +%s); timeout 200 python3 -m pytest -q -m gpu tests/gpu/test_decode_gpu.py -k "persistent or manifest_runner" > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -3 $R/gpu_tests.log
{ python3 -m labkit decode build --batch 64 --kv-len 1024 --head-dim 256 --out /tmp/m && python3 -m labkit manifest run /tmp/m/decode_*.json --cubin-dir /tmp/m --iters 20; } > $R/user_path.log 2>&1; cat $R/user_path.log
