#!/usr/bin/env bash
# One device call for issue 11 (CTA scheduling) on the H200: the sched GPU tests, the timeline's cost
# at the seed shape, model vs timeline vs ncu on three launches, and notebook 04 recorded live.
# Usage (device tool, carry .whl: the papermill/ipykernel/nvtx wheels tools/device_check.sh installs):
#   LABKIT_GIT_SHA=<sha> bash tools/device_sched.sh
# Results land in $OUT: *.log, overhead.json, crosscheck/ (ncu report, launches.json, crosscheck.csv),
# results.tgz (data/runs + runs). Each step runs even when one before it failed; the exit status is the
# number of steps that failed.
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg
export LABKIT_CACHE=/tmp/labkit-cache LABKIT_NCU=${LABKIT_NCU:-/usr/local/cuda/bin/ncu}
failed=0
step() { local name=$1; shift; echo "== $name: $*"; timeout "${STEP_TIMEOUT:-900}" "$@" 2>&1 | tee "$OUT/$name.log"
         local rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || { echo "== $name: exit $rc"; failed=$((failed + 1)); }; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
"$LABKIT_NCU" --version | tail -1
python3 -m labkit device
step pytest python3 -m pytest -q -rs -p no:cacheprovider tests/gpu/test_sched_gpu.py tests/unit/test_sched_points.py \
  tests/unit/test_sched_notebook.py
step overhead python3 -m labkit sched overhead --iterations 10 --out "$OUT/overhead.json"
step crosscheck python3 -m labkit sched crosscheck --out "$OUT/crosscheck"
# the decode half needs labkit.workloads.decode.run.decode_timeline (another branch): without it, record
# the Sage2 half only (a run that recorded tests/unit/test_recorded.py's defaults needs workload=both)
if python3 -c "from labkit.workloads.decode.run import decode_timeline" 2>/dev/null; then
  step notebook04 python3 -m labkit nb run 04 --record
else
  echo "== decode_timeline missing: notebook 04 with workload=sage2 only"
  step notebook04 python3 -m labkit nb run 04 -p workload sage2 --record
fi
tar czf "$OUT/results.tgz" data/runs runs 2>/dev/null
ls -la "$OUT"
exit "$failed"
