# As run on the device from the repository root (bash .dbg/run_fin3.sh <full sha>): the last changes' GPU paths:
# manifest run of what decode build and from-manifest wrote, with no --cubin-dir (the cubin beside the manifest is
# found now), the manifest and decode-manifest GPU tests, and notebook parameters refused before anything runs.
R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/*.log /tmp/res/*.csv $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
L=$R/cli.log
run() { echo "\$ labkit $*" >> $L; timeout 120 python3 -m labkit "$@" >> $L 2>&1; echo "rc=$?" >> $L; }
run decode build --batch 8 --kv-len 4096 --out $R/b
run manifest run $(ls $R/b/decode_*.json 2>/dev/null || echo $R/b/missing.json) --iters 20
run decode from-manifest data/trtllm_gen_decode_manifest_v4.json --out $R/fm
run manifest run $(ls $R/fm/decode_*.json 2>/dev/null || echo $R/fm/missing.json) --iters 20
run nb run 01 -p proof_cols 5
run nb run 05 -p source recorded -p recorded_root /nonexist
cat $L | cut -c1-200
s=$(date +%s); timeout 200 python3 -m pytest -q -m gpu tests/gpu/test_manifest_gpu.py tests/gpu/test_decode_gpu.py -k "manifest" -p no:cacheprovider > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -3 $R/gpu_tests.log
