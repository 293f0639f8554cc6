# As run on the device from the repository root (bash .dbg/run_mask.sh <full sha>): the stage-mask A/B
# (.dbg/lean/ab_mask.py), then the decode GPU tests of the split paths with STAGE_MASK 1 and 2 forced.
R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 240 python3 .dbg/lean/ab_mask.py > $R/ab_mask.log 2>&1 || echo "ab rc $?"; echo "ab $(( $(date +%s) - s )) s"; grep -v "^check.*ok$" $R/ab_mask.log; grep "^check" $R/ab_mask.log | grep -c "bit-equal True"
sed -i 's/^#define STAGE_MASK 0$/#define STAGE_MASK 2/' labkit/workloads/decode/kernels/paged_decode_mma.cu; grep -n "^#define STAGE_MASK" labkit/workloads/decode/kernels/paged_decode_mma.cu
s=$(date +%s); timeout 250 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_decode_gpu.py -k "not peers and not compare and not sweep and not scheduling_point" > $R/gpu_tests_mask2.log 2>&1; echo "tests (STAGE_MASK 2 as the default) rc $? $(( $(date +%s) - s )) s"; tail -3 $R/gpu_tests_mask2.log
