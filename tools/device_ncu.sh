#!/usr/bin/env bash
# One call on the GPU host (no registry there): install the carried wheels, run the ncu GPU tests, record
# notebook 05 live, and print what issue 12's closing note needs (event p50 vs ncu per kernel, the phase
# shares of the two SourceCounters runs, report sizes). Usage (device tool, carry .whl):
#   LABKIT_GIT_SHA=<sha> bash tools/device_ncu.sh [-p KEY VALUE ...]   # extra notebook 05 parameters
# .whl/ must hold what device_check.sh needs to run notebooks (papermill, ipykernel, jupytext, nbformat, ...),
# plus nvtx (without it labkit's NVTX ranges are no-ops and the NVTX filter profiles nothing) and ncu-report.
# Results land in $OUT: logs, closing_note.txt and results.tgz (data/runs + runs, with the .ncu-rep files).
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg
export LABKIT_CACHE=/tmp/labkit-cache LABKIT_NCU=${LABKIT_NCU:-/usr/local/cuda/bin/ncu}
"$LABKIT_NCU" --version | tail -1
grep RmProfilingAdminOnly /proc/driver/nvidia/params || true
python3 -c "import nvtx, ncu_report, papermill; print('nvtx', nvtx.__version__ if hasattr(nvtx, '__version__') else '?')" \
  || { echo "device_ncu: a carried wheel is missing (nvtx, ncu-report or papermill)"; exit 1; }
python3 -c "import labkit.ncu as n; ok, why = n.available(); print(why); raise SystemExit(0 if ok else 1)" || exit 1
if [ -z "${LABKIT_NCU_SKIP_TESTS:-}" ]; then  # about 2 minutes; set it when the 10-minute call limit is tight
  timeout 240 python3 -m pytest -q -rs -p no:cacheprovider tests/gpu/test_ncu_gpu.py 2>&1 | tee "$OUT/pytest_ncu.log" | tail -8
fi
python3 -m labkit nb run 05 --record "$@" 2>&1 | tee "$OUT/notebook05.log"
summary=$(ls -d data/runs/*-05_ncu_correlation 2>/dev/null | tail -1)/data/ncu_summary.json
if [ -f "$summary" ]; then
  python3 -m labkit ncu summary "$summary" | tee "$OUT/closing_note.txt"
else
  echo "device_ncu: no recorded notebook 05 summary (see notebook05.log)"
fi
tar czf "$OUT/results.tgz" data/runs runs 2>/dev/null
ls -la "$OUT"
