#!/usr/bin/env bash
# One call on the GPU host (no registry there): install the carried wheels, then run the GPU
# tests and the notebooks live, recording them. Usage (device tool, carry .whl):
#   LABKIT_GIT_SHA=<sha> bash tools/device_check.sh [pytest paths...]
# Results land in $OUT: logs and results.tgz (data/runs + runs). .whl holds the notebook wheels (papermill, ipykernel,
# nbformat, jupytext, nvtx, ...), ncu-report for notebook 05, fa3-fwd and einops for the FA3 peer: tools/device_wheels.sh.
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || exit 1
for packed in .whl/*.tar.xz; do  # a wheel's contents as device_wheels.sh packs them (FA3's: 9 MB, not 28)
  [ -e "$packed" ] || continue
  python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall('/tmp/site', filter='data')" "$packed" || exit 1
done
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg
export LABKIT_CACHE=/tmp/labkit-cache
# what a notebook needs beyond the GPU: say so up front, as the record will only say "not available" in a table
for need in "ncu_report:ncu-report (notebook 05, labkit ncu)" \
            "fa3_fwd_interface:fa3-fwd and einops (the FA3 peer in notebook 03, decode bench --peers)"; do
  python3 -c "import ${need%%:*}" 2>/dev/null || echo "device_check: no ${need#*:} wheel in .whl: those runs go without it"
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
python3 -c "import cupy, cuda.bindings, numpy; print('cupy', cupy.__version__, 'cuda-bindings', cuda.bindings.__version__, 'numpy', numpy.__version__)"
python3 -m labkit device
python3 -m pytest -q -rs -p no:cacheprovider "${@:-tests}" 2>&1 | tee "$OUT/pytest.log" | tail -25
for nb in ${LABKIT_NOTEBOOKS:-00}; do
  python3 -m labkit nb run "$nb" --record 2>&1 | tee -a "$OUT/notebooks.log"
done
if [ -n "${LABKIT_BENCH:-}" ]; then
  timeout 400 python3 -m labkit bench --out "$OUT/bench.json" 2>&1 | tee "$OUT/bench.log"
fi
tar czf "$OUT/results.tgz" data/runs runs 2>/dev/null
ls -la "$OUT"
