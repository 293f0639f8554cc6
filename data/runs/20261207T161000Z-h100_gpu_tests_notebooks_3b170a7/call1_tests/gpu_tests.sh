#!/usr/bin/env bash
# bash .dbg/s98/gpu_tests.sh <sha> [budget s]: the decode, manifest, ncu and Sage2 GPU tests (not run since the last
# changes), each file under what time is left. Carry .whl-all3 and .dbg/s98.
T0=$(date +%s); B=${2:-420}
set -uo pipefail
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee $OUT/device.txt
nvidia-smi -q | grep -E "Board Part" | head -1 >> $OUT/device.txt
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/*.whl 2>&1 | tail -2
python3 -c "import tarfile; tarfile.open('.whl-all3/fa3.tar.xz').extractall('/tmp/site')"
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
NCUPY=$(find /usr/local/cuda*/ /opt/nvidia -name ncu_report.py 2>/dev/null | head -1)
if ! python3 -c "import ncu_report" 2>/dev/null && [ -n "$NCUPY" ]; then export PYTHONPATH=$PYTHONPATH:$(dirname $NCUPY); fi
for f in manifest sage2 decode ncu; do
  L=$(( B - ($(date +%s) - T0) ))
  [ $L -gt 30 ] || { echo "$f: not run (time)" | tee -a $OUT/summary.txt; continue; }
  timeout $(( L - 5 )) python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/gpu/test_${f}_gpu.py > $OUT/$f.log 2>&1
  echo "$f rc=$? $(tail -1 $OUT/$f.log | cut -c1-200) at $(( $(date +%s) - T0 )) s" | tee -a $OUT/summary.txt
done
