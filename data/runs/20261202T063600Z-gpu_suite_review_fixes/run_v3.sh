# As run on the device from the repository root (bash .dbg/run_v3.sh <full sha>): after the review fixes that touch
# GPU paths (split scratch declared only where splits meet through global memory; decode bench --variant at every
# point; sage2 profile asks for the GPU first): the whole GPU suite, the seed's geometry re-targeted and run through
# the manifest runner, and decode bench --variant mma.
T0=$(date +%s)
R=/tmp/resv3; mkdir -p $R; trap 'cp /tmp/resv3/*.log /tmp/resv3/*.csv /tmp/resv3/*.json $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 380 python3 -m pytest -q -m gpu tests/gpu -p no:cacheprovider -rs > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; grep -E "FAILED|ERROR" $R/gpu_tests.log | head; tail -2 $R/gpu_tests.log
L=$R/cli.log
run() { echo "\$ labkit $*" >> $L; timeout 150 python3 -m labkit "$@" >> $L 2>&1; echo "rc=$?" >> $L; }
run decode from-manifest data/trtllm_gen_decode_manifest_v4.json --out $R/fm
run manifest run $R/fm/decode_b2_h24-4_d256_p64x11_q1_interleaved_s8.json --iters 20
run manifest run $R/fm/decode_b2_h24-4_d256_p64x11_q1_interleaved_s8.json --iters 20 --mode graph
left=$(( 580 - ($(date +%s) - T0) ))
s=$(date +%s); timeout $left python3 -m labkit decode bench --variant mma --iterations 10 > $R/bench_mma.log 2>&1 || echo "bench rc $?"; echo "bench $(( $(date +%s) - s )) s"
cat $L | cut -c1-250 | tail -40; tail -26 $R/bench_mma.log | cut -c1-200
