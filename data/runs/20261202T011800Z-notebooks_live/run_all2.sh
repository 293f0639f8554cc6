# As run on the device from the repository root (bash .dbg/run_all2.sh <full sha>): the CTA-scheduling point's GPU
# tests (decode_point now names its build), then `labkit nb run-all --record`: every notebook live with its defaults,
# as `make run` does on a GPU machine, each kept in data/runs/.
T0=$(date +%s)
R=/tmp/res; mkdir -p $R; trap 'tar -C /tmp/res -czf $OUT/res.tgz . ; cp /tmp/res/*.log /tmp/res/*.csv $OUT/ 2>/dev/null; true' EXIT
touch /tmp/marker; sleep 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 80 python3 -m pytest -q -m gpu tests/gpu/test_decode_gpu.py tests/gpu/test_sched_gpu.py -k "cta_scheduling_point or decode_point" -p no:cacheprovider > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -2 $R/gpu_tests.log
left=$(( 560 - ($(date +%s) - T0) ))
s=$(date +%s); LABKIT_OUT=$R/nb timeout $left python3 -m labkit nb run-all --record > $R/run_all.log 2>&1 || echo "run-all rc $?"; echo "run-all $(( $(date +%s) - s )) s (limit $left)"; grep -E "ok;|FAILED|failed|error|recorded:" $R/run_all.log | head -30
mkdir -p $R/rec; for d in data/runs/*; do [ -f $d/run.json ] && [ $d -nt /tmp/marker ] && cp -r $d $R/rec/; done; ls $R/rec | tail -8
