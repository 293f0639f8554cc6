# As run on the device from the repository root (bash .dbg/run_s3.sh <full sha>): the whole GPU suite after this
# session's input checks (sweeps checked whole before they start, decode compare's builds planned before the GPU
# is described, strict case plans and sweep files), then the changed commands live: a bad compare knob, a decode
# sweep and a Sage2 sweep with a bracketed shape (status, collect), a compare written and read back by report show.
R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/*.log /tmp/res/*.csv /tmp/res/*.json $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 360 python3 -m pytest -q -m gpu tests/gpu -p no:cacheprovider > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; grep -E "FAILED|ERROR" $R/gpu_tests.log | head; tail -3 $R/gpu_tests.log
L=$R/cli.log
run() { echo "\$ labkit $*" >> $L; timeout 120 python3 -m labkit "$@" >> $L 2>&1; echo "rc=$?" >> $L; }
s=$(date +%s)
run decode compare --batch 8 --kv-len 8192 --build warps=3
run sweep run --workload decode.point --grid batch=1,8 --grid kv_len=1024 --grid iterations=5 --out $R/sw_dec
run sweep status $R/sw_dec
run sweep collect $R/sw_dec --csv
run sweep run --workload sage2.timeline --grid 'shape=[1,1024,8,128]' --grid q_len=1000,1024 --grid kv_len=1024 --grid launches=1 --out $R/sw_s2
run sweep status $R/sw_s2
run sweep run --workload decode.point --grid batch=1 --grid kv_len=1024 --grid head_dim=100 --out $R/sw_bad
ls -d $R/sw_bad >> $L 2>&1
run decode compare --batch 64 --kv-len 1024 --build splits=2 --iterations 10 --out $R/compare_64x1k.json
run report show $R/compare_64x1k.json
echo "cli $(( $(date +%s) - s )) s"; cat $L | cut -c1-220
